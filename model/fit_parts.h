/* fit_parts — the parts of the calibration fit (model/fit.h), one file per level of a trace,
 * and what they share. Private to model/fit*.c.
 *
 *   fit.c          the whole fit: inputs checked, every part on a subset of the traces,
 *                  leave-one-out validation, the Ernest comparison
 *   fit_rows.c     growing arrays of regression rows and NNLS on them
 *   fit_compute.c  step level: c0, c1 (compute steps at T = 1), sigma (T > 1), cv
 *   fit_comm.c     synchronisation level: alpha, beta per topology
 *   fit_run.c      run level: w0, w1 (start-up)
 *
 * Every part function takes the subset of traces to fit and the fit so far, and returns 0
 * (fitted), 1 (the data cannot determine it: fit_missing says why) or -1 (an error in err).
 */
#ifndef SPEEDUP_FIT_PARTS_H
#define SPEEDUP_FIT_PARTS_H

#include "model/fit.h"
#include "model/nnls.h"

#include <stdbool.h>

/* ---------------------------------------------------------------------------------- */
/* Regression rows */

typedef struct {
    double *x;     /* (n, cols) row-major */
    double *y;     /* (n) */
    long n, cap;
    int cols;
} fit_rows;

int fit_rows_push(fit_rows *r, const double *x, double y);   /* 0, or -1 out of memory */
void fit_rows_free(fit_rows *r);
/* NNLS on the rows; NULL with err on failure. */
nnls_result *fit_rows_nnls(const fit_rows *r, char *err, int errlen);
/* The same for noise proportional to the signal (see fit_rows.c). */
nnls_result *fit_rows_nnls_relative(const fit_rows *r, char *err, int errlen);
int fit_rows_rank(const fit_rows *r);

/* ---------------------------------------------------------------------------------- */
/* The fit on one subset of the traces */

typedef struct {
    costmodel_params p;
    calibration_stderr se;
    calibration_regression regs[CALIBRATION_MAX_REGRESSIONS];
    int n_regs;
} fit_core;

typedef struct {
    trace *const *tr;
    int n;
    int skip;                     /* the run left out, or -1 */
    char missing[1024];           /* what cannot be fitted, "; "-separated */
} fit_subset;

bool fit_is_bench(const trace *t);
/* Notes what cannot be fitted and why (printf-style), "; "-separated. */
void fit_missing(fit_subset *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trace i is in the subset and is a training run (training) or a benchmark (!training). */
bool fit_used(const fit_subset *s, int i, bool training);
void fit_add_reg(fit_core *f, const char *name, long points, int dof, double rss);

int fit_compute(fit_subset *s, fit_core *f, double *cov01, char *err, int errlen);
int fit_sigma(fit_subset *s, fit_core *f, double cov01, char *err, int errlen);
int fit_cv(fit_subset *s, fit_core *f, char *err, int errlen);
int fit_comm(fit_subset *s, fit_core *f, costmodel_topology topo, char *err, int errlen);
int fit_startup(fit_subset *s, fit_core *f, char *err, int errlen);

#endif
