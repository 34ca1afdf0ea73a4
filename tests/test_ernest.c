/* fit/ernest.c: Ernest's features, its CSV, and its NNLS fit against known parameters. */
#define _POSIX_C_SOURCE 200809L
#include "fit/ernest.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(ernest, features_are_in_ernests_order) {
    /* predictor.py: [1.0, scale / mc, mc, np.log(mc)] */
    double f[ERNEST_N_THETA];
    ernest_features(4, 0.5, f);
    cr_assert_eq(f[0], 1.0);
    cr_assert_eq(f[1], 0.125);
    cr_assert_eq(f[2], 4.0);
    cr_assert_float_eq(f[3], 1.3862943611198906, 1e-15);
}

static ernest_data *read_text(const char *text, char *err, int errlen) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "train.csv", text);
    ernest_data *d = ernest_read_csv(path, err, errlen);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
    return d;
}

Test(ernest, reads_comments_blank_lines_and_rows) {
    char err[256] = "";
    ernest_data *d = read_text("#Cores,Input Fraction, Time (s)\n32,0.125,7.945\n\n  # note\n4,0.015625,4.72\r\n", err, sizeof err);
    cr_assert_not_null(d, "%s", err);
    cr_assert_eq(d->n, 2);
    cr_assert_eq(d->points[0].machines, 32.0);
    cr_assert_eq(d->points[0].fraction, 0.125);
    cr_assert_eq(d->points[1].time_s, 4.72);
    ernest_data_free(d);
}

static void refused(const char *text, const char *expect) {
    char err[256] = "";
    ernest_data *d = read_text(text, err, sizeof err);
    cr_assert_null(d, "accepted: %s", text);
    cr_assert(strstr(err, expect) != NULL, "error '%s' lacks '%s'", err, expect);
}

Test(ernest, malformed_rows_name_the_line_and_field) {
    refused("#h\n4,0.5,3\n4,abc,3\n", "train.csv: line 3: expected field 2 (input_fraction): a number, got 'abc'");
    refused("4,0.5\n", "line 1: expected 3 comma-separated fields");
    refused("4,0.5,3,9\n", "line 1: expected 3 comma-separated fields machines,input_fraction,time_s, got more");
    refused("0,0.5,3\n", "line 1: expected field 1 (machines): an integer >= 1, got 0");
    refused("2.5,0.5,3\n", "field 1 (machines): an integer >= 1");
    refused("4,-1,3\n", "field 2 (input_fraction): a number > 0");
    refused("4,0.5,-3\n", "field 3 (time_s): a number >= 0");
    refused("4,0.5,nan\n", "field 3 (time_s): a number, got 'nan'");
    refused("4,0.5,1e999\n", "field 3 (time_s): a number");
    refused("4,0.5,\n", "field 3 (time_s): a number, got ''");
    refused("# only a comment\n", "no data rows");
    refused("", "no data rows");
}

Test(ernest, missing_file_is_named) {
    char err[256] = "";
    cr_assert_null(ernest_read_csv("/nonexistent/x.csv", err, sizeof err));
    cr_assert(strstr(err, "/nonexistent/x.csv: cannot open") != NULL, "%s", err);
}

Test(ernest, exact_data_gives_the_generating_theta) {
    const double theta[] = { 1.5, 40.0, 0.02, 0.7 };
    ernest_point pts[12];
    int n = 0;
    for (int m = 1; m <= 32; m *= 2)
        for (int k = 1; k <= 2; k++) {
            double frac = 0.25 * k;
            double f[ERNEST_N_THETA], t = 0;
            ernest_features(m, frac, f);
            for (int j = 0; j < ERNEST_N_THETA; j++)
                t += theta[j] * f[j];
            pts[n++] = (ernest_point){ m, frac, t };
        }
    ernest_model model;
    char err[256] = "";
    cr_assert_eq(ernest_fit(pts, n, &model, err, sizeof err), 0, "%s", err);
    for (int j = 0; j < ERNEST_N_THETA; j++)
        cr_assert_float_eq(model.theta[j], theta[j], 1e-8 * (1 + theta[j]), "theta%d", j);
    cr_assert_float_eq(ernest_predict(&model, 64, 1.0), 1.5 + 40.0 / 64 + 0.02 * 64 + 0.7 * log(64), 1e-8);
}

Test(ernest, noisy_data_recovers_theta_within_three_standard_errors) {
    const double theta[] = { 2.0, 30.0, 0.05, 0.8 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    ernest_point pts[120];
    int n = 0;
    for (int rep = 0; rep < 5; rep++)
        for (int m = 1; m <= 64; m *= 2)
            for (int k = 1; k <= 3; k++) {
                double frac = k / 3.0;
                pts[n++] = (ernest_point){ m, frac, 2.0 + 30.0 * frac / m + 0.05 * m + 0.8 * log(m)
                                                     + gsl_ran_gaussian(rng, 0.05) };
            }
    ernest_model model;
    char err[256] = "";
    cr_assert_eq(ernest_fit(pts, n, &model, err, sizeof err), 0, "%s", err);
    for (int j = 0; j < ERNEST_N_THETA; j++) {
        cr_assert(!model.at_bound[j]);
        cr_assert_leq(fabs(model.theta[j] - theta[j]), 3 * model.se[j], "theta%d = %g ± %g, true %g", j,
                      model.theta[j], model.se[j], theta[j]);
    }
    gsl_rng_free(rng);
}

Test(ernest, four_points_are_too_few) {
    ernest_point pts[4] = { { 1, 1, 10 }, { 2, 1, 6 }, { 4, 1, 4 }, { 8, 1, 3 } };
    ernest_model model;
    char err[256] = "";
    cr_assert_eq(ernest_fit(pts, 4, &model, err, sizeof err), -1);
    cr_assert(strstr(err, "at least 5 data points") != NULL, "%s", err);
}
