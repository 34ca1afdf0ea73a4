/* efficiency_traces — the accuracy-curve fit's runs from traces (see efficiency.h). */
#include "fit/efficiency_fit.h"

#include "trace/traceinfo.h"
#include "util/errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1/N for the last "fcN" of a network spec (train/netspec.h), 0.1 without one. */
static double chance_of(const char *net) {
    const char *last = NULL;
    for (const char *p = strstr(net, "fc"); p; p = strstr(p + 2, "fc"))
        if (p == net || p[-1] == ',')
            last = p;
    long classes = last ? strtol(last + 2, NULL, 10) : 0;
    return classes >= 2 ? 1.0 / (double)classes : 0.1;
}

static bool same_schedule(const trace *a, const trace *b) {
    return a->run.config.examples == b->run.config.examples && a->run.config.epochs == b->run.config.epochs &&
           strcmp(a->run.net, b->run.net) == 0;
}

/* Each trace's accuracy points and τ, and the index of the group (a trace of it) with the
 * most points. */
typedef struct {
    traceinfo_accuracy_point **pts;
    long *n;
    double *staleness;
    int best;
    int no_staleness; /* stale traces left out: no params, and no update event with a staleness */
} curves;

/* τ of trace t (see the header): 0 for fresh gradients; with params the cost model's for its
 * configuration; else the mean its master measured; NAN when neither is known. */
static double staleness_of(const trace *t, const costmodel_params *params) {
    if (!efficiency_stale(&t->run.config))
        return 0;
    if (params)
        return costmodel_async_of(params, &t->run.config).staleness;
    traceinfo_async a;
    return traceinfo_async_of(t, &a) == 0 && a.updates > 0 ? a.staleness_mean : NAN;
}

static int read_curves(trace *const *traces, const char *const *names, int n, const costmodel_params *params,
                       curves *c, char *why, int whylen) {
    c->pts = calloc((size_t)n, sizeof *c->pts);
    c->n = calloc((size_t)n, sizeof *c->n);
    c->staleness = calloc((size_t)n, sizeof *c->staleness);
    c->best = -1;
    c->no_staleness = 0;
    if (!c->pts || !c->n || !c->staleness)
        return errmsg_set(why, whylen, "out of memory");
    for (int i = 0; i < n; i++) {
        char err[256];
        if (traceinfo_accuracy_curve(traces[i], &c->pts[i], &c->n[i], err, sizeof err))
            return errmsg_set(why, whylen, "%s: %s", names[i], err);
        long kept = 0; /* the points after the warm-up (see efficiency.h) */
        for (long p = 0; p < c->n[i]; p++)
            if (c->pts[i][p].epochs_seen >= EFFICIENCY_WARMUP_EPOCHS - 1e-9)
                c->pts[i][kept++] = c->pts[i][p];
        c->n[i] = kept >= 2 ? kept : 0; /* one point is no curve (a plan's one short epoch) */
        c->staleness[i] = c->n[i] > 0 ? staleness_of(traces[i], params) : 0;
        if (!isfinite(c->staleness[i])) {
            c->n[i] = 0;
            c->no_staleness++;
        }
    }
    long best_points = 0;
    for (int i = 0; i < n; i++) {
        long points = 0;
        for (int j = 0; j < n; j++)
            if (same_schedule(traces[i], traces[j]))
                points += c->n[j];
        if (c->n[i] > 0 && points > best_points) {
            best_points = points;
            c->best = i;
        }
    }
    return 0;
}

static void curves_free(curves *c, int n) {
    for (int i = 0; c->pts && i < n; i++)
        free(c->pts[i]);
    free(c->pts);
    free(c->n);
    free(c->staleness);
}

/* The fit over the best group's runs. */
static int fit_group(trace *const *traces, const char *const *names, int n, const curves *c, efficiency_model *out,
                     char *note, int notelen) {
    efficiency_run *runs = calloc((size_t)n, sizeof *runs);
    long total = 0;
    for (int i = 0; i < n; i++)
        total += c->n[i];
    double *buf = malloc(sizeof *buf * (size_t)(2 * total + 1));
    bool *subset = malloc(sizeof *subset * (size_t)(total + 1));
    int m = 0, left_out = 0, rc = -1;
    if (!runs || !buf || !subset) {
        errmsg_set(note, notelen, "out of memory");
        goto done;
    }
    long k = 0;
    for (int i = 0; i < n; i++) {
        if (c->n[i] == 0)
            continue;
        if (!same_schedule(traces[i], traces[c->best])) {
            left_out++;
            continue;
        }
        runs[m] = (efficiency_run){ names[i], traces[i]->run.config, buf + k, buf + total + k, subset + k, c->n[i],
                                    c->staleness[i] };
        for (long p = 0; p < c->n[i]; p++, k++) {
            buf[k] = c->pts[i][p].epochs_seen;
            buf[total + k] = c->pts[i][p].accuracy;
            subset[k] = c->pts[i][p].subset;
        }
        m++;
    }
    rc = efficiency_fit(runs, m, chance_of(traces[c->best]->run.net), out, note, notelen);
    if (rc == 0 && left_out > 0)
        snprintf(note, (size_t)notelen, "fitted on the %d runs of %ld examples x %d epochs; %d run%s with accuracy "
                 "points of other schedules (or data, or network) left out", m, out->examples, out->epochs, left_out,
                 left_out == 1 ? "" : "s");
done:
    free(runs);
    free(buf);
    free(subset);
    return rc;
}

int efficiency_fit_traces(trace *const *traces, const char *const *names, int n, const costmodel_params *params,
                          efficiency_model *out, char *note, int notelen) {
    memset(out, 0, sizeof *out);
    if (notelen > 0)
        note[0] = '\0';
    curves c;
    int rc = read_curves(traces, names, n, params, &c, note, notelen);
    if (rc == 0 && c.best < 0)
        rc = 1;
    else if (rc == 0)
        rc = fit_group(traces, names, n, &c, out, note, notelen);
    if (rc >= 0 && c.no_staleness > 0 && notelen > 0) {
        const size_t used = strlen(note);
        snprintf(note + used, (size_t)notelen - used, "%s%d async or hogwild run%s left out (no update event with a "
                 "staleness, and no time model to predict it)", used ? "; " : "", c.no_staleness,
                 c.no_staleness == 1 ? "" : "s");
    }
    curves_free(&c, n);
    return rc;
}
