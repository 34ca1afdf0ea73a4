/* report_memory — the report's memory section (HTML): will every rank fit?
 *
 *   1. every measured run (its trace's per-rank peaks, trace/trace.h): each rank's role,
 *      its measured peak resident set, model/memory.h's prediction with the calibration's
 *      memory parameters (counting the trace the run held in memory) and the error;
 *   2. the fitted terms and where the known ones come from;
 *   3. the grid's predicted peaks per rank (the predictions' rss_worker_mib,
 *      rss_master_mib columns), folded away.
 * A trace without memory, or a calibration without it, is said so, not guessed at.
 *
 *     const char *paths[] = { "out/traces/train-2x1-batch-ps-b32-dedicated-r1.trace.jsonl", ... };
 *     report_memory_html(f, &cal.memory, paths, n, pred, n_pred, err, sizeof err);
 */
#ifndef SPEEDUP_REPORT_MEMORY_H
#define SPEEDUP_REPORT_MEMORY_H

#include "model/memory.h"
#include "model/predictions.h"

#include <stdio.h>

/* Writes the section to f. 0, or -1 with "PATH: ..." in err when a trace cannot be read
 * (nothing half-written is a concern of the caller's atomic file). */
int report_memory_html(FILE *f, const memory_params *m, const char *const *trace_paths, int n_traces,
                       const prediction_row *pred, int n_pred, char *err, int errlen);

#endif
