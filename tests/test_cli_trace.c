/* cli/cmd_trace.c and trace/chrome.c: summaries that add up, Chrome JSON that parses,
 * measurements CSV rows against a K = 1 run. */
#define _POSIX_C_SOURCE 200809L
#include "model/predictions.h"
#include "trace/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Two ranks: 1 s start-up, 3 steps of 0.5 s compute + 0.1 s comm, then 0.2 s of eval. */
static char *sample_trace(char *dir) {
    trace_run run = { .host_cores = 2 };
    snprintf(run.host, sizeof run.host, "host \"quoted\"");
    run.config = (job_config){ .workers = 2, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = JOB_TOPO_PS, .examples = 96, .batch = 32, .epochs = 1 };
    trace *t = trace_new(&run);
    for (int r = 0; r < 2; r++) {
        trace_event st = { .rank = r, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 1, .epoch = -1, .step = -1, .name = "data_load" };
        trace_add(t, &st);
        double now = 1;
        for (int s = 0; s < 3; s++) {
            trace_event c = { .rank = r, .ph = TRACE_COMPUTE, .t0_s = now, .t1_s = now + 0.5, .step = s, .examples = 16 };
            trace_event m = { .rank = r, .ph = TRACE_COMM, .t0_s = now + 0.5, .t1_s = now + 0.6, .step = s, .bytes = 1000 };
            trace_add(t, &c);
            trace_add(t, &m);
            now += 0.6;
        }
        trace_event ev = { .rank = r, .ph = TRACE_EVAL, .t0_s = now, .t1_s = now + 0.2, .step = -1 };
        trace_add(t, &ev);
    }
    char *path = malloc(512), err[512];
    snprintf(path, 512, "%s/run.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    return path;
}

Test(cli_trace, summary_adds_phases_per_rank_and_covers_the_wall_time) {
    char *dir = clirun_tmpdir();
    char *path = sample_trace(dir);
    char args[1024];
    snprintf(args, sizeof args, "trace --summary %s", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* rank 0: startup 1, compute 1.5, comm 0.3, wait 0, eval 0.2, sum 3.0, wall 3.0, 100% */
    cr_assert(strstr(r.out, "   0      1.000      1.500      0.000      0.300      0.000      0.200      3.000      3.000    100.0%") != NULL,
              "%s", r.out);
    clirun_free(&r);
    free(path);
    free(dir);
}

Test(cli_trace, chrome_output_parses_and_has_one_event_per_span) {
    char *dir = clirun_tmpdir();
    char *path = sample_trace(dir);
    char args[1024], out[600];
    snprintf(out, sizeof out, "%s/chrome.json", dir);
    snprintf(args, sizeof args, "trace --chrome %s %s", path, out);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    json_error_t jerr;
    json_t *root = json_load_file(out, 0, &jerr);
    cr_assert_not_null(root, "%s line %d: %s", out, jerr.line, jerr.text);
    json_t *events = json_object_get(root, "traceEvents");
    size_t spans = 0, i;
    json_t *e;
    json_array_foreach(events, i, e) {
        if (strcmp(json_string_value(json_object_get(e, "ph")), "X") == 0) {
            spans++;
            cr_assert(json_number_value(json_object_get(e, "dur")) >= 0);
        }
    }
    cr_assert_eq(spans, 2 * (1 + 3 * 2 + 1));
    cr_assert_str_eq(json_string_value(json_object_get(json_object_get(root, "otherData"), "host")), "host \"quoted\"");
    json_decref(root);
    clirun_free(&r);
    free(path);
    free(dir);
}

Test(cli_trace, bad_usage_and_bad_files_are_refused) {
    clirun_result r = clirun("trace --summary");
    cr_assert_eq(r.status, 2, "%s", r.err);
    clirun_free(&r);
    r = clirun("trace --summary /nonexistent.trace.jsonl");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "/nonexistent.trace.jsonl") != NULL, "%s", r.err);
    clirun_free(&r);
    char *dir = clirun_tmpdir();
    char *bad = clirun_write_file(dir, "bad.trace.jsonl", "{\"run\": 1}\n");
    char args[600];
    snprintf(args, sizeof args, "trace --chrome %s %s/out.json", bad, dir);
    r = clirun(args);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "line 1") != NULL, "%s", r.err);
    clirun_free(&r);
    free(bad);
    free(dir);
}

