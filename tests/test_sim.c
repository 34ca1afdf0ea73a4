/* sim/job.c, sim/replicate.c: the simulator against the closed form of model/costmodel.c
 * (zero variance), against order statistics (the barrier wait), and against itself only
 * for determinism. */
#include "model/contention.h"
#include "model/costmodel.h"
#include "model/gmax.h"
#include "trace/trace.h"
#include "sim/job.h"
#include "sim/replicate.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Costs with every term switched on, so each one's timing is tested. */
static costmodel_params test_params(void) {
    costmodel_params p = {
        .c0_s = 0.01, .c1_s = 0.002, .sigma = 0.2,
        .model_bytes = 1e6, .w0_s = 3.0, .w1_s = 0.05, .cv = 0.0, .host_cores = 0, .update_s = 0.004,
        .startup_cpu_s = 0.3, .oversub_compute = 0.3, .balance_s = 0.05, /* felt only where ranks outnumber cores */
    };
    p.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 1e-3, .beta_s_per_byte = 1e-8 };
    p.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ .alpha_s = 2e-4, .beta_s_per_byte = 3e-9 };
    p.net = (costmodel_link){ .alpha_s = 5e-5, .beta_s_per_byte = 8e-8 }; /* on a cluster: 100 Mbit/s */
    return p;
}

static job_config test_config(int k, job_sync sync, int every_n, job_topology topo) {
    /* D = 1000 is not a multiple of B = 48 (the last batch is short), nor of K·B. More
     * workers than B each take a whole batch (a split would leave ranks without one). */
    return (job_config){ .workers = k, .cores = 1, .sync = sync, .every_n = every_n,
                               .topology = topo, .master = JOB_MASTER_WORKER,
                               .batch_per_worker = k > 48, .examples = 1000, .batch = 48, .epochs = 2 };
}

static job_result run_once(const job_spec *spec, unsigned long seed, job **keep) {
    char err[256] = "";
    job *j = job_new(spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    job_result r;
    cr_assert_eq(job_run(j, seed, &r, err, sizeof err), 0, "%s", err);
    if (keep)
        *keep = j;
    else
        job_free(j);
    return r;
}

static int close_rel(double got, double want, double rel) {
    return fabs(got - want) <= rel * fmax(fabs(want), 1e-300);
}

/* ---------------------------------------------------------------------------------- */
/* Zero variance: the closed form, exactly */

Test(sim, zero_variance_matches_closed_form) {
    static const int ks[] = { 1, 2, 3, 5, 7, 16, 64, 250, 1024 };
    static const struct { job_sync s; int n; } syncs[] = {
        { JOB_SYNC_BATCH, 1 }, { JOB_SYNC_EPOCH, 0 }, { JOB_SYNC_EVERY, 4 },
    };
    /* (T, P): one core each on an unlimited host; three cores each on 24 cores, so the
     * larger K oversubscribe (ρ = (3K + m)/24); one core each on 2 cores, where a
     * dedicated master's polling core alone oversubscribes K = 2 (ρ = 3/2). */
    /* And two clusters: 4 machines of 2 cores (K > 8 spread, oversubscribed), 3 machines of
     * 4 cores with two cores a worker. */
    static const struct { int t; double p; int machines; } cores[] = {
        { 1, 0, 0 }, { 3, 24, 0 }, { 1, 2, 0 }, { 1, 2, 4 }, { 2, 4, 3 },
    };
    int configs = 0;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int topo = 0; topo < JOB_TOPO_COUNT; topo++)
            for (size_t si = 0; si < 3; si++)
                for (int master = 0; master < (topo == JOB_TOPO_PS ? 2 : 1); master++)
                    for (int ci = 0; ci < 5; ci++) {
                        job_spec spec = { .params = test_params(),
                                          .config = test_config(ks[ki], syncs[si].s, syncs[si].n, topo),
                                          .contention = JOB_CONTENTION_CLOSED_FORM };
                        spec.config.master = master ? JOB_MASTER_DEDICATED : JOB_MASTER_WORKER;
                        spec.config.cores = cores[ci].t;
                        spec.params.host_cores = cores[ci].p;
                        spec.params.machines = cores[ci].machines;
                        char name[96];
                        job_sync_format(syncs[si].s, syncs[si].n, name, sizeof name);
                        job *j;
                        job_result r = run_once(&spec, 1, &j);
                        costmodel_breakdown want = costmodel_breakdown_of(&spec.params, &spec.config);
                        if (!contention_shares_cores(&spec.params, &spec.config)) {
                            /* No rank shares a core: the scheduled cores change nothing. */
                            job_spec scheduled = spec;
                            scheduled.contention = JOB_CONTENTION_SCHEDULED;
                            cr_assert_eq(run_once(&scheduled, 1, NULL).makespan_s, r.makespan_s);
                        }
                        const char *what = job_topology_name(topo);
                        cr_assert(close_rel(r.makespan_s, want.total_s, 1e-9), "K=%d T=%d M=%d %s %s master=%d: sim %.12g, model %.12g",
                                  ks[ki], cores[ci].t, cores[ci].machines, name, what, master, r.makespan_s, want.total_s);
                        /* Every worker's breakdown is the closed form's. */
                        const job_worker *w = job_workers(j);
                        for (int i = 0; i < ks[ki]; i++) {
                            cr_assert(close_rel(w[i].startup_s, want.startup_s, 1e-9), "K=%d %s %s: startup", ks[ki], name, what);
                            cr_assert(close_rel(w[i].compute_s, want.compute_s, 1e-9), "K=%d %s %s: compute %.12g vs %.12g",
                                      ks[ki], name, what, w[i].compute_s, want.compute_s);
                            cr_assert(close_rel(w[i].update_s, want.update_s, 1e-9), "K=%d %s %s master=%d: update %.12g vs %.12g",
                                      ks[ki], name, what, master, w[i].update_s, want.update_s);
                            cr_assert(fabs(w[i].comm_s - want.comm_s) <= 1e-9 * want.total_s, "K=%d %s %s: comm %.12g vs %.12g",
                                      ks[ki], name, what, w[i].comm_s, want.comm_s);
                            cr_assert(fabs(w[i].wait_s) <= 1e-9 * want.total_s, "K=%d %s %s: wait %g", ks[ki], name, what, w[i].wait_s);
                        }
                        job_free(j);
                        configs++;
                    }
    cr_assert_geq(configs, 400);
}

/* An all-reduce priced by what its step moved (costmodel_allreduce_beta): the simulator
 * plays the closed form's exchange, and a smaller step's costs less. B = 48 over K ranks:
 * steps of 24, 16, 12, 10 examples move that many MB + 4 MB against M_ref = 28 MB: β at
 * K = 2, β_hot + (β − β_hot)·20/28 at K = 3, less again at 4 and 5. */
Test(sim, an_all_reduce_priced_by_its_steps_traffic_is_the_closed_forms) {
    for (int k = 2; k <= 5; k++) {
        job_spec spec = { .params = test_params(), .config = test_config(k, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE),
                          .contention = JOB_CONTENTION_CLOSED_FORM };
        job_spec one_price = spec;
        spec.params.beta_hot_allreduce_s_per_byte = 0.25 * spec.params.link[JOB_TOPO_ALLREDUCE].beta_s_per_byte;
        spec.params.traffic_ref_bytes = 28e6;
        spec.params.traffic_bytes_per_example = 1e6;
        spec.params.traffic_bytes_per_step = 4e6;
        job *j;
        const job_result r = run_once(&spec, 1, &j);
        const costmodel_breakdown want = costmodel_breakdown_of(&spec.params, &spec.config);
        cr_assert(close_rel(r.makespan_s, want.total_s, 1e-9), "K=%d: sim %.12g, model %.12g", k, r.makespan_s,
                  want.total_s);
        cr_assert(fabs(job_workers(j)[0].comm_s - want.comm_s) <= 1e-9 * want.total_s, "K=%d: comm", k);
        job_free(j);
        const costmodel_breakdown one = costmodel_breakdown_of(&one_price.params, &one_price.config);
        if (k == 2)
            cr_assert(close_rel(want.comm_s, one.comm_s, 1e-12), "at M_ref the price is beta");
        else
            cr_assert_lt(want.comm_s, one.comm_s, "K=%d: a smaller step's exchange costs less", k);
    }
}

Test(sim, dedicated_master_on_two_cores_by_hand) {
    /* K = 2 workers, T = 1, a dedicated master, P = 2: ρ = (2·1 + 1)/2 = 1.5, no core with
     * two workers (nothing to pack), and a parameter server's one-step rounds pay no κ (the
     * 0.3 here): ρ' = 1.5. Batch sync, b = ⌈48/2⌉ = 24, s = ⌈1000/48⌉ = 21 steps, E = 2: 42
     * rounds of
     *   step (0.01 + 0.002·(0.2 + 0.8)·24)·1.5 = 0.087 (c0 is CPU work too), update
     *   0.004·1.5 = 0.006, S = 2·K·(α + βM) = 4·(0.001 + 0.01) = 0.044;
     * start-up 3 + 0.05·2 + d·(ρ − 1) = 3.1 + 0.3·0.5 = 3.25: total 3.25 + 42·0.137 = 9.004. */
    job_spec spec = { .params = test_params(), .config = test_config(2, JOB_SYNC_BATCH, 1, JOB_TOPO_PS),
                      .contention = JOB_CONTENTION_CLOSED_FORM };
    spec.config.master = JOB_MASTER_DEDICATED;
    spec.params.host_cores = 2;
    job *j;
    job_result r = run_once(&spec, 1, &j);
    cr_assert(close_rel(r.makespan_s, 9.004, 1e-12), "%.15g", r.makespan_s);
    cr_assert(close_rel(r.compute_s, 42 * 0.087, 1e-12), "%.15g", r.compute_s);
    cr_assert(close_rel(r.update_s, 42 * 0.006, 1e-12), "%.15g", r.update_s);
    cr_assert(close_rel(r.comm_s, 42 * 0.044, 1e-12), "%.15g", r.comm_s);
    job_free(j);
}

