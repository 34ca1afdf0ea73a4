/* calibration_efficiency — calibration.json's optional "efficiency" object: the fitted
 * model/efficiency.h model (model/calibration.h's file; its reader and writer call these).
 *
 *   "efficiency": {
 *     "form": "...",                              (the formula, for the reader; not read)
 *     "workload": {"examples": D, "batch": B_ref, "epochs": E, "schedule": "cosine"},
 *     "chance": c0,                               (accuracy of an untrained network, [0, 1))
 *     "params": {"plateau":  {"value": v, "stderr": e, "unit": "1", "fitted": true},
 *                "log_x0", "power", "w", "gamma", "log_h_c"},  (efficiency.h's θ, that order)
 *     "cov": [[...6 numbers...], ...6 rows],      (of θ in that order; 0 rows: not fitted)
 *     "noise": {"sd_test": σ, "sd_subset": σ},    (residual σ of the two kinds of points)
 *     "fit": {"points": n, "runs": r, "dof": d},  (informative)
 *     "b_noise": {"value": v, "stderr": e, "unit": "example"} | null   (informative)
 *   }
 * A file without "log_h_c" was written before it existed: its form is the ln H one, its
 * cov 5 × 5, and it is read as such (efficiency_model.legacy_log_h) and written back so.
 * Ranges checked on reading: plateau in (chance, 1], power > 0, w >= 0, log_x0, gamma and
 * log_h_c finite, "fitted" a boolean (optional: true), "at_bound" a boolean (optional: false;
 * true: fitted beyond the bound 0 and held there), cov 6 × 6 finite and symmetric with a
 * diagonal >= 0, sds finite >= 0, the workload's counts integers >= 1. A bad value is
 * refused naming it: "PATH: efficiency.params.power.value: expected a number > 0, got -1".
 */
#ifndef SPEEDUP_CALIBRATION_EFFICIENCY_H
#define SPEEDUP_CALIBRATION_EFFICIENCY_H

#include "model/efficiency.h"

#include <jansson.h>

/* The object above; NULL out of memory. */
json_t *calibration_efficiency_to_json(const efficiency_model *m);

/* Reads the object o (calibration.json's "efficiency") of path into *m (known = true):
 * 0, or -1 with the message in err. */
int calibration_efficiency_read(const char *path, json_t *o, efficiency_model *m, char *err, int errlen);

#endif
