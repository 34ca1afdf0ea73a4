/* speedup report's and the calibrate plan's refusals: missing gnuplot, bad flags, bad
 * budgets (the report end to end: test_report_e2e.c). */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_configs.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(cli_report, missing_gnuplot_is_one_clear_error_before_measuring) {
    char *dir = clirun_tmpdir(), args[1024];
    setenv("SPEEDUP_GNUPLOT", "/nonexistent/gnuplot", 1);
    snprintf(args, sizeof args, "report --out %s/out --limit 64 --max-workers 4", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 1, "exit %d", r.status);
    cr_assert(strstr(r.err, "gnuplot not found (/nonexistent/gnuplot)") != NULL, "stderr: %s", r.err);
    cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "more than one line: %s", r.err);
    clirun_free(&r);
    free(dir);
}

Test(cli_report, unknown_flag_is_a_usage_error) {
    clirun_result r = clirun("report --colour red");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--colour") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(cli_report, zero_max_workers_is_a_usage_error) {
    clirun_result r = clirun("report --max-workers 0");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--max-workers") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

/* A held-out file with the given body; its path in out. */
static void held_out_file(const char *body, char *out, size_t size) {
    char *dir = clirun_tmpdir();
    snprintf(out, size, "%s/held-out", dir);
    free(dir);
    FILE *f = fopen(out, "w");
    cr_assert_not_null(f);
    fputs(body, f);
    fclose(f);
}

static void assert_held_out_refused(const char *body, const char *needle) {
    char path[512], args[700];
    held_out_file(body, path, sizeof path);
    snprintf(args, sizeof args, "report --out /nonexistent/never --held-out %s", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 2, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.err, path) && strstr(r.err, needle), "stderr: %s", r.err);
    clirun_free(&r);
}

Test(cli_report, held_out_line_with_too_few_fields_is_named) {
    assert_held_out_refused("# workers cores sync topology batch master epochs\n2 1 batch ps 32\n",
                            "line 2: expected 7 fields");
}

Test(cli_report, held_out_weak_scaling_is_an_eighth_field_of_batch_sync_only) {
    assert_held_out_refused("2 1 batch allreduce 16 worker 1 strong\n", "line 1: 8th field 'strong': expected weak");
    assert_held_out_refused("2 1 every:8 allreduce 16 worker 1 weak\n", "line 1: weak goes with batch sync");
    char path[512], err[512];
    held_out_file("2 1 batch allreduce 16 worker 1 weak\n2 1 batch allreduce 16 worker 1\n", path, sizeof path);
    report_config k[REPORT_MAX_CONFIGS];
    const int n = report_configs_read(path, 32, 2, k, REPORT_MAX_CONFIGS, err, sizeof err);
    cr_assert_gt(n, 2, "%s", err);
    char name[128];
    report_config_name(&k[n - 2], name, sizeof name);
    cr_assert_str_eq(name, "2x1 batch allreduce b16 weak");
    cr_assert(k[n - 2].batch_per_worker && !k[n - 1].batch_per_worker);
}

Test(cli_report, held_out_unknown_sync_is_named) {
    assert_held_out_refused("2 1 sometimes ps 32 worker 1\n", "line 1: sync 'sometimes'");
}

Test(cli_report, held_out_dedicated_all_reduce_is_refused) {
    assert_held_out_refused("\n2 1 batch allreduce 32 dedicated 1\n", "line 2: a dedicated master needs the ps topology");
}

Test(cli_report, held_out_more_workers_than_the_split_batch_is_refused) {
    assert_held_out_refused("4 1 batch allreduce 2 worker 1\n", "4 workers need a batch of 4");
}

Test(cli_report, held_out_file_without_configurations_is_refused) {
    assert_held_out_refused("# nothing\n\n", "no configurations");
}

Test(cli_report, zero_repeats_is_a_usage_error) {
    clirun_result r = clirun("report --repeats 0");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--repeats") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(calibrate_plan, zero_budget_is_a_usage_error) {
    clirun_result r = clirun("calibrate --budget 0");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--budget") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(calibrate_plan, negative_budget_is_a_usage_error) {
    clirun_result r = clirun("calibrate --budget -30");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--budget") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(calibrate_plan, budget_that_is_not_a_number_is_a_usage_error) {
    clirun_result r = clirun("calibrate --budget soon");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "'soon'") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(calibrate_plan, unknown_flag_is_a_usage_error) {
    clirun_result r = clirun("calibrate --budjet 30");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--budjet") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(calibrate_plan, measuring_flags_with_from_traces_are_refused) {
    char *dir = clirun_tmpdir(), args[600];
    snprintf(args, sizeof args, "calibrate --from-traces %s --budget 30", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "for measuring") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
    free(dir);
}

Test(calibrate_plan, unwritable_out_dir_fails_before_measuring) {
    clirun_result r = clirun("calibrate --out-dir /proc/speedup-no/traces --limit 64");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "/proc/speedup-no/traces: cannot create directory") != NULL, "stderr: %s", r.err);
    clirun_free(&r);
}

Test(cli_report, accuracy_plan_needs_a_positive_budget) {
    clirun_assert_refused("report --accuracy-plan 0", 2, "--accuracy-plan: expected a number in [1,");
    clirun_assert_refused("report --accuracy-plan soon", 2, "--accuracy-plan: expected a number");
}

Test(cli_report, an_unknown_sync_mode_is_a_usage_error_before_anything_runs) {
    clirun_assert_refused("report --sync batch,weekly", 2, "report: --sync: unknown sync mode 'weekly'");
    clirun_assert_refused("report --sync async:0", 2, "unknown sync mode 'async:0'");
}
