#include "model/fit.h"

#include "util/errmsg.h"

#include "model/ernest.h"
#include "model/nnls.h"
#include "model/traceinfo.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Growing arrays of regression rows */

typedef struct {
    double *x;     /* (n, cols) row-major */
    double *y;     /* (n) */
    long n, cap;
    int cols;
} rows;

static int rows_push(rows *r, const double *x, double y) {
    if (r->n == r->cap) {
        long cap = r->cap ? 2 * r->cap : 256;
        double *nx = realloc(r->x, sizeof *nx * (size_t)(cap * r->cols));
        if (!nx)
            return -1;
        r->x = nx;
        double *ny = realloc(r->y, sizeof *ny * (size_t)cap);
        if (!ny)
            return -1;
        r->y = ny;
        r->cap = cap;
    }
    memcpy(r->x + r->n * r->cols, x, sizeof *x * (size_t)r->cols);
    r->y[r->n++] = y;
    return 0;
}

static void rows_free(rows *r) {
    free(r->x);
    free(r->y);
}

/* NNLS on the rows; nothing allocated survives a failure. */
static nnls_result *rows_nnls(const rows *r, char *err, int errlen) {
    gsl_matrix_const_view A = gsl_matrix_const_view_array(r->x, (size_t)r->n, (size_t)r->cols);
    gsl_vector_const_view y = gsl_vector_const_view_array(r->y, (size_t)r->n);
    nnls_result *res = nnls_result_new(r->cols);
    if (!res) {
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    if (nnls_solve(&A.matrix, &y.vector, res, err, errlen)) {
        nnls_result_free(res);
        return NULL;
    }
    return res;
}

/* NNLS for noise proportional to the signal (step and message times spread by a fixed
 * fraction, not a fixed number of seconds): an ordinary fit, then the fit again with
 * every row divided by its fitted value, so that long spans do not pass for precise
 * ones and the standard errors follow the relative scatter. rss is then recomputed in
 * seconds². */
static nnls_result *rows_nnls_relative(const rows *r, char *err, int errlen) {
    nnls_result *first = rows_nnls(r, err, errlen);
    if (!first)
        return NULL;
    rows w = { .cols = r->cols };
    double top = 0, *fitted = malloc(sizeof *fitted * (size_t)r->n);
    if (!fitted) {
        nnls_result_free(first);
        errmsg_set(err, errlen, "out of memory");
        return NULL;
    }
    for (long i = 0; i < r->n; i++) {
        fitted[i] = 0;
        for (int j = 0; j < r->cols; j++)
            fitted[i] += r->x[i * r->cols + j] * gsl_vector_get(first->x, (size_t)j);
        top = fmax(top, fitted[i]);
    }
    nnls_result_free(first);
    nnls_result *res = NULL;
    for (long i = 0; i < r->n; i++) {
        double x[8], f = fmax(fitted[i], 1e-9 * top);
        for (int j = 0; j < r->cols; j++)
            x[j] = r->x[i * r->cols + j] / f;
        if (!(f > 0) || rows_push(&w, x, r->y[i] / f)) {
            errmsg_set(err, errlen, !(f > 0) ? "every fitted value is 0: nothing to weight by" : "out of memory");
            goto done;
        }
    }
    res = rows_nnls(&w, err, errlen);
    if (res) {
        res->rss = 0;
        for (long i = 0; i < r->n; i++) {
            double e = r->y[i];
            for (int j = 0; j < r->cols; j++)
                e -= r->x[i * r->cols + j] * gsl_vector_get(res->x, (size_t)j);
            res->rss += e * e;
        }
    }
done:
    free(fitted);
    rows_free(&w);
    return res;
}

static int rows_rank(const rows *r) {
    gsl_matrix_const_view A = gsl_matrix_const_view_array(r->x, (size_t)r->n, (size_t)r->cols);
    return nnls_rank(&A.matrix);
}

/* ---------------------------------------------------------------------------------- */
/* What a trace is */

static bool is_bench(const trace *t) { return strcmp(t->run.net, FIT_COMMBENCH_NET) == 0; }

/* ρ of the run on its host: compute slows by K·T/P when the cores are oversubscribed. */
static double rho_of(const trace_run *r) {
    double used = (double)r->config.workers * r->config.cores;
    return r->host_cores > 0 && used > r->host_cores ? used / r->host_cores : 1.0;
}

static double local_batch(const trace *t, const trace_event *e) {
    return e->examples > 0 ? (double)e->examples : costmodel_schedule_of(&t->run.config).local_batch;
}

double fit_measured_total(const trace *t) { return traceinfo_training_time(t); }

/* ---------------------------------------------------------------------------------- */
/* The mechanistic fit on one subset of traces */

typedef struct {
    costmodel_params p;
    calibration_stderr se;
    calibration_regression regs[CALIBRATION_MAX_REGRESSIONS];
    int n_regs;
} core_fit;

typedef struct {
    trace *const *tr;
    int n;
    int skip;                     /* the run left out, or -1 */
    char missing[1024];           /* what cannot be fitted, "; "-separated */
} subset;

static void missing(subset *s, const char *fmt, ...) {
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

static bool used(const subset *s, int i, bool training) {
    return i != s->skip && is_bench(s->tr[i]) != training;
}

static void add_reg(core_fit *f, const char *name, long points, int dof, double rss) {
    if (f->n_regs == CALIBRATION_MAX_REGRESSIONS)
        return;
    calibration_regression *r = &f->regs[f->n_regs++];
    snprintf(r->name, sizeof r->name, "%s", name);
    r->points = points;
    r->dof = dof;
    r->rms_s = points > 0 ? sqrt(rss / (double)points) : 0.0;
}

/* c0, c1 from T = 1, ρ = 1 steps; cov01 gets their covariance. 0, 1 missing, -1 error. */
static int fit_compute(subset *s, core_fit *f, double *cov01, char *err, int errlen) {
    rows r = { .cols = 2 };
    double bmin = INFINITY, bmax = -INFINITY;
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!used(s, i, true) || t->run.config.cores != 1 || rho_of(&t->run) != 1.0)
            continue;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            if (e->ph != TRACE_COMPUTE)
                continue;
            double b = local_batch(t, e), x[2] = { 1.0, b };
            bmin = fmin(bmin, b);
            bmax = fmax(bmax, b);
            if (rows_push(&r, x, e->t1_s - e->t0_s)) {
                errmsg_set(err, errlen, "out of memory");
                goto done;
            }
        }
    }
    rc = 1;
    if (r.n == 0) {
        missing(s, "c0, c1: no compute steps at T=1 without oversubscription (K*T <= host cores)");
        goto done;
    }
    if (bmin == bmax) {
        missing(s, "c0, c1: every compute step at T=1 has local batch b=%g, so the fixed and per-example "
                   "costs cannot be separated: add a run with another local batch (batch sync at another K, "
                   "or another batch size)", bmin);
        goto done;
    }
    nnls_result *res = rows_nnls_relative(&r, err, errlen);
    if (!res) {
        rc = -1;
        goto done;
    }
    f->p.c0_s = gsl_vector_get(res->x, 0);
    f->p.c1_s = gsl_vector_get(res->x, 1);
    f->se.c0_s = gsl_vector_get(res->se, 0);
    f->se.c1_s = gsl_vector_get(res->se, 1);
    *cov01 = gsl_matrix_get(res->cov, 0, 1);
    add_reg(f, "compute", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    rows_free(&r);
    return rc;
}