/* A run of K ranks on D = 96, B = 32, E = `epochs`: 1 s start-up, 3 steps of `step_s`
 * compute then a comm of 0.1·(rank + 1) s, then 0.2 s of eval. */
static char *run_trace(const char *dir, const char *name, int workers, double step_s, int epochs) {
    trace_run run = { .host_cores = 2 };
    snprintf(run.host, sizeof run.host, "h");
    snprintf(run.net, sizeof run.net, "fc10");
    run.config = (job_config){ .workers = workers, .cores = 1, .sync = JOB_SYNC_EVERY, .every_n = 8,
                                     .topology = JOB_TOPO_ALLREDUCE, .examples = 96, .batch = 32,
                                     .epochs = epochs };
    trace *t = trace_new(&run);
    for (int r = 0; r < workers; r++) {
        trace_event st = { .rank = r, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 1, .epoch = -1, .step = -1 };
        trace_add(t, &st);
        double now = 1;
        for (int s = 0; s < 3; s++) {
            double comm_s = workers > 1 ? 0.1 * (r + 1) : 0;
            trace_event c = { .rank = r, .ph = TRACE_COMPUTE, .t0_s = now, .t1_s = now + step_s, .step = s, .examples = 32 };
            trace_add(t, &c);
            if (comm_s > 0) {
                trace_event m = { .rank = r, .ph = TRACE_COMM, .t0_s = now + step_s, .t1_s = now + step_s + comm_s, .step = s, .bytes = 1000 };
                trace_add(t, &m);
            }
            now += step_s + comm_s;
        }
        trace_event ev = { .rank = r, .ph = TRACE_EVAL, .t0_s = now, .t1_s = now + 0.2, .step = -1 };
        trace_add(t, &ev);
    }
    char *path = malloc(512), err[512];
    snprintf(path, 512, "%s/%s", dir, name);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    return path;
}

