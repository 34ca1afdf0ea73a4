/* fit_compute — the step-level parts of the fit: c0, c1, sigma, cv (see fit_parts.h). */
#include "model/fit_parts.h"

#include "util/errmsg.h"

#include "model/traceinfo.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

/* c0, c1 from T = 1, ρ = 1 steps; cov01 gets their covariance. 0, 1 missing, -1 error. */
int fit_compute(fit_subset *s, fit_core *f, double *cov01, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    double bmin = INFINITY, bmax = -INFINITY;
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || t->run.config.cores != 1 || traceinfo_rho(&t->run) != 1.0)
            continue;
        for (long k = 0; k < t->n_events; k++) {
            const trace_event *e = &t->events[k];
            if (!traceinfo_is_step(e))
                continue;
            double b = (double)e->examples, x[2] = { 1.0, b };
            bmin = fmin(bmin, b);
            bmax = fmax(bmax, b);
            if (fit_rows_push(&r, x, e->t1_s - e->t0_s)) {
                errmsg_set(err, errlen, "out of memory");
                goto done;
            }
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
    nnls_result *res = fit_rows_nnls_relative(&r, err, errlen);
    if (!res) {
        rc = -1;
        goto done;
    }
    f->p.c0_s = gsl_vector_get(res->x, 0);
    f->p.c1_s = gsl_vector_get(res->x, 1);
    f->se.c0_s = gsl_vector_get(res->se, 0);
    f->se.c1_s = gsl_vector_get(res->se, 1);
    *cov01 = gsl_matrix_get(res->cov, 0, 1);
    fit_add_reg(f, "compute", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}

/* The σ estimator with c0, c1 given: least squares through the origin of
 * z = step − c0 − c1·b/T on x = c1·b·(1 − 1/T). Rows hold (b, T) and the step. */
static int sigma_estimate(const fit_rows *r, double c0, double c1, double *sigma, double *var, double *rss) {
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

int fit_sigma(fit_subset *s, fit_core *f, double cov01, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || t->run.config.cores < 2 || traceinfo_rho(&t->run) != 1.0)
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
        fit_missing(s, "sigma: no compute steps at T>1 without oversubscription: add a run with 2 or more "
                   "threads per worker (K*T <= host cores)");
        goto done;
    }
    if (!(f->p.c1_s > 0)) {
        fit_missing(s, "sigma: c1 was fitted as 0, so there is no per-example work whose scaling with T "
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
    fit_add_reg(f, "sigma", r.n, (int)r.n - 1, rss);
    rc = 0;
done:
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
        if (!fit_used(s, i, true))
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
            if (traceinfo_is_step(&t->events[k]))
                v[n++] = (step_sample){ (double)t->events[k].examples, t->events[k].t1_s - t->events[k].t0_s };
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
        fit_missing(s, "cv: no two compute steps of the same size in any training run");
        return 1;
    }
    double cv = sqrt(sum / (double)dof);
    f->p.cv = cv;
    f->se.cv = cv * sqrt((1 + 2 * cv * cv) / (2.0 * (double)dof));
    fit_add_reg(f, "cv", points, (int)dof, 0.0);
    f->regs[f->n_regs - 1].rms_s = cv;
    return 0;
}

