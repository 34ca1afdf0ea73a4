/* trace/chrome_import.c, trace/phasemap.c, trace/tracefile.c: someone else's traces read
 * as ours. The expected numbers come from outside the code under test: a real PyTorch
 * trace's totals from an independent Python reading (tests/data/expected_pytorch_ddp.py),
 * the Horovod and Kineto fixtures' by hand (each test says how). */
#define _POSIX_C_SOURCE 200809L
#include "trace/chrome_import.h"
#include "trace/phasemap.h"
#include "trace/traceinfo.h"
#include "trace/tracefile.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define DATA SPEEDUP_SOURCE_DIR "/tests/data/"

static const char *const ddp_ranks[] = { DATA "pytorch-ddp-k2.rank0.json", DATA "pytorch-ddp-k2.rank1.json" };

static trace *import(const char *const *paths, int n, const chrome_import_opts *o) {
    char err[1024] = "";
    trace *t = chrome_import(paths, n, o, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    return t;
}

/* The error importing paths gives; the test frees nothing else. */
static void expect_error(const char *const *paths, int n, const chrome_import_opts *o, const char *expect) {
    char err[1024] = "";
    trace *t = chrome_import(paths, n, o, err, sizeof err);
    cr_assert_null(t, "imported, expected: %s", expect);
    cr_assert(strstr(err, expect) != NULL, "error '%s' lacks '%s'", err, expect);
}

/* Rank r's seconds per phase (its own timeline) and beside it. */
static void totals(const trace *t, int r, double ph[TRACE_PHASE_COUNT], double *beside) {
    memset(ph, 0, sizeof(double) * TRACE_PHASE_COUNT);
    *beside = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->rank != r)
            continue;
        if (traceinfo_is_background(e))
            *beside += e->t1_s - e->t0_s;
        else
            ph[e->ph] += e->t1_s - e->t0_s;
    }
}

static long steps_of(const trace *t, int r, long *examples) {
    long n = 0;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank == r && traceinfo_is_step(&t->events[i])) {
            n++;
            *examples = t->events[i].examples;
        }
    return n;
}

/* ---------------------------------------------------------------------------------- */
/* A real PyTorch 1.13 DDP trace (legacy profiler, gloo, K = 2, 3 steps) */

Test(chrome_import, a_pytorch_ddp_trace_parses_to_the_independently_derived_phase_totals) {
    /* tests/data/expected_pytorch_ddp.py over the two files printed:
     *   rank 0: startup 2.764335 compute 0.375054 update 0.083930 comm 0.154027 s; steps 3; beside 0.593434 s
     *   rank 1: startup 2.636015 compute 0.332081 update 0.087974 comm 0.186526 s; steps 3; beside 0.330957 s */
    const double want[2][5] = { { 2.764335, 0.375054, 0.083930, 0.154027, 0.593434 },
                                { 2.636015, 0.332081, 0.087974, 0.186526, 0.330957 } };
    chrome_import_opts o = { .batch = 16, .model_bytes = 1819688, .host = "h", .host_cores = 2 };
    /* The rank files in either order: the rank is in the name. */
    const char *const reversed[] = { ddp_ranks[1], ddp_ranks[0] };
    for (int order = 0; order < 2; order++) {
        trace *t = import(order ? reversed : ddp_ranks, 2, &o);
        cr_assert_eq(t->run.config.workers, 2);
        cr_assert_eq(t->run.config.batch, 16);
        cr_assert_eq(t->run.config.examples, 3 * 16);
        cr_assert_eq(t->run.model_bytes, 1819688);
        cr_assert(t->run.waits_block, "the all-reduces ran on gloo's threads: the ranks wait for them asleep");
        for (int r = 0; r < 2; r++) {
            double ph[TRACE_PHASE_COUNT], beside;
            long examples = 0;
            totals(t, r, ph, &beside);
            cr_assert_float_eq(ph[TRACE_STARTUP], want[r][0], 1e-6, "rank %d startup %.6f", r, ph[TRACE_STARTUP]);
            cr_assert_float_eq(ph[TRACE_COMPUTE], want[r][1], 1e-6, "rank %d compute %.6f", r, ph[TRACE_COMPUTE]);
            cr_assert_float_eq(ph[TRACE_UPDATE], want[r][2], 1e-6, "rank %d update %.6f", r, ph[TRACE_UPDATE]);
            cr_assert_float_eq(ph[TRACE_COMM], want[r][3], 1e-6, "rank %d comm %.6f", r, ph[TRACE_COMM]);
            cr_assert_float_eq(beside, want[r][4], 1e-6, "rank %d beside %.6f", r, beside);
            cr_assert_eq(ph[TRACE_WAIT] + ph[TRACE_EVAL], 0);
            cr_assert_eq(steps_of(t, r, &examples), 3);
            cr_assert_eq(examples, 8, "each rank's slice of B = 16");
        }
        trace_free(t);
    }
}