Test(sim, cluster_master_serves_its_own_machine_by_shared_memory_and_the_rest_by_network) {
    /* K = 3 workers of one core and a dedicated master on 2 machines of 2 cores: machine 0
     * holds the master and worker 0, machine 1 workers 1 and 2 (ρ = 1). A message costs
     * α + βM = 0.001 + 1e-8·1e6 = 0.011 by shared memory and (α + 50 µs) + max(β, 8e-8)·M
     * = 0.00105 + 0.08 = 0.08105 over the 100 Mbit/s network: S = 2·(0.011 + 2·0.08105)
     * = 0.3462. Batch sync, b = ⌈48/3⌉ = 16, s = 21, E = 2: 42 rounds of step 0.01 +
     * 0.002·16 = 0.042, update 0.004 and S; start-up 3 + 0.05·3 = 3.15: 3.15 + 42·0.3922
     * = 19.6224. */
    job_spec spec = { .params = test_params(), .config = test_config(3, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.config.master = JOB_MASTER_DEDICATED;
    spec.params.host_cores = 2;
    spec.params.machines = 2;
    job *j;
    job_result r = run_once(&spec, 1, &j);
    cr_assert(close_rel(r.makespan_s, 19.6224, 1e-12), "%.15g", r.makespan_s);
    cr_assert(close_rel(r.comm_s, 42 * 0.3462, 1e-12), "%.15g", r.comm_s);
    job_free(j);
}

/* The spans of one rank, in order, through the timeline callback. */
typedef struct {
    int rank, n;
    trace_phase ph[64];
    double t0[64], t1[64];
} span_list;

static void collect_rank(void *ctx, int rank, trace_phase ph, double t0_s, double t1_s) {
    span_list *l = ctx;
    if (rank == l->rank && l->n < 64) {
        l->ph[l->n] = ph;
        l->t0[l->n] = t0_s;
        l->t1[l->n++] = t1_s;
    }
}

/* The first spans of rank 1 of a 3-worker job with D = 288, B = 48, one epoch, CV = 0. */
static span_list first_spans(job_sync sync, job_topology topo) {
    job_spec spec = { .params = test_params(), .config = test_config(3, sync, sync == JOB_SYNC_EVERY ? 2 : 0, topo) };
    spec.config.examples = 288; /* local SGD: 2 steps of 48 on each of 3 workers */
    spec.config.epochs = 1;
    char err[256] = "";
    job *j = job_new(&spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    span_list l = { .rank = 1 };
    job_set_timeline(j, collect_rank, &l);
    job_result r;
    cr_assert_eq(job_run(j, 1, &r, err, sizeof err), 0, "%s", err);
    job_free(j);
    return l;
}

Test(sim, update_runs_where_the_trainer_runs_it) {
    /* Batch sync, ps, the master trains: start-up, step, then the exchange: 2 pushes of
     * α + βM = 0.011 s, the master's update (0.004 s), 2 pulls. */
    span_list l = first_spans(JOB_SYNC_BATCH, JOB_TOPO_PS);
    trace_phase ps[] = { TRACE_STARTUP, TRACE_COMPUTE, TRACE_COMM, TRACE_UPDATE, TRACE_COMM, TRACE_COMPUTE };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(l.ph[i], ps[i], "ps span %d: %s", i, trace_phase_name(l.ph[i]));
    cr_assert(close_rel(l.t1[2] - l.t0[2], 0.022, 1e-9), "pushes %.12g", l.t1[2] - l.t0[2]);
    cr_assert(close_rel(l.t1[3] - l.t0[3], 0.004, 1e-9), "update %.12g", l.t1[3] - l.t0[3]);
    cr_assert(close_rel(l.t1[4] - l.t0[4], 0.022, 1e-9), "pulls %.12g", l.t1[4] - l.t0[4]);
    /* Batch sync, all-reduce: every rank updates after the ring. */
    l = first_spans(JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    trace_phase ring[] = { TRACE_STARTUP, TRACE_COMPUTE, TRACE_COMM, TRACE_UPDATE, TRACE_COMPUTE };
    for (int i = 0; i < 5; i++)
        cr_assert_eq(l.ph[i], ring[i], "allreduce span %d: %s", i, trace_phase_name(l.ph[i]));
    /* Local SGD: every step is followed by the worker's own update, then the exchange. */
    l = first_spans(JOB_SYNC_EVERY, JOB_TOPO_PS);
    trace_phase local[] = { TRACE_STARTUP, TRACE_COMPUTE, TRACE_UPDATE, TRACE_COMPUTE, TRACE_UPDATE, TRACE_COMM };
    for (int i = 0; i < 6; i++)
        cr_assert_eq(l.ph[i], local[i], "every:2 span %d: %s", i, trace_phase_name(l.ph[i]));
    cr_assert(close_rel(l.t1[2] - l.t0[2], 0.004, 1e-9));
    cr_assert_eq(l.t0[2], l.t1[1], "the update follows its step at once");
}

Test(sim, zero_variance_speedup_matches_closed_form) {
    job_spec spec = { .params = test_params(),
                      .config = test_config(8, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE) };
    spec.config.cores = 2;
    replicate_summary s;
    char err[256];
    cr_assert_eq(replicate_run(&spec, NULL, 5, 3, &s, err, sizeof err), 0, "%s", err);
    double want = costmodel_speedup(&spec.params, &spec.config);
    cr_assert(close_rel(s.speedup, want, 1e-9), "sim %.12g, model %.12g", s.speedup, want);
    costmodel_breakdown b = costmodel_breakdown_of(&spec.params, &spec.config);
    cr_assert(close_rel(s.update_s, b.update_s, 1e-9), "update %.12g vs %.12g", s.update_s, b.update_s);
    /* No spread (run_cv = 0, no parameter uncertainty, CV = 0): every interval is the point. */
    cr_assert_eq(s.speedup_lo, s.speedup);
    cr_assert_eq(s.speedup_hi, s.speedup);
    cr_assert_eq(s.speedup_mean_lo, s.speedup);
    cr_assert_eq(s.speedup_mean_hi, s.speedup);
    cr_assert_eq(s.time_lo_s, s.time_s);
    cr_assert_eq(s.time_hi_s, s.time_s);
}

Test(sim, sequential_launch_has_the_same_makespan_and_moves_startup_into_wait) {
    job_spec spec = { .params = test_params(), .config = test_config(6, JOB_SYNC_EPOCH, 0, JOB_TOPO_PS),
                      .launch = JOB_LAUNCH_SEQUENTIAL };
    job *j;
    job_result r = run_once(&spec, 1, &j);
    cr_assert(close_rel(r.makespan_s, costmodel_total_time(&spec.params, &spec.config), 1e-9));
    const job_worker *w = job_workers(j);
    /* Worker i is launched at i·w1, is up w1 + w0 later, then waits for the last. */
    double w_k = spec.params.w0_s + spec.params.w1_s * 6;
    for (int i = 0; i < 6; i++) {
        cr_assert(close_rel(w[i].startup_s, spec.params.w0_s + spec.params.w1_s, 1e-12));
        cr_assert(fabs(w[i].wait_s - (w_k - w[i].startup_s)) < 1e-9, "worker %d waits %g", i, w[i].wait_s);
    }
    job_free(j);
}

/* ---------------------------------------------------------------------------------- */
/* With variance */

/* The barrier waits for the slowest of K sums of p steps: CV·step·√p·G(K) on average. */
static void assert_barrier_wait(int k, job_sync sync, int every_n, long examples, double cv) {
    job_spec spec = { .params = test_params(), .config = test_config(k, sync, every_n, JOB_TOPO_ALLREDUCE) };
    spec.params.cv = cv;
    spec.config.examples = examples;
    spec.config.epochs = 1;
    job_schedule sched = job_schedule_of(&spec.config);
    cr_assert_eq(sched.steps_per_epoch % sched.steps_per_round, 0, "test wants full rounds only");
    job_result r = run_once(&spec, 42, NULL);
    double step = costmodel_step_time(&spec.params, &spec.config);
    double want = cv * step * sqrt((double)sched.steps_per_round) * gmax_expected(k);
    cr_assert(close_rel(r.barrier_wait_s, want, 0.05), "K=%d p=%ld: mean wait %.6g, CV·step·√p·G(K) = %.6g (%.1f%%)", k,
              sched.steps_per_round, r.barrier_wait_s, want, 100 * (r.barrier_wait_s / want - 1));
}

Test(sim, mean_barrier_wait_matches_order_statistics_batch) {
    /* 20000 rounds of one step on 8 workers. */
    assert_barrier_wait(8, JOB_SYNC_BATCH, 1, 20000L * 48, 0.05);
}

Test(sim, mean_barrier_wait_matches_order_statistics_every_n) {
    /* 2500 rounds of 16 steps on 32 workers. */
    assert_barrier_wait(32, JOB_SYNC_EVERY, 16, 2500L * 16 * 32 * 48, 0.1);
}

/* Each rank keeps its own speed for a run (ς): two ranks, epoch sync, no step spread, so
 * the faster one waits n·step·(f_max − f_min) once, and the mean per rank is half of it.
 * For two log-normal factors of mean 1 and log-sd ς, E[max] = 2Φ(ς/√2) (the larger one,
 * weighted by itself, tilts its normal by ς), E[min] = 2 − E[max], so the wait is
 * n·step·(2Φ(ς/√2) − 1) = 0.0563720·n·step at ς = 0.1 (erf by hand in Python). Over 3000
 * runs the mean's standard error is about 1.4% of it. */
Test(sim, a_ranks_own_speed_holds_for_the_whole_run) {
    job_spec spec = { .params = test_params(), .config = test_config(2, JOB_SYNC_EPOCH, 1, JOB_TOPO_ALLREDUCE) };
    spec.params.rank_cv = 0.1;
    spec.config.examples = 2 * 48 * 10; /* 10 steps a worker */
    spec.config.epochs = 1;
    const double step = costmodel_step_time(&spec.params, &spec.config);
    cr_assert_eq(job_schedule_of(&spec.config).steps_per_epoch, 10);
    enum { RUNS = 3000 };
    double wait = 0;
    for (unsigned long seed = 1; seed <= RUNS; seed++)
        wait += run_once(&spec, seed, NULL).barrier_wait_s / RUNS;
    const double want = 0.0563720 * 10 * step;
    cr_assert(close_rel(wait, want, 0.06), "mean wait %.6g, n·step·(2Φ(ς/√2) − 1) = %.6g (%.1f%%)", wait, want,
              100 * (wait / want - 1));
    spec.params.rank_cv = 0; /* ranks alike: no wait without a step spread */
    cr_assert_float_eq(run_once(&spec, 7, NULL).barrier_wait_s, 0.0, 1e-15);
}

/* Ranks that block while they wait, K on `cores` cores, batch sync, 20000 rounds; each
 * step slowed by the closed form's ρ', and the round's draws stretched as model/gmax.h's
 * G_ρ(K) has it. */
static job_spec blocking_spec(int k, double cores) {
    job_spec spec = { .params = test_params(), .config = test_config(k, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE),
                      .contention = JOB_CONTENTION_CLOSED_FORM };
    spec.params.host_cores = cores;
    spec.params.waits_block = 1;
    spec.config.examples = 20000L * 48;
    spec.config.epochs = 1;
    return spec;
}

/* What a round of spec takes beyond its step and exchange: the run with CV less the run
 * without, per round. */
static double shared_round_excess(job_spec spec, double cv) {
    job_result flat = run_once(&spec, 42, NULL);
    spec.params.cv = cv;
    job_result spread = run_once(&spec, 42, NULL);
    return (spread.makespan_s - flat.makespan_s) / 20000.0;
}

Test(sim, ranks_that_block_share_the_cores_and_wait_for_a_third_of_the_slowest) {
    /* K = 3 on 2 cores: the round ends CV·step·G(3)/3 = CV·step/(2√π) after its mean
     * (model/gmax.h), where ranks that each keep a core wait CV·step·G(3). */
    const job_spec spec = blocking_spec(3, 2);
    const double step = costmodel_step_time(&spec.params, &spec.config), cv = 0.05;
    const double got = shared_round_excess(spec, cv), want = cv * step * 0.28209479177387814; /* 1/(2√π) */
    cr_assert(close_rel(got, want, 0.05), "K=3 on 2 cores: a round %.6g s beyond its mean, CV·step/(2√π) = %.6g (%.1f%%)",
              got, want, 100 * (got / want - 1));
}

Test(sim, two_ranks_that_block_on_one_core_never_leave_it_idle) {
    /* The second rank runs alone on the core once the first ends: the round is the mean
     * of the two draws, its excess 0 up to the draws' own spread (CV·step/√(2·20000)). */
    const job_spec spec = blocking_spec(2, 1);
    const double step = costmodel_step_time(&spec.params, &spec.config), cv = 0.05;
    const double got = shared_round_excess(spec, cv);
    cr_assert(fabs(got) < 4 * cv * step / sqrt(40000.0), "a round %.3g s beyond its mean (step %.3g s)", got, step);
}

Test(sim, busy_plus_idle_is_the_makespan_for_every_worker) {
    static const struct { int k; job_sync s; int n; job_topology t; job_master m; job_launch l; } cases[] = {
        { 5, JOB_SYNC_BATCH, 1, JOB_TOPO_PS, JOB_MASTER_WORKER, JOB_LAUNCH_PARALLEL },
        { 7, JOB_SYNC_EVERY, 3, JOB_TOPO_PS, JOB_MASTER_DEDICATED, JOB_LAUNCH_SEQUENTIAL },
        { 16, JOB_SYNC_EPOCH, 0, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, JOB_LAUNCH_SEQUENTIAL },
        { 33, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, JOB_LAUNCH_PARALLEL },
    };
    /* On unlimited cores, and on 2 where the simulator schedules them (ps workers starting
     * after their own pulls). */
    for (size_t c = 0; c < 2 * sizeof cases / sizeof cases[0]; c++) {
        const size_t i_case = c % (sizeof cases / sizeof cases[0]);
        job_spec spec = { .params = test_params(),
                          .config = test_config(cases[i_case].k, cases[i_case].s, cases[i_case].n, cases[i_case].t),
                          .launch = cases[i_case].l };
        spec.params.cv = 0.3;
        spec.params.host_cores = c < sizeof cases / sizeof cases[0] ? 0 : 2;
        spec.config.master = cases[i_case].m;
        job *j;
        job_result r = run_once(&spec, 9, &j);
        const job_worker *w = job_workers(j);
        double sum_wait = 0;
        for (int i = 0; i < cases[i_case].k; i++) {
            double total = w[i].startup_s + w[i].compute_s + w[i].update_s + w[i].comm_s + w[i].wait_s;
            cr_assert(close_rel(total, r.makespan_s, 1e-12), "case %zu worker %d: %.15g != makespan %.15g", c, i, total,
                      r.makespan_s);
            sum_wait += w[i].wait_s;
        }
        cr_assert_gt(sum_wait, 0, "case %zu: with spread somebody waits", c);
        job_free(j);
    }
}

/* The spans of one worker, through the timeline callback. */
typedef struct {
    double sum, sum2;
    long n;
} span_stats;

static void collect_compute(void *ctx, int rank, trace_phase ph, double t0_s, double t1_s) {
    span_stats *s = ctx;
    if (rank == 0 && ph == TRACE_COMPUTE) {
        double d = t1_s - t0_s;
        s->sum += d;
        s->sum2 += d * d;
        s->n++;
    }
}

Test(sim, compute_spans_have_the_calibrated_mean_and_cv) {
    /* 40000 steps of one worker: sample mean within 0.5% of costmodel_step_time, sample
     * CV within 3% of the calibrated 0.3 (standard errors: 0.15% and 0.4%). */
    job_spec spec = { .params = test_params(), .config = test_config(1, JOB_SYNC_EPOCH, 0, JOB_TOPO_PS) };
    spec.params.cv = 0.3;
    spec.config.examples = 48L * 40000;
    spec.config.epochs = 1;
    char err[256] = "";
    job *j = job_new(&spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    span_stats st = { 0 };
    job_set_timeline(j, collect_compute, &st);
    job_result r;
    cr_assert_eq(job_run(j, 5, &r, err, sizeof err), 0, "%s", err);
    job_free(j);
    cr_assert_eq(st.n, 40000);
    double mean = st.sum / st.n, sd = sqrt(st.sum2 / st.n - mean * mean);
    double want = costmodel_step_time(&spec.params, &spec.config);
    cr_assert(close_rel(mean, want, 0.005), "mean step %g, model %g", mean, want);
    cr_assert(close_rel(sd / mean, 0.3, 0.03), "cv %g", sd / mean);
}

Test(sim, pending_events_stay_within_one_per_worker) {
    /* Memory is O(K): however long the run, at most one event per worker and one for the
     * master's link (or the ring) wait in the queue. */
    for (int epochs = 1; epochs <= 8; epochs *= 8) {
        job_spec spec = { .params = test_params(), .config = test_config(64, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
        spec.params.cv = 0.2;
        spec.config.epochs = epochs;
        job_result r = run_once(&spec, 1, NULL);
        cr_assert_leq(r.peak_pending, 64 + 1, "epochs %d: %ld pending", epochs, r.peak_pending);
        cr_assert_geq(r.peak_pending, 64);
    }
}

/* ---------------------------------------------------------------------------------- */
/* Determinism */

static job_result run_spread(unsigned long seed, job_worker *workers, int k) {
    job_spec spec = { .params = test_params(), .config = test_config(k, JOB_SYNC_EVERY, 3, JOB_TOPO_PS) };
    spec.params.cv = 0.2;
    job *j;
    job_result r = run_once(&spec, seed, &j);
    memcpy(workers, job_workers(j), sizeof *workers * (size_t)k);
    job_free(j);
    return r;
}

Test(sim, same_seed_gives_bit_identical_results) {
    job_worker a[12], b[12];
    job_result ra = run_spread(77, a, 12), rb = run_spread(77, b, 12);
    cr_assert_eq(memcmp(&ra, &rb, sizeof ra), 0);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
}

Test(sim, different_seed_gives_a_different_result) {
    job_worker a[12], b[12];
    job_result ra = run_spread(77, a, 12), rb = run_spread(78, b, 12);
    cr_assert_neq(ra.makespan_s, rb.makespan_s);
    cr_assert_neq(memcmp(a, b, sizeof a), 0);
}

Test(sim, replications_give_an_interval_around_the_mean) {
    job_spec spec = { .params = test_params(), .config = test_config(8, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.params.cv = 0.2;
    replicate_summary s;
    char err[256];
    cr_assert_eq(replicate_run(&spec, NULL, 20, 5, &s, err, sizeof err), 0, "%s", err);
    cr_assert_lt(s.time_lo_s, s.time_s);
    cr_assert_gt(s.time_hi_s, s.time_s);
    cr_assert_lt(s.speedup_lo, s.speedup);
    cr_assert_gt(s.speedup_hi, s.speedup);
    /* Stragglers only ever slow a barrier down: the mean is above the no-spread time. */
    spec.params.cv = 0;
    cr_assert_gt(s.time_s, costmodel_total_time(&spec.params, &spec.config));
}

Test(sim, interval_uses_students_t) {
    /* x = 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.302653 → half-width 4.302653/√3. */
    double x[] = { 1, 2, 3 }, mean, half;
    replicate_interval(x, 3, &mean, &half);
    cr_assert_float_eq(mean, 2.0, 1e-15);
    cr_assert_float_eq(half, 4.30265272974946 / sqrt(3.0), 1e-9);
}

Test(sim, prediction_interval_is_students_t_for_one_more_draw_on_the_log_scale) {
    /* ln x = 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.302653, √(1 + 1/3):
     * exp(2 ± 4.302653·√(4/3)). */
    double x[] = { exp(1.0), exp(2.0), exp(3.0) }, lo, hi;
    cr_assert_eq(replicate_prediction_interval(x, 3, &lo, &hi), 0);
    double half = 4.30265272974946 * sqrt(4.0 / 3.0);
    cr_assert(close_rel(lo, exp(2 - half), 1e-9), "lo %.12g", lo);
    cr_assert(close_rel(hi, exp(2 + half), 1e-9), "hi %.12g", hi);
}

/* ---------------------------------------------------------------------------------- */
/* The prediction interval of one run */

/* 4 workers, batch sync, ps, CV = 0.1, run-to-run spread 0.05, parameters known. */
static job_spec noisy_spec(void) {
    job_spec spec = { .params = test_params(), .config = test_config(4, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.params.cv = 0.1;
    spec.params.run_cv = 0.05;
    return spec;
}

Test(sim, prediction_interval_covers_95_percent_of_single_runs) {
    /* 400 user runs made here, independently of replicate_run: the job simulated with
     * seeds of another stream, each time times a run factor the test draws itself
     * (log-normal, median 1, log-sd 0.05). About 380 should fall inside; the binomial sd
     * is 4.4, so 360 (90%) and 396 (99%) are more than 3.5 sd away. */
    job_spec spec = noisy_spec();
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 200, 1, &s, err, sizeof err), 0, "%s", err);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(rng, 20240611);
    job *j = job_new(&spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    int inside = 0;
    for (int i = 0; i < 400; i++) {
        job_result r;
        cr_assert_eq(job_run(j, 0x5eed0000UL + (unsigned long)i, &r, err, sizeof err), 0, "%s", err);
        double t = r.makespan_s * gsl_ran_lognormal(rng, 0.0, 0.05);
        inside += t >= s.time_lo_s && t <= s.time_hi_s;
    }
    job_free(j);
    gsl_rng_free(rng);
    cr_assert(inside >= 360 && inside <= 396, "%d of 400 single runs inside [%g, %g]", inside, s.time_lo_s, s.time_hi_s);
}

Test(sim, prediction_interval_matches_the_closed_form_of_the_run_factor) {
    /* CV = 0 and parameters known: only the run factors spread, ln f ~ N(0, 0.05²), so
     * one run's time is T·exp(±1.96·0.05) and its speedup S·exp(±1.96·0.05·√2) (two
     * runs). 400 replications estimate the sd within about 4%; allow 10% of the
     * half-width on the log scale. */
    job_spec spec = noisy_spec();
    spec.params.cv = 0;
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 400, 7, &s, err, sizeof err), 0, "%s", err);
    double t = costmodel_total_time(&spec.params, &spec.config), sp = costmodel_speedup(&spec.params, &spec.config);
    double half = 1.959963984540054 * 0.05;
    cr_assert(fabs(log(s.time_hi_s / t) - half) < 0.1 * half, "time hi %g, T %g", s.time_hi_s, t);
    cr_assert(fabs(log(t / s.time_lo_s) - half) < 0.1 * half, "time lo %g, T %g", s.time_lo_s, t);
    cr_assert(fabs(log(s.speedup_hi / sp) - half * sqrt(2.0)) < 0.1 * half * sqrt(2.0), "speedup hi %g, S %g",
              s.speedup_hi, sp);
}

Test(sim, without_any_spread_the_prediction_interval_is_the_point) {
    job_spec spec = noisy_spec();
    spec.params.cv = 0;
    spec.params.run_cv = 0;
    uncertainty none = { 0 };
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, &none, 10, 1, &s, err, sizeof err), 0, "%s", err);
    double t = costmodel_total_time(&spec.params, &spec.config);
    cr_assert(close_rel(s.time_s, t, 1e-9), "%.12g vs %.12g", s.time_s, t);
    cr_assert_eq(s.time_lo_s, s.time_s);
    cr_assert_eq(s.time_hi_s, s.time_s);
    cr_assert_eq(s.speedup_lo, s.speedup);
    cr_assert_eq(s.speedup_hi, s.speedup);
}

Test(sim, a_parameter_at_its_bound_widens_the_interval_but_does_not_move_the_point) {
    /* One worker, no step spread, c0 = 0 (a non-negative fit at its bound) with a standard
     * error of 10 ms, run_cv 0.1: D = 1000, B = 48, E = 2 is 2 · ⌈1000/48⌉ = 42 steps, each
     * priced as a whole batch (the short last one too), and with nothing else to pay the
     * run takes 42 · 48 · 2 ms = 4.032 s. The drawn c0 is never below 0, so the drawn runs
     * average 42 · 0.8 · 10 ms more (a half-normal's mean, σ·√(2/π)) and more again for the
     * run factor: the point must stay 4.032 s, the interval must reach above what the
     * factor alone gives (4.032 s · e^(1.96 · 0.1)). */
    job_spec spec = { .params = test_params(), .config = test_config(1, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.params.c0_s = 0;
    spec.params.w0_s = spec.params.w1_s = spec.params.startup_cpu_s = spec.params.update_s = 0;
    spec.params.run_cv = 0.1;
    uncertainty u = { .se = { .c0_s = 0.01 } };
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, &u, 200, 1, &s, err, sizeof err), 0, "%s", err);
    const double t = 42 * 48 * 0.002;
    cr_assert(close_rel(s.time_s, t, 1e-9), "point %.12g, not %g s", s.time_s, t);
    cr_assert(close_rel(s.time_mean_lo_s, t, 1e-9) && close_rel(s.time_mean_hi_s, t, 1e-9),
              "the mean's interval [%g, %g]: the central runs have no spread", s.time_mean_lo_s, s.time_mean_hi_s);
    cr_assert_gt(s.time_hi_s, t * exp(1.959963984540054 * 0.1), "interval [%g, %g]", s.time_lo_s, s.time_hi_s);
    cr_assert_lt(s.time_lo_s, t);
}

Test(sim, interval_of_the_mean_is_much_narrower_than_one_runs) {
    /* Over R = 30 replications the mean's half-width is t·sd/√30, one run's about
     * t·sd·√(31/30): √31 ≈ 5.6 times wider. Require at least 4 times. */
    job_spec spec = noisy_spec();
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 30, 3, &s, err, sizeof err), 0, "%s", err);
    double pi = s.speedup_hi - s.speedup_lo, mean = s.speedup_mean_hi - s.speedup_mean_lo;
    cr_assert_gt(mean, 0);
    cr_assert_gt(pi, 4 * mean, "one run [%g, %g], the mean [%g, %g]", s.speedup_lo, s.speedup_hi, s.speedup_mean_lo,
                 s.speedup_mean_hi);
    cr_assert_gt(s.time_hi_s - s.time_lo_s, 4 * (s.time_mean_hi_s - s.time_mean_lo_s));
}

Test(sim, parameter_draws_widen_the_interval_and_negative_c0_c1_covariance_narrows_it) {
    /* One worker at the batch c0 and c1 were calibrated on (B = 32), no other spread:
     * the step c0 + 32·c1 varies by se0² + 32²·se1² + 2·32·cov. With cov = −0.9·se0·se1
     * the fit knew the step far better than either parameter (var 1.37e-4 against
     * 2.81e-4 s²): the interval must be narrower than with cov = 0. */
    job_spec spec = { .params = test_params(), .config = test_config(1, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.config.batch = 32;
    spec.params.w0_s = spec.params.w1_s = spec.params.update_s = 0;
    uncertainty u = { .se = { .c0_s = 0.005, .c1_s = 0.0005 } };
    replicate_summary indep, neg, known;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 200, 1, &known, err, sizeof err), 0, "%s", err);
    cr_assert_eq(replicate_run(&spec, &u, 200, 1, &indep, err, sizeof err), 0, "%s", err);
    u.cov_c0_c1 = -0.9 * 0.005 * 0.0005;
    cr_assert_eq(replicate_run(&spec, &u, 200, 1, &neg, err, sizeof err), 0, "%s", err);
    double w_known = known.time_hi_s - known.time_lo_s, w_indep = indep.time_hi_s - indep.time_lo_s,
           w_neg = neg.time_hi_s - neg.time_lo_s;
    cr_assert_eq(w_known, 0, "nothing spreads without the parameters");
    /* sd ratio √(1.37/2.81) = 0.70; sampling error of each sd about 5%. */
    cr_assert_lt(w_neg, 0.85 * w_indep, "cov < 0: %g, cov = 0: %g", w_neg, w_indep);
    cr_assert_gt(w_neg, 0);
}

Test(sim, master_memory_is_three_model_copies_for_a_parameter_server) {
    job_spec spec = { .params = test_params(), .config = test_config(4, JOB_SYNC_EPOCH, 0, JOB_TOPO_PS) };
    job_result r = run_once(&spec, 1, NULL);
    cr_assert_eq(r.master_peak_bytes, 3 * spec.params.model_bytes);
    spec.config.topology = JOB_TOPO_ALLREDUCE;
    r = run_once(&spec, 1, NULL);
    cr_assert_eq(r.master_peak_bytes, 3 * spec.params.model_bytes + spec.params.model_bytes / 4);
}

/* ---------------------------------------------------------------------------------- */
/* Replay */

/* A trace of one worker, T = 1, B = 32, with the given compute spans of the given
 * examples (NULL: 32 each). */
static char *write_trace_of(const double *spans, const long *examples, int n, int workers, int host_cores) {
    trace_run run = { .host_cores = host_cores, .model_bytes = 1000, .seed = 1 };
    snprintf(run.host, sizeof run.host, "test");
    run.config = (job_config){ .workers = workers, .cores = 1,
                                     .sync = workers > 1 ? JOB_SYNC_EPOCH : JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = JOB_TOPO_PS, .examples = 320, .batch = 32, .epochs = 1 };
    trace *t = trace_new(&run);
    double at = 0;
    for (int i = 0; i < n; i++) {
        trace_event e = { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = at, .t1_s = at + spans[i], .epoch = 0, .step = i,
                          .examples = examples ? examples[i] : 32 };
        trace_add(t, &e);
        at += spans[i];
    }
    char *dir = clirun_tmpdir();
    char *path = malloc(strlen(dir) + 32);
    sprintf(path, "%s/run.trace.jsonl", dir);
    char err[256];
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    free(dir);
    return path;
}

static char *write_trace(const double *spans, const long *examples, int n) {
    return write_trace_of(spans, examples, n, 1, 0);
}

/* Replays the trace at path on 4 workers, T = 2, σ = 0, c1 = 0.01, B = 128 (local batch 32,
 * as measured): the model halves a one-core step. Returns the makespan; *want is the
 * closed form with c1 doubled (every replayed step 0.64 s at one core). */
static double replay_makespan(const char *path, double *want) {
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    job_spec spec = { .params = test_params(), .config = test_config(4, JOB_SYNC_BATCH, 1, JOB_TOPO_PS), .replay = rp };
    spec.params.c0_s = 0;
    spec.params.c1_s = 0.01;
    spec.params.sigma = 0;
    spec.config.batch = 128;
    spec.config.cores = 2;
    job_result r = run_once(&spec, 1, NULL);
    costmodel_params doubled = spec.params;
    doubled.c1_s = 0.02;
    *want = costmodel_total_time(&doubled, &spec.config);
    job_replay_free(rp);
    return r.makespan_s;
}

Test(sim, replay_scales_measured_steps_to_the_simulated_config) {
    /* The model says a 32-example step on one core takes 0.32 s; the trace measured
     * 0.64 s. At T = 2 with σ = 0 the model halves it, so the replayed steps take 0.32 s:
     * the closed form with c1 doubled. */
    double spans[] = { 0.64, 0.64, 0.64 };
    char *path = write_trace(spans, NULL, 3);
    double want, got = replay_makespan(path, &want);
    cr_assert(close_rel(got, want, 1e-9), "%.12g vs %.12g", got, want);
    remove(path);
    free(path);
}

Test(sim, replay_on_a_cluster_scales_by_the_host_the_trace_ran_on) {
    /* The trace: 3 workers of one core on a 2-core host (ρ = 1.5), epoch sync, 32-example
     * steps of 0.96 s where the model (c1 = 0.01) says 0.01·1.5·32 = 0.48: twice as slow.
     * Replayed on 4 machines of 2 cores, K = 4 (ρ = 1, model step 0.32), each step is
     * 0.64 s: the closed form with c1 doubled. Read as if the trace had run on the cluster
     * (ρ = 1 there) the steps would be 0.96 s. */
    double spans[] = { 0.96, 0.96, 0.96 };
    char *path = write_trace_of(spans, NULL, 3, 3, 2);
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    job_spec spec = { .params = test_params(), .config = test_config(4, JOB_SYNC_EPOCH, 0, JOB_TOPO_PS),
                      .replay = rp };
    spec.params.c0_s = 0;
    spec.params.c1_s = 0.01;
    spec.params.sigma = 0;
    spec.params.oversub_compute = 0; /* the trace's host slows its steps by ρ alone */
    spec.params.host_cores = 2;
    spec.params.machines = 4;
    spec.config.batch = 32;
    job_result r = run_once(&spec, 1, NULL);
    costmodel_params doubled = spec.params;
    doubled.c1_s = 0.02;
    double want = costmodel_total_time(&doubled, &spec.config);
    cr_assert(close_rel(r.makespan_s, want, 1e-9), "%.12g vs %.12g", r.makespan_s, want);
    job_replay_free(rp);
    remove(path);
    free(path);
}

Test(sim, replay_resamples_the_measured_spans) {
    /* Spans 0.2 and 0.6 at equal odds: one worker's mean step is 0.4, and both occur. */
    double spans[] = { 0.2, 0.6 };
    char *path = write_trace(spans, NULL, 2);
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    job_spec spec = { .params = test_params(), .config = test_config(1, JOB_SYNC_BATCH, 1, JOB_TOPO_PS), .replay = rp };
    spec.params.c0_s = 0;
    spec.params.c1_s = 0.01;
    spec.params.sigma = 0;
    spec.config.batch = 32;
    spec.config.examples = 32L * 4000;
    spec.config.epochs = 1;
    job_result r = run_once(&spec, 3, NULL);
    double mean_step = r.compute_s / 4000;
    cr_assert(fabs(mean_step - 0.4) < 0.01, "mean replayed step %g", mean_step);
    job_replay_free(rp);
    remove(path);
    free(path);
}

Test(sim, replay_draws_only_steps) {
    /* Three 32-example steps of 0.64 s between 5 s compute spans of no examples (a
     * dedicated master's turns, empty slices): only the steps are drawn, so every replayed
     * step is the same and the makespan is the closed form's with c1 doubled. Drawing the
     * 5 s spans would make it about 3x longer. */
    double spans[] = { 0.64, 5.0, 0.64, 5.0, 0.64, 5.0 };
    long examples[] = { 32, 0, 32, 0, 32, 0 };
    char *path = write_trace(spans, examples, 6);
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    cr_assert_eq(rp->n, 3);
    job_replay_free(rp);
    double want, got = replay_makespan(path, &want);
    cr_assert(close_rel(got, want, 1e-9), "%.12g vs %.12g", got, want);
    remove(path);
    free(path);
}

Test(sim, replay_scales_each_step_by_its_own_examples) {
    /* With c0 = 0 a step's time is proportional to its examples: 0.64 s for 32 and 0.32 s
     * for a short slice of 16 run at the same speed. Scaled per its examples the short one
     * stands for a full 0.64 s step, so every replayed step is the same; scaled by the
     * trace's local batch alone it would be drawn as a fast step and shorten the run. */
    double spans[] = { 0.64, 0.32, 0.64, 0.32 };
    long examples[] = { 32, 16, 32, 16 };
    char *path = write_trace(spans, examples, 4);
    double want, got = replay_makespan(path, &want);
    cr_assert(close_rel(got, want, 1e-9), "%.12g vs %.12g", got, want);
    remove(path);
    free(path);
}

Test(sim, replay_of_a_trace_that_does_not_parse_names_the_line) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "bad.trace.jsonl", "{\"run\": {\"format\": \"speedup-trace\"\n");
    char err[256] = "";
    cr_assert_null(job_replay_read(path, err, sizeof err));
    cr_assert(strstr(err, path) != NULL && strstr(err, "line 1") != NULL, "%s", err);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

/* ---------------------------------------------------------------------------------- */
/* Bad input */

Test(sim, zero_workers_is_refused_by_name) {
    job_spec spec = { .params = test_params(), .config = test_config(0, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    char err[256] = "";
    cr_assert_null(job_new(&spec, err, sizeof err));
    cr_assert(strstr(err, "workers") != NULL, "%s", err);
}

Test(sim, negative_bandwidth_is_refused_by_name) {
    job_spec spec = { .params = test_params(), .config = test_config(4, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE) };
    spec.params.link[JOB_TOPO_ALLREDUCE].beta_s_per_byte = -1e-9;
    char err[256] = "";
    cr_assert_null(job_new(&spec, err, sizeof err));
    cr_assert(strstr(err, "beta_allreduce must be a finite number >= 0") != NULL, "%s", err);
}

Test(sim, zero_replications_are_refused) {
    job_spec spec = { .params = test_params(), .config = test_config(2, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 0, 1, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "replications") != NULL, "%s", err);
}

/* Batch sync through an all-reduce at K workers, simulated with zero variance: its
 * makespan and comm are the closed form's (asserted); the result. */
static job_result batch_all_reduce_as_closed_form(const costmodel_params *p, int k) {
    job_config c = test_config(k, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE);
    job_spec spec = { .params = *p, .config = c };
    job_result r = run_once(&spec, 1, NULL);
    costmodel_breakdown b = costmodel_breakdown_of(p, &c);
    cr_assert(close_rel(r.makespan_s, b.total_s, 1e-9), "K=%d: %.12g vs %.12g", k, r.makespan_s, b.total_s);
    cr_assert(fabs(r.comm_s - b.comm_s) < 1e-12, "K=%d comm %.12g vs %.12g", k, r.comm_s, b.comm_s);
    return r;
}

Test(sim, overlap_leaves_the_round_waiting_for_the_exposed_part_as_the_closed_form_says) {
    /* Zero variance: each worker's last step is the mean step, so the head start is
     * φ·step and the round waits max(0, S − φ·step), the closed form's X(K). By hand at
     * K = 5: b = ⌈48/5⌉ = 10, step = 0.01 + 0.002·10 = 0.03 s (σ does not matter at T = 1);
     * S(5) = 8·(2e-4 + 3e-9·1e6/5) = 0.0064 s. φ = 0.1 hides 0.003 s: 0.0034 s exposed per
     * synchronisation, 2 epochs of ⌈1000/48⌉ = 21 steps: comm 42·0.0034 = 0.1428 s. With
     * φ = 0.6 (0.018 s) it hides entirely: comm 0. */
    costmodel_params p = test_params();
    const double phi[] = { 0.1, 0.6 }, comm5[] = { 0.1428, 0.0 };
    for (int i = 0; i < 2; i++) {
        p.overlap = phi[i];
        for (int k = 1; k <= 5; k += 2) {
            job_result r = batch_all_reduce_as_closed_form(&p, k);
            if (k == 5)
                cr_assert(fabs(r.comm_s - comm5[i]) < 1e-12, "phi %g: comm %.12g", phi[i], r.comm_s);
        }
    }
}

Test(sim, an_overlapped_exchange_leaves_its_exposed_share_and_slows_the_step_as_the_closed_form_says) {
    /* As above at K = 5 with φ = 0.6, which alone would hide all of S(5) = 0.0064 s: ε =
     * 0.25 keeps 0.0016 s of every synchronisation exposed, comm 42·0.0016 = 0.0672 s; χ =
     * 0.5 makes each step 0.045 s, compute 42·0.045 = 1.89 s. */
    costmodel_params p = test_params();
    p.overlap = 0.6;
    p.overlap_exposed = 0.25;
    p.overlap_slowdown = 0.5;
    batch_all_reduce_as_closed_form(&p, 1);
    batch_all_reduce_as_closed_form(&p, 3);
    job_result r = batch_all_reduce_as_closed_form(&p, 5);
    cr_assert(fabs(r.comm_s - 0.0672) < 1e-12, "comm %.12g", r.comm_s);
    job_config c5 = test_config(5, JOB_SYNC_BATCH, 1, JOB_TOPO_ALLREDUCE);
    cr_assert(fabs(costmodel_breakdown_of(&p, &c5).compute_s - 1.89) < 1e-9, "compute");
}


/* ---------------------------------------------------------------------------------- */
/* Living with its caller */

static void caller_handler(const char *reason, const char *file, int line, int gsl_errno) {
    (void)reason, (void)file, (void)line, (void)gsl_errno;
}

Test(sim, gsl_error_handler_of_the_caller_is_left_in_place) {
    // The process's GSL handler is the program's choice: building, running and replicating a
    // job may not switch it off behind the caller's back (job.c used to, for good).
    gsl_set_error_handler(caller_handler);
    job_spec spec = { .params = test_params(), .config = test_config(2, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    job *j = NULL;
    run_once(&spec, 1, &j);
    job_free(j);
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, NULL, 3, 1, &s, err, sizeof err), 0, "%s", err);
    cr_assert(gsl_set_error_handler(NULL) == caller_handler, "the caller's GSL error handler was replaced");
}

/* ---------------------------------------------------------------------------------- */
/* Async and hogwild: a master that takes one push in and sends one pull out at a time */

/* Two workers on a cluster of two 2-core machines, the dedicated master on machine 0 with
 * worker 0 (messages by shared memory: α = 0.1 s) and worker 1 on machine 1 (α plus the
 * network's 0.2 s: 0.3 s); no bandwidth term; steps of exactly 1 s (c0 = 1, c1 = 0); an
 * update of 0.25 s; no start-up; one epoch of 2 steps each (D = 4, B = 1); pull every step. */
static job_spec async_by_hand(job_sync sync) {
    job_spec spec = { 0 };
    costmodel_params *p = &spec.params;
    p->c0_s = 1.0;
    p->model_bytes = 1000;
    p->update_s = 0.25;
    p->host_cores = 2;
    p->machines = 2;
    p->link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.1 };
    p->net = (costmodel_link){ .alpha_s = 0.2 };
    spec.config = (job_config){ .workers = 2, .cores = 1, .sync = sync, .every_n = 1,
                                      .topology = JOB_TOPO_PS, .master = JOB_MASTER_DEDICATED,
                                      .examples = 4, .batch = 1, .epochs = 1 };
    return spec;
}

/* Async by hand (A = worker 0, m = 0.1; B = worker 1, m = 0.3; "v" = updates applied). The
 * master takes a push in while it sends a pull out, one of each at a time:
 *   0     pulls queued [A, B]; A.pull 0–0.1 (v 0), A steps 0.1–1.1; B.pull 0.1–0.4 (v 0),
 *         B steps 0.4–1.4
 *   1.1   A.push 1.1–1.2; update 1.2–1.45 (staleness 0 − 0 = 0); A asks to pull at 1.2: it
 *         waits for its own push's update
 *   1.4   B asks to push: queued (the master is updating)
 *   1.45  v 1; at once A.pull 1.45–1.55 (v 1) out and B.push 1.45–1.75 in; A steps
 *         1.55–2.55; update 1.75–2.00 (staleness 1 − 0 = 1); B asks to pull at 1.75
 *   2.00  v 2; B.pull 2.00–2.30 (v 2), B steps 2.30–3.30
 *   2.55  A.push 2.55–2.65, update 2.65–2.90 (staleness 2 − 1 = 1); A done: barrier at 2.65
 *   3.30  B.push 3.30–3.60, update 3.60–3.85 (staleness 3 − 2 = 1); B at the barrier at 3.60
 *   3.85  v 4, the master idle: the epoch (and the job) ends.
 * (One request at a time, B.push would have waited for A.pull until 1.55: 3.95.)
 * Staleness 0, 1, 1, 1: median 1, 90th percentile 1 (0.9·3 = 2.7 between two 1s), mean
 * 0.75. A: compute 2, comm 4 × 0.1, wait 0.25 (its second pull) + 1.20 (barrier); B:
 * compute 2, comm 4 × 0.3, wait 0.1 + 0.05 + 0.25 (queued) + 0.25 (barrier). */
/* What a hand-worked case must give: the makespan, the four gradients' staleness
 * (median, 90th percentile, mean) and each worker's wait (its comm is 4 messages: 0.4 s
 * for A, 1.2 s for B; its compute 2 s; no update of its own). */
typedef struct {
    double makespan, median, p90, mean, wait_a, wait_b;
} by_hand;

static void assert_by_hand(job_sync sync, by_hand want) {
    job_spec spec = async_by_hand(sync);
    job *j = NULL;
    job_result r = run_once(&spec, 1, &j);
    cr_assert_float_eq(r.makespan_s, want.makespan, 1e-9);
    cr_assert_eq(r.updates, 4);
    cr_assert_float_eq(r.staleness_median, want.median, 1e-12);
    cr_assert_float_eq(r.staleness_p90, want.p90, 1e-12);
    cr_assert_float_eq(r.staleness_mean, want.mean, 1e-12);
    const job_worker *w = job_workers(j);
    for (int k = 0; k < 2; k++) {
        cr_assert_float_eq(w[k].compute_s, 2.0, 1e-9);
        cr_assert_float_eq(w[k].comm_s, k ? 1.2 : 0.4, 1e-9);
        cr_assert_float_eq(w[k].wait_s, k ? want.wait_b : want.wait_a, 1e-9);
        cr_assert_float_eq(w[k].update_s, 0.0, 1e-12, "the update is the master's");
    }
    job_free(j);
}

Test(sim, async_master_queues_requests_as_worked_out_by_hand) {
    assert_by_hand(JOB_SYNC_ASYNC, (by_hand){ .makespan = 3.85, .median = 1, .p90 = 1, .mean = 0.75,
                                                    .wait_a = 1.45, .wait_b = 0.65 });
}

/* Hogwild by hand, one updater thread (T = 1): a push goes to the updater and the master
 * takes the next request at once; a pull never waits for an update:
 *   0     A.pull 0–0.1 (v 0), A steps 0.1–1.1; B.pull 0.1–0.4 (v 0), B steps 0.4–1.4
 *   1.1   A.push 1.1–1.2; the updater 1.2–1.45 (staleness 0); A.pull 1.2–1.3 (v 0: the
 *         update is not done), A steps 1.3–2.3
 *   1.4   B.push waits for the updater: at 1.45 v 1, B.push 1.45–1.75; updater 1.75–2.00
 *         (staleness 1 − 0 = 1); B.pull 1.75–2.05 (v 1), B steps 2.05–3.05
 *   2.00  v 2
 *   2.3   A.push 2.3–2.4, updater 2.4–2.65 (staleness 2 − 0 = 2); A at the barrier at 2.4
 *   2.65  v 3
 *   3.05  B.push 3.05–3.35, updater 3.35–3.60 (staleness 3 − 1 = 2); B at the barrier
 *   3.60  v 4, no update left: the job ends.
 * Staleness 0, 1, 2, 2: median 1.5, 90th percentile 2, mean 1.25. A waits only at the
 * barrier (1.2); B 0.1 + 0.05 + 0.25. */
Test(sim, hogwild_master_hands_updates_to_its_thread_as_worked_out_by_hand) {
    assert_by_hand(JOB_SYNC_HOGWILD, (by_hand){ .makespan = 3.6, .median = 1.5, .p90 = 2, .mean = 1.25,
                                                      .wait_a = 1.2, .wait_b = 0.4 });
}

/* async_by_hand's two workers with steps of 0.1 s, no update time, 20 steps each. */
static job_spec twenty_short_steps_each(void) {
    job_spec spec = async_by_hand(JOB_SYNC_ASYNC);
    spec.params.c0_s = 0.1;
    spec.params.update_s = 0;
    spec.config.examples = 40;
    return spec;
}

/* Two workers across the network (1-core machines: the master's machine holds no worker),
 * transfers of m = 1 s (the network's α), steps of c = 0.1 s, no update time, 20 steps each
 * pulling every step. The master takes a push in while it sends a pull out, so the
 * workers fall out of step, one pulling while the other pushes, and neither waits after
 * B's first pull: A pulls 0–1, steps 1–1.1, pushes 1.1–2.1, pulls 2.1–3.1, …, a cycle of
 * 2m + c = 2.1 s; B runs 1 s behind (its first pull after A's), its pushes in while A's
 * pulls go out. A ends at 20·2.1 = 42 s, B at 43 s: the makespan. Each gradient but the
 * first two has the other's push between its pull and its own: staleness K − 1 = 1. One
 * request at a time, a master would need 2m per update: 80 s. */
Test(sim, async_master_takes_a_push_in_while_it_sends_a_pull_out) {
    job_spec spec = twenty_short_steps_each();
    spec.params.host_cores = 1;
    spec.params.machines = 3;
    spec.params.link[JOB_TOPO_PS] = (costmodel_link){ 0 };
    spec.params.net = (costmodel_link){ .alpha_s = 1.0 };
    const job_result r = run_once(&spec, 1, NULL);
    cr_assert_float_eq(r.makespan_s, 43.0, 1e-9);
    cr_assert_eq(r.updates, 40);
    cr_assert_float_eq(r.staleness_median, 1.0, 1e-12);
}

/* The same two workers on the master's own 2-core host, whose workers take both cores:
 * every message is the link's 0.4 s plus the crowded master's wake of 0.6 s, m = 1 s
 * again (a master that gives its whole core back, y = 1: ρ = 1, steps unslowed), so the
 * same 43 s. Without the wake, m = 0.4 s: A's cycle 2·0.4 + 0.1 = 0.9 s, 20 of them and
 * B 0.4 s behind: 18.4 s. */
Test(sim, a_crowded_masters_wake_lengthens_every_local_message) {
    job_spec spec = twenty_short_steps_each();
    spec.params.machines = 0;
    spec.params.master_yield = 1;
    spec.params.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.4 };
    spec.params.master_wake_s = 0.6;
    cr_assert_float_eq(run_once(&spec, 1, NULL).makespan_s, 43.0, 1e-9);
    spec.params.master_wake_s = 0;
    cr_assert_float_eq(run_once(&spec, 1, NULL).makespan_s, 18.4, 1e-9);
}

/* A crowded master reads a pull's weights when its wake is over. One hogwild worker on a
 * 1-core host (crowded; y = 1: ρ = 1), steps of 1 s, α = 0.1 s and a wake of 0.3 s (a
 * message 0.4 s), updates of 0.2 s, 3 steps pulling every step:
 *   pull 0–0.4 (read at 0.3: v 0), step 0.4–1.4, push 1.4–1.8 (staleness 0), update
 *   1.8–2.0; pull 1.8–2.2 (read at 2.1: v 1), step 2.2–3.2, push 3.2–3.6 (staleness
 *   1 − 1 = 0), update 3.6–3.8; pull 3.6–4.0 (read at 3.9: v 2), step 4.0–5.0, push
 *   5.0–5.4 (0), update 5.4–5.6: the end.
 * Staleness 0, 0, 0. With the same 0.4 s message and no wake, each pull reads the weights
 * while its push's update still runs: 0, 1, 1. The makespan is 5.6 s either way. */
Test(sim, a_crowded_master_reads_a_pulls_weights_after_its_wake) {
    job_spec spec = async_by_hand(JOB_SYNC_HOGWILD);
    spec.params.machines = 0;
    spec.params.host_cores = 1;
    spec.params.master_yield = 1;
    spec.params.update_s = 0.2;
    spec.params.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.1 };
    spec.params.master_wake_s = 0.3;
    spec.config.workers = 1;
    spec.config.examples = 3;
    job_result r = run_once(&spec, 1, NULL);
    cr_assert_float_eq(r.makespan_s, 5.6, 1e-9);
    cr_assert_eq(r.updates, 3);
    cr_assert_float_eq(r.staleness_mean, 0.0, 1e-12);
    spec.params.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.4 };
    spec.params.master_wake_s = 0;
    r = run_once(&spec, 1, NULL);
    cr_assert_float_eq(r.makespan_s, 5.6, 1e-9);
    cr_assert_float_eq(r.staleness_mean, 2.0 / 3.0, 1e-12);
    cr_assert_float_eq(r.staleness_median, 1.0, 1e-12);
}

/* One worker has no one to collide with: with zero variance the simulated run is the
 * closed form's, async and hogwild, pulling every step or every 3 of 7 (the last pull
 * period cut short), on a host where the master's polling core oversubscribes (ρ > 1: the
 * scheduler's delay before each push). */
Test(sim, async_with_one_worker_matches_the_closed_form_exactly) {
    static const job_sync modes[] = { JOB_SYNC_ASYNC, JOB_SYNC_HOGWILD };
    static const int pulls[] = { 1, 3 };
    static const double host[] = { 0, 1 };
    for (int m = 0; m < 2; m++)
        for (int n = 0; n < 2; n++)
            for (int h = 0; h < 2; h++) {
                job_spec spec = { .params = test_params() };
                spec.params.host_cores = host[h];
                spec.config = (job_config){ .workers = 1, .cores = 1, .sync = modes[m], .every_n = pulls[n],
                                                  .topology = JOB_TOPO_PS,
                                                  .master = JOB_MASTER_DEDICATED, .examples = 7 * 48 - 5,
                                                  .batch = 48, .epochs = 2 };
                const job_result r = run_once(&spec, 1, NULL);
                const costmodel_breakdown b = costmodel_breakdown_of(&spec.params, &spec.config);
                cr_assert(close_rel(r.makespan_s, b.total_s, 1e-12), "%s N=%d P=%g: simulated %.12g, closed form %.12g",
                          m ? "hogwild" : "async", pulls[n], host[h], r.makespan_s, b.total_s);
                cr_assert(close_rel(r.comm_s, b.comm_s, 1e-12), "comm %.12g vs %.12g", r.comm_s, b.comm_s);
                cr_assert(close_rel(r.compute_s, b.compute_s, 1e-12));
            }
}

/* The closed form is a bound: requests that collide at the master wait for each other,
 * so no simulated run is faster than it, and at a busy master (K = 16 on one host) it is
 * the master's service time that sets the pace. */
Test(sim, async_is_never_faster_than_the_closed_form_bound) {
    static const int ks[] = { 2, 3, 4, 8, 16 };
    for (int m = 0; m < 2; m++)
        for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
            job_spec spec = { .params = test_params() };
            spec.config = (job_config){ .workers = ks[i], .cores = 1,
                                              .sync = m ? JOB_SYNC_HOGWILD : JOB_SYNC_ASYNC,
                                              .every_n = 1, .topology = JOB_TOPO_PS,
                                              .master = JOB_MASTER_DEDICATED, .examples = 4000, .batch = 16,
                                              .epochs = 2 };
            const job_result r = run_once(&spec, 1, NULL);
            const double bound = costmodel_total_time(&spec.params, &spec.config);
            cr_assert_geq(r.makespan_s, bound * (1 - 1e-12), "K=%d: %g below the bound %g", ks[i], r.makespan_s, bound);
            const costmodel_async a = costmodel_async_of(&spec.params, &spec.config);
            if (ks[i] == 16 && !m)
                cr_assert(a.master_bound, "K=16 is master-bound: step %g, master %g per step of all",
                          a.worker_cycle_s, a.master_s);
        }
}

