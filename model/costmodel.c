#include "model/costmodel.h"

#include "model/contention.h"
#include "model/gmax.h"
#include "model/params.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Checking */

static int failf(char *err, int errlen, const char *fmt, ...) {
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, (size_t)errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int fail(char *err, int errlen, const char *name, const char *what, double value) {
    return failf(err, errlen, "%s %s (got %g)", name, what, value);
}

int costmodel_check(const costmodel_params *p, const job_config *c, char *err, int errlen) {
    for (int i = 0; i < PARAM_COUNT; i++) {
        const param_row *r = param_info((param_id)i);
        const double v = param_get(p, (param_id)i);
        if (r->lo != 0) { /* a signed correction */
            if (!param_in_range(r, v))
                return failf(err, errlen, "%s must be in [%g, %g] (got %g)", r->name, r->lo, r->hi, v);
            continue;
        }
        if (!isfinite(v) || v < 0)
            return fail(err, errlen, r->name, "must be a finite number >= 0", v);
        if (r->hi == 1.0 && v > 1)
            return fail(err, errlen, r->name, "must be in [0, 1]", v);
        if (v > r->hi)
            return failf(err, errlen, "%s must be at most %.15g (got %g)", r->name, r->hi, v);
    }
    const struct { const char *name; double v; } whole[] = {
        { "waits_block", p->waits_block }, { "worker_device", p->worker_device },
        { "allreduce_algorithm", p->allreduce_algorithm }, { "ps_shards", p->ps_shards },
        { "ps_separate", p->ps_separate } };
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++)
        if (whole[i].v != floor(whole[i].v))
            return fail(err, errlen, whole[i].name, "must be a whole number", whole[i].v);
    if (job_check(c, err, errlen))
        return -1;
    if (p->machines < 0)
        return fail(err, errlen, "machines", "must be >= 0", p->machines);
    if (p->machines >= 2 && p->host_cores < 1)
        return fail(err, errlen, "a cluster", "needs its cores per machine (host cores >= 1)", p->host_cores);
    if (p->worker_device && c->cores != 1)
        return failf(err, errlen, "a worker that is a device has no cores to choose: --cores must be 1 (got %d)",
                     c->cores);
    if (p->ps_shards >= 1 && c->topology == JOB_TOPO_PS && c->master == JOB_MASTER_DEDICATED)
        return failf(err, errlen, "a sharded parameter server (ps_shards %g) runs beside the workers, not on a "
                     "dedicated master: use --master worker, or ps_shards 0 for one master", p->ps_shards);
    if (p->ps_shards >= 1 && job_sync_is_async(c->sync))
        return failf(err, errlen, "async and hogwild run through one dedicated master: ps_shards must be 0 (got %g)",
                     p->ps_shards);
    if (p->machines >= 2 && c->cores > p->host_cores) {
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "a worker of %d cores does not fit a machine of %g cores", c->cores,
                     p->host_cores);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Step, synchronisation, round */

double costmodel_amdahl(const costmodel_params *p, double cores) {
    return p->sigma + (1.0 - p->sigma) / cores;
}

/* What of a step c's T cores take against one. */
static double amdahl_of(const costmodel_params *p, const job_config *c) {
    return costmodel_amdahl(p, c->cores);
}

/* A step of `examples` on T idle cores. */
static double idle_step_at(const costmodel_params *p, const job_config *c, double examples) {
    return p->c0_s + p->c1_s * amdahl_of(p, c) * examples;
}

double costmodel_idle_step_time(const costmodel_params *p, const job_config *c) {
    return p->c0_s + (p->c1_s * job_schedule_of(c).local_batch + p->update_s) * amdahl_of(p, c);
}

static double async_duty(const costmodel_params *p, const job_config *c);

double costmodel_slowdown(const costmodel_params *p, const job_config *c) {
    return contention_slowdown_at(p, c, job_sync_is_async(c->sync) ? async_duty(p, c) : 1.0);
}

static double core_scaling(const costmodel_params *p, const job_config *c) {
    return amdahl_of(p, c) * costmodel_slowdown(p, c);
}

/* A step whose exchange runs on threads beside it (φ > 0): slowed by χ wherever it runs,
 * since other ranks' steps and exchanges share the host with it (see the header). */
static bool exchange_beside_steps(const costmodel_params *p, const job_config *c) {
    return p->overlap > 0 && c->workers >= 2 && costmodel_overlaps(c);
}

bool costmodel_overlapped(const costmodel_params *p, const job_config *c) {
    return exchange_beside_steps(p, c) && !contention_shares_cores(p, c);
}

/* The fixed cost c0 is the step's own CPU work (the framework's dispatch of every layer,
 * the im2col set-up), run on the step's first thread: it is slowed by ρ' like the rest,
 * not parallelised by T. */
double costmodel_step_time_at(const costmodel_params *p, const job_config *c, double examples) {
    double step = idle_step_at(p, c, examples) * costmodel_slowdown(p, c);
    return exchange_beside_steps(p, c) ? step * (1.0 + p->overlap_slowdown) : step;
}

double costmodel_step_time(const costmodel_params *p, const job_config *c) {
    return costmodel_step_time_at(p, c, job_schedule_of(c).local_batch);
}

double costmodel_update_time(const costmodel_params *p, const job_config *c) {
    return p->update_s * core_scaling(p, c);
}

bool costmodel_has_sync(const job_config *c) {
    return c->workers >= 2 || (c->topology == JOB_TOPO_PS && c->master == JOB_MASTER_DEDICATED);
}

double costmodel_loaded_examples(const costmodel_params *p, const job_config *c) {
    return job_loaded_examples(c, p->test_examples);
}

double costmodel_data_load_time(const costmodel_params *p, const job_config *c) {
    return p->startup_cpu_s + p->startup_per_example_s * costmodel_loaded_examples(p, c);
}

/* w0 holds the load's fixed part d at ρ = 1, so only l·n(D) is added to it; at ρ > 1 the
 * whole load, d + l·n(D), shares the cores. */
double costmodel_startup_time(const costmodel_params *p, const job_config *c) {
    return p->w0_s + p->w1_s * c->workers + p->startup_per_example_s * costmodel_loaded_examples(p, c) +
           contention_startup_time(p, c);
}

bool costmodel_spans_machines(const costmodel_params *p, const job_config *c) {
    return p->machines >= 2 && contention_placement_of(p, c).machines_used >= 2;
}

double costmodel_allreduce_beta(const costmodel_params *p, const job_config *c) {
    const double beta = p->link[JOB_TOPO_ALLREDUCE].beta_s_per_byte, hot = p->beta_hot_allreduce_s_per_byte;
    const double per_example = p->traffic_bytes_per_example, per_step = p->traffic_bytes_per_step;
    if (!(hot > 0 && hot < beta && p->traffic_ref_bytes > 0 && per_example + per_step > 0))
        return beta;
    const double moved = per_example * job_schedule_of(c).local_batch + per_step;
    return hot + (beta - hot) * fmin(1.0, moved / p->traffic_ref_bytes);
}

/* The link a message takes: shared memory, or the network on top of the host's own cost. */
static costmodel_link link_of(const costmodel_params *p, const job_config *c, bool remote) {
    costmodel_link l = p->link[c->topology];
    if (c->topology == JOB_TOPO_ALLREDUCE)
        l.beta_s_per_byte = costmodel_allreduce_beta(p, c);
    if (remote) {
        l.alpha_s += p->net.alpha_s;
        l.beta_s_per_byte = fmax(l.beta_s_per_byte, p->net.beta_s_per_byte);
    }
    return l;
}

double costmodel_message_time(const costmodel_params *p, const job_config *c, bool remote) {
    costmodel_link l = link_of(p, c, remote);
    return l.alpha_s + l.beta_s_per_byte * p->model_bytes + contention_master_wake(p, c);
}

/* Pulls per epoch of a worker: at its steps 0, N, 2N, … */
static double async_pulls(const job_config *c, long steps) {
    const long n = c->every_n > 0 ? c->every_n : 1;
    return (double)((steps + n - 1) / n);
}

/* The share of its cycle an async worker computes, alone at the master: a step against
 * the step, its push and its share of a pull (async: and of the update a pull waits
 * for), at the slowdown that share gives (a fixed point, iterated from 1: the share only
 * falls, and settles in a few rounds, as it moves ρ' by little). A worker that waits for
 * the master leaves its core to the others. */
static double async_duty(const costmodel_params *p, const job_config *c) {
    const job_schedule s = job_schedule_of(c);
    const double m = costmodel_message_time(p, c, false);
    const double pull_share = async_pulls(c, s.steps_per_epoch) / (double)s.steps_per_epoch;
    const bool waits_update = c->sync == JOB_SYNC_ASYNC;
    double duty = 1.0;
    for (int i = 0; i < 50; i++) {
        const double slow = contention_slowdown_at(p, c, duty);
        const double step = idle_step_at(p, c, s.local_batch) * slow;
        const double update = waits_update ? p->update_s * amdahl_of(p, c) * slow : 0.0;
        const double waits = m + pull_share * (m + update);
        const double next = step > 0 ? step / (step + waits) : 1.0;
        if (fabs(next - duty) < 1e-13)
            return next;
        duty = next;
    }
    return duty;
}

double costmodel_ring_step_time(const costmodel_params *p, const job_config *c) {
    costmodel_link l = link_of(p, c, costmodel_spans_machines(p, c));
    return l.alpha_s + l.beta_s_per_byte * p->model_bytes / c->workers;
}

/* One step of `bytes` over the machine's own link, or across machines. */
static double hop_time(const costmodel_params *p, const job_config *c, bool remote, double bytes) {
    costmodel_link l = link_of(p, c, remote);
    return l.alpha_s + l.beta_s_per_byte * bytes;
}

/* A hierarchical all-reduce's stages: inside the busiest machine's G workers, across the
 * M machines (the G rings of M/(G·M) bytes share each machine's network link), inside. */
static int hierarchical_stages(const costmodel_params *p, const job_config *c, costmodel_stage *out) {
    const contention_placement pl = contention_placement_of(p, c);
    const long g = pl.workers_busiest, m = pl.machines_used;
    const double inside = g > 1 ? hop_time(p, c, false, p->model_bytes / (double)g) : 0.0;
    out[0] = (costmodel_stage){ .steps = g - 1, .step_s = inside };
    out[1] = (costmodel_stage){ .steps = 2 * (m - 1), .step_s = hop_time(p, c, true, p->model_bytes / (double)m) };
    out[2] = out[0];
    return 3;
}

int costmodel_allreduce_stages(const costmodel_params *p, const job_config *c, costmodel_stage out[COSTMODEL_MAX_STAGES]) {
    const costmodel_allreduce a = (costmodel_allreduce)p->allreduce_algorithm;
    if (a == COSTMODEL_ALLREDUCE_RING || !costmodel_spans_machines(p, c)) {
        out[0] = (costmodel_stage){ .steps = 2L * (c->workers - 1), .step_s = costmodel_ring_step_time(p, c) };
        return 1;
    }
    if (a == COSTMODEL_ALLREDUCE_HIERARCHICAL)
        return hierarchical_stages(p, c, out);
    /* Either: half of each, so the stages add up to the mean of the two. */
    out[0] = (costmodel_stage){ .steps = 2L * (c->workers - 1), .step_s = 0.5 * costmodel_ring_step_time(p, c) };
    int n = 1 + hierarchical_stages(p, c, out + 1);
    for (int i = 1; i < n; i++)
        out[i].step_s *= 0.5;
    return n;
}

double costmodel_ps_local_time(const costmodel_params *p, const job_config *c) {
    const long g = contention_placement_of(p, c).workers_busiest;
    return g > 1 ? (double)(g - 1) * hop_time(p, c, false, p->model_bytes / (double)g) : 0.0;
}

/* The shards' bytes: the busiest shard's V (the largest tensor whole, or its even share)
 * and each other shard's. */
static void shard_bytes(const costmodel_params *p, double shards, double *largest, double *other) {
    const double bytes = p->model_bytes;
    *largest = fmin(bytes, fmax(p->ps_largest_bytes, bytes / shards));
    *other = shards > 1 ? (bytes - *largest) / (shards - 1) : 0.0;
}

/* The busiest link's messages and bytes in one phase, one direction (see the header):
 * *msgs_in, *load_in the busiest machine's receipts; *msgs_out, *load_out the busiest
 * sender's. Returns false where nothing crosses (every shard on the one machine). */
static bool ps_phase_loads(const costmodel_params *p, const job_config *c, double *msgs_in, double *load_in,
                           double *msgs_out, double *load_out) {
    const double shards = p->ps_shards >= 1 ? p->ps_shards : 1.0;
    const double m = contention_placement_of(p, c).machines_used, bytes = p->model_bytes;
    double v, other;
    shard_bytes(p, shards, &v, &other);
    if (p->ps_separate) { /* a server machine receives its shard from every worker machine */
        *msgs_in = m;
        *load_in = m * v;
        *msgs_out = shards;
        *load_out = bytes;
        return true;
    }
    if (m < 2)
        return false;
    const double most = ceil(shards / m), least = floor(shards / m);
    *msgs_in = (m - 1) * most;
    *load_in = (m - 1) * (v + (most - 1) * other);      /* the machine with the largest shard */
    *msgs_out = shards - least;
    *load_out = bytes - least * other;                  /* a machine with the fewest, small ones */
    return true;
}

double costmodel_ps_phase_time(const costmodel_params *p, const job_config *c) {
    double msgs_in, load_in, msgs_out, load_out;
    if (!ps_phase_loads(p, c, &msgs_in, &load_in, &msgs_out, &load_out))
        return 0.0;
    costmodel_link l = link_of(p, c, true);
    return fmax(msgs_in * l.alpha_s + load_in * l.beta_s_per_byte, msgs_out * l.alpha_s + load_out * l.beta_s_per_byte);
}

double costmodel_line_floor_time(const costmodel_params *p, const job_config *c) {
    double msgs_in, load_in, msgs_out, load_out;
    if (!(p->net_line_beta_s_per_byte > 0) || c->topology != JOB_TOPO_PS || !(p->ps_shards >= 1) ||
        job_sync_is_async(c->sync) || c->workers < 2 ||
        !ps_phase_loads(p, c, &msgs_in, &load_in, &msgs_out, &load_out))
        return 0.0;
    /* Into the busiest machine over a round: its shards' pushes, then (colocated) its own
     * pulls of the rest of the model; separate: a server's pushes, or a worker's pulls. */
    const double m = contention_placement_of(p, c).machines_used;
    const double in = p->ps_separate ? fmax(load_in, p->model_bytes) : load_in + p->model_bytes - load_in / (m - 1);
    return in * p->net_line_beta_s_per_byte;
}

double costmodel_line_floor_excess(const costmodel_params *p, const job_config *c) {
    const double floor_s = costmodel_line_floor_time(p, c);
    if (!(floor_s > 0))
        return 0.0;
    const double steps = (double)job_schedule_of(c).steps_per_round;
    return fmax(0.0, floor_s - steps * (costmodel_step_time(p, c) + costmodel_update_time(p, c)));
}

/* S(K) of the exchange, as on an idle host: ranks that outnumber the cores slow the rounds'
 * steps (costmodel_slowdown), not the exchange. */
double costmodel_sync_time(const costmodel_params *p, const job_config *c) {
    double k = c->workers;
    if (c->topology == JOB_TOPO_ALLREDUCE) {
        if (c->workers == 1)
            return 0.0;
        /* Reduce-scatter then all-gather: the stages of costmodel_allreduce_stages. */
        costmodel_stage st[COSTMODEL_MAX_STAGES];
        const int n = costmodel_allreduce_stages(p, c, st);
        double s = 0;
        for (int i = 0; i < n; i++)
            s += (double)st[i].steps * st[i].step_s;
        return s;
    }
    if (p->ps_shards >= 1) /* sharded: inside, pushes, pulls, inside */
        return c->workers == 1 ? 0.0 : 2.0 * (costmodel_ps_local_time(p, c) + costmodel_ps_phase_time(p, c));
    /* Parameter server: the master's link takes every push, then every pull, one at a
     * time. A master that also trains exchanges with the K−1 others only; those on its
     * own machine through shared memory. */
    contention_placement pl = contention_placement_of(p, c);
    double local = pl.workers_on_master - (c->master == JOB_MASTER_DEDICATED ? 0.0 : 1.0);
    double remote = k - pl.workers_on_master;
    return 2.0 * (local * costmodel_message_time(p, c, false) + remote * costmodel_message_time(p, c, true));
}

bool costmodel_overlaps(const job_config *c) {
    return c->sync == JOB_SYNC_BATCH && c->topology == JOB_TOPO_ALLREDUCE;
}

double costmodel_exposed_sync_time(const costmodel_params *p, const job_config *c) {
    double s = costmodel_sync_time(p, c);
    if (!costmodel_overlapped(p, c)) /* an overlapped job shares no core: no Λ */
        return fmax(s, costmodel_line_floor_excess(p, c)) + contention_exchange_time(p, c);
    return fmax(p->overlap_exposed * s, s - p->overlap * costmodel_step_time(p, c));
}

bool costmodel_rank_cv_applies(const costmodel_params *p, const job_config *c) {
    return c->workers >= 2 && !contention_shares_cores(p, c);
}

double costmodel_rank_cv(const costmodel_params *p, const job_config *c) {
    return p->rank_cv > 0 && costmodel_rank_cv_applies(p, c) ? p->rank_cv : 0.0;
}

/* How long the slowest of workers whose expected maximum is g (G(K) in standard
 * deviations) takes over the mean for n steps of `step`: the sum's spread is √n·CV·step
 * from the steps' own spread, and n·ς·step from the rank's own speed, which n steps do
 * not average out (costmodel_rank_cv): √(n·CV² + n²·ς²)·step·g. */
static double straggler_time(const costmodel_params *p, const job_config *c, double step, double n, double g) {
    const double rank = costmodel_rank_cv(p, c);
    if (!(rank > 0))
        return p->cv * step * sqrt(n) * g;
    return sqrt(n * p->cv * p->cv + n * n * rank * rank) * step * g;
}

/* Straggler wait of one round of n steps: the barrier waits for the slowest of K
 * workers, each summing n steps (straggler_time at G(K)); ranks that sleep while they
 * wait hand their cores to the rest, so G_ρ(K) (model/gmax.h). */
static double round_wait(const costmodel_params *p, const job_config *c, double step, long n) {
    return straggler_time(p, c, step, (double)n, gmax_shared_expected(c->workers, contention_shared_rho(p, c)));
}

/* ---------------------------------------------------------------------------------- */
/* Async and hogwild: a master that serves each request as it comes */

/* One hogwild updater's update: costmodel_update_time on one core, u·ρ'. */
static double hogwild_update_time(const costmodel_params *p, const job_config *c) {
    return p->update_s * costmodel_slowdown(p, c);
}

/* One worker's epoch alone at the master (s·τ) and the master's busy time for it, its
 * pushes in and its pulls out (s·I, s·O), for a message time m: see the header. */
static void async_worker(const costmodel_params *p, const job_config *c, double m, double *alone,
                         double *in, double *out) {
    const long s = job_schedule_of(c).steps_per_epoch;
    const double pulls = async_pulls(c, s);
    const double step = costmodel_step_time(p, c);
    if (c->sync == JOB_SYNC_ASYNC) {
        /* Every pull (and the epoch's barrier instead of the first) waits for the update
         * of the push before it. */
        const double u = costmodel_update_time(p, c);
        *alone = s * (step + m) + pulls * (m + u);
        *in = s * (m + u);
    } else {
        /* A pull never waits for an update; the barrier waits for the last one. */
        *alone = s * (step + m) + pulls * m + hogwild_update_time(p, c);
        *in = s * m;
    }
    *out = pulls * m;
}

costmodel_async costmodel_async_of(const costmodel_params *p, const job_config *c) {
    costmodel_async a = { 0 };
    const job_schedule s = job_schedule_of(c);
    const contention_placement pl = contention_placement_of(p, c);
    const int local = pl.workers_on_master < c->workers ? pl.workers_on_master : c->workers;
    const int remote = c->workers - local;
    const double steps = (double)s.steps_per_epoch;
    double alone_l = 0, in_l = 0, out_l = 0, alone_r = 0, in_r = 0, out_r = 0;
    async_worker(p, c, costmodel_message_time(p, c, false), &alone_l, &in_l, &out_l);
    async_worker(p, c, costmodel_message_time(p, c, true), &alone_r, &in_r, &out_r);
    a.worker_cycle_s = (remote > 0 ? fmax(local > 0 ? alone_l : 0, alone_r) : alone_l) / steps;
    a.master_s = fmax(local * in_l + remote * in_r, local * out_l + remote * out_r) / steps;
    if (c->sync == JOB_SYNC_HOGWILD) /* T updaters, each applying a gradient on one core */
        a.master_s = fmax(a.master_s, c->workers * hogwild_update_time(p, c) / c->cores);
    a.master_bound = a.master_s > a.worker_cycle_s;
    const double busy = fmax(a.worker_cycle_s, a.master_s);
    a.steps_per_s = busy > 0 ? c->workers / busy : INFINITY;
    const double step = costmodel_step_time(p, c);
    a.epoch_s = steps * busy + straggler_time(p, c, step, steps, gmax_expected(c->workers));
    const double n = c->every_n > 0 ? c->every_n : 1;
    /* Async: a pull waits for the update of its worker's push before it; hogwild's does
     * not, so that push lands after the pull too, unless a crowded master's wake, which
     * comes before it reads the weights, outlasts the update. (The simulator's pull also
     * takes in other workers' updates that end during the wake; this count does not.) */
    const double wake = contention_master_wake(p, c);
    const bool own_in = c->sync == JOB_SYNC_ASYNC || (wake > 0 && wake >= hogwild_update_time(p, c));
    const double own = own_in ? 1.0 : 0.0;
    a.staleness = c->workers * (n + 1.0) / 2.0 - own;
    a.staleness_p90 = c->workers * ceil(0.9 * n) - own;
    return a;
}

/* The async breakdown (see the header): the epoch's time less compute and the requests
 * is waiting. */
static costmodel_breakdown async_breakdown(const costmodel_params *p, const job_config *c) {
    const job_schedule s = job_schedule_of(c);
    const costmodel_async a = costmodel_async_of(p, c);
    const contention_placement pl = contention_placement_of(p, c);
    const int local = pl.workers_on_master < c->workers ? pl.workers_on_master : c->workers;
    const double m = (local * costmodel_message_time(p, c, false) +
                      (c->workers - local) * costmodel_message_time(p, c, true)) / c->workers;
    costmodel_breakdown b = { 0 };
    b.startup_s = costmodel_startup_time(p, c);
    b.compute_s = c->epochs * (s.steps_per_epoch * costmodel_step_time(p, c));
    b.comm_s = c->epochs * (s.steps_per_epoch + async_pulls(c, s.steps_per_epoch)) * m;
    b.wait_s = fmax(0.0, c->epochs * a.epoch_s - b.compute_s - b.comm_s);
    b.total_s = b.startup_s + b.compute_s + b.comm_s + b.wait_s;
    return b;
}

double costmodel_round_time(const costmodel_params *p, const job_config *c) {
    if (job_sync_is_async(c->sync))
        return costmodel_async_of(p, c).epoch_s;
    job_schedule s = job_schedule_of(c);
    double step = costmodel_step_time(p, c);
    return s.steps_per_round * (step + costmodel_update_time(p, c)) + round_wait(p, c, step, s.steps_per_round) +
           costmodel_exposed_sync_time(p, c);
}

costmodel_breakdown costmodel_breakdown_of(const costmodel_params *p, const job_config *c) {
    if (job_sync_is_async(c->sync))
        return async_breakdown(p, c);
    job_schedule s = job_schedule_of(c);
    double step = costmodel_step_time(p, c);
    long full_rounds = s.steps_per_epoch / s.steps_per_round;
    long rest = s.steps_per_epoch % s.steps_per_round;
    double wait_epoch = full_rounds * round_wait(p, c, step, s.steps_per_round)
                      + (rest ? round_wait(p, c, step, rest) : 0.0);
    costmodel_breakdown b;
    b.startup_s = costmodel_startup_time(p, c);
    b.compute_s = c->epochs * (s.steps_per_epoch * step);
    b.update_s = c->epochs * (s.steps_per_epoch * costmodel_update_time(p, c));
    b.comm_s = c->epochs * (s.rounds_per_epoch * costmodel_exposed_sync_time(p, c));
    b.wait_s = c->epochs * wait_epoch;
    b.total_s = b.startup_s + b.compute_s + b.update_s + b.comm_s + b.wait_s;
    return b;
}

double costmodel_total_time(const costmodel_params *p, const job_config *c) {
    return costmodel_breakdown_of(p, c).total_s;
}

job_config costmodel_baseline(const job_config *c) {
    job_config one = *c;
    one.workers = 1;
    one.cores = 1;
    /* One core alone trains plainly: no server to talk to (async: plain SGD, as local
     * SGD on one worker is). */
    one.master = JOB_MASTER_WORKER;
    if (job_sync_is_async(one.sync)) {
        one.sync = JOB_SYNC_EPOCH;
        one.every_n = 0;
    }
    return one;
}

double costmodel_speedup(const costmodel_params *p, const job_config *c) {
    job_config one = costmodel_baseline(c);
    return costmodel_total_time(p, &one) / costmodel_total_time(p, c);
}

/* ---------------------------------------------------------------------------------- */
/* Names */

static const char *const allreduce_names[] = { "ring", "hierarchical", "either" };

const char *costmodel_allreduce_name(costmodel_allreduce a) {
    return a >= 0 && a <= COSTMODEL_ALLREDUCE_EITHER ? allreduce_names[a] : "?";
}

int costmodel_allreduce_parse(const char *s, costmodel_allreduce *out) {
    for (int a = 0; a <= COSTMODEL_ALLREDUCE_EITHER; a++)
        if (strcmp(s, allreduce_names[a]) == 0) {
            *out = (costmodel_allreduce)a;
            return 0;
        }
    return -1;
}

/* ---------------------------------------------------------------------------------- */
/* The seed's example */

costmodel_params costmodel_params_seed_example(void) {
    /* The seed: 5 epochs × ⌈6000/32⌉ = 188 steps took about 8 h on one core, so one step
     * of 32 images ≈ 30.6 s (Keras on Spark). The rest are stated assumptions for a
     * small Spark cluster: 50 ms per message through Elephas' HTTP parameter server,
     * 1 Gbit/s links, the seed-like CNN's 454,922 float weights, a Spark context that
     * takes 20 s plus 10 s per executor to start, 10% step-time spread. */
    costmodel_params p = {
        .c0_s = 0.0,
        .c1_s = 0.956,
        .sigma = 0.1,
        .model_bytes = 454922.0 * 4.0,
        .w0_s = 20.0,
        .w1_s = 10.0,
        .cv = 0.1,
        .host_cores = 0.0,
    };
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        p.link[t] = (costmodel_link){ .alpha_s = 0.05, .beta_s_per_byte = 8e-9 };
    return p;
}

job_config costmodel_config_seed_example(void) {
    return (job_config){
        .workers = 1, .cores = 1,
        .sync = JOB_SYNC_BATCH, .every_n = 1,
        .topology = JOB_TOPO_PS, .master = JOB_MASTER_WORKER,
        .batch_per_worker = false,
        .examples = 6000, .batch = 32, .epochs = 5,
    };
}
