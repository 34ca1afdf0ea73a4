/* trace/trace.c, trace/chrome.c: a written trace reads back the same, whatever its names
 * hold; bad lines are named. */
#define _POSIX_C_SOURCE 200809L
#include "trace/chrome.h"
#include "trace/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static trace_run sample_run(void) {
    trace_run r = { .host_cores = 2, .model_bytes = 1819688, .seed = 7 };
    snprintf(r.host, sizeof r.host, "testhost");
    snprintf(r.net, sizeof r.net, "conv5x5x32,relu,pool2,fc10");
    r.config = (job_config){ .workers = 2, .cores = 1, .sync = JOB_SYNC_EVERY, .every_n = 8,
                                   .topology = JOB_TOPO_ALLREDUCE, .examples = 6000, .batch = 32, .epochs = 2 };
    return r;
}

/* t written to a file and read back (the file removed); the caller frees both. */
static trace *written_and_read(const trace *t) {
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/back.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace *back = trace_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    remove(path);
    remove(dir);
    free(dir);
    return back;
}

Test(trace, round_trips_run_and_events) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace_event events[] = {
        { .rank = 0, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 0.25, .epoch = -1, .step = -1, .name = "mpi_init" },
        { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 0.25, .t1_s = 0.2612345678, .epoch = 0, .step = 3, .examples = 16 },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0.27, .t1_s = 0.28, .epoch = 0, .step = 3, .bytes = 1819688 },
    };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(trace_add(t, &events[i]), 0);
    trace *back = written_and_read(t);
    cr_assert_str_eq(back->run.host, "testhost");
    cr_assert_eq(back->run.config.sync, JOB_SYNC_EVERY);
    cr_assert_eq(back->run.config.every_n, 8);
    cr_assert_eq(back->run.config.topology, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(back->run.model_bytes, 1819688);
    cr_assert_eq(back->n_events, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(back->events[i].rank, events[i].rank);
        cr_assert_eq(back->events[i].ph, events[i].ph);
        cr_assert_float_eq(back->events[i].t1_s, events[i].t1_s, 1e-9);
        cr_assert_eq(back->events[i].bytes, events[i].bytes);
        cr_assert_eq(back->events[i].examples, events[i].examples);
        cr_assert_str_eq(back->events[i].name, events[i].name);
    }
    trace_free(back);
    trace_free(t);
}

static void assert_bad(const char *text, const char *needle) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "bad.trace.jsonl", text);
    char err[512] = "";
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_null(t, "accepted: %s", text);
    cr_assert(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

#define RUN_LINE "{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1," \
                 "\"sync\":\"batch\",\"topology\":\"ps\",\"examples\":100,\"batch\":10,\"epochs\":1}}\n"

Test(trace, empty_file_is_refused) { assert_bad("", "empty file"); }
Test(trace, missing_run_line_is_refused) { assert_bad("{\"rank\":0}\n", "line 1"); }
Test(trace, truncated_event_names_its_line) {
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"compute\",\"t0\":0,\"t1\":1}\n{\"rank\":0,\"ph\":\"comp", "line 3");
}
Test(trace, unknown_phase_is_refused) { assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"nap\",\"t0\":0,\"t1\":1}\n", "\"ph\""); }
Test(trace, time_running_backwards_is_refused) { assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"wait\",\"t0\":2,\"t1\":1}\n", "t0 <= t1"); }
Test(trace, rank_out_of_range_is_refused) { assert_bad(RUN_LINE "{\"rank\":9,\"ph\":\"wait\",\"t0\":0,\"t1\":1}\n", "rank"); }
Test(trace, unknown_sync_in_run_is_refused) {
    assert_bad("{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1,"
               "\"sync\":\"weekly\",\"topology\":\"ps\",\"examples\":100,\"batch\":10,\"epochs\":1}}\n", "run.sync");
}

