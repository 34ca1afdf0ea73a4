/* fit_comm — the synchronisation-level part of the fit: alpha, beta per topology (see
 * fit_parts.h). */
#include "fit/fit_parts.h"

#include "util/errmsg.h"

#include "fit/robustfit.h"
#include "trace/traceinfo.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef enum { PATTERN_RUN, PATTERN_PS, PATTERN_ALLREDUCE, PATTERN_PINGPONG, PATTERN_OTHER } comm_pattern;

/* A nameless synchronisation is the run's own exchange; one named otherwise than the three
 * the model prices (an imported "broadcast": DDP's one-off bucket order) is none of S(K). */
static comm_pattern pattern_of(const char *name) {
    if (strcmp(name, "allreduce") == 0)
        return PATTERN_ALLREDUCE;
    if (strcmp(name, "ps") == 0)
        return PATTERN_PS;
    if (strcmp(name, "pingpong") == 0)
        return PATTERN_PINGPONG;
    return name[0] ? PATTERN_OTHER : PATTERN_RUN;
}

/* The features (α, β coefficients) of one synchronisation of run t for topology topo; 0
 * when it does not belong to topo or exchanges nothing (K = 1). */
static int comm_features(const trace *t, const traceinfo_sync *sy, job_topology topo, double x[2]) {
    comm_pattern pat = pattern_of(sy->name);
    if (pat == PATTERN_OTHER)
        return 0;
    if (pat == PATTERN_RUN)
        pat = t->run.config.topology == JOB_TOPO_ALLREDUCE ? PATTERN_ALLREDUCE : PATTERN_PS;
    double k = t->run.config.workers;
    double bytes = sy->bytes > 0 ? (double)sy->bytes : (double)t->run.model_bytes;
    if (topo == JOB_TOPO_ALLREDUCE) {
        if (pat != PATTERN_ALLREDUCE || k < 2)
            return 0;
        x[0] = 2 * (k - 1);
        x[1] = 2 * (k - 1) / k * bytes;
        return 1;
    }
    if (pat == PATTERN_PINGPONG) {
        x[0] = 2;
        x[1] = 2 * bytes;
        return 1;
    }
    if (pat != PATTERN_PS)
        return 0;
    double remote = t->run.config.master == JOB_MASTER_DEDICATED ? k : k - 1;
    if (remote < 1)
        return 0;
    x[0] = 2 * remote;
    x[1] = 2 * remote * bytes;
    return 1;
}

/* Pushes one row per synchronisation of t in topo, its span as trace/traceinfo.h defines
 * it (the largest rank part, other ranks' updates inside it left out). */
static int push_sync_spans(const trace *t, job_topology topo, fit_rows *r) {
    traceinfo_sync *sy;
    long n = traceinfo_syncs(t, &sy);
    int rc = n < 0 ? -1 : 0;
    for (long i = 0; i < n && rc == 0; i++) {
        double x[2];
        if (comm_features(t, &sy[i], topo, x))
            rc = fit_rows_push(r, x, sy[i].span_s);
    }
    free(sy);
    return rc;
}

void fit_comm_absent(fit_subset *s, job_topology topo) {
    const char *name = job_topology_name(topo);
    fit_missing(s, "alpha_%s, beta_%s: no %s synchronisations with K>=2 in any trace: add a trace of "
                "`mpirun -np 2 speedup commbench --trace FILE`", name, name, name);
}

/* Fewer than 3 (workers, bytes) shapes: α stated (the option, else FIT_DEFAULT_LATENCY_S;
 * its standard error its own size), β from the spans by least squares through α's part
 * (or stated too), each with a note. 0. */