/* The simulator's own core scheduling (sim/cores.h), worked by hand: 3 ranks on 2 cores,
 * 1440 examples in batches of 48, 10 ms a 16-example step, nothing else costing time. */
static job_spec three_on_two(job_sync sync, double tau_s, bool napping) {
    costmodel_params p = { .c1_s = 0.010 / 16, .host_cores = 2, .balance_s = tau_s, .waits_block = napping };
    job_spec spec = { .params = p, .config = test_config(3, sync, 0, JOB_TOPO_ALLREDUCE) };
    spec.config.examples = 1440;
    spec.config.batch = 48;
    spec.config.epochs = 1;
    return spec;
}

Test(sim, scheduled_cores_play_polling_and_napping_ranks_by_hand) {
    /* Batch sync: 30 one-step rounds of 16 examples (10 ms) a rank. Polling ranks that stay
     * put: ranks 0 and 2 share a core, 20 ms a round (the closed form's ⌈3/2⌉ = 2 at
     * κ = 0): 0.6 s. */
    job_spec spec = three_on_two(JOB_SYNC_BATCH, 10.0, false);
    double t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.600, 1e-12, "polling: %.12g", t);
    /* Napping ranks spread over both cores: 15 ms a round, 0.45 s. */
    spec = three_on_two(JOB_SYNC_BATCH, 10.0, true);
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.450, 1e-12, "napping: %.12g", t);
    /* Epoch sync: one round of 10 steps of 48 examples (30 ms) a rank, 0.3 s of work.
     * Polling ranks moved on every 5 ms: in every 15 ms each rank has a core alone 5 ms
     * and half of one 10 ms, 10 ms of work: 0.45 s, ρ = 1.5 as the closed form's long
     * round. */
    spec = three_on_two(JOB_SYNC_EPOCH, 0.005, false);
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.450, 1e-12, "moved every 5 ms: %.12g", t);
    /* The same round with ranks that never move: ranks 0 and 2 take 0.6 s; rank 1 computes
     * its 0.3 s alone, then waits. */
    spec = three_on_two(JOB_SYNC_EPOCH, 10.0, false);
    job *j;
    t = run_once(&spec, 1, &j).makespan_s;
    cr_assert_float_eq(t, 0.600, 1e-12, "never moved: %.12g", t);
    const job_worker *w = job_workers(j);
    cr_assert_float_eq(w[1].compute_s, 0.300, 1e-12, "rank 1 computed %g s", w[1].compute_s);
    cr_assert_float_eq(w[1].wait_s, 0.300, 1e-12, "rank 1 waited %g s", w[1].wait_s);
    job_free(j);
}

