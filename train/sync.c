/* sync — the MPI side of data-parallel training. */
#define _POSIX_C_SOURCE 200809L
#include "train/sync.h"

#include "comm/psx.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double sync_now(const sync_ctx *s) { return mono_s() - s->origin_s; }

/* Adds e (t0 = the mark) to rec's trace and moves the mark to e->t1_s; the event as
 * stored, NULL when nothing is (no trace, or out of memory). */
static trace_event *mark_event(sync_rec *rec, trace_event *e) {
    trace_event *added = NULL;
    if (rec->tr) {
        e->rank = rec->rank;
        e->t0_s = rec->mark_s;
        e->epoch = rec->epoch;
        e->step = rec->step;
        if (rec->lock)
            pthread_mutex_lock(rec->lock);
        if (trace_add(rec->tr, e))
            rec->oom = 1;
        else
            added = &rec->tr->events[rec->tr->n_events - 1];
        if (rec->lock)
            pthread_mutex_unlock(rec->lock);
    }
    rec->mark_s = e->t1_s;
    return added;
}

trace_event *sync_mark_until(sync_rec *rec, trace_phase ph, double t1_s, long bytes, long examples, const char *name) {
    trace_event e = { .ph = ph, .t1_s = t1_s, .bytes = bytes, .examples = examples };
    snprintf(e.name, sizeof e.name, "%s", name ? name : "");
    return mark_event(rec, &e);
}

void sync_mark_update(const sync_ctx *s, sync_rec *rec, long staleness, bool background) {
    trace_event e = { .ph = TRACE_UPDATE, .t1_s = sync_now(s), .name = "sgd", .background = background,
                      .has_staleness = true, .staleness = staleness };
    mark_event(rec, &e);
}

void sync_mark_background(const sync_ctx *s, sync_rec *rec, trace_phase ph, double t0_s, long bytes, const char *name) {
    trace_event e = { .ph = ph, .t1_s = sync_now(s), .bytes = bytes, .background = true };
    snprintf(e.name, sizeof e.name, "%s", name ? name : "");
    const double mark_s = rec->mark_s;
    rec->mark_s = t0_s;
    mark_event(rec, &e);
    rec->mark_s = mark_s;
}

trace_event *sync_mark(const sync_ctx *s, sync_rec *rec, trace_phase ph, long bytes, long examples, const char *name) {
    return sync_mark_until(rec, ph, sync_now(s), bytes, examples, name);
}

/* Collective: does this rank share rank 0's machine (MPI's shared-memory domain)? */
static bool shares_machine_with_rank0(void) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Group world_group, node_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    int zero = 0, there = MPI_UNDEFINED;
    MPI_Group_translate_ranks(world_group, 1, &zero, node_group, &there);
    MPI_Group_free(&world_group);
    MPI_Group_free(&node_group);
    MPI_Comm_free(&node);
    return there != MPI_UNDEFINED;
}

