/* traceinfo — the one reading of a trace (see traceinfo.h). */
#include "model/traceinfo.h"

#include <stdlib.h>
#include <string.h>

int traceinfo_ranks(const trace *t) {
    int ranks = t->run.config.workers + (t->run.config.master == COSTMODEL_MASTER_DEDICATED ? 1 : 0);
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank + 1 > ranks)
            ranks = t->events[i].rank + 1;
    return ranks < 1 ? 1 : ranks;
}

bool traceinfo_is_step(const trace_event *e) { return e->ph == TRACE_COMPUTE && e->examples > 0; }

double traceinfo_rho(const trace_run *r) {
    costmodel_params p = { .host_cores = r->host_cores };
    return costmodel_rho(&p, &r->config);
}

double traceinfo_training_time(const trace *t) {
    int ranks = traceinfo_ranks(t);
    double *end = calloc((size_t)ranks, sizeof *end), *eval = calloc((size_t)ranks, sizeof *eval);
    double total = 0;
    if (end && eval) {
        for (long i = 0; i < t->n_events; i++) {
            const trace_event *e = &t->events[i];
            if (e->rank >= 0 && e->ph != TRACE_EVAL && e->t1_s > end[e->rank])
                end[e->rank] = e->t1_s;
        }
        for (long i = 0; i < t->n_events; i++) {
            const trace_event *e = &t->events[i];
            if (e->rank >= 0 && e->ph == TRACE_EVAL && e->t1_s <= end[e->rank])
                eval[e->rank] += e->t1_s - e->t0_s;
        }
        for (int r = 0; r < ranks; r++)
            if (end[r] - eval[r] > total)
                total = end[r] - eval[r];
    }
    free(end);
    free(eval);
    return total;
}

traceinfo_phases traceinfo_phase_means(const trace *t) {
    double sum[TRACE_PHASE_COUNT] = { 0 };
    for (long i = 0; i < t->n_events; i++)
        sum[t->events[i].ph] += t->events[i].t1_s - t->events[i].t0_s;
    double k = traceinfo_ranks(t);
    return (traceinfo_phases){ .startup_s = sum[TRACE_STARTUP] / k, .compute_s = sum[TRACE_COMPUTE] / k,
                               .update_s = sum[TRACE_UPDATE] / k, .comm_s = sum[TRACE_COMM] / k,
                               .wait_s = sum[TRACE_WAIT] / k, .eval_s = sum[TRACE_EVAL] / k };
}

static int by_sync(const void *a, const void *b) {
    const traceinfo_sync *p = a, *q = b;
    int c = strcmp(p->name, q->name);
    if (c)
        return c;
    if (p->bytes != q->bytes)
        return (p->bytes > q->bytes) - (p->bytes < q->bytes);
    if (p->epoch != q->epoch)
        return p->epoch - q->epoch;
    return (p->step > q->step) - (p->step < q->step);
}

long traceinfo_syncs(const trace *t, traceinfo_sync **out) {
    *out = NULL;
    long n = 0;
    for (long i = 0; i < t->n_events; i++)
        n += t->events[i].ph == TRACE_COMM;
    if (n == 0)
        return 0;
    traceinfo_sync *v = malloc(sizeof *v * (size_t)n);
    if (!v)
        return -1;
    n = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->ph != TRACE_COMM)
            continue;
        traceinfo_sync *s = &v[n++];
        memcpy(s->name, e->name, sizeof s->name);
        s->name[sizeof s->name - 1] = '\0';
        s->epoch = e->epoch;
        s->step = e->step;
        s->bytes = e->bytes;
        s->span_s = e->t1_s - e->t0_s;
        s->ranks = 1;
    }
    qsort(v, (size_t)n, sizeof *v, by_sync);
    long groups = 0;
    for (long a = 0, b; a < n; a = b) {
        traceinfo_sync g = v[a];
        for (b = a + 1; b < n && by_sync(&v[a], &v[b]) == 0; b++) {
            if (v[b].span_s > g.span_s)
                g.span_s = v[b].span_s;
            g.ranks++;
        }
        v[groups++] = g;
    }
    *out = v;
    return groups;
}
