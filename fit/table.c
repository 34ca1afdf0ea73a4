/* table — a calibration from a table of measured throughputs (table.h). */
#include "fit/table.h"
#include "fit/fit_parts.h"

#include "util/errmsg.h"

#include <errno.h>
#include <gsl/gsl_fit.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Reading */

enum { COL_WORKERS, COL_MACHINES, COL_BATCH, COL_THROUGHPUT, COL_STD, COL_SHARDS, COLS };
static const char *const col_names[COLS] = { "workers", "machines", "local_batch", "throughput", "std", "shards" };

/* The header's columns: where each named one is (-1: absent); 0, or -1 with err. */
static int read_header(const char *path, long line, char *text, int where[COLS], int *n_fields, char *err,
                       int errlen) {
    for (int c = 0; c < COLS; c++)
        where[c] = -1;
    text[strcspn(text, "\r\n")] = '\0';
    int i = 0;
    for (char *f = text; f; i++) {
        char *next = strchr(f, ',');
        if (next)
            *next++ = '\0';
        while (*f == ' ')
            f++;
        for (int c = 0; c < COLS; c++)
            if (strcmp(f, col_names[c]) == 0)
                where[c] = i;
        f = next;
    }
    *n_fields = i;
    for (int c = 0; c <= COL_THROUGHPUT; c++)
        if (where[c] < 0)
            return errmsg_set(err, errlen, "%s: line %ld: the header has no column '%s' (expected "
                              "workers,machines,local_batch,throughput[,std][,shards])", path, line, col_names[c]);
    return 0;
}

/* Field f of a row as a number; empty fields of the optional columns read as 0. */
static int field_number(const char *path, long line, const char *name, const char *f, bool optional, double *out,
                        char *err, int errlen) {
    while (*f == ' ')
        f++;
    if (*f == '\0' && optional) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(f, &end);
    while (*end == ' ' || *end == '\r' || *end == '\n')
        end++;
    if (end == f || *end != '\0' || errno || !isfinite(v) || v < 0)
        return errmsg_set(err, errlen, "%s: line %ld: %s: expected a number >= 0, got '%s'", path, line, name, f);
    *out = v;
    return 0;
}

static int whole(const char *path, long line, const char *name, double v, char *err, int errlen) {
    if (v < 1 || v > 1e6 || v != floor(v))
        return errmsg_set(err, errlen, "%s: line %ld: %s: expected a whole number >= 1, got %g", path, line, name, v);
    return 0;
}

