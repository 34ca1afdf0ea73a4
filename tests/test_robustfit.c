/* fit/robustfit.c: the robust non-negative fit on small cases worked out by hand. */
#include "fit/robustfit.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

/* y = 1 + 2x exactly at x = 1..10, but the 7th point is 100 s late: the bisquare fit gives
 * it weight 0 and recovers the line (least squares would tilt the slope to 3.82). */
Test(robustfit, a_gross_outlier_has_no_pull) {
    double x[20], y[10];
    for (int i = 0; i < 10; i++) {
        x[2 * i] = 1;
        x[2 * i + 1] = i + 1;
        y[i] = 1 + 2.0 * (i + 1) + (i == 6 ? 100 : 0);
    }
    robustfit_result r;
    char err[256] = "";
    cr_assert_eq(robustfit_solve(x, y, NULL, 10, 2, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.c[0], 1.0, 1e-9, "intercept %g", r.c[0]);
    cr_assert_float_eq(r.c[1], 2.0, 1e-9, "slope %g", r.c[1]);
    cr_assert_eq(r.outliers, 1);
    cr_assert_str_eq(r.method, "bisquare");
    cr_assert_eq(r.dof, 8);
    cr_assert_float_eq(r.rss, 100.0 * 100.0, 1e-6, "rss %g: the outlier's residual alone", r.rss);
}

/* Eight points y = 3·x1 (x2 = 0) and three y = 3·x1 − 2 (x2 = 1): every point lies on
 * 3·x1 − 2·x2, so the free fit is (3, −2). The negative coefficient is fixed at 0 and the fit
 * redone on x1 alone, where the three low points are outliers: (3, 0). */
Test(robustfit, a_negative_coefficient_is_fixed_at_zero_and_the_rest_refitted) {
    double x[22], y[11];
    for (int i = 0; i < 11; i++) {
        bool low = i >= 8;
        x[2 * i] = low ? 2 * (i - 7) : i + 1;
        x[2 * i + 1] = low;
        y[i] = 3 * x[2 * i] - (low ? 2 : 0);
    }
    robustfit_result r;
    char err[256] = "";
    cr_assert_eq(robustfit_solve(x, y, NULL, 11, 2, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.c[0], 3.0, 1e-9, "c1 %g", r.c[0]);
    cr_assert_eq(r.c[1], 0.0);
    cr_assert(r.at_bound[1] && !r.at_bound[0]);
    cr_assert_eq(r.se[1], 0.0);
    cr_assert_eq(r.cov[0][1], 0.0);
    cr_assert_eq(r.dof, 10);
}

/* Relative noise: rows are divided by their level before the fit, which does not change
 * what an exact fit finds (y = 0.5·x at x = 1..6 and 1000..1005). */
Test(robustfit, levels_weight_rows_without_moving_an_exact_fit) {
    double x[12], y[12], level[12];
    for (int i = 0; i < 12; i++) {
        x[i] = i < 6 ? i + 1 : 994 + i;
        y[i] = 0.5 * x[i];
        level[i] = y[i];
    }
    robustfit_result r;
    char err[256] = "";
    cr_assert_eq(robustfit_solve(x, y, level, 12, 1, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.c[0], 0.5, 1e-12);
}

/* The level of a row is the median y of the rows with the same features: x = 1 has y 1, 5,
 * 3 (median 3), x = 2 has 10, 20 (median 15), x = 3 has 7 alone. */
Test(robustfit, group_levels_are_medians_of_equal_rows) {
    const double x[] = { 1, 2, 1, 2, 1, 3 }, y[] = { 1, 10, 5, 20, 3, 7 }, want[] = { 3, 15, 3, 15, 3, 7 };
    double level[6];
    cr_assert_eq(robustfit_group_levels(x, y, 6, 1, level), 3);
    for (int i = 0; i < 6; i++)
        cr_assert_eq(level[i], want[i], "row %d: level %g, want %g", i, level[i], want[i]);
}

Test(robustfit, too_few_rows_are_refused_with_the_reason) {
    double x[] = { 1, 1, 1, 2 }, y[] = { 1, 2 };
    robustfit_result r;
    char err[256] = "";
    cr_assert_eq(robustfit_solve(x, y, NULL, 2, 2, &r, err, sizeof err), -1);
    cr_assert_str_eq(err, "robust fit: 2 observations cannot fit 2 coefficients with a standard error (need more than 2)");
    double bad[] = { 1, 2, 3 }, level[] = { 1, 0, 1 };
    cr_assert_eq(robustfit_solve(bad, bad, level, 3, 1, &r, err, sizeof err), -1);
    cr_assert(strstr(err, "the level of observation 1 is 0") != NULL, "%s", err);
}
