/* asyncps — the asynchronous parameter server (see asyncps.h), top to bottom: the
 * worker's requests, the server's state, the hogwild updaters, the master's loop. */
#define _POSIX_C_SOURCE 200809L
#include "train/asyncps.h"

#include "comm/psx.h"
#include "util/errmsg.h"

#include <mpi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static long model_bytes(const net *n) { return (long)sizeof(float) * n->n_params; }

// ---------------------------------------------------------------------------------------
// The worker's side

void asyncps_pull(const sync_ctx *s, sync_rec *rec, net *n, long *version) {
    const psx_request h = { .epoch = rec->epoch, .step = rec->step, .shared = s->beside_master };
    psx_async_pull(MPI_COMM_WORLD, &h, n->params, n->n_params, version);
    sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "pull");
}

void asyncps_push(const sync_ctx *s, sync_rec *rec, const net *n, long version, float lr) {
    const psx_request h = { .kind = PSX_PUSH, .epoch = rec->epoch, .step = rec->step, .version = version, .lr = lr,
                            .shared = s->beside_master };
    psx_async_push(MPI_COMM_WORLD, &h, n->grads, n->n_params);
    sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "push");
}

void asyncps_end_epoch(const sync_ctx *s, sync_rec *rec) {
    psx_async_done(MPI_COMM_WORLD, rec->epoch);
    rec->step = -1;
    psx_barrier_napping(MPI_COMM_WORLD);
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
    /* the master's intake (asyncps_serve) */
    MPI_Request *reqs;            /* [0] the next request's header, [1..chunks] the push coming
                                     in, [chunks + 1] the word that the pull going out is in */
    int chunks, chunks_left;      /* messages of a block; of the push coming in, still to come */
    psx_request header;           /* what reqs[0] receives */
    int in_from, in_buf;          /* the push coming in: its worker (-1: none), its buffer */
    psx_request in_h;             /* its header */
    double in_t0_s;               /* when its receives were posted */
    psx_request *waiting;         /* ring of pushes waiting to come in, in arrival order */
    int *waiting_from;
    int w_head, w_len, w_cap;
    bool *pull_waits;             /* (world) a worker's pull waiting for its own push */
    bool *beside;                 /* (world) a worker on the master's machine (psx_request.shared) */
    int out_to;                   /* the worker the pull going out is for; -1: none */
    int *pulls;                   /* (world) ring of workers whose pull waits to go out */
    int p_head, p_len;
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
                            .hogwild = s->sync == JOB_SYNC_HOGWILD };
    atomic_init(&sv->applied, 0);
    pthread_mutex_init(&sv->mu, NULL);
    pthread_mutex_init(&sv->trace_lock, NULL);
    pthread_cond_init(&sv->work, NULL);
    pthread_cond_init(&sv->freed, NULL);
    sv->chunks = psx_chunks(n->n_params);
    sv->reqs = malloc(sizeof *sv->reqs * (size_t)(2 + sv->chunks));
    sv->w_cap = s->world;
    sv->waiting = malloc(sizeof *sv->waiting * (size_t)sv->w_cap);
    sv->waiting_from = malloc(sizeof *sv->waiting_from * (size_t)sv->w_cap);
    sv->pull_waits = calloc((size_t)s->world, sizeof *sv->pull_waits);
    sv->beside = calloc((size_t)s->world, sizeof *sv->beside);
    sv->pulls = malloc(sizeof *sv->pulls * (size_t)s->world);
    if (!sv->reqs || !sv->waiting || !sv->waiting_from || !sv->pull_waits || !sv->beside || !sv->pulls) {
        errmsg_set(err, errlen, "out of memory for the master's requests");
        asyncps_server_free(sv);
        return NULL;
    }
    for (int i = 0; i <= sv->chunks + 1; i++)
        sv->reqs[i] = MPI_REQUEST_NULL;
    sv->in_from = sv->out_to = -1;
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
    free(sv->reqs);
    free(sv->waiting);
    free(sv->waiting_from);
    free(sv->pull_waits);
    free(sv->beside);
    free(sv->pulls);
    pthread_mutex_destroy(&sv->mu);
    pthread_mutex_destroy(&sv->trace_lock);
    pthread_cond_destroy(&sv->work);
    pthread_cond_destroy(&sv->freed);
    free(sv);
}

// ---------------------------------------------------------------------------------------
// The master's loop

