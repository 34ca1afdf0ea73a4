/* robustfit — robust, non-negative linear regression for timings: y ≈ X·c, c ≥ 0, where a
 * few rows are gross outliers (a step or a message preempted by another process on a busy
 * host, 50–100× its usual time) and the rest have noise proportional to their size.
 *
 *   robustfit_result r;
 *   robustfit_group_levels(x, y, n, p, level);          // noise ∝ each row's level
 *   if (robustfit_solve(x, y, level, n, p, &r, err, sizeof err)) ...  // r.c, r.se, r.cov
 *
 * The estimator is GSL's gsl_multifit_robust (iteratively reweighted least squares from
 * the ordinary fit, residual scale from the median absolute deviation) with Tukey's
 * bisquare weights at GSL's tuning 4.685 (95 % efficiency on normal noise). Bisquare
 * rather than Huber because its weight falls to 0 beyond 4.685 scales: a preempted span
 * then has no pull at all, where Huber's monotone ψ keeps every outlier pulling with
 * c·s — and preemption only ever makes spans longer, so those pulls all go one way.
 * Bisquare's objective is not convex: when GSL's iterations do not settle (1000 of them),
 * the fit is redone with Huber's weights and method says "huber". Huber's is convex, but
 * GSL's iterations on it can still fail to settle (they did on a cluster calibration's
 * all-reduce spans: 2026-12-01, experiments/async): then the fit is the ordinary least
 * squares one and method says "ols" — the outliers pull it, but a calibration is made.
 *
 * Relative noise: with level non-NULL every row (x_i, y_i) is divided by level_i before
 * the fit, which weights it by 1/level_i² — step and message times spread by a fraction of
 * themselves, so a long span must not pass for a precise one, and a robust scale over rows
 * of different sizes only makes sense on the relative residuals (in seconds, every long
 * row would look like an outlier). robustfit_group_levels gives a level that needs no fit:
 * the median y of the rows with the same features; the fitted values of a first fit make
 * a better one (a median of two is their mean, which one outlier drags up).
 *
 * Non-negativity: the fit is first made with every column. While a coefficient is
 * negative, the most negative in standard errors is fixed at 0 and the fit redone with the
 * others. A fixed coefficient has at_bound set and a standard error of 0 (a one-sided,
 * zero-width interval, as fit/nnls.h reports its bound parameters).
 *
 * Standard errors: GSL's robust covariance of the final fit on the free columns, σ²(XᵀX)⁻¹
 * with σ after Street, Carroll & Ruppert (1988) and never below DuMouchel & O'Brien's
 * blend with the ordinary σ: a gross outlier widens the interval a little even though it
 * does not move the estimate.
 *
 * Cost: a few ordinary fits of n × p per call, O(n·p²) each. Nothing prints; every GSL
 * status is checked (GSL's error handler is off inside).
 */
#ifndef SPEEDUP_ROBUSTFIT_H
#define SPEEDUP_ROBUSTFIT_H

#include <stdbool.h>

enum { ROBUSTFIT_MAX_P = 4 };

typedef struct {
    int p;                                            /* coefficients */
    long n;                                           /* rows */
    double c[ROBUSTFIT_MAX_P];                        /* every c_j ≥ 0 */
    double se[ROBUSTFIT_MAX_P];                       /* 0 where at_bound */
    double cov[ROBUSTFIT_MAX_P][ROBUSTFIT_MAX_P];     /* 0 in the rows/columns at_bound */
    bool at_bound[ROBUSTFIT_MAX_P];                   /* c_j fixed at 0 */
    int dof;                                          /* n − free coefficients */
    double rss;                                       /* Σ (y − x·c)² over every row, y's unit² */
    long outliers;                                    /* rows the final fit gave weight 0 */
    const char *method;                               /* "bisquare", "huber" or "ols" (see above) */
} robustfit_result;

/* Fits y (n) on x (n, p) row-major, 1 ≤ p ≤ ROBUSTFIT_MAX_P; level (n), when not NULL,
 * the scale each row's noise is proportional to (every level_i > 0). Needs n > p and finite
 * inputs. Returns 0 and fills *out, or -1 with a one-line reason in err. */
int robustfit_solve(const double *x, const double *y, const double *level, long n, int p, robustfit_result *out,
                    char *err, int errlen);

/* level_i = the median of y over the rows whose features x equal row i's. Returns the
 * number of such groups, or -1 out of memory. */
long robustfit_group_levels(const double *x, const double *y, long n, int p, double *level);

#endif
