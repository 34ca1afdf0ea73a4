/* robustfit — robust non-negative regression (see robustfit.h). */
#include "fit/robustfit.h"

#include "util/errmsg.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* One robust fit on the free columns */

typedef struct {
    const double *x, *y, *level;  /* (n, p), (n), (n) or NULL */
    long n;
    int p;
} problem;

/* GSL's default is 100 reweightings; a few thousand rows converge in far fewer, and a
 * fit that has not settled by this many will not. */
#define ROBUSTFIT_MAXITER 1000

/* Fits on the columns with free[j], the others at 0: c, cov (p, p) and the rows weighted 0.
 * Returns a GSL status (GSL_EMAXITER: the iterations did not settle). */
static int fit_free(const problem *pb, const bool *free_col, const gsl_multifit_robust_type *type,
                    robustfit_result *out) {
    size_t n = (size_t)pb->n, k = 0;
    int col[ROBUSTFIT_MAX_P];
    for (int j = 0; j < pb->p; j++)
        if (free_col[j])
            col[k++] = j;
    memset(out->c, 0, sizeof out->c);
    memset(out->cov, 0, sizeof out->cov);
    out->outliers = 0;
    if (k == 0)
        return GSL_SUCCESS;
    gsl_matrix *X = gsl_matrix_alloc(n, k), *cov = gsl_matrix_alloc(k, k);   /* (n, k), (k, k) */
    gsl_vector *y = gsl_vector_alloc(n), *c = gsl_vector_alloc(k);
    gsl_multifit_robust_workspace *w = gsl_multifit_robust_alloc(type, n, k);
    int status = GSL_ENOMEM;
    if (w)
        gsl_multifit_robust_maxiter(ROBUSTFIT_MAXITER, w);
    if (X && cov && y && c && w) {
        for (size_t i = 0; i < n; i++) {
            double s = pb->level ? pb->level[i] : 1.0;
            for (size_t a = 0; a < k; a++)
                gsl_matrix_set(X, i, a, pb->x[i * (size_t)pb->p + (size_t)col[a]] / s);
            gsl_vector_set(y, i, pb->y[i] / s);
        }
        status = gsl_multifit_robust(X, y, c, cov, w);
        if (status == GSL_SUCCESS) {
            for (size_t a = 0; a < k; a++) {
                out->c[col[a]] = gsl_vector_get(c, a);
                for (size_t b = 0; b < k; b++)
                    out->cov[col[a]][col[b]] = gsl_matrix_get(cov, a, b);
            }
            gsl_multifit_robust_stats st = gsl_multifit_robust_statistics(w);
            for (size_t i = 0; i < n; i++)
                out->outliers += gsl_vector_get(st.weights, i) == 0.0;
        }
    }
    if (w)
        gsl_multifit_robust_free(w);
    if (c)
        gsl_vector_free(c);
    if (y)
        gsl_vector_free(y);
    if (cov)
        gsl_matrix_free(cov);
    if (X)
        gsl_matrix_free(X);
    return status;
}

/* The active-set loop: fit, fix the most negative coefficient (in standard errors) at 0,
 * fit again, until none is negative. */
static int fit_nonnegative(const problem *pb, const gsl_multifit_robust_type *type, robustfit_result *out) {
    bool free_col[ROBUSTFIT_MAX_P];
    for (int j = 0; j < pb->p; j++)
        free_col[j] = true;
    for (;;) {
        int status = fit_free(pb, free_col, type, out);
        if (status != GSL_SUCCESS)
            return status;
        int worst = -1;
        double worst_t = 0;
        for (int j = 0; j < pb->p; j++) {
            double var = out->cov[j][j], t = out->c[j] / (var > 0 ? sqrt(var) : 1.0);
            if (free_col[j] && out->c[j] < 0 && (worst < 0 || t < worst_t)) {
                worst = j;
                worst_t = t;
            }
        }
        if (worst < 0)
            break;
        free_col[worst] = false;
    }
    int n_free = 0;
    for (int j = 0; j < pb->p; j++) {
        out->at_bound[j] = !free_col[j];
        n_free += free_col[j];
        out->se[j] = free_col[j] && out->cov[j][j] > 0 ? sqrt(out->cov[j][j]) : 0.0;
    }
    out->dof = (int)(pb->n - n_free);
    return GSL_SUCCESS;
}

