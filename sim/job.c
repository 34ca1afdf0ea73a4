#include "sim/job.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include "sim/engine.h"
#include "sim/job_parts.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

enum { JOB_MAX_WORKERS = 1 << 22 };

/* ---------------------------------------------------------------------------------- */
/* Replay: the measured per-step compute spans */

job_replay *job_replay_read(const char *path, char *err, int errlen) {
    trace *t = trace_read(path, err, errlen);
    if (!t)
        return NULL;
    size_t cap = (size_t)(t->n_events > 0 ? t->n_events : 1);
    job_replay *r = calloc(1, sizeof *r);
    double *steps = malloc(sizeof *steps * cap);
    long *examples = malloc(sizeof *examples * cap);
    if (!r || !steps || !examples) {
        errmsg_set(err, errlen, "%s: out of memory", path);
        free(r);
        free(steps);
        free(examples);
        trace_free(t);
        return NULL;
    }
    r->steps_s = steps;
    r->examples = examples;
    /* Only steps: a compute span of no examples (an empty slice, a dedicated master's
     * turn) is not a step of any worker (trace/traceinfo.h). */
    for (long i = 0; i < t->n_events; i++)
        if (traceinfo_is_step(&t->events[i])) {
            steps[r->n] = t->events[i].t1_s - t->events[i].t0_s;
            examples[r->n++] = t->events[i].examples;
        }
    r->config = t->run.config;
    r->host_cores = t->run.host_cores;
    trace_free(t);
    if (r->n == 0) {
        errmsg_set(err, errlen, "%s: no steps to replay (compute events with examples > 0)", path);
        job_replay_free(r);
        return NULL;
    }
    /* trace_read has checked every span: finite, t0 <= t1. */
    return r;
}

void job_replay_free(job_replay *r) {
    if (!r)
        return;
    free(r->steps_s);
    free(r->examples);
    free(r);
}

static void start_round(job *j);
static void end_round(job *j);
static void start_sync_update(job *j);
static void continue_exchange(job *j);
static void send_pull_on_cores(job *j);
static void reschedule_cores(job *j);
static void start_transfer(job *j);

/* Every worker spent [t0, t1] in ph together (comm, a synchronisation's update). */
static void emit_all(job *j, trace_phase ph, double t0, double t1) {
    if (j->span)
        for (int w = 0; w < j->k; w++)
            job_emit(j, w, ph, t0, t1);
}

/* Draws the round's n steps of every worker and, with the cores shared evenly at ρ,
 * stretches each worker's to when it ends under processor sharing: while K − l workers
 * still run, each runs (K − l)/K of the shared time per unit of its drawn steps, never
 * faster than a core of its own (1/ρ). The first to end gives its core to the others. */
static void draw_shared_round(job *j, long n) {
    j->round_n = n;
    for (int w = 0; w < j->k; w++) {
        double total = 0;
        for (long i = 0; i < n; i++)
            total += j->round_steps_s[(size_t)w * (size_t)n + (size_t)i] = job_draw_step(j, w);
        j->round_total_s[w] = total;
    }
    gsl_sort_index(j->round_order, j->round_total_s, 1, (size_t)j->k);
    double end = 0, before = 0;
    for (int l = 0; l < j->k; l++) {
        const size_t w = j->round_order[l];
        end += fmax(1.0 / j->shared_rho, (double)(j->k - l) / j->k) * (j->round_total_s[w] - before);
        before = j->round_total_s[w];
        j->round_stretch[w] = before > 0 ? end / before : 1.0;
    }
}

/* The worker's next step: drawn, or its share of the round drawn at its start. */
static double next_step(job *j, int w) {
    if (!j->round_steps_s)
        return job_draw_step(j, w);
    const long i = j->round_n - j->steps_left[w];
    return j->round_steps_s[(size_t)w * (size_t)j->round_n + (size_t)i] * j->round_stretch[w];
}

