/* fit_run — the run-level parts of the fit: w0, w1, run_cv (see fit_parts.h). */
#include "fit/fit_parts.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* NNLS of the rows (1, x) → y, named reg among the regressions: out[] = { intercept, its
 * standard error, slope, its standard error }. 0, or -1 with err. */
static int nnls_intercept_slope(const fit_rows *r, fit_core *f, const char *reg, double *out[4], char *err,
                                int errlen) {
    nnls_result *res = fit_rows_nnls(r, err, errlen);
    if (!res)
        return -1;
    *out[0] = gsl_vector_get(res->x, 0);
    *out[1] = gsl_vector_get(res->se, 0);
    *out[2] = gsl_vector_get(res->x, 1);
    *out[3] = gsl_vector_get(res->se, 1);
    fit_add_reg(f, reg, "nnls", r->n, res->dof, res->rss);
    nnls_result_free(res);
    return 0;
}

/* The data_load start-up spans of the runs at ρ = 1 (every rank reads and decompresses
 * the first D training and test examples; at ρ > 1 the ranks share the cores for it): one
 * row (1, n) → span each; -1 out of memory (the rows so far are the caller's to free). */
static int data_load_rows(fit_subset *s, const costmodel_params *p, fit_rows *r, bool *distinct_d) {
    double first_d = -1;
    *distinct_d = false;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || traceinfo_shares_cores(&t->run))
            continue;
        const double d = costmodel_loaded_examples(p, &t->run.config); /* the model's n(D): one owner */
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            if (e->ph != TRACE_STARTUP || strcmp(e->name, "data_load") != 0)
                continue;
            const double x[2] = { 1.0, d };
            if (fit_rows_push(r, x, e->t1_s - e->t0_s))
                return -1;
            if (first_d < 0)
                first_d = d;
            else if (d != first_d)
                *distinct_d = true;
        }
    }
    return 0;
}

/* The test file's size, the most test examples a rank can load: the largest a header
 * gives (0 where none does: n(D) = D). */
static double test_set_examples(const fit_subset *s) {
    double most = 0;
    for (int i = 0; i < s->n; i++)
        if (fit_used(s, i, true) && s->tr[i]->run.memory.has)
            most = fmax(most, (double)s->tr[i]->run.memory.test_set_examples);
    return most;
}

/* d and l, the data load d + l·n of one rank (n: the examples it loaded, training and
 * test): NNLS of the data_load spans at ρ = 1 on (1, n) when the runs loaded two or more
 * n. At one n the two cannot be told apart, and the load is taken as proportional to the
 * examples (d = 0, l = the spans' median / n, standard error from the median's): reading
 * and decoding a file of examples is linear in them with little fixed (this host's
 * trainer: 26 ms at n = 4736, 146 ms at 30000, 345 ms at 70000; docs/calibration.md), so
 * a what-if at another D keeps its load. None recorded: both 0. */
static int fit_startup_cpu(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    bool distinct = false;
    int rc = -1;
    f->p.startup_cpu_s = f->se.startup_cpu_s = f->p.startup_per_example_s = f->se.startup_per_example_s = 0;
    f->p.test_examples = test_set_examples(s);
    if (data_load_rows(s, &f->p, &r, &distinct)) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    rc = 0;
    if (r.n == 0) {
        fit_note(f, "startup_cpu", "no data_load start-up spans: start-up at rho > 1 is not scaled");
    } else if (!distinct || r.n < 3) {
        for (int i = 0; i < r.n; i++) /* each span per example it loaded: rows (1, n) */
            r.y[i] /= r.x[2 * i + 1];
        fit_median_se(r.y, r.n, &f->p.startup_per_example_s, &f->se.startup_per_example_s); /* reorders r.y */
        if (distinct)
            fit_note(f, "startup_per_example", "fewer than 3 data_load spans: the load is taken as proportional to "
                     "the examples loaded, none of it fixed (startup_cpu 0)");
        else
            fit_note(f, "startup_per_example", "every run loaded the same examples (%.0f, training and test): the "
                     "load is taken as proportional to them, none of it fixed (startup_cpu 0), so a run of "
                     "another D loads in proportion", r.x[1]);
    } else {
        rc = nnls_intercept_slope(&r, f, "data_load", (double *[]){ &f->p.startup_cpu_s, &f->se.startup_cpu_s,
                                  &f->p.startup_per_example_s, &f->se.startup_per_example_s }, err, errlen);
    }
done:
    fit_rows_free(&r);
    return rc;
}

