/* fit_parts — the parts of the calibration fit (fit/fit.h), one file per level of a trace,
 * and what they share. Private to model/fit*.c.
 *
 *   fit.c          the whole fit: inputs checked, every part on a subset of the traces,
 *                  leave-one-configuration-out validation, the Ernest comparison
 *   fit_rows.c     growing arrays of regression rows, NNLS and robust fits on them
 *   fit_compute.c  step level: c0, c1 (compute steps at T = 1), sigma (T > 1), cv, u
 *   fit_rank.c     a rank's own speed within a run: rank_cv
 *   fit_comm.c     synchronisation level: alpha, beta per topology, the overlap, the
 *                  crowded master's wake
 *   fit_oversub.c  ranks that outnumber the cores: kappa, tau (whole runs' rounds)
 *   fit_run.c      run level: w0, w1 (start-up), run_cv (repeated configurations)
 *
 * Every part function takes the subset of traces to fit and the fit so far, and returns 0
 * (fitted), 1 (the data cannot determine it: fit_missing says why) or -1 (an error in err).
 */
#ifndef SPEEDUP_FIT_PARTS_H
#define SPEEDUP_FIT_PARTS_H

#include "fit/families.h"
#include "fit/fit.h"
#include "fit/nnls.h"
#include "fit/robustfit.h"

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
/* The robust fit of fit/robustfit.h on the rows; relative: noise proportional to each
 * row's level, first the median y of the rows with its features, then (a second fit) its
 * fitted value. 0, or -1 with err. */
int fit_rows_robust(const fit_rows *r, bool relative, robustfit_result *res, char *err, int errlen);
/* The number of distinct feature rows; -1 out of memory. */
long fit_rows_groups(const fit_rows *r);
/* The median of v[0..n) (sorted in place, n ≥ 1) and its standard error √(π/2)·sd/√n
 * (0 for one value). */
void fit_median_se(double *v, long n, double *median, double *se);
int fit_rows_rank(const fit_rows *r);
/* Weighted least squares y ≈ c0·a + c1·b over n rows, weights w (1/σ² of each row): c, the
 * standard errors the weights give ((Xᵀ W X)⁻¹, not scaled by the residual) and the rank
 * (GSL's truncated SVD at 1e-10). 0, or -1 (out of memory, or GSL failed). */
int fit_weighted_two(const double *a, const double *b, const double *y, const double *w, long n, double c[2],
                     double se[2], size_t *rank);

/* ---------------------------------------------------------------------------------- */
/* The fit on one subset of the traces */

typedef struct {
    costmodel_params p;
    calibration_stderr se;
    double cov_c0_c1;             /* s²/example */
    calibration_regression regs[CALIBRATION_MAX_REGRESSIONS];
    int n_regs;
    calibration_note notes[CALIBRATION_MAX_NOTES];
    int n_notes;
    bool uncalibrated[JOB_TOPO_COUNT]; /* no synchronisation of it, no run of it */
    bool compute_with_overlapped; /* c0, c1 had to take steps their all-reduce ran beside */
    bool sigma_unmeasured;        /* no run at T > 1: predictions at T > 1 are refused */
} fit_core;

typedef struct {
    trace *const *tr;
    int n;
    const job_config *skip; /* the configuration left out (all its training runs), or NULL */
    const fit_family *skip_family; /* the family left out (every training run of it), or NULL */
    long main_batch;              /* the plan's own global batch (fit/families.h), with skip_family */
    const fit_options *opts;      /* what the traces cannot tell (fit/fit.h) */
    char missing[1024];           /* what cannot be fitted, "; "-separated */
} fit_subset;

bool fit_is_bench(const trace *t);
/* One configuration: workers, cores, sync, every_n, topology, master, batch_per_worker,
 * examples, batch and epochs all equal. */
bool fit_same_config(const job_config *a, const job_config *b);
/* Notes what cannot be fitted and why (printf-style), "; "-separated. */
void fit_missing(fit_subset *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Trace i is not left out, as a configuration or a family (a benchmark never is). */
bool fit_kept(const fit_subset *s, int i);
/* Trace i is in the subset and is a training run (training) or a benchmark (!training). */
bool fit_used(const fit_subset *s, int i, bool training);
/* Is the term held at 0 in this fit (fit_options.without)? */
bool fit_held(const fit_subset *s, param_id id);
/* Records a regression's quality (rss in seconds², over every point); NULL when full. */
calibration_regression *fit_add_reg(fit_core *f, const char *name, const char *method, long points, int dof,
                                    double rss);
void fit_add_robust_reg(fit_core *f, const char *name, const robustfit_result *res, bool relative);
/* A note on parameter param (printf-style): what its value means (calibration_note). */
void fit_note(fit_core *f, const char *param, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The parameters alone of traces[0..n) (every part, no run list, no validation, no
 * Ernest): what fit/rounds.h refits each round with. 0, or -1 with err when the traces
 * cannot determine them or give an unusable one. */
int fit_parameters(trace *const *traces, int n, const fit_options *o, costmodel_params *out, char *err, int errlen);

int fit_compute(fit_subset *s, fit_core *f, char *err, int errlen);
/* σ is the median run's from this many runs at T > 1 on (a plan has six), the pooled mean
 * of their steps below it (a round fitted alone has two); at most FIT_SIGMA_MAX_RUNS runs. */
#define FIT_SIGMA_MEDIAN_RUNS 3
#define FIT_SIGMA_MAX_RUNS 1024
int fit_sigma(fit_subset *s, fit_core *f, char *err, int errlen);      /* after fit_compute */
int fit_cv(fit_subset *s, fit_core *f, char *err, int errlen);
int fit_update(fit_subset *s, fit_core *f, char *err, int errlen);
int fit_rank_cv(fit_subset *s, fit_core *f, char *err, int errlen);   /* fit_rank.c, after fit_cv */
/* 2 when no trace synchronises through topo and no training run uses it (nothing to fit,
 * nothing asked: fit.c decides), and nothing noted then. */
int fit_comm(fit_subset *s, fit_core *f, job_topology topo, char *err, int errlen);
/* fit_comm's missing-data message for a topology with no synchronisations at all. */
void fit_comm_absent(fit_subset *s, job_topology topo);
int fit_overlap(fit_subset *s, fit_core *f, char *err, int errlen);
int fit_oversub(fit_subset *s, fit_core *f, char *err, int errlen);    /* after fit_comm, fit_update, fit_cv */
int fit_master_yield(fit_subset *s, fit_core *f, char *err, int errlen); /* after fit_sigma, fit_oversub */
/* y's standard error where no run measured it (it is then 1: fit_master_yield). */
#define FIT_MASTER_YIELD_UNMEASURED_SE 0.5
int fit_master_wake(fit_subset *s, fit_core *f, char *err, int errlen);  /* after fit_comm of both topologies */
int fit_startup(fit_subset *s, fit_core *f, char *err, int errlen);
int fit_run_cv(fit_subset *s, fit_core *f, char *err, int errlen);

#endif
