/* fit_oversub — what ranks that outnumber the cores cost beyond ρ (see fit_parts.h): κ
 * (oversub_compute) and τ (balance_s) of costmodel_slowdown, and the exchange's wait Λ and
 * λ of contention_exchange_time, from the runs whose training ranks alone outnumber the
 * cores (a dedicated master's polling is master_yield's).
 *
 * A run's body, its training time less its start-up (the last rank's start-up end, where
 * the first round can begin), is what its rounds took. For a run of one-step all-reduce
 * rounds (batch sync; a parameter server's one-step rounds pay none of these terms and tell
 * nothing of them) the model's body depends on nothing else unfitted and is affine in κ
 * (at Λ = λ = 0, where those rounds pay κ whatever τ), in Λ and in λ. Its sharing cost,
 * body − B(0), over B(κ=1) − B(0) is κ, its cost as a share of its steps; κ is the median
 * over the runs of the longest steps (within FIT_EXCHANGE_STEP_SPAN), at least 0. Over
 * B(Λ=1) − B(0) (its rounds) it is the round's wait, Λ + λ·x with x = step₁·(ρ − 1): where
 * the runs' x span FIT_EXCHANGE_STEP_SPAN, Λ and λ are the line through each
 * configuration's median wait, weighted by their standard errors (a term below 0 is 0 and
 * the other the same fit alone); where they do not, Λ is the median wait and λ 0, with a
 * note. Predictions charge one-step all-reduce rounds Λ and λ and longer rounds κ
 * (model/contention.h). With κ, the runs of the shortest rounds longer than a step (the
 * plan's every:4) give τ, the packing's fade, each the τ at which the model's body is its
 * own (bisection: B grows with τ from cores shared evenly at ρ towards the packing), κ
 * whole over such short rounds; the runs of longer rounds (the plan's epoch), where the
 * packing has gone, give τ_κ the same way (B grows with τ_κ as κ is spread over more of
 * the round); τ again with that τ_κ. Each is its runs' median. Where every such run has
 * rounds of one length, τ_κ is 0 and κ fades with the packing over τ (the model before
 * τ_κ), with a note. Standard errors √(π/2)·sd/√n, the median's. No such run: Λ = λ = 0,
 * κ 0 ± FIT_DEFAULT_KAPPA_SE and, where waits poll, τ FIT_DEFAULT_BALANCE_S ± itself
 * (stated, fit/fit.h), each with a note; where waits block, τ 0 (nothing packs). */
#include "fit/fit_parts.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include <gsl/gsl_fit.h>
#include <gsl/gsl_statistics_double.h>
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

/* A run of one-step rounds that tells κ, Λ and λ: its sharing cost, the body less the
 * model's at κ = Λ = λ = 0; what κ = 1 (at Λ = λ = 0, where one-step rounds pay κ),
 * Λ = 1 s and λ = 1 each add to the model's body (affine in each); its idle step. */
typedef struct {
    const job_config *config;
    double cost_s, per_kappa_s, per_wait_s, per_share_s, step_s;
} oversub_run;

/* Run i as an oversub_run; false where it tells neither (another kind of run, or a
 * parameter server's, whose one-step rounds pay neither). */
static bool one_step_run(const fit_subset *s, const fit_core *f, int i, oversub_run *r) {
    const trace *t = s->tr[i];
    costmodel_params p = params_of_run(f, t);
    if (!oversubscribed_by_workers(s, i, &p) || job_schedule_of(&t->run.config).steps_per_round != 1)
        return false;
    p.oversub_compute = p.oversub_wait_s = p.oversub_wait_share = 0;
    const double b0 = model_body(&p, t);
    p.oversub_compute = 1;
    r->per_kappa_s = model_body(&p, t) - b0;
    p.oversub_compute = 0;
    p.oversub_wait_s = 1;
    r->per_wait_s = model_body(&p, t) - b0;
    p.oversub_wait_s = 0;
    p.oversub_wait_share = 1;
    r->per_share_s = model_body(&p, t) - b0;
    r->cost_s = traceinfo_training_time(t) - startup_end(t) - b0;
    r->config = &t->run.config;
    r->step_s = costmodel_idle_step_time(&p, r->config);
    return r->per_kappa_s > 0 && r->per_wait_s > 0;
}

/* Which term a run's whole sharing cost is read as. */
typedef enum { AS_KAPPA, AS_WAIT, AS_SHARE } oversub_term;

static double per_term(const oversub_run *r, oversub_term term) {
    return term == AS_KAPPA ? r->per_kappa_s : term == AS_WAIT ? r->per_wait_s : r->per_share_s;
}

/* The median over the runs of idle steps of at least min_step_s of the term at which it
 * alone is each run's sharing cost, with its standard error, at least 0; returns how many
 * runs, 0 where no such run pays it. */
