/* fit_rows — regression rows and NNLS on them (see fit_parts.h). */
#include "model/fit_parts.h"

#include "util/errmsg.h"

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

/* NNLS for noise proportional to the signal (step and message times spread by a fixed
 * fraction, not a fixed number of seconds): an ordinary fit, then the fit again with
 * every row divided by its fitted value, so that long spans do not pass for precise
 * ones and the standard errors follow the relative scatter. rss is then recomputed in
 * seconds². */
nnls_result *fit_rows_nnls_relative(const fit_rows *r, char *err, int errlen) {
    nnls_result *first = fit_rows_nnls(r, err, errlen);
    if (!first)
        return NULL;
    fit_rows w = { .cols = r->cols };
    double top = 0, *fitted = malloc(sizeof *fitted * (size_t)r->n);
    if (!fitted) {
        nnls_result_free(first);
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    for (long i = 0; i < r->n; i++) {
        fitted[i] = 0;
        for (int j = 0; j < r->cols; j++)
            fitted[i] += r->x[i * r->cols + j] * gsl_vector_get(first->x, (size_t)j);
        top = fmax(top, fitted[i]);
    }
    nnls_result_free(first);
    nnls_result *res = NULL;
    for (long i = 0; i < r->n; i++) {
        double x[8], f = fmax(fitted[i], 1e-9 * top);
        for (int j = 0; j < r->cols; j++)
            x[j] = r->x[i * r->cols + j] / f;
        if (!(f > 0) || fit_rows_push(&w, x, r->y[i] / f)) {
            errmsg_set(err, errlen, !(f > 0) ? "every fitted value is 0: nothing to weight by" : "out of memory");
            goto done;
        }
    }
    res = fit_rows_nnls(&w, err, errlen);
    if (res) {
        res->rss = 0;
        for (long i = 0; i < r->n; i++) {
            double e = r->y[i];
            for (int j = 0; j < r->cols; j++)
                e -= r->x[i * r->cols + j] * gsl_vector_get(res->x, (size_t)j);
            res->rss += e * e;
        }
    }
done:
    free(fitted);
    fit_rows_free(&w);
    return res;
}

int fit_rows_rank(const fit_rows *r) {
    gsl_matrix_const_view A = gsl_matrix_const_view_array(r->x, (size_t)r->n, (size_t)r->cols);
    return nnls_rank(&A.matrix);
}