/* One data line into r; 0, or -1 with err. */
static int read_row(const char *path, long line, char *text, const int where[COLS], int n_fields, table_row *r,
                    char *err, int errlen) {
    text[strcspn(text, "\r\n")] = '\0';
    char *fields[64];
    int n = 0;
    for (char *p = text;; p++) { /* split on commas, keeping empty fields */
        if (n < 64)
            fields[n++] = p;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    if (n != n_fields)
        return errmsg_set(err, errlen, "%s: line %ld: %d fields, the header has %d", path, line, n, n_fields);
    double v[COLS] = { 0 };
    for (int c = 0; c < COLS; c++)
        if (where[c] >= 0 && field_number(path, line, col_names[c], fields[where[c]], c >= COL_STD, &v[c], err, errlen))
            return -1;
    if (whole(path, line, "workers", v[COL_WORKERS], err, errlen) ||
        whole(path, line, "machines", v[COL_MACHINES], err, errlen))
        return -1;
    if (v[COL_MACHINES] > v[COL_WORKERS])
        return errmsg_set(err, errlen, "%s: line %ld: %g machines for %g workers: a machine without a worker", path,
                          line, v[COL_MACHINES], v[COL_WORKERS]);
    if (!(v[COL_BATCH] > 0) || !(v[COL_THROUGHPUT] > 0))
        return errmsg_set(err, errlen, "%s: line %ld: local_batch and throughput must be > 0", path, line);
    if (where[COL_SHARDS] >= 0 && v[COL_SHARDS] != 0 && whole(path, line, "shards", v[COL_SHARDS], err, errlen))
        return -1;
    *r = (table_row){ .workers = (int)v[COL_WORKERS], .machines = (int)v[COL_MACHINES], .local_batch = v[COL_BATCH],
                      .throughput = v[COL_THROUGHPUT], .std = v[COL_STD],
                      .shards = v[COL_SHARDS] >= 1 ? (int)v[COL_SHARDS] : 1, .line = line };
    return 0;
}

static bool blank_or_comment(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return *s == '#' || *s == '\0' || *s == '\n' || *s == '\r';
}

int table_read(const char *path, table *out, char *err, int errlen) {
    *out = (table){ 0 };
    FILE *f = fopen(path, "r");
    if (!f)
        return errmsg_set(err, errlen, "%s: %s", path, strerror(errno));
    char text[4096];
    long line = 0;
    int where[COLS], n_fields = 0, rc = 0;
    bool header = false;
    while (rc == 0 && fgets(text, sizeof text, f)) {
        line++;
        if (!strchr(text, '\n') && !feof(f)) {
            rc = errmsg_set(err, errlen, "%s: line %ld: longer than %zu bytes", path, line, sizeof text - 1);
            break;
        }
        if (blank_or_comment(text))
            continue;
        if (!header) {
            rc = read_header(path, line, text, where, &n_fields, err, errlen);
            header = true;
            continue;
        }
        if (out->n == TABLE_MAX_ROWS) {
            rc = errmsg_set(err, errlen, "%s: line %ld: more than %d rows", path, line, TABLE_MAX_ROWS);
            break;
        }
        if (!out->rows && !(out->rows = calloc(TABLE_MAX_ROWS, sizeof *out->rows)))
            rc = errmsg_set(err, errlen, "%s: out of memory", path);
        else
            rc = read_row(path, line, text, where, n_fields, &out->rows[out->n++], err, errlen);
    }
    if (rc == 0 && ferror(f))
        rc = errmsg_set(err, errlen, "%s: read error", path);
    fclose(f);
    if (rc == 0 && !header)
        rc = errmsg_set(err, errlen, "%s: no header line (workers,machines,local_batch,throughput)", path);
    if (rc == 0 && out->n == 0)
        rc = errmsg_set(err, errlen, "%s: no rows after the header", path);
    if (rc)
        table_free(out);
    return rc;
}

void table_free(table *t) {
    free(t->rows);
    *t = (table){ 0 };
}

table_opts table_opts_default(void) {
    return (table_opts){ .topology = JOB_TOPO_ALLREDUCE, .algorithm = COSTMODEL_ALLREDUCE_EITHER,
                         .intra_latency_s = 5e-6, .net_latency_s = 25e-6, .row_noise = 0.03 };
}

/* ---------------------------------------------------------------------------------- */
/* The model of a row */

double table_row_step_s(const table_row *r) { return (double)r->workers * r->local_batch / r->throughput; }

/* The job a row ran: K workers, weak scaling, one step of b examples per epoch. */
static job_config row_config(const table_row *r, job_topology topology) {
    return (job_config){ .workers = r->workers, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                         .topology = topology, .master = JOB_MASTER_WORKER, .batch_per_worker = true,
                         .examples = (long)ceil(r->workers * r->local_batch), .batch = (long)r->local_batch,
                         .epochs = 1 };
}

double table_predict_step_s(const costmodel_params *p, const table_row *r, job_topology topology) {
    costmodel_params q = *p;
    q.machines = r->machines;
    q.host_cores = ceil((double)r->workers / r->machines); /* the row's workers a machine */
    if (topology == JOB_TOPO_PS)
        q.ps_shards = r->shards;
    const job_config c = row_config(r, topology);
    return costmodel_round_time(&q, &c);
}

/* ---------------------------------------------------------------------------------- */
/* The fit */

typedef struct {
    const table *t;
    const table_opts *o;
    const double *step_s;    /* (n) the rows' step times (perturbed for the standard errors) */
} fit_input;

/* What the fit gives, as a vector for the delta method. */
enum { TH_C0, TH_C1, TH_ALPHA, TH_BETA, TH_NET_ALPHA, TH_NET_BETA, TH_COUNT };

typedef struct {
    double th[TH_COUNT];
    bool batch_split, intra_rows, intra_alpha, net_rows, net_alpha;
} fit_out;

/* A row's relative spread: its std over its throughput, or row_noise where it gives none. */
static double row_spread(const table_row *r, const table_opts *o) {
    return r->std > 0 ? r->std / r->throughput : o->row_noise;
}

static bool is_single(const table_row *r) { return r->workers == 1; }
static bool is_intra(const table_row *r) { return r->workers >= 2 && r->machines == 1; }
static bool is_net(const table_row *r) { return r->machines >= 2; }

/* c0, c1 from the one-worker rows: least squares over two local batches or more (c0 ≥ 0),
 * else through the origin. -1 without a one-worker row. */
static int fit_step(const fit_input *in, fit_out *out) {
    double b[TABLE_MAX_ROWS], t[TABLE_MAX_ROWS];
    int n = 0;
    bool split = false;
    for (int i = 0; i < in->t->n; i++)
        if (is_single(&in->t->rows[i])) {
            b[n] = in->t->rows[i].local_batch;
            t[n] = in->step_s[i];
            split |= n > 0 && b[n] != b[0];
            n++;
        }
    if (n == 0)
        return -1;
    double c0 = 0, c1 = 0, cov00, cov01, cov11, sumsq;
    if (split)
        gsl_fit_linear(b, 1, t, 1, (size_t)n, &c0, &c1, &cov00, &cov01, &cov11, &sumsq);
    if (!split || c0 < 0 || c1 < 0) {
        gsl_fit_mul(b, 1, t, 1, (size_t)n, &c1, &cov11, &sumsq);
        c0 = 0;
    }
    out->th[TH_C0] = c0;
    out->th[TH_C1] = c1;
    out->batch_split = split;
    return 0;
}

/* The exchange of row r at params p, less its step: what the fit of a link explains. */
static double exchange_s(const costmodel_params *p, const table_row *r, job_topology topology) {
    return table_predict_step_s(p, r, topology) - (p->c0_s + p->c1_s * r->local_batch);
}

/* Fits y ≈ x0·a + x1·b, x ≥ 0, over n rows (weights w: 1/σ² of each row), or x1 alone
 * with x0 given when `both` is false, the rows cannot tell the two apart, or x0 stands
 * less than min_t standard errors (its weighted fit's, from the rows' stated spread) clear
 * of 0. Returns whether x0 was fitted. */
static bool fit_two(const double *a, const double *b, const double *y, const double *w, int n, bool both,
                    double min_t, double *x0, double *x1) {
    double c[2], se[2];
    size_t rank;
    if (both && n >= 2 && fit_weighted_two(a, b, y, w, n, c, se, &rank) == 0 && rank == 2 && c[0] >= min_t * se[0] &&
        c[1] >= 0) {
        *x0 = c[0];
        *x1 = c[1];
        return true;
    }
    /* x1 alone (weighted least squares through the origin), x0 as given. */
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        num += w[i] * b[i] * (y[i] - *x0 * a[i]);
        den += w[i] * b[i] * b[i];
    }
    *x1 = den > 0 ? fmax(0.0, num / den) : 0.0;
    return false;
}

