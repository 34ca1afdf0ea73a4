/* chrome_timeline — one rank's spans placed into its timeline (see chrome_import.h):
 * nesting and rules per thread, the main thread tiled into phases, the other threads'
 * communication beside it, or, with no compute anywhere, the threads overlaid step by step.
 */
#define _POSIX_C_SOURCE 200809L
#include "trace/chrome_parts.h"

#include "util/errmsg.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------------------------- */
/* Placing: nesting and rules, thread by thread */

/* Sort key of a span: its thread, then start, then the longer first (a parent before
 * its children), then file order. */
typedef struct {
    int track;
    double t0, t1;
    long index, span;
} order_key;

static int by_order(const void *a, const void *b) {
    const order_key *p = a, *q = b;
    if (p->track != q->track)
        return p->track - q->track;
    if (p->t0 != q->t0)
        return (p->t0 > q->t0) - (p->t0 < q->t0);
    if (p->t1 != q->t1)
        return (p->t1 < q->t1) - (p->t1 > q->t1);
    return (p->index > q->index) - (p->index < q->index);
}

/* What kind of communication a name says: NULL when it says none in particular. */
static const char *kind_of_name(const char *name) {
    static const struct { const char *word, *kind; } kinds[] = {
        { "broadcast", "broadcast" }, { "bcast", "broadcast" }, { "all_gather", "allgather" },
        { "allgather", "allgather" }, { "reduce_scatter", "reducescatter" }, { "reducescatter", "reducescatter" },
        { "all_to_all", "alltoall" }, { "alltoall", "alltoall" }, { "all_reduce", "allreduce" },
        { "allreduce", "allreduce" },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (const char *p = name; *p; p++)
            if (strncasecmp(p, kinds[i].word, strlen(kinds[i].word)) == 0)
                return kinds[i].kind;
    return NULL;
}

typedef struct {
    long span;
    double end_us;
    bool inside_placed;      /* a placed span: what it holds is its own */
} frame;

/* Is s nested in the open span f? It starts before f ends — or, rounding: the legacy
 * profiler writes whole microseconds, start and duration each rounded, so a child may seem
 * to start at its parent's end and to end a microsecond after it. */
static bool inside(const frame *f, const ci_span *s) {
    return s->t0_us < f->end_us || (s->t0_us == f->end_us && s->t1_us <= f->end_us + 1.0);
}

/* The occurrence of a top-level name on the thread: its step in the overlay mode. */
typedef struct {
    const char *name;
    int count;
} name_count;

static int occurrence(name_count *seen, int *n_seen, int cap, const char *name) {
    for (int i = 0; i < *n_seen; i++)
        if (strcmp(seen[i].name, name) == 0)
            return seen[i].count++;
    if (*n_seen == cap)
        return 0; /* more distinct top-level names than the overlay can tell apart: step 0 */
    seen[(*n_seen)++] = (name_count){ name, 1 };
    return 0;
}

/* One span looked at (not inside a placed one): its rule decides. */
static void place_span(ci_run *run, long s, const frame *stack, long depth) {
    ci_span *sp = &run->spans[s];
    ci_track *tr = &run->tracks[sp->track];
    const phasemap_rule *rule = phasemap_match(run->map, sp->name);
    if (!rule) {
        if (tr->unmatched < 0)
            tr->unmatched = s;
        return;
    }
    if (rule->phase == PHASEMAP_STEP)
        sp->step_start = true;
    if (rule->phase >= TRACE_PHASE_COUNT)
        return;
    sp->phase = rule->phase;
    if (sp->phase == TRACE_COMPUTE)
        tr->compute_us += sp->t1_us - sp->t0_us;
    if (sp->phase == TRACE_COMM) {
        /* Its own name, else its containers' (Horovod's ALLGATHER holds MPI_...), innermost first. */
        sp->kind = kind_of_name(sp->name);
        for (long d = depth - 1; !sp->kind && d >= 0; d--)
            sp->kind = kind_of_name(run->spans[stack[d].span].name);
        if (!sp->kind)
            sp->kind = "allreduce";
    }
}

/* The spans of one thread, order[b, e): nesting by time, rules top-down. */
static int place_track(ci_run *run, long b, long e) {
    enum { MAX_NAMES = 256 };
    frame *stack = malloc(sizeof *stack * (size_t)(e - b + 1));
    name_count *seen = malloc(sizeof *seen * MAX_NAMES);
    if (!stack || !seen) {
        free(stack);
        free(seen);
        return -1;
    }
    long depth = 0;
    int n_seen = 0;
    for (long k = b; k < e; k++) {
        long s = run->order[k];
        ci_span *sp = &run->spans[s];
        while (depth > 0 && !inside(&stack[depth - 1], sp))
            depth--;
        sp->top = depth == 0;
        sp->step = depth == 0 ? occurrence(seen, &n_seen, MAX_NAMES, sp->name) : run->spans[stack[depth - 1].span].step;
        if (depth > 0 && stack[depth - 1].inside_placed)
            continue; /* inside a placed span: its own business */
        place_span(run, s, stack, depth);
        stack[depth++] = (frame){ .span = s, .end_us = sp->t1_us, .inside_placed = sp->phase >= 0 };
    }
    free(stack);
    free(seen);
    return 0;
}

int ci_place(ci_run *run) {
    order_key *keys = malloc(sizeof *keys * (size_t)(run->n_spans + 1));
    run->order = malloc(sizeof *run->order * (size_t)(run->n_spans + 1));
    run->track_begin = calloc((size_t)run->n_tracks + 1, sizeof *run->track_begin);
    if (!keys || !run->order || !run->track_begin) {
        free(keys);
        return -1;
    }
    for (long i = 0; i < run->n_spans; i++) {
        const ci_span *s = &run->spans[i];
        keys[i] = (order_key){ s->track, s->t0_us, s->t1_us, s->index, i };
    }
    qsort(keys, (size_t)run->n_spans, sizeof *keys, by_order);
    for (long i = 0; i < run->n_spans; i++) {
        run->order[i] = keys[i].span;
        run->track_begin[keys[i].track + 1] = i + 1;
    }
    free(keys);
    for (int t = 1; t <= run->n_tracks; t++) /* threads with no span: empty ranges */
        if (run->track_begin[t] < run->track_begin[t - 1])
            run->track_begin[t] = run->track_begin[t - 1];
    for (int t = 0; t < run->n_tracks; t++)
        if (place_track(run, run->track_begin[t], run->track_begin[t + 1]))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Events of the trace */

/* Identifier characters only: trace.h's names are written without escaping. */
static void clean_name(char *out, size_t len, const char *in) {
    size_t n = 0;
    for (; *in && n + 1 < len; in++)
        out[n++] = isalnum((unsigned char)*in) || strchr("_.:-", *in) ? *in : '_';
    out[n] = '\0';
}

/* A start-up event's name: its annotation less "startup" and the separators after it. */
static void startup_name(char *out, size_t len, const char *annotation) {
    const char *p = annotation;
    if (strncasecmp(p, "startup", 7) == 0)
        p += 7;
    while (*p && !isalnum((unsigned char)*p))
        p++;
    clean_name(out, len, p);
}

static int emit(ci_run *run, trace *t, const trace_event *e) {
    return trace_add(t, e) ? errmsg_set(run->err, run->errlen, "out of memory") : 0;
}

/* One merged stretch of the main thread. */
typedef struct {
    double t0_us, t1_us;
    int phase;
    const char *kind;        /* comm */
    char name[32];
} segment;

static bool same_segment(const segment *a, const ci_span *s, const char *name) {
    return a->phase == s->phase && (a->phase != TRACE_COMM || strcmp(a->kind, s->kind) == 0) &&
           strcmp(a->name, name) == 0;
}

/* The starts of a thread's step containers, in order, and a cursor: asked about
 * intervals that only move forward, it moves forward too. */
typedef struct {
    double *at_us;
    long n, next;
} step_starts;

/* Does a step start in [from, to]? */
static bool step_starts_in(step_starts *st, double from, double to) {
    while (st->next < st->n && st->at_us[st->next] < from)
        st->next++;
    return st->next < st->n && st->at_us[st->next] <= to;
}

typedef struct {
    int rank;
    long examples;
    long steps;              /* compute segments so far */
    double *step_t0;         /* (cap) each step's start, for the background's steps */
    long cap;
} tiling;

static int emit_segment(ci_run *run, trace *t, tiling *g, const segment *sg) {
    trace_event e = { .rank = g->rank, .ph = (trace_phase)sg->phase, .t0_s = (sg->t0_us - run->origin_us) * 1e-6,
                      .t1_s = (sg->t1_us - run->origin_us) * 1e-6, .epoch = 0, .step = g->steps - 1 };
    if (sg->phase == TRACE_COMPUTE) {
        e.step = g->steps++;
        e.examples = g->examples;
        if (e.step < g->cap)
            g->step_t0[e.step] = sg->t0_us;
    }
    if (sg->phase == TRACE_STARTUP || e.step < 0)
        e.epoch = -1, e.step = -1;
    snprintf(e.name, sizeof e.name, "%s", sg->phase == TRACE_COMM ? sg->kind : sg->name);
    return emit(run, t, &e);
}

/* The placed spans of order[b, e), in time order, each from the end of the one before;
 * first and last bound the thread's spans. */
static int tile_spans(ci_run *run, long b, long e, double first, double last, step_starts *st, trace *t,
                      tiling *g) {
    double prev_end = first;
    segment cur = { .phase = -1 };
    for (long k = b; k < e; k++) {
        const ci_span *s = &run->spans[run->order[k]];
        if (s->phase < 0)
            continue;
        char name[32] = "";
        if (s->phase == TRACE_STARTUP)
            startup_name(name, sizeof name, s->name);
        if (cur.phase >= 0 && same_segment(&cur, s, name) && !step_starts_in(st, cur.t1_us, s->t0_us)) {
            cur.t1_us = fmax(cur.t1_us, s->t1_us);
        } else {
            if (cur.phase >= 0 && emit_segment(run, t, g, &cur))
                return -1;
            cur = (segment){ .t0_us = prev_end, .t1_us = s->t1_us, .phase = s->phase, .kind = s->kind };
            snprintf(cur.name, sizeof cur.name, "%s", name);
        }
        prev_end = cur.t1_us;
    }
    if (cur.phase < 0)
        return 0;
    cur.t1_us = fmax(cur.t1_us, last); /* what follows the last placed span: its phase */
    return emit_segment(run, t, g, &cur);
}

/* The main thread's timeline. */
static int tile(ci_run *run, int track, trace *t, tiling *g) {
    long b = run->track_begin[track], e = run->track_begin[track + 1];
    double first = INFINITY, last = -INFINITY;
    step_starts st = { .at_us = malloc(sizeof *st.at_us * (size_t)(e - b + 1)) };
    if (!st.at_us)
        return errmsg_set(run->err, run->errlen, "out of memory");
    for (long k = b; k < e; k++) {
        const ci_span *s = &run->spans[run->order[k]];
        first = fmin(first, s->t0_us);
        last = fmax(last, s->t1_us);
        if (s->step_start)
            st.at_us[st.n++] = s->t0_us;
    }
    int rc = tile_spans(run, b, e, first, last, &st, t, g);
    free(st.at_us);
    return rc;
}

/* The step a background span belongs to: the last one started at or before it. */
static long step_at(const tiling *g, double t0_us) {
    long lo = 0, hi = g->steps < g->cap ? g->steps : g->cap;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (g->step_t0[mid] <= t0_us)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* Communication placed on file f's threads other than main: beside the rank's timeline. */
static int background(ci_run *run, int f, int main, trace *t, const tiling *g) {
    for (int tr = 0; tr < run->n_tracks; tr++) {
        if (run->tracks[tr].file != f || tr == main)
            continue;
        for (long k = run->track_begin[tr]; k < run->track_begin[tr + 1]; k++) {
            const ci_span *s = &run->spans[run->order[k]];
            if (s->phase != TRACE_COMM)
                continue;
            long step = step_at(g, s->t0_us);
            trace_event e = { .rank = g->rank, .ph = TRACE_COMM, .t0_s = (s->t0_us - run->origin_us) * 1e-6,
                              .t1_s = (s->t1_us - run->origin_us) * 1e-6, .epoch = step < 0 ? -1 : 0, .step = step,
                              .bytes = s->bytes, .background = true };
            snprintf(e.name, sizeof e.name, "%s", s->kind);
            if (emit(run, t, &e))
                return -1;
        }
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The overlay: a rank whose threads hold no compute (Horovod's timeline) */

/* A placed span of the overlay, keyed by its step. */
typedef struct {
    int step;
    double t0_us, t1_us;
    int phase;
    const char *kind;
} piece;

static int by_step_start(const void *a, const void *b) {
    const piece *p = a, *q = b;
    if (p->step != q->step)
        return p->step - q->step;
    return (p->t0_us > q->t0_us) - (p->t0_us < q->t0_us);
}

typedef struct {
    double t_us;
    int delta, phase;
} edge;

static int by_time(const void *a, const void *b) {
    const edge *p = a, *q = b;
    return (p->t_us > q->t_us) - (p->t_us < q->t_us);
}

/* Which phase shows where several overlap: comm over wait over the rest. */
static int top_phase(const int *count) {
    static const int order[] = { TRACE_COMM, TRACE_WAIT, TRACE_UPDATE, TRACE_COMPUTE, TRACE_STARTUP, TRACE_EVAL };
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
        if (count[order[i]] > 0)
            return order[i];
    return -1;
}

/* One step's pieces p[0, n) overlaid into events: a sweep over their starts and ends. */
static int overlay_step(ci_run *run, const piece *p, long n, int rank, long bytes, trace *t) {
    edge *ev = malloc(sizeof *ev * (size_t)(2 * n));
    if (!ev)
        return errmsg_set(run->err, run->errlen, "out of memory");
    for (long i = 0; i < n; i++) {
        ev[2 * i] = (edge){ p[i].t0_us, +1, p[i].phase };
        ev[2 * i + 1] = (edge){ p[i].t1_us, -1, p[i].phase };
    }
    qsort(ev, (size_t)(2 * n), sizeof *ev, by_time);
    int count[TRACE_PHASE_COUNT] = { 0 }, rc = 0;
    trace_event cur = { .rank = rank, .ph = TRACE_PHASE_COUNT, .epoch = 0, .step = p[0].step };
    for (long i = 0; i < 2 * n && rc == 0;) {
        double at = ev[i].t_us;
        for (; i < 2 * n && ev[i].t_us == at; i++)
            count[ev[i].phase] += ev[i].delta;
        int ph = top_phase(count);
        double at_s = (at - run->origin_us) * 1e-6;
        if (ph == (int)cur.ph)
            continue;
        if (cur.ph != TRACE_PHASE_COUNT && at_s > cur.t0_s) {
            cur.t1_s = at_s;
            rc = emit(run, t, &cur);
        }
        cur.ph = ph < 0 ? TRACE_PHASE_COUNT : (trace_phase)ph;
        cur.t0_s = at_s;
        cur.bytes = ph == TRACE_COMM ? bytes : 0;
        snprintf(cur.name, sizeof cur.name, "%s", ph == TRACE_COMM ? p[0].kind : "");
    }
    free(ev);
    return rc;
}

/* Every step's placed spans over file f's threads, overlaid; the steps, or -1. */
static long overlay(ci_run *run, int f, int rank, trace *t) {
    long n = 0, steps = 0;
    piece *p = malloc(sizeof *p * (size_t)(run->n_spans + 1));
    long *bytes = calloc((size_t)run->n_spans + 1, sizeof *bytes); /* by step: the top spans' bytes */
    if (!p || !bytes) {
        free(p);
        free(bytes);
        return errmsg_set(run->err, run->errlen, "out of memory");
    }
    for (long i = 0; i < run->n_spans; i++) {
        const ci_span *s = &run->spans[i];
        if (run->tracks[s->track].file != f)
            continue;
        if (s->top)
            bytes[s->step] += s->bytes;
        if (s->phase >= 0)
            p[n++] = (piece){ s->step, s->t0_us, s->t1_us, s->phase, s->kind ? s->kind : "allreduce" };
    }
    qsort(p, (size_t)n, sizeof *p, by_step_start);
    long rc = 0;
    for (long a = 0, b; a < n && rc == 0; a = b) {
        for (b = a; b < n && p[b].step == p[a].step; b++)
            ;
        /* The first comm piece names the step's communication. */
        for (long k = a; k < b; k++)
            if (p[k].phase == TRACE_COMM) {
                p[a].kind = p[k].kind;
                break;
            }
        rc = overlay_step(run, p + a, b - a, rank, bytes[p[a].step], t);
        steps = p[a].step + 1;
    }
    free(p);
    free(bytes);
    return rc ? -1 : steps;
}

/* ---------------------------------------------------------------------------------- */
/* One rank */

static int unplaced(ci_run *run, long s, const char *where) {
    const ci_span *sp = &run->spans[s];
    const ci_track *tr = &run->tracks[sp->track];
    return errmsg_set(run->err, run->errlen, "%s: event %ld '%s' (pid %s, tid %s, at %.3f ms)%s: no rule of the phase "
                      "map places it; add a line 'PATTERN PHASE' for it to a --phase-map file (PHASE: compute, "
                      "update, comm, wait, startup, eval, step, or - for none)", run->files[tr->file].path, sp->index,
                      sp->name, tr->pid, tr->tid, (sp->t0_us - run->origin_us) * 1e-3, where);
}

long ci_timeline(ci_run *run, int f, int rank, long examples, trace *t) {
    int main = -1;
    double most = 0;
    long placed = 0, unmatched = -1;
    for (int tr = 0; tr < run->n_tracks; tr++) {
        if (run->tracks[tr].file != f)
            continue;
        if (run->tracks[tr].compute_us > most) {
            most = run->tracks[tr].compute_us;
            main = tr;
        }
        if (unmatched < 0)
            unmatched = run->tracks[tr].unmatched;
        for (long k = run->track_begin[tr]; k < run->track_begin[tr + 1]; k++)
            placed += run->spans[run->order[k]].phase >= 0;
    }
    if (main < 0 && placed == 0) {
        if (unmatched >= 0)
            return unplaced(run, unmatched, ", and nothing else in the file is placed either");
        return errmsg_set(run->err, run->errlen, "%s: no events with a duration (\"X\", or \"B\" and \"E\"): nothing to "
                          "place", run->files[f].path);
    }
    if (main < 0)
        return overlay(run, f, rank, t);
    if (run->tracks[main].unmatched >= 0)
        return unplaced(run, run->tracks[main].unmatched, " on the main thread");
    tiling g = { .rank = rank, .examples = examples, .cap = placed + 1 };
    g.step_t0 = malloc(sizeof *g.step_t0 * (size_t)g.cap);
    if (!g.step_t0)
        return errmsg_set(run->err, run->errlen, "out of memory");
    long rc = tile(run, main, t, &g) || background(run, f, main, t, &g) ? -1 : g.steps;
    free(g.step_t0);
    return rc;
}
