/* asyncps — the asynchronous parameter server (see asyncps.h), top to bottom: the
 * worker's requests, the server's state, the hogwild updaters, the master's loop. */
#define _POSIX_C_SOURCE 200809L
#include "train/asyncps.h"

#include "train/psx.h"
#include "util/errmsg.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static long model_bytes(const net *n) { return (long)sizeof(float) * n->n_params; }

// ---------------------------------------------------------------------------------------
// The worker's side

void asyncps_pull(const sync_ctx *s, sync_rec *rec, net *n, long *version) {
    const psx_request h = { .epoch = rec->epoch, .step = rec->step };
    psx_async_pull(MPI_COMM_WORLD, &h, n->params, n->n_params, version);
    sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "pull");
}

void asyncps_push(const sync_ctx *s, sync_rec *rec, const net *n, long version, float lr) {
    const psx_request h = { .kind = PSX_PUSH, .epoch = rec->epoch, .step = rec->step, .version = version, .lr = lr };
    psx_async_push(MPI_COMM_WORLD, &h, n->grads, n->n_params);
    sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "push");
}

void asyncps_end_epoch(const sync_ctx *s, sync_rec *rec) {
    psx_async_done(MPI_COMM_WORLD, rec->epoch);
    rec->step = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    sync_mark(s, rec, TRACE_WAIT, 0, 0, NULL);
}

// ---------------------------------------------------------------------------------------
// The server's state

/* A received gradient waiting for (or in) an updater: buffer `buf` of the pool. */
typedef struct {
    int buf, epoch;
    long step, version;
    float lr;
} update_job;

struct asyncps_server {
    const sync_ctx *s;
    net *n;                       /* the server's weights and momentum (shared by the updaters) */
    float momentum, weight_decay;
    bool hogwild;
    atomic_long applied;          /* the version: updates applied (completed) */
    /* hogwild: the updaters and their buffers, all guarded by mu */
    int threads, started;
    pthread_t *tid;
    float **bufs;                 /* (threads) gradient buffers; bufs[0] is n->grads */
    int *free_bufs, n_free;
    update_job *queue;            /* ring of `threads` jobs */
    int q_head, q_len;
    int busy;                     /* jobs queued or being applied */
    bool stop;
    trace *tr;                    /* where the updaters record (the epoch's rec->tr) */
    bool trace_oom;
    float *staging;               /* (n_params) the copy of the weights a pull sends */
    pthread_mutex_t mu, trace_lock;
    pthread_cond_t work, freed;
};

// ---------------------------------------------------------------------------------------
// Hogwild's updaters: apply a gradient to the shared weights, no lock on them

static void *updater_main(void *arg) {
    asyncps_server *sv = arg;
    const net *n = sv->n;
    pthread_mutex_lock(&sv->mu);
    for (;;) {
        while (sv->q_len == 0 && !sv->stop)
            pthread_cond_wait(&sv->work, &sv->mu);
        if (sv->q_len == 0)
            break;
        const update_job j = sv->queue[sv->q_head];
        sv->q_head = (sv->q_head + 1) % sv->threads;
        sv->q_len--;
        sync_rec rec = { .tr = sv->tr, .lock = &sv->trace_lock, .rank = sv->s->rank, .epoch = j.epoch,
                         .step = j.step };
        pthread_mutex_unlock(&sv->mu);
        rec.mark_s = sync_now(sv->s);
        const long stale = atomic_load(&sv->applied) - j.version;
        // Other updaters may be inside the same weights now, and the main thread copying
        // them for a pull: hogwild's races, on purpose (asyncps.h).
        net_sgd(n->params, n->momentum, sv->bufs[j.buf], n->n_params, j.lr, sv->momentum, sv->weight_decay);
        atomic_fetch_add(&sv->applied, 1);
        sync_mark_update(sv->s, &rec, stale, true);
        pthread_mutex_lock(&sv->mu);
        sv->trace_oom |= rec.oom;
        sv->free_bufs[sv->n_free++] = j.buf;
        sv->busy--;
        pthread_cond_broadcast(&sv->freed);
    }
    pthread_mutex_unlock(&sv->mu);
    return NULL;
}