Test(trace, background_comm_round_trips_and_is_refused_on_other_phases) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace_event e = { .rank = 1, .ph = TRACE_COMM, .t0_s = 0.1, .t1_s = 0.3, .epoch = 0, .step = 2, .bytes = 64,
                      .name = "allreduce", .background = true };
    cr_assert_eq(trace_add(t, &e), 0);
    trace *back = written_and_read(t);
    cr_assert(back->events[0].background);
    trace_free(back);
    trace_free(t);
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"compute\",\"t0\":0,\"t1\":1,\"background\":true}\n", "\"background\"");
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"comm\",\"t0\":0,\"t1\":1,\"background\":1}\n", "\"background\"");
}

Test(trace, waits_round_trips_defaults_to_poll_and_anything_else_is_refused) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace *back = written_and_read(t);
    cr_assert(!back->run.waits_block, "absent: poll");
    trace_free(back);
    t->run.waits_block = true;
    back = written_and_read(t);
    cr_assert(back->run.waits_block);
    trace_free(back);
    trace_free(t);
    assert_bad("{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1,\"sync\":\"batch\","
               "\"topology\":\"ps\",\"examples\":100,\"batch\":10,\"epochs\":1,\"waits\":\"spin\"}}\n",
               "run.waits: expected \"poll\" or \"block\"");
}

Test(trace, memory_header_round_trips_and_roles_are_written_for_the_reader) {
    trace_run run = sample_run();
    run.config.topology = JOB_TOPO_PS;
    run.config.master = JOB_MASTER_DEDICATED; /* 2 workers: 3 ranks */
    run.memory = (trace_memory){ .has = true, .fwd_bytes_per_example = 191888, .train_bytes_per_example = 125952,
                                 .workspace_bytes = 1646400, .workspace_bytes_per_thread = 1854784,
                                 .example_bytes = 785, .test_examples = 512, .test_set_examples = 10000,
                                 .n_ranks = 3, .peak_rss_kib = { 30668, 28916, 28996 } };
    trace *t = trace_new(&run);
    char *dir = clirun_tmpdir(), path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/mem.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "r");
    char line[4096];
    cr_assert_not_null(fgets(line, sizeof line, f));
    fclose(f);
    cr_assert_not_null(strstr(line, "\"roles\":[\"master\",\"worker\",\"worker\"]"), "%s", line);
    trace *back = trace_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert(back->run.memory.has);
    cr_assert_eq(back->run.memory.n_ranks, 3);
    cr_assert_eq(back->run.memory.peak_rss_kib[2], 28996);
    cr_assert_eq(back->run.memory.train_bytes_per_example, 125952);
    cr_assert_eq(back->run.memory.test_set_examples, 10000);
    trace_free(back);
    trace_free(t);
    remove(path);
    remove(dir);
    free(dir);
}

#define MEM_RUN(peaks) "{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1," \
    "\"sync\":\"batch\",\"topology\":\"allreduce\",\"examples\":100,\"batch\":10,\"epochs\":1,\"memory\":" \
    "{\"fwd_bytes_per_example\":1,\"train_bytes_per_example\":1,\"workspace_bytes\":1," \
    "\"workspace_bytes_per_thread\":1,\"example_bytes\":1,\"test_examples\":1,\"test_set_examples\":1," \
    "\"peak_rss_kib\":" peaks "}}}\n"
Test(trace, memory_with_a_peak_per_rank_missing_or_not_positive_is_refused) {
    assert_bad(MEM_RUN("[100]"), "run.memory.peak_rss_kib: expected an array of 2");
    assert_bad(MEM_RUN("[100,0]"), "run.memory.peak_rss_kib[1]");
    assert_bad(MEM_RUN("7"), "run.memory.peak_rss_kib");
}



/* ---------------------------------------------------------------------------------- */
/* Names are data: any UTF-8 string writes valid JSON and reads back unchanged */

/* Every character JSON must escape, a non-ASCII one, and JSON's own syntax. */
#define HOSTILE "q\"b\\s\n\t\x01\x1f/\xc3\xa9}]"