/* The cores' next event in place of the one pending (a rank began or ended its work). */
static void reschedule_cores(job *j) {
    if (j->cores_ev)
        engine_cancel(j->e, j->cores_ev);
    const double t = cores_next(j->cores);
    j->cores_ev = isfinite(t) ? engine_at(j->e, t, j->k_cores, 0) : NULL;
}

/* A step, and its update when the worker applies it itself: one event at the end of both
 * (the update is constant: no event of its own is needed). Where the cores are scheduled,
 * both are the rank's idle-core work, and the cores say when it ends (on_cores). */
static inline void start_step(job *j, int w) {
    double d = next_step(j, w);
    double u = j->update_at == UPDATE_AFTER_STEP ? j->step_update_s : 0.0;
    double now = engine_now(j->e);
    j->step_start_s[w] = now;
    if (j->cores) {
        j->step_part_s[w] = d + u > 0 ? d / (d + u) : 1.0;
        cores_begin(j->cores, w, d + u, now);
        reschedule_cores(j);
        return;
    }
    j->compute_end_s[w] = now + d;
    j->acc[w].compute_s += d;
    j->acc[w].update_s += u;
    engine_at(j->e, now + d + u, j->k_step, w);
}

/* ---------------------------------------------------------------------------------- */
/* Barrier and synchronisation */

/* What is left of a part of the exchange lasting d once the head start is spent on it. */
static double after_credit(job *j, double d) {
    double hidden = d < j->credit_s ? d : j->credit_s;
    j->credit_s -= hidden;
    return d - hidden;
}

/* The head start an overlapped exchange had when the barrier releases (see job.h): the
 * time since the last worker's first bucket was ready, max_w (arrival − φ·its last step),
 * at most the (1 − ε)·S(K) of it that can hide. */
static double overlap_credit(const job *j) {
    const costmodel_params *p = &j->spec.params;
    if (!j->overlapped)
        return 0;
    double now = engine_now(j->e), ready = -INFINITY;
    for (int w = 0; w < j->k; w++) {
        double at = j->arrive_s[w] - j->spec.params.overlap * (j->compute_end_s[w] - j->step_start_s[w]);
        if (at > ready)
            ready = at;
    }
    double hideable = (1.0 - p->overlap_exposed) * costmodel_sync_time(p, &j->spec.config);
    return now - ready > 0 ? fmin(now - ready, hideable) : 0;
}

/* The synchronisation: the transfer, less what an overlapped exchange already did. */
static void start_exchange(job *j) {
    j->comm_t0_s = engine_now(j->e);
    j->credit_s = overlap_credit(j);
    start_transfer(j);
}

/* One message per worker through the master's link, in worker order; a worker on
 * another machine than the master's crosses the network (contention_placement_of). */
static void send_to_workers(job *j, int kind) {
    if (j->spec.params.ps_shards >= 1) { /* sharded: a phase at once */
        engine_after(j->e, kind == j->k_push ? after_credit(j, j->shard_phase_s) : j->shard_phase_s, kind, 0);
        return;
    }
    int first = j->spec.config.master == JOB_MASTER_DEDICATED ? 0 : 1;
    for (int w = first; w < j->k; w++)
        engine_request_for(j->e, j->link, w < j->workers_on_master ? j->msg_local_s : j->msg_remote_s, kind, w);
}

/* The all-reduce's next step: the current stage's, or the first of the next stage that
 * has steps; when none is left, the update. */
static void next_ring_step(job *j) {
    while (j->stage_left == 0 && ++j->stage < j->n_stages)
        j->stage_left = j->stages[j->stage].steps;
    if (j->stage >= j->n_stages) {
        start_sync_update(j);
        return;
    }
    j->stage_left--;
    engine_after(j->e, after_credit(j, j->stages[j->stage].step_s), j->k_ring, 0);
}