/* Which link a fit varies: the machine's own (link[topology]) or the fabric (net). */
typedef enum { LINK_MACHINE, LINK_FABRIC } which_link;

static costmodel_params with_link(costmodel_params p, job_topology topo, which_link which, double alpha, double beta) {
    costmodel_link *l = which == LINK_FABRIC ? &p.net : &p.link[topo];
    *l = (costmodel_link){ alpha, beta };
    return p;
}

/* The design of one link's (α, β) over the rows of a kind: what each row's exchange
 * gains per unit of each (the exchange is linear in both; the fabric's per-byte cost is
 * max(machine's, fabric's), so it is varied above beta0, the machine's), and what is left
 * to explain, y = t − step − the exchange at (0, beta0). Weights 1/σ². Returns the rows. */
static int link_rows(const fit_input *in, const costmodel_params *base, bool (*kind)(const table_row *),
                     which_link which, double beta0, double *a, double *b, double *y, double *w) {
    const job_topology topo = in->o->topology;
    const double h_alpha = 1e-3, h_beta = fmax(beta0, 1e-12);
    const costmodel_params at0 = with_link(*base, topo, which, 0, beta0);
    const costmodel_params da = with_link(*base, topo, which, h_alpha, beta0);
    const costmodel_params db = with_link(*base, topo, which, 0, beta0 + h_beta);
    int n = 0;
    for (int i = 0; i < in->t->n; i++) {
        const table_row *r = &in->t->rows[i];
        if (!kind(r))
            continue;
        const double x0 = exchange_s(&at0, r, topo);
        a[n] = (exchange_s(&da, r, topo) - x0) / h_alpha;
        b[n] = (exchange_s(&db, r, topo) - x0) / h_beta;
        y[n] = in->step_s[i] - (base->c0_s + base->c1_s * r->local_batch) - x0;
        const double sd = in->step_s[i] * row_spread(r, in->o);
        w[n] = 1.0 / (sd * sd);
        n++;
    }
    return n;
}

