#include "tests/synth.h"

#include "model/fit.h"

#include <gsl/gsl_randist.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static trace_run header(const synth_truth *truth, const costmodel_config *cfg, const char *host, const char *net) {
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

trace *synth_run(const synth_truth *truth, const costmodel_config *cfg, const char *host, const char *net,
                 gsl_rng *rng) {
    trace_run run = header(truth, cfg, host, net);
    trace *t = trace_new(&run);
    const costmodel_params *p = &truth->p;
    costmodel_schedule s = costmodel_schedule_of(cfg);
    /* The trainer's layout: a dedicated master is rank 0, the K workers the ranks after it. */
    int K = cfg->workers, master = cfg->master == COSTMODEL_MASTER_DEDICATED, ranks = K + master;
    double step = costmodel_step_time(p, cfg), sync = costmodel_sync_time(p, cfg);
    double W = p->w0_s + p->w1_s * K + gsl_ran_gaussian(rng, truth->startup_noise_s);
    double *clock = malloc(sizeof *clock * (size_t)ranks);
    for (int r = 0; r < ranks; r++) {
        add(t, r, TRACE_STARTUP, 0.0, W, -1, -1, 0, 0, "setup");
        clock[r] = W;
    }
    long b = (long)s.local_batch;
    for (int e = 0; e < cfg->epochs; e++)
        for (long first = 0; first < s.steps_per_epoch; first += s.steps_per_round) {
            long last = first + s.steps_per_round < s.steps_per_epoch ? first + s.steps_per_round : s.steps_per_epoch;
            double slowest = 0;
            for (int r = 0; r < ranks; r++) {
                for (long i = first; i < last; i++) {
                    bool turn = master && r == 0;
                    double d = turn ? master_turn_s : noisy(step, p->cv, rng);
                    add(t, r, TRACE_COMPUTE, clock[r], clock[r] + d, e, i, 0, turn ? 0 : b, "");
                    clock[r] += d;
                }
                if (clock[r] > slowest)
                    slowest = clock[r];
            }
            double S = noisy(sync, truth->comm_noise, rng);
            for (int r = 0; r < ranks; r++) {
                if (clock[r] < slowest)
                    add(t, r, TRACE_WAIT, clock[r], slowest, e, last - 1, 0, 0, "");
                if (sync > 0)
                    add(t, r, TRACE_COMM, slowest, slowest + S, e, last - 1, (long)p->model_bytes, 0, "");
                clock[r] = slowest + (sync > 0 ? S : 0.0);
            }
        }
    free(clock);
    return t;
}

trace *synth_commbench(const synth_truth *truth, int workers, const long *sizes, int n_sizes, int reps,
                       const char *host, gsl_rng *rng) {
    costmodel_config cfg = { .workers = workers, .cores = 1, .sync = COSTMODEL_SYNC_BATCH, .every_n = 1,
                             .topology = COSTMODEL_TOPO_ALLREDUCE, .examples = 1, .batch = 1, .epochs = 1 };
    trace_run run = header(truth, &cfg, host, FIT_COMMBENCH_NET);
    trace *t = trace_new(&run);
    const costmodel_link *ps = &truth->p.link[COSTMODEL_TOPO_PS], *ar = &truth->p.link[COSTMODEL_TOPO_ALLREDUCE];
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
