/* fit_comm — the synchronisation-level part of the fit: alpha, beta per topology (see
 * fit_parts.h). */
#include "model/fit_parts.h"

#include "util/errmsg.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
static int group_medians(fit_rows *r) {
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
static int push_sync_spans(const trace *t, costmodel_topology topo, fit_rows *r) {
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
        rc = fit_rows_push(r, x, longest);
    }
    free(v);
    return rc;
}

int fit_comm(fit_subset *s, fit_core *f, costmodel_topology topo, char *err, int errlen) {
    const char *name = costmodel_topology_name(topo);
    fit_rows r = { .cols = 2 };
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
        fit_missing(s, "alpha_%s, beta_%s: no %s synchronisations with K>=2 in any trace: add a trace of "
                   "`mpirun -np 2 speedup commbench --trace FILE`", name, name, name);
        goto done;
    }
    if (r.n < 3 || fit_rows_rank(&r) < 2) {
        fit_missing(s, "alpha_%s, beta_%s: the %s synchronisations come in fewer than 3 distinct (worker count, "
                   "bytes) groups, so latency and bandwidth cannot be separated with a standard error: "
                   "add a trace of `mpirun -np 2 speedup commbench --trace FILE` (several message sizes)",
                name, name, name);
        goto done;
    }
    nnls_result *res = fit_rows_nnls_relative(&r, err, errlen);
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
    fit_add_reg(f, topo == COSTMODEL_TOPO_PS ? "comm_ps" : "comm_allreduce", r.n, res->dof, res->rss);
    nnls_result_free(res);
    rc = 0;
done:
    fit_rows_free(&r);
    return rc;
}