/* The rows' fit at their step times in->step_s: *out, and the params it gives in *p. */
static int fit_all(const fit_input *in, costmodel_params *p, fit_out *out) {
    *out = (fit_out){ 0 };
    if (fit_step(in, out))
        return -1;
    p->c0_s = out->th[TH_C0];
    p->c1_s = out->th[TH_C1];
    const job_topology topo = in->o->topology;
    double a[TABLE_MAX_ROWS], b[TABLE_MAX_ROWS], y[TABLE_MAX_ROWS], w[TABLE_MAX_ROWS];
    /* The machine's own link, from the rows inside one machine (the fabric is not used). */
    double alpha = in->o->intra_latency_s, beta = 0;
    int n = link_rows(in, p, is_intra, LINK_MACHINE, 0, a, b, y, w);
    out->intra_rows = n > 0;
    if (n > 0)
        out->intra_alpha = fit_two(a, b, y, w, n, true, 0.0, &alpha, &beta);
    p->link[topo] = (costmodel_link){ alpha, beta };
    out->th[TH_ALPHA] = alpha;
    out->th[TH_BETA] = beta;
    /* The fabric: beyond the machine's link, never faster than it. Its latency is paid
     * 2(M − 1) times in a hierarchical all-reduce and 2(K − 1) in a ring, at M and K far
     * beyond the rows', and two multi-machine counts fit any latency exactly: one the
     * rows' spread leaves indistinguishable from 0 would be extrapolated as if measured.
     * So it is fitted only where it stands FABRIC_ALPHA_MIN_T standard errors clear of 0
     * (the 95% rule), else stated (experiments/published/README.md, Piz Daint). */
    enum { FABRIC_ALPHA_MIN_T = 2 };
    double net_alpha = in->o->net_latency_s, dbeta = 0;
    n = link_rows(in, p, is_net, LINK_FABRIC, beta, a, b, y, w);
    out->net_rows = n > 0;
    if (n > 0)
        out->net_alpha = fit_two(a, b, y, w, n, true, FABRIC_ALPHA_MIN_T, &net_alpha, &dbeta);
    p->net = (costmodel_link){ net_alpha, beta + dbeta };
    out->th[TH_NET_ALPHA] = net_alpha;
    out->th[TH_NET_BETA] = beta + dbeta;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Standard errors, notes, the calibration */

static void note(calibration_note *notes, int *n, int max, const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void note(calibration_note *notes, int *n, int max, const char *param, const char *fmt, ...) {
    if (*n >= max)
        return;
    snprintf(notes[*n].param, sizeof notes[*n].param, "%s", param);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(notes[*n].text, sizeof notes[*n].text, fmt, ap);
    va_end(ap);
    (*n)++;
}

/* What the options say of the parameters before any fit: devices as workers, the exchange,
 * the model's bytes, its largest tensor and the line under the fabric. */
static costmodel_params params_of_opts(const table_opts *o) {
    costmodel_params q = { 0 };
    q.worker_device = 1;
    q.allreduce_algorithm = o->algorithm;
    q.ps_separate = o->ps_separate;
    q.model_bytes = o->model_bytes;
    q.ps_largest_bytes = o->topology == JOB_TOPO_PS ? o->largest_bytes : 0.0;
    q.net_line_beta_s_per_byte = o->line_rate_bytes_per_s > 0 ? 1.0 / o->line_rate_bytes_per_s : 0.0;
    return q;
}

/* The delta method over the rows' step times: var θ_j = Σ_i (∂θ_j/∂t_i)²·σ_i²; the c0/c1
 * covariance likewise. */
static void standard_errors(const fit_input *in, const fit_out *at, double se[TH_COUNT], double *cov01) {
    const int n = in->t->n;
    double *t = malloc(sizeof *t * (size_t)n);
    double var[TH_COUNT] = { 0 }, cov = 0;
    if (!t)
        return;
    memcpy(t, in->step_s, sizeof *t * (size_t)n);
    for (int i = 0; i < n; i++) {
        const table_row *r = &in->t->rows[i];
        const double sd = t[i] * row_spread(r, in->o), h = 1e-6 * t[i];
        fit_input moved = *in;
        moved.step_s = t;
        t[i] += h;
        costmodel_params q = params_of_opts(in->o);
        fit_out up;
        if (fit_all(&moved, &q, &up) == 0) {
            double d[TH_COUNT];
            for (int j = 0; j < TH_COUNT; j++) {
                d[j] = (up.th[j] - at->th[j]) / h;
                var[j] += d[j] * d[j] * sd * sd;
            }
            cov += d[TH_C0] * d[TH_C1] * sd * sd;
        }
        t[i] -= h;
    }
    for (int j = 0; j < TH_COUNT; j++)
        se[j] = sqrt(var[j]);
    *cov01 = cov;
    free(t);
}

/* The median relative spread of the rows (std/throughput; row_noise where not given). */
static double median_spread(const table *t, const table_opts *o) {
    double v[TABLE_MAX_ROWS];
    for (int i = 0; i < t->n; i++)
        v[i] = row_spread(&t->rows[i], o);
    gsl_sort(v, 1, (size_t)t->n);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)t->n);
}