static void start_transfer(job *j) {
    const job_config *c = &j->spec.config;
    j->msgs_done = 0;
    if (c->topology == JOB_TOPO_PS) {
        if (j->remote == 0) {
            start_sync_update(j);
            return;
        }
        send_to_workers(j, j->k_push);
    } else {
        if (j->k == 1) {
            start_sync_update(j);
            return;
        }
        j->stage = -1;
        j->stage_left = 0;
        next_ring_step(j);
    }
}

static void release(job *j) {
    double now = engine_now(j->e);
    double total = 0;
    for (int w = 0; w < j->k; w++) {
        double wait = now - j->arrive_s[w];
        j->acc[w].wait_s += wait;
        total += wait;
        job_emit(j, w, TRACE_WAIT, j->arrive_s[w], now);
    }
    j->arrived = 0;
    if (j->ph == PHASE_STARTUP) {
        j->ph = PHASE_TRAIN;
        if (j->async)
            job_async_start(j);
        else
            start_round(j);
        return;
    }
    j->barrier_wait_total_s += total;
    start_exchange(j);
}

static inline void arrive(job *j, int w) {
    j->arrive_s[w] = engine_now(j->e);
    if (++j->arrived == j->k)
        release(j);
}

/* The comm part of the exchange since comm_t0_s is over: every worker spent it, but one
 * that started its next round after its own pull (start_after_pull). */
static void close_comm(job *j) {
    double now = engine_now(j->e);
    if (!j->started) {
        j->comm_total_s += now - j->comm_t0_s;
        emit_all(j, TRACE_COMM, j->comm_t0_s, now);
    } else
        for (int w = 0; w < j->k; w++)
            if (!j->started[w]) {
                j->acc[w].comm_s += now - j->comm_t0_s;
                job_emit(j, w, TRACE_COMM, j->comm_t0_s, now);
            }
    j->comm_t0_s = now;
}

/* After the exchange's first part: the master's update before the pulls (ps), every
 * rank's after the all-reduce; nothing for local SGD (its updates follow its steps).
 * Every worker waits for it, so it is every worker's update time, as the exchange is
 * every worker's comm. */
static void start_sync_update(job *j) {
    if (j->update_at == UPDATE_AFTER_STEP || j->update_s == 0) {
        continue_exchange(j);
        return;
    }
    close_comm(j);
    j->update_t0_s = engine_now(j->e);
    engine_after(j->e, j->update_s, j->k_update, 0);
}

/* The master's pull to worker j->pulling, as work on its core (cores_of_host). */
static void send_pull_on_cores(job *j) {
    const int w = j->pulling;
    cores_begin(j->cores, j->master_entity, w < j->workers_on_master ? j->msg_local_s : j->msg_remote_s,
                engine_now(j->e));
    reschedule_cores(j);
}

/* After the update: the master sends the new model back one worker at a time (ps), or
 * the round is over. */
static void continue_exchange(job *j) {
    if (j->spec.config.topology != JOB_TOPO_PS || j->remote == 0) {
        end_round(j);
        return;
    }
    j->msgs_done = 0;
    if (j->cores && j->master_entity >= 0) {
        j->pulling = j->spec.config.master == JOB_MASTER_DEDICATED ? 0 : 1;
        send_pull_on_cores(j);
        return;
    }
    send_to_workers(j, j->k_pull);
}

/* ---------------------------------------------------------------------------------- */
/* Handlers */

static void on_startup(void *ctx, int w) {
    arrive(ctx, w);
}

static void on_step(void *ctx, int w);

static void on_pull(void *ctx, int w);

/* The master's pull on the cores ended: the worker has it, and the next pull begins. */
static void pull_sent(job *j) {
    const int w = j->pulling, last = j->k - 1;
    j->pulling = w < last ? w + 1 : -1;
    on_pull(j, w);
    if (j->pulling >= 0)
        send_pull_on_cores(j);
}

/* Entities whose work on the cores ended now, in order: a rank's step, or the master's
 * pull. */