static trace *hostile_trace(void) {
    trace_run run = sample_run();
    snprintf(run.host, sizeof run.host, "host " HOSTILE);
    snprintf(run.net, sizeof run.net, "net " HOSTILE);
    trace *t = trace_new(&run);
    trace_event e = { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 0.5, .t1_s = 0.75, .epoch = 0, .step = 2,
                      .examples = 4, .name = HOSTILE };
    cr_assert_eq(trace_add(t, &e), 0);
    return t;
}

Test(trace, names_with_quotes_backslashes_and_control_characters_round_trip) {
    trace *t = hostile_trace();
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace *back = trace_read(path, err, sizeof err);
    cr_assert_not_null(back, "the written trace does not read back: %s", err);
    cr_assert_eq(back->n_events, 1);
    cr_assert_str_eq(back->events[0].name, HOSTILE);
    cr_assert_str_eq(back->run.host, "host " HOSTILE);
    cr_assert_str_eq(back->run.net, "net " HOSTILE);
    trace_free(back);
    trace_free(t);
    remove(path);
    remove(dir);
    free(dir);
}

Test(trace, a_long_name_is_cut_between_utf8_characters_and_still_writes) {
    // 15 two-byte characters (30 bytes) then one more: 32 bytes do not fit in name[32],
    // and a byte-wise cut at 31 would leave half a character, which jansson refuses.
    char line[1024];
    snprintf(line, sizeof line, RUN_LINE "{\"rank\":0,\"ph\":\"wait\",\"t0\":0,\"t1\":1,\"name\":\"%s\"}\n",
             "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
             "\xc3\xa9\xc3\xa9\xc3\xa9");
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "in.trace.jsonl", line);
    char out[256], err[512] = "";
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    cr_assert_eq(strlen(t->events[0].name), 30, "cut at a character boundary: 15 whole characters");
    snprintf(out, sizeof out, "%s/out.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, out, err, sizeof err), 0, "%s", err);
    trace *back = trace_read(out, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_str_eq(back->events[0].name, t->events[0].name);
    trace_free(back);
    trace_free(t);
    remove(out);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(trace, a_name_that_is_not_utf8_is_refused_and_nothing_is_written) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace_event e = { .rank = 0, .ph = TRACE_WAIT, .t0_s = 0, .t1_s = 1, .epoch = 0, .step = 0, .name = "bad\xff" };
    cr_assert_eq(trace_add(t, &e), 0);
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "event 1: its name is not valid UTF-8"), "%s", err);
    FILE *f = fopen(path, "r");
    cr_assert_null(f, "a refused trace must leave no file");
    trace_free(t);
    remove(dir);
    free(dir);
}

Test(trace, chrome_json_with_hostile_names_parses_and_keeps_them) {
    trace *t = hostile_trace();
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/chrome.json", dir);
    cr_assert_eq(chrome_write(t, 0, "process " HOSTILE, path, err, sizeof err), 0, "%s", err);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    cr_assert_not_null(root, "%s line %d: %s", path, jerr.line, jerr.text);
    json_t *other = json_object_get(root, "otherData");
    cr_assert_str_eq(json_string_value(json_object_get(other, "host")), "host " HOSTILE);
    cr_assert_str_eq(json_string_value(json_object_get(other, "net")), "net " HOSTILE);
    json_t *events = json_object_get(root, "traceEvents"), *e;
    size_t i;
    int spans = 0;
    json_array_foreach(events, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        const char *name = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
        if (strcmp(ph, "X") == 0) {
            spans++;
            cr_assert_str_eq(json_string_value(json_object_get(e, "name")), HOSTILE);
        } else if (strcmp(json_string_value(json_object_get(e, "name")), "process_name") == 0) {
            cr_assert_str_eq(name, "process " HOSTILE);
        }
    }
    cr_assert_eq(spans, 1);
    json_decref(root);
    trace_free(t);
    remove(path);
    remove(dir);
    free(dir);
}

static void assert_bad_bytes(const char *bytes, size_t len, const char *needle) {
    char *dir = clirun_tmpdir(), path[600];
    snprintf(path, sizeof path, "%s/bad.trace.jsonl", dir);
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, len, f);
    fclose(f);
    char err[512] = "";
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_null(t, "accepted %zu bytes", len);
    cr_assert(strstr(err, needle) != NULL, "error '%s' lacks '%s'", err, needle);
    remove(path);
    remove(dir);
    free(dir);
}

