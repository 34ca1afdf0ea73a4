/* fit/fidelity.c: error, coverage, width and spread on numbers worked by hand. */
#include "fit/fidelity.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

Test(fidelity, figures_match_a_hand_worked_example) {
    /* Config A: runs 9, 10, 12 (median 10), predicted 10.5 in [9.5, 11.5]: error 5 %,
     * 1 of 3 inside (9 is below, 12 above), half-width 1/10.5.
     * Config B: runs 20, 20 (median 20), predicted 18 in [17, 21]: error 10 %, both
     * inside, half-width 2/18.
     * Median |error| of two: (5 + 10)/2 = 7.5 %; worst 10 %; coverage 3/5.
     * Spread: A's ln runs have variance v = var(ln 9, ln 10, ln 12) with 2 dof, B's 0
     * with 1 dof: sqrt(2v / 3). */
    fidelity_config c[2] = {
        { .runs_s = { 9, 10, 12 }, .n_runs = 3, .pred_s = 10.5, .pred_lo_s = 9.5, .pred_hi_s = 11.5 },
        { .runs_s = { 20, 20 }, .n_runs = 2, .pred_s = 18, .pred_lo_s = 17, .pred_hi_s = 21 },
    };
    fidelity_summary s;
    char err[128];
    cr_assert_eq(fidelity_summarise(c, 2, &s, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(s.median_abs_error, 0.075, 1e-12);
    cr_assert_float_eq(s.worst_abs_error, 0.10, 1e-12);
    cr_assert_eq(s.runs, 5);
    cr_assert_eq(s.inside, 3);
    cr_assert_float_eq(s.coverage, 0.6, 1e-12);
    cr_assert_float_eq(s.mean_half_width, (1 / 10.5 + 2 / 18.0) / 2, 1e-12);
    double a = log(9), b = log(10), d = log(12), m = (a + b + d) / 3;
    double v = ((a - m) * (a - m) + (b - m) * (b - m) + (d - m) * (d - m)) / 2;
    cr_assert_float_eq(s.spread, sqrt(2 * v / 3), 1e-12);
    cr_assert_float_eq(s.width_over_spread, s.mean_half_width / s.spread, 1e-12);
}

Test(fidelity, one_run_per_configuration_has_no_spread) {
    fidelity_config c = { .runs_s = { 4 }, .n_runs = 1, .pred_s = 4, .pred_lo_s = 4, .pred_hi_s = 4 };
    fidelity_summary s;
    char err[128];
    cr_assert_eq(fidelity_summarise(&c, 1, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.spread, 0.0);
    cr_assert(isnan(s.width_over_spread));
    cr_assert_eq(s.inside, 1); /* the interval's ends count as inside */
}

Test(fidelity, a_configuration_without_runs_is_refused_by_number) {
    fidelity_config c[2] = { { .runs_s = { 1 }, .n_runs = 1, .pred_s = 1 }, { .n_runs = 0, .pred_s = 1 } };
    fidelity_summary s;
    char err[128] = "";
    cr_assert_eq(fidelity_summarise(c, 2, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "configuration 2"), "%s", err);
}