static void on_cores(void *ctx, int unused) {
    job *j = ctx;
    (void)unused;
    j->cores_ev = NULL;
    const double now = engine_now(j->e);
    int *done = j->cores_done;
    const int n = cores_advance(j->cores, now, done);
    for (int i = 0; i < n; i++) {
        const int w = done[i];
        if (w == j->master_entity && j->pulling >= 0) {
            pull_sent(j);
            continue;
        }
        const double took = now - j->step_start_s[w], d = took * j->step_part_s[w];
        j->compute_end_s[w] = j->step_start_s[w] + d;
        j->acc[w].compute_s += d;
        j->acc[w].update_s += took - d;
        on_step(j, w);
    }
    reschedule_cores(j);
}

static void on_step(void *ctx, int w) {
    job *j = ctx;
    double now = engine_now(j->e);
    job_emit(j, w, TRACE_COMPUTE, j->step_start_s[w], j->compute_end_s[w]);
    job_emit(j, w, TRACE_UPDATE, j->compute_end_s[w], now);
    if (--j->steps_left[w] > 0)
        start_step(j, w);
    else
        arrive(j, w);
}

static void on_push(void *ctx, int w) {
    job *j = ctx;
    (void)w;
    if (++j->msgs_done == j->remote)
        start_sync_update(j); /* every push is in: the master averages and updates */
}

static void on_update(void *ctx, int unused) {
    job *j = ctx;
    (void)unused;
    double now = engine_now(j->e);
    j->sync_update_total_s += now - j->update_t0_s;
    emit_all(j, TRACE_UPDATE, j->update_t0_s, now);
    j->comm_t0_s = now;
    continue_exchange(j);
}

static long round_steps(const job *j, long round);

/* The steps of the round after the current one; 0 when the job ends with this one. */
static long next_round_steps(const job *j) {
    long round = j->round + 1;
    int epoch = j->epoch;
    if (round == j->sched.rounds_per_epoch) {
        round = 0;
        epoch++;
    }
    return epoch == j->spec.config.epochs ? 0 : round_steps(j, round);
}

/* Where the cores are scheduled, a parameter server's worker starts its next round as
 * soon as its own pull ends (experiments/placement: the ranks' starts follow the pulls),
 * not when the last pull does: it computes alone, or beside fewer ranks, meanwhile. Its
 * comm ends there; the rest of the exchange is every worker's (close_comm). */
static void start_after_pull(job *j, int w) {
    const long n = j->started ? next_round_steps(j) : 0;
    if (n == 0)
        return;
    const double now = engine_now(j->e);
    j->acc[w].comm_s += now - j->comm_t0_s;
    job_emit(j, w, TRACE_COMM, j->comm_t0_s, now);
    j->started[w] = true;
    j->steps_left[w] = n;
    start_step(j, w);
}

static void on_pull(void *ctx, int w) {
    job *j = ctx;
    if (++j->msgs_done == j->remote) {
        end_round(j);
        return;
    }
    start_after_pull(j, w);
}

static void on_ring(void *ctx, int unused) {
    (void)unused;
    next_ring_step(ctx);
}

/* ---------------------------------------------------------------------------------- */
/* Rounds and epochs */

static void end_round(job *j) {
    close_comm(j);
    j->rounds_done++;
    if (++j->round == j->sched.rounds_per_epoch) {
        j->round = 0;
        j->epoch++;
    }
    start_round(j);
}

static void start_round(job *j) {
    if (j->epoch == j->spec.config.epochs) {
        j->finish_s = engine_now(j->e);
        return;
    }
    const long n = round_steps(j, j->round);
    if (j->round_steps_s)
        draw_shared_round(j, n);
    for (int w = 0; w < j->k; w++) {
        if (j->started && j->started[w]) { /* after its own pull */
            j->started[w] = false;
            continue;
        }
        j->steps_left[w] = n;
        start_step(j, w);
    }
}

/* The steps of round `round` of an epoch (the last may be short). */
static long round_steps(const job *j, long round) {
    const long p = j->sched.steps_per_round, full = j->sched.steps_per_epoch / p;
    return round < full ? p : j->sched.steps_per_epoch % p;
}

