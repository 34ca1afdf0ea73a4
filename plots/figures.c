#define _POSIX_C_SOURCE 200809L
#include "plots/figures.h"

#include "util/atomicfile.h"
#include "util/errmsg.h"

#include "trace/traceinfo.h"
#include "plots/gnuplot.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_SERIES = 6, PATH_LEN = 1024 };

/* OUT_DIR/data/NAME, creating the data folder. */
static int data_path(const char *out_dir, const char *name, char *path, char *err, int errlen) {
    char dir[PATH_LEN];
    if (snprintf(dir, sizeof dir, "%s/data", out_dir) >= (int)sizeof dir - 32)
        return errmsg_set(err, errlen, "%s: path too long", out_dir);
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        return errmsg_set(err, errlen, "%s: cannot create: %s", out_dir, strerror(errno));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return errmsg_set(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
    if (snprintf(path, PATH_LEN, "%s/%s", dir, name) >= PATH_LEN)
        return errmsg_set(err, errlen, "%s: path too long", out_dir);
    return 0;
}

/* A data file gnuplot reads, written atomically like every output (util/atomicfile.h): its
 * stream, with *af to commit (close_data) or abort; NULL with err. */
static FILE *open_data(const char *path, atomicfile **af, char *err, int errlen) {
    *af = atomicfile_open(path, err, errlen);
    return *af ? atomicfile_stream(*af) : NULL;
}

/* Renames the data file into place; frees af. 0, or -1 with err (a full disk, ...). */
static int close_data(atomicfile *af, char *err, int errlen) { return atomicfile_commit(af, err, errlen); }

/* The question each figure answers: its title's first line (the caller's title, which
 * says what and where, is the second). */
static const char *question_of(const char *name) {
    static const struct { const char *name, *question; } q[] = {
        { "speedup", "How much faster with more workers, and which sync mode scales?" },
        { "splits", "The same cores in all: is it better split into few workers or many?" },
        { "breakdown", "Where does the time go: start-up, compute, communication or waiting?" },
        { "timeline", "What does each worker do over time, measured against simulated?" },
        { "calibration", "Does the fitted model match the measured steps and synchronisations?" },
        { "accuracy", "How soon does each configuration reach an accuracy, measured against predicted?" },
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        if (strcmp(q[i].name, name) == 0)
            return q[i].question;
    return "";
}

/* Renders plots/NAME.gp with the common variables plus extra statements. */
static int render(const char *name, const char *title, const char *out_dir, const char *const *extra,
                  int n_extra, char *err, int errlen) {
    char script[PATH_LEN], base[PATH_LEN], full[700], qtitle[1400], qdir[2 * PATH_LEN];
    snprintf(script, sizeof script, "%s/%s.gp", gnuplot_scripts_dir(), name);
    snprintf(base, sizeof base, "%s/%s", out_dir, name);
    snprintf(full, sizeof full, "%s\n%s", question_of(name), title);
    gnuplot_quote(full, qtitle, sizeof qtitle);
    gnuplot_quote(gnuplot_scripts_dir(), qdir, sizeof qdir);
    char v_title[1500], v_dir[2 * PATH_LEN + 20];
    snprintf(v_title, sizeof v_title, "title='%s'", qtitle);
    snprintf(v_dir, sizeof v_dir, "scriptdir='%s'", qdir);
    const char *vars[16] = { v_title, v_dir };
    int n = 2;
    for (int i = 0; i < n_extra && n < 16; i++)
        vars[n++] = extra[i];
    return gnuplot_render(script, vars, n, base, err, errlen);
}

/* var='path' into buf of VAR_LEN bytes; paths are < PATH_LEN, so quoting fits. */
enum { VAR_LEN = 2 * PATH_LEN + 64 };
static void file_var(char *buf, const char *var, const char *path) {
    char q[2 * PATH_LEN];
    gnuplot_quote(path, q, sizeof q);
    if (snprintf(buf, VAR_LEN, "%s='%s'", var, q) >= VAR_LEN)
        buf[0] = '\0';
}

/* ---------------------------------------------------------------------------------- */
/* Series: one per (sync, topology) found in the predictions */

typedef struct {
    char sync[24];
    job_topology topology;
} series_key;

static int series_of(const prediction_row *rows, int n, series_key *keys) {
    int k = 0;
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < k && !(strcmp(keys[j].sync, rows[i].sync) == 0 && keys[j].topology == rows[i].topology))
            j++;
        if (j == k && k < MAX_SERIES) {
            snprintf(keys[k].sync, sizeof keys[k].sync, "%s", rows[i].sync);
            keys[k++].topology = rows[i].topology;
        }
    }
    return k;
}