int sync_init(sync_ctx *s, int mpi, job_sync sync, job_topology topology, job_master master,
              char *err, int errlen) {
    memset(s, 0, sizeof *s);
    s->sync = sync;
    s->topology = topology;
    s->master = master;
    s->world = 1;
    const double t_begin = mono_s();
    int threads = MPI_THREAD_SINGLE;
    if (mpi) {
        if (sync == JOB_SYNC_HOGWILD)
            MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &threads);
        else
            MPI_Init(NULL, NULL);
        s->mpi = 1;
        MPI_Comm_rank(MPI_COMM_WORLD, &s->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &s->world);
        MPI_Barrier(MPI_COMM_WORLD);
        const double t_bar = mono_s();
        double mine = t_bar - t_begin, most = mine;
        MPI_Allreduce(&mine, &most, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        // Barrier exit is the same instant on every rank: call it `most` on all of them.
        s->origin_s = t_bar - most;
    } else {
        s->origin_s = t_begin;
    }
    s->init_t0_s = t_begin - s->origin_s;
    s->init_t1_s = sync_now(s);
    const int dedicated = master == JOB_MASTER_DEDICATED;
    s->train_rank = dedicated ? s->rank - 1 : s->rank;
    s->train_world = dedicated ? s->world - 1 : s->world;
    if (dedicated && (topology != JOB_TOPO_PS || s->world < 2)) {
        snprintf(err, (size_t)errlen, "--master dedicated needs --topology ps and 2 or more ranks (got %s, %d)",
                 job_topology_name(topology), s->world);
        return -1;
    }
    if (job_sync_is_async(sync) && !dedicated) {
        snprintf(err, (size_t)errlen, "--sync %s needs a dedicated parameter server: rank 0 serves, ranks 1.. train",
                 sync == JOB_SYNC_ASYNC ? "async" : "hogwild");
        return -1;
    }
    if (mpi && job_sync_is_async(sync))
        s->beside_master = shares_machine_with_rank0();
    if (mpi && sync == JOB_SYNC_HOGWILD && threads < MPI_THREAD_FUNNELED) {
        snprintf(err, (size_t)errlen, "--sync hogwild: this MPI provides no MPI_THREAD_FUNNELED (thread level %d): "
                 "the master's updater threads need it", threads);
        return -1;
    }
    return 0;
}

int sync_reserve(sync_ctx *s, long n) {
    // An async master receives pushes into its own gradients (train/asyncps.h).
    if (!s->mpi || s->world == 1 || s->rank != 0 || s->topology != JOB_TOPO_PS || s->ps_recv ||
        job_sync_is_async(s->sync))
        return 0;
    const long floats = psx_recv_floats(n);
    s->ps_recv = malloc(sizeof *s->ps_recv * (size_t)(floats > 0 ? floats : 1));
    return s->ps_recv ? 0 : -1;
}

void sync_release(sync_ctx *s) {
    free(s->ps_recv);
    s->ps_recv = NULL;
}

void sync_finish(sync_ctx *s) {
    sync_release(s);
    if (s->mpi)
        MPI_Finalize();
    s->mpi = 0;
}

void sync_abort(sync_ctx *s, int code) {
    if (s->mpi)
        MPI_Abort(MPI_COMM_WORLD, code);
}

int sync_agree(sync_ctx *s, int failed, char *err, int errlen) {
    if (!s->mpi || s->world == 1)
        return failed != 0;
    int mine = failed ? s->rank : INT_MAX, first = INT_MAX;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (first == INT_MAX)
        return 0;
    char msg[1024];
    if (s->rank == first)
        snprintf(msg, sizeof msg, "%s", err);
    MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, first, MPI_COMM_WORLD);
    msg[sizeof msg - 1] = '\0';
    if (first > 0)
        snprintf(err, (size_t)errlen, "rank %d: %s", first, msg);
    else
        snprintf(err, (size_t)errlen, "%s", msg);
    return 1;
}

/* MPI counts are ints: long buffers go in chunks. */
#define CHUNK (1L << 28)