/* ---------------------------------------------------------------------------------- */
/* Life cycle */

/* The replayed steps scaled to this config: each span by step(here) / step(the trace's
 * config at that span's own examples), so a short slice or an epoch's short last batch
 * counts as a full step taken at its measured speed, not as a fast one. NULL pool when
 * there is no replay; -1 out of memory. */
static int scale_replay(job *j) {
    const job_replay *rp = j->spec.replay;
    if (!rp)
        return 0;
    j->pool_s = malloc(sizeof *j->pool_s * (size_t)rp->n);
    if (!j->pool_s)
        return -1;
    j->pool_n = rp->n;
    costmodel_params at = j->spec.params;
    at.host_cores = rp->host_cores;
    at.machines = 0; /* the trace ran on one host */
    /* The model's step is affine in its slice: its value at 0 and its slope, once. */
    const double at_zero = costmodel_step_time_at(&at, &rp->config, 0.0);
    const double per_example = costmodel_step_time_at(&at, &rp->config, 1.0) - at_zero;
    for (long i = 0; i < rp->n; i++) {
        double measured = at_zero + per_example * (double)rp->examples[i];
        j->pool_s[i] = rp->steps_s[i] * (measured > 0 ? j->step_s / measured : 1.0);
    }
    return 0;
}

/* Where the update runs for c (see update_place). */
static update_place update_place_of(const job_config *c) {
    if (c->sync != JOB_SYNC_BATCH)
        return UPDATE_AFTER_STEP;
    return c->topology == JOB_TOPO_PS ? UPDATE_ON_MASTER : UPDATE_AFTER_RING;
}

/* Registers the handlers and the master's link: 0, or -1 out of memory. */
static int job_register(job *j) {
    j->k_startup = engine_kind(j->e, on_startup, j);
    j->k_step = engine_kind(j->e, on_step, j);
    j->k_push = engine_kind(j->e, on_push, j);
    j->k_update = engine_kind(j->e, on_update, j);
    j->k_pull = engine_kind(j->e, on_pull, j);
    j->k_ring = engine_kind(j->e, on_ring, j);
    j->k_cores = engine_kind(j->e, on_cores, j);
    j->link = engine_resource(j->e, 0, 0); /* each message states its own time */
    return j->k_startup < 0 || j->k_step < 0 || j->k_push < 0 || j->k_update < 0 || j->k_pull < 0 || j->k_ring < 0 || j->k_cores < 0 ||
                   j->link < 0
               ? -1
               : 0;
}

/* The mean step and the log-normal it is drawn from: with mean m and coefficient of
 * variation CV, σ² = ln(1 + CV²) and ζ = ln m − σ²/2. */
static void set_step(job *j, double step_s) {
    j->step_s = step_s;
    j->sigma_ln = j->zeta = 0;
    if (j->spec.params.cv > 0 && step_s > 0) {
        double s2 = log1p(j->spec.params.cv * j->spec.params.cv);
        j->sigma_ln = sqrt(s2);
        j->zeta = log(step_s) - s2 / 2;
    }
}

/* Can the simulator schedule c's cores itself: a synchronous job on one host of whole
 * cores whose ranks share them, one core a worker (a worker of T threads, a cluster's
 * machines, or a what-if of 1.5 cores take the closed form's ρ')? */
static bool schedules_cores(const job_spec *spec) {
    const costmodel_params *p = &spec->params;
    const job_config *c = &spec->config;
    return spec->contention == JOB_CONTENTION_SCHEDULED && !job_sync_is_async(c->sync) && p->machines < 2 &&
           c->cores == 1 && p->host_cores >= 1 && p->host_cores == floor(p->host_cores) &&
           p->host_cores <= JOB_MAX_WORKERS && contention_shares_cores(p, c);
}

/* The cores of the host, where the simulator schedules them: the steps are then drawn at
 * their idle-core time, and the cores slow them. 0, or -1 out of memory. */
