/* netfit — per-kind rates from the traces' layer times (netfit.h). */
#include "fit/netfit.h"

#include "fit/fit.h"
#include "fit/nnls.h"
#include "trace/traceinfo.h"

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { COL_FLOP, COL_BYTE, COL_STEP_BYTE, COL_LAYER_STEP, COLS };
static const char *const col_name[COLS] = { "per-FLOP", "per-byte", "per-step-byte", "per-layer-step" };

/* The runs whose layer times are an idle core's. */
static bool usable(const trace *t) {
    return t->run.layers.has && t->run.config.cores == 1 && !traceinfo_shares_cores(&t->run) &&
           strcmp(t->run.net, FIT_COMMBENCH_NET) != 0;
}

static void row_of(const trace_layers *l, int i, double x[COLS]) {
    const network_layer *y = &l->cost.layer[i];
    x[COL_FLOP] = y->flops * l->examples;
    x[COL_BYTE] = y->bytes * l->examples;
    x[COL_STEP_BYTE] = y->step_bytes * (double)l->steps;
    x[COL_LAYER_STEP] = (double)l->steps;
}

/* The median of v[0..m-1] (sorted in place); 0 when m = 0. */
static double median_or_zero(double *v, int m) {
    if (m == 0)
        return 0.0;
    gsl_sort(v, 1, (size_t)m);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)m);
}

/* Seconds per FLOP of kind k's engine: in each usable run the fastest layer of the kind,
 * the median over the runs; 0 when no layer of the kind does FLOPs. */
static double engine_s_per_flop(trace *const *tr, int n, network_kind k) {
    double best[4096];
    int m = 0;
    for (int r = 0; r < n && m < 4096; r++) {
        if (!usable(tr[r]))
            continue;
        const trace_layers *l = &tr[r]->run.layers;
        double run_best = 0;
        for (int i = 0; i < l->cost.n; i++) {
            const double flops = l->cost.layer[i].flops * l->examples;
            if (l->cost.layer[i].kind != k || network_layer_idle(&l->cost.layer[i]) || !(l->time_s[i] > 0) ||
                !(flops > 0))
                continue;
            const double s = l->time_s[i] / flops;
            run_best = run_best > 0 && run_best < s ? run_best : s;
        }
        if (run_best > 0)
            best[m++] = run_best;
    }
    return median_or_zero(best, m);
}

/* Seconds per FLOP of the probe's sgemm, the median over the usable runs of the faster of
 * their two probes; 0 where no run has one. */
static double probe_s_per_flop(trace *const *tr, int n) {
    double t[4096];
    int m = 0;
    for (int r = 0; r < n && m < 4096; r++) {
        const trace_host_speed *h = &tr[r]->run.speed;
        if (usable(tr[r]) && h->has && h->probe_before_s > 0 && h->probe_after_s > 0)
            t[m++] = fmin(h->probe_before_s, h->probe_after_s);
    }
    return median_or_zero(t, m) / TRACE_PROBE_FLOPS;
}

/* The rows of kind k: x (rows × COLS) and y, y less what the FLOPs cost at s_per_flop
 * (0: fitted); how many. */
static int rows_of_kind(trace *const *tr, int n, network_kind k, double s_per_flop, gsl_matrix *x, gsl_vector *y) {
    int m = 0;
    for (int r = 0; r < n; r++) {
        if (!usable(tr[r]))
            continue;
        const trace_layers *l = &tr[r]->run.layers;
        for (int i = 0; i < l->cost.n && m < (int)x->size1; i++) {
            if (l->cost.layer[i].kind != k || network_layer_idle(&l->cost.layer[i]) || !(l->time_s[i] > 0))
                continue;
            double row[COLS];
            row_of(l, i, row);
            const double known = s_per_flop * row[COL_FLOP];
            if (s_per_flop > 0)
                row[COL_FLOP] = 0;
            for (int c = 0; c < COLS; c++)
                gsl_matrix_set(x, (size_t)m, (size_t)c, row[c] / l->time_s[i]); /* relative errors */
            gsl_vector_set(y, (size_t)m, 1.0 - known / l->time_s[i]);
            m++;
        }
    }
    return m;
}

/* NNLS of y on the columns in use[] (rows 0..m-1); drops the last column in use until the
 * rows can tell them apart. Rates into r[], what was dropped appended to note. */
