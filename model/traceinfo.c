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

bool traceinfo_is_optimizer_update(const trace_event *e) {
    return e->ph == TRACE_UPDATE && strcmp(e->name, "average") != 0;
}

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

/* One rank's comm event, keyed for grouping. */
typedef struct {
    traceinfo_sync s;
    int rank;
} rank_part;

static int by_sync_rank(const void *a, const void *b) {
    const rank_part *p = a, *q = b;
    int c = by_sync(&p->s, &q->s);
    return c ? c : p->rank - q->rank;
}

static int by_epoch_step(const void *a, const void *b) {
    const trace_event *p = a, *q = b;
    if (p->epoch != q->epoch)
        return p->epoch - q->epoch;
    return (p->step > q->step) - (p->step < q->step);
}

/* Seconds of other ranks' update events of e's epoch and step that fall inside e. */
static double updates_inside(const trace_event *e, const trace_event *upd, long n_upd) {
    trace_event key = { .epoch = e->epoch, .step = e->step };
    const trace_event *hit = bsearch(&key, upd, (size_t)n_upd, sizeof *upd, by_epoch_step);
    if (!hit)
        return 0;
    while (hit > upd && by_epoch_step(hit - 1, &key) == 0)
        hit--;
    double inside = 0;
    for (; hit < upd + n_upd && by_epoch_step(hit, &key) == 0; hit++) {
        if (hit->rank == e->rank)
            continue;
        double lo = hit->t0_s > e->t0_s ? hit->t0_s : e->t0_s, hi = hit->t1_s < e->t1_s ? hit->t1_s : e->t1_s;
        if (hi > lo)
            inside += hi - lo;
    }
    return inside;
}

long traceinfo_syncs(const trace *t, traceinfo_sync **out) {
    *out = NULL;
    long n = 0, n_upd = 0;
    for (long i = 0; i < t->n_events; i++) {
        n += t->events[i].ph == TRACE_COMM;
        n_upd += traceinfo_is_optimizer_update(&t->events[i]);
    }
    if (n == 0)
        return 0;
    rank_part *v = malloc(sizeof *v * (size_t)n);
    trace_event *upd = malloc(sizeof *upd * (size_t)(n_upd + 1));
    traceinfo_sync *res = malloc(sizeof *res * (size_t)n);
    if (!v || !upd || !res) {
        free(v);
        free(upd);
        free(res);
        return -1;
    }
    n_upd = 0;
    for (long i = 0; i < t->n_events; i++)
        if (traceinfo_is_optimizer_update(&t->events[i]))
            upd[n_upd++] = t->events[i];
    qsort(upd, (size_t)n_upd, sizeof *upd, by_epoch_step);
    n = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->ph != TRACE_COMM)
            continue;
        rank_part *r = &v[n++];
        memset(r, 0, sizeof *r);
        memcpy(r->s.name, e->name, sizeof r->s.name);
        r->s.name[sizeof r->s.name - 1] = '\0';
        r->s.epoch = e->epoch;
        r->s.step = e->step;
        r->s.bytes = e->bytes;
        r->s.span_s = e->t1_s - e->t0_s - updates_inside(e, upd, n_upd);
        r->rank = e->rank;
    }
    qsort(v, (size_t)n, sizeof *v, by_sync_rank);
    long groups = 0;
    for (long a = 0, b; a < n; a = b) {
        traceinfo_sync g = v[a].s;
        g.span_s = 0;
        g.ranks = 0;
        for (b = a; b < n && by_sync(&v[a].s, &v[b].s) == 0;) {
            /* This rank's part: its comm spans of this synchronisation, summed. */
            double part = 0;
            long c = b;
            for (; c < n && by_sync_rank(&v[b], &v[c]) == 0; c++)
                part += v[c].s.span_s;
            if (part > g.span_s)
                g.span_s = part;
            g.ranks++;
            b = c;
        }
        res[groups++] = g;
    }
    free(v);
    free(upd);
    *out = res;
    return groups;
}
