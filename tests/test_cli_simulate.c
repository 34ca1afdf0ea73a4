/* cli/cmd_simulate.c: `speedup simulate` end to end through the real binary. */
#define _POSIX_C_SOURCE 200809L
#include "trace/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* The time_s column of every row of a predictions CSV. */
static int read_times(const char *csv, double *times, int max) {
    int n = 0;
    const char *line = strchr(csv, '\n');
    while (line && line[1] && n < max) {
        line++;
        const char *p = line;
        for (int comma = 0; comma < 4; comma++)
            p = strchr(p, ',') + 1;
        times[n++] = strtod(p, NULL);
        line = strchr(line, '\n');
    }
    return n;
}

#define WHAT_IF "--workers 1,2,8,32 --cores 1,2 --sync batch,epoch,every:4 --topology ps,allreduce " \
                "--examples 1000 --batch 48 --epochs 2 --host-cores 16"

/* With the closed form's ρ' (32 workers share 16 cores here: scheduled, a ps worker would
 * start after its own pull, scheduled_cores_change_only_jobs_whose_ranks_share_them). */
Test(cli_simulate, without_spread_it_prints_the_closed_form) {
    clirun_result m = clirun("model --csv --cv 0 " WHAT_IF);
    clirun_result s = clirun("simulate --csv --reps 2 --cv 0 --contention closed-form " WHAT_IF);
    cr_assert_eq(m.status, 0, "%s", m.err);
    cr_assert_eq(s.status, 0, "%s", s.err);
    double tm[64], ts[64];
    int nm = read_times(m.out, tm, 64), ns = read_times(s.out, ts, 64);
    cr_assert_eq(nm, 4 * 2 * 3 * 2);
    cr_assert_eq(ns, nm);
    for (int i = 0; i < nm; i++)
        cr_assert(fabs(ts[i] - tm[i]) <= 1e-8 * tm[i], "row %d: simulated %.9g, model %.9g", i, ts[i], tm[i]);
    clirun_free(&m);
    clirun_free(&s);
}

Test(cli_simulate, prints_a_table_with_intervals) {
    clirun_result r = clirun("simulate --topology ps --reps 5 --workers 1,4 --cores 1 --sync batch --wide");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "95% PI (one run)") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "memory per rank") != NULL, "%s", r.out);
    /* header, the setting, column line, 2 rows, what the PI is made of, memory line (--wide:
     * none wrapped) */
    cr_assert_eq(count_lines(r.out), 7, "%s", r.out);
    clirun_free(&r);
}

Test(cli_simulate, same_seed_same_output_other_seed_other_output) {
    const char *a = "simulate --topology ps --csv --reps 3 --seed 11 --workers 4 --cores 1 --sync batch";
    const char *b = "simulate --topology ps --csv --reps 3 --seed 12 --workers 4 --cores 1 --sync batch";
    clirun_result r1 = clirun(a), r2 = clirun(a), r3 = clirun(b);
    cr_assert_eq(r1.status, 0, "%s", r1.err);
    cr_assert_str_eq(r1.out, r2.out);
    cr_assert_str_neq(r1.out, r3.out);
    clirun_free(&r1);
    clirun_free(&r2);
    clirun_free(&r3);
}

