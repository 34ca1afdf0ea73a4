/* calibration — the calibration.json file between model/ and sim/ (DESIGN.md): the cost
 * model's parameters for one host and one network, with their standard errors, and what
 * they were fitted from.
 *
 *   { "format": "speedup-calibration", "version": 1,
 *     "host": { "name": "...", "cores": 2 },
 *     "workload": { "examples": D, "batch": B, "epochs": E },           (optional)
 *     "params": { "c0": {"value": v, "stderr": e, "unit": "s"}, ... },  (model/params.h)
 *     "cov_c0_c1": v,                          (optional: 0; c0 and c1 are drawn jointly)
 *     "uncalibrated_topologies": ["ps"],       (optional: their α, β are 0 placeholders)
 *     "memory": {...},                         (optional: model/memory.h's parameters)
 *     "efficiency": {...},                     (optional: model/calibration_efficiency.h)
 *     "source": "...", "range": {"workers": K, "machines": M},    (optional)
 *     "runs": [...], "fit": {...}, "validation": {...} }          (free-form: written only)
 *
 * "params" holds every row of model/params.h's registry, in its order: each a finite
 * non-negative "value" ("stderr" and "unit" are informative); the registry says which are
 * required and which read as 0 when absent. "cv" is the spread within a run, "run_cv" the
 * log-normal spread of whole runs (0 when no configuration was repeated). Every key, the
 * notes calibration_write adds and the free-form parts field by field: docs/files.md
 * ("calibration.json in full").
 *
 * calibration_write writes to a temporary file renamed into place; calibration_read fills
 * a caller-owned struct and allocates nothing that outlives it. Both return -1 with one
 * line ("PATH: ...") in err; nothing prints.
 */
#ifndef SPEEDUP_CALIBRATION_H
#define SPEEDUP_CALIBRATION_H

#include "model/costmodel.h"
#include "model/efficiency.h"
#include "model/memory.h"
#include "model/netcost.h"
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
    bool sigma_unmeasured;        /* no run at T > 1 ("unmeasured": ["sigma"]): a prediction at
                                     more than one core per worker is refused */
    int range_workers, range_machines; /* the most workers and machines a measured run had
                                          ("range"; 0: not recorded): beyond, a prediction
                                          extrapolates */
    char source[256];             /* what it was fitted from ("source"; "" = traces) */
    memory_params memory;         /* known = false when the file has no "memory" */
    calibration_network network;  /* known = false when the file has no "network" */
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

/* One family of configurations (fit/families.h) held out of the fit together: every
 * training run of it left out, the rest refitted, each of its runs predicted. */
typedef struct {
    char name[24];                /* fit_family_name */
    int runs, configs;            /* its training runs, their configurations */
    int predicted;                /* runs predicted by the fit without the family */
    double median, worst;         /* |predicted − measured|/measured over those runs */
    double bias;                  /* the median signed error (predicted/measured − 1) */
    char note[200];               /* why the rest could not be refitted or a run not predicted */
} calibration_family;

enum { CALIBRATION_MAX_FAMILIES = 8 };

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
    calibration_family families[CALIBRATION_MAX_FAMILIES]; /* leave-one-family-out, the families
                                     with runs in the fit (fit/families.h) */
    int n_families;
    bool has_verdict, verdict_poor; /* fit/verdict.h: written as "verdict" */
    char verdict[1024];
} calibration_fit;

/* Writes cal (and fit, unless NULL) to path in the format above, atomically. Returns 0,
 * or -1 with "PATH: what went wrong" in err (nothing is left at path then). */
int calibration_write(const char *path, const calibration *cal, const calibration_fit *fit, char *err, int errlen);

/* Reads path into *out. Returns 0, or -1 with "PATH: line L column C: what" or
 * "PATH: params.c1: missing" in err. */
int calibration_read(const char *path, calibration *out, char *err, int errlen);

/* Does a prediction for `workers` on `machines` go beyond the range a calibration measured
 * (its range_workers and range_machines, the latter >= 1 wherever the former is recorded;
 * range_workers 0: not recorded, never)? */
bool calibration_beyond_range(int range_workers, int range_machines, int workers, int machines);

#endif