/* The σ estimator with c0, c1 given: least squares through the origin of
 * z = step − c0 − c1·b/T on x = c1·b·(1 − 1/T). Rows hold (b, T) and the step. */
static int sigma_estimate(const rows *r, double c0, double c1, double *sigma, double *var, double *rss) {
    size_t n = (size_t)r->n;
    double *x = malloc(sizeof *x * n), *z = malloc(sizeof *z * n);
    int status = GSL_ENOMEM;
    if (x && z) {
        for (size_t i = 0; i < n; i++) {
            double b = r->x[2 * i], T = r->x[2 * i + 1];
            x[i] = c1 * b * (1.0 - 1.0 / T);
            z[i] = r->y[i] - c0 - c1 * b / T;
        }
        status = gsl_fit_mul(x, 1, z, 1, n, sigma, var, rss);
    }
    free(x);
    free(z);
    return status;
}

static int fit_sigma(subset *s, core_fit *f, double cov01, char *err, int errlen) {
    rows r = { .cols = 2 };
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!used(s, i, true) || t->run.config.cores < 2 || rho_of(&t->run) != 1.0)
            continue;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            double x[2] = { local_batch(t, e), t->run.config.cores };
            if (e->ph == TRACE_COMPUTE && rows_push(&r, x, e->t1_s - e->t0_s)) {
                errmsg_set(err, errlen, "out of memory");
                goto done;
            }
        }
    }
    rc = 1;
    if (r.n < 2) {
        missing(s, "sigma: no compute steps at T>1 without oversubscription: add a run with 2 or more "
                   "threads per worker (K*T <= host cores)");
        goto done;
    }
    if (!(f->p.c1_s > 0)) {
        missing(s, "sigma: c1 was fitted as 0, so there is no per-example work whose scaling with T "
                   "could be measured");
        goto done;
    }
    double sigma, var, rss;
    if (sigma_estimate(&r, f->p.c0_s, f->p.c1_s, &sigma, &var, &rss) != GSL_SUCCESS) {
        rc = errmsg_set(err, errlen, "sigma: the fit failed");
        goto done;
    }
    /* Propagate the uncertainty of c0, c1: var += gᵀ·Σ·g, g = ∂σ/∂(c0, c1) by central
     * differences at a step well inside each standard error. */
    double c[2] = { f->p.c0_s, f->p.c1_s }, se[2] = { f->se.c0_s, f->se.c1_s }, g[2] = { 0, 0 };
    for (int j = 0; j < 2; j++) {
        double h = 1e-3 * (se[j] > 0 ? se[j] : 1e-6 * fabs(c[j]) + 1e-15);
        double cp[2] = { c[0], c[1] }, cm[2] = { c[0], c[1] }, sp, sm, v, q;
        cp[j] += h;
        cm[j] -= h;
        if (sigma_estimate(&r, cp[0], cp[1], &sp, &v, &q) || sigma_estimate(&r, cm[0], cm[1], &sm, &v, &q)) {
            rc = errmsg_set(err, errlen, "sigma: the fit failed");
            goto done;
        }
        g[j] = (sp - sm) / (2 * h);
    }
    var += g[0] * g[0] * se[0] * se[0] + 2 * g[0] * g[1] * cov01 + g[1] * g[1] * se[1] * se[1];
    f->se.sigma = var > 0 ? sqrt(var) : 0.0;
    if (sigma < 0 || sigma > 1) {
        sigma = sigma < 0 ? 0.0 : 1.0;
        f->se.sigma = 0.0;
    }
    f->p.sigma = sigma;
    add_reg(f, "sigma", r.n, (int)r.n - 1, rss);
    rc = 0;