Test(cli_simulate, out_file_and_timeline_are_written) {
    char *dir = clirun_tmpdir();
    char args[2048], csv[512], tl[512];
    snprintf(csv, sizeof csv, "%s/p.csv", dir);
    snprintf(tl, sizeof tl, "%s/t.json", dir);
    snprintf(args, sizeof args, "simulate --topology ps --reps 2 --workers 3 --cores 1 --sync batch --examples 480 --batch 48 "
             "--epochs 1 --out %s --timeline %s", csv, tl);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    FILE *f = fopen(csv, "r");
    cr_assert_not_null(f);
    char line[256];
    int lines = 0;
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    cr_assert_eq(lines, 2);

    /* Chrome trace-event JSON: complete events, one track (tid) per worker. */
    json_error_t jerr;
    json_t *root = json_load_file(tl, 0, &jerr);
    cr_assert_not_null(root, "%s: line %d: %s", tl, jerr.line, jerr.text);
    json_t *events = json_object_get(root, "traceEvents");
    cr_assert(json_is_array(events));
    int seen[3] = { 0 }, compute = 0;
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        cr_assert_eq(json_integer_value(json_object_get(e, "pid")), 1, "simulated runs are process 1");
        if (strcmp(ph, "M") == 0)
            continue; /* process and thread names */
        cr_assert_str_eq(ph, "X");
        json_int_t tid = json_integer_value(json_object_get(e, "tid"));
        cr_assert(tid >= 0 && tid < 3);
        seen[tid] = 1;
        cr_assert(json_number_value(json_object_get(e, "dur")) > 0);
        cr_assert(json_number_value(json_object_get(e, "ts")) >= 0);
        compute += strcmp(json_string_value(json_object_get(e, "name")), "compute") == 0;
    }
    cr_assert(seen[0] && seen[1] && seen[2]);
    /* 10 steps on each of 3 workers. */
    cr_assert_eq(compute, 30);
    json_decref(root);
    remove(csv);
    remove(tl);
    remove(dir);
    free(dir);
    clirun_free(&r);
}

Test(cli_simulate, sequential_launch_is_accepted) {
    clirun_result r = clirun("simulate --topology ps --csv --reps 2 --launch sequential --workers 4 --cores 1 --sync epoch --cv 0");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    clirun_result m = clirun("model --topology ps --csv --workers 4 --cores 1 --sync epoch --cv 0");
    double ts[4], tm[4];
    cr_assert_eq(read_times(r.out, ts, 4), 1);
    cr_assert_eq(read_times(m.out, tm, 4), 1);
    cr_assert(fabs(ts[0] - tm[0]) <= 1e-8 * tm[0]);
    clirun_free(&r);
    clirun_free(&m);
}

Test(cli_simulate, zero_workers_is_a_usage_error) { clirun_assert_refused("simulate --workers 0", 2, "--workers"); }
Test(cli_simulate, negative_bandwidth_is_a_usage_error) { clirun_assert_refused("simulate --bandwidth -5", 2, "'-5'"); }
Test(cli_simulate, zero_reps_is_a_usage_error) { clirun_assert_refused("simulate --reps 0", 2, "--reps"); }
Test(cli_simulate, unknown_launch_is_a_usage_error) { clirun_assert_refused("simulate --launch ssh", 2, "'ssh'"); }
Test(cli_simulate, unknown_flag_is_a_usage_error) { clirun_assert_refused("simulate --frobnicate", 2, "--frobnicate"); }