static int check_inputs(const problem *pb, char *err, int errlen) {
    if (pb->p < 1 || pb->p > ROBUSTFIT_MAX_P)
        return errmsg_set(err, errlen, "robust fit: %d coefficients (1 to %d)", pb->p, ROBUSTFIT_MAX_P);
    if (pb->n <= pb->p)
        return errmsg_set(err, errlen, "robust fit: %ld observations cannot fit %d coefficients with a standard "
                          "error (need more than %d)", pb->n, pb->p, pb->p);
    for (long i = 0; i < pb->n; i++) {
        if (!isfinite(pb->y[i]))
            return errmsg_set(err, errlen, "robust fit: observation %ld is not a finite number", i);
        if (pb->level && !(pb->level[i] > 0 && isfinite(pb->level[i])))
            return errmsg_set(err, errlen, "robust fit: the level of observation %ld is %g, not a positive number",
                              i, pb->level[i]);
        for (int j = 0; j < pb->p; j++)
            if (!isfinite(pb->x[i * pb->p + j]))
                return errmsg_set(err, errlen, "robust fit: design entry (%ld, %d) is not a finite number", i, j);
    }
    return 0;
}

int robustfit_solve(const double *x, const double *y, const double *level, long n, int p, robustfit_result *out,
                    char *err, int errlen) {
    problem pb = { x, y, level, n, p };
    memset(out, 0, sizeof *out);
    if (check_inputs(&pb, err, errlen))
        return -1;
    out->p = p;
    out->n = n;
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    out->method = "bisquare";
    int status = fit_nonnegative(&pb, gsl_multifit_robust_bisquare, out);
    if (status == GSL_EMAXITER) {
        out->method = "huber";
        status = fit_nonnegative(&pb, gsl_multifit_robust_huber, out);
    }
    if (status == GSL_EMAXITER) {
        out->method = "ols";
        status = fit_nonnegative(&pb, gsl_multifit_robust_ols, out);
    }
    gsl_set_error_handler(old);
    if (status != GSL_SUCCESS)
        return errmsg_set(err, errlen, "robust fit: %s", gsl_strerror(status));
    for (long i = 0; i < n; i++) {
        double e = y[i];
        for (int j = 0; j < p; j++)
            e -= x[i * p + j] * out->c[j];
        out->rss += e * e;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Levels */

typedef struct {
    const double *x;   /* the row's features */
    int p;
    double y;
    long row;
} keyed;

static int features_cmp(const keyed *u, const keyed *v) {
    for (int j = 0; j < u->p; j++)
        if (u->x[j] != v->x[j])
            return (u->x[j] > v->x[j]) - (u->x[j] < v->x[j]);
    return 0;
}

/* By features, then y: each group's y come out sorted for the median. */
static int by_features_then_y(const void *a, const void *b) {
    const keyed *u = a, *v = b;
    int c = features_cmp(u, v);
    return c ? c : (u->y > v->y) - (u->y < v->y);
}

long robustfit_group_levels(const double *x, const double *y, long n, int p, double *level) {
    keyed *v = malloc(sizeof *v * (size_t)(n + 1));
    double *ys = malloc(sizeof *ys * (size_t)(n + 1));
    if (!v || !ys) {
        free(v);
        free(ys);
        return -1;
    }
    for (long i = 0; i < n; i++)
        v[i] = (keyed){ x + i * p, p, y[i], i };
    qsort(v, (size_t)n, sizeof *v, by_features_then_y);
    long groups = 0;
    for (long a = 0, b; a < n; a = b, groups++) {
        for (b = a; b < n && features_cmp(&v[b], &v[a]) == 0; b++)
            ys[b - a] = v[b].y;
        double median = gsl_stats_median_from_sorted_data(ys, 1, (size_t)(b - a));
        for (long i = a; i < b; i++)
            level[v[i].row] = median;
    }
    free(v);
    free(ys);
    return groups;
}
