/* fit_compute — the step-level parts of the fit: c0, c1, sigma, cv, u (see fit_parts.h). */
#include "fit/fit_parts.h"
#include "fit/netfit.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "fit/robustfit.h"
#include "trace/traceinfo.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Run t's steps had their own exchange running beside them (DDP's buckets): 1, 0, or -1
 * out of memory. */
static int overlapped_run(const trace *t) {
    traceinfo_overlap *o;
    long n = traceinfo_overlaps(t, &o);
    free(o);
    return n < 0 ? -1 : n > 0;
}

/* The rows (1, b) → step of the T = 1, ρ = 1 training runs, but for those whose steps had
 * their exchange beside them when `alone` (counted in *left_out); the local batches'
 * range. 0, or -1 out of memory. */
static int compute_rows(fit_subset *s, bool alone, fit_rows *r, double *bmin, double *bmax, int *left_out) {
    *left_out = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || t->run.config.cores != 1 || traceinfo_shares_cores(&t->run))
            continue;
        int overlapped = alone ? overlapped_run(t) : 0;
        if (overlapped < 0)
            return -1;
        if (overlapped) {
            ++*left_out;
            continue;
        }
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            if (!traceinfo_is_step(e))
                continue;
            double b = (double)e->examples, x[2] = { 1.0, b };
            *bmin = fmin(*bmin, b);
            *bmax = fmax(*bmax, b);
            if (fit_rows_push(r, x, e->t1_s - e->t0_s))
                return -1;
        }
    }
    return 0;
}

/* c0 = 0 and c1 = step/b from steps alone that all have local batch b, where the only other
 * batches ran beside their all-reduce (DDP at K = 2: a PyTorch job's two traces). Those
 * cannot tell c0 from the exchange's share of the cores (χ), which would go into c0 and
 * be paid by every rank at every K; so the fixed part is not separated, as a table's one
 * local batch is not (fit/table.h): exact at b, χ fitted on the overlapped steps. The
 * level is the mean step's, a step above 3 medians counted as 3 (fit_compute's rule). */
static int compute_at_one_batch(const fit_rows *r, double b, fit_core *f, char *err, int errlen) {
    enum { PREEMPTED = 3 };
    double *y = malloc(sizeof *y * (size_t)r->n);
    if (!y)
        return errmsg_set(err, errlen, "out of memory");
    memcpy(y, r->y, sizeof *y * (size_t)r->n);
    gsl_sort(y, 1, (size_t)r->n);
    const double median = gsl_stats_median_from_sorted_data(y, 1, (size_t)r->n);
    double sum = 0;
    for (long i = 0; i < r->n; i++)
        sum += fmin(y[i], PREEMPTED * median);
    const double mean = sum / (double)r->n;
    const double sd = r->n > 1 ? gsl_stats_sd(y, 1, (size_t)r->n) : 0.0;
    free(y);
    f->p.c0_s = f->se.c0_s = f->cov_c0_c1 = 0;
    f->p.c1_s = mean / b;
    f->se.c1_s = sd / sqrt((double)r->n) / b;
    f->compute_with_overlapped = false;
    fit_add_reg(f, "compute", "mean step / b", r->n, (int)r->n - 1, sd * sd * (double)(r->n - 1));
    fit_note(f, "c0", "not separated: the steps alone all have local batch b=%g, and the others ran beside their "
             "all-reduce, which takes a share of the cores (overlap_slowdown) they cannot tell from c0; c0 = 0 "
             "(stated) and c1 = the mean step / b, exact at b=%g; a run at another local batch without an "
             "exchange beside it (K = 1) would separate them", b, b);
    return 0;
}

/* The whole-step fit's c0, c1 split as the layers split the step (model/netcost.h's
 * netcost_split of the network onto itself), at b̄, the rows' mean local batch, where the
 * fitted line is best determined and which it keeps. On a host that drifts between a
 * plan's runs by more than a step's fixed part, the whole-step fit trades c0 against c1
 * (c0 at its bound 0, where the layers move an fc layer's weights every step); the layers'
 * per-step rows see that cost in every run. Standard errors and covariance stay the
 * fit's: the line is as uncertain at b̄ as before. Nothing where no kept run times its
 * layers, or where their rates cannot be fitted (a note says why). 0, or -1 out of memory. */
