/* efficiency_fit — model/efficiency.h's accuracy-curve fit from training traces: each
 * trace's accuracy points (trace/traceinfo.h) become an efficiency_run, and
 * efficiency_fit does the rest.
 */
#ifndef SPEEDUP_EFFICIENCY_FIT_H
#define SPEEDUP_EFFICIENCY_FIT_H

#include "model/costmodel.h"
#include "model/efficiency.h"
#include "trace/trace.h"

/* Every trace with accuracy points
 * (traceinfo_accuracy_curve: rank 0's, at the epochs seen) is a run. Runs of one schedule
 * are fitted together: the traces are grouped by (examples, epochs, network) and the
 * group with the most accuracy points is fitted; the others are left out, and `note`
 * says how many (runs of a calibration plan's one short epoch record accuracy too). chance
 * = 1/N for the network's last fcN layer (0.1 without one). Points inside the learning
 * rate's warm-up (epochs seen < EFFICIENCY_WARMUP_EPOCHS) are left out: while the rate
 * ramps up over an epoch's steps, a configuration with fewer, larger steps (a larger
 * global batch, K workers) gets ahead of the reference — the opposite of what it does for
 * the rest of the schedule, which no stretch of one curve can follow (leaving the warm-up
 * out halved the residual sd: docs/time-to-accuracy.md). The trace header does not record --warmup-epochs: the trainer's default, 1,
 * is assumed. A trace with fewer than two points after it (a calibration plan's run of
 * one epoch) is no curve and is left out too. An async or hogwild run's τ: with params
 * (non-NULL: the time model fitted on the same traces) the cost model's for its
 * configuration (costmodel_async_of), what predictions use (model/efficiency.h: the runs'
 * own τ is lower, the more so on short epochs, and fitted on it a configuration can be
 * refused as staler than any fitted: docs/time-to-accuracy.md); without,
 * the mean staleness of the gradients its master applied (traceinfo_async_of), and a trace
 * with no such event is left out with a note. Returns 0 fitted (note may name what was
 * left out, else ""); 1 no trace has an accuracy curve (out->known false); -1 the runs
 * cannot be fitted, why in note. */
int efficiency_fit_traces(trace *const *traces, const char *const *names, int n, const costmodel_params *params,
                          efficiency_model *out, char *note, int notelen);

#endif