Test(trace, a_file_of_nul_bytes_has_no_run_and_is_refused) {
    // Found by tests/fuzz (corpus/trace/crash-nul-first-line-without-run): a first line
    // starting with NUL was skipped as blank, and the file read as a trace with no run.
    assert_bad_bytes("\0\0\0\0Nn", 6, "line 1 column");
}

Test(trace, a_nul_byte_inside_an_event_line_is_refused_not_taken_for_its_end) {
    const char text[] = RUN_LINE "{\"rank\":0,\"ph\":\"wait\",\"t0\":0,\"t1\":1}\0junk\n";
    assert_bad_bytes(text, sizeof text - 1, "line 2 column");
}

Test(trace, blank_lines_before_the_run_line_are_skipped) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "ok.trace.jsonl", "\n\n" RUN_LINE "{\"rank\":0,\"ph\":\"wait\",\"t0\":0,\"t1\":1}\n");
    char err[512] = "";
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    cr_assert_eq(t->run.config.workers, 2);
    cr_assert_eq(t->n_events, 1);
    trace_free(t);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

/* The whole of a small file (malloc'd), or NULL. */
static char *read_text(const char *path) {
    FILE *f = fopen(path, "r");
    char *buf = f ? calloc(1, 65536) : NULL;
    if (buf)
        fread(buf, 1, 65535, f);
    if (f)
        fclose(f);
    return buf;
}

Test(trace, accuracy_points_round_trip_exactly_and_other_events_have_none) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    /* 0.1 and 1/3 have no short decimal form: the double read back must be the one written. */
    trace_event events[] = {
        { .rank = 0, .ph = TRACE_EVAL, .t0_s = 5, .t1_s = 6, .epoch = 0, .step = 94, .examples = 10000, .name = "test",
          .has_accuracy = true, .accuracy = 0.1, .loss = 1.0 / 3.0 },
        { .rank = 0, .ph = TRACE_EVAL, .t0_s = 3, .t1_s = 3.5, .epoch = 0, .step = 40, .examples = 2000,
          .name = "subset", .has_accuracy = true, .accuracy = 1.0, .loss = 0.0 },
        { .rank = 0, .ph = TRACE_EVAL, .t0_s = 6, .t1_s = 6.1, .epoch = 0, .step = -1, .name = "checkpoint" },
    };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(trace_add(t, &events[i]), 0);
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/acc.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace *back = trace_read(path, err, sizeof err);
    cr_assert_not_null(back, "%s", err);
    cr_assert_eq(back->n_events, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(back->events[i].has_accuracy, events[i].has_accuracy);
        cr_assert_eq(back->events[i].accuracy, events[i].accuracy); /* bit for bit */
        cr_assert_eq(back->events[i].loss, events[i].loss);
        cr_assert_eq(back->events[i].step, events[i].step);
        cr_assert_eq(back->events[i].examples, events[i].examples);
        cr_assert_str_eq(back->events[i].name, events[i].name);
    }
    trace_free(back);
    trace_free(t);
    /* The checkpoint's line carries no accuracy field at all. */
    char *text = read_text(path);
    cr_assert_not_null(text);
    cr_assert_not_null(strstr(text, "\"name\":\"test\",\"accuracy\":0.10000000000000001,\"loss\":0.33333333333333331}"),
                       "%s", text);
    cr_assert_null(strstr(text, "\"checkpoint\",\"accuracy\""), "%s", text);
    free(text);
    remove(path);
    remove(dir);
    free(dir);
}

#define EVAL_AT(extra) RUN_LINE "{\"rank\":0,\"ph\":\"eval\",\"t0\":0,\"t1\":1,\"name\":\"test\"" extra "}\n"