/* Hogwild: a free gradient buffer, waiting for one when every updater is busy. */
static int take_buffer(asyncps_server *sv, sync_rec *rec) {
    pthread_mutex_lock(&sv->mu);
    const bool waited = sv->n_free == 0;
    while (sv->n_free == 0)
        pthread_cond_wait(&sv->freed, &sv->mu);
    const int b = sv->free_bufs[--sv->n_free];
    pthread_mutex_unlock(&sv->mu);
    if (waited)
        sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, "updaters");
    return b;
}

/* Hogwild: the gradient in buffer b to the updaters. */
static void hand_to_updater(asyncps_server *sv, const psx_request *h, int b) {
    pthread_mutex_lock(&sv->mu);
    sv->queue[(sv->q_head + sv->q_len) % sv->threads] =
        (update_job){ .buf = b, .epoch = h->epoch, .step = h->step, .version = h->version, .lr = h->lr };
    sv->q_len++;
    sv->busy++;
    pthread_cond_signal(&sv->work);
    pthread_mutex_unlock(&sv->mu);
}

/* Async: the gradient that came in, applied at once with the lock's meaning: the weights
 * change only here, between requests. */
static void apply_push(asyncps_server *sv, sync_rec *rec, const psx_request *h) {
    net *n = sv->n;
    const long stale = atomic_load(&sv->applied) - h->version;
    net_update(n, h->lr, sv->momentum, sv->weight_decay);
    atomic_fetch_add(&sv->applied, 1);
    sync_mark_update(sv->s, rec, stale, false);
}

/* The next waiting pull goes out, when none is: the weights as they are (hogwild: a copy
 * taken while updaters may be writing them). Returns whether one went. */
static bool start_pull(asyncps_server *sv, sync_rec *rec) {
    if (sv->out_to >= 0 || sv->p_len == 0)
        return false;
    const int to = sv->pulls[sv->p_head];
    sv->p_head = (sv->p_head + 1) % sv->s->world;
    sv->p_len--;
    sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL);
    const net *n = sv->n;
    const long version = atomic_load(&sv->applied);
    const float *w = n->params;
    if (sv->hogwild) {
        memcpy(sv->staging, n->params, sizeof(float) * (size_t)n->n_params);
        w = sv->staging;
    }
    // Over shared memory the send ends when the worker has copied the block: nothing to
    // wait for. Over a link, the direction is free when the worker says the block is in.
    MPI_Request *got = sv->beside[to] ? NULL : &sv->reqs[sv->chunks + 1];
    psx_async_give(MPI_COMM_WORLD, to, version, w, n->n_params, got);
    sync_mark(sv->s, rec, TRACE_COMM, model_bytes(n), 0, "pull");
    if (got)
        sv->out_to = to;
    return true;
}