Test(chrome_import, a_pytorch_ddp_traces_overlap_and_allreduce_spans_match_the_independent_reading) {
    /* expected_pytorch_ddp.py: overlap shares [0, 0.101437, 0.170891, 0, 0.499603, 0.08114]
     * (rank 0's steps, then rank 1's: the first step's single bucket goes after backward);
     * all-reduce spans by step (the smaller rank's union: no barrier precedes them): 0:
     * 0.068534 s, 1: 0.081780 s, 2: 0.012427 s. */
    const double shares[] = { 0, 0.101437, 0.170891, 0, 0.499603, 0.08114 }, spans[] = { 0.068534, 0.081780, 0.012427 };
    chrome_import_opts o = { .batch = 16, .model_bytes = 1819688 };
    trace *t = import(ddp_ranks, 2, &o);
    traceinfo_overlap *ov;
    long n = traceinfo_overlaps(t, &ov);
    cr_assert_eq(n, 6);
    for (long i = 0; i < n; i++)
        cr_assert_float_eq(ov[i].share, shares[i], 1e-5, "share %ld: %.6f", i, ov[i].share);
    free(ov);
    traceinfo_sync *sy;
    long m = traceinfo_syncs(t, &sy), seen = 0;
    for (long i = 0; i < m; i++)
        if (strcmp(sy[i].name, "allreduce") == 0 && sy[i].step >= 0) {
            cr_assert_eq(sy[i].ranks, 2);
            cr_assert_float_eq(sy[i].span_s, spans[sy[i].step], 1e-6, "step %ld: %.6f", sy[i].step, sy[i].span_s);
            seen++;
        }
    cr_assert_eq(seen, 3);
    free(sy);
    trace_free(t);
}

/* dst = src gzip'd. */
static void gzip_copy(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb");
    gzFile out = gzopen(dst, "wb");
    cr_assert(in && out);
    char buf[8192];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, in)) > 0)
        cr_assert_eq(gzwrite(out, buf, (unsigned)got), (int)got);
    fclose(in);
    gzclose(out);
}

Test(chrome_import, a_gzipped_trace_reads_as_the_plain_one) {
    char *dir = clirun_tmpdir(), gz[2][512];
    for (int r = 0; r < 2; r++) {
        snprintf(gz[r], sizeof gz[r], "%s/ddp.rank%d.json.gz", dir, r);
        gzip_copy(ddp_ranks[r], gz[r]);
    }
    chrome_import_opts o = { .batch = 16 };
    const char *const paths[] = { gz[0], gz[1] };
    trace *a = import(ddp_ranks, 2, &o), *b = import(paths, 2, &o);
    cr_assert_eq(a->n_events, b->n_events);
    for (long i = 0; i < a->n_events; i++)
        cr_assert(memcmp(&a->events[i], &b->events[i], sizeof a->events[i]) == 0, "event %ld differs", i);
    trace_free(a);
    trace_free(b);
    free(dir);
}

Test(chrome_import, a_damaged_gzip_file_says_why_in_zlibs_words) {
    // Found by tests/fuzz (corpus/chrome_import/crash-gzip-error-read-after-close.json.gz):
    // zlib's message was read after gzclose had freed it (ASan: heap-use-after-free).
    char *dir = clirun_tmpdir(), gz[512];
    snprintf(gz, sizeof gz, "%s/damaged.json.gz", dir);
    gzip_copy(ddp_ranks[0], gz);
    FILE *f = fopen(gz, "r+b"); // a byte of the deflate stream flipped: the data check fails
    cr_assert(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, size / 2, SEEK_SET);
    int c = fgetc(f);
    fseek(f, size / 2, SEEK_SET);
    fputc(c ^ 0xff, f);
    fclose(f);
    const chrome_import_opts o = { .batch = 16 };
    const char *const paths[] = { gz };
    char err[1024] = "", want[600];
    cr_assert_null(chrome_import(paths, 1, &o, err, sizeof err));
    snprintf(want, sizeof want, "%s: incorrect data check", gz); // the path once, zlib's reason
    cr_assert_str_eq(err, want);
    remove(gz);
    free(dir);
}