Test(cli_simulate, calibration_missing_a_field_is_a_failure_naming_it) {
    char *dir = clirun_tmpdir();
    /* Every parameter but c1. */
    const char *text =
        "{\"format\": \"speedup-calibration\", \"version\": 1,\n"
        " \"host\": {\"name\": \"t\", \"cores\": 2},\n"
        " \"params\": {\"c0\": {\"value\": 0}, \"sigma\": {\"value\": 0.1},\n"
        "  \"alpha_ps\": {\"value\": 0.001}, \"beta_ps\": {\"value\": 1e-9},\n"
        "  \"alpha_allreduce\": {\"value\": 0.001}, \"beta_allreduce\": {\"value\": 1e-9},\n"
        "  \"model_bytes\": {\"value\": 1000}, \"w0\": {\"value\": 1}, \"w1\": {\"value\": 0.1},\n"
        "  \"cv\": {\"value\": 0.1}, \"host_cores\": {\"value\": 2}}}\n";
    char *path = clirun_write_file(dir, "cal.json", text);
    char args[512];
    snprintf(args, sizeof args, "simulate --topology ps --calib %s", path);
    clirun_assert_refused(args, 1, "params.c1");
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

/* A measured trace: 2 workers, T = 1, B = 32, 10 steps each of 0.5 s. */
static char *write_trace(const char *dir) {
    trace_run run = { .host_cores = 0, .model_bytes = 4000, .seed = 1 };
    snprintf(run.host, sizeof run.host, "test");
    run.config = (job_config){ .workers = 2, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = JOB_TOPO_PS, .examples = 640, .batch = 64, .epochs = 1 };
    trace *t = trace_new(&run);
    for (int rank = 0; rank < 2; rank++)
        for (int i = 0; i < 10; i++) {
            trace_event e = { .rank = rank, .ph = TRACE_COMPUTE, .t0_s = i, .t1_s = i + 0.5, .epoch = 0, .step = i, .examples = 32 };
            trace_add(t, &e);
        }
    char *path = malloc(strlen(dir) + 32);
    sprintf(path, "%s/run.trace.jsonl", dir);
    char err[512];
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    return path;
}

Test(cli_simulate, replay_of_a_measured_trace_runs) {
    char *dir = clirun_tmpdir();
    char *path = write_trace(dir);
    char args[1024];
    /* Free communication, no start-up: only the replayed compute is left. The trace's
     * steps (0.5 s at local batch 32) scale with the local batch B/K. */
    snprintf(args, sizeof args, "simulate --topology ps --csv --reps 3 --replay %s --workers 1,2,4 --cores 1 --sync batch "
             "--latency 0 --bandwidth 1e300 --startup 0,0 --examples 6400 --batch 32 --epochs 1", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double ts[8];
    cr_assert_eq(read_times(r.out, ts, 8), 3, "%s", r.out);
    cr_assert(fabs(ts[0] - 200 * 0.5) < 1e-9, "%s", r.out);
    cr_assert(fabs(ts[1] - 200 * 0.25) < 1e-9, "%s", r.out);
    cr_assert(fabs(ts[2] - 200 * 0.125) < 1e-9, "%s", r.out);
    clirun_free(&r);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(cli_simulate, replay_trace_that_does_not_parse_is_a_failure_naming_the_line) {
    char *dir = clirun_tmpdir();
    char *path = write_trace(dir);
    /* A valid trace, then a line cut short: the error names line 22. */
    FILE *f = fopen(path, "a");
    fputs("{\"rank\": 0, \"ph\": \"compute\", \"t0\": 1.0,\n", f);
    fclose(f);
    char args[1024];
    snprintf(args, sizeof args, "simulate --topology ps --replay %s", path);
    clirun_assert_refused(args, 1, "line 22");
    clirun_result r = clirun(args);
    cr_assert(strstr(r.err, path) != NULL, "%s", r.err);
    clirun_free(&r);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(cli_simulate, timeline_into_a_missing_directory_is_a_failure_naming_it) {
    clirun_assert_refused("simulate --reps 1 --workers 2 --cores 1 --sync epoch --timeline /nonexistent/dir/t.json", 1,
                   "/nonexistent/dir/t.json");
}

Test(cli_simulate, trace_without_compute_events_cannot_be_replayed) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "empty.trace.jsonl",
                                   "{\"run\": {\"format\": \"speedup-trace\", \"version\": 1, \"workers\": 1, \"cores\": 1, "
                                   "\"examples\": 10, \"batch\": 10, \"epochs\": 1, \"sync\": \"batch\", \"topology\": \"ps\"}}\n");
    char args[512];
    snprintf(args, sizeof args, "simulate --topology ps --replay %s", path);
    clirun_assert_refused(args, 1, "no steps to replay");
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(cli_simulate, csv_has_the_prediction_interval_of_one_run_and_the_interval_of_the_mean) {
    /* Run-to-run spread 0.05 and step spread 0.1 over 30 replications: one run's
     * interval holds the mean, and the mean's is about √31 ≈ 5.6 times narrower. */
    int n;
    prediction_row *rows = clirun_predictions("simulate --topology ps --reps 30 --workers 4 --cores 1 --sync batch --run-cv 0.05", &n);
    cr_assert_eq(n, 1);
    const prediction_row *r = &rows[0];
    cr_assert(r->time_lo < r->time_s && r->time_s < r->time_hi, "%g [%g, %g]", r->time_s, r->time_lo, r->time_hi);
    cr_assert(r->ci_lo < r->speedup && r->speedup < r->ci_hi);
    cr_assert(r->mean_lo < r->speedup && r->speedup < r->mean_hi);
    cr_assert_gt(r->ci_hi - r->ci_lo, 4 * (r->mean_hi - r->mean_lo), "one run [%g, %g], the mean [%g, %g]", r->ci_lo,
                 r->ci_hi, r->mean_lo, r->mean_hi);
    /* Both runs of a speedup have their own factor: ±1.96·0.05·√2 is about ±0.139 on
     * the log scale, more than the step spread alone could give. */
    cr_assert_gt(log(r->ci_hi / r->ci_lo), 2 * 0.12);
    free(rows);
}

Test(cli_simulate, calibration_standard_errors_are_drawn_and_a_what_if_drops_them) {
    char *dir = clirun_tmpdir();
    /* c1 = 0.002 ± 0.0002, nothing else uncertain, no step spread. */
    char *cal = clirun_write_c1_calibration(dir);
    char args[1024];
    int n;
    snprintf(args, sizeof args, "simulate --topology ps --calib %s --reps 20 --workers 2 --cores 1 --sync batch", cal);
    prediction_row *rows = clirun_predictions(args, &n);
    cr_assert(rows[0].time_lo < rows[0].time_s && rows[0].time_s < rows[0].time_hi, "%g [%g, %g]", rows[0].time_s,
              rows[0].time_lo, rows[0].time_hi);
    free(rows);
    snprintf(args, sizeof args, "simulate --topology ps --calib %s --reps 20 --workers 2 --cores 1 --sync batch --c1 0.002", cal);
    clirun_assert_point_interval(args);
    remove(cal);
    remove(dir);
    free(cal);
    free(dir);
}

Test(cli_simulate, batch_split_over_more_workers_than_examples_is_a_usage_error_naming_the_config) {
    clirun_assert_refused("simulate --workers 8 --cores 2 --sync batch --topology allreduce --batch 4", 2,
                          "8 workers x 2 cores, batch sync, allreduce");
}

Test(cli_simulate, help_lists_the_simulation_flags) {
    clirun_result r = clirun("simulate --help");
    cr_assert_eq(r.status, 0);
    const char *flags[] = { "--reps", "--seed", "--launch", "--replay", "--timeline", "--csv", "--out", "--workers",
                            "--bandwidth", "--update", "--run-cv", "prediction interval of\n", "mean_lo,mean_hi" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(r.out, flags[i]) != NULL, "help lacks %s", flags[i]);
    clirun_free(&r);
}

/* `simulate --sync async` writes the staleness its replications counted, and the file
 * reads back with it: K = 1 pulling every step computes every gradient on the current
 * weights (staleness 0 throughout); K = 4 about K − 1 = 3. Batch rows have none. */
Test(cli_simulate, async_rows_carry_the_simulated_staleness_through_the_csv) {
    int n;
    prediction_row *rows = clirun_predictions("simulate --topology ps --workers 1,4 --cores 1 --sync batch,async --reps 3 --host-cores 8 "
                                              "--update 0.5", &n);
    cr_assert_eq(n, 4);
    int async = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(rows[i].sync, "async") != 0) {
            cr_assert(!rows[i].has_staleness, "row %d (%s)", i, rows[i].sync);
            continue;
        }
        async++;
        cr_assert(rows[i].has_staleness);
        if (rows[i].workers == 1)
            cr_assert_eq(rows[i].staleness_median, 0.0);
        else
            cr_assert(rows[i].staleness_median >= 2.0 && rows[i].staleness_median <= 4.0, "K=4: median %g",
                      rows[i].staleness_median);
    }
    cr_assert_eq(async, 2);
    free(rows);
}

/* One worker on one core is its own baseline: one run, not two drawn apart, so its
 * speedup is 1 in every replication (and its interval too), whatever the noise of its
 * time; two workers keep a drawn speedup with an interval around it. */
Test(cli_simulate, a_worker_alone_has_speedup_one_by_construction) {
    char args[1024];
    int n;
    snprintf(args, sizeof args, "simulate --calib %s/tests/data/golden/calibration.json --reps 20 --workers 1,2 "
             "--cores 1 --sync batch,every:4 --topology allreduce", SPEEDUP_SOURCE_DIR);
    prediction_row *rows = clirun_predictions(args, &n);
    cr_assert_eq(n, 4);
    for (int i = 0; i < n; i++) {
        if (rows[i].workers == 1) {
            cr_assert(rows[i].time_lo < rows[i].time_hi, "its time still has an interval");
            cr_assert_eq(rows[i].speedup, 1.0, "%s: %.9g", rows[i].sync, rows[i].speedup);
            cr_assert_eq(rows[i].ci_lo, 1.0);
            cr_assert_eq(rows[i].ci_hi, 1.0);
        } else {
            cr_assert(rows[i].ci_lo < rows[i].speedup && rows[i].speedup < rows[i].ci_hi);
        }
    }
    free(rows);
}

/* A grid that takes a while says how far it is on stderr (every 2 s; SPEEDUP_PROGRESS_S
 * sets another interval, here every configuration); its table is unchanged. */
Test(cli_simulate, a_long_grid_says_its_progress_on_stderr) {
    char args[1024];
    snprintf(args, sizeof args, "simulate --calib %s/tests/data/golden/calibration.json --reps 3 --workers 1,2,4 "
             "--cores 1 --sync batch --topology allreduce", SPEEDUP_SOURCE_DIR);
    clirun_result quiet = clirun(args);
    cr_assert_eq(quiet.status, 0);
    cr_assert_str_empty(quiet.err, "a quick grid says nothing: %s", quiet.err);
    char loud_args[1100];
    snprintf(loud_args, sizeof loud_args, "%s", args);
    setenv("SPEEDUP_PROGRESS_S", "0", 1);
    clirun_result loud = clirun(loud_args);
    unsetenv("SPEEDUP_PROGRESS_S");
    cr_assert_eq(loud.status, 0);
    cr_assert(strstr(loud.err, "1 of 3 configurations") && strstr(loud.err, "2 of 3 configurations"), "%s", loud.err);
    cr_assert_str_eq(loud.out, quiet.out, "the table is the same");
    clirun_free(&quiet), clirun_free(&loud);
}

/* --contention: the simulator schedules the cores only where ranks share them. With the
 * golden calibration (2 cores, its spread cv 0.13), 2 workers play the same job either
 * way; 3 in one-step rounds end sooner scheduled: the pair sharing a core ends at the sum
 * of its two draws, not at 2 slowed steps and a straggler wait on them (worked by hand
 * in tests/test_sim.c and tests/test_cores.c). */
static char *simulate_out(const char *args, const char *how) {
    char cmd[768];
    snprintf(cmd, sizeof cmd, "simulate --calib %s/tests/data/golden/calibration.json --csv --seed 3 --reps 5 "
             "--sync batch --topology allreduce --examples 2000 --epochs 1 --contention %s %s",
             SPEEDUP_SOURCE_DIR, how, args);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "%s\nstderr: %s", cmd, r.err);
    free(r.err);
    return r.out;
}

Test(cli_simulate, scheduled_cores_change_only_jobs_whose_ranks_share_them) {
    char *a = simulate_out("--workers 1,2", "scheduled"), *b = simulate_out("--workers 1,2", "closed-form");
    cr_assert_str_eq(a, b);
    free(a);
    free(b);
    a = simulate_out("--workers 3", "scheduled");
    b = simulate_out("--workers 3", "closed-form");
    double ta[1], tb[1];
    cr_assert_eq(read_times(a, ta, 1), 1);
    cr_assert_eq(read_times(b, tb, 1), 1);
    cr_assert_lt(ta[0], 0.97 * tb[0], "3 workers on 2 cores: %.9g s scheduled, %.9g s closed form", ta[0], tb[0]);
    free(a);
    free(b);
    clirun_assert_refused("simulate --contention fair", 2, "scheduled or closed-form");
}
