/* sync — how the ranks of a data-parallel run talk: MPI start-up with one common clock,
 * agreeing on failures before any collective, broadcasting the model, the per-step
 * gradient exchange and the periodic model averaging (parameter server or all-reduce),
 * and gathering every rank's trace and peak memory to rank 0.
 *
 * Without MPI (mpi = 0: a plain `speedup train`) the context is rank 0 of world 1 and
 * every exchange is a no-op, so the single-process trainer needs no mpirun.
 *
 * Topologies (Elephas' parameter server and Horovod's all-reduce):
 *   ps:        the ranks' gradients (or weights) are summed into rank 0 (MPI_Reduce, in
 *              place: rank 0 holds ONE gradient block, never one per worker), rank 0
 *              updates (or averages), then broadcasts the weights (MPI_Bcast).
 *   allreduce: MPI_Allreduce in place; every rank applies the same update.
 * master dedicated (ps only): rank 0 trains nothing; it contributes zeros to the sums and
 * the training ranks are 1..world-1.
 *
 * Each exchange is timed as wait (an MPI_Barrier: waiting for the slowest rank) then comm
 * (the transfer, and rank 0's update for ps), on the common clock: at start-up every rank
 * passes a barrier and sets its origin so that its barrier exit reads the same time on all
 * ranks and no rank's MPI_Init starts before 0.
 * Library: returns status with err, never prints or exits.
 */
#ifndef SPEEDUP_SYNC_H
#define SPEEDUP_SYNC_H

#include "model/costmodel.h"
#include "model/trace.h"
#include "train/net.h"

typedef struct {
    int mpi;                       /* MPI_Init was called (and MPI_Finalize is owed) */
    int rank, world;
    int train_rank, train_world;   /* index among the training ranks; -1 on a dedicated master */
    costmodel_topology topology;
    costmodel_master master;
    double origin_s;               /* CLOCK_MONOTONIC value of the common time 0 */
    double init_t0_s, init_t1_s;   /* MPI_Init + the clock barrier, on the common clock */
} sync_ctx;

/* Starts MPI when mpi is set (else rank 0 of world 1) and aligns the clocks. A dedicated
 * master needs ps and two ranks or more (checked identically on every rank). */
int sync_init(sync_ctx *s, int mpi, costmodel_topology topology, costmodel_master master, char *err,
              int errlen);
/* Seconds on the common clock. */
double sync_now(const sync_ctx *s);
/* MPI_Finalize if started. */
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

/* Collective: the batch's gradient exchange and update. Every rank has its local
 * gradients in n->grads (computed with divisor = the global batch; a dedicated master's
 * are ignored); afterwards every rank holds the updated weights. Records one wait and one
 * comm event (bytes = the model) into tr when tr is not NULL: the wait from *mark (the end
 * of this rank's previous event, so the phases tile its time), *mark = the comm's end. */
void sync_step(sync_ctx *s, net *n, float lr, float momentum, float weight_decay, trace *tr, int *trace_oom,
               int epoch, long step, double *mark);
/* Collective: replaces every rank's weights by the training ranks' mean (momentum stays
 * local). Records wait and comm like sync_step. */
void sync_average(sync_ctx *s, net *n, trace *tr, int *trace_oom, int epoch, long step, double *mark);

/* Collective: appends every other rank's events to rank 0's tr (tr may be NULL on ranks
 * that record nothing; then they send none). 0, or -1 out of memory on rank 0. */
int sync_gather_trace(sync_ctx *s, trace *tr);
/* Collective: rank 0's out[0..world) = each rank's peak resident set in MiB (out may be
 * NULL elsewhere; only the first max entries are kept). */
void sync_gather_rss(sync_ctx *s, double mine_mib, double *out, int max);

/* Adds an event when tr is not NULL; a failed add sets *trace_oom (the trace is lost, the
 * run goes on). */
void sync_record(trace *tr, int *trace_oom, int rank, trace_phase ph, double t0, double t1, int epoch, long step,
                 long bytes, long examples, const char *name);

#endif
