/* traceinfo — the one reading of a trace (see traceinfo.h). */
#include "trace/traceinfo.h"
#include "model/contention.h"

#include "util/errmsg.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int traceinfo_ranks(const trace *t) {
    int ranks = job_ranks(&t->run.config);
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank + 1 > ranks)
            ranks = t->events[i].rank + 1;
    return ranks < 1 ? 1 : ranks;
}

bool traceinfo_is_step(const trace_event *e) { return e->ph == TRACE_COMPUTE && e->examples > 0; }

bool traceinfo_is_background(const trace_event *e) {
    return (e->ph == TRACE_COMM || e->ph == TRACE_UPDATE) && e->background;
}

bool traceinfo_is_async_request(const trace *t, const trace_event *e) {
    return job_sync_is_async(t->run.config.sync) && e->ph == TRACE_COMM &&
           (strcmp(e->name, "push") == 0 || strcmp(e->name, "pull") == 0);
}

bool traceinfo_is_optimizer_update(const trace_event *e) {
    return e->ph == TRACE_UPDATE && strcmp(e->name, "average") != 0;
}

bool traceinfo_shares_cores(const trace_run *r) {
    costmodel_params p = { .host_cores = r->host_cores };
    return contention_shares_cores(&p, &r->config);
}

bool traceinfo_master_crowded(const trace_run *r) {
    costmodel_params p = { .host_cores = r->host_cores };
    return contention_master_crowded(&p, &r->config);
}

