/* fit_run — the run-level part of the fit: w0, w1 (see fit_parts.h). */
#include "model/fit_parts.h"

#include "util/errmsg.h"

int fit_startup(fit_subset *s, fit_core *f, char *err, int errlen) {
    fit_rows r = { .cols = 2 };
    int rc = -1, kmin = 0, kmax = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true))
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
        if (fit_rows_push(&r, x, w)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        fit_missing(s, "w0, w1: no startup spans in any training run");
        goto done;
    }
    if (kmin == kmax) {
        fit_missing(s, "w0, w1: start-up measured only at K=%d workers, so the fixed and per-worker start-up "
                   "costs cannot be separated: add a run at another worker count", kmin);
        goto done;
    }
    if (r.n < 3) {
        fit_missing(s, "w0, w1: start-up of only %ld runs: need 3 or more runs (at 2 or more worker counts) "
                   "for a fit with standard errors", r.n);
        goto done;
    }
    nnls_result *res = fit_rows_nnls(&r, err, errlen);
    if (!res) {
        rc = -1;
        goto done;
    }
    f->p.w0_s = gsl_vector_get(res->x, 0);
    f->p.w1_s = gsl_vector_get(res->x, 1);
    f->se.w0_s = gsl_vector_get(res->se, 0);
    f->se.w1_s = gsl_vector_get(res->se, 1);
    fit_add_reg(f, "startup", "nnls", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}