static long median_of_runs(const oversub_run *runs, long n, oversub_term term, double min_step_s, double *buf,
                           double *v, double *se) {
    long m = 0;
    for (long i = 0; i < n; i++)
        if (per_term(&runs[i], term) > 0 && runs[i].step_s >= min_step_s)
            buf[m++] = runs[i].cost_s / per_term(&runs[i], term);
    *v = *se = 0;
    if (m > 0)
        fit_median_se(buf, m, v, se);
    *v = fmax(0.0, *v);
    return m;
}

/* x of run r, step₁·(ρ − 1): what λ = 1 adds to a round, where Λ = 1 s adds a second. */
static double share_x_of(const oversub_run *r) { return r->per_share_s / r->per_wait_s; }

/* The runs' waits by configuration, each of at least two runs (a spread to weigh it by):
 * per configuration its x, the median of its runs' waits a round (cost/per_Λ) and that
 * median's weight, 1/se²; `one` all 1 (Λ's column). */
typedef struct {
    double *one, *x_s, *wait_s, *weight;
    long n;
} config_waits;

/* Fills w (its arrays of n values each) from the runs; `buf` holds n values. */
static void waits_by_config(const oversub_run *runs, long n, double *buf, config_waits *w) {
    w->n = 0;
    for (long i = 0; i < n; i++) {
        bool seen = false;
        for (long j = 0; j < i && !seen; j++)
            seen = fit_same_config(runs[j].config, runs[i].config);
        if (seen)
            continue;
        long m = 0;
        for (long j = i; j < n; j++)
            if (fit_same_config(runs[j].config, runs[i].config))
                buf[m++] = runs[j].cost_s / runs[j].per_wait_s;
        if (m < 2)
            continue;
        const long k = w->n++;
        double se;
        w->one[k] = 1.0;
        w->x_s[k] = share_x_of(&runs[i]);
        fit_median_se(buf, m, &w->wait_s[k], &se);
        /* runs that agree to the digit weigh as if they spread by 0.1% of their wait */
        se = fmax(se, 1e-3 * fabs(w->wait_s[k]) + 1e-12);
        w->weight[k] = 1.0 / (se * se);
    }
}

/* Do the configurations' x span FIT_EXCHANGE_STEP_SPAN (largest / smallest)? */
static bool waits_span(const config_waits *w) {
    double lo = INFINITY, hi = 0;
    for (long i = 0; i < w->n; i++) {
        lo = fmin(lo, w->x_s[i]);
        hi = fmax(hi, w->x_s[i]);
    }
    return w->n >= 2 && hi >= FIT_EXCHANGE_STEP_SPAN * lo;
}

/* The wait as one term alone, the other held at 0, by the same weighted least squares as
 * the line: Λ their weighted mean, or λ the line through the origin in x. */
static void wait_term(const config_waits *w, bool share, double *c, double *se) {
    if (share) {
        double cov, sumsq;
        gsl_fit_wmul(w->x_s, 1, w->weight, 1, w->wait_s, 1, (size_t)w->n, c, &cov, &sumsq);
        *se = sqrt(cov);
    } else {
        double sum_w = 0;
        for (long i = 0; i < w->n; i++)
            sum_w += w->weight[i];
        *c = gsl_stats_wmean(w->weight, 1, w->wait_s, 1, (size_t)w->n);
        *se = 1.0 / sqrt(sum_w);
    }
    *c = fmax(0.0, *c);
}

/* Λ and λ from the runs of one-step all-reduce rounds (see the header): where the
 * configurations' x span FIT_EXCHANGE_STEP_SPAN, the line through their median waits
 * (fit_weighted_two), or, where it puts a term below 0 or one is held, the other alone by
 * the same fit (with a note); where they do not, Λ the median over the runs (with a note),
 * or λ where Λ is held. */