static int cores_of_host(job *j) {
    if (!schedules_cores(&j->spec))
        return 0;
    const costmodel_params *p = &j->spec.params;
    const job_config *c = &j->spec.config;
    /* A parameter server of one master sends each pull from its own core: the master is
     * an entity on the cores (rank 0, or one more for a dedicated master), so a pull sent
     * while workers compute beside it takes its share of a core. */
    const bool master_sends = c->topology == JOB_TOPO_PS && p->ps_shards < 1 && j->remote > 0;
    const int dedicated = c->master == JOB_MASTER_DEDICATED;
    j->master_entity = master_sends ? (dedicated ? j->k : 0) : -1;
    j->cores = cores_new(j->k + (master_sends && dedicated), (int)p->host_cores);
    if (j->cores)
        cores_set_rotating(j->cores, j->k);
    j->step_part_s = malloc(sizeof *j->step_part_s * (size_t)j->k);
    j->cores_done = malloc(sizeof *j->cores_done * (size_t)(j->k + 1));
    j->started = calloc((size_t)j->k, sizeof *j->started);
    if (!j->cores || !j->step_part_s || !j->cores_done || !j->started)
        return -1;
    /* κ as the fit measured it: whole in rounds of one step, spread over a longer round's
     * idle seconds past τ_κ (contention_round_weight). */
    cores_set(j->cores, &(cores_policy){ .kappa = p->oversub_compute * contention_round_weight(p, c),
                                         .tau_s = p->balance_s,
                                         .napping = p->waits_block > 0,
                                         .background = contention_master_cores(p, c) / p->host_cores });
    costmodel_params idle = *p;
    idle.contention_off = 1;
    set_step(j, costmodel_step_time(&idle, c));
    j->step_update_s = costmodel_update_time(&idle, c);
    j->shared_rho = 1.0; /* the cores share themselves */
    return 0;
}

/* The round's draws where ranks share the cores (synchronous modes): 0, or -1 out of memory. */
static int shared_round_new(job *j) {
    if (j->async || !(j->shared_rho > 1.0))
        return 0;
    const size_t k = (size_t)j->k;
    j->round_steps_s = malloc(sizeof *j->round_steps_s * k * (size_t)j->sched.steps_per_round);
    j->round_total_s = malloc(sizeof *j->round_total_s * k);
    j->round_stretch = malloc(sizeof *j->round_stretch * k);
    j->round_order = malloc(sizeof *j->round_order * k);
    return j->round_steps_s && j->round_total_s && j->round_stretch && j->round_order ? 0 : -1;
}