/* What the fit took from o rather than the rows, and why: fit->notes. */
static void write_notes(const table *t, const table_opts *o, const calibration *cal, const fit_out *f,
                        calibration_fit *fit) {
    const costmodel_params *p = &cal->params;
    calibration_note *notes = fit->notes;
    int *n_notes = &fit->n_notes;
    const int max_notes = CALIBRATION_MAX_NOTES;
    const char *alpha_name = o->topology == JOB_TOPO_PS ? "alpha_ps" : "alpha_allreduce";
    const char *beta_name = o->topology == JOB_TOPO_PS ? "beta_ps" : "beta_allreduce";
    if (!f->batch_split)
        note(notes, n_notes, max_notes, "c0", "one local batch in the one-worker rows: the step's fixed part is not "
             "separated (c0 = 0, c1 = step/b), so predictions hold at that local batch");
    if (!f->intra_rows)
        note(notes, n_notes, max_notes, beta_name, "no row of several workers inside one machine: the machine's own "
             "link is taken as free (0 s/byte)");
    if (!f->intra_alpha)
        note(notes, n_notes, max_notes, alpha_name, "stated, not fitted (%g us, --intra-latency; drawn at +-%g%%): the "
             "rows inside one machine do not tell a message's latency from its bytes", o->intra_latency_s * 1e6,
             100 * TABLE_STATED_LATENCY_SE);
    if (!f->net_rows)
        note(notes, n_notes, max_notes, "net_beta", "no row across machines: the fabric is as fast as a machine's own "
             "link; give --cluster MxG@RATE to predict across machines");
    if (!f->net_alpha)
        note(notes, n_notes, max_notes, "net_alpha", "stated, not fitted (%g us, --latency; drawn at +-%g%%): the "
             "multi-machine rows give the fabric's effective rate, not its latency (one row, rows of one shape, or a "
             "fitted latency within 2 standard errors of 0)", o->net_latency_s * 1e6, 100 * TABLE_STATED_LATENCY_SE);
    if (p->net_line_beta_s_per_byte > 0)
        note(notes, n_notes, max_notes, "net_line_beta", "stated (--line-rate %.4g Gbit/s), not fitted: the busiest "
             "machine's link moves no more a second however much of a parameter server's exchange hides under the "
             "steps; drawn at +-%g%% (a nominal rate)", 8e-9 * o->line_rate_bytes_per_s, 100 * TABLE_LINE_RATE_SE);
    else if (o->topology == JOB_TOPO_PS && cal->range_machines >= 2)
        note(notes, n_notes, max_notes, "net_line_beta", "no line rate stated (--line-rate): a parameter server's "
             "busiest link is paced by the effective rate the rows show, whose exchange mostly hides under the steps; "
             "a large cluster whose busiest shard outgrows the step is predicted fast");
    if (o->topology == JOB_TOPO_PS)
        note(notes, n_notes, max_notes, "ps_largest_bytes", o->largest_bytes > 0 ? "stated (--largest-tensor): the "
             "largest tensor sits whole on one shard, which receives it from every machine" : "not stated "
             "(--largest-tensor): the shards are taken to hold even shares of the model");
    if (p->model_cv > 0)
        note(notes, n_notes, max_notes, "model_cv", "the model misses its own rows by %.2g%% beyond their spread (the "
             "rms over the rows left over beyond the parameters fitted; the verdict names the rows): every "
             "prediction's interval carries it", 100 * p->model_cv);
    if (!(t->rows[0].std > 0))
        note(notes, n_notes, max_notes, "run_cv", "the rows give no std: every row is taken to spread by %g (the "
             "interval's run-to-run part and the parameters' standard errors; --row-noise)", o->row_noise);
}