/* ---------------------------------------------------------------------------------- */
/* Horovod's timeline (hand-made from horovod/common/timeline.cc's format) */

Test(chrome_import, a_horovod_timeline_overlays_to_the_hand_derived_totals) {
    /* tests/data/horovod-timeline.json: two tensors (pids 1, 2), two steps, ranks 0 and 1
     * ticking in the negotiation. Step 0: negotiating 1000..1400 (wait 400 µs), both
     * queued 1410..1450 (wait 40), tensor 1 copies in from 1450 while tensor 2 queues
     * to 1460 (comm), then copy, MPI_ALLREDUCE and copy out to 2350: comm 2350 − 1450 =
     * 900 µs. Step 1: negotiating 11000..11500 (500), queued 11510..11520 (10), comm
     * 11520..12290 (770). Wait 950 µs, comm 1670 µs; first event 1000, last 12290.
     * Bytes per step: float32 [32, 1, 5, 5] + [10] = 4·(800 + 10) = 3240. */
    const char *const path[] = { DATA "horovod-timeline.json" };
    chrome_import_opts o = { .batch = 8 };
    trace *t = import(path, 1, &o);
    cr_assert_eq(t->run.config.workers, 2, "the ranks the negotiation names");
    cr_assert_eq(t->run.model_bytes, 3240);
    cr_assert_eq(t->run.config.examples, 2 * 8);
    cr_assert(!t->run.waits_block, "no exchange beside a main thread: waits as Open MPI's, polling");
    for (int r = 0; r < 2; r++) {
        double ph[TRACE_PHASE_COUNT], beside;
        totals(t, r, ph, &beside);
        cr_assert_float_eq(ph[TRACE_WAIT], 950e-6, 1e-12, "rank %d wait %.9f", r, ph[TRACE_WAIT]);
        cr_assert_float_eq(ph[TRACE_COMM], 1670e-6, 1e-12, "rank %d comm %.9f", r, ph[TRACE_COMM]);
        cr_assert_eq(ph[TRACE_COMPUTE] + ph[TRACE_UPDATE] + ph[TRACE_STARTUP] + beside, 0);
    }
    cr_assert_float_eq(traceinfo_training_time(t), (12290 - 1000) * 1e-6, 1e-12);
    traceinfo_sync *sy;
    long m = traceinfo_syncs(t, &sy);
    cr_assert_eq(m, 2);
    cr_assert_eq(sy[0].bytes, 3240);
    cr_assert_float_eq(sy[0].span_s, 900e-6, 1e-12);
    cr_assert_float_eq(sy[1].span_s, 770e-6, 1e-12);
    free(sy);
    trace_free(t);
}

/* ---------------------------------------------------------------------------------- */
/* Kineto's layout (hand-made from PyTorch 1.13's export: distributedInfo, ProfilerStep#N) */

Test(chrome_import, kineto_steps_split_where_a_profiler_step_begins_and_world_size_is_read) {
    /* tests/data/kineto-k1.rank0.json: the profiler's span starts at T+50 µs (time 0);
     * ProfilerStep#1 at T+100 holds a forward operator and a backward at 500..900,
     * ProfilerStep#2 at T+1000 the same at 1400..1800 and ends at 1900. No optimizer
     * between them: without the step container the two backward passes would merge into
     * one step. Step 0: 100..900 → 0.000050..0.000850 s; step 1 takes the gap before its
     * backward and what follows it: 900..1900 → 0.000850..0.001850 s. */
    const char *const path[] = { DATA "kineto-k1.rank0.json" };
    chrome_import_opts o = { .batch = 16 };
    trace *t = import(path, 1, &o);
    cr_assert_eq(t->run.config.workers, 1);
    cr_assert_eq(t->n_events, 2);
    cr_assert_float_eq(t->events[0].t0_s, 50e-6, 1e-9);
    cr_assert_float_eq(t->events[0].t1_s, 850e-6, 1e-9);
    cr_assert_float_eq(t->events[1].t0_s, 850e-6, 1e-9);
    cr_assert_float_eq(t->events[1].t1_s, 1850e-6, 1e-9);
    cr_assert_eq(t->events[1].step, 1);
    trace_free(t);
    o.workers = 2;
    expect_error(path, 1, &o, "kineto-k1.rank0.json: distributedInfo.world_size is 1, but the run has 2 workers");
}

/* ---------------------------------------------------------------------------------- */
/* Refusals: what could not be placed, and why */