Test(trace, an_accuracy_outside_0_1_is_refused_naming_the_line) {
    assert_bad(EVAL_AT(",\"accuracy\":1.5,\"loss\":0.2"), "line 2: expected \"accuracy\" (a number in [0, 1])");
    assert_bad(EVAL_AT(",\"accuracy\":-0.01,\"loss\":0.2"), "line 2: expected \"accuracy\"");
    assert_bad(EVAL_AT(",\"accuracy\":\"0.9\",\"loss\":0.2"), "line 2: expected \"accuracy\"");
}

Test(trace, a_negative_loss_or_half_a_point_is_refused) {
    assert_bad(EVAL_AT(",\"accuracy\":0.5,\"loss\":-1"), "line 2: expected \"accuracy\"");
    assert_bad(EVAL_AT(",\"accuracy\":0.5"), "both or neither");
    assert_bad(EVAL_AT(",\"loss\":0.5"), "both or neither");
}

Test(trace, an_accuracy_on_a_step_is_refused) {
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"compute\",\"t0\":0,\"t1\":1,\"accuracy\":0.5,\"loss\":1}\n",
               "on an eval event only");
}

Test(trace, an_accuracy_that_json_cannot_hold_is_not_written) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace_event e = { .ph = TRACE_EVAL, .t0_s = 0, .t1_s = 1, .has_accuracy = true, .accuracy = NAN, .loss = 0.1 };
    cr_assert_eq(trace_add(t, &e), 0);
    char *dir = clirun_tmpdir();
    char path[256], err[512] = "";
    snprintf(path, sizeof path, "%s/nan.trace.jsonl", dir);
    cr_assert_neq(trace_write(t, path, err, sizeof err), 0);
    cr_assert_not_null(strstr(err, "event 1: its accuracy is not in [0, 1]"), "%s", err);
    cr_assert_eq(access(path, F_OK), -1, "a half-written trace was left");
    trace_free(t);
    remove(dir);
    free(dir);
}

/* An async master's updates carry their staleness: 0 is a value (computed on the current
 * weights), absent is none; a hogwild updater's update is background. */
Test(trace, staleness_round_trips_on_updates_and_is_refused_elsewhere) {
    trace_run run = sample_run();
    run.config = (job_config){ .workers = 2, .cores = 1, .sync = JOB_SYNC_ASYNC, .every_n = 3,
                                     .topology = JOB_TOPO_PS, .master = JOB_MASTER_DEDICATED,
                                     .examples = 6000, .batch = 32, .epochs = 2 };
    trace *t = trace_new(&run);
    const trace_event ev[] = {
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 0.1, .t1_s = 0.2, .step = 4, .name = "sgd", .has_staleness = true,
          .staleness = 0 },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 0.2, .t1_s = 0.3, .step = 5, .name = "sgd", .has_staleness = true,
          .staleness = 7, .background = true },
        { .rank = 1, .ph = TRACE_UPDATE, .t0_s = 0.3, .t1_s = 0.4, .step = 5, .name = "sgd" },
    };
    for (int i = 0; i < 3; i++)
        cr_assert_eq(trace_add(t, &ev[i]), 0);
    trace *back = written_and_read(t);
    cr_assert_eq(back->run.config.sync, JOB_SYNC_ASYNC);
    cr_assert_eq(back->run.config.every_n, 3, "the header's sync is async:3");
    cr_assert_eq(back->n_events, 3);
    cr_assert(back->events[0].has_staleness);
    cr_assert_eq(back->events[0].staleness, 0);
    cr_assert(back->events[1].has_staleness);
    cr_assert_eq(back->events[1].staleness, 7);
    cr_assert(back->events[1].background);
    cr_assert(!back->events[2].has_staleness, "an update without staleness stays without");
    trace_free(back);
    trace_free(t);
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"comm\",\"t0\":0,\"t1\":1,\"staleness\":2}\n", "\"staleness\"");
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"update\",\"t0\":0,\"t1\":1,\"staleness\":-1}\n", "\"staleness\"");
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"update\",\"t0\":0,\"t1\":1,\"staleness\":1.5}\n", "\"staleness\"");
}