static int fit_comm_stated(fit_subset *s, fit_core *f, job_topology topo, const fit_rows *r) {
    const char *name = job_topology_name(topo);
    const fit_options *o = s->opts;
    const bool alpha_given = o && isfinite(o->latency_s), beta_given = o && isfinite(o->bandwidth_bytes_per_s);
    const double alpha = alpha_given ? o->latency_s : FIT_DEFAULT_LATENCY_S;
    double beta = beta_given ? 1.0 / o->bandwidth_bytes_per_s : 0, se_beta = 0;
    if (!beta_given) {
        double sxy = 0, sxx = 0;
        for (long i = 0; i < r->n; i++) {
            const double x = r->x[i * 2 + 1], y = r->y[i] - alpha * r->x[i * 2];
            sxy += x * y;
            sxx += x * x;
        }
        beta = sxx > 0 ? fmax(0.0, sxy / sxx) : 0.0;
        double rss = 0;
        for (long i = 0; i < r->n; i++) {
            const double e = r->y[i] - alpha * r->x[i * 2] - beta * r->x[i * 2 + 1];
            rss += e * e;
        }
        se_beta = r->n > 1 && sxx > 0 ? sqrt(rss / (double)(r->n - 1) / sxx) : beta;
    }
    f->p.link[topo] = (costmodel_link){ alpha, beta };
    *param_se(&f->se, topo == JOB_TOPO_PS ? PARAM_ALPHA_PS : PARAM_ALPHA_ALLREDUCE) = alpha;
    *param_se(&f->se, topo == JOB_TOPO_PS ? PARAM_BETA_PS : PARAM_BETA_ALLREDUCE) = se_beta;
    char what[64];
    snprintf(what, sizeof what, "alpha_%s", name);
    fit_note(f, what, "stated (%g us%s), not fitted: the %s exchanges come in fewer than 3 (workers, bytes) "
             "shapes; its standard error is its own size (a commbench trace would fit it)", alpha * 1e6,
             alpha_given ? ", --latency" : ", the stated default", name);
    snprintf(what, sizeof what, "beta_%s", name);
    if (beta_given)
        fit_note(f, what, "stated, not fitted (--bandwidth %g bytes/s)", o->bandwidth_bytes_per_s);
    else
        fit_note(f, what, "fitted from %ld %s synchronisations with alpha stated: it carries whatever alpha misses",
                 r->n, name);
    return 0;
}

/* What a step of run t moves on a rank (costmodel_allreduce_beta): from its header's
 * layers; 0 where it has none (an imported trace, a benchmark). *per_example and
 * *per_step: the network's two terms. */
static double traffic_of(const trace *t, double *per_example, double *per_step) {
    *per_example = *per_step = 0;
    const trace_layers *l = &t->run.layers;
    if (!l->has)
        return 0;
    for (int i = 0; i < l->cost.n; i++) {
        *per_example += l->cost.layer[i].bytes;
        *per_step += l->cost.layer[i].step_bytes;
    }
    return *per_example * job_schedule_of(&t->run.config).local_batch + *per_step;
}

/* The bytes of all-reduce row k (comm_features: x0 = 2(K − 1), x1 = x0·bytes/K). */
static double allreduce_row_bytes(const fit_rows *r, long k) {
    const double x0 = r->x[k * 2], x1 = r->x[k * 2 + 1];
    return x1 / x0 * (x0 / 2 + 1);
}

/* The all-reduce's price by what its step moved (costmodel_allreduce_beta). β_hot: the
 * commbench's price per byte at the size nearest the model's (its calls back to back,
 * after steps that moved nothing), the median over its calls of (span − α·x0)/x1 with the
 * fit's α; M_ref: the median over the training runs' all-reduces that beta_allreduce was
 * fitted on of what their step moved; and the network's traffic. Every term 0 (one price)
 * where the traces cannot give one: no commbench, no layers in the training runs'
 * headers, networks that differ, or β_hot not below β by two standard errors (a commbench
 * caught in a slow phase of the host), with a note. 0, or -1 with err. */