double traceinfo_training_time(const trace *t) {
    int ranks = traceinfo_ranks(t);
    double *end = calloc((size_t)ranks, sizeof *end), *eval = calloc((size_t)ranks, sizeof *eval);
    double total = 0;
    if (end && eval) {
        for (long i = 0; i < t->n_events; i++) {
            const trace_event *e = &t->events[i];
            if (e->rank >= 0 && e->ph != TRACE_EVAL && !traceinfo_is_background(e) && e->t1_s > end[e->rank])
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

double traceinfo_startup_end(const trace *t) {
    double end = -1;
    for (long k = 0; k < t->n_events; k++)
        if (t->events[k].ph == TRACE_STARTUP && t->events[k].t1_s > end)
            end = t->events[k].t1_s;
    return end;
}

traceinfo_phases traceinfo_phase_means(const trace *t) {
    double sum[TRACE_PHASE_COUNT] = { 0 };
    for (long i = 0; i < t->n_events; i++)
        if (!traceinfo_is_background(&t->events[i]))
            sum[t->events[i].ph] += t->events[i].t1_s - t->events[i].t0_s;
    double k = traceinfo_ranks(t);
    return (traceinfo_phases){ .startup_s = sum[TRACE_STARTUP] / k, .compute_s = sum[TRACE_COMPUTE] / k,
                               .update_s = sum[TRACE_UPDATE] / k, .comm_s = sum[TRACE_COMM] / k,
                               .wait_s = sum[TRACE_WAIT] / k, .eval_s = sum[TRACE_EVAL] / k };
}

int traceinfo_rank_totals_of(const trace *t, traceinfo_rank_totals **out) {
    const int ranks = traceinfo_ranks(t);
    traceinfo_rank_totals *v = calloc((size_t)ranks, sizeof *v);
    *out = v;
    if (!v)
        return -1;
    for (int r = 0; r < ranks; r++)
        v[r].first_s = 1e300, v[r].last_s = -1e300;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->rank < 0 || e->rank >= ranks)
            continue;
        traceinfo_rank_totals *r = &v[e->rank];
        const double span = e->t1_s - e->t0_s;
        if (traceinfo_is_background(e)) {
            r->background_s += span;
            continue;
        }
        r->phase_s[e->ph] += span;
        r->sum_s += span;
        r->first_s = e->t0_s < r->first_s ? e->t0_s : r->first_s;
        r->last_s = e->t1_s > r->last_s ? e->t1_s : r->last_s;
        r->events++;
    }
    return ranks;
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
    bool background;
    double t0_s, t1_s;
} rank_part;

static int by_sync_rank(const void *a, const void *b) {
    const rank_part *p = a, *q = b;
    int c = by_sync(&p->s, &q->s);
    return c ? c : p->rank - q->rank;
}

/* Within one rank's part, background spans first, in order of start. */
static int by_sync_rank_start(const void *a, const void *b) {
    const rank_part *p = a, *q = b;
    int c = by_sync_rank(a, b);
    if (c)
        return c;
    if (p->background != q->background)
        return q->background - p->background;
    return (p->t0_s > q->t0_s) - (p->t0_s < q->t0_s);
}

/* One rank's part of a synchronisation, parts [b, c) of v (sorted by by_sync_rank_start):
 * the union of its background spans when it has any, else the sum of its spans. */
static double rank_part_of(const rank_part *v, long b, long c) {
    double part = 0;
    if (!v[b].background) {
        for (long k = b; k < c; k++)
            part += v[k].s.span_s;
        return part;
    }
    double lo = v[b].t0_s, hi = v[b].t1_s;
    for (long k = b + 1; k < c && v[k].background; k++) {
        if (v[k].t0_s > hi) {
            part += hi - lo;
            lo = v[k].t0_s;
        }
        if (v[k].t1_s > hi)
            hi = v[k].t1_s;
    }
    return part + (hi - lo);
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
        n += t->events[i].ph == TRACE_COMM && !traceinfo_is_async_request(t, &t->events[i]);
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
        if (e->ph != TRACE_COMM || traceinfo_is_async_request(t, e))
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
        r->background = e->background;
        r->t0_s = e->t0_s;
        r->t1_s = e->t1_s;
    }
    qsort(v, (size_t)n, sizeof *v, by_sync_rank_start);
    /* A dedicated master's own part is no synchronisation's span while a worker has one
     * (docs/traces.md): no round waits for its last send to return. */
    const bool dedicated = job_dedicated_master(&t->run.config);
    long groups = 0;
    for (long a = 0, b; a < n; a = b) {
        traceinfo_sync g = v[a].s;
        g.span_s = 0;
        g.ranks = 0;
        double master_part = 0, least_beside = INFINITY;
        bool beside = true;
        for (b = a; b < n && by_sync(&v[a].s, &v[b].s) == 0;) {
            long c = b;
            while (c < n && by_sync_rank(&v[b], &v[c]) == 0)
                c++;
            double part = rank_part_of(v, b, c);
            if (dedicated && v[b].rank == 0) {
                master_part = part;
            } else {
                g.span_s = part > g.span_s ? part : g.span_s;
                least_beside = part < least_beside ? part : least_beside;
                beside = beside && v[b].background;
            }
            g.ranks++;
            b = c;
        }
        /* An exchange beside the steps starts on each rank when its own gradients are ready,
         * with no barrier before it: the first rank's part waits for the last rank's
         * gradients, the last rank's is the exchange alone. */
        if (beside && g.ranks >= 2 && isfinite(least_beside))
            g.span_s = least_beside;
        if (g.span_s == 0)
            g.span_s = master_part;
        res[groups++] = g;
    }
    free(v);
    free(upd);
    *out = res;
    return groups;
}

/* ---------------------------------------------------------------------------------- */
/* Overlap */

/* Comm that exchanges the step's gradients: an all-reduce or a parameter server's
 * exchange (or unnamed), not a one-off such as DDP's bucket-order broadcast. */
static bool is_gradient_comm(const trace_event *e) {
    return e->ph == TRACE_COMM &&
           (e->name[0] == '\0' || strcmp(e->name, "allreduce") == 0 || strcmp(e->name, "ps") == 0);
}

static bool is_background_sync(const trace_event *e) {
    return traceinfo_is_background(e) && is_gradient_comm(e);
}

static int by_rank_epoch_step_start(const void *a, const void *b) {
    const trace_event *p = a, *q = b;
    if (p->rank != q->rank)
        return p->rank - q->rank;
    int c = by_epoch_step(a, b);
    return c ? c : (p->t0_s > q->t0_s) - (p->t0_s < q->t0_s);
}

/* The first of v[0..n) (sorted by rank, epoch, step, start) of e's rank, epoch and step:
 * the earliest to start; NULL when there is none. */
