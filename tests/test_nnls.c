/* fit/nnls.c: non-negative least squares against a problem solved by hand and against
 * the parameters that generated noisy data. */
#include "fit/nnls.h"

#include <criterion/criterion.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_multifit.h>
#include <stdbool.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

static gsl_matrix *matrix_of(int n, int p, const double *v) {
    gsl_matrix *m = gsl_matrix_alloc((size_t)n, (size_t)p);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < p; j++)
            gsl_matrix_set(m, (size_t)i, (size_t)j, v[i * p + j]);
    return m;
}

static gsl_vector *vector_of(int n, const double *v) {
    gsl_vector *x = gsl_vector_alloc((size_t)n);
    for (int i = 0; i < n; i++)
        gsl_vector_set(x, (size_t)i, v[i]);
    return x;
}

/* A = [1 0; 0 1; 1 1], y = (1, −1, 0). Unconstrained: x = (1, −1). With x ≥ 0: x2 = 0 and
 * x1 minimises (x1−1)² + 1 + x1², so x1 = 1/2, residual (½, −1, −½), rss = 3/2. The
 * gradient on x2, Aᵀr = −1 − ½ < 0, confirms the bound. Passive fit on column 1 alone:
 * s² = 1.5 / (3 − 1) = 0.75, (A₁ᵀA₁)⁻¹ = 1/2, so se(x1) = √0.375. */
Test(nnls, hand_solved_problem_puts_x2_at_the_bound) {
    const double a[] = { 1, 0, 0, 1, 1, 1 }, yv[] = { 1, -1, 0 };
    gsl_matrix *A = matrix_of(3, 2, a);
    gsl_vector *y = vector_of(3, yv);
    nnls_result *r = nnls_result_new(2);
    char err[256] = "";
    cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(gsl_vector_get(r->x, 0), 0.5, 1e-12);
    cr_assert_eq(gsl_vector_get(r->x, 1), 0.0);
    cr_assert(!r->at_bound[0]);
    cr_assert(r->at_bound[1]);
    cr_assert_float_eq(r->rss, 1.5, 1e-12);
    cr_assert_eq(r->dof, 2);
    cr_assert_float_eq(gsl_vector_get(r->se, 0), sqrt(0.375), 1e-12);
    cr_assert_eq(gsl_vector_get(r->se, 1), 0.0);
    nnls_result_free(r);
    gsl_vector_free(y);
    gsl_matrix_free(A);
}

/* When the unconstrained solution is already positive NNLS is ordinary least squares:
 * points exactly on y = 2 + 3x give (2, 3) and zero residual. */
Test(nnls, exact_positive_line_is_recovered) {
    const double a[] = { 1, 0, 1, 1, 1, 2, 1, 5 }, yv[] = { 2, 5, 8, 17 };
    gsl_matrix *A = matrix_of(4, 2, a);
    gsl_vector *y = vector_of(4, yv);
    nnls_result *r = nnls_result_new(2);
    char err[256] = "";
    cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(gsl_vector_get(r->x, 0), 2.0, 1e-10);
    cr_assert_float_eq(gsl_vector_get(r->x, 1), 3.0, 1e-10);
    cr_assert_float_eq(r->rss, 0.0, 1e-18);
    nnls_result_free(r);
    gsl_vector_free(y);
    gsl_matrix_free(A);
}

/* 200 noisy observations of features of very different scales (1, bytes ~ 1e6, K) from
 * known positive parameters and one true zero: every free parameter lands within 3
 * standard errors, the zero one at the bound or within 3 standard errors of 0. */
Test(nnls, recovers_generating_parameters_within_three_standard_errors) {
    const double truth[] = { 0.002, 8e-9, 0.0, 0.0005 };
    const int n = 200, p = 4;
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 42);
    gsl_matrix *A = gsl_matrix_alloc((size_t)n, (size_t)p);
    gsl_vector *y = gsl_vector_alloc((size_t)n);
    for (int i = 0; i < n; i++) {
        double row[] = { 1.0, gsl_rng_uniform(rng) * 2e6, 1.0 + (double)gsl_rng_uniform_int(rng, 16),
                         gsl_rng_uniform(rng) * 10.0 };
        double yi = 0;
        for (int j = 0; j < p; j++) {
            gsl_matrix_set(A, (size_t)i, (size_t)j, row[j]);
            yi += truth[j] * row[j];
        }
        gsl_vector_set(y, (size_t)i, yi + gsl_ran_gaussian(rng, 0.001));
    }
    nnls_result *r = nnls_result_new(p);
    char err[256] = "";
    cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), 0, "%s", err);
    for (int j = 0; j < p; j++) {
        double x = gsl_vector_get(r->x, (size_t)j), se = gsl_vector_get(r->se, (size_t)j);
        cr_assert_geq(x, 0.0);
        if (r->at_bound[j]) {
            cr_assert_eq(truth[j], 0.0, "parameter %d (true %g) wrongly held at 0", j, truth[j]);
            continue;
        }
        cr_assert_gt(se, 0.0);
        cr_assert_leq(fabs(x - truth[j]), 3 * se, "parameter %d: %g vs true %g (se %g)", j, x, truth[j], se);
    }
    nnls_result_free(r);
    gsl_vector_free(y);
    gsl_matrix_free(A);
    gsl_rng_free(rng);
}

