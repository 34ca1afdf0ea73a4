/* calibration — the calibration.json file between model/ and sim/ (DESIGN.md).
 *
 *   { "format": "speedup-calibration", "version": 1,
 *     "host": { "name": "...", "cores": 2 },
 *     "workload": { "examples": 60000, "batch": 32, "epochs": 5 },          (optional)
 *     "params": { "c0": {"value": v, "stderr": e, "unit": "s"}, "c1": {...},
 *                 "sigma", "alpha_ps", "beta_ps", "alpha_allreduce", "beta_allreduce",
 *                 "model_bytes", "w0", "w1", "cv", "host_cores" },
 *     "runs": [...], "fit": {...} }                                         (free-form)
 *
 * Every listed parameter is required, with a finite non-negative "value"; "stderr" and
 * "unit" are informative. Writing goes to a temporary file renamed into place.
 */
#ifndef SPEEDUP_CALIBRATION_H
#define SPEEDUP_CALIBRATION_H

#include "model/costmodel.h"

#include <stdbool.h>

#define CALIBRATION_FORMAT "speedup-calibration"
#define CALIBRATION_VERSION 1

/* A parameter's standard error, by the same names as the file ("c0", "alpha_ps", ...). */
typedef struct {
    double c0_s, c1_s, sigma, alpha_ps, beta_ps, alpha_allreduce, beta_allreduce;
    double model_bytes, w0_s, w1_s, cv, host_cores;
} calibration_stderr;

typedef struct {
    costmodel_params params;
    calibration_stderr stderr_;
    bool has_workload;            /* the file named the workload it was measured on */
    long examples, batch;
    int epochs;
    char host[128];
} calibration;

/* Reads path into *out. Returns 0, or -1 with "PATH: line L column C: what" or
 * "PATH: params.c1: missing" in err. */
int calibration_read(const char *path, calibration *out, char *err, int errlen);

#endif