Test(cli_trace, measurements_speedup_against_k1_and_phases_averaged_over_ranks) {
    char *dir = clirun_tmpdir();
    char *k2 = run_trace(dir, "k2.trace.jsonl", 2, 0.5, 1), *k1 = run_trace(dir, "k1.trace.jsonl", 1, 1.0, 1);
    char args[1200];
    snprintf(args, sizeof args, "trace --measurements %s %s --out %s/m.csv", k2, k1, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* K=1 ends at 1 + 3·1.0 = 4 s. K=2: rank 1 ends last at 1 + 3·(0.5 + 0.2) = 3.1 s, so
     * speedup 4/3.1; comm per rank 0.3 and 0.6 s → 0.45 on average. Eval is after the end. */
    char path[600];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    prediction_row *rows;
    int n;
    char err[512];
    cr_assert_eq(predictions_read_csv(path, &rows, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0].workers, 2);
    cr_assert_str_eq(rows[0].sync, "every:8");
    cr_assert_eq(rows[0].topology, JOB_TOPO_ALLREDUCE);
    cr_assert_float_eq(rows[0].time_s, 3.1, 1e-9);
    cr_assert_float_eq(rows[0].speedup, 4.0 / 3.1, 1e-9);
    cr_assert_float_eq(rows[0].ci_lo, rows[0].speedup, 1e-12);
    cr_assert_float_eq(rows[0].compute_s, 1.5, 1e-9);
    cr_assert_float_eq(rows[0].comm_s, 0.45, 1e-9);
    cr_assert_float_eq(rows[0].startup_s, 1.0, 1e-9);
    cr_assert_float_eq(rows[1].time_s, 4.0, 1e-9);
    cr_assert_float_eq(rows[1].speedup, 1.0, 1e-12);
    free(rows);
    clirun_free(&r);
    free(k1);
    free(k2);
    free(dir);
}

Test(cli_trace, measurements_refuse_a_missing_baseline_and_another_workload) {
    char *dir = clirun_tmpdir();
    char *k2 = run_trace(dir, "k2.trace.jsonl", 2, 0.5, 1), *k1e2 = run_trace(dir, "k1e2.trace.jsonl", 1, 1.0, 2);
    char args[1200];
    snprintf(args, sizeof args, "trace --measurements %s", k2);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "--baseline") != NULL, "%s", r.err);
    clirun_free(&r);
    snprintf(args, sizeof args, "trace --measurements --baseline %s %s --out %s/m.csv", k1e2, k2, dir);
    r = clirun(args);
    cr_assert_eq(r.status, 1, "%s", r.err);
    cr_assert(strstr(r.err, "k2.trace.jsonl: workload D=96 B=32 E=1 differs") != NULL, "%s", r.err);
    clirun_free(&r);
    snprintf(args, sizeof args, "%s/m.csv", dir);
    cr_assert_eq(access(args, F_OK), -1, "no CSV after a refusal");
    r = clirun("trace --out x.csv --summary y");
    cr_assert_eq(r.status, 2, "%s", r.err);
    clirun_free(&r);
    free(k2);
    free(k1e2);
    free(dir);
}

/* ---------------------------------------------------------------------------------- */
/* A real PyTorch DDP trace (tests/data, see tests/test_chrome_import.c) */

#define DDP SPEEDUP_SOURCE_DIR "/tests/data/pytorch-ddp-k2.rank0.json " SPEEDUP_SOURCE_DIR "/tests/data/pytorch-ddp-k2.rank1.json"

Test(cli_trace, a_pytorch_trace_is_summarised_with_the_communication_beside_it) {
    /* tests/data/expected_pytorch_ddp.py: rank 0 startup 2.764335, compute 0.375054, update
     * 0.083930, comm 0.154027 s (sum 3.377346 = its wall time), beside 0.593434 s. */
    clirun_result r = clirun("trace --summary " DDP);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "run: 2 workers x 1 cores, sync batch, topology allreduce") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, ", waits block\n") != NULL, "gloo's threads ran the exchange: %s", r.out);
    cr_assert(strstr(r.out, "   0      2.764      0.375      0.084      0.154      0.000      0.000      3.377      3.377    100.0%      0.593") != NULL,
              "%s", r.out);
    clirun_free(&r);
    /* Two runs are not one. */
    r = clirun("trace --summary " DDP " " SPEEDUP_SOURCE_DIR "/tests/data/horovod-timeline.json");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "the 3 files make 2 runs; --summary takes one run") != NULL, "%s", r.err);
    clirun_free(&r);
}

Test(cli_trace, a_pytorch_run_converts_to_a_trace_with_its_own_flags_and_measures) {
    char *dir = clirun_tmpdir(), args[1024], out[600];
    snprintf(out, sizeof out, "%s/ddp.trace.jsonl", dir);
    snprintf(args, sizeof args, "trace --jsonl --batch 16 --cores 2 --model-bytes 1819688 --host-cores 4 " DDP " %s", out);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    char err[512];
    trace *t = trace_read(out, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    cr_assert_eq(t->run.config.cores, 2);
    cr_assert_eq(t->run.host_cores, 4);
    cr_assert_eq(t->run.config.examples, 48);
    trace_free(t);
    /* Measuring needs the batch: a profiler trace does not say it. */
    snprintf(args, sizeof args, "trace --measurements " DDP " --baseline %s", out);
    r = clirun(args);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "give --batch B") != NULL, "%s", r.err);
    clirun_free(&r);
    free(dir);
}

