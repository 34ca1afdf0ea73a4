/* psx — the parameter server's exchange, in point-to-point messages: the ONE exchange that
 * the trainer's --topology ps runs (train/sync.h), the micro-benchmark's "ps" pattern times
 * (bench/commbench.h), the simulator replays (sim/job.h) and the cost model prices
 * (model/costmodel.h: S_ps = 2·R·(α + β·M), R = the ranks other than 0).
 *
 *   ranks 1..R   MPI_Send their push block to rank 0, then MPI_Recv the pull block from it.
 *   rank 0       MPI_Recv's the R pushes one at a time, in rank order, into ONE receive
 *                buffer and adds each into its own push block (which holds its own share
 *                already: a training master's gradients, a dedicated master's zeros);
 *                calls between(ctx) (batch sync: the update; averaging: the scale to the
 *                mean); then MPI_Send's its pull block to ranks 1..R one at a time, in
 *                rank order.
 * A block longer than PSX_CHUNK_FLOATS goes as several messages (MPI counts are ints); the
 * receive buffer holds one message, psx_recv_floats(n) floats, so the master's memory is
 * its own blocks plus that one buffer, however many workers push.
 *
 *     float *recv = rank == 0 ? malloc(sizeof(float) * (size_t)psx_recv_floats(n)) : NULL;
 *     psx_exchange(MPI_COMM_WORLD, grads, params, n, recv, update, &ctx); // rank 0: Σ grads,
 *                                                                          // update, send params
 * Cost: rank 0's link carries 2·R·n floats, one message after the other, and rank 0 adds
 * R·n floats; every other rank sends and receives n. Collective over comm (every rank
 * calls it with the same n); MPI errors abort the job (MPI's default handler).
 */
#ifndef SPEEDUP_PSX_H
#define SPEEDUP_PSX_H

#include <mpi.h>

/* Floats per message: 2^28 (1 GiB), under an int count. */
#define PSX_CHUNK_FLOATS (1L << 28)

/* Rank 0's turn between the pushes and the pulls. */
typedef void (*psx_between_fn)(void *ctx);

/* Floats the receive buffer needs for blocks of n floats: min(n, PSX_CHUNK_FLOATS). */
long psx_recv_floats(long n);

/* The exchange over comm, blocks of n floats. Rank 0: push += every other rank's push (in
 * rank order), between(ctx) unless NULL, then pull goes to every other rank; recv is its
 * receive buffer (psx_recv_floats(n) floats). Other ranks: push is sent, pull is received;
 * recv and between are unused (NULL). push and pull may be the same block. */
void psx_exchange(MPI_Comm comm, float *push, float *pull, long n, float *recv, psx_between_fn between, void *ctx);

#endif