job *job_new(const job_spec *spec, char *err, int errlen) {
    char why[256];
    if (costmodel_check(&spec->params, &spec->config, why, sizeof why)) {
        errmsg_set(err, errlen, "%s", why);
        return NULL;
    }
    if (spec->config.workers > JOB_MAX_WORKERS) {
        errmsg_set(err, errlen, "workers must be <= %d (got %d)", JOB_MAX_WORKERS, spec->config.workers);
        return NULL;
    }
    job *j = calloc(1, sizeof *j);
    if (!j) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    j->spec = *spec;
    j->k = spec->config.workers;
    j->sched = job_schedule_of(&spec->config);
    j->overlapped = costmodel_overlapped(&spec->params, &spec->config);
    j->update_s = costmodel_update_time(&spec->params, &spec->config);
    j->update_at = update_place_of(&spec->config);
    set_step(j, costmodel_step_time(&spec->params, &spec->config));
    const job_config *c = &spec->config;
    j->remote = c->topology == JOB_TOPO_PS ? (c->master == JOB_MASTER_DEDICATED ? j->k : j->k - 1) : 0;
    if (c->topology == JOB_TOPO_PS && spec->params.ps_shards >= 1) { /* one event a phase */
        j->remote = j->k > 1 ? 1 : 0;
        /* Two phases a round; where the line's floor binds, each takes half of its excess
         * (costmodel_exposed_sync_time: the round's exchange is at least that excess). */
        j->shard_phase_s = fmax(costmodel_ps_local_time(&spec->params, c) + costmodel_ps_phase_time(&spec->params, c),
                                0.5 * costmodel_line_floor_excess(&spec->params, c));
    }
    j->workers_on_master = contention_placement_of(&spec->params, c).workers_on_master;
    j->msg_local_s = costmodel_message_time(&spec->params, c, false);
    j->msg_remote_s = costmodel_message_time(&spec->params, c, true);
    j->n_stages = c->topology == JOB_TOPO_ALLREDUCE ? costmodel_allreduce_stages(&spec->params, c, j->stages) : 0;
    const double shared_exchange_s = contention_exchange_time(&spec->params, c);
    if (shared_exchange_s > 0) /* the ring's wait for partners without a core, after its steps */
        j->stages[j->n_stages++] = (costmodel_stage){ .steps = 1, .step_s = shared_exchange_s };
    j->async = c->sync == JOB_SYNC_ASYNC ? JOB_ASYNC : c->sync == JOB_SYNC_HOGWILD ? JOB_HOGWILD : JOB_SYNC;
    j->shared_rho = contention_shared_rho(&spec->params, c);
    j->step_update_s = j->update_s;
    j->master_entity = j->pulling = -1; /* the pulls go through the link (cores_of_host) */

    size_t k = (size_t)j->k;
    j->arrive_s = malloc(sizeof *j->arrive_s * k);
    j->step_start_s = malloc(sizeof *j->step_start_s * k);
    j->compute_end_s = malloc(sizeof *j->compute_end_s * k);
    j->steps_left = malloc(sizeof *j->steps_left * k);
    j->acc = malloc(sizeof *j->acc * k);
    j->e = engine_new((long)k + 16);
    j->rng = job_rng_new();
    j->rank_cv = costmodel_rank_cv(&spec->params, c);
    j->rank_speed = j->rank_cv > 0 ? malloc(sizeof *j->rank_speed * k) : NULL;
    if (!j->arrive_s || !j->step_start_s || !j->compute_end_s || !j->steps_left || !j->acc || !j->e || !j->rng ||
        (j->rank_cv > 0 && !j->rank_speed) ||
        cores_of_host(j) || scale_replay(j) || job_register(j) || (j->async && job_async_new(j)) ||
        shared_round_new(j)) {
        job_free(j);
        errmsg_set(err, errlen, "out of memory for %d workers", c->workers);
        return NULL;
    }
    return j;
}

void job_free(job *j) {
    if (!j)
        return;
    job_async_free(j);
    engine_free(j->e);
    gsl_rng_free(j->rng);
    free(j->arrive_s);
    free(j->step_start_s);
    free(j->compute_end_s);
    free(j->steps_left);
    free(j->acc);
    free(j->pool_s);
    free(j->rank_speed);
    free(j->round_steps_s);
    free(j->round_total_s);
    free(j->round_stretch);
    free(j->round_order);
    cores_free(j->cores);
    free(j->step_part_s);
    free(j->cores_done);
    free(j->started);
    free(j);
}

void job_set_timeline(job *j, job_span_fn fn, void *ctx) {
    j->span = fn;
    j->span_ctx = ctx;
}

const job_worker *job_workers(const job *j) { return j->acc; }

gsl_rng *job_rng_new(void) {
    /* GSL's default handler aborts when the allocation fails; the caller reports it
     * instead. Only for this call: the process's handler is the caller's to choose. */
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_set_error_handler(old);
    return r;
}

unsigned long job_seed(unsigned long seed, int r) {
    /* splitmix64's finaliser over (seed, r): neighbouring seeds and replications give
     * unrelated MT19937 streams. */
    uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + (uint64_t)r + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    /* gsl_rng_set treats 0 as its default seed; keep 0 distinct. */
    return (unsigned long)(z ? z : 1);
}

