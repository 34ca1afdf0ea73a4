#include "tests/synth.h"

#include "fit/fit.h"

#include <gsl/gsl_randist.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static trace_run header(const synth_truth *truth, const job_config *cfg, const char *host, const char *net) {
    trace_run run;
    memset(&run, 0, sizeof run);
    snprintf(run.host, sizeof run.host, "%s", host);
    snprintf(run.net, sizeof run.net, "%s", net);
    snprintf(run.git, sizeof run.git, "synthetic");
    run.host_cores = (int)truth->p.host_cores;
    run.model_bytes = (long)truth->p.model_bytes;
    run.config = *cfg;
    run.seed = 1;
    return run;
}

static void add(trace *t, int rank, trace_phase ph, double t0, double t1, int epoch, long step, long bytes,
                long examples, const char *name) {
    trace_event e = { .rank = rank, .ph = ph, .t0_s = t0, .t1_s = t1, .epoch = epoch, .step = step,
                      .bytes = bytes, .examples = examples };
    snprintf(e.name, sizeof e.name, "%s", name);
    trace_add(t, &e);
}

static double noisy(double x, double rel, gsl_rng *rng) {
    double y = x * (1.0 + gsl_ran_gaussian(rng, rel));
    return y > 0 ? y : 0.0;
}

/* A dedicated master's turn at every step: a compute event of 0 examples (it zeroes its
 * gradient; the trainer records it so that the master's phases tile its time). */
static const double master_turn_s = 2e-5;

/* Where the optimizer update runs: after every local step on each training rank (local
 * SGD, or one worker alone), after the all-reduce on every rank, or on the parameter
 * server's rank 0 between the pushes and the pulls. */
typedef enum { UPDATE_AFTER_STEP, UPDATE_AFTER_SYNC, UPDATE_IN_MASTER } update_place;

typedef struct {
    trace *t;
    const synth_truth *truth;
    const job_config *cfg;
    gsl_rng *rng;
    int ranks, master;            /* master: 1 when rank 0 is a dedicated master */
    double step, sync, upd;       /* the test's step, synchronisation and update times */
    update_place place;
    long b;
    double *clock;                /* (ranks) where each rank's next event starts */
} synth_state;

/* A noisy update on rank r at its clock (none when the model has no update). */
static void update(synth_state *st, int r, int epoch, long step) {
    if (st->upd <= 0)
        return;
    double d = noisy(st->upd, st->truth->p.cv, st->rng);
    add(st->t, r, TRACE_UPDATE, st->clock[r], st->clock[r] + d, epoch, step, 0, 0, "");
    st->clock[r] += d;
}

/* Rank r's own speed factor on its steps (synth_truth.rank_speed; 1 without). */
static double rank_speed(const synth_truth *truth, int r) {
    return r < SYNTH_MAX_RANK_SPEEDS && truth->rank_speed[r] > 0 ? truth->rank_speed[r] : 1.0;
}

/* Every rank's steps first..last−1; returns the slowest rank's clock. */
static double local_steps(synth_state *st, int e, long first, long last) {
    double slowest = 0;
    for (int r = 0; r < st->ranks; r++) {
        bool turn = st->master && r == 0;
        for (long i = first; i < last; i++) {
            double d = turn ? master_turn_s : noisy(st->step, st->truth->p.cv, st->rng) * rank_speed(st->truth, r);
            add(st->t, r, TRACE_COMPUTE, st->clock[r], st->clock[r] + d, e, i, 0, turn ? 0 : st->b, "");
            st->clock[r] += d;
            if (!turn && st->place == UPDATE_AFTER_STEP)
                update(st, r, e, i);
        }
        if (st->clock[r] > slowest)
            slowest = st->clock[r];
    }
    return slowest;
}

