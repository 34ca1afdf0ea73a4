/* chrome_import — someone else's trace as a speedup trace (trace/trace.h): Chrome
 * trace-event JSON as PyTorch's torch.profiler writes it (export_chrome_trace: Kineto's
 * {"traceEvents": [...], "distributedInfo": {...}} or, without Kineto, the legacy array of
 * "X" events, e.g. Debian's PyTorch 1.13) and Horovod's timeline (an array of "B"/"E"
 * pairs, one process per tensor). The result is the same in-memory trace trace_read
 * gives, so trace/traceinfo.h, the fit, the figures and the replay read it unchanged.
 *
 * Files and ranks. A run is one file per rank (every rank profiles itself), the rank from
 * the file's "distributedInfo" or from its name, RUN.rankR.json (tracefile.h groups the
 * files of a directory so); or one file without a rank, one rank's view of the run —
 * Horovod's timeline is rank 0's — which every one of the K ranks is then taken to repeat
 * (collectives run in lockstep). Gzipped files (.json.gz, as torch.profiler writes when
 * asked) are read too. Times are microseconds ("ts", "dur"); each run starts at its
 * earliest event: Kineto's clocks are the host's, shared by its ranks; the legacy
 * profiler's start at each rank's profiler start, so ranks are aligned at the moment each
 * started profiling (start it at the same point of the script on every rank).
 *
 * Events to phases (trace/phasemap.h: by name, first matching rule wins). On each thread
 * (pid, tid) of a rank, events nest by time (one starting at another's very end and lasting
 * at most a microsecond past it is inside it: the legacy profiler rounds start and duration
 * to whole microseconds apart); an event whose rule names a phase is placed,
 * and what it contains is its own business; a "step" or "-" event is looked into. The
 * rank's timeline is its thread with the most compute time, the main thread:
 *   - its placed events, in time order, become the rank's events, each running from the
 *     end of the one before (gaps and unplaced operators between them — the loss, the
 *     interpreter — belong to the phase that follows); consecutive events of one phase
 *     (and one kind of communication) merge into one, but never across a "step" event's
 *     start;
 *   - each compute event is one training step: examples = this rank's slice of the global
 *     batch B (slices differ by at most one example), or B with batch_per_worker; the
 *     events after it, up to the next step, are of that step;
 *   - an event on the main thread that no rule matches is an error naming it: the file,
 *     its index in "traceEvents", its name, thread and time, and how to map it.
 * Communication placed on the rank's other threads (DDP's bucket all-reduces on gloo's
 * threads) becomes background comm (trace.h): the step it belongs to is the last step
 * started on the main thread when it began. Other phases off the main thread are left out.
 * A rank with no compute at all (Horovod's timeline: only its own activities) has no main
 * thread: each step's placed events over every thread (the k-th top-level event of a name
 * on a thread is of step k) are overlaid, comm over wait over the rest, as its timeline.
 * Communication events are named by kind — "allreduce", or "broadcast", "allgather",
 * "reducescatter" when the event or its container says so — and carry the step's bytes
 * where the trace gives them (Horovod's tensor dtype and shape), else 0 (the run's model
 * bytes). Start-up events are named after their annotation ("startup: data_load" →
 * "data_load").
 *
 * The run header: K = opts.workers, else distributedInfo's world_size, else the rank files
 * (or the highest rank Horovod's negotiation names, + 1); T, B, M, P, host and network from
 * opts (a profiler trace records none of them; Horovod's M is its first step's bytes when
 * not given); batch sync through an all-reduce; D = steps × B (× K with
 * batch_per_worker), one epoch; waits "block" when the run has background communication
 * (its main threads wait for the exchange's threads on a future, asleep), else "poll".
 *
 * Errors (one line in err, nothing returned): a file that is not JSON ("PATH: line L
 * column C: ..."), not Chrome trace-event JSON, an event without what its "ph" needs
 * ("PATH: event N: ..."), an "E" without its "B" or a "B" never ended, unplaced events on
 * a main thread, a rank with nothing placed, rank files that do not make 0..K−1.
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