static int fit_allreduce_traffic(fit_subset *s, fit_core *f, char *err, int errlen) {
    costmodel_params *p = &f->p;
    p->beta_hot_allreduce_s_per_byte = p->traffic_ref_bytes = p->traffic_bytes_per_example = 0;
    p->traffic_bytes_per_step = 0;
    if (fit_held(s, PARAM_BETA_HOT_ALLREDUCE))
        return 0;
    fit_rows hot = { .cols = 2 }, moved = { .cols = 2 };
    double ex = -1, st = -1;
    bool same_net = true;
    int rc = 0;
    for (int i = 0; rc == 0 && i < s->n; i++) {
        const trace *t = s->tr[i];
        if (fit_used(s, i, false) && fit_is_bench(t)) {
            rc = push_sync_spans(t, JOB_TOPO_ALLREDUCE, &hot);
            continue;
        }
        if (!fit_kept(s, i) || fit_is_bench(t) || traceinfo_shares_cores(&t->run) || t->run.config.workers < 2 ||
            t->run.config.topology != JOB_TOPO_ALLREDUCE)
            continue;
        double e, q;
        const double m = traffic_of(t, &e, &q);
        same_net &= m > 0 && (ex < 0 || (e == ex && q == st));
        ex = e, st = q;
        const long before = moved.n;
        rc = push_sync_spans(t, JOB_TOPO_ALLREDUCE, &moved);
        for (long k = before; rc == 0 && k < moved.n; k++)
            moved.y[k] = m; /* one row an exchange: the step before it moved m */
    }
    if (rc) {
        fit_rows_free(&hot);
        fit_rows_free(&moved);
        return errmsg_set(err, errlen, "out of memory");
    }
    /* The commbench's size nearest the model's bytes, and its calls' price there. */
    const double alpha = p->link[JOB_TOPO_ALLREDUCE].alpha_s, beta = p->link[JOB_TOPO_ALLREDUCE].beta_s_per_byte;
    double near = -1;
    for (long k = 0; k < hot.n; k++) {
        const double bytes = allreduce_row_bytes(&hot, k);
        if (near < 0 || fabs(log(bytes / p->model_bytes)) < fabs(log(near / p->model_bytes)))
            near = bytes;
    }
    long n_hot = 0;
    for (long k = 0; k < hot.n; k++) {
        if (allreduce_row_bytes(&hot, k) == near)
            hot.y[n_hot++] = (hot.y[k] - alpha * hot.x[k * 2]) / hot.x[k * 2 + 1];
    }
    if (n_hot > 0 && moved.n > 0 && same_net && p->model_bytes > 0) {
        double price, se, ref, ref_se;
        fit_median_se(hot.y, n_hot, &price, &se);
        fit_median_se(moved.y, moved.n, &ref, &ref_se);
        const double margin = 2 * sqrt(se * se + f->se.beta_allreduce * f->se.beta_allreduce);
        if (price > 0 && price + margin < beta) {
            p->beta_hot_allreduce_s_per_byte = price;
            f->se.beta_hot_allreduce = se;
            p->traffic_ref_bytes = ref;
            p->traffic_bytes_per_example = ex;
            p->traffic_bytes_per_step = st;
            fit_note(f, "beta_hot_allreduce", "the commbench's %ld all-reduces of %.0f bytes back to back; after a "
                     "step that moved M bytes a rank, beta_hot + (beta - beta_hot) min(1, M/traffic_ref) a byte "
                     "(traffic_ref: the median over %ld training all-reduces)", n_hot, near, moved.n);
        } else {
            fit_note(f, "beta_hot_allreduce", "not used: the commbench's all-reduce of %.0f bytes costs %.3g s/byte, "
                     "not below the training runs' %.3g by two standard errors: one price whatever the step moved "
                     "(a commbench in a slow phase of the host?)", near, price, beta);
        }
    }
    fit_rows_free(&hot);
    fit_rows_free(&moved);
    return 0;
}

