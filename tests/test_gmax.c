/* model/gmax.c: the mean and variance of the maximum of K standard normals against known values. */
#define _DEFAULT_SOURCE /* M_PI */
#include "model/gmax.h"

#include <criterion/criterion.h>
#include <math.h>

Test(gmax, one_normal_has_mean_zero) {
    cr_assert_eq(gmax_expected(1), 0.0);
}

Test(gmax, two_normals_give_one_over_root_pi) {
    cr_assert(fabs(gmax_expected(2) - 1.0 / sqrt(M_PI)) < 1e-9, "G(2) = %.15g", gmax_expected(2));
}

Test(gmax, three_normals_give_three_over_two_root_pi) {
    cr_assert(fabs(gmax_expected(3) - 1.5 / sqrt(M_PI)) < 1e-9, "G(3) = %.15g", gmax_expected(3));
}

Test(gmax, matches_tabulated_values_for_large_k) {
    /* Expected largest of K standard normals (Harter 1961 tables, 5 decimals). */
    const struct { int k; double g; } table[] = {
        { 5, 1.16296 }, { 10, 1.53875 }, { 20, 1.86748 }, { 50, 2.24907 }, { 100, 2.50759 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        cr_assert(fabs(gmax_expected(table[i].k) - table[i].g) < 1e-5, "G(%d) = %.8f, table %.5f",
                  table[i].k, gmax_expected(table[i].k), table[i].g);
}

Test(gmax, grows_with_k_and_stays_below_the_extreme_value_bound) {
    double last = 0.0;
    for (int k = 2; k <= 65536; k *= 2) {
        double g = gmax_expected(k);
        cr_assert(isfinite(g));
        cr_assert_gt(g, last, "G(%d) = %g", k, g);
        cr_assert_lt(g, sqrt(2.0 * log(k)), "G(%d) = %g above sqrt(2 ln k)", k, g);
        last = g;
    }
}

Test(gmax, variance_of_the_maximum_matches_known_values) {
    /* V(1) = 1; V(2) = 1 − 1/π; V(3) = 1 + √3/(2π) − 9/(4π) (E[M²] = 1 + √3/(2π)); larger
     * K from mpmath quadrature at 30 digits (Harter's tables to 4 decimals: 0.4475,
     * 0.3443, 0.1844). */
    cr_assert_eq(gmax_variance(1), 1.0);
    cr_assert(fabs(gmax_variance(2) - (1 - 1 / M_PI)) < 1e-9, "V(2) = %.15g", gmax_variance(2));
    double v3 = 1 + sqrt(3.0) / (2 * M_PI) - 9 / (4 * M_PI);
    cr_assert(fabs(gmax_variance(3) - v3) < 1e-9, "V(3) = %.15g", gmax_variance(3));
    const struct { int k; double v; } table[] = {
        { 5, 0.447534069020662 }, { 10, 0.344343823260690 }, { 100, 0.184404813585825 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        cr_assert(fabs(gmax_variance(table[i].k) - table[i].v) < 1e-9, "V(%d) = %.15g, mpmath %.15g", table[i].k,
                  gmax_variance(table[i].k), table[i].v);
}

Test(gmax, order_statistics_match_exact_and_tabulated_values) {
    /* K = 2: ±1/√π; K = 3: −3/(2√π), 0, 3/(2√π); larger K from Harter's (1961) tables of the
     * expected values of normal order statistics, 5 decimals. */
    cr_assert(fabs(gmax_order_expected(2, 1) + 1.0 / sqrt(M_PI)) < 1e-9, "e_1 of 2 = %.15g", gmax_order_expected(2, 1));
    cr_assert(fabs(gmax_order_expected(3, 1) + 1.5 / sqrt(M_PI)) < 1e-9, "e_1 of 3 = %.15g", gmax_order_expected(3, 1));
    cr_assert(fabs(gmax_order_expected(3, 2)) < 1e-12, "e_2 of 3 = %.15g", gmax_order_expected(3, 2));
    const struct { int k, j; double e; } table[] = {
        { 4, 4, 1.02938 }, { 4, 3, 0.29701 }, { 4, 1, -1.02938 }, { 5, 4, 0.49502 },
        { 10, 10, 1.53875 }, { 10, 9, 1.00136 }, { 10, 8, 0.65606 }, { 10, 7, 0.37576 }, { 10, 6, 0.12267 },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        cr_assert(fabs(gmax_order_expected(table[i].k, table[i].j) - table[i].e) < 1e-5, "e_%d of %d = %.8f, table %.5f",
                  table[i].j, table[i].k, gmax_order_expected(table[i].k, table[i].j), table[i].e);
    cr_assert(fabs(gmax_order_expected(5000, 5000) - gmax_expected(5000)) < 1e-8, "unmemoised k: the largest is G(k)");
    cr_assert_eq(gmax_order_expected(4, 0), 0.0);
    cr_assert_eq(gmax_order_expected(4, 5), 0.0);
}

Test(gmax, ranks_that_share_the_cores_wait_for_less_than_the_slowest) {
    /* At ρ ≤ 1 each rank keeps its core: the last waits G(K). */
    cr_assert_eq(gmax_shared_expected(3, 1.0), gmax_expected(3));
    /* K = 3 on 2 cores (ρ = 1.5): h = (1, 2/3, 2/3), G = e_1/3 + 2e_3/3 = G(3)/3 = 1/(2√π). */
    cr_assert(fabs(gmax_shared_expected(3, 1.5) - 0.5 / sqrt(M_PI)) < 1e-9, "G_1.5(3) = %.15g",
              gmax_shared_expected(3, 1.5));
    /* K = 4 on 2 cores (ρ = 2): h = (1, 3/4, 1/2, 1/2), G = (e_1 + e_2)/4 + e_4/2, with
     * e_4 = 1.0293753730, e_3 = 0.2970113823 (Harter's 10-decimal table). */
    double want = (-1.0293753730 - 0.2970113823) / 4 + 1.0293753730 / 2;
    cr_assert(fabs(gmax_shared_expected(4, 2.0) - want) < 1e-8, "G_2(4) = %.15g, want %.15g", gmax_shared_expected(4, 2.0),
              want);
    /* Two ranks on one core: it never idles, so no wait beyond the mean. */
    cr_assert(fabs(gmax_shared_expected(2, 2.0)) < 1e-12, "G_2(2) = %.15g", gmax_shared_expected(2, 2.0));
}