/* ln(model/measured) of row i: the model's miss of a row it was fitted on. */
static double row_residual(const table *t, const table_opts *o, const costmodel_params *p, int i) {
    const table_row *r = &t->rows[i];
    return log(table_predict_step_s(p, r, o->topology) / table_row_step_s(r));
}

/* The parameters the rows fitted (not stated), for the rows left over. */
static int fitted_count(const fit_out *f) {
    return 1 + f->batch_split + (f->intra_rows ? 1 + f->intra_alpha : 0) + (f->net_rows ? 1 + f->net_alpha : 0);
}

/* model_cv of a table: how far the model misses its own rows beyond their spread. The
 * residuals ln(model/measured) of rows that only noise moves sum to about (rows left over
 * beyond the parameters fitted) × a row's variance, so what is above it, per row left over
 * (at least one: rows the model's bounds keep out of its reach miss even where they are no
 * more than the parameters), is the model's own. 0 where the rows are within their spread.
 * Every prediction's interval carries it, as a traced calibration's carries its left-out
 * error. */
static double rows_misfit_cv(const table *t, const table_opts *o, const costmodel_params *p, const fit_out *f) {
    double sum_e2 = 0, sum_s2 = 0;
    for (int i = 0; i < t->n; i++) {
        const double e = row_residual(t, o, p, i), s = row_spread(&t->rows[i], o);
        sum_e2 += e * e;
        sum_s2 += s * s;
    }
    const int left_over = t->n - fitted_count(f);
    const double excess = sum_e2 - (left_over > 0 ? left_over : 0) * sum_s2 / t->n;
    return excess > 0 ? sqrt(excess / (left_over > 1 ? left_over : 1)) : 0.0;
}