int fit_comm(fit_subset *s, fit_core *f, job_topology topo, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        /* Oversubscribed runs' synchronisations wait for ranks the scheduler has parked. */
        if (fit_kept(s, i) && !traceinfo_shares_cores(&s->tr[i]->run) && push_sync_spans(s->tr[i], topo, &r)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        bool asked = false;
        for (int i = 0; i < s->n; i++) /* a run of it that synchronises (K = 1 does not) */
            asked |= fit_used(s, i, true) && s->tr[i]->run.config.topology == topo &&
                     costmodel_has_sync(&s->tr[i]->run.config);
        if (asked)
            fit_comm_absent(s, topo);
        else
            rc = 2;
        goto done;
    }
    /* Two groups would fit any line; a third checks the form. */
    long groups = fit_rows_groups(&r);
    if (groups < 0) {
        rc = errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    if (groups < 3 || fit_rows_rank(&r) < 2) {
        rc = fit_comm_stated(s, f, topo, &r);
        goto done;
    }
    robustfit_result res;
    if (fit_rows_robust(&r, true, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    f->p.link[topo].alpha_s = res.c[0];
    f->p.link[topo].beta_s_per_byte = res.c[1];
    double *sa = topo == JOB_TOPO_PS ? &f->se.alpha_ps : &f->se.alpha_allreduce;
    double *sb = topo == JOB_TOPO_PS ? &f->se.beta_ps : &f->se.beta_allreduce;
    *sa = res.se[0];
    *sb = res.se[1];
    fit_add_robust_reg(f, topo == JOB_TOPO_PS ? "comm_ps" : "comm_allreduce", &res, true);
    rc = topo == JOB_TOPO_ALLREDUCE ? fit_allreduce_traffic(s, f, err, errlen) : 0;
done:
    fit_rows_free(&r);
    return rc;
}


/* The overlapped steps of the runs with K ≥ 2 and ρ = 1 (traceinfo_overlaps), each
 * with its run's config: *out malloc'd; the count, or -1 out of memory. */
typedef struct {
    traceinfo_overlap o;
    const job_config *config;
    int run;                         /* the trace's index: a run's steps are contiguous */
} overlapped_step;

static long overlapped_steps(fit_subset *s, overlapped_step **out) {
    long n = 0;
    *out = NULL;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || traceinfo_shares_cores(&t->run) || t->run.config.workers < 2)
            continue;
        traceinfo_overlap *o;
        long m = traceinfo_overlaps(t, &o);
        overlapped_step *grown = m > 0 ? realloc(*out, sizeof **out * (size_t)(n + m)) : *out;
        if (m < 0 || (m > 0 && !grown)) {
            free(o);
            free(*out);
            *out = NULL;
            return -1;
        }
        *out = grown;
        for (long k = 0; k < m; k++)
            (*out)[n++] = (overlapped_step){ .o = o[k], .config = &t->run.config, .run = i };
        free(o);
    }
    return n;
}

/* The mean of v[0..n) and its standard error sd/√n (0 for one value). */
static void mean_se(const double *v, long n, double *mean, double *se) {
    *mean = gsl_stats_mean(v, 1, (size_t)n);
    *se = n > 1 ? gsl_stats_sd_m(v, 1, (size_t)n, *mean) / sqrt((double)n) : 0;
}

/* χ: how much longer a step is with its exchange beside it than c0, c1 and σ say of it
 * alone — Σ min(step, 3·alone) / Σ alone − 1, the level matched to the mean step as c0
 * and c1 are (fit_compute). Its standard error: that of the mean of the step ratios, or,
 * when larger, of the mean over the runs of each run's own χ — the runs' speed factors
 * (run_cv) are in it, since the overlapped steps and c0, c1 come from different runs
 * (calibrations of one job disagree by far more than their steps' standard errors:
 * docs/calibration.md). Held at 0 when c0 and c1 could only be fitted on these steps. ratio,
 * per_run: n scratch values each. */
static void fit_overlap_slowdown(fit_core *f, const overlapped_step *v, long n, double *ratio, double *per_run) {
    enum { PREEMPTED = 3 };
    if (f->compute_with_overlapped || !(f->p.c1_s > 0)) {
        fit_note(f, "overlap_slowdown", "0: c0 and c1 could only be fitted on the overlapped steps themselves");
        return;
    }
    double measured = 0, alone_sum = 0, run_measured = 0, run_alone = 0;
    long runs = 0;
    for (long i = 0; i < n; i++) {
        const job_config *c = v[i].config;
        double alone = f->p.c0_s + f->p.c1_s * costmodel_amdahl(&f->p, c->cores) * (double)v[i].o.examples;
        double step = fmin(v[i].o.step_s, PREEMPTED * alone);
        measured += step;
        alone_sum += alone;
        run_measured += step;
        run_alone += alone;
        ratio[i] = v[i].o.step_s / alone;
        if (i + 1 == n || v[i + 1].run != v[i].run) {
            per_run[runs++] = run_measured / run_alone;
            run_measured = run_alone = 0;
        }
    }
    double mean, se_runs = 0;
    mean_se(ratio, n, &mean, &f->se.overlap_slowdown);
    if (runs >= 2)
        mean_se(per_run, runs, &mean, &se_runs);
    f->se.overlap_slowdown = fmax(f->se.overlap_slowdown, se_runs);
    f->p.overlap_slowdown = fmax(0.0, measured / alone_sum - 1.0);
    fit_add_reg(f, "overlap_slowdown", "mean ratio", n, (int)n - 1, 0.0);
    if (measured < alone_sum)
        fit_note(f, "overlap_slowdown", "held at 0: steps beside their all-reduce were %.1f%% faster than alone",
                 100 * (1 - measured / alone_sum));
}

/* ε: the mean over the overlapped steps of the rank's exposed part over S(K) of its run's
 * config at the fitted link, each at most 1: what was left to wait for after the step,
 * however long the window. */
static void fit_overlap_exposed(fit_core *f, const overlapped_step *v, long n, double *ratio) {
    long m = 0;
    for (long i = 0; i < n; i++) {
        double sync = costmodel_sync_time(&f->p, v[i].config);
        if (sync > 0)
            ratio[m++] = fmin(1.0, v[i].o.exposed_s / sync);
    }
    if (m == 0)
        return;
    mean_se(ratio, m, &f->p.overlap_exposed, &f->se.overlap_exposed);
    fit_add_reg(f, "overlap_exposed", "mean", m, (int)m - 1, 0.0);
}

/* φ, the overlap: the median over the steps of the runs with K ≥ 2 and ρ = 1 of the share
 * of the step during which its own synchronisation already ran beside it (traceinfo_overlaps:
 * background comm, e.g. DDP's bucketed all-reduce on gloo's threads); standard error
 * √(π/2)·sd/√n. Then what the overlap costs the step and what it leaves exposed. Traces without
 * background comm (the C trainer communicates after it computes) give φ = χ = ε = 0 with a
 * note. */
int fit_overlap(fit_subset *s, fit_core *f, char *err, int errlen) {
    overlapped_step *v;
    long n = overlapped_steps(s, &v);
    double *share = n > 0 ? malloc(sizeof *share * (size_t)(2 * n)) : NULL; /* and per-run scratch */
    if (n < 0 || (n > 0 && !share)) {
        free(v);
        return errmsg_set(err, errlen, "out of memory");
    }
    f->p.overlap = f->se.overlap = 0;
    f->p.overlap_slowdown = f->se.overlap_slowdown = 0;
    f->p.overlap_exposed = f->se.overlap_exposed = 0;
    if (n == 0) {
        fit_note(f, "overlap", "no communication ran beside compute in the traces (it follows the step, as in "
                 "`speedup train`): 0, compute then communicate");
        return 0;
    }
    for (long i = 0; i < n; i++)
        share[i] = v[i].o.share;
    fit_median_se(share, n, &f->p.overlap, &f->se.overlap);
    fit_add_reg(f, "overlap", "median", n, (int)n - 1, 0.0);
    fit_overlap_slowdown(f, v, n, share, share + n);
    fit_overlap_exposed(f, v, n, share);
    free(share);
    free(v);
    return 0;
}

/* The rows of master_wake from run t (see fit_master_wake): one per synchronisation. The
 * trainer's barrier comes before the exchange (train/sync.c), so no straggler is in it. */
static int push_master_wake_rows(const fit_core *f, const trace *t, fit_rows *r) {
    const double messages = 2.0 * t->run.config.workers;
    const costmodel_link *l = &f->p.link[JOB_TOPO_PS];
    traceinfo_sync *sy;
    long n = traceinfo_syncs(t, &sy);
    int rc = n < 0 ? -1 : 0;
    for (long i = 0; i < n && rc == 0; i++) {
        if (pattern_of(sy[i].name) != PATTERN_RUN && pattern_of(sy[i].name) != PATTERN_PS)
            continue;
        const double bytes = sy[i].bytes > 0 ? (double)sy[i].bytes : (double)t->run.model_bytes, one = 1.0;
        rc = fit_rows_push(r, &one, sy[i].span_s / messages - (l->alpha_s + l->beta_s_per_byte * bytes));
    }
    free(sy);
    return rc;
}

/* No run to fit master_wake from: a message to a crowded master is taken to take twice its
 * time on the link, alpha_ps + beta_ps·model_bytes more, its standard error its own size:
 * the middle half of the calibrations that measured it lie within a factor of 1.6 of that
 * (docs/calibration.md). */
static void master_wake_stated(fit_core *f) {
    const costmodel_link *l = &f->p.link[JOB_TOPO_PS];
    f->p.master_wake_s = f->se.master_wake_s = l->alpha_s + l->beta_s_per_byte * f->p.model_bytes;
    fit_note(f, "master_wake", "no run with a dedicated master on a full host in batch sync: a message to such a "
             "master is taken to take twice its time on the link (sharing a core with a polling worker), "
             "alpha_ps + beta_ps*model_bytes = %.3g s more, its standard error its own size", f->p.master_wake_s);
}

/* master_wake: what a message to a dedicated master whose workers fill its host's cores
 * takes beyond alpha_ps + beta_ps·bytes, from the batch-sync runs with such a master
 * (one exchange a step: enough of them to fit) — per synchronisation its span over its
 * 2K messages less that: a robust location, so a preempted exchange has no pull. Held
 * at 0 when it comes out below; no such run: master_wake_stated, unless the term is held. */
int fit_master_wake(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 1 };
    int rc = -1;
    f->p.master_wake_s = f->se.master_wake_s = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        const job_config *c = &t->run.config;
        if (fit_used(s, i, true) && c->sync == JOB_SYNC_BATCH && traceinfo_master_crowded(&t->run) &&
            push_master_wake_rows(f, t, &r)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 0;
    if (r.n < 2) {
        if (fit_held(s, PARAM_MASTER_WAKE))
            fit_note(f, "master_wake", "no run with a dedicated master on a full host in batch sync, and the term "
                     "held at 0: a message to such a master costs alpha_ps + beta_ps*bytes, as to one with a core "
                     "of its own");
        else
            master_wake_stated(f);
        goto done;
    }
    robustfit_result res;
    if (fit_rows_robust(&r, false, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    fit_add_robust_reg(f, "master_wake", &res, false);
    if (res.c[0] > 0) {
        f->p.master_wake_s = res.c[0];
        f->se.master_wake_s = res.se[0];
    }
done:
    fit_rows_free(&r);
    return rc;
}
