/* fit_comm — the synchronisation-level part of the fit: alpha, beta per topology (see
 * fit_parts.h). */
#include "model/fit_parts.h"

#include "util/errmsg.h"

#include "model/robustfit.h"
#include "model/traceinfo.h"

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
static int comm_features(const trace *t, const traceinfo_sync *sy, costmodel_topology topo, double x[2]) {
    comm_pattern pat = pattern_of(sy->name);
    if (pat == PATTERN_OTHER)
        return 0;
    if (pat == PATTERN_RUN)
        pat = t->run.config.topology == COSTMODEL_TOPO_ALLREDUCE ? PATTERN_ALLREDUCE : PATTERN_PS;
    double k = t->run.config.workers;
    double bytes = sy->bytes > 0 ? (double)sy->bytes : (double)t->run.model_bytes;
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

/* Pushes one row per synchronisation of t in topo, its span as model/traceinfo.h defines
 * it (the largest rank part, other ranks' updates inside it left out). */
static int push_sync_spans(const trace *t, costmodel_topology topo, fit_rows *r) {
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

void fit_comm_absent(fit_subset *s, costmodel_topology topo) {
    const char *name = costmodel_topology_name(topo);
    fit_missing(s, "alpha_%s, beta_%s: no %s synchronisations with K>=2 in any trace: add a trace of "
                "`mpirun -np 2 speedup commbench --trace FILE`", name, name, name);
}

int fit_comm(fit_subset *s, fit_core *f, costmodel_topology topo, char *err, int errlen) {
    const char *name = costmodel_topology_name(topo);
    fit_rows r = { .cols = 2 };
    int rc = -1;
    for (int i = 0; i < s->n; i++) {
        /* Oversubscribed runs' synchronisations wait for ranks the scheduler has parked. */
        if (fit_kept(s, i) && traceinfo_rho(&s->tr[i]->run) == 1.0 && push_sync_spans(s->tr[i], topo, &r)) {
            errmsg_set(err, errlen, "out of memory");
            goto done;
        }
    }
    rc = 1;
    if (r.n == 0) {
        bool asked = false;
        for (int i = 0; i < s->n; i++)
            asked |= fit_used(s, i, true) && s->tr[i]->run.config.topology == topo;
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
        fit_missing(s, "alpha_%s, beta_%s: the %s synchronisations come in fewer than 3 distinct (worker count, "
                    "bytes) groups, so latency and bandwidth cannot be separated with a standard error: "
                    "add a trace of `mpirun -np 2 speedup commbench --trace FILE` (several message sizes)",
                    name, name, name);
        goto done;
    }
    robustfit_result res;
    if (fit_rows_robust(&r, true, &res, err, errlen)) {
        rc = -1;
        goto done;
    }
    f->p.link[topo].alpha_s = res.c[0];
    f->p.link[topo].beta_s_per_byte = res.c[1];
    double *sa = topo == COSTMODEL_TOPO_PS ? &f->se.alpha_ps : &f->se.alpha_allreduce;
    double *sb = topo == COSTMODEL_TOPO_PS ? &f->se.beta_ps : &f->se.beta_allreduce;
    *sa = res.se[0];
    *sb = res.se[1];
    fit_add_robust_reg(f, topo == COSTMODEL_TOPO_PS ? "comm_ps" : "comm_allreduce", &res, true);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}


/* φ, the overlap: the median over the steps of the runs with ρ = 1 of the share of the
 * step during which its own synchronisation already ran beside it (traceinfo_overlaps:
 * background comm, e.g. DDP's bucketed all-reduce on gloo's threads); standard error
 * √(π/2)·sd/√n. Traces without background comm (the C trainer communicates after it
 * computes) give φ = 0 with a note. */
int fit_overlap(fit_subset *s, fit_core *f, char *err, int errlen) {
    long n = 0;
    double *v = NULL;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        if (!fit_used(s, i, true) || traceinfo_rho(&t->run) != 1.0 || t->run.config.workers < 2)
            continue;
        double *o;
        long m = traceinfo_overlaps(t, &o);
        double *grown = m > 0 ? realloc(v, sizeof *v * (size_t)(n + m)) : v;
        if (m < 0 || (m > 0 && !grown)) {
            free(o);
            free(v);
            return errmsg_set(err, errlen, "out of memory");
        }
        v = grown;
        for (long k = 0; k < m; k++)
            v[n++] = o[k];
        free(o);
    }
    f->p.overlap = f->se.overlap = 0;
    if (n == 0) {
        fit_note(f, "overlap", "no communication ran beside compute in the traces (it follows the step, as in "
                 "`speedup train`): 0, compute then communicate");
        free(v);
        return 0;
    }
    fit_median_se(v, n, &f->p.overlap, &f->se.overlap);
    fit_add_reg(f, "overlap", "median", n, (int)n - 1, 0.0);
    free(v);
    return 0;
}