/* Two runs at two worker counts: the line through them, without a standard error; but not
 * through a run of one worker. That one is one process, with no rendezvous, no process
 * group and no peer to wait for, so the line from it would charge every added worker the
 * whole cost of going distributed (a PyTorch job's K = 1 and K = 2 traces: 0.07 and 0.42 s
 * would say 1.1 s at K = 3, where it took 0.35 s). Its start-up may also be a draw of
 * its own (a cold page cache: 1.3 s against 0.3 s). The start-up is then the other run's,
 * fixed (w1 = 0), the difference its standard error. */
static void fit_startup_two_runs(const fit_rows *r, fit_core *f) {
    const double k0 = r->x[1], k1 = r->x[3];
    if (k0 > 1 && k1 > 1) {
        f->p.w1_s = fmax(0.0, (r->y[1] - r->y[0]) / (k1 - k0));
        f->p.w0_s = fmax(0.0, r->y[0] - f->p.w1_s * k0);
        f->se.w0_s = f->se.w1_s = 0;
        fit_note(f, "w1", "start-up of two runs only (K=%g and K=%g): the line through them, without a standard "
                 "error; a third run would give one", k0, k1);
        return;
    }
    const double one = k0 == 1 ? r->y[0] : r->y[1], many = k0 == 1 ? r->y[1] : r->y[0];
    f->p.w0_s = fmax(0.0, many);
    f->se.w0_s = fabs(many - one);
    f->p.w1_s = f->se.w1_s = 0;
    fit_note(f, "w1", "start-up of two runs only, one of them of one worker (one process: no rendezvous, no peer, "
             "%.3g s against %.3g s): the line through them would charge every added worker the cost of going "
             "distributed, so the start-up is the K=%g run's, fixed (w1 = 0), the difference w0's standard "
             "error; a run at a third worker count would give the slope", one, many, k0 == 1 ? k1 : k0);
}

/* w0, w1: NNLS of W − l·D − (d + l·D)·(ρ − 1) = w0 + w1·K, one point per run, W = the
 * latest end of any rank's start-up events. */
int fit_startup(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    int rc = -1, kmin = 0, kmax = 0;
    if (fit_startup_cpu(s, f, err, errlen))
        return -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true))
            continue;
        double w = traceinfo_startup_end(t);
        if (w < 0)
            continue;
        costmodel_params at = f->p;
        at.host_cores = t->run.host_cores;
        at.w0_s = at.w1_s = 0; /* what the data load adds to W */
        w -= costmodel_startup_time(&at, &t->run.config);
        int K = t->run.config.workers;
        double x[2] = { 1.0, K };
        kmin = r.n == 0 || K < kmin ? K : kmin;
        kmax = r.n == 0 || K > kmax ? K : kmax;
        if (fit_rows_push(&r, x, w)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        /* A profiler trace of someone's job starts when the profiler did: no start-up in
         * it, and none in its measured time either. */
        f->p.w0_s = f->p.w1_s = f->se.w0_s = f->se.w1_s = 0;
        fit_note(f, "w0", "no start-up spans in any training run (a profiler trace begins with training): "
                 "w0 = w1 = 0, predictions leave the start-up out as the measured times do");
        rc = 0;
        goto done;
    }
    if (kmin == kmax) {
        /* One worker count: the start-up is taken as fixed (w1 = 0), with a note. */
        fit_median_se(r.y, r.n, &f->p.w0_s, &f->se.w0_s);
        f->p.w1_s = f->se.w1_s = 0;
        fit_note(f, "w1", "start-up measured only at K=%d workers: taken as fixed (w0 = its median, w1 = 0); a "
                 "run at another worker count would separate the per-worker part", kmin);
        rc = 0;
        goto done;
    }
    if (r.n < 3) {
        fit_startup_two_runs(&r, f);
        rc = 0;
        goto done;
    }
    rc = nnls_intercept_slope(&r, f, "startup", (double *[]){ &f->p.w0_s, &f->se.w0_s, &f->p.w1_s, &f->se.w1_s }, err,
                              errlen);
done:
    fit_rows_free(&r);
    return rc;
}


