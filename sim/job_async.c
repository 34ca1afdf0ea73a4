/* job_async — async and hogwild on the engine (sim/job.h): every worker's steps, requests
 * to the master, the updates, the epoch's barrier, and the staleness of every gradient.
 * Top to bottom: life cycle, the master, the workers, the epoch.
 *
 * What it plays is train/asyncps.h's protocol, with model/costmodel.h's times:
 *   a worker   at the start of every N-th step (step % N == 0) requests a pull; its
 *              steps are drawn as job.c draws them (log-normal or replayed: slowed by ρ'
 *              where ranks outnumber the cores); after each step it requests a push;
 *              it goes on when its request has been served (the transfer, m_w: its
 *              message time, local or across the network, with the wake of a master
 *              crowded by its workers: costmodel_message_time). After its s-th step it waits
 *              at the epoch's barrier.
 *   the master takes a push in and sends a pull out at the same time, one of each at a
 *              time, each direction's requests in arrival order (its link is full duplex,
 *              and it lets one block in and one out: comm/psx.h). A pull is m_w (the
 *              worker gets the version as the transfer starts; a master crowded by its
 *              workers first has to win a core back, and reads the weights when its wake
 *              is over: updates that end meanwhile are in them); a push is m_w, and the
 *              worker goes on when it is in.
 *   async      after a push the master applies the update u_T (costmodel_update_time)
 *              and starts nothing else meanwhile; its worker's next pull waits for it.
 *   hogwild    a push that is in goes to one of T updaters (u_1 each, on one core: u·ρ');
 *              a push at the head of its queue while all T update waits for one to
 *              finish. A pull never waits for an update.
 * Neither the go before a push's block nor the word after a pull's is timed: a small
 * message's latency, against a block's transfer.
 * The staleness of a gradient is the version (updates completed) when its update starts
 * less the version its worker pulled. The barrier releases when every worker is there
 * and the master is idle with nothing queued or being applied; then the next epoch
 * starts with every worker's pull, in worker order. Each worker's time is startup +
 * compute + comm (its transfers) + wait (queueing at the master and the barrier) =
 * the makespan; update is 0 (the master's). Ties at equal times run in the order the
 * engine scheduled them (sim/engine.h).
 */
#include "sim/job_parts.h"
#include "model/contention.h"

#include <stdlib.h>
#include <string.h>

static void on_served(void *ctx, int w);
static void on_updated(void *ctx, int w);
static void on_astep(void *ctx, int w);
static void on_copied(void *ctx, int w);

// ---------------------------------------------------------------------------------------
// Life cycle

int job_async_new(job *j) {
    const job_config *c = &j->spec.config;
    const size_t k = (size_t)j->k;
    j->msg_s = malloc(sizeof *j->msg_s * k);
    j->in_queue = malloc(sizeof *j->in_queue * k);
    j->out_queue = malloc(sizeof *j->out_queue * k);
    j->pull_deferred = malloc(sizeof *j->pull_deferred * k);
    j->req_kind = malloc(sizeof *j->req_kind * k);
    j->req_t_s = malloc(sizeof *j->req_t_s * k);
    j->steps_done = malloc(sizeof *j->steps_done * k);
    j->pulled = malloc(sizeof *j->pulled * k);
    j->stale_cap = 64;
    j->stale_count = calloc((size_t)j->stale_cap, sizeof *j->stale_count);
    if (!j->msg_s || !j->in_queue || !j->out_queue || !j->pull_deferred || !j->req_kind || !j->req_t_s ||
        !j->steps_done || !j->pulled || !j->stale_count)
        return -1;
    /* A dedicated master: every worker messages it, those on its machine by shared memory. */
    for (int w = 0; w < j->k; w++)
        j->msg_s[w] = w < j->workers_on_master ? j->msg_local_s : j->msg_remote_s;
    j->update_one_s = j->spec.params.update_s * costmodel_slowdown(&j->spec.params, c); /* one core */
    j->wake_s = contention_master_wake(&j->spec.params, c);
    j->k_served = engine_kind(j->e, on_served, j);
    j->k_updated = engine_kind(j->e, on_updated, j);
    j->k_astep = engine_kind(j->e, on_astep, j);
    j->k_copied = engine_kind(j->e, on_copied, j);
    return j->k_served < 0 || j->k_updated < 0 || j->k_astep < 0 || j->k_copied < 0 ? -1 : 0;
}

void job_async_free(job *j) {
    free(j->msg_s);
    free(j->in_queue);
    free(j->out_queue);
    free(j->pull_deferred);
    free(j->req_kind);
    free(j->req_t_s);
    free(j->steps_done);
    free(j->pulled);
    free(j->stale_count);
}

