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
 * calls it with the same n); MPI errors abort the job (MPI's default handler). The caller
 * owns every block and recv.
 *
 * The asynchronous exchange (train/asyncps.h): the same blocks, but each worker sends a
 * request (psx_request: push, pull or done) whenever it is ready; rank 0 takes headers from
 * any source in arrival order and lets one block in and one out at a time, each direction
 * on its own (a remote worker's push waits for rank 0's go, its pull ends with its got; a
 * worker on rank 0's machine, h.shared, needs neither). Ranks with nothing to do wait
 * napping (psx_wait_napping, psx_barrier_napping) so that ranks that compute keep the
 * cores. Only the thread that called MPI_Init calls these. The protocol step by step, and
 * why the go, the got and the naps: docs/async.md ("The asynchronous exchange in full").
 */
#ifndef SPEEDUP_PSX_H
#define SPEEDUP_PSX_H

#include <mpi.h>
#include <stdbool.h>

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

/* Waits for req to complete (its status in *st, or MPI_STATUS_IGNORE), sleeping PSX_NAP_NS
 * between looks instead of busy-polling as MPI_Wait does: for a rank with nothing else to
 * do (a dedicated master waiting for its workers, an async server waiting for a request).
 * On a host whose ranks outnumber its cores a polling rank keeps a core from a rank that
 * computes, and the scheduler may leave two workers packed on another core meanwhile.
 * It completes at most one nap late. */
void psx_wait_napping(MPI_Request *req, MPI_Status *st);

/* A barrier whose waiting ranks nap as psx_wait_napping does (MPI_Ibarrier). Where ranks
 * outnumber the cores, a rank that polled at the barrier would keep its core while others
 * went on packed on another one; a napping one leaves its core idle, and the scheduler
 * pulls one of them over. */
void psx_barrier_napping(MPI_Comm comm);

/* How long psx_wait_napping sleeps: short against a step, long against a wake-up's own
 * cost (a few µs). What other naps measured: docs/async.md. */
#define PSX_NAP_NS 200000L

/* ---- the asynchronous exchange */

typedef enum { PSX_PUSH = 1, PSX_PULL, PSX_DONE } psx_kind;

/* A request's header (sent as bytes: every rank runs the same binary). */
typedef struct {
    int kind;                /* psx_kind */
    int epoch;
    long step;               /* the worker's global step */
    long version;            /* push: the server version of the weights the gradient used;
                                rank 0's answer to a pull: its version now */
    float lr;                /* push: the learning rate of the worker's step */
    int shared;              /* the worker shares rank 0's machine: its blocks go by shared
                                memory, with no go before a push's nor got after a pull's */
} psx_request;

/* Worker: sends a push header h (kind PSX_PUSH) and the block. */
void psx_async_push(MPI_Comm comm, const psx_request *h, const float *block, long n);
/* Worker: asks for the weights (h: its epoch and step; the kind is set here); they land in
 * block, rank 0's version in *version. */
void psx_async_pull(MPI_Comm comm, const psx_request *h, float *block, long n, long *version);
/* Worker: tells rank 0 it is done with epoch. */
void psx_async_done(MPI_Comm comm, int epoch);
/* Messages a block of n floats takes: ⌈n / PSX_CHUNK_FLOATS⌉ (at least 1). */
int psx_chunks(long n);
/* Rank 0: posts the receive of the next request's header, from any rank, into *h. */
void psx_async_listen(MPI_Comm comm, psx_request *h, MPI_Request *req);
/* Rank 0: posts the receives of a push's block from rank `from` into recv (n floats: the
 * whole block), one request per message in reqs (psx_chunks(n) of them), then tells
 * `from` to send it (go: unless the push's header was shared). */
void psx_async_take_start(MPI_Comm comm, int from, float *recv, long n, MPI_Request *reqs, bool go);
/* Waits, napping as psx_wait_napping does, until one of the count requests completes:
 * its index (it is then MPI_REQUEST_NULL) and status in *st; -1 when none is active. */
int psx_wait_any_napping(int count, MPI_Request *reqs, MPI_Status *st);
/* Rank 0: answers a pull of rank `from` with version and the block (returning when MPI
 * has it: over TCP, often before it has arrived), then, got not NULL (a pull whose header
 * was not shared), posts into *got the receive of `from`'s word that it has. */
void psx_async_give(MPI_Comm comm, int from, long version, const float *block, long n, MPI_Request *got);

#endif
