#include "fit/nnls.h"

#include "util/errmsg.h"

#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

nnls_result *nnls_result_new(int p) {
    if (p < 1)
        return NULL;
    nnls_result *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->p = p;
    r->x = gsl_vector_calloc((size_t)p);
    r->se = gsl_vector_calloc((size_t)p);
    r->cov = gsl_matrix_calloc((size_t)p, (size_t)p);
    r->at_bound = calloc((size_t)p, sizeof *r->at_bound);
    if (!r->x || !r->se || !r->cov || !r->at_bound) {
        nnls_result_free(r);
        return NULL;
    }
    return r;
}

void nnls_result_free(nnls_result *r) {
    if (!r)
        return;
    if (r->x)
        gsl_vector_free(r->x);
    if (r->se)
        gsl_vector_free(r->se);
    if (r->cov)
        gsl_matrix_free(r->cov);
    free(r->at_bound);
    free(r);
}

/* ---------------------------------------------------------------------------------- */
/* The unconstrained solve on the passive columns: GSL does the least squares. */

typedef struct {
    const gsl_matrix *A;   /* (n, p) column-scaled design */
    const gsl_vector *y;   /* (n) */
    const bool *passive;   /* (p) */
} passive_problem;

/* s (p) gets the least-squares solution on the passive columns and 0 elsewhere; cov
 * (p, p), when not NULL, GSL's covariance on the passive block and 0 elsewhere. */
static int solve_passive(const passive_problem *pp, gsl_vector *s, gsl_matrix *cov, double *rss) {
    size_t n = pp->A->size1, p = pp->A->size2, k = 0;
    for (size_t j = 0; j < p; j++)
        k += pp->passive[j];
    gsl_vector_set_zero(s);
    if (cov)
        gsl_matrix_set_zero(cov);
    if (k == 0) {
        double yy;
        gsl_blas_ddot(pp->y, pp->y, &yy);
        *rss = yy;
        return GSL_SUCCESS;
    }
    gsl_matrix *Ap = gsl_matrix_alloc(n, k);    /* (n, k) passive columns */
    gsl_vector *c = gsl_vector_alloc(k);
    gsl_matrix *ck = gsl_matrix_alloc(k, k);
    gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(n, k);
    int status = GSL_ENOMEM;
    if (Ap && c && ck && w) {
        for (size_t j = 0, col = 0; j < p; j++)
            if (pp->passive[j]) {
                gsl_vector_const_view from = gsl_matrix_const_column(pp->A, j);
                gsl_matrix_set_col(Ap, col++, &from.vector);
            }
        status = gsl_multifit_linear(Ap, pp->y, c, ck, rss, w);
        if (status == GSL_SUCCESS)
            for (size_t j = 0, a = 0; j < p; j++) {
                if (!pp->passive[j])
                    continue;
                gsl_vector_set(s, j, gsl_vector_get(c, a));
                if (cov)
                    for (size_t i = 0, b = 0; i < p; i++)
                        if (pp->passive[i])
                            gsl_matrix_set(cov, j, i, gsl_matrix_get(ck, a, b++));
                a++;
            }
    }
    if (w)
        gsl_multifit_linear_free(w);
    if (ck)
        gsl_matrix_free(ck);
    if (c)
        gsl_vector_free(c);
    if (Ap)
        gsl_matrix_free(Ap);
    return status;
}

/* w = Aᵀ(y − A·x): the negative gradient; w_j > 0 means raising x_j lowers the residual. */
static void gradient(const gsl_matrix *A, const gsl_vector *y, const gsl_vector *x, gsl_vector *r, gsl_vector *w) {
    gsl_vector_memcpy(r, y);
    gsl_blas_dgemv(CblasNoTrans, -1.0, A, x, 1.0, r);
    gsl_blas_dgemv(CblasTrans, 1.0, A, r, 0.0, w);
}

/* ---------------------------------------------------------------------------------- */
/* Lawson–Hanson */

