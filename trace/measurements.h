/* measurements — a training trace as a row of the measurements CSV (DESIGN.md: the same
 * columns as predictions, model/predictions.h): what `speedup trace`, `speedup report`
 * and the fidelity checks compare predictions with.
 */
#ifndef SPEEDUP_MEASUREMENTS_H
#define SPEEDUP_MEASUREMENTS_H

#include "model/predictions.h"
#include "trace/trace.h"

/* The measured row of a training trace: time_s = its training time, the phases = their
 * means over the ranks (trace/traceinfo.h), speedup 1 and every interval the value (the
 * caller sets the speedup against its baseline); rank 0's peak memory and the largest of
 * the others'; async and hogwild: the staleness its master recorded. */
prediction_row measurements_from_trace(const trace *t);

#endif