void job_async_reset(job *j) {
    j->in_head = j->in_len = j->out_head = j->out_len = 0;
    j->out_busy = j->applying = false;
    j->in_worker = -1;
    memset(j->pull_deferred, 0, sizeof *j->pull_deferred * (size_t)j->k);
    j->updating = 0;
    j->version = 0;
    j->at_barrier = 0;
    j->stale_n = 0;
    j->stale_sum = 0;
    memset(j->stale_count, 0, sizeof *j->stale_count * (size_t)j->stale_cap);
}

/* Counts one gradient of staleness v (the table grows by doubling; an allocation failure
 * stops the engine, whose run then reports it). */
static void count_staleness(job *j, long v) {
    if (v >= j->stale_cap) {
        long cap = j->stale_cap;
        while (cap <= v)
            cap *= 2;
        long *grown = realloc(j->stale_count, sizeof *grown * (size_t)cap);
        if (!grown) {
            engine_stop(j->e);
            return;
        }
        memset(grown + j->stale_cap, 0, sizeof *grown * (size_t)(cap - j->stale_cap));
        j->stale_count = grown;
        j->stale_cap = cap;
    }
    j->stale_count[v]++;
    j->stale_n++;
    j->stale_sum += (double)v;
}

/* The i-th smallest staleness (0-based) of the counted ones. */
static double staleness_at(const job *j, long i) {
    long seen = 0;
    for (long v = 0; v < j->stale_cap; v++) {
        seen += j->stale_count[v];
        if (seen > i)
            return (double)v;
    }
    return 0;
}

/* GSL's gsl_stats_quantile_from_sorted_data on the counted values: linear between the
 * order statistics at q·(n − 1). */
static double staleness_quantile(const job *j, double q) {
    if (j->stale_n == 0)
        return 0;
    const double h = q * (double)(j->stale_n - 1);
    const long lo = (long)floor(h);
    const double a = staleness_at(j, lo), b = lo + 1 < j->stale_n ? staleness_at(j, lo + 1) : a;
    return a + (h - (double)lo) * (b - a);
}

void job_async_result(job *j, job_result *r) {
    for (int w = 0; w < j->k; w++) {
        r->startup_s += j->acc[w].startup_s;
        r->compute_s += j->acc[w].compute_s;
        r->comm_s += j->acc[w].comm_s;
        r->wait_s += j->acc[w].wait_s;
    }
    r->startup_s /= j->k;
    r->compute_s /= j->k;
    r->comm_s /= j->k;
    r->wait_s /= j->k;
    r->barrier_wait_s = j->rounds_done ? j->barrier_wait_total_s / ((double)j->rounds_done * j->k) : 0;
    /* Weights, momentum and the gradient it receives into; hogwild: T gradient buffers and
     * the copy a pull sends (model/memory.h). */
    const double m = j->spec.params.model_bytes;
    r->master_peak_bytes = j->async == JOB_HOGWILD ? (3.0 + j->spec.config.cores) * m : 3.0 * m;
    r->updates = j->stale_n;
    r->staleness_median = staleness_quantile(j, 0.5);
    r->staleness_p90 = staleness_quantile(j, 0.9);
    r->staleness_mean = j->stale_n ? j->stale_sum / (double)j->stale_n : 0;
}

// ---------------------------------------------------------------------------------------
// The master: a push in and a pull out at a time, each direction in arrival order

/* Worker w's request leaves its queue: the wait is over and its transfer starts. */
static void begin_transfer(job *j, int w) {
    const double now = engine_now(j->e);
    j->acc[w].wait_s += now - j->req_t_s[w];
    job_emit(j, w, TRACE_WAIT, j->req_t_s[w], now);
    j->req_t_s[w] = now; /* from here: its transfer */
    engine_after(j->e, j->msg_s[w], j->k_served, w);
}

/* A ring of K workers: w joins at the tail; the head leaves. */
static void ring_add(const job *j, int *ring, long head, long *len, int w) {
    ring[(head + *len) % j->k] = w;
    (*len)++;
}

static int ring_take(const job *j, const int *ring, long *head, long *len) {
    const int w = ring[*head];
    *head = (*head + 1) % j->k;
    (*len)--;
    return w;
}

/* Starts the pushes and pulls at the heads of the queues whose direction is free (not
 * while an async update is applied; hogwild: a push when an updater is idle). */
static void serve_next(job *j) {
    if (j->applying)
        return;
    if (j->in_worker < 0 && j->in_len > 0 && !(j->async == JOB_HOGWILD && j->updating == j->spec.config.cores)) {
        j->in_worker = ring_take(j, j->in_queue, &j->in_head, &j->in_len);
        begin_transfer(j, j->in_worker);
    }
    if (!j->out_busy && j->out_len > 0) {
        const int w = ring_take(j, j->out_queue, &j->out_head, &j->out_len);
        j->out_busy = true;
        if (j->wake_s > 0)
            engine_after(j->e, j->wake_s, j->k_copied, w); /* before the transfer's end */
        else
            j->pulled[w] = j->version;
        begin_transfer(j, w);
    }
}