/* run_cv, the log-normal σ of a whole run's speed factor (one draw per run: what the host
 * does to a run as a whole), from the configurations run more than once: with t a run's
 * training time, s² = Σ_g Σ_i (ln t_i − mean_g ln t)² / Σ_g (n_g − 1), standard error
 * s/√(2·dof) (the standard error of a normal sample's s). Pooled apart for the
 * configurations whose ranks outnumber the cores (run_cv_oversub: the scheduler's
 * placement of them differs from run to run, so their repeats spread more: figures in
 * docs/calibration.md) and the others (run_cv; all of them when none has ρ = 1).
 * Without repeats it cannot be told from the configurations' own differences: the stated
 * FIT_DEFAULT_RUN_CV, with a note. */
typedef struct {
    double ss;                /* Σ_g Σ_i (ln t_i − mean_g)² */
    long dof, points;
} spread_sum;

static double spread_of(const spread_sum *a, double *se) {
    double s = sqrt(a->ss / (double)a->dof);
    *se = s / sqrt(2.0 * (double)a->dof);
    return s;
}

int fit_run_cv(fit_subset *s, fit_core *f, char *err, int errlen) {
    int *group = malloc(sizeof *group * (size_t)(s->n + 1));
    double *lt = malloc(sizeof *lt * (size_t)(s->n + 1)), *g = malloc(sizeof *g * (size_t)(s->n + 1));
    if (!group || !lt || !g) {
        free(group);
        free(lt);
        free(g);
        return errmsg_set(err, errlen, "out of memory");
    }
    for (int i = 0; i < s->n; i++) {
        double t = fit_used(s, i, true) ? traceinfo_training_time(s->tr[i]) : 0;
        group[i] = t > 0 ? -1 : -2;           /* -1: not grouped yet; -2: not a timed training run */
        lt[i] = t > 0 ? log(t) : 0;
    }
    spread_sum idle = { 0 }, oversub = { 0 };
    for (int i = 0; i < s->n; i++) {
        if (group[i] != -1)
            continue;
        size_t m = 0;
        for (int j = i; j < s->n; j++)
            if (group[j] == -1 && fit_same_config(&s->tr[i]->run.config, &s->tr[j]->run.config)) {
                group[j] = i;
                g[m++] = lt[j];
            }
        if (m < 2)
            continue;
        costmodel_params at = f->p;
        at.host_cores = s->tr[i]->run.host_cores;
        spread_sum *into = contention_shares_cores(&at, &s->tr[i]->run.config) ? &oversub : &idle;
        into->ss += gsl_stats_tss(g, 1, m);
        into->dof += (long)m - 1;
        into->points += (long)m;
    }
    free(group);
    free(lt);
    free(g);
    f->p.run_cv = f->se.run_cv = f->p.run_cv_oversub = f->se.run_cv_oversub = 0;
    if (idle.dof + oversub.dof == 0) {
        f->p.run_cv = FIT_DEFAULT_RUN_CV;
        fit_note(f, "run_cv", "no configuration was run more than once: the run-to-run spread is unknown, taken as %g "
                 "(stated: what repeats spread by on the shared machines measured here); run one configuration "
                 "twice to measure it", FIT_DEFAULT_RUN_CV);
        return 0;
    }
    spread_sum all = { idle.ss + oversub.ss, idle.dof + oversub.dof, idle.points + oversub.points };
    const spread_sum *base = idle.dof > 0 ? &idle : &all;
    f->p.run_cv = spread_of(base, &f->se.run_cv);
    calibration_regression *r = fit_add_reg(f, "run_cv", "pooled log spread of repeats", base->points,
                                            (int)base->dof, 0.0);
    if (r)
        r->rms_s = f->p.run_cv;
    if (oversub.dof == 0) {
        fit_note(f, "run_cv_oversub", "no configuration with more ranks than cores was run more than once: such "
                 "runs are taken to spread as the others do (run_cv)");
        return 0;
    }
    f->p.run_cv_oversub = spread_of(&oversub, &f->se.run_cv_oversub);
    r = fit_add_reg(f, "run_cv_oversub", "pooled log spread of repeats, ranks sharing the cores", oversub.points, (int)oversub.dof, 0.0);
    if (r)
        r->rms_s = f->p.run_cv_oversub;
    return 0;
}