Test(nnls, too_few_observations_are_refused) {
    const double a[] = { 1, 0, 0, 1 }, yv[] = { 1, 2 };
    gsl_matrix *A = matrix_of(2, 2, a);
    gsl_vector *y = vector_of(2, yv);
    nnls_result *r = nnls_result_new(2);
    char err[256] = "";
    cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), -1);
    cr_assert(strstr(err, "2 observations cannot fit 2 parameters") != NULL, "%s", err);
    nnls_result_free(r);
    gsl_vector_free(y);
    gsl_matrix_free(A);
}

Test(nnls, nan_observation_is_refused) {
    const double a[] = { 1, 0, 1, 1, 1, 2 }, yv[] = { 1, NAN, 2 };
    gsl_matrix *A = matrix_of(3, 2, a);
    gsl_vector *y = vector_of(3, yv);
    nnls_result *r = nnls_result_new(2);
    char err[256] = "";
    cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), -1);
    cr_assert(strstr(err, "observation 1 is not a finite number") != NULL, "%s", err);
    nnls_result_free(r);
    gsl_vector_free(y);
    gsl_matrix_free(A);
}

Test(nnls, rank_sees_proportional_columns) {
    /* Column 2 = 1e6 × column 1: one direction, whatever the units. */
    const double a[] = { 1, 1e6, 2, 2e6, 3, 3e6 }, b[] = { 1, 1e6, 2, 3e6, 3, 3e6 };
    gsl_matrix *A = matrix_of(3, 2, a), *B = matrix_of(3, 2, b);
    cr_assert_eq(nnls_rank(A), 1);
    cr_assert_eq(nnls_rank(B), 2);
    gsl_matrix_free(A);
    gsl_matrix_free(B);
}

/* The NNLS solution is the best of the least-squares fits on every subset of columns
 * whose coefficients are all positive; for p = 4 all 16 subsets can be tried. An
 * independent reference for the active-set logic, on 50 random problems whose
 * unconstrained solutions have negative parts. */
static double subset_best(const gsl_matrix *A, const gsl_vector *y, double *best_x) {
    size_t n = A->size1, p = A->size2;
    double best = INFINITY;
    for (unsigned mask = 0; mask < (1u << p); mask++) {
        size_t k = (size_t)__builtin_popcount(mask);
        double x[8] = { 0 }, rss = 0;
        if (k > 0) {
            gsl_matrix *S = gsl_matrix_alloc(n, k);
            gsl_vector *c = gsl_vector_alloc(k);
            gsl_matrix *cov = gsl_matrix_alloc(k, k);
            gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, k);
            for (size_t j = 0, a = 0; j < p; j++)
                if (mask & (1u << j)) {
                    gsl_vector_const_view col = gsl_matrix_const_column(A, j);
                    gsl_matrix_set_col(S, a++, &col.vector);
                }
            gsl_multifit_linear(S, y, c, cov, &rss, w);
            bool positive = true;
            for (size_t j = 0, a = 0; j < p; j++)
                if (mask & (1u << j)) {
                    x[j] = gsl_vector_get(c, a++);
                    positive = positive && x[j] > 0;
                }
            gsl_multifit_linear_free(w);
            gsl_matrix_free(cov);
            gsl_vector_free(c);
            gsl_matrix_free(S);
            if (!positive)
                continue;
        } else {
            gsl_blas_ddot(y, y, &rss);
        }
        if (rss < best) {
            best = rss;
            memcpy(best_x, x, sizeof x[0] * p);
        }
    }
    return best;
}

Test(nnls, matches_the_best_positive_subset_fit_on_random_problems) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 99);
    const int n = 12, p = 4;
    for (int trial = 0; trial < 50; trial++) {
        gsl_matrix *A = gsl_matrix_alloc((size_t)n, (size_t)p);
        gsl_vector *y = gsl_vector_alloc((size_t)n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < p; j++)
                gsl_matrix_set(A, (size_t)i, (size_t)j, gsl_rng_uniform(rng));
            gsl_vector_set(y, (size_t)i, gsl_ran_gaussian(rng, 1.0));
        }
        nnls_result *r = nnls_result_new(p);
        char err[256] = "";
        cr_assert_eq(nnls_solve(A, y, r, err, sizeof err), 0, "%s", err);
        double ref[4];
        double best = subset_best(A, y, ref);
        cr_assert_float_eq(r->rss, best, 1e-9 * (1 + best), "trial %d: rss %g vs best %g", trial, r->rss, best);
        for (int j = 0; j < p; j++)
            cr_assert_float_eq(gsl_vector_get(r->x, (size_t)j), ref[j], 1e-7, "trial %d x%d", trial, j);
        nnls_result_free(r);
        gsl_vector_free(y);
        gsl_matrix_free(A);
    }
    gsl_rng_free(rng);
}
