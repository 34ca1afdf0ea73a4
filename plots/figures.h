/* figures — the five figures of `speedup plot`, each written as OUT_DIR/NAME.png and
 * OUT_DIR/NAME.svg by a plots/NAME.gp gnuplot script from data files in OUT_DIR/data/.
 *
 *   speedup      speedup against total cores, predicted with 95% band, measured on top
 *   splits       equal total cores split into workers differently, predicted vs measured
 *   breakdown    start-up / compute / comm / wait stacked per configuration
 *   timeline     one run per worker over time, measured above simulated
 *   calibration  measured step and sync times against the fitted model, with residuals
 *   accuracy     test accuracy against training time per configuration: measured (the
 *                traces' accuracy points) and predicted (the calibration's accuracy fit,
 *                model/efficiency.h, at the cost model's time per epoch)
 *
 * Each returns 0 or -1 with a one-line reason in err. Measured rows may be NULL/0.
 * title names the host and the network.
 */
#ifndef SPEEDUP_FIGURES_H
#define SPEEDUP_FIGURES_H

#include "model/calibration.h"
#include "model/costmodel.h"
#include "model/predictions.h"
#include "trace/trace.h"

int figures_speedup(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                    const char *title, const char *out_dir, char *err, int errlen);
int figures_splits(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                   const char *title, const char *out_dir, char *err, int errlen);
int figures_breakdown(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                      const char *title, const char *out_dir, char *err, int errlen);
/* Either trace may be NULL, not both. */
int figures_timeline(const trace *measured, const trace *simulated, const char *title,
                     const char *out_dir, char *err, int errlen);
int figures_calibration(trace *const *traces, int n_traces, const costmodel_params *fitted,
                        const char *title, const char *out_dir, char *err, int errlen);

/* One series per trace with two accuracy points or more (a curve); predicted where cal's
 * accuracy fit can say (efficiency_check), measured only elsewhere. -1 when no trace has
 * a curve. figures_accuracy_curves counts those traces. */
int figures_accuracy(trace *const *traces, int n_traces, const calibration *cal, const char *title,
                     const char *out_dir, char *err, int errlen);
int figures_accuracy_curves(trace *const *traces, int n_traces);

#endif
