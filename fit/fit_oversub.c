/* fit_oversub — what ranks that outnumber the cores cost beyond ρ (see fit_parts.h): κ
 * (oversub_compute) and τ (balance_s) of costmodel_slowdown, from the runs whose training
 * ranks alone outnumber the cores (a dedicated master's polling is master_yield's).
 *
 * A run's body, its training time less its start-up (the last rank's start-up end, where
 * the first round can begin), is what its rounds took. The model's body is affine in κ,
 * and for a run of one-step rounds (batch sync: the round weight v is 1 whatever τ) it
 * depends on nothing else unfitted, so each such run gives κ = (body − B(0)) / (B(1) −
 * B(0)); κ is their median, at least 0. With κ, each run of longer rounds (every:N,
 * epoch) gives the τ at which the model's body is its own: B grows with τ from cores
 * shared evenly at ρ (τ = 0) towards the packing and κ, which both fade over τ;
 * bisection. τ is their median. Standard errors √(π/2)·sd/√n, the median's. No such
 * run: 0, with a note. */
#include "fit/fit_parts.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include <math.h>
#include <stdlib.h>

/* Where training begins: the end of the run's last start-up span (0 without one). */
static double startup_end(const trace *t) { return fmax(0.0, traceinfo_startup_end(t)); }

/* The model's body of run t with parameters p: its total less its start-up. */
static double model_body(const costmodel_params *p, const trace *t) {
    costmodel_breakdown b = costmodel_breakdown_of(p, &t->run.config);
    return b.total_s - b.startup_s;
}

/* Is run i one of those that tell κ and τ: a synchronous run whose training ranks alone
 * outnumber the cores? */
static bool oversubscribed_by_workers(const fit_subset *s, int i, const costmodel_params *at) {
    const trace *t = s->tr[i];
    const job_config *c = &t->run.config;
    return fit_used(s, i, true) && costmodel_has_sync(c) && !job_sync_is_async(c->sync) &&
           c->master == JOB_MASTER_WORKER && contention_shares_cores(at, c);
}

static costmodel_params params_of_run(const fit_core *f, const trace *t) {
    costmodel_params p = f->p;
    p.model_bytes = (double)t->run.model_bytes;
    p.host_cores = t->run.host_cores;
    return p;
}

/* The τ ≥ 0 at which run t's model body (with p's κ) is body: 0 when even cores shared
 * evenly take longer, else bisection up to where the packing is 99 % of itself. */
static double balance_of_run(costmodel_params p, const trace *t, double body) {
    const long round = job_schedule_of(&t->run.config).steps_per_round;
    double lo = 0, hi = 100.0 * (double)(round - 1) * costmodel_idle_step_time(&p, &t->run.config);
    p.balance_s = lo;
    if (model_body(&p, t) >= body)
        return 0;
    p.balance_s = hi;
    if (model_body(&p, t) <= body)
        return hi;
    for (int it = 0; it < 60; it++) {
        p.balance_s = 0.5 * (lo + hi);
        if (model_body(&p, t) < body)
            lo = p.balance_s;
        else
            hi = p.balance_s;
    }
    return 0.5 * (lo + hi);
}

int fit_oversub(fit_subset *s, fit_core *f, char *err, int errlen) {
    double *kappa = malloc(sizeof *kappa * (size_t)(s->n + 1)), *tau = malloc(sizeof *tau * (size_t)(s->n + 1));
    if (!kappa || !tau) {
        free(kappa);
        free(tau);
        return errmsg_set(err, errlen, "out of memory");
    }
    long nk = 0, nt = 0;
    f->p.oversub_compute = f->se.oversub_compute = f->p.balance_s = f->se.balance_s = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        costmodel_params p = params_of_run(f, t);
        if (!oversubscribed_by_workers(s, i, &p) || job_schedule_of(&t->run.config).steps_per_round != 1)
            continue;
        const double body = traceinfo_training_time(t) - startup_end(t);
        p.oversub_compute = 0;
        const double b0 = model_body(&p, t);
        p.oversub_compute = 1;
        const double b1 = model_body(&p, t);
        if (b1 > b0)
            kappa[nk++] = (body - b0) / (b1 - b0);
    }
    if (nk > 0)
        fit_median_se(kappa, nk, &f->p.oversub_compute, &f->se.oversub_compute);
    f->p.oversub_compute = fmax(0.0, f->p.oversub_compute);
    if (nk > 0)
        fit_add_reg(f, "oversub_compute", "median", nk, (int)nk - 1, 0.0);
    else
        fit_note(f, "oversub_compute", "no batch-sync run with more ranks than cores: time-sharing a core is "
                 "taken to cost its share alone (kappa = 0)");
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        costmodel_params p = params_of_run(f, t);
        if (oversubscribed_by_workers(s, i, &p) && job_schedule_of(&t->run.config).steps_per_round > 1)
            tau[nt++] = balance_of_run(p, t, traceinfo_training_time(t) - startup_end(t));
    }
    if (nt > 0) {
        fit_median_se(tau, nt, &f->p.balance_s, &f->se.balance_s);
        fit_add_reg(f, "balance", "median", nt, (int)nt - 1, 0.0);
    } else {
        fit_note(f, "balance", "no run of rounds longer than a step with more ranks than cores: the scheduler "
                 "is taken to share the cores evenly over such rounds (tau = 0)");
    }
    free(kappa);
    free(tau);
    return 0;
}