/* Appends to buf what row r misses by (z of its spreads), and why where the model's bounds
 * say: a step shorter than one worker's, or a fabric faster than the machine's link. */
static void describe_miss(char *buf, size_t cap, const table_row *r, const table_opts *o, const costmodel_params *p,
                          double z) {
    const double m = table_row_step_s(r), model = table_predict_step_s(p, r, o->topology);
    const double alone_s = p->c0_s + p->c1_s * r->local_batch;
    char why[320] = "";
    if (r->workers >= 2 && m < alone_s * (1 - TABLE_VERDICT_SPREADS * row_spread(r, o)))
        snprintf(why, sizeof why, ": shorter than one worker's step at its local batch (%.4g s), which no exchange "
                 "makes (superlinear scaling: were the rows measured alike?)", alone_s);
    else if (r->machines >= 2 && model > m && p->net.beta_s_per_byte <= p->link[o->topology].beta_s_per_byte)
        snprintf(why, sizeof why, ": its exchange across machines would have to cost less than the one machine's "
                 "rows show, and the fabric is never faster than a machine's own link (did those rows pay for "
                 "something that does not grow with machines, such as an input pipeline?)");
    const size_t used = strlen(buf);
    snprintf(buf + used, cap - used, "%sline %ld (K = %d on %d machine%s) measured %.4g s a step, the model's nearest "
             "%.4g s (%+.1f%%, %.1f of its spreads)%s", used ? "; " : "", r->line, r->workers, r->machines,
             r->machines == 1 ? "" : "s", m, model, 100 * (model - m) / m, z, why);
}

/* The rows' own verdict (fit/verdict.h's, for a table): poor where a row lies more than
 * TABLE_VERDICT_SPREADS of its spread from the model's step for it. Exactly fitted rows
 * cannot miss, but the model's bounds can make it miss: an exchange is never negative, a
 * link never faster than the machine's, so a row that scales better than one worker does
 * (superlinear) or a fabric faster than the machine's bus is out of its reach, and every
 * prediction from such rows rests on terms the rows contradict. Good only with rows left
 * over beyond the parameters fitted; otherwise not judged. */
static void judge_rows(const table *t, const table_opts *o, const costmodel_params *p, const fit_out *f,
                       calibration_fit *fit) {
    char misses[sizeof fit->verdict - 160] = ""; /* room for the head before it */
    int missed = 0, worst = 0;
    double worst_z = 0;
    for (int i = 0; i < t->n; i++) {
        const double z = fabs(row_residual(t, o, p, i)) / row_spread(&t->rows[i], o);
        if (z > worst_z)
            worst_z = z, worst = i;
        if (z > TABLE_VERDICT_SPREADS) {
            describe_miss(misses, sizeof misses, &t->rows[i], o, p, z);
            missed++;
        }
    }
    fit->has_verdict = true;
    fit->verdict_poor = missed > 0;
    const int fitted = fitted_count(f);
    if (missed)
        snprintf(fit->verdict, sizeof fit->verdict, "%d row%s the model cannot reach within %d of their spreads: %s",
                 missed, missed == 1 ? "" : "s", TABLE_VERDICT_SPREADS, misses);
    else if (t->n <= fitted)
        snprintf(fit->verdict, sizeof fit->verdict, "not judged: %d row%s fit %d parameter%s exactly, none is left "
                 "over to test the model against", t->n, t->n == 1 ? "" : "s", fitted, fitted == 1 ? "" : "s");
    else
        snprintf(fit->verdict, sizeof fit->verdict, "good: every row within %d of its spreads of the model (%d rows, "
                 "%d parameters fitted; the farthest, line %ld, at %.1f)", TABLE_VERDICT_SPREADS, t->n, fitted,
                 t->rows[worst].line, worst_z);
}

