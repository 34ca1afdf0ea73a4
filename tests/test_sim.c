/* sim/job.c, sim/replicate.c: the simulator against the closed form of model/costmodel.c
 * (zero variance), against order statistics (the barrier wait), and against itself only
 * for determinism. */
#include "model/costmodel.h"
#include "model/gmax.h"
#include "model/trace.h"
#include "sim/job.h"
#include "sim/replicate.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Costs with every term switched on, so each one's timing is tested. */
static costmodel_params test_params(void) {
    costmodel_params p = {
        .c0_s = 0.01, .c1_s = 0.002, .sigma = 0.2,
        .model_bytes = 1e6, .w0_s = 3.0, .w1_s = 0.05, .cv = 0.0, .host_cores = 0,
    };
    p.link[COSTMODEL_TOPO_PS] = (costmodel_link){ .alpha_s = 1e-3, .beta_s_per_byte = 1e-8 };
    p.link[COSTMODEL_TOPO_ALLREDUCE] = (costmodel_link){ .alpha_s = 2e-4, .beta_s_per_byte = 3e-9 };
    return p;
}

static costmodel_config test_config(int k, costmodel_sync sync, int every_n, costmodel_topology topo) {
    /* D = 1000 is not a multiple of B = 48 (the last batch is short), nor of K·B. More
     * workers than B each take a whole batch (a split would leave ranks without one). */
    return (costmodel_config){ .workers = k, .cores = 1, .sync = sync, .every_n = every_n,
                               .topology = topo, .master = COSTMODEL_MASTER_WORKER,
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
    static const struct { costmodel_sync s; int n; } syncs[] = {
        { COSTMODEL_SYNC_BATCH, 1 }, { COSTMODEL_SYNC_EPOCH, 0 }, { COSTMODEL_SYNC_EVERY, 4 },
    };
    /* (T, P): one core each on an unlimited host; three cores each on 24 cores, so the
     * larger K oversubscribe (ρ = 3K/24). */
    static const struct { int t; double p; } cores[] = { { 1, 0 }, { 3, 24 } };
    int configs = 0;
    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++)
        for (int topo = 0; topo < COSTMODEL_TOPO_COUNT; topo++)
            for (size_t si = 0; si < 3; si++)
                for (int master = 0; master < (topo == COSTMODEL_TOPO_PS ? 2 : 1); master++)
                    for (int ci = 0; ci < 2; ci++) {
                        job_spec spec = { .params = test_params(),
                                          .config = test_config(ks[ki], syncs[si].s, syncs[si].n, topo) };
                        spec.config.master = master ? COSTMODEL_MASTER_DEDICATED : COSTMODEL_MASTER_WORKER;
                        spec.config.cores = cores[ci].t;
                        spec.params.host_cores = cores[ci].p;
                        char name[96];
                        costmodel_sync_format(syncs[si].s, syncs[si].n, name, sizeof name);
                        job *j;
                        job_result r = run_once(&spec, 1, &j);
                        costmodel_breakdown want = costmodel_breakdown_of(&spec.params, &spec.config);
                        const char *what = costmodel_topology_name(topo);
                        cr_assert(close_rel(r.makespan_s, want.total_s, 1e-9), "K=%d T=%d %s %s master=%d: sim %.12g, model %.12g",
                                  ks[ki], cores[ci].t, name, what, master, r.makespan_s, want.total_s);
                        /* Every worker's breakdown is the closed form's. */
                        const job_worker *w = job_workers(j);
                        for (int i = 0; i < ks[ki]; i++) {
                            cr_assert(close_rel(w[i].startup_s, want.startup_s, 1e-9), "K=%d %s %s: startup", ks[ki], name, what);
                            cr_assert(close_rel(w[i].compute_s, want.compute_s, 1e-9), "K=%d %s %s: compute %.12g vs %.12g",
                                      ks[ki], name, what, w[i].compute_s, want.compute_s);
                            cr_assert(fabs(w[i].comm_s - want.comm_s) <= 1e-9 * want.total_s, "K=%d %s %s: comm %.12g vs %.12g",
                                      ks[ki], name, what, w[i].comm_s, want.comm_s);
                            cr_assert(fabs(w[i].wait_s) <= 1e-9 * want.total_s, "K=%d %s %s: wait %g", ks[ki], name, what, w[i].wait_s);
                        }
                        job_free(j);
                        configs++;
                    }
    cr_assert_geq(configs, 160);
}

