/* The CLI suites' helpers about predictions: `speedup ARGS --out FILE` read back through
 * the predictions reader, and a calibration with one uncertain parameter. Their own
 * object in speedup_clirun, so only the suites that call them need speedup_model. */
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

prediction_row *clirun_predictions(const char *args, int *n) {
    char *dir = clirun_tmpdir();
    cr_assert_not_null(dir);
    size_t len = strlen(args) + strlen(dir) + 32;
    char *cmd = malloc(len), path[512], err[1024];
    snprintf(path, sizeof path, "%s/p.csv", dir);
    snprintf(cmd, len, "%s --out %s", args, path);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "speedup %s: %s", cmd, r.err);
    prediction_row *rows = NULL;
    cr_assert_eq(predictions_read_csv(path, &rows, n, err, sizeof err), 0, "%s", err);
    clirun_free(&r);
    remove(path);
    remove(dir);
    free(cmd);
    free(dir);
    return rows;
}

void clirun_assert_point_interval(const char *args) {
    int n;
    prediction_row *rows = clirun_predictions(args, &n);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(rows[i].time_lo, rows[i].time_s, "row %d: %.9g [%.9g, ...]", i, rows[i].time_s, rows[i].time_lo);
        cr_assert_eq(rows[i].time_hi, rows[i].time_s, "row %d", i);
        cr_assert_eq(rows[i].ci_lo, rows[i].speedup, "row %d", i);
        cr_assert_eq(rows[i].ci_hi, rows[i].speedup, "row %d", i);
    }
    free(rows);
}

char *clirun_write_c1_calibration(const char *dir) {
    return clirun_write_file(dir, "cal.json",
        "{\"format\": \"speedup-calibration\", \"version\": 1,\n"
        " \"host\": {\"name\": \"t\", \"cores\": 2},\n"
        " \"params\": {\"c0\": {\"value\": 0, \"stderr\": 0}, \"c1\": {\"value\": 0.002, \"stderr\": 0.0002},\n"
        "  \"sigma\": {\"value\": 0.1}, \"alpha_ps\": {\"value\": 0}, \"beta_ps\": {\"value\": 0},\n"
        "  \"alpha_allreduce\": {\"value\": 0}, \"beta_allreduce\": {\"value\": 0},\n"
        "  \"model_bytes\": {\"value\": 1000}, \"w0\": {\"value\": 0}, \"w1\": {\"value\": 0},\n"
        "  \"cv\": {\"value\": 0}, \"host_cores\": {\"value\": 2}}}\n");
}