Test(chrome_import, an_event_no_rule_places_on_the_main_thread_is_named) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "job.json",
                            "[{\"name\": \"autograd::engine::evaluate_function: AddmmBackward0\", \"ph\": \"X\", \"ts\": 10, "
                            "\"dur\": 5, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}},\n"
                            " {\"name\": \"my_loader\", \"ph\": \"X\", \"ts\": 20, \"dur\": 3, \"tid\": 1, \"pid\": \"CPU "
                            "functions\", \"args\": {}}]");
    const char *const paths[] = { path };
    chrome_import_opts o = { .batch = 4 };
    expect_error(paths, 1, &o, "job.json: event 1 'my_loader' (pid CPU functions, tid 1, at 0.010 ms) on the main "
                 "thread: no rule of the phase map places it; add a line 'PATTERN PHASE'");
    /* The user's map places it: compute 10..15, then the loader 15..23 with it. */
    char *map_path = clirun_write_file(dir, "my.map", "# my job\nmy_loader   compute\n");
    phasemap *m = phasemap_default();
    char err[512];
    cr_assert_eq(phasemap_read_file(m, map_path, err, sizeof err), 0, "%s", err);
    o.map = m;
    trace *t = import(paths, 1, &o);
    cr_assert_eq(t->n_events, 1);
    cr_assert_float_eq(t->events[0].t1_s - t->events[0].t0_s, 13e-6, 1e-12);
    trace_free(t);
    phasemap_free(m);
    free(map_path);
    free(path);
    free(dir);
}

Test(chrome_import, malformed_and_unknown_files_are_refused_with_the_place) {
    char *dir = clirun_tmpdir();
    const struct { const char *name, *text, *expect; } cases[] = {
        { "notjson.json", "[{\"ph\": \"X\",", "notjson.json: line 1 column" },
        { "object.json", "{\"format\": \"mine\", \"events\": []}", "object.json: expected Chrome trace-event JSON" },
        { "noph.json", "[{\"name\": \"x\", \"ts\": 1}]", "noph.json: event 0: expected \"ph\"" },
        { "nodur.json", "[{\"name\": \"x\", \"ph\": \"X\", \"ts\": 1}]", "nodur.json: event 0: an \"X\" event needs \"dur\"" },
        { "end.json", "[{\"ph\": \"E\", \"ts\": 5, \"pid\": 1}]", "end.json: event 0: an \"E\" on pid 1 tid  with no \"B\"" },
        { "begin.json", "[{\"ph\": \"B\", \"name\": \"ALLREDUCE\", \"ts\": 5, \"pid\": 3}]",
          "begin.json: event 0 ('ALLREDUCE', \"B\"): never ended" },
        { "foreign.json", "[{\"name\": \"render_frame\", \"ph\": \"X\", \"ts\": 0, \"dur\": 16, \"pid\": 1, \"tid\": 1}]",
          "foreign.json: event 0 'render_frame' (pid 1, tid 1, at 0.000 ms), and nothing else in the file is placed either" },
        // Found by tests/fuzz (corpus/chrome_import/crash-shape-overflow.json): a shape of
        // 2^63 elements overflowed the byte count (undefined behaviour).
        { "shape.json",
          "[{\"name\": \"ALLREDUCE\", \"ph\": \"X\", \"ts\": 0, \"dur\": 5, \"pid\": 1, \"tid\": 1,"
          " \"args\": {\"dtype\": \"HOROVOD_FLOAT32\", \"shape\": \"[9223372036854775807, 5]\"}}]",
          "shape.json: event 0: args.shape \"[9223372036854775807, 5]\": expected a tensor of at most 2^53 bytes" },
    };
    chrome_import_opts o = { .batch = 4 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *path = clirun_write_file(dir, cases[i].name, cases[i].text);
        const char *const paths[] = { path };
        expect_error(paths, 1, &o, cases[i].expect);
        free(path);
    }
    /* Rank files that do not make 0..K−1. */
    const char *const one[] = { ddp_ranks[1] };
    o.workers = 2;
    expect_error(one, 1, &o, "a run of 2 workers needs one file per rank, 1 given");
    free(dir);
}

/* ---------------------------------------------------------------------------------- */
/* The phase map and the files */