static int active_set(const passive_problem *pp, bool *passive, gsl_vector *x, gsl_vector *s,
                      gsl_vector *r, gsl_vector *w, bool *skip, int *iterations) {
    size_t p = x->size;
    /* The tolerance scipy's nnls uses: a gradient this small is rounding noise. */
    double tol = 10.0 * DBL_EPSILON * (double)(pp->A->size1 > p ? pp->A->size1 : p);
    int max_iter = 3 * (int)p + 10;
    double rss;
    gsl_vector_set_zero(x);
    for (size_t j = 0; j < p; j++)
        passive[j] = skip[j] = false;
    gradient(pp->A, pp->y, x, r, w);
    for (*iterations = 0; *iterations < max_iter; (*iterations)++) {
        size_t t = p;
        for (size_t j = 0; j < p; j++)
            if (!passive[j] && !skip[j] && gsl_vector_get(w, j) > tol &&
                (t == p || gsl_vector_get(w, j) > gsl_vector_get(w, t)))
                t = j;
        if (t == p)
            return GSL_SUCCESS;              /* Kuhn–Tucker conditions hold */
        passive[t] = true;
        bool first = true;
        for (;;) {
            int status = solve_passive(pp, s, NULL, &rss);
            if (status != GSL_SUCCESS)
                return status;
            if (first && gsl_vector_get(s, t) <= 0) {
                /* Rounding made the column look useful; the solve disagrees. Leave it
                 * out until x changes, as Lawson–Hanson's safeguard does. */
                passive[t] = false;
                skip[t] = true;
                break;
            }
            first = false;
            double alpha = 1.0;
            bool feasible = true;
            for (size_t j = 0; j < p; j++)
                if (passive[j] && gsl_vector_get(s, j) <= 0) {
                    double xj = gsl_vector_get(x, j);
                    double a = xj / (xj - gsl_vector_get(s, j));
                    feasible = false;
                    if (a < alpha)
                        alpha = a;
                }
            if (feasible) {
                gsl_vector_memcpy(x, s);
                for (size_t j = 0; j < p; j++)
                    skip[j] = false;
                break;
            }
            /* Step towards s until the first passive coordinate hits 0; drop those. */
            for (size_t j = 0; j < p; j++) {
                if (!passive[j])
                    continue;
                double xj = gsl_vector_get(x, j) + alpha * (gsl_vector_get(s, j) - gsl_vector_get(x, j));
                if (xj <= tol * fabs(gsl_vector_get(x, j)) || xj <= 0) {
                    xj = 0;
                    passive[j] = false;
                }
                gsl_vector_set(x, j, xj);
            }
            for (size_t j = 0; j < p; j++)
                skip[j] = false;
        }
        gradient(pp->A, pp->y, x, r, w);
    }
    return GSL_EMAXITER;
}

