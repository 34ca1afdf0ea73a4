/* cli/cmd_trace.c and model/chrome.c: summaries that add up, Chrome JSON that parses. */
#define _POSIX_C_SOURCE 200809L
#include "model/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Two ranks: 1 s start-up, 3 steps of 0.5 s compute + 0.1 s comm, then 0.2 s of eval. */
static char *sample_trace(char *dir) {
    trace_run run = { .host_cores = 2 };
    snprintf(run.host, sizeof run.host, "host \"quoted\"");
    run.config = (costmodel_config){ .workers = 2, .cores = 1, .sync = COSTMODEL_SYNC_BATCH, .every_n = 1,
                                     .topology = COSTMODEL_TOPO_PS, .examples = 96, .batch = 32, .epochs = 1 };
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
    cr_assert(strstr(r.out, "   0      1.000      1.500      0.300      0.000      0.200      3.000      3.000    100.0%") != NULL,
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
