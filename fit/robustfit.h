/* robustfit — robust, non-negative linear regression for timings: y ≈ X·c, c ≥ 0, where a
 * few rows are gross outliers (a step or a message preempted by another process on a busy
 * host, many times its usual time) and the rest have noise proportional to their size.
 *
 *   robustfit_result r;
 *   robustfit_group_levels(x, y, n, p, level);          // noise ∝ each row's level
 *   if (robustfit_solve(x, y, level, n, p, &r, err, sizeof err)) ...  // r.c, r.se, r.cov
 *
 * The estimator: GSL's gsl_multifit_robust with Tukey's bisquare weights (tuning 4.685),
 * whose weight falls to 0 far out, so a preempted span has no pull at all (Huber's would
 * keep every outlier pulling, and preemption only makes spans longer). When bisquare's
 * iterations do not settle the fit falls back to Huber's weights, then to ordinary least
 * squares; r.method says which ("bisquare", "huber", "ols").
 *
 * Relative noise: with level non-NULL each row is divided by level_i (weighted by
 * 1/level_i²), so a long span does not pass for a precise one; robustfit_group_levels's
 * level is the median y of the rows with the same features. Non-negativity: while a
 * coefficient is negative, the most negative in standard errors is fixed at 0 (at_bound,
 * standard error 0) and the rest refitted. Standard errors: GSL's robust covariance of the
 * final fit on the free columns. Why bisquare, the fallbacks' history and the scale
 * estimators: docs/calibration.md ("The robust fit").
 *
 * Cost: a few ordinary fits of n × p per call, O(n·p²) each. Nothing prints; every GSL
 * status is checked (GSL's error handler is off inside). robustfit_group_levels writes the
 * caller's level array and returns -1 when out of memory.
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