/* A crowded master reads the weights a pull sends once it has won a core back: the
 * version then, updates that ended during its wake included. */
static void on_copied(void *ctx, int w) {
    job *j = ctx;
    j->pulled[w] = j->version;
}

static void request(job *j, int w, int kind) {
    j->req_kind[w] = kind;
    j->req_t_s[w] = engine_now(j->e);
    if (kind == JOB_PUSH)
        ring_add(j, j->in_queue, j->in_head, &j->in_len, w);
    else if (j->async == JOB_ASYNC && j->in_worker == w)
        j->pull_deferred[w] = true; /* its own push is still being applied */
    else
        ring_add(j, j->out_queue, j->out_head, &j->out_len, w);
    serve_next(j);
}

static void next_action(job *j, int w);
static void check_epoch_end(job *j);

/* A transfer is over: the worker goes on. A push that is in is applied (async: by the
 * master, its direction held until the update is done; hogwild: by an updater); a pull's
 * direction is free. */
static void on_served(void *ctx, int w) {
    job *j = ctx;
    const double now = engine_now(j->e);
    j->acc[w].comm_s += now - j->req_t_s[w];
    job_emit(j, w, TRACE_COMM, j->req_t_s[w], now);
    if (j->req_kind[w] == JOB_PUSH) {
        count_staleness(j, j->version - j->pulled[w]);
        if (j->async == JOB_ASYNC) {
            j->applying = true;
            engine_after(j->e, j->update_s, j->k_updated, w);
        } else {
            j->in_worker = -1;
            j->updating++;
            engine_after(j->e, j->update_one_s, j->k_updated, w);
        }
        j->steps_done[w]++;
    } else {
        j->out_busy = false;
    }
    next_action(j, w);
    serve_next(j);
}

static void on_updated(void *ctx, int w) {
    job *j = ctx;
    j->version++;
    if (j->async == JOB_ASYNC) {
        j->applying = false;
        j->in_worker = -1;
        if (j->pull_deferred[w]) {
            j->pull_deferred[w] = false;
            ring_add(j, j->out_queue, j->out_head, &j->out_len, w);
        }
    } else {
        j->updating--;
    }
    serve_next(j);
    check_epoch_end(j);
}

// ---------------------------------------------------------------------------------------
// The workers

static void start_astep(job *j, int w) {
    const double d = job_draw_step(j, w), now = engine_now(j->e);
    j->step_start_s[w] = now;
    j->acc[w].compute_s += d;
    engine_after(j->e, d, j->k_astep, w);
}

static void on_astep(void *ctx, int w) {
    job *j = ctx;
    const double now = engine_now(j->e);
    job_emit(j, w, TRACE_COMPUTE, j->step_start_s[w], now);
    request(j, w, JOB_PUSH);
}

/* After a request (or at an epoch's start): a pull every N steps, a step, or the barrier. */
static void next_action(job *j, int w) {
    const long done = j->steps_done[w];
    if (done == j->sched.steps_per_epoch) {
        j->arrive_s[w] = engine_now(j->e);
        j->at_barrier++;
        check_epoch_end(j);
    } else if (done % j->spec.config.every_n == 0 && j->req_kind[w] != JOB_PULL) {
        request(j, w, JOB_PULL);
    } else {
        j->req_kind[w] = -1; /* the pull (if any) is done: the next request is a push */
        start_astep(j, w);
    }
}

// ---------------------------------------------------------------------------------------
// Epochs

static void begin_epoch(job *j) {
    for (int w = 0; w < j->k; w++) {
        j->steps_done[w] = 0;
        j->req_kind[w] = -1;
    }
    for (int w = 0; w < j->k; w++)
        next_action(j, w);
}

void job_async_start(job *j) { begin_epoch(j); }

/* The barrier: every worker there and the master idle. */
static void check_epoch_end(job *j) {
    if (j->at_barrier < j->k || j->in_worker >= 0 || j->out_busy || j->in_len > 0 || j->out_len > 0 || j->updating > 0)
        return;
    const double now = engine_now(j->e);
    for (int w = 0; w < j->k; w++) {
        j->acc[w].wait_s += now - j->arrive_s[w];
        j->barrier_wait_total_s += now - j->arrive_s[w];
        job_emit(j, w, TRACE_WAIT, j->arrive_s[w], now);
    }
    j->at_barrier = 0;
    j->rounds_done++;
    if (++j->epoch == j->spec.config.epochs) {
        j->finish_s = now;
        return;
    }
    begin_epoch(j);
}