void sync_bcast(sync_ctx *s, void *buf, long bytes) {
    if (!s->mpi || s->world == 1)
        return;
    for (long off = 0; off < bytes; off += CHUNK) {
        long n = bytes - off < CHUNK ? bytes - off : CHUNK;
        MPI_Bcast((char *)buf + off, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

double sync_sum(sync_ctx *s, double v) {
    if (!s->mpi || s->world == 1)
        return v;
    double sum = 0.0;
    MPI_Allreduce(&v, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

long sync_sum_long(sync_ctx *s, long v) {
    if (!s->mpi || s->world == 1)
        return v;
    long sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static void floats_allreduce(float *x, long n) {
    for (long off = 0; off < n; off += CHUNK)
        MPI_Allreduce(MPI_IN_PLACE, x + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
}

/* A dedicated master has nothing to do until every worker arrives: it naps
 * (psx_barrier_napping) rather than busy-poll a core the workers need. Workers still poll:
 * they are on the critical path. */
static void dedicated_wait_for_all(const sync_ctx *s) {
    if (s->train_rank < 0) {
        psx_barrier_napping(MPI_COMM_WORLD);
        return;
    }
    MPI_Request req; // the master's barrier is nonblocking: a blocking one would not match it
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
}

/* The wait: a barrier, so that the transfer's time is not the slowest rank's lateness. */
static void wait_for_all(const sync_ctx *s, sync_rec *rec) {
    if (s->master == JOB_MASTER_DEDICATED)
        dedicated_wait_for_all(s);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    sync_mark(s, rec, TRACE_WAIT, 0, 0, NULL);
}

static long model_bytes(const net *n) { return (long)sizeof(float) * n->n_params; }

/* The weights' sum over the training ranks becomes their mean: an update of its own. */
static void mean_update(const sync_ctx *s, sync_rec *rec, net *n) {
    const float scale = 1.0f / (float)s->train_world;
    for (long i = 0; i < n->n_params; i++)
        n->params[i] *= scale;
    sync_mark(s, rec, TRACE_UPDATE, 0, 0, "average");
}

void sync_local_update(const sync_ctx *s, sync_rec *rec, net *n, const sync_sgd *opt) {
    net_update(n, opt->lr, opt->momentum, opt->weight_decay);
    sync_mark(s, rec, TRACE_UPDATE, 0, 0, "sgd");
}

/* Rank 0's turn in the ps exchange: the pushes are in, so their comm ends; then the update
 * (or the scale to the mean), its own phase, before the pulls. */
typedef struct {
    const sync_ctx *s;
    sync_rec *rec;
    net *n;
    const sync_sgd *opt;       /* NULL: averaging */
} master_turn;

static void master_update(void *ctx) {
    master_turn *m = ctx;
    sync_mark(m->s, m->rec, TRACE_COMM, model_bytes(m->n), 0, "ps");
    if (m->opt)
        sync_local_update(m->s, m->rec, m->n, m->opt);
    else
        mean_update(m->s, m->rec, m->n);
}

/* ps: push = the summed block (grads or weights), pull = the weights. Records the last
 * comm: rank 0's pulls, every other rank's push..pull. */
static void ps_exchange(const sync_ctx *s, net *n, float *push, const sync_sgd *opt, sync_rec *rec) {
    master_turn m = { s, rec, n, opt };
    psx_exchange(MPI_COMM_WORLD, push, n->params, n->n_params, s->ps_recv, master_update, &m);
    sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "ps");
}

void sync_step(sync_ctx *s, net *n, const sync_sgd *opt, sync_rec *rec) {
    if (!s->mpi || s->world == 1) {
        sync_local_update(s, rec, n, opt);
        return;
    }
    wait_for_all(s, rec);
    if (s->topology == JOB_TOPO_ALLREDUCE) {
        floats_allreduce(n->grads, n->n_params);
        sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "allreduce");
        sync_local_update(s, rec, n, opt);
        return;
    }
    if (s->train_rank < 0) // a dedicated master's share of the sum
        memset(n->grads, 0, sizeof(float) * (size_t)n->n_params);
    ps_exchange(s, n, n->grads, opt, rec);
}

void sync_average(sync_ctx *s, net *n, sync_rec *rec) {
    if (!s->mpi || s->world == 1)
        return;
    wait_for_all(s, rec);
    if (s->train_rank < 0)
        memset(n->params, 0, sizeof(float) * (size_t)n->n_params);
    if (s->topology == JOB_TOPO_ALLREDUCE) {
        floats_allreduce(n->params, n->n_params);
        sync_mark(s, rec, TRACE_COMM, model_bytes(n), 0, "allreduce");
        mean_update(s, rec, n);
        return;
    }
    ps_exchange(s, n, n->params, NULL, rec);
}

/* Point-to-point float blocks, chunked so that no count overflows an int. */
static void send_floats(const float *x, long n, int to) {
    for (long off = 0; off < n; off += CHUNK)
        MPI_Send(x + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_FLOAT, to, 9, MPI_COMM_WORLD);
}
static void recv_floats(float *x, long n, int from) {
    for (long off = 0; off < n; off += CHUNK)
        MPI_Recv(x + off, (int)(n - off < CHUNK ? n - off : CHUNK), MPI_FLOAT, from, 9, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

void sync_gather_floats(sync_ctx *s, const float *mine, long n, float *scratch,
                        void (*put)(void *ctx, const float *block), void *ctx) {
    if (!s->mpi || s->world == 1)
        return;
    for (int r = 1; r < s->world; r++) {
        if (s->rank == 0) {
            recv_floats(scratch, n, r);
            put(ctx, scratch);
        } else if (s->rank == r) {
            send_floats(mine, n, 0);
        }
    }
}

void sync_scatter_floats(sync_ctx *s, float *mine, long n, float *scratch,
                         void (*get)(void *ctx, int rank, float *block), void *ctx) {
    if (!s->mpi || s->world == 1)
        return;
    for (int r = 1; r < s->world; r++) {
        if (s->rank == 0) {
            get(ctx, r, scratch);
            send_floats(scratch, n, r);
        } else if (s->rank == r) {
            recv_floats(mine, n, 0);
        }
    }
}

int sync_gather_trace(sync_ctx *s, trace *tr) {
    if (!s->mpi || s->world == 1)
        return 0;
    // Rank 0 grows its own event array to the total and receives in place after its own
    // events: no second copy of the whole trace.
    long mine = tr ? tr->n_events : 0;
    long *counts = s->rank == 0 ? calloc((size_t)s->world, sizeof *counts) : NULL;
    int ok = s->rank != 0 || counts;
    MPI_Gather(&mine, 1, MPI_LONG, counts, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    long total = 0;
    if (s->rank == 0 && counts) {
        for (int r = 0; r < s->world; r++)
            total += counts[r];
        if (tr && total > tr->cap_events) {
            trace_event *ev = realloc(tr->events, sizeof *ev * (size_t)total);
            if (ev) {
                tr->events = ev;
                tr->cap_events = total;
            } else {
                ok = 0;
            }
        }
        ok = ok && tr;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!ok) {
        free(counts);
        return -1;
    }
    // Rank by rank, so that no count overflows an int.
    const int ev_bytes = (int)sizeof(trace_event);
    for (int r = 1; r < s->world; r++) {
        if (s->rank == 0) {
            for (long off = 0; off < counts[r];) {
                int n = (int)(counts[r] - off < CHUNK / ev_bytes ? counts[r] - off : CHUNK / ev_bytes);
                MPI_Recv(tr->events + tr->n_events, n * ev_bytes, MPI_BYTE, r, 7, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
                tr->n_events += n;
                off += n;
            }
        } else if (s->rank == r) {
            for (long off = 0; off < mine;) {
                int n = (int)(mine - off < CHUNK / ev_bytes ? mine - off : CHUNK / ev_bytes);
                MPI_Send(tr->events + off, n * ev_bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
                off += n;
            }
        }
    }
    free(counts);
    return 0;
}

void sync_gather_value(sync_ctx *s, double mine, double *out, int max) {
    if (out && max > 0 && s->rank == 0)
        out[0] = mine;
    if (!s->mpi || s->world == 1)
        return;
    // Point to point: rank 0 needs no buffer beyond out.
    for (int r = 1; r < s->world; r++) {
        if (s->rank == 0) {
            double v = 0.0;
            MPI_Recv(&v, 1, MPI_DOUBLE, r, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (out && r < max)
                out[r] = v;
        } else if (s->rank == r) {
            MPI_Send(&mine, 1, MPI_DOUBLE, 0, 8, MPI_COMM_WORLD);
        }
    }
}
