/* asyncps — Elephas' asynchronous and hogwild modes: a parameter server on rank 0 (a
 * dedicated master) that applies every worker's gradient as it arrives, with no barrier
 * between the workers' steps, over comm/psx.h's asynchronous exchange.
 *
 * A worker (training rank), for each step with examples (train/trainer.h):
 *     if (step % N == 0) asyncps_pull(s, rec, n, &version);   // the server's weights, every N steps
 *     ... forward, backward: n->grads on the weights of `version` ...
 *     asyncps_push(s, rec, n, version, lr);                   // the gradient, after every step
 *   and at the end of its epoch asyncps_end_epoch(s, rec): it tells the server, then waits
 *   at the epoch's barrier for the other workers (evaluation and checkpoint follow there,
 *   of the server's weights, as in every mode).
 * The master, once per epoch:
 *     asyncps_serve(sv, rec, epoch);   // every request of the epoch, then the barrier
 *
 * What the master does with the requests (psx.h: headers from any worker, in arrival
 * order). It lets one push's block in and sends one pull's block out at a time, each
 * direction in arrival order and both at once (its link is full duplex); a worker's pull
 * waits for that worker's own push before it (its requests take effect in its order).
 * Elephas' server reads a request's body before the handler takes its lock, so there too
 * a push comes in while a pull goes out. Without the one-at-a-time, two workers' blocks,
 * which leave through the kernel's buffers at once, shared a direction of a 100 Mbit/s
 * link: both arrived late, and the workers stayed in step, pulling together and then
 * pushing together (experiments/async/README.md).
 *   async    as Elephas' asynchronous mode under its lock: a push that is in is applied at
 *            once with net_update (its own momentum; the worker's learning rate), and
 *            nothing else starts meanwhile; a pull sends the weights as they are. The
 *            weights change only between requests.
 *   hogwild  the same requests without the lock (Elephas' hogwild): the main thread
 *            receives each push into a free buffer and hands it to one of T updater
 *            threads, which apply it with net_sgd to the shared weights and momentum while
 *            the main thread goes on with the requests; up to T updates run at once,
 *            none waits for another, and a pull sends a copy of the weights taken while
 *            updates may be half-way through them. Those races are the algorithm
 *            (Hogwild!, Niu et al. 2011), not a bug. Only the main thread calls MPI
 *            (MPI_THREAD_FUNNELED), not one receiving thread per worker under
 *            MPI_THREAD_MULTIPLE, as Elephas' threaded HTTP server has: Open MPI's
 *            blocking receives busy-poll its progress engine in every calling thread
 *            (open-mpi/ompi-release#97), so K receiving threads would keep K cores
 *            busy on the master's host, and Open MPI 4.1 has reports of multithreaded
 *            hangs (open-mpi/ompi#10324). What hogwild changes, the lock on the
 *            weights, is the same either way.
 *            When every buffer is in an update, the next push waits for one (recorded as a
 *            wait named "updaters"), and so does the master's loop: no pull starts
 *            meanwhile (the simulator lets pulls go on; with T updaters of 0.2–0.3 ms
 *            against transfers of 0.5 ms and more, a rare wait). At the epoch's end the
 *            master waits for the last updates before the barrier.
 * Versions and staleness: the server's version is the number of updates it has applied
 * (completed, under hogwild). A pull returns the weights and the version; the worker's
 * pushes carry the version of the weights their gradient was computed on, and the
 * master records, on the update, staleness = its version when it starts applying it −
 * that version (trace/trace.h's "staleness": with K workers pulling every step, about
 * K − 1). With one worker, pulling every step, async is plain SGD: the same net_update on
 * the same gradient, bit for bit.
 *
 * What each rank records (train/sync.h's marks; each event where the previous one ended):
 *   worker  compute (its step), comm "pull" and comm "push" (bytes = the model: the
 *           transfer, and any queueing behind other workers' requests at the master),
 *           and at the epoch's end a wait (the barrier);
 *   master  wait (idle until the next request, or until a push is in), comm "push"
 *           (receiving the gradient: "background": true, from the go to its last byte,
 *           beside the main thread's events), update "sgd" with its staleness (async: on
 *           its timeline; hogwild: on an updater thread, "background": true), comm "pull"
 *           (sending the weights, until MPI has them), and the epoch's barrier as a wait.
 * Event steps are the worker's global step of the request.
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
