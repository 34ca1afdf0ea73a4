/* fit_oversub — what ranks that outnumber the cores cost beyond ρ (see fit_parts.h): κ
 * (oversub_compute) and τ (balance_s) of costmodel_slowdown, from the runs whose training
 * ranks alone outnumber the cores (a dedicated master's polling is master_yield's).
 *
 * A run's body, its training time less its start-up (the last rank's start-up end, where
 * the first round can begin), is what its rounds took. The model's body is affine in κ,
 * and for a run of one-step all-reduce rounds (batch sync: the round weight v is 1 whatever
 * τ; a parameter server's one-step rounds pay no κ and tell nothing of it) it
 * depends on nothing else unfitted, so each such run gives κ = (body − B(0)) / (B(1) −
 * B(0)); κ is their median, at least 0. With κ, the runs of the shortest rounds longer
 * than a step (the plan's every:4) give τ, the packing's fade, each the τ at which the
 * model's body is its own (bisection: B grows with τ from cores shared evenly at ρ towards
 * the packing), κ whole over such short rounds; the runs of longer rounds (the plan's
 * epoch), where the packing has gone, give τ_κ the same way (B grows with τ_κ as κ is
 * spread over more of the round); τ again with that τ_κ. Each is its runs' median.
 * Where every such run has rounds of one length, τ_κ is 0 and κ fades with the packing
 * over τ (the model before τ_κ), with a note. Standard errors √(π/2)·sd/√n, the
 * median's. No such run: κ 0 ± FIT_DEFAULT_KAPPA_SE and, where waits poll, τ
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

/* κ from the runs of one-step rounds: each gives the κ at which the model's body is its own
 * (affine in κ). Held out: 0, and the fades are fitted at 0, as predictions use it. */
static void fit_kappa(const fit_subset *s, fit_core *f, double *kappa) {
    long nk = 0;
    f->p.oversub_compute = f->se.oversub_compute = 0;
    if (fit_held(s, PARAM_OVERSUB_COMPUTE))
        return;
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
    if (nk > 0) {
        fit_add_reg(f, "oversub_compute", "median", nk, (int)nk - 1, 0.0);
    } else {
        f->se.oversub_compute = FIT_DEFAULT_KAPPA_SE;
        fit_note(f, "oversub_compute", "no batch-sync all-reduce run with more ranks than cores (a parameter "
                 "server's one-step rounds do not pay kappa): time-sharing a core is taken to cost its share alone "
                 "(kappa = 0, stated), +- %g: what plans with such runs measured widens the interval",
                 FIT_DEFAULT_KAPPA_SE);
    }
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
    if (!buf)
        return errmsg_set(err, errlen, "out of memory");
    fit_kappa(s, f, buf);
    fit_fades(s, f, buf, buf + s->n);
    free(buf);
    return 0;
}
