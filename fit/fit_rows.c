/* fit_rows — regression rows, NNLS and robust fits on them (see fit_parts.h). */
#include "fit/fit_parts.h"

#include "util/errmsg.h"

#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int fit_rows_push(fit_rows *r, const double *x, double y) {
    if (r->n == r->cap) {
        long cap = r->cap ? 2 * r->cap : 256;
        double *nx = realloc(r->x, sizeof *nx * (size_t)(cap * r->cols));
        if (!nx)
            return -1;
        r->x = nx;
        double *ny = realloc(r->y, sizeof *ny * (size_t)cap);
        if (!ny)
            return -1;
        r->y = ny;
        r->cap = cap;
    }
    memcpy(r->x + r->n * r->cols, x, sizeof *x * (size_t)r->cols);
    r->y[r->n++] = y;
    return 0;
}

void fit_rows_free(fit_rows *r) {
    free(r->x);
    free(r->y);
}

/* NNLS on the rows; nothing allocated survives a failure. */
nnls_result *fit_rows_nnls(const fit_rows *r, char *err, int errlen) {
    gsl_matrix_const_view A = gsl_matrix_const_view_array(r->x, (size_t)r->n, (size_t)r->cols);
    gsl_vector_const_view y = gsl_vector_const_view_array(r->y, (size_t)r->n);
    nnls_result *res = nnls_result_new(r->cols);
    if (!res) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    if (nnls_solve(&A.matrix, &y.vector, res, err, errlen)) {
        nnls_result_free(res);
        return NULL;
    }
    return res;
}

/* Each row's level: the median y of the rows with its features; NULL out of memory. */
static double *levels(const fit_rows *r, long *groups) {
    double *level = malloc(sizeof *level * (size_t)(r->n + 1));
    *groups = level ? robustfit_group_levels(r->x, r->y, r->n, r->cols, level) : -1;
    if (*groups < 0) {
        free(level);
        return NULL;
    }
    return level;
}

long fit_rows_groups(const fit_rows *r) {
    long groups;
    free(levels(r, &groups));
    return groups;
}

/* Every level at least 1e-9 of the largest (a group of zero-length spans has no scale of
 * its own); -1 when every level is 0. */
static int floor_levels(double *level, long n) {
    double top = 0;
    for (long i = 0; i < n; i++)
        top = fmax(top, level[i]);
    for (long i = 0; i < n; i++)
        level[i] = fmax(level[i], 1e-9 * top);
    return top > 0 ? 0 : -1;
}

int fit_rows_robust(const fit_rows *r, bool relative, robustfit_result *res, char *err, int errlen) {
    if (!relative)
        return robustfit_solve(r->x, r->y, NULL, r->n, r->cols, res, err, errlen);
    long groups;
    double *level = levels(r, &groups);
    if (!level)
        return errmsg_set(err, errlen, "out of memory");
    int rc = floor_levels(level, r->n) ? errmsg_set(err, errlen, "every span is 0 s: nothing to fit")
                                       : robustfit_solve(r->x, r->y, level, r->n, r->cols, res, err, errlen);
    /* Again with each row's fitted value as its level: the median of a group of two is their
     * mean, which one preempted span drags up, and the whole group with it. */
    for (long i = 0; rc == 0 && i < r->n; i++) {
        level[i] = 0;
        for (int j = 0; j < r->cols; j++)
            level[i] += r->x[i * r->cols + j] * res->c[j];
    }
    if (rc == 0 && floor_levels(level, r->n) == 0)
        rc = robustfit_solve(r->x, r->y, level, r->n, r->cols, res, err, errlen);
    free(level);
    return rc;
}

int fit_rows_rank(const fit_rows *r) {
    gsl_matrix_const_view A = gsl_matrix_const_view_array(r->x, (size_t)r->n, (size_t)r->cols);
    return nnls_rank(&A.matrix);
}

void fit_median_se(double *v, long n, double *median, double *se) {
    gsl_sort(v, 1, (size_t)n);
    *median = gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
    *se = n > 1 ? 1.2533141373155003 /* √(π/2) */ * gsl_stats_sd(v, 1, (size_t)n) / sqrt((double)n) : 0.0;
}

int fit_weighted_two(const double *a, const double *b, const double *y, const double *w, long n, double c[2],
                     double se[2], size_t *rank) {
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, 2), *cov = gsl_matrix_alloc(2, 2);
    gsl_vector *Y = gsl_vector_alloc((size_t)n), *W = gsl_vector_alloc((size_t)n), *cv = gsl_vector_alloc(2);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, 2);
    int rc = X && cov && Y && W && cv && ws ? 0 : -1;
    if (rc == 0) {
        for (long i = 0; i < n; i++) {
            gsl_matrix_set(X, (size_t)i, 0, a[i]);
            gsl_matrix_set(X, (size_t)i, 1, b[i]);
            gsl_vector_set(Y, (size_t)i, y[i]);
            gsl_vector_set(W, (size_t)i, w[i]);
        }
        double chisq;
        rc = gsl_multifit_wlinear_tsvd(X, W, Y, 1e-10, cv, cov, &chisq, rank, ws) ? -1 : 0;
    }
    for (int j = 0; j < 2 && rc == 0; j++) {
        c[j] = gsl_vector_get(cv, (size_t)j);
        se[j] = sqrt(gsl_matrix_get(cov, (size_t)j, (size_t)j));
    }
    gsl_multifit_linear_free(ws);
    gsl_vector_free(cv);
    gsl_vector_free(W);
    gsl_vector_free(Y);
    gsl_matrix_free(cov);
    gsl_matrix_free(X);
    return rc;
}
