/* asyncps — Elephas' asynchronous and hogwild modes: a parameter server on rank 0 (a
 * dedicated master) that applies every worker's gradient as it arrives, with no barrier
 * between the workers' steps, over comm/psx.h's asynchronous exchange.
 *
 * A worker (training rank), for each step with examples (train/trainer.h):
 *     if (step % N == 0) asyncps_pull(s, rec, n, &version);   // the server's weights, every N steps
 *     ... forward, backward: n->grads on the weights of `version` ...
 *     asyncps_push(s, rec, n, version, lr);                   // the gradient, after every step
 *   and at the end of its epoch asyncps_end_epoch(s, rec): it tells the server, then waits
 *   at the epoch's barrier (evaluation and checkpoint follow, of the server's weights).
 * The master, once per epoch:
 *     asyncps_serve(sv, rec, epoch, &updates);   // every request of the epoch, then the barrier
 *
 * The master lets one push in and sends one pull out at a time, each direction in arrival
 * order and both at once (a link is full duplex); a worker's pull waits for its own push.
 *   async    a push that is in is applied at once (net_update, the worker's rate) and
 *            nothing else starts meanwhile: one worker pulling every step is plain SGD,
 *            bit for bit.
 *   hogwild  no lock: T updater threads apply pushes (net_sgd) to the shared weights while
 *            the main thread serves; a pull may copy half-updated weights (the algorithm,
 *            not a bug). Only the main thread calls MPI (MPI_THREAD_FUNNELED).
 * The server's version counts the updates applied; each push carries the version its
 * gradient was computed on, and the master records staleness = its version − that one on
 * the update event (trace/trace.h). Events each rank records, why one transfer each way
 * at a time and why a single MPI thread: docs/async.md ("The server in full").
 *
 * Ownership: the server works on the caller's network (its weights, momentum and gradient
 * block are the server's state; n stays the caller's) and owns its buffers and updater
 * threads; asyncps_server_free stops them and frees the rest (NULL is a no-op).
 * Library: returns status with err, never prints or exits; MPI errors abort the job.
 */
#ifndef SPEEDUP_ASYNCPS_H
#define SPEEDUP_ASYNCPS_H

#include "train/net.h"
#include "train/sync.h"

typedef struct asyncps_server asyncps_server;

/* The master's server for network n (its weights, momentum and gradient block are the
 * server's state), s->sync async or hogwild; hogwild starts `threads` updater threads.
 * NULL with the reason in err (out of memory, a thread that would not start). */
asyncps_server *asyncps_server_new(const sync_ctx *s, net *n, int threads, float momentum, float weight_decay,
                                   char *err, int errlen);
void asyncps_server_free(asyncps_server *sv); /* stops the updaters; NULL is a no-op */
/* Serves every request of `epoch` until each of the workers has said it is done, waits
 * for the last updates (hogwild), then for the barrier. Adds to *updates the gradients
 * applied. (A trace that runs out of memory sets rec->oom; training goes on.) */
void asyncps_serve(asyncps_server *sv, sync_rec *rec, int epoch, long *updates);

/* Worker: the server's weights into n->params, its version into *version. */
void asyncps_pull(const sync_ctx *s, sync_rec *rec, net *n, long *version);
/* Worker: n->grads, computed on the weights of `version`, to the server; lr: the rate of
 * this step (rec->epoch, rec->step). */
void asyncps_push(const sync_ctx *s, sync_rec *rec, const net *n, long version, float lr);
/* Worker: no more requests this epoch; then the epoch's barrier. */
void asyncps_end_epoch(const sync_ctx *s, sync_rec *rec);

#endif