static int compute_layers_split(fit_subset *s, fit_core *f, double b_mean, char *err, int errlen) {
    trace **kept = malloc(sizeof *kept * (size_t)(s->n > 0 ? s->n : 1));
    if (!kept)
        return errmsg_set(err, errlen, "out of memory");
    int n = 0;
    for (int i = 0; i < s->n; i++)
        if (fit_used(s, i, true))
            kept[n++] = s->tr[i];
    calibration_network net;
    char note[256];
    const int rc = netfit_traces(kept, n, &net, note, sizeof note);
    free(kept);
    if (rc < 0) { /* the whole step's split stands; calibrate reports the rates' failure */
        fit_note(f, "c0", "not split as the layers split a step: %s", note);
        return 0;
    }
    if (rc == 1 || !net.known || !(netcost_example_s(&net, &net.cost) > 0) || !(b_mean >= 1))
        return 0;
    const double c0_fit = f->p.c0_s, c1_fit = f->p.c1_s;
    netcost_split(&net, &net.cost, b_mean, &f->p.c0_s, &f->p.c1_s);
    fit_note(f, "c0", "split as the layers split a step (fit/netfit.h), at the steps' mean local batch %.3g: c0 "
             "%.3g -> %.3g s, c1 %.4g -> %.4g s/example, the same step there%s%s", b_mean, c0_fit, f->p.c0_s,
             c1_fit, f->p.c1_s, note[0] ? "; the layers' rates: " : "", note);
    return 0;
}

/* c0, c1 and their covariance from T = 1, ρ = 1 steps. 0, 1 missing, -1 error. A step
 * with its own exchange beside it (DDP) shares the cores with that exchange's threads
 * (overlap_slowdown, fit_overlap): such steps enter only when the others cannot tell c0
 * from c1. */
