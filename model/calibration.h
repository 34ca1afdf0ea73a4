/* calibration — the calibration.json file between model/ and sim/ (DESIGN.md).
 *
 *   { "format": "speedup-calibration", "version": 1,
 *     "host": { "name": "...", "cores": 2 },
 *     "workload": { "examples": 60000, "batch": 32, "epochs": 5 },          (optional)
 *     "params": { "c0": {"value": v, "stderr": e, "unit": "s"}, "c1": {...},
 *                 "sigma", "alpha_ps", "beta_ps", "alpha_allreduce", "beta_allreduce",
 *                 "model_bytes", "w0", "w1", "cv", "run_cv", "host_cores", "update",
 *                 "run_cv_oversub", "startup_cpu", "startup_per_example", "oversub_compute", "balance",
 *                 "model_cv", "master_yield", "master_yield_loss", "master_wake", "overlap",
 *                 "overlap_slowdown", "overlap_exposed", "waits_block" },
 *                           (run_cv, update and every one after it optional on reading: 0;
 *                           earlier files' "oversub_sync" is not read)
 *     "cov_c0_c1": v,       (s²/example; optional: 0; c0 and c1 are drawn jointly)
 *     "uncalibrated_topologies": ["ps"],  (optional: none) topologies the traces held no
 *                           synchronisation of: their alpha, beta are 0 placeholders, and
 *                           a prediction for them needs --latency and --bandwidth
 *     "memory": { "base": {"value": v, "stderr": e, "unit": "byte"}, "peer", "thread",
 *                 "allreduce_scratch", "fwd_bytes_per_example", "train_bytes_per_example",
 *                 "workspace", "workspace_per_thread", "example_bytes", "test_examples",
 *                 "master_extra", "master_models_per_worker", "master_example_bytes",
 *                 "sharded_data": false,
 *                 "fit": {"points": n, "rms_bytes": r, "worst_rel_error": w} }
 *                           (optional: model/memory.h's parameters; absent: memory unknown)
 *     "efficiency": { "workload": {...}, "chance": c, "params": {"plateau", "log_x0",
 *                     "power", "w", "gamma"}, "cov": [[...]], "noise": {...}, ... }
 *                           (optional: model/efficiency.h's accuracy-curve fit, in the format
 *                           of model/calibration_efficiency.h; absent: no time to accuracy)
 *     "source": "table FILE.csv",  (optional: "" = traces) what the fit read
 *     "range": {"workers": K, "machines": M},  (optional) the largest run measured: a
 *                           prediction beyond it extrapolates (marked where it is shown)
 *     "runs": [...], "fit": {...}, "validation": {...} }                    (free-form)
 *
 * Every listed parameter is required, with a finite non-negative "value"; "stderr" and
 * "unit" are informative. Two spreads: "cv" is within a run (one step's time against the
 * run's other steps of its size: the straggler term), "run_cv" between runs (the log-normal
 * σ of a whole run's speed factor, from configurations run more than once: the host's
 * run-to-run noise, one draw per run; 0 when none was repeated, with a note saying the
 * spread is unknown). "update" is u, one optimizer update of the whole model on one core
 * (0 with a note when the traces record no update apart). Writing goes to a temporary file
 * renamed into place.
 *
 * What calibration_write puts in the free-form parts (calibration_read ignores them):
 *   params.NAME.note       the fit's note on NAME when it has one (calibration_fit.notes);
 *                          else, when the standard error is 0: "at the bound 0 ..." (a
 *                          parameter held at 0: a one-sided, zero-width interval), "clamped
 *                          to 1" (sigma), or "from the run header" (model_bytes, host_cores)
 *   "runs": [{"trace": "...", "workers": K, "cores": T, "sync": "...", "topology": "...",
 *             "master": "...", "examples": D, "batch": B, "epochs": E,
 *             "measured_s": t, "loo_model_s": t|null, "loo_ernest_s": t|null,
 *             "loo_note": "why not refit" (only when a prediction is null)}]
 *   "fit": {"regressions": [{"name": "compute", "method": "robust bisquare, relative noise",
 *                            "points": n, "dof": d, "rms_s": r, "outliers": k}, ...],
 *           "ernest": {"form": "T = theta0 + theta1*work/K + theta2*log2(K) + theta3*K",
 *                      "theta": [...], "stderr": [...]}  (absent when too few runs)}
 *   "validation": {"method": "leave-one-configuration-out", "configurations": c, "runs": n,
 *                  "model": {"median_rel_error": e, "worst_rel_error": e},
 *                  "ernest": {...}, "runs_ernest": n}
 */