done:
    rows_free(&r);
    return rc;
}

typedef enum { PATTERN_RUN, PATTERN_PS, PATTERN_ALLREDUCE, PATTERN_PINGPONG } comm_pattern;

static comm_pattern pattern_of(const trace_event *e) {
    if (strcmp(e->name, "allreduce") == 0)
        return PATTERN_ALLREDUCE;
    if (strcmp(e->name, "ps") == 0)
        return PATTERN_PS;
    if (strcmp(e->name, "pingpong") == 0)
        return PATTERN_PINGPONG;
    return PATTERN_RUN;
}

/* The features (α, β coefficients) of one comm event for topology topo; 0 when the event
 * does not belong to topo or carries no synchronisation (K = 1). */
static int comm_features(const trace *t, const trace_event *e, costmodel_topology topo, double x[2]) {
    comm_pattern pat = pattern_of(e);
    if (pat == PATTERN_RUN)
        pat = t->run.config.topology == COSTMODEL_TOPO_ALLREDUCE ? PATTERN_ALLREDUCE : PATTERN_PS;
    double k = t->run.config.workers;
    double bytes = e->bytes > 0 ? (double)e->bytes : (double)t->run.model_bytes;
    if (topo == COSTMODEL_TOPO_ALLREDUCE) {
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
    double remote = t->run.config.master == COSTMODEL_MASTER_DEDICATED ? k : k - 1;
    if (remote < 1)
        return 0;
    x[0] = 2 * remote;
    x[1] = 2 * remote * bytes;
    return 1;
}

typedef struct {
    double x0, x1, y;
} comm_sample;

static int by_features(const void *a, const void *b) {
    const comm_sample *p = a, *q = b;
    if (p->x0 != q->x0)
        return (p->x0 > q->x0) - (p->x0 < q->x0);
    if (p->x1 != q->x1)
        return (p->x1 > q->x1) - (p->x1 < q->x1);
    return (p->y > q->y) - (p->y < q->y);
}

/* Replaces the rows by one row per distinct feature pair (pattern, K, bytes) holding
 * the median duration. Message times have heavy tails from preemption: on a busy 2-core
 * host the slowest of 20 repetitions was up to 100x the median, enough to swing a
 * least-squares fit of the raw spans; the median of each group is immune to that. */
static int group_medians(rows *r) {
    comm_sample *v = malloc(sizeof *v * (size_t)(r->n + 1));
    double *ys = malloc(sizeof *ys * (size_t)(r->n + 1));
    if (!v || !ys) {
        free(v);
        free(ys);
        return -1;
    }
    for (long i = 0; i < r->n; i++)
        v[i] = (comm_sample){ r->x[2 * i], r->x[2 * i + 1], r->y[i] };
    qsort(v, (size_t)r->n, sizeof *v, by_features);
    long groups = 0;
    for (long a = 0, b; a < r->n; a = b) {
        for (b = a; b < r->n && v[b].x0 == v[a].x0 && v[b].x1 == v[a].x1; b++)
            ys[b - a] = v[b].y;
        r->x[2 * groups] = v[a].x0;
        r->x[2 * groups + 1] = v[a].x1;
        r->y[groups++] = gsl_stats_median_from_sorted_data(ys, 1, (size_t)(b - a));
    }
    r->n = groups;
    free(v);
    free(ys);
    return 0;
}

/* One comm event of one rank; the synchronisation it belongs to is (pattern, bytes, epoch,
 * step), the same on every rank. */
typedef struct {
    int pattern, epoch;
    long step, bytes;
    double x0, x1, dur_s;
} comm_event;

static int by_sync(const void *a, const void *b) {
    const comm_event *p = a, *q = b;
    if (p->pattern != q->pattern)
        return p->pattern - q->pattern;
    if (p->bytes != q->bytes)
        return (p->bytes > q->bytes) - (p->bytes < q->bytes);
    if (p->epoch != q->epoch)
        return p->epoch - q->epoch;
    return (p->step > q->step) - (p->step < q->step);
}

/* Pushes one row per synchronisation of t in topo: the longest of its ranks' comm spans.
 * A synchronisation is over when the last rank has its data: with eager sends the ps
 * master's broadcast returns once the weights are in the socket buffers, long before the
 * workers have them (rank 0's span alone gave a beta below the wire's), and in a ring every
 * rank's span is the whole all-reduce. The spans start together (a barrier precedes them). */
static int push_sync_spans(const trace *t, costmodel_topology topo, rows *r) {
    comm_event *v = malloc(sizeof *v * (size_t)(t->n_events + 1));
    if (!v)
        return -1;
    long n = 0;
    for (long k = 0; k < t->n_events; k++) {
        const trace_event *e = &t->events[k];
        double x[2];
        if (e->ph != TRACE_COMM || !comm_features(t, e, topo, x))
            continue;
        v[n++] = (comm_event){ .pattern = (int)pattern_of(e), .epoch = e->epoch, .step = e->step,
                               .bytes = e->bytes, .x0 = x[0], .x1 = x[1], .dur_s = e->t1_s - e->t0_s };
    }
    qsort(v, (size_t)n, sizeof *v, by_sync);
    int rc = 0;
    for (long a = 0, b; a < n && rc == 0; a = b) {
        double longest = v[a].dur_s;
        for (b = a + 1; b < n && by_sync(&v[a], &v[b]) == 0; b++)
            longest = fmax(longest, v[b].dur_s);
        double x[2] = { v[a].x0, v[a].x1 };
        rc = rows_push(r, x, longest);
    }
    free(v);
    return rc;
}

static int fit_comm(subset *s, core_fit *f, costmodel_topology topo, char *err, int errlen) {
    const char *name = costmodel_topology_name(topo);
    rows r = { .cols = 2 };
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        if (i != s->skip && push_sync_spans(s->tr[i], topo, &r)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    if (group_medians(&r)) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    rc = 1;
    if (r.n == 0) {
        missing(s, "alpha_%s, beta_%s: no %s synchronisations with K>=2 in any trace: add a trace of "
                   "`mpirun -np 2 speedup commbench --trace FILE`", name, name, name);
        goto done;
    }
    if (r.n < 3 || rows_rank(&r) < 2) {
        missing(s, "alpha_%s, beta_%s: the %s synchronisations come in fewer than 3 distinct (worker count, "
                   "bytes) groups, so latency and bandwidth cannot be separated with a standard error: "
                   "add a trace of `mpirun -np 2 speedup commbench --trace FILE` (several message sizes)",
                name, name, name);
        goto done;
    }
    nnls_result *res = rows_nnls_relative(&r, err, errlen);
    if (!res) {
        rc = -1;
        goto done;
    }
    f->p.link[topo].alpha_s = gsl_vector_get(res->x, 0);
    f->p.link[topo].beta_s_per_byte = gsl_vector_get(res->x, 1);
    double *sa = topo == COSTMODEL_TOPO_PS ? &f->se.alpha_ps : &f->se.alpha_allreduce;
    double *sb = topo == COSTMODEL_TOPO_PS ? &f->se.beta_ps : &f->se.beta_allreduce;
    *sa = gsl_vector_get(res->se, 0);
    *sb = gsl_vector_get(res->se, 1);
    add_reg(f, topo == COSTMODEL_TOPO_PS ? "comm_ps" : "comm_allreduce", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    rows_free(&r);
    return rc;
}

static int fit_startup(subset *s, core_fit *f, char *err, int errlen) {
    rows r = { .cols = 2 };
    int rc = -1, kmin = 0, kmax = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!used(s, i, true))
            continue;
        double w = -1;
        for (long k = 0; k < t->n_events; k++)
            if (t->events[k].ph == TRACE_STARTUP && t->events[k].t1_s > w)
                w = t->events[k].t1_s;
        if (w < 0)
            continue;
        int K = t->run.config.workers;
        double x[2] = { 1.0, K };
        kmin = r.n == 0 || K < kmin ? K : kmin;
        kmax = r.n == 0 || K > kmax ? K : kmax;
        if (rows_push(&r, x, w)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        missing(s, "w0, w1: no startup spans in any training run");
        goto done;
    }
    if (kmin == kmax) {
        missing(s, "w0, w1: start-up measured only at K=%d workers, so the fixed and per-worker start-up "
                   "costs cannot be separated: add a run at another worker count", kmin);
        goto done;
    }
    if (r.n < 3) {
        missing(s, "w0, w1: start-up of only %ld runs: need 3 or more runs (at 2 or more worker counts) "
                   "for a fit with standard errors", r.n);
        goto done;
    }
    nnls_result *res = rows_nnls(&r, err, errlen);
    if (!res) {
        rc = -1;
        goto done;
    }
    f->p.w0_s = gsl_vector_get(res->x, 0);
    f->p.w1_s = gsl_vector_get(res->x, 1);
    f->se.w0_s = gsl_vector_get(res->se, 0);
    f->se.w1_s = gsl_vector_get(res->se, 1);
    add_reg(f, "startup", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    rows_free(&r);
    return rc;
}

typedef struct {
    double b, t;
} step_sample;

static int by_batch(const void *a, const void *b) {
    double x = ((const step_sample *)a)->b, y = ((const step_sample *)b)->b;
    return (x > y) - (x < y);
}

static int fit_cv(subset *s, core_fit *f, char *err, int errlen) {
    double sum = 0;                /* Σ (n_g − 1)·(s_g/m_g)² */
    long dof = 0, points = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!used(s, i, true))
            continue;
        step_sample *v = malloc(sizeof *v * (size_t)(t->n_events + 1));
        double *d = malloc(sizeof *d * (size_t)(t->n_events + 1));
        if (!v || !d) {
            free(v);
            free(d);
            return errmsg_set(err, errlen, "out of memory");
        }
        long n = 0;
        for (long k = 0; k < t->n_events; k++)
            if (t->events[k].ph == TRACE_COMPUTE)
                v[n++] = (step_sample){ local_batch(t, &t->events[k]), t->events[k].t1_s - t->events[k].t0_s };
        qsort(v, (size_t)n, sizeof *v, by_batch);
        for (long a = 0, b; a < n; a = b) {
            for (b = a; b < n && v[b].b == v[a].b; b++)
                d[b - a] = v[b].t;
            long m = b - a;
            double mean = gsl_stats_mean(d, 1, (size_t)m);
            if (m < 2 || !(mean > 0))
                continue;
            double var = gsl_stats_variance_m(d, 1, (size_t)m, mean);
            sum += (double)(m - 1) * var / (mean * mean);
            dof += m - 1;
            points += m;
        }
        free(v);
        free(d);
    }
    if (dof < 1) {
        missing(s, "cv: no two compute steps of the same size in any training run");
        return 1;
    }
    double cv = sqrt(sum / (double)dof);
    f->p.cv = cv;
    f->se.cv = cv * sqrt((1 + 2 * cv * cv) / (2.0 * (double)dof));
    add_reg(f, "cv", points, (int)dof, 0.0);
    f->regs[f->n_regs - 1].rms_s = cv;
    return 0;
}

/* Every parameter from the traces of s; -1 with err on failure (what is missing, or why). */
static int fit_core(subset *s, core_fit *f, char *err, int errlen) {
    memset(f, 0, sizeof *f);
    s->missing[0] = '\0';
    const trace *first = NULL;
    for (int i = 0; i < s->n && !first; i++)
        if (used(s, i, true))
            first = s->tr[i];
    if (!first)
        return errmsg_set(err, errlen, "no training runs to fit (only communication benchmarks)");
    f->p.model_bytes = (double)first->run.model_bytes;
    f->p.host_cores = first->run.host_cores;
    if (first->run.model_bytes <= 0)
        missing(s, "model_bytes: the training runs' headers do not give the model's bytes");

    double cov01 = 0;
    int rc = fit_compute(s, f, &cov01, err, errlen);
    if (rc < 0)
        return -1;
    if (rc == 0 && fit_sigma(s, f, cov01, err, errlen) < 0)
        return -1;
    if (rc == 1)
        missing(s, "sigma: needs c0, c1 first");
    for (int topo = 0; topo < COSTMODEL_TOPO_COUNT; topo++)
        if (fit_comm(s, f, (costmodel_topology)topo, err, errlen) < 0)
            return -1;
    if (fit_startup(s, f, err, errlen) < 0 || fit_cv(s, f, err, errlen) < 0)
        return -1;
    if (s->missing[0])
        return errmsg_set(err, errlen, "under-determined fit: %s", s->missing);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Ernest-style comparison */

/* Ernest's fit over the training runs other than skip; -1 when too few. */
static int fit_ernest(const fit_result *r, int skip, ernest_model *m, char *err, int errlen) {
    ernest_point *pts = malloc(sizeof *pts * (size_t)(r->fit.n_runs + 1));
    if (!pts)
        return errmsg_set(err, errlen, "out of memory");
    long n = 0;
    for (int i = 0; i < r->fit.n_runs; i++)
        if (i != skip)
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

static void copy_core(fit_result *out, const core_fit *f) {
    out->cal.params = f->p;
    out->cal.stderr_ = f->se;
    memcpy(out->fit.regressions, f->regs, sizeof f->regs);
    out->fit.n_regressions = f->n_regs;
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

static bool same_config(const costmodel_config *a, const costmodel_config *b) {
    return a->workers == b->workers && a->cores == b->cores && a->sync == b->sync && a->every_n == b->every_n &&
           a->topology == b->topology && a->master == b->master && a->batch_per_worker == b->batch_per_worker &&
           a->examples == b->examples && a->batch == b->batch && a->epochs == b->epochs;
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
        if (is_bench(tr[i]))
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

int fit_traces(trace *const *traces, const char *const *paths, int n, fit_result *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    int n_train;
    if (check_inputs(traces, paths, n, &n_train, err, errlen))
        return -1;

    /* One configuration for every run: say so before the details of what is missing. */
    const trace *first = NULL;
    bool single = true;
    for (int i = 0; i < n; i++) {
        if (is_bench(traces[i]))
            continue;
        if (!first)
            first = traces[i];
        else if (!same_config(&first->run.config, &traces[i]->run.config))
            single = false;
    }
    if (!first)
        return errmsg_set(err, errlen, "no training runs to fit");
    subset all = { .tr = traces, .n = n, .skip = -1 };
    core_fit f;
    char why[1200];
    if (fit_core(&all, &f, why, sizeof why)) {
        if (single) {
            char sync[24];
            const costmodel_config *c = &first->run.config;
            costmodel_sync_format(c->sync, c->every_n, sync, sizeof sync);
            return errmsg_set(err, errlen, "a single configuration (K=%d, T=%d, %s sync, %s, %d run%s): %s", c->workers,
                        c->cores, sync, costmodel_topology_name(c->topology), n_train, n_train == 1 ? "" : "s", why);
        }
        return errmsg_set(err, errlen, "%s", why);
    }
    costmodel_config any = first->run.config;
    char why_bad[160];
    if (costmodel_check(&f.p, &any, why_bad, sizeof why_bad))
        return errmsg_set(err, errlen, "the fit gave an unusable parameter: %s", why_bad);
    copy_core(out, &f);
    snprintf(out->cal.host, sizeof out->cal.host, "%s", first->run.host);
    out->cal.has_workload = true;
    out->cal.examples = first->run.config.examples;
    out->cal.batch = first->run.config.batch;
    out->cal.epochs = first->run.config.epochs;

    out->runs = calloc((size_t)n_train, sizeof *out->runs);
    int *index = calloc((size_t)n_train, sizeof *index);
    double *e_model = calloc((size_t)n_train, sizeof *e_model), *e_ernest = calloc((size_t)n_train, sizeof *e_ernest);
    if (!out->runs || !index || !e_model || !e_ernest) {
        free(index);
        free(e_model);
        free(e_ernest);
        fit_result_release(out);
        return errmsg_set(err, errlen, "out of memory");
    }
    out->fit.runs = out->runs;
    for (int i = 0, r = 0; i < n; i++) {
        if (is_bench(traces[i]))
            continue;
        calibration_run *run = &out->runs[r];
        snprintf(run->trace, sizeof run->trace, "%s", paths[i]);
        run->config = traces[i]->run.config;
        run->measured_s = fit_measured_total(traces[i]);
        const costmodel_config *c = &run->config;
        /* The workload is the calibration's only when every run shares it. */
        if (c->examples != out->cal.examples || c->batch != out->cal.batch || c->epochs != out->cal.epochs)
            out->cal.has_workload = false;
        index[r++] = i;
    }
    out->fit.n_runs = n_train;

    ernest_model em;
    char eerr[256];
    if (fit_ernest(out, -1, &em, eerr, sizeof eerr) == 0) {
        /* Ernest's [1, work/(KT), KT, ln KT] → DESIGN.md's [1, work/K, log2 K, K]. */
        const int to[ERNEST_N_THETA] = { 0, 1, 3, 2 };
        const double scale[ERNEST_N_THETA] = { 1, 1, 1, 0.69314718055994530942 /* ln 2 */ };
        for (int j = 0; j < ERNEST_N_THETA; j++) {
            out->fit.ernest_theta[to[j]] = em.theta[j] * scale[j];
            out->fit.ernest_stderr[to[j]] = em.se[j] * scale[j];
        }
        out->fit.has_ernest = true;
    }

    int nm = 0, ne = 0;
    for (int r = 0; r < n_train; r++) {
        calibration_run *run = &out->runs[r];
        run->loo_model_s = run->loo_ernest_s = NAN;
        subset loo = { .tr = traces, .n = n, .skip = index[r] };
        core_fit g;
        char lerr[1200];
        if (fit_core(&loo, &g, lerr, sizeof lerr) == 0 && costmodel_check(&g.p, &run->config, lerr, sizeof lerr) == 0) {
            run->loo_model_s = costmodel_total_time(&g.p, &run->config);
            if (run->measured_s > 0)
                e_model[nm++] = fabs(run->loo_model_s - run->measured_s) / run->measured_s;
        } else {
            snprintf(run->loo_note, sizeof run->loo_note, "model: %.180s", lerr);
        }
        if (fit_ernest(out, r, &em, eerr, sizeof eerr) == 0) {
            run->loo_ernest_s = ernest_of_run(&em, run);
            if (run->measured_s > 0)
                e_ernest[ne++] = fabs(run->loo_ernest_s - run->measured_s) / run->measured_s;
        } else if (!run->loo_note[0]) {
            snprintf(run->loo_note, sizeof run->loo_note, "ernest: %.180s", eerr);
        }
    }
    out->fit.loo_model_n = nm;
    out->fit.loo_ernest_n = ne;
    median_worst(e_model, nm, &out->fit.loo_model_median, &out->fit.loo_model_worst);
    median_worst(e_ernest, ne, &out->fit.loo_ernest_median, &out->fit.loo_ernest_worst);
    free(index);
    free(e_model);
    free(e_ernest);
    return 0;
}