static const trace_event *first_of_step(const trace_event *v, long n, const trace_event *e) {
    trace_event key = { .rank = e->rank, .epoch = e->epoch, .step = e->step, .t0_s = -INFINITY };
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (by_rank_epoch_step_start(&v[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].rank == e->rank && by_epoch_step(&v[lo], e) == 0 ? v + lo : NULL;
}

/* The events of t that pass keep, sorted by rank, epoch, step and start: *out malloc'd;
 * the count, or -1 out of memory. */
static long sorted_events(const trace *t, bool (*keep)(const trace_event *), trace_event **out) {
    long n = 0;
    for (long i = 0; i < t->n_events; i++)
        n += keep(&t->events[i]);
    *out = malloc(sizeof **out * (size_t)(n > 0 ? n : 1));
    if (!*out)
        return -1;
    n = 0;
    for (long i = 0; i < t->n_events; i++)
        if (keep(&t->events[i]))
            (*out)[n++] = t->events[i];
    qsort(*out, (size_t)n, sizeof **out, by_rank_epoch_step_start);
    return n;
}

static bool is_foreground_gradient_comm(const trace_event *e) {
    return is_gradient_comm(e) && !e->background;
}

long traceinfo_overlaps(const trace *t, traceinfo_overlap **out) {
    *out = NULL;
    long n_steps = 0;
    for (long i = 0; i < t->n_events; i++)
        n_steps += traceinfo_is_step(&t->events[i]);
    trace_event *bg = NULL, *fg = NULL;
    long n_bg = sorted_events(t, is_background_sync, &bg);
    long n_fg = n_bg > 0 ? sorted_events(t, is_foreground_gradient_comm, &fg) : 0;
    traceinfo_overlap *res = n_bg > 0 && n_steps > 0 ? malloc(sizeof *res * (size_t)n_steps) : NULL;
    long n = n_bg < 0 || n_fg < 0 || (n_bg > 0 && n_steps > 0 && !res) ? -1 : 0;
    for (long i = 0; n >= 0 && res && i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        double span = e->t1_s - e->t0_s;
        const trace_event *hit = traceinfo_is_step(e) && span > 0 ? first_of_step(bg, n_bg, e) : NULL;
        if (!hit)
            continue;
        double share = (e->t1_s - hit->t0_s) / span, exposed = 0;
        for (const trace_event *f = first_of_step(fg, n_fg, e);
             f && f < fg + n_fg && f->rank == e->rank && by_epoch_step(f, e) == 0; f++)
            exposed += f->t1_s - f->t0_s;
        res[n++] = (traceinfo_overlap){ .share = share < 0 ? 0 : share > 1 ? 1 : share, .step_s = span,
                                        .examples = e->examples, .exposed_s = exposed };
    }
    free(bg);
    free(fg);
    if (n <= 0) {
        free(res);
        return n;
    }
    *out = res;
    return n;
}

/* ---------------------------------------------------------------------------------- */
/* The accuracy curve */

/* A step's examples, or an eval span: a key and an amount, summed in key order. */
typedef struct {
    double key;
    double amount;
} keyed;

static int by_key(const void *a, const void *b) {
    const keyed *p = a, *q = b;
    return (p->key > q->key) - (p->key < q->key);
}

/* Sorts v[0..n) by key and turns the amounts into running sums. */
static void running_sums(keyed *v, long n) {
    qsort(v, (size_t)n, sizeof *v, by_key);
    for (long i = 1; i < n; i++)
        v[i].amount += v[i - 1].amount;
}

/* The running sum of every entry with key < limit (strict) or <= limit. */
static double sum_below(const keyed *v, long n, double limit, bool strict) {
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (strict ? v[mid].key < limit : v[mid].key <= limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? v[lo - 1].amount : 0.0;
}

static int by_time(const void *a, const void *b) {
    const trace_event *p = *(const trace_event *const *)a, *q = *(const trace_event *const *)b;
    if (p->t0_s != q->t0_s)
        return (p->t0_s > q->t0_s) - (p->t0_s < q->t0_s);
    return (p->step > q->step) - (p->step < q->step);
}

int traceinfo_accuracy_curve(const trace *t, traceinfo_accuracy_point **out, long *n, char *err, int errlen) {
    *out = NULL;
    *n = 0;
    long n_steps = 0, n_evals = 0, n_points = 0;
    int first_epoch = -1;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->ph == TRACE_COMPUTE && e->step >= 0) {
            n_steps++;
            if (e->epoch >= 0 && (first_epoch < 0 || e->epoch < first_epoch))
                first_epoch = e->epoch;
        }
        n_evals += e->rank == 0 && e->ph == TRACE_EVAL;
        n_points += e->rank == 0 && e->ph == TRACE_EVAL && e->has_accuracy;
    }
    if (n_points == 0)
        return 0;
    keyed *steps = malloc(sizeof *steps * (size_t)(n_steps + 1)), *evals = malloc(sizeof *evals * (size_t)n_evals);
    const trace_event **pts = malloc(sizeof *pts * (size_t)n_points);
    traceinfo_accuracy_point *res = malloc(sizeof *res * (size_t)n_points);
    if (!steps || !evals || !pts || !res) {
        free(steps);
        free(evals);
        free(pts);
        free(res);
        return errmsg_set(err, errlen, "out of memory reading the accuracy curve");
    }
    n_steps = n_evals = n_points = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->ph == TRACE_COMPUTE && e->step >= 0)
            steps[n_steps++] = (keyed){ (double)e->step, (double)e->examples };
        if (e->rank == 0 && e->ph == TRACE_EVAL) {
            evals[n_evals++] = (keyed){ e->t1_s, e->t1_s - e->t0_s };
            if (e->has_accuracy)
                pts[n_points++] = e;
        }
    }
    running_sums(steps, n_steps);
    running_sums(evals, n_evals);
    qsort(pts, (size_t)n_points, sizeof *pts, by_time);
    const long D = t->run.config.examples > 0 ? t->run.config.examples : 1;
    const double before = first_epoch > 0 ? (double)first_epoch * (double)D : 0.0;
    for (long i = 0; i < n_points; i++) {
        const trace_event *e = pts[i];
        const double seen = before + sum_below(steps, n_steps, (double)e->step, true);
        const double epochs = floor(seen / (double)D); // exact: seen and D are whole numbers
        res[i] = (traceinfo_accuracy_point){ .train_time_s = e->t0_s - sum_below(evals, n_evals, e->t0_s, false),
                                             .epoch = epochs < INT_MAX ? (int)epochs : INT_MAX, .step = e->step, .examples_seen = seen,
                                             .epochs_seen = seen / (double)D, .accuracy = e->accuracy,
                                             .train_loss = e->loss, .subset = strcmp(e->name, "subset") == 0 };
    }
    free(steps);
    free(evals);
    free(pts);
    *out = res;
    *n = n_points;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Async requests and staleness */

