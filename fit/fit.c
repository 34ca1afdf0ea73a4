/* fit — the whole calibration fit (fit/fit.h); its parts are in fit_*.c (fit_parts.h). */
#include "fit/fit.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include "fit/ernest.h"
#include "fit/fit_parts.h"
#include "fit/memory_fit.h"
#include "model/params.h"
#include "trace/traceinfo.h"
#include "model/uncertainty.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* What a trace is */

bool fit_is_bench(const trace *t) { return strcmp(t->run.net, FIT_COMMBENCH_NET) == 0; }

bool fit_same_config(const job_config *a, const job_config *b) {
    return a->workers == b->workers && a->cores == b->cores && a->sync == b->sync && a->every_n == b->every_n &&
           a->topology == b->topology && a->master == b->master && a->batch_per_worker == b->batch_per_worker &&
           a->examples == b->examples && a->batch == b->batch && a->epochs == b->epochs;
}

/* ---------------------------------------------------------------------------------- */
/* The mechanistic fit on one subset of traces */

void fit_missing(fit_subset *s, const char *fmt, ...) {
    size_t len = strlen(s->missing);
    if (len + 3 >= sizeof s->missing)
        return;
    if (len) {
        strcat(s->missing, "; ");
        len += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->missing + len, sizeof s->missing - len, fmt, ap);
    va_end(ap);
}

bool fit_kept(const fit_subset *s, int i) {
    const trace *t = s->tr[i];
    if (fit_is_bench(t))
        return true;
    if (s->skip && fit_same_config(&t->run.config, s->skip))
        return false;
    return !s->skip_family || !fit_family_has(*s->skip_family, &t->run.config, t->run.host_cores, s->main_batch);
}

bool fit_used(const fit_subset *s, int i, bool training) {
    return fit_kept(s, i) && fit_is_bench(s->tr[i]) != training;
}

bool fit_held(const fit_subset *s, param_id id) {
    return s->opts && (s->opts->without & (UINT64_C(1) << id));
}

calibration_regression *fit_add_reg(fit_core *f, const char *name, const char *method, long points, int dof,
                                    double rss) {
    if (f->n_regs == CALIBRATION_MAX_REGRESSIONS)
        return NULL;
    calibration_regression *r = &f->regs[f->n_regs++];
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", name);
    snprintf(r->method, sizeof r->method, "%s", method);
    r->points = points;
    r->dof = dof;
    r->rms_s = points > 0 ? sqrt(rss / (double)points) : 0.0;
    return r;
}

void fit_add_robust_reg(fit_core *f, const char *name, const robustfit_result *res, bool relative) {
    char method[40];
    snprintf(method, sizeof method, "robust %s%s", res->method, relative ? ", relative noise" : "");
    calibration_regression *r = fit_add_reg(f, name, method, res->n, res->dof, res->rss);
    if (r)
        r->outliers = res->outliers;
}

void fit_note(fit_core *f, const char *param, const char *fmt, ...) {
    if (f->n_notes == CALIBRATION_MAX_NOTES)
        return;
    calibration_note *n = &f->notes[f->n_notes++];
    snprintf(n->param, sizeof n->param, "%s", param);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(n->text, sizeof n->text, fmt, ap);
    va_end(ap);
}

/* alpha, beta of each topology, then the crowded master's wake on the ps link. One that no
 * trace synchronises through and no run uses is left uncalibrated (0, with a note; a
 * prediction for it then needs the link given) when the other could be fitted; when
 * neither could, both say what is missing. */
static int fit_links(fit_subset *s, fit_core *f, char *err, int errlen) {
    int rc[JOB_TOPO_COUNT];
    bool fitted = false;
    for (int topo = 0; topo < JOB_TOPO_COUNT; topo++) {
        if ((rc[topo] = fit_comm(s, f, (job_topology)topo, err, errlen)) < 0)
            return -1;
        fitted |= rc[topo] == 0;
    }
    for (int topo = 0; topo < JOB_TOPO_COUNT; topo++) {
        if (rc[topo] != 2)
            continue;
        if (!fitted) {
            fit_comm_absent(s, (job_topology)topo);
            continue;
        }
        const char *name = job_topology_name((job_topology)topo);
        f->uncalibrated[topo] = true;
        char param[16];
        snprintf(param, sizeof param, "alpha_%s", name);
        fit_note(f, param, "no %s synchronisation and no %s run in the traces: alpha_%s and beta_%s are not "
                 "calibrated (0 here); predicting %s needs --latency and --bandwidth", name, name, name, name, name);
    }
    return rc[JOB_TOPO_PS] == 0 && fit_master_wake(s, f, err, errlen) < 0 ? -1 : 0;
}