/* The barrier and the synchronisation closing a round whose last step is `step`. */
static void synchronise(synth_state *st, int e, long step, double slowest) {
    long bytes = (long)st->truth->p.model_bytes;
    double S = noisy(st->sync, st->truth->comm_noise, st->rng), u = 0;
    if (st->place == UPDATE_IN_MASTER && st->upd > 0) {
        /* The master: push, update, pull; every other rank waits through all of it. */
        st->clock[0] = slowest + S / 2;
        add(st->t, 0, TRACE_COMM, slowest, st->clock[0], e, step, bytes, 0, "");
        update(st, 0, e, step);
        u = st->clock[0] - (slowest + S / 2);
        add(st->t, 0, TRACE_COMM, st->clock[0], st->clock[0] + S / 2, e, step, bytes, 0, "");
    }
    for (int r = 0; r < st->ranks; r++) {
        if (st->clock[r] < slowest)
            add(st->t, r, TRACE_WAIT, st->clock[r], slowest, e, step, 0, 0, "");
        if (st->sync > 0 && !(st->place == UPDATE_IN_MASTER && st->upd > 0 && r == 0))
            add(st->t, r, TRACE_COMM, slowest, slowest + S + u, e, step, bytes, 0, "");
        st->clock[r] = slowest + (st->sync > 0 ? S + u : 0.0);
        if (st->place == UPDATE_AFTER_SYNC)
            update(st, r, e, step);
    }
}

trace *synth_run(const synth_truth *truth, const job_config *cfg, const char *host, const char *net,
                 gsl_rng *rng) {
    trace_run run = header(truth, cfg, host, net);
    const synth_times d = truth->times(&truth->p, cfg);
    job_schedule s = job_schedule_of(cfg);
    /* The trainer's layout: a dedicated master is rank 0, the K workers the ranks after it. */
    int master = cfg->master == JOB_MASTER_DEDICATED;
    synth_state st = { .t = trace_new(&run), .truth = truth, .cfg = cfg, .rng = rng, .master = master,
                       .ranks = cfg->workers + master, .step = d.step_s, .sync = d.sync_s, .upd = d.update_s,
                       .b = (long)s.local_batch };
    bool exchange_per_step = cfg->sync == JOB_SYNC_BATCH && st.sync > 0;
    st.place = !exchange_per_step ? UPDATE_AFTER_STEP
             : cfg->topology == JOB_TOPO_PS ? UPDATE_IN_MASTER : UPDATE_AFTER_SYNC;
    double W = d.startup_s + gsl_ran_gaussian(rng, truth->startup_noise_s);
    /* The data load ends the start-up (every rank's). */
    double load = d.data_load_s;
    st.clock = malloc(sizeof *st.clock * (size_t)st.ranks);
    for (int r = 0; r < st.ranks; r++) {
        add(st.t, r, TRACE_STARTUP, 0.0, W - load, -1, -1, 0, 0, "setup");
        if (load > 0)
            add(st.t, r, TRACE_STARTUP, W - load, W, -1, -1, 0, 0, "data_load");
        st.clock[r] = W;
    }
    for (int e = 0; e < cfg->epochs; e++)
        for (long first = 0; first < s.steps_per_epoch; first += s.steps_per_round) {
            long last = first + s.steps_per_round < s.steps_per_epoch ? first + s.steps_per_round : s.steps_per_epoch;
            synchronise(&st, e, last - 1, local_steps(&st, e, first, last));
        }
    free(st.clock);
    return st.t;
}

/* A refusal of synth_plain_times: the test must write its own formula. */
static void refuse(const char *what) {
    fprintf(stderr, "synth_plain_times: %s: write the test's own formula (tests/synth.h)\n", what);
    abort();
}