#ifndef SPEEDUP_CALIBRATION_H
#define SPEEDUP_CALIBRATION_H

#include "model/costmodel.h"
#include "model/efficiency.h"
#include "model/memory.h"
#include "model/params.h"

#include <stdbool.h>

#define CALIBRATION_FORMAT "speedup-calibration"
#define CALIBRATION_VERSION 1

typedef struct {
    costmodel_params params;
    calibration_stderr stderr_;
    double cov_c0_c1;             /* covariance of the c0 and c1 estimates (s²/example) */
    bool has_workload;            /* the file named the workload it was measured on */
    long examples, batch;
    int epochs;
    char host[128];
    bool uncalibrated[JOB_TOPO_COUNT]; /* no synchronisation of that topology measured */
    int range_workers, range_machines; /* the most workers and machines a measured run had
                                          ("range"; 0: not recorded): beyond, a prediction
                                          extrapolates */
    char source[256];             /* what it was fitted from ("source"; "" = traces) */
    memory_params memory;         /* known = false when the file has no "memory" */
    efficiency_model efficiency;  /* known = false when the file has no "efficiency" */
} calibration;

/* One training run a calibration was fitted from, and how well it was predicted with its
 * configuration (every repeat of it) left out of the fit (fit/fit.h). */
typedef struct {
    char trace[256];              /* the trace file */
    job_config config;
    double measured_s;            /* its total training time */
    double loo_model_s;           /* mechanistic prediction without it; NaN: could not refit */
    double loo_ernest_s;          /* Ernest-style prediction without it; NaN: could not refit */
    char loo_note[192];           /* why a prediction is NaN */
} calibration_run;

/* Quality of one regression of the fit. */
typedef struct {
    char name[32];                /* "compute", "sigma", "comm_ps", "comm_allreduce", "startup", "cv" */
    char method[40];              /* "robust bisquare, relative noise", "nnls", ... */
    long points;
    int dof;
    double rms_s;                 /* root-mean-square residual over every point (for "cv": the spread, 1) */
    long outliers;                /* points a robust fit gave weight 0 */
} calibration_regression;

enum { CALIBRATION_MAX_REGRESSIONS = 24, CALIBRATION_MAX_NOTES = 24 };

/* What a parameter's value means where the number alone would mislead (u = 0 because the
 * traces record no update, run_cv = 0 because no configuration was repeated). */
typedef struct {
    char param[32];               /* the name in "params" */
    char text[240];
} calibration_note;

/* Everything of calibration.json beyond the parameters: the runs, fit quality and the
 * leave-one-out validation. runs is borrowed (the filler owns it). */
typedef struct {
    const calibration_run *runs;
    int n_runs;
    calibration_regression regressions[CALIBRATION_MAX_REGRESSIONS];
    int n_regressions;
    calibration_note notes[CALIBRATION_MAX_NOTES];
    int n_notes;
    bool has_ernest;              /* T = θ0 + θ1·work/K + θ2·log2 K + θ3·K, K = workers × cores */
    double ernest_theta[4], ernest_stderr[4];
    int loo_configs;              /* configurations left out (each with all its runs) */
    int loo_model_n, loo_ernest_n; /* runs predicted with their configuration left out */
    double loo_model_median, loo_model_worst, loo_ernest_median, loo_ernest_worst; /* |pred−meas|/meas */
} calibration_fit;

/* Writes cal (and fit, unless NULL) to path in the format above, atomically. Returns 0,
 * or -1 with "PATH: what went wrong" in err (nothing is left at path then). */
int calibration_write(const char *path, const calibration *cal, const calibration_fit *fit, char *err, int errlen);

/* Reads path into *out. Returns 0, or -1 with "PATH: line L column C: what" or
 * "PATH: params.c1: missing" in err. */
int calibration_read(const char *path, calibration *out, char *err, int errlen);

#endif