/* How the ranks wait (costmodel_params.waits_block), from the headers of the runs that
 * synchronise: block when they all say so; runs that disagree keep the packing (poll),
 * with a note. */
static void fit_waits(const fit_subset *s, fit_core *f) {
    int block = 0, poll = 0;
    for (int i = 0; i < s->n; i++)
        if (fit_used(s, i, true) && costmodel_has_sync(&s->tr[i]->run.config))
            *(s->tr[i]->run.waits_block ? &block : &poll) += 1;
    f->p.waits_block = block > 0 && poll == 0;
    if (block > 0 && poll > 0)
        fit_note(f, "waits_block", "0: %d synchronised run(s) say their ranks block while waiting and %d that they "
                 "poll; taken to poll", block, poll);
}

/* The terms fit_options.without holds out: 0, with no standard error and a note. */
static void hold_terms(const fit_subset *s, fit_core *f) {
    if (!s->opts || !s->opts->without)
        return;
    for (int id = 0; id < PARAM_COUNT; id++)
        if (fit_held(s, (param_id)id)) {
            *param_value(&f->p, (param_id)id) = 0;
            *param_se(&f->se, (param_id)id) = 0;
        }
}

/* Every parameter from the traces of s; -1 with err on failure (what is missing, or why). */
static int fit_all_parts(fit_subset *s, fit_core *f, char *err, int errlen) {
    memset(f, 0, sizeof *f);
    s->missing[0] = '\0';
    const trace *first = NULL;
    for (int i = 0; i < s->n && !first; i++)
        if (fit_used(s, i, true))
            first = s->tr[i];
    if (!first)
        return errmsg_set(err, errlen, "no training runs to fit (only communication benchmarks)");
    f->p.model_bytes = (double)first->run.model_bytes;
    f->p.host_cores = first->run.host_cores;
    if (first->run.model_bytes <= 0)
        fit_missing(s, "model_bytes: the training runs' headers do not give the model's bytes");
    fit_waits(s, f);

    /* The parts in order: κ and τ from whole runs' bodies, which hold the cv's straggler
     * waits; y from the dedicated master's steps, slowed by κ too. A term held out
     * (fit_options.without) is 0 from the part that fits it on, so every later part fits
     * the rest without it. */
    static const struct {
        int (*fit)(fit_subset *, fit_core *, char *, int);
        bool after_compute;       /* needs c0, c1 */
    } parts[] = {
        { fit_sigma, true },   { fit_update, false },     { fit_links, false },        { fit_overlap, false },
        { fit_cv, false },     { fit_rank_cv, true },     { fit_oversub, true },       { fit_master_yield, true },
        { fit_startup, false }, { fit_run_cv, false },
    };
    const int rc = fit_compute(s, f, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 1)
        fit_missing(s, "sigma: needs c0, c1 first");
    hold_terms(s, f);
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        if (parts[k].after_compute && rc != 0)
            continue;
        if (parts[k].fit(s, f, err, errlen) < 0)
            return -1;
        hold_terms(s, f);
    }
    if (s->missing[0])
        return errmsg_set(err, errlen, "under-determined fit: %s", s->missing);
    return 0;
}