int nnls_solve(const gsl_matrix *A, const gsl_vector *y, nnls_result *out, char *err, int errlen) {
    size_t n = A->size1, p = A->size2;
    if (!out || out->p != (int)p)
        return errmsg_set(err, errlen, "nnls: result sized for %d parameters, the design has %zu", out ? out->p : 0, p);
    if (y->size != n)
        return errmsg_set(err, errlen, "nnls: %zu observations but %zu rows in the design", y->size, n);
    if (n <= p)
        return errmsg_set(err, errlen, "nnls: %zu observations cannot fit %zu parameters with a standard error (need more than %zu)", n, p, p);
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(gsl_vector_get(y, i)))
            return errmsg_set(err, errlen, "nnls: observation %zu is not a finite number", i);
        for (size_t j = 0; j < p; j++)
            if (!isfinite(gsl_matrix_get(A, i, j)))
                return errmsg_set(err, errlen, "nnls: design entry (%zu, %zu) is not a finite number", i, j);
    }
    gsl_error_handler_t *old = gsl_set_error_handler_off();

    gsl_matrix *As = gsl_matrix_alloc(n, p);          /* (n, p) columns scaled to norm 1 */
    gsl_vector *scale = gsl_vector_alloc(p);
    gsl_vector *x = gsl_vector_alloc(p), *s = gsl_vector_alloc(p), *w = gsl_vector_alloc(p);
    gsl_vector *r = gsl_vector_alloc(n);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    bool *passive = calloc(p, sizeof *passive), *skip = calloc(p, sizeof *skip);
    int rc = -1;
    if (!As || !scale || !x || !s || !w || !r || !cov || !passive || !skip) {
        errmsg_set(err, errlen, "nnls: out of memory");
        goto done;
    }
    gsl_matrix_memcpy(As, A);
    for (size_t j = 0; j < p; j++) {
        gsl_vector_view col = gsl_matrix_column(As, j);
        double norm = gsl_blas_dnrm2(&col.vector);
        /* An all-zero column carries no information; it stays at 0 (w_j = 0). */
        gsl_vector_set(scale, j, norm > 0 ? norm : 1.0);
        gsl_vector_scale(&col.vector, 1.0 / gsl_vector_get(scale, j));
    }
    passive_problem pp = { As, y, passive };
    int status = active_set(&pp, passive, x, s, r, w, skip, &out->iterations);
    double rss = 0;
    if (status == GSL_SUCCESS)
        status = solve_passive(&pp, s, cov, &rss);
    if (status != GSL_SUCCESS) {
        errmsg_set(err, errlen, "nnls: %s", status == GSL_EMAXITER ? "the active set did not settle (degenerate design)"
                                                              : gsl_strerror(status));
        goto done;
    }
    int free_params = 0;
    for (size_t j = 0; j < p; j++)
        free_params += passive[j];
    for (size_t j = 0; j < p; j++) {
        double sj = gsl_vector_get(scale, j);
        /* The final passive solve is the unconstrained fit on the free columns; it is
         * positive there (Kuhn–Tucker), and x is exactly 0 elsewhere. */
        double xj = passive[j] ? gsl_vector_get(s, j) / sj : 0.0;
        gsl_vector_set(out->x, j, xj > 0 ? xj : 0.0);
        out->at_bound[j] = !passive[j];
        for (size_t i = 0; i < p; i++)
            gsl_matrix_set(out->cov, j, i, gsl_matrix_get(cov, j, i) / (sj * gsl_vector_get(scale, i)));
        double var = gsl_matrix_get(out->cov, j, j);
        gsl_vector_set(out->se, j, passive[j] && var > 0 ? sqrt(var) : 0.0);
    }
    out->rss = rss;
    out->n = (long)n;
    out->dof = (int)n - free_params;
    rc = 0;
done:
    gsl_set_error_handler(old);
    free(skip);
    free(passive);
    if (cov)
        gsl_matrix_free(cov);
    if (r)
        gsl_vector_free(r);
    if (w)
        gsl_vector_free(w);
    if (s)
        gsl_vector_free(s);
    if (x)
        gsl_vector_free(x);
    if (scale)
        gsl_vector_free(scale);
    if (As)
        gsl_matrix_free(As);
    return rc;
}

int nnls_rank(const gsl_matrix *A) {
    size_t n = A->size1, p = A->size2;
    /* GSL's SVD wants rows ≥ columns; rank(A) = rank(Aᵀ). */
    bool tr = n < p;
    size_t rows = tr ? p : n, cols = tr ? n : p;
    gsl_matrix *U = gsl_matrix_alloc(rows, cols);
    gsl_matrix *V = gsl_matrix_alloc(cols, cols);
    gsl_vector *sv = gsl_vector_alloc(cols), *work = gsl_vector_alloc(cols);
    int rank = -1;
    if (U && V && sv && work) {
        for (size_t j = 0; j < p; j++) {
            gsl_vector_const_view col = gsl_matrix_const_column(A, j);
            double norm = gsl_blas_dnrm2(&col.vector);
            for (size_t i = 0; i < n; i++) {
                double v = norm > 0 ? gsl_matrix_get(A, i, j) / norm : 0.0;
                if (tr)
                    gsl_matrix_set(U, j, i, v);
                else
                    gsl_matrix_set(U, i, j, v);
            }
        }
        gsl_error_handler_t *old = gsl_set_error_handler_off();
        if (gsl_linalg_SV_decomp(U, V, sv, work) == GSL_SUCCESS) {
            double top = gsl_vector_get(sv, 0);
            rank = 0;
            for (size_t j = 0; j < cols; j++)
                rank += top > 0 && gsl_vector_get(sv, j) > 1e-9 * top;
        }
        gsl_set_error_handler(old);
    }
    if (work)
        gsl_vector_free(work);
    if (sv)
        gsl_vector_free(sv);
    if (V)
        gsl_matrix_free(V);
    if (U)
        gsl_matrix_free(U);
    return rank;
}
