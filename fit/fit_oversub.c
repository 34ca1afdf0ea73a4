/* fit_oversub — what ranks that outnumber the cores cost beyond ρ (see fit_parts.h): κ
 * (oversub_compute) and τ (balance_s) of costmodel_slowdown, from the runs whose training
 * ranks alone outnumber the cores (a dedicated master's polling is master_yield's).
 *
 * A run's body, its training time less its start-up (the last rank's start-up end, where
 * the first round can begin), is what its rounds took. For a run of one-step all-reduce
 * rounds (batch sync; a parameter server's one-step rounds pay neither term and tell
 * nothing of them) the model's body depends on nothing else unfitted and is affine in κ
 * (at Λ = 0, where those rounds pay κ whatever τ) and in Λ, so each such run gives
 * κ = (body − B(0)) / (B(κ=1) − B(0)), its sharing cost as a share of its steps, and Λ the
 * same as a cost per exchange; each is their median, at least 0. Predictions charge
 * one-step all-reduce rounds Λ and longer rounds κ (model/contention.h). With κ, the runs
 * of the shortest rounds longer than a step (the plan's every:4) give τ, the packing's
 * fade, each the τ at which the model's body is its own (bisection: B grows with τ from
 * cores shared evenly at ρ towards the packing), κ whole over such short rounds; the runs
 * of longer rounds (the plan's epoch), where the packing has gone, give τ_κ the same way
 * (B grows with τ_κ as κ is spread over more of the round); τ again with that τ_κ. Each
 * is its runs' median.
 * Where every such run has rounds of one length, τ_κ is 0 and κ fades with the packing
 * over τ (the model before τ_κ), with a note. Standard errors √(π/2)·sd/√n, the
 * median's. No such run: Λ 0, κ 0 ± FIT_DEFAULT_KAPPA_SE and, where waits poll, τ
 * FIT_DEFAULT_BALANCE_S ± itself (stated, fit/fit.h), each with a note; where waits
 * block, τ 0 (nothing packs). */
#include "fit/fit_parts.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include <math.h>
#include <stdint.h>
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

/* Which fade a bisection solves for. */
typedef enum { FADE_PACKING, FADE_KAPPA } fade;

static void set_fade(costmodel_params *p, fade which, double s) {
    if (which == FADE_PACKING)
        p->balance_s = s;
    else
        p->kappa_fade_s = s;
}

/* The fade in [lo, hi] at which run t's model body, which grows with it, is body: lo or hi
 * where the body is past them; bisection. */