int fit_parameters(trace *const *traces, int n, const fit_options *o, costmodel_params *out, char *err, int errlen) {
    fit_subset all = { .tr = traces, .n = n, .opts = o };
    fit_core f;
    if (fit_all_parts(&all, &f, err, errlen))
        return -1;
    for (int i = 0; i < n; i++) /* as fit_all: checked against the first training run */
        if (!fit_is_bench(traces[i])) {
            if (costmodel_check(&f.p, &traces[i]->run.config, err, errlen))
                return -1;
            break;
        }
    *out = f.p;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Ernest-style comparison */

/* Ernest's fit over the training runs not of configuration skip (NULL: all); -1 when too
 * few. */
static int fit_ernest(const fit_result *r, const job_config *skip, ernest_model *m, char *err, int errlen) {
    ernest_point *pts = malloc(sizeof *pts * (size_t)(r->fit.n_runs + 1));
    if (!pts)
        return errmsg_set(err, errlen, "out of memory");
    long n = 0;
    for (int i = 0; i < r->fit.n_runs; i++)
        if (!skip || !fit_same_config(&r->runs[i].config, skip))
            pts[n++] = (ernest_point){ .machines = (double)r->runs[i].config.workers * r->runs[i].config.cores,
                                       .fraction = (double)r->runs[i].config.epochs * r->runs[i].config.examples,
                                       .time_s = r->runs[i].measured_s };
    int rc = ernest_fit(pts, n, m, err, errlen);
    free(pts);
    return rc;
}

static double ernest_of_run(const ernest_model *m, const calibration_run *run) {
    return ernest_predict(m, (double)run->config.workers * run->config.cores,
                          (double)run->config.epochs * run->config.examples);
}

/* ---------------------------------------------------------------------------------- */
/* The whole fit */

static void copy_core(fit_result *out, const fit_core *f) {
    out->cal.params = f->p;
    out->cal.stderr_ = f->se;
    out->cal.cov_c0_c1 = f->cov_c0_c1;
    memcpy(out->fit.regressions, f->regs, sizeof f->regs);
    out->fit.n_regressions = f->n_regs;
    memcpy(out->fit.notes, f->notes, sizeof f->notes);
    out->fit.n_notes = f->n_notes;
    memcpy(out->cal.uncalibrated, f->uncalibrated, sizeof f->uncalibrated);
    out->cal.sigma_unmeasured = f->sigma_unmeasured;
}

static void median_worst(double *e, int n, double *median, double *worst) {
    if (n == 0) {
        *median = *worst = NAN;
        return;
    }
    gsl_sort(e, 1, (size_t)n);
    *median = gsl_stats_median_from_sorted_data(e, 1, (size_t)n);
    *worst = e[n - 1];
}


static int check_inputs(trace *const *tr, const char *const *paths, int n, int *n_train, char *err, int errlen) {
    if (n < 1)
        return errmsg_set(err, errlen, "no traces to fit");
    int train0 = -1;
    *n_train = 0;
    for (int i = 0; i < n; i++) {
        if (strcmp(tr[i]->run.host, tr[0]->run.host) != 0)
            return errmsg_set(err, errlen, "%s: run.host is '%s' but %s: run.host is '%s': traces from different hosts "
                        "cannot be fitted together", paths[i], tr[i]->run.host, paths[0], tr[0]->run.host);
        if (fit_is_bench(tr[i]))
            continue;
        (*n_train)++;
        if (train0 < 0)
            train0 = i;
        else if (strcmp(tr[i]->run.net, tr[train0]->run.net) != 0)
            return errmsg_set(err, errlen, "%s: run.net is '%s' but %s: run.net is '%s': traces of different networks "
                        "cannot be fitted together", paths[i], tr[i]->run.net, paths[train0], tr[train0]->run.net);
        else if (tr[i]->run.model_bytes != tr[train0]->run.model_bytes)
            return errmsg_set(err, errlen, "%s: run.model_bytes is %ld but %s: run.model_bytes is %ld", paths[i],
                        tr[i]->run.model_bytes, paths[train0], tr[train0]->run.model_bytes);
    }
    if (*n_train == 0)
        return errmsg_set(err, errlen, "no training runs: only communication benchmarks (run.net \"%s\"); c0, c1, "
                    "sigma, w0, w1 and cv need traces of `speedup train`", FIT_COMMBENCH_NET);
    return 0;
}

void fit_result_release(fit_result *r) {
    if (!r)
        return;
    free(r->runs);
    r->runs = NULL;
    r->fit.runs = NULL;
    r->fit.n_runs = 0;
}

/* The fit on every trace, into out's parameters; -1 with what is missing in err. */
static int fit_all(trace *const *traces, int n, int n_train, const fit_options *o, fit_result *out, char *err,
                   int errlen) {
    /* One configuration for every run: say so before the details of what is missing. */
    const trace *first = NULL;
    bool single = true;
    for (int i = 0; i < n; i++) {
        if (fit_is_bench(traces[i]))
            continue;
        if (!first)
            first = traces[i];
        else if (!fit_same_config(&first->run.config, &traces[i]->run.config))
            single = false;
    }
    if (!first)
        return errmsg_set(err, errlen, "no training runs to fit");
    fit_subset all = { .tr = traces, .n = n, .opts = o };
    fit_core f;
    char why[1200];
    if (fit_all_parts(&all, &f, why, sizeof why)) {
        if (single) {
            char sync[24];
            const job_config *c = &first->run.config;
            job_sync_format(c->sync, c->every_n, sync, sizeof sync);
            return errmsg_set(err, errlen, "a single configuration (K=%d, T=%d, %s sync, %s, %d run%s): %s", c->workers,
                        c->cores, sync, job_topology_name(c->topology), n_train, n_train == 1 ? "" : "s", why);
        }
        return errmsg_set(err, errlen, "%s", why);
    }
    job_config any = first->run.config;
    char why_bad[160];
    if (costmodel_check(&f.p, &any, why_bad, sizeof why_bad))
        return errmsg_set(err, errlen, "the fit gave an unusable parameter: %s", why_bad);
    /* The per-rank memory, where the traces measured it: its trouble is a note, never
     * the calibration's failure (fit/memory_fit.h). */
    char why_memory[240];
    if (memory_fit(traces, n, &out->cal.memory, why_memory, sizeof why_memory) <= 0 && why_memory[0])
        fit_note(&f, "memory", "%s", why_memory);
    copy_core(out, &f);
    snprintf(out->cal.host, sizeof out->cal.host, "%s", first->run.host);
    out->cal.has_workload = true;
    out->cal.examples = first->run.config.examples;
    out->cal.batch = first->run.config.batch;
    out->cal.epochs = first->run.config.epochs;
    return 0;
}

/* out->runs: one entry per training trace with its measured time. -1 out of memory. */
static int list_runs(trace *const *traces, const char *const *paths, int n, int n_train, fit_result *out) {
    out->runs = calloc((size_t)n_train, sizeof *out->runs);
    if (!out->runs)
        return -1;
    out->fit.runs = out->runs;
    for (int i = 0, r = 0; i < n; i++) {
        if (fit_is_bench(traces[i]))
            continue;
        calibration_run *run = &out->runs[r++];
        snprintf(run->trace, sizeof run->trace, "%s", paths[i]);
        run->config = traces[i]->run.config;
        run->measured_s = traceinfo_training_time(traces[i]);
        run->loo_model_s = run->loo_ernest_s = NAN;
        const job_config *c = &run->config;
        /* The workload is the calibration's only when every run shares it. */
        if (c->examples != out->cal.examples || c->batch != out->cal.batch || c->epochs != out->cal.epochs)
            out->cal.has_workload = false;
    }
    out->fit.n_runs = n_train;
    return 0;
}

static void ernest_on_all(fit_result *out) {
    ernest_model em;
    char eerr[256];
    if (fit_ernest(out, NULL, &em, eerr, sizeof eerr))
        return;
    /* Ernest's [1, work/(KT), KT, ln KT] → DESIGN.md's [1, work/K, log2 K, K]. */
    const int to[ERNEST_N_THETA] = { 0, 1, 3, 2 };
    const double scale[ERNEST_N_THETA] = { 1, 1, 1, 0.69314718055994530942 /* ln 2 */ };
    for (int j = 0; j < ERNEST_N_THETA; j++) {
        out->fit.ernest_theta[to[j]] = em.theta[j] * scale[j];
        out->fit.ernest_stderr[to[j]] = em.se[j] * scale[j];
    }
    out->fit.has_ernest = true;
}

/* Relative errors of the validated runs, per predictor; Σ ln(predicted/measured)² of the
 * model's. */
typedef struct {
    double *model, *ernest;       /* (n_runs) */
    int n_model, n_ernest;
    /* Of the model's log errors, by whether the left-out run's ranks outnumber the cores
     * ([1]) or each have one ([0]): */
    double log_sq[2];             /* Σ ln(predicted/measured)² */
    double explained_sq[2];       /* Σ of what a prediction interval already holds of them */
    int n_log[2];
} loo_errors;

static bool core_has_note(const fit_core *g, const char *param) {
    for (int i = 0; i < g->n_notes; i++)
        if (strcmp(g->notes[i].param, param) == 0)
            return true;
    return false;
}

/* One left-out run's predictions from the fits without its configuration: g (NULL: the
 * model could not be refitted, why says why), em (NULL: Ernest could not, ewhy). */
static void predict_left_out(calibration_run *run, const fit_core *g, const char *why, const ernest_model *em,
                             const char *ewhy, loo_errors *e) {
    char bad[160] = "";
    /* Without the configuration the only oversubscribed one (or the only dedicated master
     * beside workers that fill the cores), the fit knows nothing of what it needs: no
     * prediction, rather than one that misses by construction. */
    const job_config *c = &run->config;
    const bool crowded = g && contention_master_crowded(&g->p, c);
    const bool long_rounds = g && !job_sync_is_async(c->sync) && contention_packing_weight(&g->p, c) < 0.5;
    /* The first of what a crowded master needs that the fit could not give. */
    const char *unfit = !crowded ? NULL : core_has_note(g, "master_yield") ? "master_yield"
                      : long_rounds && core_has_note(g, "master_yield_loss") ? "master_yield_loss"
                      : core_has_note(g, "master_wake") ? "master_wake" : NULL;
    bool one_step = job_schedule_of(c).steps_per_round == 1;
    bool oversub = g && c->master == JOB_MASTER_WORKER && contention_shares_cores(&g->p, c) &&
                   core_has_note(g, one_step ? "oversub_compute" : "balance");
    if (unfit) {
        snprintf(run->loo_note, sizeof run->loo_note,
                 "model: no other run with a dedicated master on a full host to fit %s from", unfit);
        g = NULL;
    } else if (oversub) {
        snprintf(run->loo_note, sizeof run->loo_note, "model: no other run %s", one_step ?
                 "of one-step rounds with more ranks than cores to fit oversub_compute from" :
                 "of longer rounds with more ranks than cores to fit balance from");
        g = NULL;
    }
    if (g && costmodel_check(&g->p, &run->config, bad, sizeof bad) == 0) {
        run->loo_model_s = costmodel_total_time(&g->p, &run->config);
        if (run->measured_s > 0) {
            e->model[e->n_model++] = fabs(run->loo_model_s - run->measured_s) / run->measured_s;
            const int shared = contention_shares_cores(&g->p, &run->config);
            e->log_sq[shared] += pow(log(run->loo_model_s / run->measured_s), 2);
            e->n_log[shared]++;
        }
    } else if (!run->loo_note[0]) {
        snprintf(run->loo_note, sizeof run->loo_note, "model: %.180s", g ? bad : why);
    }
    if (em) {
        run->loo_ernest_s = ernest_of_run(em, run);
        if (run->measured_s > 0)
            e->ernest[e->n_ernest++] = fabs(run->loo_ernest_s - run->measured_s) / run->measured_s;
    } else if (!run->loo_note[0]) {
        snprintf(run->loo_note, sizeof run->loo_note, "ernest: %.180s", ewhy);
    }
}

/* What a left-out run's log error holds besides the model's own error: its configuration's
 * run-to-run spread (the full fit's), the steps' spread within the run and the left-out
 * fit's parameter error — all of which a prediction interval carries already
 * (uncertainty_closed_form with model_cv = 0). Its variance on the log scale. */
static double explained_var(const fit_core *g, const costmodel_params *full, const job_config *c) {
    costmodel_params q = g->p;
    q.run_cv = full->run_cv;
    q.run_cv_oversub = full->run_cv_oversub;
    q.model_cv = 0;
    const uncertainty u = { .se = g->se, .cov_c0_c1 = g->cov_c0_c1 };
    const double sd = uncertainty_closed_form(&q, c, &u).sd_ln_time;
    return sd * sd;
}

/* The model's own error on unseen configurations: the validation's mean squared log error
 * less what each error holds that an interval carries apart (explained_var: the run's noise
 * and the left-out fit's parameter error, which counted again as the model's would widen
 * every interval twice for it). With two or more left-out runs each of ranks that share
 * cores and of ranks that do not, each kind has its own (model_cv_oversub, model_cv): a
 * miss where ranks share cores says nothing of a cluster where none does. */
static void model_errors(const loo_errors *e, fit_result *out) {
    costmodel_params *p = &out->cal.params;
    calibration_stderr *se = &out->cal.stderr_;
    double *cv[2] = { &p->model_cv, &p->model_cv_oversub }, *cv_se[2] = { &se->model_cv, &se->model_cv_oversub };
    const bool split = e->n_log[0] >= 2 && e->n_log[1] >= 2;
    for (int k = 0; k < (split ? 2 : 1); k++) {
        const double sq = split ? e->log_sq[k] - e->explained_sq[k]
                                : e->log_sq[0] + e->log_sq[1] - e->explained_sq[0] - e->explained_sq[1];
        const int n = split ? e->n_log[k] : e->n_log[0] + e->n_log[1];
        if (n < 2)
            continue;
        *cv[k] = sq > 0 ? sqrt(sq / n) : 0.0;
        *cv_se[k] = *cv[k] / sqrt(2.0 * n);
    }
}

/* Leave-one-configuration-out: every configuration's runs (all its repeats: leaving one of
 * two identical runs out would test nothing) left out together, both fits redone without
 * them, each of its runs predicted. -1 out of memory. */
static int validate(trace *const *traces, int n, const fit_options *o, fit_result *out) {
    int n_runs = out->fit.n_runs;
    loo_errors e = { .model = calloc((size_t)n_runs, sizeof *e.model), .ernest = calloc((size_t)n_runs, sizeof *e.ernest) };
    bool *done = calloc((size_t)n_runs, sizeof *done);
    int rc = e.model && e.ernest && done ? 0 : -1;
    for (int r = 0; rc == 0 && r < n_runs; r++) {
        if (done[r])
            continue;
        const job_config *c = &out->runs[r].config;
        fit_subset loo = { .tr = traces, .n = n, .skip = c, .opts = o };
        fit_core g;
        ernest_model em;
        char why[1200], ewhy[256];
        bool model_ok = fit_all_parts(&loo, &g, why, sizeof why) == 0;
        if (model_ok && g.sigma_unmeasured && c->cores > 1) { /* as a prediction would be refused */
            model_ok = false;
            snprintf(why, sizeof why, "sigma is not measured without it (no other run at T>1)");
        }
        bool ernest_ok = fit_ernest(out, c, &em, ewhy, sizeof ewhy) == 0;
        out->fit.loo_configs++;
        for (int q = r; q < n_runs; q++)
            if (!done[q] && fit_same_config(&out->runs[q].config, c)) {
                done[q] = true;
                int before = e.n_model;
                predict_left_out(&out->runs[q], model_ok ? &g : NULL, why, ernest_ok ? &em : NULL, ewhy, &e);
                if (e.n_model > before) /* run_cv is fitted by now; the runs are of its host */
                    e.explained_sq[contention_shares_cores(&g.p, &out->runs[q].config)] +=
                        explained_var(&g, &out->cal.params, &out->runs[q].config);
            }
    }
    out->fit.loo_model_n = e.n_model;
    out->fit.loo_ernest_n = e.n_ernest;
    model_errors(&e, out);
    median_worst(e.model, e.n_model, &out->fit.loo_model_median, &out->fit.loo_model_worst);
    median_worst(e.ernest, e.n_ernest, &out->fit.loo_ernest_median, &out->fit.loo_ernest_worst);
    free(e.model);
    free(e.ernest);
    free(done);
    return rc;
}

/* The plan's own global batch: the most common one among the training runs (the first
 * such on a tie), 0 with none. */
static long main_batch(const fit_result *out) {
    long best = 0;
    int best_n = 0;
    for (int r = 0; r < out->fit.n_runs; r++) {
        int n = 0;
        for (int q = 0; q < out->fit.n_runs; q++)
            n += out->fit.runs[q].config.batch == out->fit.runs[r].config.batch;
        if (n > best_n)
            best = out->fit.runs[r].config.batch, best_n = n;
    }
    return best;
}

/* Family f held out: its runs predicted by g, the fit without them (NULL: none could be
 * made, why says why). Unlike leave-one-configuration-out, a run is predicted even where
 * the family was the only source of a term: that miss is what this validation measures. */
static void predict_family(const fit_result *out, const bool *in, const fit_core *g, const char *why,
                           calibration_family *fm, double *abs_err, double *signed_err) {
    for (int r = 0; r < out->fit.n_runs; r++) {
        if (!in[r])
            continue;
        const calibration_run *run = &out->fit.runs[r];
        char bad[160] = "";
        if (!g) {
            snprintf(fm->note, sizeof fm->note, "not refitted without it: %.170s", why);
        } else if (g->sigma_unmeasured && run->config.cores > 1) {
            snprintf(fm->note, sizeof fm->note, "sigma is not measured without it: T > 1 not predicted");
        } else if (costmodel_check(&g->p, &run->config, bad, sizeof bad)) {
            snprintf(fm->note, sizeof fm->note, "not predicted: %.170s", bad);
        } else if (run->measured_s > 0) {
            const double e = costmodel_total_time(&g->p, &run->config) / run->measured_s - 1.0;
            signed_err[fm->predicted] = e;
            abs_err[fm->predicted++] = fabs(e);
        }
    }
}

/* Leave-one-family-out (fit/families.h): for every family with training runs, all of
 * them left out together, the rest refitted (with the same options) and each of them
 * predicted. -1 out of memory. */
static int validate_families(trace *const *traces, int n, const fit_options *o, fit_result *out) {
    const int n_runs = out->fit.n_runs;
    bool *in = calloc((size_t)n_runs, sizeof *in);
    double *abs_err = calloc((size_t)n_runs + 1, sizeof *abs_err), *signed_err = calloc((size_t)n_runs + 1, sizeof *signed_err);
    int rc = in && abs_err && signed_err ? 0 : -1;
    const long batch = main_batch(out);
    const double host_cores = out->cal.params.host_cores;
    for (int f = 0; rc == 0 && f < FIT_FAMILY_COUNT && out->fit.n_families < CALIBRATION_MAX_FAMILIES; f++) {
        calibration_family *fm = &out->fit.families[out->fit.n_families];
        memset(fm, 0, sizeof *fm);
        for (int r = 0; r < n_runs; r++) {
            in[r] = fit_family_has((fit_family)f, &out->fit.runs[r].config, host_cores, batch);
            fm->runs += in[r];
            bool first = in[r];
            for (int q = 0; q < r && first; q++)
                first = !(in[q] && fit_same_config(&out->fit.runs[q].config, &out->fit.runs[r].config));
            fm->configs += first;
        }
        if (fm->runs == 0)
            continue;
        snprintf(fm->name, sizeof fm->name, "%s", fit_family_name((fit_family)f));
        const fit_family family = (fit_family)f;
        fit_subset lofo = { .tr = traces, .n = n, .skip_family = &family, .main_batch = batch, .opts = o };
        fit_core g;
        char why[1200];
        const bool ok = fm->runs < n_runs && fit_all_parts(&lofo, &g, why, sizeof why) == 0;
        if (fm->runs == n_runs)
            snprintf(why, sizeof why, "every training run is of it");
        predict_family(out, in, ok ? &g : NULL, why, fm, abs_err, signed_err);
        if (fm->predicted > 0) {
            median_worst(abs_err, fm->predicted, &fm->median, &fm->worst);
            gsl_sort(signed_err, 1, (size_t)fm->predicted);
            fm->bias = gsl_stats_median_from_sorted_data(signed_err, 1, (size_t)fm->predicted);
        }
        out->fit.n_families++;
    }
    free(in);
    free(abs_err);
    free(signed_err);
    return rc;
}

fit_options fit_options_default(void) { return (fit_options){ .latency_s = NAN, .bandwidth_bytes_per_s = NAN }; }

int fit_traces(trace *const *traces, const char *const *paths, int n, fit_result *out, char *err, int errlen) {
    const fit_options o = fit_options_default();
    return fit_traces_with(traces, paths, n, &o, out, err, errlen);
}

int fit_traces_with(trace *const *traces, const char *const *paths, int n, const fit_options *o, fit_result *out,
                    char *err, int errlen) {
    memset(out, 0, sizeof *out);
    int n_train = 0;
    if (check_inputs(traces, paths, n, &n_train, err, errlen) || fit_all(traces, n, n_train, o, out, err, errlen))
        return -1;
    if (list_runs(traces, paths, n, n_train, out) == 0) {
        ernest_on_all(out);
        if (validate(traces, n, o, out) == 0 && validate_families(traces, n, o, out) == 0)
            return 0;
    }
    fit_result_release(out);
    return errmsg_set(err, errlen, "out of memory");
}

bool fit_without_allowed(int id) {
    if (id < 0 || id >= PARAM_COUNT || id == PARAM_C1)
        return false;
    const param_row *r = param_info((param_id)id);
    /* a term of the model fitted from a host's runs: not one of the interval, nor of the
     * links across machines, which only a cluster's table gives (cli/calib_table.c) */
    const bool across_machines = id == PARAM_NET_ALPHA || id == PARAM_NET_BETA || id == PARAM_NET_LINE_BETA;
    /* β_hot is not drawn (a median of the commbench's calls, and 0 where the term is off,
     * which no draw should switch on) but is a term all the same */
    return (r->drawn || id == PARAM_BETA_HOT_ALLREDUCE) && !across_machines;
}