/* Worker w's pull waits to go out (a worker has one at most). */
static void queue_pull(asyncps_server *sv, int w) {
    sv->pulls[(sv->p_head + sv->p_len) % sv->s->world] = w;
    sv->p_len++;
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

/* Is a push of worker w waiting or coming in? */
static bool push_pending(const asyncps_server *sv, int w) {
    if (sv->in_from == w)
        return true;
    for (int i = 0; i < sv->w_len; i++)
        if (sv->waiting_from[(sv->w_head + i) % sv->w_cap] == w)
            return true;
    return false;
}

/* A push's header: it waits its turn to come in (a worker whose sends are buffered can
 * have several waiting, so the ring grows). 0, or -1 out of memory. */
static int enqueue_push(asyncps_server *sv, const psx_request *h, int from) {
    if (sv->w_len == sv->w_cap) {
        const int cap = 2 * sv->w_cap;
        psx_request *hs = malloc(sizeof *hs * (size_t)cap);
        int *fs = malloc(sizeof *fs * (size_t)cap);
        if (!hs || !fs) {
            free(hs);
            free(fs);
            return -1;
        }
        for (int i = 0; i < sv->w_len; i++) {
            hs[i] = sv->waiting[(sv->w_head + i) % sv->w_cap];
            fs[i] = sv->waiting_from[(sv->w_head + i) % sv->w_cap];
        }
        free(sv->waiting);
        free(sv->waiting_from);
        sv->waiting = hs;
        sv->waiting_from = fs;
        sv->w_head = 0;
        sv->w_cap = cap;
    }
    const int at = (sv->w_head + sv->w_len) % sv->w_cap;
    sv->waiting[at] = *h;
    sv->waiting_from[at] = from;
    sv->w_len++;
    return 0;
}

/* The next waiting push starts coming in, when none is: one at a time, as the workers'
 * sends arrive, into the gradient block (hogwild: a free buffer). */
static void start_push(asyncps_server *sv, sync_rec *rec) {
    if (sv->in_from >= 0 || sv->w_len == 0)
        return;
    sv->in_h = sv->waiting[sv->w_head];
    const int from = sv->waiting_from[sv->w_head];
    sv->w_head = (sv->w_head + 1) % sv->w_cap;
    sv->w_len--;
    float *into = sv->n->grads;
    if (sv->hogwild) {
        sv->in_buf = take_buffer(sv, rec);
        into = sv->bufs[sv->in_buf];
    }
    sv->in_from = from;
    sv->in_t0_s = sync_now(sv->s);
    sv->chunks_left = sv->chunks;
    psx_async_take_start(MPI_COMM_WORLD, from, into, sv->n->n_params, sv->reqs + 1, !sv->in_h.shared);
}

/* The push has come in: applied (async) or handed to an updater (hogwild); then its
 * worker's pull, if it asked for one meanwhile. */
static void finish_push(asyncps_server *sv, sync_rec *rec) {
    const int from = sv->in_from;
    const psx_request h = sv->in_h;
    rec->step = h.step;
    sync_mark_background(sv->s, rec, TRACE_COMM, sv->in_t0_s, model_bytes(sv->n), "push");
    sv->in_from = -1;
    sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL); // the master's own time while it came in
    if (sv->hogwild)
        hand_to_updater(sv, &h, sv->in_buf);
    else
        apply_push(sv, rec, &h);
    if (sv->pull_waits[from] && !push_pending(sv, from)) { // eager sends: more of its pushes may wait
        sv->pull_waits[from] = false;
        queue_pull(sv, from);
    }
}

/* A request's header from `from`: a push waits to come in; a pull joins the pulls' queue
 * once that worker's own pushes are in (a worker's requests take effect in its order:
 * async with one worker is plain SGD); a done is counted (returns 1). */
static int take_request(asyncps_server *sv, sync_rec *rec, const psx_request *h, int from) {
    rec->step = h->step;
    if (h->kind != PSX_DONE)
        sv->beside[from] = h->shared;
    sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL);
    if (h->kind == PSX_PUSH) {
        if (enqueue_push(sv, h, from))
            MPI_Abort(MPI_COMM_WORLD, 1); // out of memory for a header: the push would never be taken
    } else if (h->kind == PSX_PULL) {
        if (push_pending(sv, from))
            sv->pull_waits[from] = true;
        else
            queue_pull(sv, from);
    } else {
        return 1; // PSX_DONE: that worker's epoch is over
    }
    return 0;
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
    int done = 0;
    psx_async_listen(MPI_COMM_WORLD, &sv->header, &sv->reqs[0]);
    while (done < sv->s->train_world || sv->in_from >= 0 || sv->w_len > 0 || sv->out_to >= 0 || sv->p_len > 0) {
        MPI_Status st;
        const int i = psx_wait_any_napping(2 + sv->chunks, sv->reqs, &st);
        if (i == 0) {
            const psx_request h = sv->header;
            done += take_request(sv, rec, &h, st.MPI_SOURCE);
            if (done < sv->s->train_world)
                psx_async_listen(MPI_COMM_WORLD, &sv->header, &sv->reqs[0]);
        } else if (i == sv->chunks + 1) {
            sv->out_to = -1; // the pull has arrived
        } else if (i > 0 && --sv->chunks_left == 0) {
            finish_push(sv, rec);
        } else if (i < 0) {
            break; // nothing posted: cannot happen while the loop's condition holds
        }
        start_push(sv, rec);
        while (start_pull(sv, rec)) // a pull by shared memory is over when the send returns
            ;
    }
    rec->step = -1;
    if (sv->hogwild)
        drain_updaters(sv, rec);
    rec->lock = NULL; // the updaters are idle until the next epoch
    psx_barrier_napping(MPI_COMM_WORLD);
    sync_mark(sv->s, rec, TRACE_WAIT, 0, 0, NULL);
    *updates += atomic_load(&sv->applied) - before;
}