Test(sim, an_all_reduce_on_shared_cores_pays_lambda_an_exchange_by_hand) {
    /* As above, with Λ = 1 ms: each one-step round's all-reduce waits Λ beyond its
     * idle-host time (0 here), after the ring: polling, 30 × (20 + 1) ms = 0.63 s; napping,
     * 30 × (15 + 1) ms = 0.48 s. Epoch sync pays none: 0.45 s as above. A parameter
     * server's one-step rounds pay none either: the same 3 workers through one (rank 0
     * trains, messages free) take 0.6 s. */
    job_spec spec = three_on_two(JOB_SYNC_BATCH, 10.0, false);
    spec.params.oversub_wait_s = 0.001;
    double t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.630, 1e-12, "polling: %.12g", t);
    spec.params.oversub_wait_s = 0; /* λ = 0.2 of the 10 ms idle step, times ρ − 1: the same 1 ms */
    spec.params.oversub_wait_share = 0.2;
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.630, 1e-12, "polling, lambda: %.12g", t);
    spec = three_on_two(JOB_SYNC_BATCH, 10.0, true);
    spec.params.oversub_wait_s = 0.001;
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.480, 1e-12, "napping: %.12g", t);
    spec = three_on_two(JOB_SYNC_EPOCH, 0.005, false);
    spec.params.oversub_wait_s = 0.001;
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.450, 1e-12, "epoch: %.12g", t);
    spec = three_on_two(JOB_SYNC_BATCH, 10.0, false);
    spec.params.oversub_wait_s = 0.001;
    spec.config.topology = JOB_TOPO_PS;
    t = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(t, 0.600, 1e-12, "parameter server: %.12g", t);
}