static int solve_kind(const gsl_matrix *x, const gsl_vector *y, int m, bool use[COLS], double r[COLS],
                      const char *kind, char *note, int notelen) {
    for (;;) {
        int cols[COLS], p = 0;
        for (int c = 0; c < COLS; c++)
            if (use[c])
                cols[p++] = c;
        if (p == 0)
            return 0;
        gsl_matrix *A = gsl_matrix_alloc((size_t)m, (size_t)p);
        gsl_vector *b = gsl_vector_alloc((size_t)m);
        nnls_result *res = nnls_result_new(p);
        if (!A || !b || !res) {
            gsl_matrix_free(A), gsl_vector_free(b), nnls_result_free(res);
            snprintf(note, (size_t)notelen, "out of memory");
            return -1;
        }
        for (int i = 0; i < m; i++) {
            gsl_vector_set(b, (size_t)i, gsl_vector_get(y, (size_t)i));
            for (int j = 0; j < p; j++)
                gsl_matrix_set(A, (size_t)i, (size_t)j, gsl_matrix_get(x, (size_t)i, (size_t)cols[j]));
        }
        char err[256];
        const bool separable = m > p && nnls_rank(A) == p;
        const int rc = separable ? nnls_solve(A, b, res, err, sizeof err) : -1;
        if (rc == 0)
            for (int j = 0; j < p; j++)
                r[cols[j]] = gsl_vector_get(res->x, (size_t)j);
        gsl_matrix_free(A), gsl_vector_free(b), nnls_result_free(res);
        if (rc == 0)
            return 0;
        use[cols[p - 1]] = false; /* the last column in use goes: per step before per example */
        const size_t len = strlen(note);
        snprintf(note + len, (size_t)notelen - len, "%s%s: no %s rate (the runs cannot tell it apart)",
                 len ? "; " : "", kind, col_name[cols[p - 1]]);
    }
}

int netfit_traces(trace *const *traces, int n, calibration_network *out, char *note, int notelen) {
    memset(out, 0, sizeof *out);
    note[0] = '\0';
    const trace *first = NULL;
    int rows = 0;
    for (int r = 0; r < n; r++)
        if (usable(traces[r])) {
            first = first ? first : traces[r];
            rows += traces[r]->run.layers.cost.n;
        }
    if (!first || rows == 0) /* a "layers" object with an empty list times nothing */
        return 1;
    gsl_matrix *x = gsl_matrix_alloc((size_t)rows, COLS);
    gsl_vector *y = gsl_vector_alloc((size_t)rows);
    if (!x || !y) {
        gsl_matrix_free(x), gsl_vector_free(y);
        snprintf(note, (size_t)notelen, "out of memory");
        return -1;
    }
    int rc = 0;
    const double probe = probe_s_per_flop(traces, n);
    for (int k = 0; k < NETWORK_KINDS && rc == 0; k++) {
        /* fc runs on the probe's own kernel (OpenBLAS's sgemm), conv on oneDNN's: each FLOP
         * at its engine's speed. */
        const double s_per_flop =
            k == NETWORK_FC && probe > 0 ? probe : engine_s_per_flop(traces, n, (network_kind)k);
        const int m = rows_of_kind(traces, n, (network_kind)k, s_per_flop, x, y);
        bool use[COLS];
        for (int c = 0; c < COLS; c++) { /* a column no row has is not a rate of this kind */
            use[c] = false;
            for (int i = 0; i < m; i++)
                use[c] |= gsl_matrix_get(x, (size_t)i, (size_t)c) > 0;
        }
        double r[COLS] = { 0 };
        rc = m > 0 ? solve_kind(x, y, m, use, r, network_kind_name((network_kind)k), note, notelen) : 0;
        if (s_per_flop > 0 && (k == NETWORK_CONV || k == NETWORK_FC))
            r[COL_FLOP] = s_per_flop;
        out->rate[k] = (netcost_rates){ r[COL_FLOP], r[COL_BYTE], r[COL_STEP_BYTE], r[COL_LAYER_STEP] };
    }
    gsl_matrix_free(x), gsl_vector_free(y);
    if (rc)
        return -1;
    const trace_layers *l = &first->run.layers;
    snprintf(out->spec, sizeof out->spec, "%s", first->run.net);
    memcpy(out->input, l->input, sizeof out->input);
    out->cost = l->cost;
    out->transfer_cv = NETCOST_DEFAULT_TRANSFER_CV;
    out->known = true;
    return 0;
}
