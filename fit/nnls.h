/* nnls — non-negative least squares: minimise ‖A·x − y‖² subject to x ≥ 0.
 *
 * Lawson & Hanson's active-set algorithm (Solving Least Squares Problems, 1974, ch. 23),
 * the method behind scipy.optimize.nnls that Ernest uses. This module is only the
 * active-set loop: every unconstrained solve on the passive (free) columns is GSL's
 * gsl_multifit_linear. Columns are scaled to unit norm first (NNLS is invariant under
 * positive column scaling) so features of very different units — 1, bytes, K — meet
 * the same tolerances.
 *
 * Standard errors come from the covariance GSL returns for the final passive-set fit,
 * s²·(A_Pᵀ A_P)⁻¹ with s² = rss / (n − |P|). A parameter held at the bound 0 is not
 * estimated by that fit: its standard error is reported as 0 (a zero-width, one-sided
 * interval) and at_bound is set, so callers can say so rather than print a false
 * precision.
 *
 * Nothing prints, nothing exits; every GSL status is checked.
 */
#ifndef SPEEDUP_NNLS_H
#define SPEEDUP_NNLS_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>
#include <stdbool.h>

typedef struct {
    gsl_vector *x;       /* (p) the solution, every entry ≥ 0 */
    gsl_vector *se;      /* (p) standard errors; 0 where at_bound */
    gsl_matrix *cov;     /* (p, p) covariance; rows/columns of bound parameters are 0 */
    bool *at_bound;      /* (p) x_j held at 0 by the constraint */
    double rss;          /* residual sum of squares */
    long n;              /* observations */
    int p;               /* parameters */
    int dof;             /* n − (number of free parameters) */
    int iterations;
} nnls_result;

nnls_result *nnls_result_new(int p);
void nnls_result_free(nnls_result *r);           /* NULL is a no-op */

/* Solves min ‖A·x − y‖², x ≥ 0, for A (n, p), y (n). Needs n > p (so a residual
 * variance exists) and finite inputs. Returns 0, or -1 with a one-line reason in err. */
int nnls_solve(const gsl_matrix *A, const gsl_vector *y, nnls_result *out, char *err, int errlen);

/* Numerical rank of A after scaling its columns to unit norm: the number of singular
 * values above 1e-9 of the largest. A fit whose rank is below p cannot separate its
 * parameters, whatever the solver does. Returns -1 on failure (out of memory). */
int nnls_rank(const gsl_matrix *A);

#endif
