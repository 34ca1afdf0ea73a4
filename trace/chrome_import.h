/* chrome_import — someone else's trace as a speedup trace (trace/trace.h): Chrome
 * trace-event JSON as PyTorch's torch.profiler writes it (Kineto's, or the legacy array of
 * "X" events; .json or .json.gz) and Horovod's timeline ("B"/"E" pairs, one process per
 * tensor). The result is the same in-memory trace trace_read gives, so trace/traceinfo.h,
 * the fit, the figures and the replay read it unchanged.
 *
 *   chrome_import_opts o = { .batch = 48, .cores = 2 };         // what a profiler cannot say
 *   trace *t = chrome_import(paths, n, &o, err, sizeof err);     // one run; NULL with err
 *   ... trace_free(t);
 *
 * In: one file per rank (the rank from "distributedInfo" or the name RUN.rankR.json:
 * chrome_import_rank_of_name), or one file that every rank is taken to repeat (Horovod's is
 * rank 0's); each run starts at its earliest event. Events become phases by the phase map
 * (trace/phasemap.h, first matching rule). A rank's timeline is its thread with the most
 * compute: its placed events in time order, each from the end of the one before; each
 * compute event is one step of the rank's slice of B. Communication on the rank's other
 * threads (DDP's buckets on gloo's threads) becomes background comm of the step it began
 * in; a rank with no compute (Horovod) overlays each step's events over every thread.
 *
 * The run header: K from opts, else world_size, else the rank files; T, B, M, P, host and
 * network from opts (Horovod's M: its first step's bytes); batch sync through an
 * all-reduce, one epoch of D = steps × B (× K with batch_per_worker); waits "block" when
 * the run has background communication, else "poll".
 *
 * How events nest, merge and are named, and every rule in full: docs/imports.md ("How a
 * profiler trace is read, in full").
 *
 * Errors (one line in err, NULL returned): not JSON ("PATH: line L column C: ..."), not
 * trace-event JSON, a malformed event ("PATH: event N: ..."), unmatched "B"/"E", an
 * unplaced event on a main thread (named, with how to map it), a rank with nothing placed,
 * rank files that do not make 0..K−1. The caller owns the trace.
 */
#ifndef SPEEDUP_CHROME_IMPORT_H
#define SPEEDUP_CHROME_IMPORT_H

#include "trace/phasemap.h"
#include "trace/trace.h"

#include <stdbool.h>

typedef struct {
    int workers;             /* K; 0: from the trace (see above) */
    int cores;               /* T per worker; 0: 1 */
    long batch;              /* global batch B; 0: unknown (steps then have 0 examples) */
    bool batch_per_worker;   /* every worker takes B (weak scaling) */
    long model_bytes;        /* M; 0: from the trace where it has it, else unknown */
    int host_cores;          /* P; 0: unknown */
    const char *host;        /* NULL: "unknown" */
    const char *net;         /* NULL: "" */
    const phasemap *map;     /* NULL: phasemap_default() */
} chrome_import_opts;

/* One run from paths[0..n), one file per rank or one file. NULL with err on failure. */
trace *chrome_import(const char *const *paths, int n, const chrome_import_opts *opts, char *err, int errlen);

/* The rank a file's name gives (RUN.rankR.json, RUN-rankR.json, RUN_rankR...), or -1;
 * *prefix_len (when not NULL): the length of RUN, the run's name. */
int chrome_import_rank_of_name(const char *path, int *prefix_len);

#endif