Test(sim, zero_variance_speedup_matches_closed_form) {
    job_spec spec = { .params = test_params(),
                      .config = test_config(8, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_ALLREDUCE) };
    spec.config.cores = 2;
    replicate_summary s;
    char err[256];
    cr_assert_eq(replicate_run(&spec, 5, 3, &s, err, sizeof err), 0, "%s", err);
    double want = costmodel_speedup(&spec.params, &spec.config);
    cr_assert(close_rel(s.speedup, want, 1e-9), "sim %.12g, model %.12g", s.speedup, want);
    /* No spread, no interval. */
    cr_assert_eq(s.speedup_lo, s.speedup);
    cr_assert_eq(s.speedup_hi, s.speedup);
    cr_assert_eq(s.time_lo_s, s.time_hi_s);
}

Test(sim, sequential_launch_has_the_same_makespan_and_moves_startup_into_wait) {
    job_spec spec = { .params = test_params(), .config = test_config(6, COSTMODEL_SYNC_EPOCH, 0, COSTMODEL_TOPO_PS),
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
static void assert_barrier_wait(int k, costmodel_sync sync, int every_n, long examples, double cv) {
    job_spec spec = { .params = test_params(), .config = test_config(k, sync, every_n, COSTMODEL_TOPO_ALLREDUCE) };
    spec.params.cv = cv;
    spec.config.examples = examples;
    spec.config.epochs = 1;
    costmodel_schedule sched = costmodel_schedule_of(&spec.config);
    cr_assert_eq(sched.steps_per_epoch % sched.steps_per_round, 0, "test wants full rounds only");
    job_result r = run_once(&spec, 42, NULL);
    double step = costmodel_step_time(&spec.params, &spec.config);
    double want = cv * step * sqrt((double)sched.steps_per_round) * gmax_expected(k);
    cr_assert(close_rel(r.barrier_wait_s, want, 0.05), "K=%d p=%ld: mean wait %.6g, CV·step·√p·G(K) = %.6g (%.1f%%)", k,
              sched.steps_per_round, r.barrier_wait_s, want, 100 * (r.barrier_wait_s / want - 1));
}

Test(sim, mean_barrier_wait_matches_order_statistics_batch) {
    /* 20000 rounds of one step on 8 workers. */
    assert_barrier_wait(8, COSTMODEL_SYNC_BATCH, 1, 20000L * 48, 0.05);
}

Test(sim, mean_barrier_wait_matches_order_statistics_every_n) {
    /* 2500 rounds of 16 steps on 32 workers. */
    assert_barrier_wait(32, COSTMODEL_SYNC_EVERY, 16, 2500L * 16 * 32 * 48, 0.1);
}

Test(sim, busy_plus_idle_is_the_makespan_for_every_worker) {
    static const struct { int k; costmodel_sync s; int n; costmodel_topology t; costmodel_master m; job_launch l; } cases[] = {
        { 5, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS, COSTMODEL_MASTER_WORKER, JOB_LAUNCH_PARALLEL },
        { 7, COSTMODEL_SYNC_EVERY, 3, COSTMODEL_TOPO_PS, COSTMODEL_MASTER_DEDICATED, JOB_LAUNCH_SEQUENTIAL },
        { 16, COSTMODEL_SYNC_EPOCH, 0, COSTMODEL_TOPO_ALLREDUCE, COSTMODEL_MASTER_WORKER, JOB_LAUNCH_SEQUENTIAL },
        { 33, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_ALLREDUCE, COSTMODEL_MASTER_WORKER, JOB_LAUNCH_PARALLEL },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        job_spec spec = { .params = test_params(), .config = test_config(cases[c].k, cases[c].s, cases[c].n, cases[c].t),
                          .launch = cases[c].l };
        spec.params.cv = 0.3;
        spec.config.master = cases[c].m;
        job *j;
        job_result r = run_once(&spec, 9, &j);
        const job_worker *w = job_workers(j);
        double sum_wait = 0;
        for (int i = 0; i < cases[c].k; i++) {
            double total = w[i].startup_s + w[i].compute_s + w[i].comm_s + w[i].wait_s;
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
    job_spec spec = { .params = test_params(), .config = test_config(1, COSTMODEL_SYNC_EPOCH, 0, COSTMODEL_TOPO_PS) };
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
        job_spec spec = { .params = test_params(), .config = test_config(64, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS) };
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
    job_spec spec = { .params = test_params(), .config = test_config(k, COSTMODEL_SYNC_EVERY, 3, COSTMODEL_TOPO_PS) };
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
    job_spec spec = { .params = test_params(), .config = test_config(8, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS) };
    spec.params.cv = 0.2;
    replicate_summary s;
    char err[256];
    cr_assert_eq(replicate_run(&spec, 20, 5, &s, err, sizeof err), 0, "%s", err);
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

Test(sim, master_memory_is_three_model_copies_for_a_parameter_server) {
    job_spec spec = { .params = test_params(), .config = test_config(4, COSTMODEL_SYNC_EPOCH, 0, COSTMODEL_TOPO_PS) };
    job_result r = run_once(&spec, 1, NULL);
    cr_assert_eq(r.master_peak_bytes, 3 * spec.params.model_bytes);
    spec.config.topology = COSTMODEL_TOPO_ALLREDUCE;
    r = run_once(&spec, 1, NULL);
    cr_assert_eq(r.master_peak_bytes, 3 * spec.params.model_bytes + spec.params.model_bytes / 4);
}

/* ---------------------------------------------------------------------------------- */
/* Replay */

/* A trace of one worker, T = 1, B = 32, with the given compute spans. */
static char *write_trace(const double *spans, int n) {
    trace_run run = { .host_cores = 0, .model_bytes = 1000, .seed = 1 };
    snprintf(run.host, sizeof run.host, "test");
    run.config = (costmodel_config){ .workers = 1, .cores = 1, .sync = COSTMODEL_SYNC_BATCH, .every_n = 1,
                                     .topology = COSTMODEL_TOPO_PS, .examples = 320, .batch = 32, .epochs = 1 };
    trace *t = trace_new(&run);
    double at = 0;
    for (int i = 0; i < n; i++) {
        trace_event e = { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = at, .t1_s = at + spans[i], .epoch = 0, .step = i, .examples = 32 };
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

Test(sim, replay_scales_measured_steps_to_the_simulated_config) {
    /* The model says a 32-example step on one core takes 0.32 s; the trace measured
     * 0.64 s. At T = 2 with σ = 0 the model halves it, so the replayed steps take 0.32 s:
     * the closed form with c1 doubled. */
    double spans[] = { 0.64, 0.64, 0.64 };
    char *path = write_trace(spans, 3);
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    cr_assert_eq(rp->n, 3);
    job_spec spec = { .params = test_params(), .config = test_config(4, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS), .replay = rp };
    spec.params.c0_s = 0;
    spec.params.c1_s = 0.01;
    spec.params.sigma = 0;
    spec.config.batch = 128;    /* local batch 32, as measured */
    spec.config.cores = 2;
    job_result r = run_once(&spec, 1, NULL);
    costmodel_params doubled = spec.params;
    doubled.c1_s = 0.02;
    cr_assert(close_rel(r.makespan_s, costmodel_total_time(&doubled, &spec.config), 1e-9), "%.12g vs %.12g", r.makespan_s,
              costmodel_total_time(&doubled, &spec.config));
    job_replay_free(rp);
    remove(path);
    free(path);
}

Test(sim, replay_resamples_the_measured_spans) {
    /* Spans 0.2 and 0.6 at equal odds: one worker's mean step is 0.4, and both occur. */
    double spans[] = { 0.2, 0.6 };
    char *path = write_trace(spans, 2);
    char err[256] = "";
    job_replay *rp = job_replay_read(path, err, sizeof err);
    cr_assert_not_null(rp, "%s", err);
    job_spec spec = { .params = test_params(), .config = test_config(1, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS), .replay = rp };
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
    job_spec spec = { .params = test_params(), .config = test_config(0, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS) };
    char err[256] = "";
    cr_assert_null(job_new(&spec, err, sizeof err));
    cr_assert(strstr(err, "workers") != NULL, "%s", err);
}

Test(sim, negative_bandwidth_is_refused_by_name) {
    job_spec spec = { .params = test_params(), .config = test_config(4, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_ALLREDUCE) };
    spec.params.link[COSTMODEL_TOPO_ALLREDUCE].beta_s_per_byte = -1e-9;
    char err[256] = "";
    cr_assert_null(job_new(&spec, err, sizeof err));
    cr_assert(strstr(err, "beta (allreduce)") != NULL, "%s", err);
}

Test(sim, zero_replications_are_refused) {
    job_spec spec = { .params = test_params(), .config = test_config(2, COSTMODEL_SYNC_BATCH, 1, COSTMODEL_TOPO_PS) };
    replicate_summary s;
    char err[256] = "";
    cr_assert_eq(replicate_run(&spec, 0, 1, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "replications") != NULL, "%s", err);
}