synth_times synth_plain_times(const costmodel_params *p, const job_config *c) {
    if (p->update_s > 0 || p->startup_cpu_s > 0 || p->startup_per_example_s > 0)
        refuse("an update or a data load");
    if (c->master == JOB_MASTER_DEDICATED || job_sync_is_async(c->sync) || p->machines >= 2)
        refuse("a dedicated master, async training or a cluster");
    const job_schedule s = job_schedule_of(c);
    const double k = c->workers, threads = k * c->cores;
    const double rho = p->host_cores > 0 && threads > p->host_cores ? threads / p->host_cores : 1.0;
    if (rho > 1 && s.steps_per_round == 1)
        refuse("more ranks than cores in rounds of one step");
    const double a = p->sigma + (1 - p->sigma) / c->cores, M = p->model_bytes;
    const costmodel_link *l = &p->link[c->topology];
    const double per_message = c->topology == JOB_TOPO_PS ? l->alpha_s + l->beta_s_per_byte * M
                                                         : l->alpha_s + l->beta_s_per_byte * M / k;
    return (synth_times){ .step_s = (p->c0_s + p->c1_s * a * s.local_batch) * rho,
                          .sync_s = 2 * (k - 1) * per_message, .startup_s = p->w0_s + p->w1_s * k };
}

trace *synth_commbench(const synth_truth *truth, int workers, const long *sizes, int n_sizes, int reps,
                       const char *host, gsl_rng *rng) {
    job_config cfg = { .workers = workers, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                             .topology = JOB_TOPO_ALLREDUCE, .examples = 1, .batch = 1, .epochs = 1 };
    trace_run run = header(truth, &cfg, host, FIT_COMMBENCH_NET);
    trace *t = trace_new(&run);
    const costmodel_link *ps = &truth->p.link[JOB_TOPO_PS], *ar = &truth->p.link[JOB_TOPO_ALLREDUCE];
    double k = workers, clock = 0.01;
    for (int i = 0; i < n_sizes; i++)
        for (int r = 0; r < reps; r++) {
            double n = (double)sizes[i];
            double d[3] = { 2 * (ps->alpha_s + ps->beta_s_per_byte * n),
                            2 * (k - 1) * ar->alpha_s + 2 * (k - 1) / k * ar->beta_s_per_byte * n,
                            2 * (k - 1) * (ps->alpha_s + ps->beta_s_per_byte * n) };
            const char *names[3] = { "pingpong", "allreduce", "ps" };
            for (int j = 0; j < 3; j++) {
                double x = noisy(d[j], truth->comm_noise, rng);
                add(t, 0, TRACE_COMM, clock, clock + x, -1, r, sizes[i], 0, names[j]);
                clock += x;
            }
        }
    return t;
}

/* The end of rank 0's compute event of global step `step` (the trace's time order). */
static double step_end(const trace *t, long step) {
    double end = 0;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank == 0 && t->events[i].ph == TRACE_COMPUTE && t->events[i].step == step)
            end = t->events[i].t1_s;
    return end;
}

static void add_point(trace *t, double at, int epoch, long step, const char *name, double accuracy) {
    trace_event e = { .rank = 0, .ph = TRACE_EVAL, .t0_s = at, .t1_s = at, .epoch = epoch, .step = step,
                      .examples = 1000, .has_accuracy = true, .accuracy = accuracy, .loss = 0.5 };
    snprintf(e.name, sizeof e.name, "%s", name);
    trace_add(t, &e);
}

void synth_add_accuracy(trace *t, double (*acc)(double epochs, const void *ctx), const void *ctx,
                        int subset_per_epoch, double noise_test, double noise_subset, gsl_rng *rng) {
    const long s = job_schedule_of(&t->run.config).steps_per_epoch;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].epoch >= 0 && t->events[i].step >= 0)
            t->events[i].step += (long)t->events[i].epoch * s;
    for (int e = 0; e < t->run.config.epochs; e++) {
        for (int j = 1; j <= subset_per_epoch; j++) {
            const long done = (long)e * s + s * j / (subset_per_epoch + 1);
            const double a = acc((double)done / (double)s, ctx) + gsl_ran_gaussian(rng, noise_subset);
            add_point(t, step_end(t, done - 1), e, done, "subset", a < 0 ? 0 : a > 1 ? 1 : a);
        }
        const double a = acc(e + 1.0, ctx) + gsl_ran_gaussian(rng, noise_test);
        add_point(t, step_end(t, (e + 1L) * s - 1), e, (e + 1L) * s, "test", a < 0 ? 0 : a > 1 ? 1 : a);
    }
}