static int in_series(const prediction_row *r, const series_key *s) {
    return strcmp(r->sync, s->sync) == 0 && r->topology == s->topology;
}

static int by_total_cores(const void *a, const void *b) {
    const prediction_row *x = a, *y = b;
    long cx = (long)x->workers * x->cores, cy = (long)y->workers * y->cores;
    if (cx != cy)
        return cx < cy ? -1 : 1;
    return (x->workers > y->workers) - (x->workers < y->workers);
}

static prediction_row *sorted_copy(const prediction_row *rows, int n) {
    prediction_row *copy = malloc(sizeof *copy * (size_t)(n > 0 ? n : 1));
    if (copy && n > 0) {
        memcpy(copy, rows, sizeof *copy * (size_t)n);
        qsort(copy, (size_t)n, sizeof *copy, by_total_cores);
    }
    return copy;
}

/* ---------------------------------------------------------------------------------- */
/* Figure 1 */

int figures_speedup(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                    const char *title, const char *out_dir, char *err, int errlen) {
    if (n_pred < 1)
        return errmsg_set(err, errlen, "speedup figure: no predictions to plot");
    series_key keys[MAX_SERIES];
    int ns = series_of(pred, n_pred, keys);
    prediction_row *p = sorted_copy(pred, n_pred), *m = sorted_copy(meas, n_meas);
    char pfile[PATH_LEN], mfile[PATH_LEN];
    int rc = -1;
    FILE *pf = NULL, *mf = NULL;
    atomicfile *pa = NULL, *ma = NULL;
    if (!p || !m) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    if (data_path(out_dir, "speedup-predicted.dat", pfile, err, errlen) ||
        data_path(out_dir, "speedup-measured.dat", mfile, err, errlen))
        goto done;
    if (!(pf = open_data(pfile, &pa, err, errlen)) || !(mf = open_data(mfile, &ma, err, errlen)))
        goto done;
    char names[MAX_SERIES * 256] = "";
    for (int s = 0; s < ns; s++) {
        /* The curve follows the series' smallest cores-per-worker: scaling by workers,
         * as the seed plotted it; other splits are figure 2's subject. */
        int tmin = 1 << 30;
        for (int i = 0; i < n_pred; i++)
            if (in_series(&p[i], &keys[s]) && p[i].cores < tmin)
                tmin = p[i].cores;
        fprintf(pf, "# %s %s, cores per worker %d\n", keys[s].sync, job_topology_name(keys[s].topology), tmin);
        for (int i = 0; i < n_pred; i++)
            if (in_series(&p[i], &keys[s]) && p[i].cores == tmin)
                fprintf(pf, "%d %.9g %.9g %.9g\n", p[i].workers * p[i].cores, p[i].speedup, p[i].ci_lo, p[i].ci_hi);
        fprintf(pf, "\n\n");
        int any = 0;
        fprintf(mf, "# %s %s measured, cores per worker %d\n", keys[s].sync,
                job_topology_name(keys[s].topology), tmin);
        for (int i = 0; i < n_meas; i++)
            if (in_series(&m[i], &keys[s]) && m[i].cores == tmin) {
                fprintf(mf, "%d %.9g %.9g %.9g\n", m[i].workers * m[i].cores, m[i].speedup, m[i].ci_lo, m[i].ci_hi);
                any = 1;
            }
        if (!any)
            fprintf(mf, "NaN NaN NaN NaN\n");
        fprintf(mf, "\n\n");
        char name[256];
        snprintf(name, sizeof name, "%s%s/%s", s ? " " : "", keys[s].sync, job_topology_name(keys[s].topology));
        strcat(names, name);
    }
    int closed_p = close_data(pa, err, errlen);
    pa = NULL;
    int closed_m = close_data(ma, err, errlen);
    ma = NULL;
    if (closed_p != closed_m) // one renamed into place, the other not: neither stays
        remove(closed_p ? mfile : pfile);
    if (closed_p || closed_m)
        goto done;
    /* Where the linear reference stops: a little above the highest speedup shown. */
    double top = 1.0;
    for (int i = 0; i < n_pred; i++)
        top = fmax(top, pred[i].speedup);
    for (int i = 0; i < n_meas; i++)
        top = fmax(top, meas[i].speedup);
    char v_data[VAR_LEN], v_meas[VAR_LEN], v_n[64], v_names[MAX_SERIES * 256 + 16], v_cap[64], v_x[96], v_has[32];
    snprintf(v_has, sizeof v_has, "hasmeas=%d", n_meas > 0);
    snprintf(v_cap, sizeof v_cap, "ycap=%.6g", top * 1.5 + 0.5);
    /* One core a worker throughout: the axis counts workers (a cluster's figure). */
    int one_core = 1;
    for (int i = 0; i < n_pred; i++)
        one_core &= pred[i].cores == 1;
    snprintf(v_x, sizeof v_x, "xlabel='%s'", one_core ? "workers K (one core each)" : "total cores K×T");
    file_var(v_data, "datafile", pfile);
    file_var(v_meas, "measfile", mfile);
    snprintf(v_n, sizeof v_n, "nseries=%d", ns);
    snprintf(v_names, sizeof v_names, "names='%s'", names);
    const char *extra[] = { v_data, v_meas, v_n, v_names, v_cap, v_x, v_has };
    rc = render("speedup", title, out_dir, extra, 7, err, errlen);
done:
    atomicfile_abort(pa);
    atomicfile_abort(ma);
    free(p);
    free(m);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Figure 2 */

static const prediction_row *find_row(const prediction_row *rows, int n, const series_key *s, int k, int t) {
    for (int i = 0; i < n; i++)
        if (in_series(&rows[i], s) && rows[i].workers == k && rows[i].cores == t)
            return &rows[i];
    return NULL;
}

int figures_splits(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                   const char *title, const char *out_dir, char *err, int errlen) {
    series_key keys[MAX_SERIES];
    int ns = series_of(pred, n_pred, keys);
    prediction_row *p = sorted_copy(pred, n_pred);
    char file[PATH_LEN];
    FILE *f = NULL;
    atomicfile *fa = NULL;
    int rc = -1, rows_written = 0;
    if (!p) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    if (data_path(out_dir, "splits.dat", file, err, errlen) || !(f = open_data(file, &fa, err, errlen)))
        goto done;
    /* One line a split: its x position (groups of equal total cores apart by a gap), its
     * label, then per series the predicted speedup, its 95% interval and the measured one. */
    fprintf(f, "x split");
    for (int s = 0; s < ns; s++)
        fprintf(f, " \"%s/%s\" lo hi measured", keys[s].sync, job_topology_name(keys[s].topology));
    fprintf(f, "\n");
    int x = 0;
    /* Only totals that at least two splits reach are a comparison of splits. */
    for (int i = 0; i < n_pred;) {
        long total = (long)p[i].workers * p[i].cores;
        int j = i, splits = 0, last_k = -1;
        for (; j < n_pred && (long)p[j].workers * p[j].cores == total; j++)
            if (p[j].workers != last_k)
                splits++, last_k = p[j].workers;
        if (splits >= 2) {
            last_k = -1;
            for (int r = i; r < j; r++) {
                if (p[r].workers == last_k)
                    continue;
                last_k = p[r].workers;
                fprintf(f, "%d %dx%d", x++, p[r].workers, p[r].cores);
                for (int s = 0; s < ns; s++) {
                    const prediction_row *a = find_row(p, n_pred, &keys[s], p[r].workers, p[r].cores);
                    const prediction_row *b = find_row(meas, n_meas, &keys[s], p[r].workers, p[r].cores);
                    if (a) fprintf(f, " %.6g %.6g %.6g", a->speedup, a->ci_lo, a->ci_hi); else fprintf(f, " - - -");
                    if (b) fprintf(f, " %.6g", b->speedup); else fprintf(f, " -");
                }
                fprintf(f, "\n");
                rows_written++;
            }
            x++; /* the gap between groups */
        }
        i = j;
    }
    int closed = close_data(fa, err, errlen);
    fa = NULL;
    if (closed)
        goto done;
    if (rows_written == 0) {
        errmsg_set(err, errlen, "splits figure: no total core count is reached by two different worker x core splits "
                          "(give e.g. --workers 1,2,4 --cores 1,2,4)");
        goto done;
    }
    char v_data[VAR_LEN], v_n[32];
    file_var(v_data, "datafile", file);
    snprintf(v_n, sizeof v_n, "nseries=%d", ns);
    const char *extra[] = { v_data, v_n };
    rc = render("splits", title, out_dir, extra, 2, err, errlen);
done:
    atomicfile_abort(fa);
    free(p);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Figure 3 */

static void breakdown_row(FILE *f, const prediction_row *r, char tag) {
    fprintf(f, "\"%dx%d %s %s %c\" %.6g %.6g %.6g %.6g %.6g\n", r->workers, r->cores, r->sync,
            job_topology_name(r->topology), tag, r->startup_s, r->compute_s, r->update_s, r->comm_s, r->wait_s);
}

int figures_breakdown(const prediction_row *pred, int n_pred, const prediction_row *meas, int n_meas,
                      const char *title, const char *out_dir, char *err, int errlen) {
    if (n_pred < 1 && n_meas < 1)
        return errmsg_set(err, errlen, "breakdown figure: no rows to plot");
    char file[PATH_LEN];
    atomicfile *fa;
    FILE *f;
    if (data_path(out_dir, "breakdown.dat", file, err, errlen) || !(f = open_data(file, &fa, err, errlen)))
        return -1;
    fprintf(f, "config startup compute update comm wait\n");
    /* With measurements, show each measured config beside its prediction; else all predictions. */
    if (n_meas > 0) {
        for (int i = 0; i < n_meas; i++) {
            for (int j = 0; j < n_pred; j++)
                if (pred[j].workers == meas[i].workers && pred[j].cores == meas[i].cores &&
                    pred[j].topology == meas[i].topology && strcmp(pred[j].sync, meas[i].sync) == 0) {
                    breakdown_row(f, &pred[j], 'p');
                    break;
                }
            breakdown_row(f, &meas[i], 'm');
        }
    } else {
        for (int j = 0; j < n_pred; j++)
            breakdown_row(f, &pred[j], 'p');
    }
    if (close_data(fa, err, errlen))
        return -1;
    char v_data[VAR_LEN];
    file_var(v_data, "datafile", file);
    const char *extra[] = { v_data };
    return render("breakdown", title, out_dir, extra, 1, err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Figure 4 */

static int ranks_of(const trace *t) {
    int k = 0;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank + 1 > k)
            k = t->events[i].rank + 1;
    return k;
}

int figures_timeline(const trace *measured, const trace *simulated, const char *title,
                     const char *out_dir, char *err, int errlen) {
    if (!measured && !simulated)
        return errmsg_set(err, errlen, "timeline figure: no trace given");
    int km = measured ? ranks_of(measured) : 0, ks = simulated ? ranks_of(simulated) : 0;
    int nrows = km + ks;
    if (nrows == 0)
        return errmsg_set(err, errlen, "timeline figure: the traces hold no events");
    char file[PATH_LEN];
    atomicfile *fa;
    FILE *f;
    if (data_path(out_dir, "timeline.dat", file, err, errlen) || !(f = open_data(file, &fa, err, errlen)))
        return -1;
    const trace *both[2] = { measured, simulated };
    int first_row[2] = { nrows - 1, ks - 1 }; /* measured on top */
    for (int w = 0; w < 2; w++) {
        if (!both[w])
            continue;
        for (long i = 0; i < both[w]->n_events; i++) {
            const trace_event *e = &both[w]->events[i];
            fprintf(f, "%.9f %.9f %d %d\n", e->t0_s, e->t1_s, first_row[w] - e->rank, (int)e->ph);
        }
    }
    if (close_data(fa, err, errlen))
        return -1;
    /* ytics: one label per row, "measured r0" ... "simulated r0" ... */
    size_t cap = 64 + (size_t)nrows * 40;
    char *ytics = malloc(cap);
    if (!ytics)
        return errmsg_set(err, errlen, "out of memory");
    int len = snprintf(ytics, cap, "set ytics (");
    int every = nrows > 32 ? nrows / 16 : 1; /* keep labels legible for many workers */
    int written = 0;
    for (int w = 0; w < 2; w++)
        for (int r = 0; r < (w ? ks : km); r++) {
            if (r % every)
                continue;
            len += snprintf(ytics + len, cap - (size_t)len, "%s'%s r%d' %d", written++ ? ", " : "",
                            w ? "simulated" : "measured", r, first_row[w] - r);
        }
    snprintf(ytics + len, cap - (size_t)len, ")");
    char v_data[VAR_LEN], v_rows[32];
    file_var(v_data, "datafile", file);
    snprintf(v_rows, sizeof v_rows, "nrows=%d", nrows);
    const char *extra[] = { v_data, v_rows, ytics };
    int rc = render("timeline", title, out_dir, extra, 3, err, errlen);
    free(ytics);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Figure 5 */

typedef struct {
    double sum, sum2;
    long n;
} moments;

static void moments_add(moments *m, double x) {
    m->sum += x;
    m->sum2 += x * x;
    m->n++;
}

static double moments_mean(const moments *m) { return m->sum / (double)m->n; }

static double moments_sd(const moments *m) {
    if (m->n < 2)
        return 0.0;
    double mean = moments_mean(m);
    double var = (m->sum2 - m->n * mean * mean) / (double)(m->n - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

int figures_calibration(trace *const *traces, int n_traces, const costmodel_params *fitted,
                        const char *title, const char *out_dir, char *err, int errlen) {
    if (n_traces < 1)
        return errmsg_set(err, errlen, "calibration figure: no traces given");
    char stepfile[PATH_LEN], syncfile[PATH_LEN];
    FILE *sf, *yf;
    atomicfile *sa, *ya;
    if (data_path(out_dir, "calibration-steps.dat", stepfile, err, errlen) ||
        data_path(out_dir, "calibration-sync.dat", syncfile, err, errlen))
        return -1;
    if (!(sf = open_data(stepfile, &sa, err, errlen)))
        return -1;
    if (!(yf = open_data(syncfile, &ya, err, errlen))) {
        atomicfile_abort(sa);
        return -1;
    }
    /* Steps: one block per distinct cores-per-worker, one point per (run, local batch). */
    int cores_seen[16], ncores = 0;
    for (int i = 0; i < n_traces; i++) {
        int t = traces[i]->run.config.cores, j = 0;
        while (j < ncores && cores_seen[j] != t)
            j++;
        if (j == ncores && ncores < 16)
            cores_seen[ncores++] = t;
    }
    char coreslist[16 * 8] = "";
    for (int c = 0; c < ncores; c++) {
        char item[16];
        snprintf(item, sizeof item, "%s%d", c ? " " : "", cores_seen[c]);
        strcat(coreslist, item);
        for (int i = 0; i < n_traces; i++) {
            const trace *t = traces[i];
            if (t->run.config.cores != cores_seen[c])
                continue;
            /* Full steps only: the slowest slice the model charges (traceinfo: a step has
             * examples; a short last step or an empty slice is another point). */
            job_config cfg = t->run.config;
            long b = (long)job_schedule_of(&cfg).local_batch;
            moments m = { 0 };
            for (long e = 0; e < t->n_events; e++)
                if (traceinfo_is_step(&t->events[e]) && t->events[e].examples == b)
                    moments_add(&m, t->events[e].t1_s - t->events[e].t0_s);
            if (m.n == 0)
                continue;
            costmodel_params p = *fitted;
            p.host_cores = t->run.host_cores;
            fprintf(sf, "%d %ld %.9g %.9g %.9g\n", cfg.cores, b, moments_mean(&m), moments_sd(&m),
                    costmodel_step_time(&p, &cfg));
        }
        fprintf(sf, "\n\n");
    }
    /* Syncs: block 0 parameter server, block 1 all-reduce; one point per run with K > 1. */
    for (int topo = 0; topo < JOB_TOPO_COUNT; topo++) {
        int any = 0;
        for (int i = 0; i < n_traces; i++) {
            const trace *t = traces[i];
            if ((int)t->run.config.topology != topo || t->run.config.workers < 2)
                continue;
            traceinfo_sync *syncs = NULL;
            long n_syncs = traceinfo_syncs(t, &syncs);
            if (n_syncs < 0) {
                atomicfile_abort(sa);
                atomicfile_abort(ya);
                return errmsg_set(err, errlen, "calibration figure: out of memory");
            }
            moments m = { 0 };
            for (long e = 0; e < n_syncs; e++)
                moments_add(&m, syncs[e].span_s);
            free(syncs);
            if (m.n == 0)
                continue;
            costmodel_params p = *fitted;
            if (t->run.model_bytes > 0)
                p.model_bytes = (double)t->run.model_bytes;
            fprintf(yf, "%d %d %.9g %.9g %.9g\n", topo, t->run.config.workers, moments_mean(&m), moments_sd(&m),
                    costmodel_sync_time(&p, &t->run.config));
            any = 1;
        }
        if (!any)
            fprintf(yf, "NaN NaN NaN NaN NaN\n");
        fprintf(yf, "\n\n");
    }
    const int bad_steps = close_data(sa, err, errlen), bad_sync = close_data(ya, err, errlen);
    if (bad_steps != bad_sync) // one renamed into place, the other not: neither stays
        remove(bad_steps ? syncfile : stepfile);
    if (bad_steps || bad_sync)
        return -1;
    if (ncores == 0)
        return errmsg_set(err, errlen, "calibration figure: the traces hold no compute steps");
    char v_step[VAR_LEN], v_sync[VAR_LEN], v_n[32], v_list[16 * 8 + 16];
    file_var(v_step, "stepfile", stepfile);
    file_var(v_sync, "syncfile", syncfile);
    snprintf(v_n, sizeof v_n, "ncores=%d", ncores);
    snprintf(v_list, sizeof v_list, "coreslist='%s'", coreslist);
    const char *extra[] = { v_step, v_sync, v_n, v_list };
    return render("calibration", title, out_dir, extra, 4, err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Figure 6 */

enum { MAX_ACCURACY_SERIES = 16, CURVE_POINTS = 200 };

/* The trace's accuracy points when it has a curve (two or more); *n = 0 otherwise. */
static int accuracy_points(const trace *t, traceinfo_accuracy_point **pts, long *n, char *err, int errlen) {
    if (traceinfo_accuracy_curve(t, pts, n, err, errlen))
        return -1;
    if (*n < 2) {
        free(*pts);
        *pts = NULL;
        *n = 0;
    }
    return 0;
}

int figures_accuracy_curves(trace *const *traces, int n_traces) {
    int curves = 0;
    for (int i = 0; i < n_traces; i++) {
        traceinfo_accuracy_point *pts = NULL;
        long n = 0;
        char err[256];
        if (accuracy_points(traces[i], &pts, &n, err, sizeof err) == 0 && n > 0)
            curves++;
        free(pts);
    }
    return curves;
}

/* The predicted curve of config c: acc(W + e·t_epoch) for e in [0, E]; "NaN NaN" when the
 * fit cannot say. */
static void write_predicted(FILE *f, const calibration *cal, const job_config *c) {
    char why[256];
    if (!cal->efficiency.known || costmodel_check(&cal->params, c, why, sizeof why)) {
        fprintf(f, "NaN NaN\n");
        return;
    }
    const prediction_row r = predictions_from_model(&cal->params, c);
    if (efficiency_check_at(&cal->efficiency, c, r.staleness_mean, why, sizeof why)) {
        fprintf(f, "NaN NaN\n");
        return;
    }
    const double t_epoch = (r.time_s - r.startup_s) / c->epochs;
    for (int i = 0; i <= CURVE_POINTS; i++) {
        const double e = (double)c->epochs * i / CURVE_POINTS;
        fprintf(f, "%.9g %.9g\n", r.startup_s + e * t_epoch, efficiency_accuracy(&cal->efficiency, c, r.staleness_mean, e));
    }
}

/* "KxT/sync/bB[/bpw]" of a run: the series it belongs to (seeds of one configuration share
 * it, and the one predicted curve). */
static void run_name(const job_config *c, char *buf, size_t len) {
    char sync[24];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    snprintf(buf, len, "%dx%d/%s/b%ld%s", c->workers, c->cores, sync, c->batch, c->batch_per_worker ? "/bpw" : "");
}

/* One series: its measured points, every trace of it (pts[i], n[i]) in turn, then its
 * predicted curve; *y_low lowered to its lowest point after the warm-up. */
static void write_series(trace *const *traces, int n_traces, traceinfo_accuracy_point *const *pts, const long *n,
                         char (*names)[64], int first, const calibration *cal, FILE *mf, FILE *pf,
                         double *y_low) {
    fprintf(mf, "# %s measured: training time s, accuracy, subset\n", names[first]);
    for (int j = first; j < n_traces; j++) {
        if (strcmp(names[j], names[first]) != 0)
            continue;
        for (long p = 0; p < n[j]; p++) {
            fprintf(mf, "%.9g %.9g %d\n", pts[j][p].train_time_s, pts[j][p].accuracy, pts[j][p].subset ? 1 : 0);
            if (pts[j][p].epochs_seen >= EFFICIENCY_WARMUP_EPOCHS && pts[j][p].accuracy < *y_low)
                *y_low = pts[j][p].accuracy;
        }
    }
    fprintf(mf, "\n\n");
    fprintf(pf, "# %s predicted: training time s, accuracy\n", names[first]);
    write_predicted(pf, cal, &traces[first]->run.config);
    fprintf(pf, "\n\n");
}

/* Both data files: per series (a configuration: every trace of it, whatever its seed),
 * measured points (time, accuracy, subset 0/1) and the predicted curve. The series' names
 * into names; *y_low the lowest accuracy measured after the learning rate's warm-up (the
 * figure's floor: below it every configuration is still far from any target). Returns the
 * series, or -1 with err. */
static int write_accuracy_data(trace *const *traces, int n_traces, const calibration *cal, FILE *mf, FILE *pf,
                               char *names, size_t names_len, double *y_low, char *err, int errlen) {
    traceinfo_accuracy_point **pts = calloc((size_t)n_traces, sizeof *pts);
    long *n = calloc((size_t)n_traces, sizeof *n);
    char (*name)[64] = calloc((size_t)n_traces, sizeof *name);
    int ns = pts && n && name ? 0 : errmsg_set(err, errlen, "out of memory");
    for (int i = 0; ns == 0 && i < n_traces; i++) {
        if (accuracy_points(traces[i], &pts[i], &n[i], err, errlen))
            ns = -1;
        run_name(&traces[i]->run.config, name[i], sizeof name[i]);
    }
    *y_low = 1;
    for (int i = 0; ns >= 0 && i < n_traces && ns < MAX_ACCURACY_SERIES; i++) {
        bool first = true; /* the first trace of its series that has a curve */
        for (int k = 0; k < i && first; k++)
            first = !(n[k] > 0 && strcmp(name[k], name[i]) == 0);
        if (n[i] == 0 || !first)
            continue;
        write_series(traces, n_traces, pts, n, name, i, cal, mf, pf, y_low);
        if (strlen(names) + strlen(name[i]) + 2 < names_len) {
            strcat(names, ns ? " " : "");
            strcat(names, name[i]);
        }
        ns++;
    }
    for (int i = 0; pts && i < n_traces; i++)
        free(pts[i]);
    free(pts);
    free(n);
    free(name);
    return ns;
}

int figures_accuracy(trace *const *traces, int n_traces, const calibration *cal, const char *title,
                     const char *out_dir, char *err, int errlen) {
    char mfile[PATH_LEN], pfile[PATH_LEN], names[MAX_ACCURACY_SERIES * 64] = "";
    atomicfile *ma = NULL, *pa = NULL;
    FILE *mf = NULL, *pf = NULL;
    if (data_path(out_dir, "accuracy-measured.dat", mfile, err, errlen) ||
        data_path(out_dir, "accuracy-predicted.dat", pfile, err, errlen) ||
        !(mf = open_data(mfile, &ma, err, errlen)) || !(pf = open_data(pfile, &pa, err, errlen))) {
        atomicfile_abort(ma);
        return -1;
    }
    double y_low;
    const int ns = write_accuracy_data(traces, n_traces, cal, mf, pf, names, sizeof names, &y_low, err, errlen);
    if (ns <= 0) {
        atomicfile_abort(ma);
        atomicfile_abort(pa);
        return ns < 0 ? -1 : errmsg_set(err, errlen, "accuracy figure: no trace has an accuracy curve (two points "
                                        "or more: speedup train records one per epoch, more with --eval-every)");
    }
    int closed_m = close_data(ma, err, errlen), closed_p = close_data(pa, err, errlen);
    if (closed_m != closed_p) // one renamed into place, the other not: neither stays
        remove(closed_m ? pfile : mfile);
    if (closed_m || closed_p)
        return -1;
    char v_meas[VAR_LEN], v_pred[VAR_LEN], v_n[32], v_names[sizeof names + 16], v_low[48];
    file_var(v_meas, "measfile", mfile);
    file_var(v_pred, "predfile", pfile);
    snprintf(v_n, sizeof v_n, "nseries=%d", ns);
    snprintf(v_names, sizeof v_names, "names='%s'", names);
    /* A little below the lowest point after the warm-up (none after it: the whole range). */
    snprintf(v_low, sizeof v_low, "ylow=%.4f", y_low < 1 ? fmax(0, floor(100 * y_low - 1) / 100) : 0);
    const char *extra[] = { v_meas, v_pred, v_n, v_names, v_low };
    return render("accuracy", title, out_dir, extra, 5, err, errlen);
}