static double fade_of_run(costmodel_params p, fade which, double lo, double hi, const trace *t, double body) {
    set_fade(&p, which, lo);
    if (model_body(&p, t) >= body)
        return lo;
    set_fade(&p, which, hi);
    if (model_body(&p, t) <= body)
        return hi;
    for (int it = 0; it < 60; it++) {
        const double mid = 0.5 * (lo + hi);
        set_fade(&p, which, mid);
        if (model_body(&p, t) < body)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* τ: 0 where even cores shared evenly take longer, up to where the packing is 99 % of itself. */
static double balance_of_run(const costmodel_params *p, const trace *t, double body) {
    return fade_of_run(*p, FADE_PACKING, 0.0, 100.0 * contention_round_idle_s(p, &t->run.config), t, body);
}

/* τ_κ: from κ spread over a thousandth of the round (nearly gone) to κ whole (τ_κ = L). */
static double kappa_fade_of_run(const costmodel_params *p, const trace *t, double body) {
    const double idle_s = contention_round_idle_s(p, &t->run.config);
    return fade_of_run(*p, FADE_KAPPA, 1e-3 * idle_s, idle_s, t, body);
}

/* Run i's body, its training time less its start-up, where it tells the fades: a run of
 * rounds longer than a step whose training ranks outnumber the cores; NAN otherwise. */
static double fade_body(const fit_subset *s, const fit_core *f, int i) {
    const trace *t = s->tr[i];
    costmodel_params p = params_of_run(f, t);
    if (!oversubscribed_by_workers(s, i, &p) || job_schedule_of(&t->run.config).steps_per_round <= 1)
        return NAN;
    return traceinfo_training_time(t) - startup_end(t);
}

/* The median over the fade runs whose rounds are (long) or are not longer than `shortest`
 * steps of the fade solved for with f's other parameters; its count, 0 for none. */
static long fit_fade(const fit_subset *s, fit_core *f, const double *body, long shortest, bool long_rounds,
                     fade which, double *v, double *median, double *se) {
    long n = 0;
    for (int i = 0; i < s->n; i++) {
        if (isnan(body[i]) || (job_schedule_of(&s->tr[i]->run.config).steps_per_round > shortest) != long_rounds)
            continue;
        costmodel_params p = params_of_run(f, s->tr[i]);
        v[n++] = which == FADE_PACKING ? balance_of_run(&p, s->tr[i], body[i])
                                       : kappa_fade_of_run(&p, s->tr[i], body[i]);
    }
    *median = *se = 0;
    if (n > 0)
        fit_median_se(v, n, median, se);
    return n;
}

/* A run of one-step rounds that tells κ and Λ: its sharing cost, the body less the model's
 * at κ = Λ = 0, and what κ = 1 (at Λ = 0, where one-step rounds pay κ) and Λ = 1 s each add
 * to the model's body (affine in each). */
typedef struct {
    double cost_s, per_kappa_s, per_lambda_s;
} oversub_run;

/* Run i as an oversub_run; false where it tells neither (another kind of run, or a
 * parameter server's, whose one-step rounds pay neither). */
static bool one_step_run(const fit_subset *s, const fit_core *f, int i, oversub_run *r) {
    const trace *t = s->tr[i];
    costmodel_params p = params_of_run(f, t);
    if (!oversubscribed_by_workers(s, i, &p) || job_schedule_of(&t->run.config).steps_per_round != 1)
        return false;
    p.oversub_compute = p.oversub_exchange_s = 0;
    const double b0 = model_body(&p, t);
    p.oversub_compute = 1;
    r->per_kappa_s = model_body(&p, t) - b0;
    p.oversub_compute = 0;
    p.oversub_exchange_s = 1;
    r->per_lambda_s = model_body(&p, t) - b0;
    r->cost_s = traceinfo_training_time(t) - startup_end(t) - b0;
    return r->per_kappa_s > 0;
}

/* The median over the runs of the term (Λ where `lambda`, else κ) at which it alone is each
 * run's sharing cost, with its standard error, at least 0; false where no run pays it. */
static bool median_of_runs(const oversub_run *runs, long n, bool lambda, double *buf, double *v, double *se) {
    long m = 0;
    for (long i = 0; i < n; i++) {
        const double per = lambda ? runs[i].per_lambda_s : runs[i].per_kappa_s;
        if (per > 0)
            buf[m++] = runs[i].cost_s / per;
    }
    *v = *se = 0;
    if (m > 0)
        fit_median_se(buf, m, v, se);
    *v = fmax(0.0, *v);
    return m > 0;
}

/* κ and Λ from the runs of one-step all-reduce rounds (see the header): each the median
 * over the runs of the value at which the run's whole sharing cost is that term alone.
 * Held out: 0, and the fades are fitted at what predictions use. */
static void fit_kappa(const fit_subset *s, fit_core *f, oversub_run *runs, double *buf) {
    f->p.oversub_compute = f->se.oversub_compute = f->p.oversub_exchange_s = f->se.oversub_exchange_s = 0;
    long n = 0;
    for (int i = 0; i < s->n; i++)
        n += one_step_run(s, f, i, &runs[n]);
    if (!fit_held(s, PARAM_OVERSUB_EXCHANGE) &&
        median_of_runs(runs, n, true, buf, &f->p.oversub_exchange_s, &f->se.oversub_exchange_s))
        fit_add_reg(f, "oversub_exchange", "median", n, (int)n - 1, 0.0);
    if (fit_held(s, PARAM_OVERSUB_COMPUTE))
        return;
    if (median_of_runs(runs, n, false, buf, &f->p.oversub_compute, &f->se.oversub_compute)) {
        fit_add_reg(f, "oversub_compute", "median", n, (int)n - 1, 0.0);
        return;
    }
    f->se.oversub_compute = FIT_DEFAULT_KAPPA_SE;
    fit_note(f, "oversub_compute", "no batch-sync all-reduce run with more ranks than cores (a parameter "
             "server's one-step rounds do not pay kappa): time-sharing a core is taken to cost its share alone "
             "(kappa = 0, stated), +- %g: what plans with such runs measured widens the interval",
             FIT_DEFAULT_KAPPA_SE);
}

/* The fades τ and τ_κ (see the header); `body` and `v` hold s->n values. */
static void fit_fades(const fit_subset *s, fit_core *f, double *body, double *v) {
    long shortest = 0, longest = 0;
    for (int i = 0; i < s->n; i++) {
        body[i] = fade_body(s, f, i);
        const long round = job_schedule_of(&s->tr[i]->run.config).steps_per_round;
        if (!isnan(body[i])) {
            shortest = shortest == 0 || round < shortest ? round : shortest;
            longest = round > longest ? round : longest;
        }
    }
    f->p.balance_s = f->se.balance_s = f->p.kappa_fade_s = f->se.kappa_fade_s = 0;
    const bool hold_tau = fit_held(s, PARAM_BALANCE), hold_tau_kappa = fit_held(s, PARAM_KAPPA_FADE);
    if (shortest == 0) {
        /* Polling ranks stay packed while a round is short (the run headers say they poll);
         * τ = 0 would spread them at once, in the simulator even inside a one-step round. */
        if (hold_tau || f->p.waits_block > 0) {
            fit_note(f, "balance", "no run of rounds longer than a step with more ranks than cores: the "
                     "scheduler is taken to share the cores evenly over such rounds (tau = 0)");
        } else {
            f->p.balance_s = f->se.balance_s = FIT_DEFAULT_BALANCE_S;
            fit_note(f, "balance", "no run of rounds longer than a step with more ranks than cores: the scheduler "
                     "is taken to keep polling ranks packed for %g s +- %g (stated: what plans with such runs "
                     "measured)", FIT_DEFAULT_BALANCE_S, FIT_DEFAULT_BALANCE_S);
        }
        return;
    }
    long nk = 0;
    if (longest > shortest && !hold_tau_kappa) {
        /* κ whole over the shortest rounds (τ_κ far past them), τ from them; τ_κ from the
         * longer ones at that τ; τ again at that τ_κ. */
        f->p.kappa_fade_s = INFINITY;
        if (!hold_tau)
            fit_fade(s, f, body, shortest, false, FADE_PACKING, v, &f->p.balance_s, &f->se.balance_s);
        nk = fit_fade(s, f, body, shortest, true, FADE_KAPPA, v, &f->p.kappa_fade_s, &f->se.kappa_fade_s);
    }
    if (!hold_tau) {
        const long nt = fit_fade(s, f, body, shortest, false, FADE_PACKING, v, &f->p.balance_s, &f->se.balance_s);
        fit_add_reg(f, "balance", "median", nt, (int)nt - 1, 0.0);
    }
    if (nk > 0)
        fit_add_reg(f, "kappa_fade", "median", nk, (int)nk - 1, 0.0);
    else if (!hold_tau_kappa)
        fit_note(f, "kappa_fade", "no run with more ranks than cores in rounds longer than the shortest (%ld "
                 "steps): kappa is taken to fade with the packing, over balance", shortest);
}

int fit_oversub(fit_subset *s, fit_core *f, char *err, int errlen) {
    double *buf = malloc(sizeof *buf * (size_t)(2 * s->n + 1));
    oversub_run *runs = malloc(sizeof *runs * (size_t)(s->n + 1));
    if (!buf || !runs) {
        free(runs);
        free(buf);
        return errmsg_set(err, errlen, "out of memory");
    }
    fit_kappa(s, f, runs, buf);
    fit_fades(s, f, buf, buf + s->n);
    free(runs);
    free(buf);
    return 0;
}
