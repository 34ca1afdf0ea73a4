/* chrome — a trace as Chrome trace-event JSON, which Perfetto and chrome://tracing open:
 *   {"traceEvents": [{"name": "compute", "cat": "compute", "ph": "X", "ts": µs, "dur": µs,
 *                     "pid": 0, "tid": rank, "args": {"epoch": e, "step": i, ...}}, ...],
 *    "displayTimeUnit": "ms", "otherData": {run description}}
 * One thread (tid) per rank, named "rank R"; a rank's background communication (trace.h)
 * on a thread of its own, tid CHROME_BACKGROUND_TID + R, named "rank R, beside", so that
 * what overlapped is seen overlapping. The process is named after the run. Measured
 * and simulated runs share this shape so they open side by side. Written atomically.
 */
#ifndef SPEEDUP_CHROME_H
#define SPEEDUP_CHROME_H

#include "trace/trace.h"

enum { CHROME_BACKGROUND_TID = 1000 };

/* pid separates runs opened together (0 measured, 1 simulated, by convention). */
int chrome_write(const trace *t, int pid, const char *process_name, const char *path, char *err, int errlen);

#endif