/* A parameter server's workers on scheduled cores start after their own pulls: 3 workers
 * and a dedicated master that gives its core back (y = 1) on 2 cores, 10 ms steps, 1 ms a
 * message, 30 one-step rounds. The first round: ranks 0 and 2 share a core, 20 ms. Each
 * later one, from the barrier R: pushes to R+3 ms, pulls end at R+4, R+5, R+6 (ranks 0, 1,
 * 2); rank 0 computes alone 2 ms, then beside rank 2 (8 ms left at half speed: R+22),
 * which ends its last 2 ms alone at R+24; rank 1 alone R+5..R+15: 24 ms a round. The last
 * exchange, 6 ms: 20 + 29·24 + 6 = 722 ms (780 if every worker waited for the last pull). */
Test(sim, scheduled_ps_workers_start_after_their_own_pull_by_hand) {
    costmodel_params p = { .c1_s = 0.010 / 16, .host_cores = 2, .balance_s = 10.0, .master_yield = 1.0 };
    p.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.001 };
    job_spec spec = { .params = p, .config = test_config(3, JOB_SYNC_BATCH, 1, JOB_TOPO_PS) };
    spec.config.master = JOB_MASTER_DEDICATED;
    spec.config.examples = 1440;
    spec.config.batch = 48;
    spec.config.epochs = 1;
    job *j;
    const double t = run_once(&spec, 1, &j).makespan_s;
    cr_assert_float_eq(t, 0.722, 1e-12, "%.12g", t);
    const job_worker *w = job_workers(j);
    for (int i = 0; i < 3; i++) { /* each worker's time adds up */
        const double sum = w[i].startup_s + w[i].compute_s + w[i].update_s + w[i].comm_s + w[i].wait_s;
        cr_assert_float_eq(sum, t, 1e-12, "worker %d: %.12g", i, sum);
    }
    /* The master (a fourth entity: processor 1, beside rank 1) sends each pull from its
     * core: rank 2's, sent while rank 1 computes beside it, takes 2 ms, so rank 2 starts at
     * R+7, not R+6; processor 0 stays busy from R+4 all the same, so the round still ends
     * at R+24. Comm each later round: pushes 3 ms and the wait for its pull, rank 0 1 ms,
     * rank 1 2 ms, rank 2 4 ms; the last exchange 6 ms each. The result's is their mean. */
    cr_assert_float_eq(w[1].comm_s, 29 * 0.005 + 0.006, 1e-12, "%.12g", w[1].comm_s);
    cr_assert_float_eq(w[2].comm_s, 29 * 0.007 + 0.006, 1e-12, "%.12g", w[2].comm_s);
    job_result r = run_once(&spec, 1, NULL);
    cr_assert_float_eq(r.comm_s, 29 * 0.016 / 3 + 0.006, 1e-12, "mean comm %.12g", r.comm_s);
    job_free(j);
    spec.contention = JOB_CONTENTION_CLOSED_FORM;
    spec.params.balance_s = 10.0;
    const double closed = run_once(&spec, 1, NULL).makespan_s;
    cr_assert_float_eq(closed, 0.780, 1e-12, "closed form: %.12g", closed);
}

/* A what-if of 1.5 or 0.5 cores has no whole processors to schedule: the closed form's ρ'
 * plays it (the scheduled job equals the closed-form one, and ends). */
Test(sim, a_host_of_a_fraction_of_cores_takes_the_closed_form) {
    const double hosts[] = { 0.5, 1.5 };
    for (size_t i = 0; i < 2; i++) {
        job_spec spec = three_on_two(JOB_SYNC_BATCH, 10.0, false);
        spec.params.host_cores = hosts[i];
        const double scheduled = run_once(&spec, 1, NULL).makespan_s;
        spec.contention = JOB_CONTENTION_CLOSED_FORM;
        cr_assert_eq(scheduled, run_once(&spec, 1, NULL).makespan_s, "%g cores", hosts[i]);
    }
}
