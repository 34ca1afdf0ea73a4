/* sync — how the ranks of a data-parallel run talk: MPI start-up with one common clock,
 * agreeing on failures before any collective, broadcasting the model, the per-step
 * gradient exchange and the periodic model averaging (parameter server or all-reduce),
 * and gathering every rank's trace and peak memory to rank 0.
 *
 * Without MPI (mpi = 0: a plain `speedup train`) the context is rank 0 of world 1 and
 * every exchange is a no-op (the update still runs), so the single-process trainer needs
 * no mpirun.
 *
 * Topologies (Elephas' parameter server and Horovod's all-reduce):
 *   ps:        comm/psx.h's exchange: every other rank sends its gradients (or weights) to
 *              rank 0, which takes them one at a time into one receive buffer and adds
 *              them into its own block, updates (or scales to the mean), then sends the
 *              weights back to each rank one at a time. Only rank 0 updates.
 *   allreduce: MPI_Allreduce in place; every rank applies the same update.
 * master dedicated (ps only): rank 0 trains nothing; it contributes zeros to the sums and
 * the training ranks are 1..world-1.
 * Async and hogwild (Elephas' asynchronous modes) need a dedicated ps master and have no
 * per-step exchange here: train/asyncps.h serves them on these marks and this context.
 *
 * What each rank records, every event starting where its previous one ended (sync_rec's
 * mark), so that its phases tile its time:
 *   wait     an MPI_Barrier before each exchange: waiting for the slowest rank;
 *   comm     the transfer (bytes = the model, name = the topology): ps rank 0 records the
 *            pushes and the pulls as two events with its update between them, every other
 *            rank one event from its push to its pull; allreduce one event per rank;
 *   update   net_update (name "sgd") or the scale of a sum to the mean (name "average"):
 *            every rank after the all-reduce (or after its own step, world 1), ps rank 0
 *            between the pushes and the pulls. Never inside comm (model/costmodel.h's u).
 * Times are on the common clock: at start-up every rank passes a barrier and sets its
 * origin so that its barrier exit reads the same time on all ranks and no rank's MPI_Init
 * starts before 0.
 * Library: returns status with err, never prints or exits.
 */
#ifndef SPEEDUP_SYNC_H
#define SPEEDUP_SYNC_H

#include "core/job.h"
#include "trace/trace.h"
#include "train/net.h"

#include <pthread.h>

typedef struct {
    int mpi;                       /* MPI_Init was called (and MPI_Finalize is owed) */
    int rank, world;
    int train_rank, train_world;   /* index among the training ranks; -1 on a dedicated master */
    job_sync sync;
    job_topology topology;
    job_master master;
    double origin_s;               /* CLOCK_MONOTONIC value of the common time 0 */
    double init_t0_s, init_t1_s;   /* MPI_Init + the clock barrier, on the common clock */
    float *ps_recv;                /* ps rank 0: the exchange's receive buffer (sync_reserve) */
    bool beside_master;            /* async, hogwild: this rank shares rank 0's machine (its
                                      messages to it go through shared memory, not a link) */
} sync_ctx;

/* Where one rank records its events. Every sync_mark records [mark_s, now) and moves
 * mark_s to now: each event starts where the rank's previous one ended. */
typedef struct {
    trace *tr;                     /* NULL: record nothing (the mark still moves) */
    pthread_mutex_t *lock;         /* held around adding to tr when threads share it; NULL: none */
    int rank;
    int oom;                       /* a trace_add failed: the trace is lost, the run goes on */
    double mark_s;                 /* end of this rank's last event, on the common clock */
    int epoch;                     /* -1 outside an epoch */
    long step;                     /* the global step; -1 when not a step */
} sync_rec;

/* The optimizer's settings for one step (net_update's). */
typedef struct {
    float lr, momentum, weight_decay;
} sync_sgd;

/* Starts MPI when mpi is set (else rank 0 of world 1) and aligns the clocks. A dedicated
 * master needs ps and two ranks or more, and async and hogwild need a dedicated master
 * (checked identically on every rank). Hogwild asks MPI for MPI_THREAD_FUNNELED (its
 * master's updater threads never call MPI) and fails when it is not provided. */
int sync_init(sync_ctx *s, int mpi, job_sync sync, job_topology topology, job_master master,
              char *err, int errlen);
/* Seconds on the common clock. */
double sync_now(const sync_ctx *s);
/* Not collective: rank 0 of a ps run with 2 ranks or more allocates the exchange's receive
 * buffer for a model of n floats (comm/psx.h); other ranks allocate nothing, and so does
 * an async master (it receives into its gradients). 0, or -1 out of memory (agree on it
 * with sync_agree). */