static int fit_wait(const fit_subset *s, fit_core *f, const oversub_run *runs, long n, double *buf, char *err,
                    int errlen) {
    const bool hold_wait = fit_held(s, PARAM_OVERSUB_WAIT), hold_share = fit_held(s, PARAM_OVERSUB_WAIT_SHARE);
    if (hold_wait && hold_share)
        return 0;
    double *block = malloc(sizeof *block * (size_t)(4 * (n + 1)));
    if (!block)
        return errmsg_set(err, errlen, "out of memory");
    config_waits w = { block, block + n + 1, block + 2 * (n + 1), block + 3 * (n + 1), 0 };
    waits_by_config(runs, n, buf, &w);
    double c[2] = { 0, 0 }, se[2] = { 0, 0 };
    size_t rank;
    if (waits_span(&w)) {
        if (!hold_wait && !hold_share && fit_weighted_two(w.one, w.x_s, w.wait_s, w.weight, w.n, c, se, &rank)) {
            free(block);
            return errmsg_set(err, errlen, "the exchange's wait on shared cores: the weighted fit failed");
        }
        const bool below = !hold_wait && !hold_share && (c[0] < 0 || c[1] < 0);
        const bool one_term = hold_wait || hold_share || below;
        if (one_term) {
            const bool share = hold_wait || (!hold_share && c[0] < 0); /* the term fitted alone */
            if (below)
                fit_note(f, share ? "oversub_wait" : "oversub_wait_share", "the line through the one-step all-reduce "
                         "runs' waits on shared cores put it at %.3g, below 0: it is 0, and the wait is taken as %s "
                         "alone", share ? c[0] : c[1], share ? "a share of the step" : "a cost per exchange");
            c[0] = c[1] = se[0] = se[1] = 0;
            wait_term(&w, share, &c[share], &se[share]);
        }
        f->p.oversub_wait_s = c[0];
        f->se.oversub_wait_s = se[0];
        f->p.oversub_wait_share = c[1];
        f->se.oversub_wait_share = se[1];
        fit_add_reg(f, "oversub_wait", "weighted, configurations' medians", w.n, (int)w.n - (one_term ? 1 : 2), 0.0);
    } else if (!hold_wait) {
        const long m = median_of_runs(runs, n, AS_WAIT, 0, buf, &f->p.oversub_wait_s, &f->se.oversub_wait_s);
        if (m > 0) {
            fit_add_reg(f, "oversub_wait", "median", m, (int)m - 1, 0.0);
            if (!hold_share)
                fit_note(f, "oversub_wait", "the one-step all-reduce runs on shared cores do not differ %g times in "
                         "idle step x (rho - 1): their wait is taken as a cost per exchange, none of it growing "
                         "with the step (oversub_wait_share 0)", FIT_EXCHANGE_STEP_SPAN);
        }
    } else {
        const long m = median_of_runs(runs, n, AS_SHARE, 0, buf, &f->p.oversub_wait_share, &f->se.oversub_wait_share);
        if (m > 0)
            fit_add_reg(f, "oversub_wait_share", "median", m, (int)m - 1, 0.0);
    }
    free(block);
    return 0;
}

/* The longest idle step of the runs, over FIT_EXCHANGE_STEP_SPAN: the shortest κ is read
 * from. */
static double kappa_min_step(const oversub_run *runs, long n) {
    double longest = 0;
    for (long i = 0; i < n; i++)
        longest = fmax(longest, runs[i].step_s);
    return longest / FIT_EXCHANGE_STEP_SPAN;
}

/* κ, Λ and λ from the runs of one-step all-reduce rounds (see the header); κ the median
 * over the runs of the longest steps (those within FIT_EXCHANGE_STEP_SPAN of it) of the
 * value at which the run's whole sharing cost is κ alone: a share of a step, for rounds of
 * several steps, which the plan runs at the larger batches, and where the per-exchange
 * wait of the shortest runs would pass for one. Held out: 0, and the fades are fitted at
 * what predictions use. */
static int fit_one_step_terms(const fit_subset *s, fit_core *f, oversub_run *runs, double *buf, char *err, int errlen) {
    f->p.oversub_compute = f->se.oversub_compute = 0;
    f->p.oversub_wait_s = f->se.oversub_wait_s = 0;
    f->p.oversub_wait_share = f->se.oversub_wait_share = 0;
    long n = 0;
    for (int i = 0; i < s->n; i++)
        n += one_step_run(s, f, i, &runs[n]);
    if (fit_wait(s, f, runs, n, buf, err, errlen))
        return -1;
    if (fit_held(s, PARAM_OVERSUB_COMPUTE))
        return 0;
    const long m = median_of_runs(runs, n, AS_KAPPA, kappa_min_step(runs, n), buf, &f->p.oversub_compute,
                                  &f->se.oversub_compute);
    if (m > 0) {
        fit_add_reg(f, "oversub_compute", "median", m, (int)m - 1, 0.0);
        return 0;
    }
    f->se.oversub_compute = FIT_DEFAULT_KAPPA_SE;
    fit_note(f, "oversub_compute", "no batch-sync all-reduce run with more ranks than cores (a parameter "
             "server's one-step rounds do not pay kappa): time-sharing a core is taken to cost its share alone "
             "(kappa = 0, stated), +- %g: what plans with such runs measured widens the interval",
             FIT_DEFAULT_KAPPA_SE);
    return 0;
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
    int rc = fit_one_step_terms(s, f, runs, buf, err, errlen);
    if (rc == 0)
        fit_fades(s, f, buf, buf + s->n);
    free(runs);
    free(buf);
    return rc;
}