Test(chrome_import, a_phase_map_reads_first_match_first_and_refuses_a_bad_line) {
    char *dir = clirun_tmpdir(), err[512];
    char *good = clirun_write_file(dir, "good.map", "\n# PyTorch ops I care about\naten::conv2d  compute\nOptimizer.step#* wait\n");
    phasemap *m = phasemap_default();
    cr_assert_eq(phasemap_read_file(m, good, err, sizeof err), 0, "%s", err);
    cr_assert_eq(phasemap_match(m, "aten::conv2d")->phase, TRACE_COMPUTE, "the file's rule before aten::* -");
    cr_assert_eq(phasemap_match(m, "aten::relu")->phase, PHASEMAP_NONE);
    cr_assert_eq(phasemap_match(m, "Optimizer.step#SGD.step")->phase, TRACE_WAIT);
    cr_assert_eq(phasemap_match(m, "autograd::engine::evaluate_function: ReluBackward0")->phase, TRACE_COMPUTE);
    cr_assert_eq(phasemap_match(m, "ProfilerStep#7")->phase, PHASEMAP_STEP);
    cr_assert_null(phasemap_match(m, "render_frame"));
    char *bad = clirun_write_file(dir, "bad.map", "aten::conv2d compute\nDistributedDataParallel.forward forward\n");
    cr_assert_eq(phasemap_read_file(m, bad, err, sizeof err), -1);
    cr_assert(strstr(err, "bad.map: line 2: unknown phase") != NULL, "%s", err);
    char *lonely = clirun_write_file(dir, "lonely.map", "compute\n");
    cr_assert_eq(phasemap_read_file(m, lonely, err, sizeof err), -1);
    cr_assert(strstr(err, "lonely.map: line 1: expected PATTERN PHASE") != NULL, "%s", err);
    phasemap_free(m);
    free(good);
    free(bad);
    free(lonely);
    free(dir);
}

Test(chrome_import, files_are_told_apart_by_content_and_rank_files_make_one_run) {
    char *dir = clirun_tmpdir(), err[1024] = "";
    /* A project trace named like Chrome JSON is still the project's: its first line says so. */
    char *own = clirun_write_file(dir, "own.json",
                           "{\"run\": {\"format\": \"speedup-trace\", \"version\": 1, \"workers\": 1, \"cores\": 1, "
                           "\"examples\": 8, \"batch\": 8, \"epochs\": 1, \"sync\": \"batch\", \"topology\": \"ps\"}}\n"
                           "{\"rank\": 0, \"ph\": \"compute\", \"t0\": 0, \"t1\": 1, \"examples\": 8}\n");
    bool is_own = false;
    cr_assert_eq(tracefile_is_speedup(own, &is_own, err, sizeof err), 0);
    cr_assert(is_own);
    cr_assert_eq(tracefile_is_speedup(ddp_ranks[0], &is_own, err, sizeof err), 0);
    cr_assert(!is_own);
    const char *const paths[] = { ddp_ranks[1], own, ddp_ranks[0] };
    chrome_import_opts o = { .batch = 16 };
    tracefile_set s;
    cr_assert_eq(tracefile_open(paths, 3, &o, true, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n, 2, "the two rank files are one run");
    cr_assert_str_eq(s.runs[0].name, DATA "pytorch-ddp-k2.rank*");
    cr_assert_eq(s.runs[0].t->run.config.workers, 2);
    cr_assert(!s.runs[1].imported);
    tracefile_set_free(&s);
    o.batch = 0;
    cr_assert_eq(tracefile_open(paths, 3, &o, true, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "does not record its batch: give --batch B") != NULL, "%s", err);
    free(own);
    free(dir);
}

Test(chrome_import, a_child_rounded_to_its_parents_end_is_still_its_child) {
    /* Legacy traces are in whole microseconds, start and duration rounded apart: "Node"
     * at 11..12 is inside the backward function at 10..11 (nothing to place); at 11..13
     * it is not, and no rule places it. */
    char *dir = clirun_tmpdir();
    const char *fmt = "[{\"name\": \"autograd::engine::evaluate_function: Node\", \"ph\": \"X\", \"ts\": 10, \"dur\": 1, "
                      "\"tid\": 1, \"pid\": 1}, {\"name\": \"Node\", \"ph\": \"X\", \"ts\": 11, \"dur\": %d, \"tid\": 1, "
                      "\"pid\": 1}]";
    char text[512];
    snprintf(text, sizeof text, fmt, 1);
    char *inner = clirun_write_file(dir, "inner.json", text);
    snprintf(text, sizeof text, fmt, 2);
    char *after = clirun_write_file(dir, "after.json", text);
    chrome_import_opts o = { .batch = 4 };
    const char *const a[] = { inner }, *const b[] = { after };
    trace *t = import(a, 1, &o);
    cr_assert_eq(t->n_events, 1);
    trace_free(t);
    expect_error(b, 1, &o, "after.json: event 1 'Node'");
    free(inner);
    free(after);
    free(dir);
}