/* The median of v[0..n) (sorted here); 0 when n is 0. */
static double median_of(double *v, long n) {
    if (n == 0)
        return 0;
    gsl_sort(v, 1, (size_t)n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)n);
}

/* Spans of the master's (rank 0's) events of phase ph named name into v; their count. */
static long master_spans(const trace *t, trace_phase ph, const char *name, double *v) {
    long n = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->rank == 0 && e->ph == ph && strcmp(e->name, name) == 0)
            v[n++] = e->t1_s - e->t0_s;
    }
    return n;
}

int traceinfo_async_of(const trace *t, traceinfo_async *out) {
    memset(out, 0, sizeof *out);
    if (!job_sync_is_async(t->run.config.sync))
        return 0;
    double *v = malloc(sizeof *v * (size_t)(t->n_events + 1));
    if (!v)
        return -1;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->has_staleness)
            v[out->updates++] = (double)e->staleness;
        if (e->rank > 0 && traceinfo_is_async_request(t, e)) {
            out->pushes += strcmp(e->name, "push") == 0;
            out->pulls += strcmp(e->name, "pull") == 0;
        }
    }
    if (out->updates > 0) {
        gsl_sort(v, 1, (size_t)out->updates);
        out->staleness_median = gsl_stats_median_from_sorted_data(v, 1, (size_t)out->updates);
        out->staleness_p90 = gsl_stats_quantile_from_sorted_data(v, 1, (size_t)out->updates, 0.9);
        out->staleness_mean = gsl_stats_mean(v, 1, (size_t)out->updates);
    }
    out->push_s = median_of(v, master_spans(t, TRACE_COMM, "push", v));
    out->update_s = median_of(v, master_spans(t, TRACE_UPDATE, "sgd", v));
    out->pull_s = median_of(v, master_spans(t, TRACE_COMM, "pull", v));
    free(v);
    return 0;
}
