/* commbench — the communication micro-benchmark that pins α and β (DESIGN.md): times
 * the three exchanges of the cost model at several message sizes, on real MPI ranks,
 * and records them as trace events fit/fit.h fits.
 *
 * For every size n (bytes, rounded up to whole floats: the model synchronises float
 * weights) and every repetition, after a barrier:
 *   pingpong   rank 0 sends n bytes to rank 1 and waits for n bytes back: 2(α + β·n)
 *   allreduce  every rank MPI_Allreduce's n/4 floats (sum): S_ring(K)
 *   ps         the trainer's parameter-server exchange itself (comm/psx.h's
 *              psx_exchange, the same call --topology ps makes): ranks 1..K−1 each send n
 *              bytes to rank 0, which takes them one at a time in rank order into one
 *              receive buffer and adds each into its block, then sends n bytes back to
 *              each in rank order: 2(K−1)(α + β·n). Only the update between the pushes
 *              and the pulls is left out (the trainer records it as its own phase).
 * Each is one TRACE_COMM event per rank with "bytes" = n and "name" = the pattern; rank
 * 0's span is the whole exchange (it is the master, or in the ring a full participant),
 * which is what the fit uses. Warm-up repetitions run first and are not recorded.
 *
 * The trace's header has net = FIT_COMMBENCH_NET (so the fit knows these are not
 * training runs), workers = K, model_bytes = the largest n, host = gethostname().
 *
 * Collective: every rank of comm calls it with the same options. MPI errors abort the
 * job (MPI's default handler) — nothing here can recover a broken communicator.
 */
#ifndef SPEEDUP_BENCH_COMMBENCH_H
#define SPEEDUP_BENCH_COMMBENCH_H

#include "trace/trace.h"

#include <mpi.h>

enum { COMMBENCH_MAX_SIZES = 32 };

typedef struct {
    long sizes_bytes[COMMBENCH_MAX_SIZES];
    int n_sizes;
    int reps;                    /* recorded repetitions per size and pattern, ≥ 1 */
    int warmup;                  /* unrecorded repetitions first, ≥ 0 */
    const char *git;             /* for the trace header */
} commbench_options;

/* The default sizes: 8 B up to the default CNN's 454,922 floats = 1,819,688 bytes. */
commbench_options commbench_defaults(void);

/* Runs the benchmark on comm (2 or more ranks). On rank 0, *out gets every rank's events
 * (trace_free it); elsewhere *out is NULL. Returns 0 on every rank, or -1 on every rank
 * with the reason in err (bad options, too few ranks, out of memory). */
int commbench_run(MPI_Comm comm, const commbench_options *o, trace **out, char *err, int errlen);

#endif