/* Stops and joins the started updaters. */
static void stop_updaters(asyncps_server *sv) {
    pthread_mutex_lock(&sv->mu);
    sv->stop = true;
    pthread_cond_broadcast(&sv->work);
    pthread_mutex_unlock(&sv->mu);
    for (int i = 0; i < sv->started; i++)
        pthread_join(sv->tid[i], NULL);
    sv->started = 0;
}

/* The pool (buffer 0 is the net's own gradient block), the staging copy, the threads:
 * 0, or -1 with err. */
static int start_updaters(asyncps_server *sv, int threads, char *err, int errlen) {
    sv->threads = threads;
    sv->tid = calloc((size_t)threads, sizeof *sv->tid);
    sv->bufs = calloc((size_t)threads, sizeof *sv->bufs);
    sv->free_bufs = calloc((size_t)threads, sizeof *sv->free_bufs);
    sv->queue = calloc((size_t)threads, sizeof *sv->queue);
    sv->staging = malloc(sizeof(float) * (size_t)sv->n->n_params);
    if (!sv->tid || !sv->bufs || !sv->free_bufs || !sv->queue || !sv->staging)
        return errmsg_set(err, errlen, "out of memory for the hogwild master's buffers");
    for (int i = 0; i < threads; i++) {
        sv->bufs[i] = i == 0 ? sv->n->grads : malloc(sizeof(float) * (size_t)sv->n->n_params);
        if (!sv->bufs[i])
            return errmsg_set(err, errlen, "out of memory for the hogwild master's %d gradient buffers", threads);
        sv->free_bufs[sv->n_free++] = i;
    }
    for (; sv->started < threads; sv->started++)
        if (pthread_create(&sv->tid[sv->started], NULL, updater_main, sv) != 0)
            return errmsg_set(err, errlen, "cannot start the hogwild master's updater thread %d of %d",
                              sv->started + 1, threads);
    return 0;
}

asyncps_server *asyncps_server_new(const sync_ctx *s, net *n, int threads, float momentum, float weight_decay,
                                   char *err, int errlen) {
    asyncps_server *sv = calloc(1, sizeof *sv);
    if (!sv) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    *sv = (asyncps_server){ .s = s, .n = n, .momentum = momentum, .weight_decay = weight_decay,
                            .hogwild = s->sync == COSTMODEL_SYNC_HOGWILD };
    atomic_init(&sv->applied, 0);
    pthread_mutex_init(&sv->mu, NULL);
    pthread_mutex_init(&sv->trace_lock, NULL);
    pthread_cond_init(&sv->work, NULL);
    pthread_cond_init(&sv->freed, NULL);
    if (sv->hogwild && start_updaters(sv, threads > 0 ? threads : 1, err, errlen)) {
        asyncps_server_free(sv);
        return NULL;
    }
    return sv;
}

void asyncps_server_free(asyncps_server *sv) {
    if (!sv)
        return;
    stop_updaters(sv);
    for (int i = 1; sv->bufs && i < sv->threads; i++)
        free(sv->bufs[i]);
    free(sv->bufs);
    free(sv->tid);
    free(sv->free_bufs);
    free(sv->queue);
    free(sv->staging);
    pthread_mutex_destroy(&sv->mu);
    pthread_mutex_destroy(&sv->trace_lock);
    pthread_cond_destroy(&sv->work);
    pthread_cond_destroy(&sv->freed);
    free(sv);
}

// ---------------------------------------------------------------------------------------
// The master's loop

