/* cli/cmd_model.c: `speedup model` end to end through the real binary. */
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli_model, prints_a_table_for_the_seed_example) {
    clirun_result r = clirun("model");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "speedup") != NULL);
    /* header line + column line + 5 workers × 3 cores × 2 sync modes */
    cr_assert_eq(count_lines(r.out), 2 + 30, "%s", r.out);
    clirun_free(&r);
}

Test(cli_model, csv_has_the_predictions_header_and_one_row_per_config) {
    clirun_result r = clirun("model --csv --workers 1,2,4,8 --cores 1,2,4 --sync batch,epoch,every:4 --topology ps,allreduce");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *header = "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,"
                         "update_s,time_lo,time_hi,mean_lo,mean_hi\n";
    cr_assert(strncmp(r.out, header, strlen(header)) == 0, "%s", r.out);
    cr_assert_eq(count_lines(r.out), 1 + 4 * 3 * 3 * 2);
    cr_assert(strstr(r.out, "\n1,1,batch,ps,") != NULL);
    cr_assert(strstr(r.out, "\n8,4,every:4,allreduce,") != NULL);
    clirun_free(&r);
}

Test(cli_model, one_worker_one_core_prints_speedup_one) {
    clirun_result r = clirun("model --csv --workers 1 --cores 1 --sync batch");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\n1,1,batch,ps,") != NULL);
    double time_s, speedup;
    cr_assert_eq(sscanf(strchr(r.out, '\n') + 1, "1,1,batch,ps,%lf,%lf", &time_s, &speedup), 2);
    cr_assert_eq(speedup, 1.0);
    clirun_free(&r);
}

Test(cli_model, out_file_is_written_whole) {
    char *dir = clirun_tmpdir();
    char args[512];
    snprintf(args, sizeof args, "model --out %s/p.csv --workers 2", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/p.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[256];
    int lines = 0;
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    cr_assert_eq(lines, 1 + 3 * 2);
    remove(path);
    remove(dir);
    free(dir);
    clirun_free(&r);
}

Test(cli_model, flags_override_the_parameters) {
    /* No latency, infinite-ish bandwidth, no start-up or spread: speedup is exactly K. */
    clirun_result r = clirun("model --csv --workers 4 --cores 1 --sync batch --latency 0 --bandwidth 1e300 "
                             "--startup 0,0 --cv 0 --c0 0 --examples 6400 --batch 32");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    double time_s, speedup;
    cr_assert_eq(sscanf(strchr(r.out, '\n') + 1, "4,1,batch,ps,%lf,%lf", &time_s, &speedup), 2, "%s", r.out);
    cr_assert_float_eq(speedup, 4.0, 1e-9);
    clirun_free(&r);
}

Test(cli_model, zero_workers_is_a_usage_error) { clirun_assert_refused("model --workers 0", 2, "'0'"); }
Test(cli_model, negative_flag_is_a_usage_error) { clirun_assert_refused("model --c1 -3", 2, "'-3'"); }
Test(cli_model, non_numeric_flag_is_a_usage_error) { clirun_assert_refused("model --latency abc", 2, "'abc'"); }
Test(cli_model, unknown_sync_mode_is_a_usage_error) { clirun_assert_refused("model --sync batch,weekly", 2, "'weekly'"); }
Test(cli_model, every_zero_is_a_usage_error) { clirun_assert_refused("model --sync every:0", 2, "'every:0'"); }
Test(cli_model, unknown_topology_is_a_usage_error) { clirun_assert_refused("model --topology ring", 2, "'ring'"); }
Test(cli_model, unknown_flag_is_a_usage_error) { clirun_assert_refused("model --frobnicate", 2, "--frobnicate"); }
Test(cli_model, trailing_garbage_in_a_list_is_a_usage_error) { clirun_assert_refused("model --workers 1,2x", 2, "'2x'"); }
Test(cli_model, unknown_command_is_a_usage_error) { clirun_assert_refused("modle", 2, "'modle'"); }
Test(cli_model, missing_calibration_file_is_a_failure) { clirun_assert_refused("model --calib /nonexistent.json", 1, "/nonexistent.json"); }

Test(cli_model, malformed_calibration_is_a_failure_naming_the_line) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "bad.json", "{\"format\": \"speedup-calibration\",\n \"version\": 1,\n \"params\": {,}}\n");
    char args[512];
    snprintf(args, sizeof args, "model --calib %s", path);
    clirun_assert_refused(args, 1, "line 3");
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(cli_model, help_and_version_exit_zero) {
    const char *args[] = { "--help", "model --help", "--version" };
    for (int i = 0; i < 3; i++) {
        clirun_result r = clirun(args[i]);
        cr_assert_eq(r.status, 0, "%s: %s", args[i], r.err);
        cr_assert_gt(strlen(r.out), 10);
        clirun_free(&r);
    }
}