int sync_reserve(sync_ctx *s, long n);
/* Frees what sync_reserve allocated; twice is harmless. */
void sync_release(sync_ctx *s);
/* sync_release, then MPI_Finalize if started. */
void sync_finish(sync_ctx *s);
/* Ends every rank of the job now (MPI_Abort), for a failure only this rank saw. */
void sync_abort(sync_ctx *s, int code);

/* Collective: 1 when any rank passed failed != 0; err then holds, on every rank, the
 * message of the lowest failing rank ("rank R: ..." when R > 0). 0 when none failed. */
int sync_agree(sync_ctx *s, int failed, char *err, int errlen);
/* Collective broadcast of bytes from rank 0. */
void sync_bcast(sync_ctx *s, void *buf, long bytes);
/* Collective sum of v over the ranks (small reductions: counts, losses). */
double sync_sum(sync_ctx *s, double v);
long sync_sum_long(sync_ctx *s, long v);

/* Records phase ph from rec->mark_s to now (sync_now) and moves the mark there; the
 * event takes rec's epoch and step. Returns the recorded event, for fields the call does
 * not set (an eval's accuracy), valid until the next event is recorded (by any thread
 * sharing rec's trace: not while a hogwild master's updaters run); NULL when nothing is
 * recorded (no trace, or out of memory). */
trace_event *sync_mark(const sync_ctx *s, sync_rec *rec, trace_phase ph, long bytes, long examples, const char *name);
/* The same up to t1_s instead of now (start-up phases timed before the trace existed). */
trace_event *sync_mark_until(sync_rec *rec, trace_phase ph, double t1_s, long bytes, long examples, const char *name);
/* An async master's update "sgd" of a pushed gradient, from rec->mark_s to now, with its
 * staleness (trace/trace.h); background: applied on an updater thread beside the master's
 * own timeline (hogwild). */
void sync_mark_update(const sync_ctx *s, sync_rec *rec, long staleness, bool background);
/* A background event [t0_s, now) beside rec's own timeline (an async master's push coming
 * in while it serves other requests); rec's mark does not move. */
void sync_mark_background(const sync_ctx *s, sync_rec *rec, trace_phase ph, double t0_s, long bytes, const char *name);

/* This rank's own update (local SGD, or world 1): net_update, recorded as update "sgd". */
void sync_local_update(const sync_ctx *s, sync_rec *rec, net *n, const sync_sgd *opt);
/* Collective: the batch's gradient exchange and update. Every rank has its local
 * gradients in n->grads (computed with divisor = the global batch; a dedicated master's
 * are ignored); afterwards every rank holds the updated weights. Records wait, comm and
 * update as the header says (world 1: the update only). */
void sync_step(sync_ctx *s, net *n, const sync_sgd *opt, sync_rec *rec);
/* Collective: replaces every rank's weights by the training ranks' mean (momentum stays
 * local). Records wait, comm and update ("average") like sync_step; world 1: nothing. */
void sync_average(sync_ctx *s, net *n, sync_rec *rec);

/* Collective, point to point in rank order, for state that differs per rank (local SGD's
 * momentum in a checkpoint). sync_gather_floats: every rank r > 0 sends its n floats
 * `mine`; rank 0 receives each into scratch (n floats, rank 0 only) and calls put(ctx,
 * scratch) for r = 1..world-1. sync_scatter_floats: rank 0 calls get(ctx, r, scratch) for
 * r = 1..world-1 and sends it; rank r receives into mine. Rank 0 holds one block at a
 * time. World 1: nothing. */
void sync_gather_floats(sync_ctx *s, const float *mine, long n, float *scratch,
                        void (*put)(void *ctx, const float *block), void *ctx);
void sync_scatter_floats(sync_ctx *s, float *mine, long n, float *scratch,
                         void (*get)(void *ctx, int rank, float *block), void *ctx);

/* Collective: appends every other rank's events to rank 0's tr (tr may be NULL on ranks
 * that record nothing; then they send none). 0, or -1 out of memory on rank 0. */
int sync_gather_trace(sync_ctx *s, trace *tr);
/* Collective: rank 0's out[0..world) = each rank's `mine` (its peak resident set, its CPU
 * time; out may be NULL elsewhere; only the first max entries are kept). */
void sync_gather_value(sync_ctx *s, double mine, double *out, int max);

#endif