int fit_compute(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    double bmin = INFINITY, bmax = -INFINITY;
    int rc = -1;
    int left_out = 0, none = 0;
    if (compute_rows(s, true, &r, &bmin, &bmax, &left_out)) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    if (left_out > 0 && r.n > 0 && bmin == bmax) {
        rc = compute_at_one_batch(&r, bmin, f, err, errlen);
        goto done;
    }
    bool with_overlapped = left_out > 0 && r.n == 0;
    if (with_overlapped) {
        fit_rows_free(&r);
        r = (fit_rows){ .cols = 2 };
        bmin = INFINITY, bmax = -INFINITY;
        if (compute_rows(s, false, &r, &bmin, &bmax, &none)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        fit_missing(s, "c0, c1: no compute steps at T=1 without oversubscription (K*T <= host cores)");
        goto done;
    }
    if (bmin == bmax) {
        fit_missing(s, "c0, c1: every compute step at T=1 has local batch b=%g, so the fixed and per-example "
                   "costs cannot be separated: add a run with another local batch (batch sync at another K, "
                   "or another batch size)", bmin);
        goto done;
    }
    robustfit_result res;
    if (fit_rows_robust(&r, true, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    /* The robust fit gives the shape (how a step grows with b) immune to a preempted step,
     * and the level of a typical step; but a run's time is the SUM of its steps, whose
     * spread is skewed to the slow side (the mean step lies above the bisquare level:
     * docs/calibration.md). So the level is matched to the mean, c0 and c1 scaled by
     * Σ min(step, 3·fitted) / Σ fitted: the ordinary skew counts, a rare preemption (a
     * step many times its fit) counts as 3 fitted steps at most. */
    enum { PREEMPTED = 3 };
    double measured = 0, fitted = 0;
    for (long i = 0; i < r.n; i++) {
        double y_hat = res.c[0] + res.c[1] * r.x[2 * i + 1];
        measured += fmin(r.y[i], PREEMPTED * y_hat);
        fitted += y_hat;
    }
    double level = fitted > 0 ? measured / fitted : 1.0;
    f->p.c0_s = level * res.c[0];
    f->p.c1_s = level * res.c[1];
    f->se.c0_s = level * res.se[0];
    f->se.c1_s = level * res.se[1];
    f->cov_c0_c1 = level * level * res.cov[0][1];
    fit_add_robust_reg(f, "compute", &res, true);
    if (level != 1.0)
        fit_note(f, "c1", "robust (bisquare) shape, scaled by %.4f to the mean step: a run's time is the sum of "
                 "its steps, the slow ones included", level);
    double b_sum = 0;
    for (long i = 0; i < r.n; i++)
        b_sum += r.x[2 * i + 1];
    /* c0 held out (fit_options.without): the line's own split, so that the ablation takes
     * away the c0 this fit found, not the layers'. */
    if (!with_overlapped && !fit_held(s, PARAM_C0) &&
        compute_layers_split(s, f, b_sum / (double)r.n, err, errlen)) {
        rc = -1;
        goto done;
    }
    f->compute_with_overlapped = with_overlapped;
    if (with_overlapped)
        fit_note(f, "c0", "fitted with the steps of runs whose all-reduce ran beside them (the others have one "
                 "local batch): their exchange's share of the cores is in c0 and c1, so overlap_slowdown is 0");
    else if (left_out > 0)
        fit_note(f, "c0", "fitted without the steps of the %d run(s) whose all-reduce ran beside them: what that "
                 "costs a step is overlap_slowdown", left_out);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}

/* The σ estimator with c0, c1 given: the robust fit (relative noise, level the median step
 * of its (b, T)) through the origin of z = step − c0 − c1·b/T on x = c1·b·(1 − 1/T).
 * Rows hold (b, T) and the step. */
static int sigma_estimate(const fit_rows *r, const double *level, double c0, double c1, robustfit_result *res,
                          char *err, int errlen) {
    size_t n = (size_t)r->n;
    double *x = malloc(sizeof *x * n), *z = malloc(sizeof *z * n);
    int rc = x && z ? 0 : errmsg_set(err, errlen, "out of memory");
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            double b = r->x[2 * i], T = r->x[2 * i + 1];
            x[i] = c1 * b * (1.0 - 1.0 / T);
            z[i] = r->y[i] - c0 - c1 * b / T;
        }
        rc = robustfit_solve(x, z, level, r->n, 1, res, err, errlen);
    }
    free(x);
    free(z);
    return rc;
}

/* σ at the mean step, as c0 and c1 are: with c0, c1 given, the σ whose steps sum to what
 * they measured, Σ step = Σ (c0 + c1·b/T) + σ·Σ c1·b·(1 − 1/T), over each run's steps at
 * T > 1 (the robust σ shapes nothing here: one coefficient). The median of the runs' own
 * where FIT_SIGMA_MEDIAN_RUNS runs or more have T > 1, else the one over every run's steps;
 * NAN without such steps. A team of threads has a slow mode a run falls into whole (its
 * threads sharing one core for a while: +60% on every step of two runs in six of one plan,
 * experiments/networks/README.md), and the pooled sums of such a plan set σ for every
 * prediction by its minority (0.32 against the typical run's 0.12 there); the runs' spread
 * is run_cv's, not σ's. */
static double sigma_at_mean_step(fit_subset *s, const fit_core *f) {
    double per_run[FIT_SIGMA_MAX_RUNS], all_y = 0, all_base = 0, all_x = 0;
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || t->run.config.cores < 2 || traceinfo_shares_cores(&t->run))
            continue;
        const double T = t->run.config.cores;
        double run_y = 0, run_base = 0, run_x = 0;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            if (!traceinfo_is_step(e))
                continue;
            const double y = e->t1_s - e->t0_s, b = (double)e->examples;
            const double base = f->p.c0_s + f->p.c1_s * b / T, x = f->p.c1_s * b * (1.0 - 1.0 / T);
            run_y += y, run_base += base, run_x += x;
            all_y += y, all_base += base, all_x += x;
        }
        if (run_x > 0 && n < FIT_SIGMA_MAX_RUNS)
            per_run[n++] = (run_y - run_base) / run_x;
    }
    if (n >= FIT_SIGMA_MEDIAN_RUNS) {
        gsl_sort(per_run, 1, (size_t)n);
        return fmax(0.0, gsl_stats_median_from_sorted_data(per_run, 1, (size_t)n));
    }
    return all_x > 0 ? fmax(0.0, (all_y - all_base) / all_x) : NAN;
}