Test(cli_trace, measurements_carry_each_ranks_measured_peak_memory) {
    char *dir = clirun_tmpdir(), err[512];
    char *k2 = run_trace(dir, "k2.trace.jsonl", 2, 0.5, 1), *k1 = run_trace(dir, "k1.trace.jsonl", 1, 1.0, 1);
    /* The K = 2 run measured 40 MiB on rank 0 and 38 on rank 1; K = 1 measured nothing. */
    trace *t = trace_read(k2, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    t->run.memory = (trace_memory){ .has = true, .example_bytes = 785, .n_ranks = 2, .peak_rss_kib = { 40960, 38912 } };
    cr_assert_eq(trace_write(t, k2, err, sizeof err), 0, "%s", err);
    trace_free(t);
    char args[1200], path[600];
    snprintf(path, sizeof path, "%s/m.csv", dir);
    snprintf(args, sizeof args, "trace --measurements %s %s --out %s", k2, k1, path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    prediction_row *rows;
    int n;
    cr_assert_eq(predictions_read_csv(path, &rows, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 2);
    cr_assert(rows[0].has_memory && rows[0].fits);
    cr_assert_float_eq(rows[0].rss_master_mib, 40.0, 1e-12);
    cr_assert_float_eq(rows[0].rss_worker_mib, 38.0, 1e-12);
    cr_assert(!rows[1].has_memory, "no memory in the K = 1 trace: the columns stay empty");
    free(rows);
    clirun_free(&r);
    free(k1);
    free(k2);
    free(dir);
}

/* An async run of one worker: the master applied three gradients (staleness 0, 2, 4;
 * receives of 0.1 s, updates of 0.05 s), the worker pushed three times and pulled twice.
 * The summary says so under the table: median 2, p90 0.9·2 = 1.8 → 2 + 0.8·2 = 3.6, mean 2. */
Test(cli_trace, summary_of_an_async_run_shows_the_staleness) {
    trace_run run = { .host_cores = 2 };
    run.config = (job_config){ .workers = 1, .cores = 1, .sync = JOB_SYNC_ASYNC, .every_n = 2,
                                     .topology = JOB_TOPO_PS, .master = JOB_MASTER_DEDICATED,
                                     .examples = 96, .batch = 32, .epochs = 1 };
    trace *t = trace_new(&run);
    double now = 0;
    for (int s = 0; s < 3; s++) {
        trace_event recv = { .rank = 0, .ph = TRACE_COMM, .t0_s = now, .t1_s = now + 0.1, .step = s, .name = "push" };
        trace_event upd = { .rank = 0, .ph = TRACE_UPDATE, .t0_s = now + 0.1, .t1_s = now + 0.15, .step = s,
                            .name = "sgd", .has_staleness = true, .staleness = 2 * s };
        trace_event push = { .rank = 1, .ph = TRACE_COMM, .t0_s = now, .t1_s = now + 0.1, .step = s, .name = "push" };
        trace_add(t, &recv);
        trace_add(t, &upd);
        trace_add(t, &push);
        if (s % 2 == 0) {
            trace_event pull = { .rank = 1, .ph = TRACE_COMM, .t0_s = now + 0.2, .t1_s = now + 0.3, .step = s,
                                 .name = "pull" };
            trace_add(t, &pull);
        }
        now += 1;
    }
    char *dir = clirun_tmpdir(), path[512], err[512], args[1024];
    snprintf(path, sizeof path, "%s/async.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    snprintf(args, sizeof args, "trace --summary %s", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "sync async:2") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "async: the master applied 3 gradients (workers' pushes 3, pulls 2); staleness median 2, "
                            "p90 3.6, mean 2.00; the master's median push 100.000 ms, update 50.000 ms") != NULL,
              "%s", r.out);
    clirun_free(&r);
    free(dir);
}