/* Every worker's start-up (parallel or sequential launch), scheduled: 0, or -1. */
static int schedule_startup(job *j) {
    const costmodel_params *p = &j->spec.params;
    double w_k = costmodel_startup_time(p, &j->spec.config), cpu = w_k - p->w0_s - p->w1_s * j->k;
    for (int w = 0; w < j->k; w++) {
        double t0 = 0, t1 = w_k;
        if (j->spec.launch == JOB_LAUNCH_SEQUENTIAL) {
            t0 = p->w1_s * w;
            t1 = p->w1_s * (w + 1) + p->w0_s + cpu;
            j->acc[w].wait_s += t0;
            job_emit(j, w, TRACE_WAIT, 0, t0);
        }
        j->acc[w].startup_s = t1 - t0;
        job_emit(j, w, TRACE_STARTUP, t0, t1);
        if (!engine_at(j->e, t1, j->k_startup, w))
            return -1;
    }
    return 0;
}

int job_run(job *j, unsigned long seed, job_result *out, char *err, int errlen) {
    engine_reset(j->e);
    gsl_rng_set(j->rng, seed);
    for (int w = 0; w < j->k; w++)
        j->acc[w] = (job_worker){ 0 };
    /* Each rank's speed for this run: log-normal of mean 1, exp(ς·Z − ς²/2). */
    for (int w = 0; j->rank_speed && w < j->k; w++)
        j->rank_speed[w] = exp(j->rank_cv * gsl_ran_gaussian_ziggurat(j->rng, 1.0) - 0.5 * j->rank_cv * j->rank_cv);
    j->ph = PHASE_STARTUP;
    j->epoch = 0;
    j->round = j->rounds_done = 0;
    j->arrived = j->msgs_done = 0;
    j->comm_total_s = j->sync_update_total_s = j->barrier_wait_total_s = j->finish_s = 0;
    if (j->async)
        job_async_reset(j);
    if (j->cores) {
        cores_reset(j->cores);
        j->cores_ev = NULL;
        j->pulling = -1;
        for (int w = 0; w < j->k; w++)
            j->started[w] = false;
    }

    if (schedule_startup(j))
        return errmsg_set(err, errlen, "out of memory");
    if (engine_run(j->e))
        return errmsg_set(err, errlen, "out of memory during the simulation");
    if (j->epoch != j->spec.config.epochs)
        return errmsg_set(err, errlen, "simulation stopped early in epoch %d", j->epoch);

    job_result r = { .makespan_s = j->finish_s, .rounds = j->rounds_done, .events = engine_events(j->e),
                     .peak_pending = engine_peak_pending(j->e) };
    if (j->async) {
        job_async_result(j, &r);
        *out = r;
        return 0;
    }
    for (int w = 0; w < j->k; w++) {
        j->acc[w].comm_s += j->comm_total_s; /* its own part after a pull, and every worker's */
        j->acc[w].update_s += j->sync_update_total_s;
        r.startup_s += j->acc[w].startup_s;
        r.compute_s += j->acc[w].compute_s;
        r.update_s += j->acc[w].update_s;
        r.wait_s += j->acc[w].wait_s;
    }
    r.startup_s /= j->k;
    r.compute_s /= j->k;
    r.update_s /= j->k;
    r.wait_s /= j->k;
    r.comm_s = j->comm_total_s;
    if (j->started) { /* a ps worker's comm ends at its own pull: each its own */
        r.comm_s = 0;
        for (int w = 0; w < j->k; w++)
            r.comm_s += j->acc[w].comm_s;
        r.comm_s /= j->k;
    }
    r.barrier_wait_s = j->rounds_done ? j->barrier_wait_total_s / ((double)j->rounds_done * j->k) : 0;
    double m = j->spec.params.model_bytes;
    r.master_peak_bytes = j->spec.config.topology == JOB_TOPO_PS ? 3 * m : 3 * m + m / j->k;
    *out = r;
    return 0;
}