/* Async: receive the gradient, apply it, then the next request. */
static void serve_push(asyncps_server *sv, sync_rec *rec, const psx_request *h, int from) {
    net *n = sv->n;
    psx_async_take(MPI_COMM_WORLD, from, n->grads, n->n_params);
    sync_mark(sv->s, rec, TRACE_COMM, model_bytes(n), 0, "push");
    const long stale = atomic_load(&sv->applied) - h->version;
    net_update(n, h->lr, sv->momentum, sv->weight_decay);
    atomic_fetch_add(&sv->applied, 1);
    sync_mark_update(sv->s, rec, stale, false);
}

/* Hogwild: receive the gradient into a free buffer (waiting for one when every updater is
 * busy) and hand it to the updaters. */
static void hogwild_push(asyncps_server *sv, sync_rec *rec, const psx_request *h, int from) {
    pthread_mutex_lock(&sv->mu);
    const bool waited = sv->n_free == 0;
    while (sv->n_free == 0)
        pthread_cond_wait(&sv->freed, &sv->mu);
    const int b = sv->free_bufs[--sv->n_free];
    pthread_mutex_unlock(&sv->mu);
    if (waited)
        sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, "updaters");
    psx_async_take(MPI_COMM_WORLD, from, sv->bufs[b], sv->n->n_params);
    sync_mark(sv->s, rec, TRACE_COMM, model_bytes(sv->n), 0, "push");
    pthread_mutex_lock(&sv->mu);
    sv->queue[(sv->q_head + sv->q_len) % sv->threads] =
        (update_job){ .buf = b, .epoch = h->epoch, .step = h->step, .version = h->version, .lr = h->lr };
    sv->q_len++;
    sv->busy++;
    pthread_cond_signal(&sv->work);
    pthread_mutex_unlock(&sv->mu);
}

/* The weights as they are (hogwild: a copy taken while updaters may be writing them). */
static void serve_pull(asyncps_server *sv, sync_rec *rec, int from) {
    const net *n = sv->n;
    const long version = atomic_load(&sv->applied);
    const float *w = n->params;
    if (sv->hogwild) {
        memcpy(sv->staging, n->params, sizeof(float) * (size_t)n->n_params);
        w = sv->staging;
    }
    psx_async_give(MPI_COMM_WORLD, from, version, w, n->n_params);
    sync_mark(sv->s, rec, TRACE_COMM, model_bytes(n), 0, "pull");
}

/* Hogwild: every received gradient applied before the epoch's barrier. */
static void drain_updaters(asyncps_server *sv, sync_rec *rec) {
    pthread_mutex_lock(&sv->mu);
    const bool waited = sv->busy > 0;
    while (sv->busy > 0)
        pthread_cond_wait(&sv->freed, &sv->mu);
    rec->oom |= sv->trace_oom;
    pthread_mutex_unlock(&sv->mu);
    if (waited)
        sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, "updaters");
}

void asyncps_serve(asyncps_server *sv, sync_rec *rec, int epoch, long *updates) {
    const long before = atomic_load(&sv->applied);
    if (sv->hogwild) {
        pthread_mutex_lock(&sv->mu);
        sv->tr = rec->tr;
        pthread_mutex_unlock(&sv->mu);
        rec->lock = &sv->trace_lock;
    }
    rec->epoch = epoch;
    for (int done = 0; done < sv->s->train_world;) {
        psx_request h;
        int from;
        psx_async_next(MPI_COMM_WORLD, &h, &from);
        rec->step = h.step;
        sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL);
        if (h.kind == PSX_PUSH && sv->hogwild)
            hogwild_push(sv, rec, &h, from);
        else if (h.kind == PSX_PUSH)
            serve_push(sv, rec, &h, from);
        else if (h.kind == PSX_PULL)
            serve_pull(sv, rec, from);
        else
            done++; // PSX_DONE: that worker's epoch is over
    }
    rec->step = -1;
    if (sv->hogwild)
        drain_updaters(sv, rec);
    rec->lock = NULL; // the updaters are idle until the next epoch
    MPI_Barrier(MPI_COMM_WORLD);
    sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL);
    *updates += atomic_load(&sv->applied) - before;
}