int fit_sigma(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    double *level = NULL;
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || t->run.config.cores < 2 || traceinfo_shares_cores(&t->run))
            continue;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            double x[2] = { (double)e->examples, t->run.config.cores };
            if (traceinfo_is_step(e) && fit_rows_push(&r, x, e->t1_s - e->t0_s)) {
                errmsg_set(err, errlen, "out of memory");
                goto done;
            }
        }
    }
    rc = 1;
    if (r.n < 2) {
        /* Needed only for a prediction at T > 1, which is then refused (not this fit). */
        f->p.sigma = f->se.sigma = 0;
        f->sigma_unmeasured = true;
        fit_note(f, "sigma", "not measured: no compute steps at T>1 without oversubscription; a prediction at more "
                 "than one core per worker is refused until a run with 2 or more threads per worker is added");
        rc = 0;
        goto done;
    }
    if (!(f->p.c1_s > 0)) {
        fit_missing(s, "sigma: c1 was fitted as 0, so there is no per-example work whose scaling with T "
                   "could be measured");
        goto done;
    }
    level = malloc(sizeof *level * (size_t)r.n);
    if (!level || robustfit_group_levels(r.x, r.y, r.n, 2, level) < 0) {
        rc = errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    robustfit_result res, at;
    if (sigma_estimate(&r, level, f->p.c0_s, f->p.c1_s, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    double sigma = res.c[0], var = res.cov[0][0];
    /* Propagate the uncertainty of c0, c1: var += gᵀ·Σ·g, g = ∂σ/∂(c0, c1) by central
     * differences at a step well inside each standard error. */
    double c[2] = { f->p.c0_s, f->p.c1_s }, se[2] = { f->se.c0_s, f->se.c1_s }, g[2] = { 0, 0 };
    for (int j = 0; j < 2; j++) {
        double h = 1e-3 * (se[j] > 0 ? se[j] : 1e-6 * fabs(c[j]) + 1e-15), sp, sm;
        double cp[2] = { c[0], c[1] }, cm[2] = { c[0], c[1] };
        cp[j] += h;
        cm[j] -= h;
        if (sigma_estimate(&r, level, cp[0], cp[1], &at, err, errlen)) {
            rc = -1;
            goto done;
        }
        sp = at.c[0];
        if (sigma_estimate(&r, level, cm[0], cm[1], &at, err, errlen)) {
            rc = -1;
            goto done;
        }
        sm = at.c[0];
        g[j] = (sp - sm) / (2 * h);
    }
    var += g[0] * g[0] * se[0] * se[0] + 2 * g[0] * g[1] * f->cov_c0_c1 + g[1] * g[1] * se[1] * se[1];
    f->se.sigma = var > 0 && !res.at_bound[0] ? sqrt(var) : 0.0;
    const double at_mean = sigma_at_mean_step(s, f);
    if (!isnan(at_mean))
        sigma = at_mean;
    if (sigma > 1) {
        sigma = 1.0;
        f->se.sigma = 0.0;
    }
    f->p.sigma = sigma;
    fit_add_robust_reg(f, "sigma", &res, true);
    rc = 0;
done:
    free(level);
    fit_rows_free(&r);
    return rc;
}

typedef struct {
    double b, t;
} step_sample;

static int by_batch(const void *a, const void *b) {
    double x = ((const step_sample *)a)->b, y = ((const step_sample *)b)->b;
    return (x > y) - (x < y);
}

int fit_cv(fit_subset *s, fit_core *f, char *err, int errlen) {
    double sum = 0;                /* Σ (n_g − 1)·(s_g/m_g)² */
    long dof = 0, points = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        /* Oversubscribed runs time-share cores: their spread is the scheduler's. */
        if (!fit_used(s, i, true) || traceinfo_shares_cores(&t->run))
            continue;
        step_sample *v = malloc(sizeof *v * (size_t)(t->n_events + 1));
        double *d = malloc(sizeof *d * (size_t)(t->n_events + 1)), *work = malloc(sizeof *work * (size_t)(t->n_events + 1));
        if (!v || !d || !work) {
            free(v);
            free(d);
            free(work);
            return errmsg_set(err, errlen, "out of memory");
        }
        long n = 0;
        for (long k = 0; k < t->n_events; k++)
            if (traceinfo_is_step(&t->events[k]))
                v[n++] = (step_sample){ (double)t->events[k].examples, t->events[k].t1_s - t->events[k].t0_s };
        qsort(v, (size_t)n, sizeof *v, by_batch);
        for (long a = 0, b; a < n; a = b) {
            for (b = a; b < n && v[b].b == v[a].b; b++)
                d[b - a] = v[b].t;
            long m = b - a;
            if (m < 3)
                continue;
            /* Robust: the normal-consistent MAD over the median. The sample sd let a few
             * preempted steps (tens of times the others) set cv = 0.57 on a host whose
             * steps otherwise spread 0.2, and with it every barrier's straggler wait. */
            gsl_sort(d, 1, (size_t)m);
            double med = gsl_stats_median_from_sorted_data(d, 1, (size_t)m);
            double mad = gsl_stats_mad(d, 1, (size_t)m, work);
            if (!(med > 0))
                continue;
            sum += (double)(m - 1) * (mad / med) * (mad / med);
            dof += m - 1;
            points += m;
        }
        free(work);
        free(v);
        free(d);
    }
    if (dof < 1) {
        fit_missing(s, "cv: no two compute steps of the same size in any training run");
        return 1;
    }
    double cv = sqrt(sum / (double)dof);
    f->p.cv = cv;
    /* The sample CV's standard error, over the MAD's efficiency at the normal (0.37). */
    f->se.cv = cv * sqrt((1 + 2 * cv * cv) / (2.0 * (double)dof)) / sqrt(0.3675);
    fit_add_reg(f, "cv", "pooled robust relative spread (MAD/median)", points, (int)dof, 0.0);
    f->regs[f->n_regs - 1].rms_s = cv;
    return 0;
}


/* u from the update events of runs at T = 1 and ρ = 1, each one update of the whole model
 * on one core: a robust location (the bisquare fit of a constant), so a preempted update
 * has no pull. Traces without update events come from a trainer that did not record the
 * update apart: their update is inside their compute and comm spans, and u = 0 says so. */
int fit_update(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 1 };
    int runs = 0, with = 0, rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true))
            continue;
        bool one_core = t->run.config.cores == 1 && !traceinfo_shares_cores(&t->run), has = false;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            const double one = 1.0;
            if (!traceinfo_is_optimizer_update(e))
                continue;
            has = true;
            if (one_core && fit_rows_push(&r, &one, e->t1_s - e->t0_s)) {
                errmsg_set(err, errlen, "out of memory");
                goto done;
            }
        }
        runs++;
        with += has;
    }
    rc = 1;
    if (with == 0) {
        fit_note(f, "update", "no update events in the training traces (a trainer that did not record the update "
                 "apart): u = 0, the update's time is inside the compute and comm spans");
        rc = 0;
        goto done;
    }
    if (r.n < 2) {
        fit_missing(s, "update: %ld update events at T=1 without oversubscription: need 2 or more (a run at T=1, "
                    "K*T <= host cores, of a trainer that records update spans)", r.n);
        goto done;
    }
    robustfit_result res;
    if (fit_rows_robust(&r, false, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    f->p.update_s = res.c[0];
    f->se.update_s = res.se[0];
    fit_add_robust_reg(f, "update", &res, false);
    if (with < runs)
        fit_note(f, "update", "%d of %d training runs record no update events: their update is inside their compute "
                 "and comm spans (and c0, S carry it)", runs - with, runs);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}

/* y, the share of its core a dedicated master's polling gives back, from the runs with a
 * dedicated master and the workers' threads filling whole cores (K·T a multiple of P, so
 * no core holds more of them than another and ρ = (K·T + m)/P > 1 tells m): per run, the
 * workers' steps against the idle host's step at their examples give the slowdown ρ' = ρ +
 * v·κ·(ρ − 1) (ratio of sums, each step capped at 3·ρ fitted as for c0, c1; v the run's
 * round weight), so ρ = (ρ' + v·κ) / (1 + v·κ) and m = ρ·P − K·T. y = 1 − m over the runs
 * of one-step rounds (runs weighted by their steps' time), held to [0, 1], standard error
 * from the steps' own m (sd/√n); no such run: from every run. L, what of y a master polling
 * past τ gives up, from the runs of longer rounds (packing weight w < 1/2: m = 1 − y +
 * (1 − w)·L): the median of their (m − 1 + y)/(1 − w), held to [y − 1, y] (m in [0, 1]).
 * Either sign: a master may keep more of a core over long rounds (it polls through them)
 * or less (it naps through them, messaged less often: docs/calibration.md). No dedicated
 * run: y = 1 ± 0.5, a master that gives its core back while it waits (the trainer's naps;
 * docs/calibration.md says why); no long-round one: L = 0; each with a note. After
 * fit_sigma and fit_oversub (κ, τ). */
typedef struct {
    double m_weighted, weight, m_sum, m_sq;
    long n;
} master_share;

static double rho_of_slowdown(double slowdown, double kappa) { return (slowdown + kappa) / (1.0 + kappa); }

/* Adds run t's steps to *into; returns the run's own m (NAN when it has no steps). v is
 * the run's round weight: κ is felt as v·κ. */
static double add_master_run(const fit_core *f, const trace *t, double v, master_share *into) {
    const job_config *c = &t->run.config;
    const double P = t->run.host_cores, KT = (double)c->workers * c->cores, kappa = v * f->p.oversub_compute;
    double per_example = f->p.c1_s * (f->p.sigma + (1.0 - f->p.sigma) / c->cores), cap = 3 * (KT + 1) / P;
    double run_y = 0, run_idle = 0;
    for (long k = 0; k < t->n_events; k++) {
        const trace_event *e = &t->events[k];
        if (!traceinfo_is_step(e))
            continue;
        double idle = f->p.c0_s + per_example * (double)e->examples, y = fmin(e->t1_s - e->t0_s, cap * idle);
        double m = rho_of_slowdown(y / idle, kappa) * P - KT;
        run_y += y;
        run_idle += idle;
        into->m_sum += m;
        into->m_sq += m * m;
        into->n++;
    }
    if (!(run_idle > 0))
        return NAN;
    double m = rho_of_slowdown(run_y / run_idle, kappa) * P - KT;
    into->m_weighted += m * run_idle;
    into->weight += run_idle;
    return m;
}

/* Is run t one that tells a synchronous dedicated master's share (see above)? */
static bool tells_master_share(const fit_subset *s, int i) {
    const trace *t = s->tr[i];
    const job_config *c = &t->run.config;
    double P = t->run.host_cores, KT = (double)c->workers * c->cores;
    /* An async master works (receives, updates, sends) besides polling: not its yield. */
    return fit_used(s, i, true) && c->master == JOB_MASTER_DEDICATED && contention_fills_cores_alike(KT, P) &&
           !job_sync_is_async(c->sync);
}

/* L from the long-round runs' m (m_long[i], NAN for the others), given y; -1 out of
 * memory. */
static int fit_master_yield_loss(fit_subset *s, fit_core *f, const double *m_long, const double *w_long) {
    double *v = malloc(sizeof *v * (size_t)(s->n + 1));
    if (!v)
        return -1;
    long n = 0;
    for (int i = 0; i < s->n; i++)
        if (!isnan(m_long[i]))
            v[n++] = (m_long[i] - 1.0 + f->p.master_yield) / (1.0 - w_long[i]);
    f->p.master_yield_loss = f->se.master_yield_loss = 0;
    if (n == 0) {
        fit_note(f, "master_yield_loss", "no run with a dedicated master in rounds longer than balance: its "
                 "share is taken to be that of one-step rounds in every round");
    } else {
        fit_median_se(v, n, &f->p.master_yield_loss, &f->se.master_yield_loss);
        f->p.master_yield_loss = fmin(f->p.master_yield, fmax(f->p.master_yield - 1.0, f->p.master_yield_loss));
        fit_add_reg(f, "master_yield_loss", "median", n, (int)n - 1, 0.0);
    }
    free(v);
    return 0;
}

int fit_master_yield(fit_subset *s, fit_core *f, char *err, int errlen) {
    master_share one = { 0 }, all = { 0 };
    double *m_long = malloc(sizeof *m_long * (size_t)(s->n + 1)), *w_long = malloc(sizeof *w_long * (size_t)(s->n + 1));
    if (!m_long || !w_long) {
        free(m_long);
        free(w_long);
        return errmsg_set(err, errlen, "out of memory");
    }
    for (int i = 0; i < s->n; i++) {
        m_long[i] = NAN;
        if (!tells_master_share(s, i))
            continue;
        costmodel_params at = f->p;
        at.host_cores = s->tr[i]->run.host_cores;
        double w = contention_packing_weight(&at, &s->tr[i]->run.config);
        double v = contention_round_weight(&at, &s->tr[i]->run.config);
        double m = add_master_run(f, s->tr[i], v, &all);
        if (w == 1.0)
            add_master_run(f, s->tr[i], v, &one);
        if (w < 0.5) {
            m_long[i] = m;
            w_long[i] = w;
        }
    }
    const master_share *use = one.n >= 2 ? &one : &all;
    if (use->n < 2 || !(use->weight > 0)) {
        /* Unmeasured: a master that gives its core back while it waits (the trainer's
         * naps between exchanges; DDP's blocks; Open MPI's polling yields where ranks
         * outnumber cores), with a standard error that spans a whole core. */
        f->p.master_yield = 1.0;
        f->se.master_yield = FIT_MASTER_YIELD_UNMEASURED_SE;
        f->p.master_yield_loss = f->se.master_yield_loss = 0;
        fit_note(f, "master_yield", "no run with a dedicated master on an oversubscribed host: it is taken to yield "
                 "its core while it waits, as the trainer's master naps and Open MPI's ranks yield where they "
                 "outnumber the cores (1 +- %g: the interval spans a whole core)", FIT_MASTER_YIELD_UNMEASURED_SE);
        free(m_long);
        free(w_long);
        return 0;
    }
    double m = use->m_weighted / use->weight, mean = use->m_sum / use->n;
    double sd = sqrt(fmax(0.0, use->m_sq / use->n - mean * mean));
    f->p.master_yield = fmin(1.0, fmax(0.0, 1.0 - m));
    f->se.master_yield = f->p.master_yield > 0 && f->p.master_yield < 1 ? sd / sqrt((double)use->n) : 0.0;
    fit_add_reg(f, "master_yield", "ratio", use->n, (int)use->n - 1, 0.0);
    int rc = 0;
    if (use == &one)
        rc = fit_master_yield_loss(s, f, m_long, w_long);
    else {
        f->p.master_yield_loss = f->se.master_yield_loss = 0;
        fit_note(f, "master_yield_loss", "no run with a dedicated master in one-step rounds: y is every round's");
    }
    free(m_long);
    free(w_long);
    return rc ? errmsg_set(err, errlen, "out of memory") : 0;
}