int table_fit(const table *t, const table_opts *o, calibration *cal, calibration_fit *out, char *err, int errlen) {
    if (!(o->model_bytes > 0))
        return errmsg_set(err, errlen, "the bytes exchanged a step are needed (--model-bytes SIZE)");
    double *step = malloc(sizeof *step * (size_t)t->n);
    if (!step)
        return errmsg_set(err, errlen, "out of memory");
    int g_max = 1, k_max = 1, m_max = 1;
    for (int i = 0; i < t->n; i++) {
        const table_row *r = &t->rows[i];
        step[i] = table_row_step_s(r);
        g_max = fmax(g_max, ceil((double)r->workers / r->machines));
        k_max = r->workers > k_max ? r->workers : k_max;
        m_max = r->machines > m_max ? r->machines : m_max;
    }
    *cal = (calibration){ 0 };
    costmodel_params *p = &cal->params;
    *p = params_of_opts(o);
    fit_input in = { .t = t, .o = o, .step_s = step };
    fit_out fit;
    *out = (calibration_fit){ 0 };
    if (fit_all(&in, p, &fit)) {
        free(step);
        return errmsg_set(err, errlen, "no row with one worker (workers = 1): the step time is not known");
    }
    p->host_cores = g_max;
    if (o->topology == JOB_TOPO_PS) /* sharded servers (one shard unless a prediction says more) */
        p->ps_shards = 1;
    p->run_cv = median_spread(t, o);
    double se[TH_COUNT] = { 0 };
    standard_errors(&in, &fit, se, &cal->cov_c0_c1);
    free(step);
    calibration_stderr *e = &cal->stderr_;
    e->c0_s = se[TH_C0];
    e->c1_s = se[TH_C1];
    *param_se(e, o->topology == JOB_TOPO_PS ? PARAM_ALPHA_PS : PARAM_ALPHA_ALLREDUCE) =
        fit.intra_alpha ? se[TH_ALPHA] : TABLE_STATED_LATENCY_SE * p->link[o->topology].alpha_s;
    *param_se(e, o->topology == JOB_TOPO_PS ? PARAM_BETA_PS : PARAM_BETA_ALLREDUCE) = se[TH_BETA];
    e->net_alpha = fit.net_alpha ? se[TH_NET_ALPHA] : TABLE_STATED_LATENCY_SE * p->net.alpha_s;
    e->net_beta = se[TH_NET_BETA];
    e->net_line_beta = TABLE_LINE_RATE_SE * p->net_line_beta_s_per_byte;
    cal->uncalibrated[o->topology == JOB_TOPO_PS ? JOB_TOPO_ALLREDUCE : JOB_TOPO_PS] = true;
    cal->range_workers = k_max;
    cal->range_machines = m_max;
    /* The workload: the one-worker rows' local batch, 100 steps of the largest row. */
    for (int i = 0; i < t->n && !cal->has_workload; i++)
        if (t->rows[i].workers == 1) {
            cal->has_workload = true;
            cal->batch = (long)t->rows[i].local_batch;
            cal->examples = 100L * k_max * cal->batch;
            cal->epochs = 1;
        }
    p->model_cv = rows_misfit_cv(t, o, p, &fit);
    write_notes(t, o, cal, &fit, out);
    judge_rows(t, o, p, &fit, out);
    return 0;
}
