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
 *
 * The asynchronous exchange (Elephas' asynchronous and hogwild modes, train/asyncps.h):
 * the same push and pull blocks, but each worker talks to rank 0 on its own, whenever it
 * is ready, and nothing is collective. Every request starts with a header (psx_request);
 * rank 0 takes headers from any source in arrival order (MPI_ANY_SOURCE), then the rest
 * of that request from that source:
 *   push   header {PUSH, version the gradient was computed on, lr, epoch, step}, then the
 *          block of n floats (chunked as above);
 *   pull   header {PULL}; rank 0 answers with a header carrying its version, then its
 *          block of n floats;
 *   done   header {DONE, epoch}: this worker has no more requests this epoch.
 * Rank 0 lets one block in and one block out at a time, each direction of its link on its
 * own (a link is full duplex: experiments/async/README.md): a worker on another machine
 * sends its push's block when rank 0 says go, and says when a pull's block has arrived. A
 * block the kernel buffers leaves the sender at once, so without the go and the got two
 * workers' blocks would share a direction and both arrive late; one at a time, the first
 * arrives after one transfer (the workers then fall out of step, one pulling while the
 * other pushes, instead of pulling and pushing together). A worker on rank 0's machine
 * (h.shared) has no link to share: its push's block follows the header, and rank 0's send
 * of a pull's block ends when the worker has copied it; the go and the got would only cost
 * it two wake-ups of rank 0 a step (on the 2-core VM, K = 2, a version with them took
 * 1.4–1.8 ms a request where one without took 0.7–0.9 ms: one run each).
 *     worker:  psx_async_pull(comm, &h, params, n, &version);  // header, block, got
 *              psx_async_push(comm, &h, grads, n);             // header, wait for go, block
 *     rank 0:  psx_async_listen(comm, &h, &reqs[0]);
 *              i = psx_wait_any_napping(count, reqs, &st);        // 0: a header from st's source
 *              psx_async_take_start(comm, from, recv, n, &reqs[1], !h.shared); // a push: receives, go
 *              psx_async_give(comm, from, version, params, n, h.shared ? NULL : &got); // a pull
 * Only the thread that called MPI_Init calls these (train/asyncps.h's hogwild master
 * updates on other threads, never in MPI).
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
 * computes: the scheduler left two workers on one core for tens of milliseconds at a time
 * while the master polled alone on the other (their steps ran 2× in bursts, 1.2–1.4× on
 * average, on the 2-core VM). It completes at most one nap late. */
void psx_wait_napping(MPI_Request *req, MPI_Status *st);

/* A barrier whose waiting ranks nap as psx_wait_napping does (MPI_Ibarrier). Where ranks
 * outnumber the cores, an async worker done with its epoch first that polled at the
 * barrier kept its core while two others went on packed on the other one (their steps
 * 2.0× the lone one's until the barrier, in most K = 3 runs on the 2-core VM); a napping
 * one leaves its core idle, and the scheduler pulls one of them over. */
void psx_barrier_napping(MPI_Comm comm);

/* How long psx_wait_napping sleeps: short against a step (10–20 ms here), long against a
 * wake-up's own cost (a few µs). 20 µs to 1 ms gave the same every:8 runs on the 2-core
 * VM; batch sync was fastest near 300 µs. */
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