/* The host's speed beside a run (issue 40): the probe before and after, the transfer probe
 * where measured, the steal time and the CPU time over the run, read back as written;
 * absent, the header says so; a bad value is refused by name. */
Test(trace, host_speed_round_trips_and_a_bad_value_is_refused) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    trace *back = written_and_read(t);
    cr_assert(!back->run.speed.has, "absent: not recorded");
    trace_free(back);
    t->run.speed = (trace_host_speed){ .has = true, .probe_before_s = 0.00125, .probe_after_s = 0.0013,
                                       .steal_s = 0.42, .cpu_s = 61.5 };
    back = written_and_read(t);
    cr_assert(back->run.speed.has);
    cr_assert_float_eq(back->run.speed.probe_before_s, 0.00125, 1e-15);
    cr_assert_float_eq(back->run.speed.probe_after_s, 0.0013, 1e-15);
    cr_assert_float_eq(back->run.speed.steal_s, 0.42, 1e-12);
    cr_assert_float_eq(back->run.speed.cpu_s, 61.5, 1e-12);
    cr_assert(back->run.speed.transfer_before_s == 0 && back->run.speed.transfer_after_s == 0,
              "no transfer probe written: none read");
    trace_free(back);
    t->run.speed.transfer_before_s = 140e-6;
    t->run.speed.transfer_after_s = 1.05e-3;
    back = written_and_read(t);
    cr_assert_float_eq(back->run.speed.transfer_before_s, 140e-6, 1e-18);
    cr_assert_float_eq(back->run.speed.transfer_after_s, 1.05e-3, 1e-18);
    cr_assert_float_eq(back->run.speed.probe_before_s, 0.00125, 1e-15);
    trace_free(back);
    trace_free(t);
    assert_bad("{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1,\"sync\":\"batch\","
               "\"topology\":\"ps\",\"examples\":100,\"batch\":10,\"epochs\":1,\"host_speed\":{\"probe_before_s\":-1,"
               "\"probe_after_s\":1,\"steal_s\":0,\"cpu_s\":1}}}\n",
               "run.host_speed.probe_before_s: expected a finite number >= 0");
    assert_bad("{\"run\":{\"format\":\"speedup-trace\",\"version\":1,\"workers\":2,\"cores\":1,\"sync\":\"batch\","
               "\"topology\":\"ps\",\"examples\":100,\"batch\":10,\"epochs\":1,\"host_speed\":{\"probe_before_s\":1,"
               "\"probe_after_s\":1,\"steal_s\":0,\"cpu_s\":1,\"transfer_after_s\":\"fast\"}}}\n",
               "run.host_speed.transfer_after_s: expected a finite number >= 0");
}

/* A step's processors (the scheduler's placement): [begin, end] round-trips on a compute
 * event, CPU 0 included; absent is none; elsewhere or malformed it is refused by name. */
Test(trace, a_steps_processors_round_trip_on_compute_and_are_refused_elsewhere) {
    trace_run run = sample_run();
    trace *t = trace_new(&run);
    const trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 0.1, .t1_s = 0.2, .step = 0, .examples = 16, .has_cpu = true,
          .cpu_begin = 0, .cpu_end = 1 },
        { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 0.1, .t1_s = 0.2, .step = 0, .examples = 16 },
    };
    for (int i = 0; i < 2; i++)
        cr_assert_eq(trace_add(t, &ev[i]), 0);
    trace *back = written_and_read(t);
    cr_assert(back->events[0].has_cpu && back->events[0].cpu_begin == 0 && back->events[0].cpu_end == 1);
    cr_assert(!back->events[1].has_cpu, "a step without processors stays without");
    trace_free(back);
    trace_free(t);
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"comm\",\"t0\":0,\"t1\":1,\"cpu\":[0,1]}\n", "\"cpu\"");
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"compute\",\"t0\":0,\"t1\":1,\"cpu\":[0]}\n", "\"cpu\"");
    assert_bad(RUN_LINE "{\"rank\":0,\"ph\":\"compute\",\"t0\":0,\"t1\":1,\"cpu\":[-1,0]}\n", "\"cpu\"");
}
