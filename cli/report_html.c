/* report_html — index.html of `speedup report` (see report_html.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_html.h"

#include "cli/cluster_spec.h"
#include "cli/report_memory.h"
#include "trace/traceinfo.h"

#include "util/atomicfile.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { REPORT_HTML_MAX_MEAS = 64 };

static void esc(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static double rel_err(double predicted, double measured) {
    return measured > 0 ? 100.0 * (predicted - measured) / measured : NAN;
}

static int by_abs(const void *a, const void *b) {
    double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
    return (x > y) - (x < y);
}

static double median_abs(double *v, int n) {
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, by_abs);
    return n % 2 ? fabs(v[n / 2]) : 0.5 * (fabs(v[n / 2 - 1]) + fabs(v[n / 2]));
}

static void figure(FILE *f, const char *name, const char *caption) {
    fprintf(f,
            "<h2 id=\"%s\">%s</h2>\n<p><a href=\"figures/%s.svg\"><img src=\"figures/%s.png\" alt=\"%s\" "
            "width=\"1000\" height=\"640\"></a><br><a href=\"figures/%s.svg\">SVG</a></p>\n",
            name, caption, name, name, name, name);
}

static void row_head(FILE *f, int breakdown) {
    fputs("<tr><th>workers</th><th>cores</th><th>sync</th><th>topology</th><th>time s</th><th>speedup</th>"
          "<th>95% interval</th>", f);
    if (breakdown)
        fputs("<th>startup s</th><th>compute s</th><th>comm s</th><th>wait s</th>", f);
    fputs("</tr>\n", f);
}

static void row(FILE *f, const prediction_row *r, int breakdown) {
    fprintf(f, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%.3f</td><td>%.3f</td><td>%.3f&ndash;%.3f</td>",
            r->workers, r->cores, r->sync, job_topology_name(r->topology), r->time_s, r->speedup, r->ci_lo,
            r->ci_hi);
    if (breakdown)
        fprintf(f, "<td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", r->startup_s, r->compute_s, r->comm_s,
                r->wait_s);
    fputs("</tr>\n", f);
}

/* The grid's rows and the measured rows at the grid's batch. */
static void tables(FILE *f, const report_html_input *in, int breakdown) {
    /* Closed: the grid is long and the figures should come one after the other. */
    fprintf(f, "<details><summary>predicted (simulated: the central runs at the calibrated values, the interval from the drawn ones): %d rows</summary><table>\n",
            in->n_pred);
    row_head(f, breakdown);
    for (int i = 0; i < in->n_pred; i++)
        row(f, &in->pred[i], breakdown);
    fputs("</table></details>\n<details open><summary>measured on this host (batch 32)</summary><table>\n", f);
    row_head(f, breakdown);
    for (int i = 0; i < in->n_meas; i++)
        if (in->meas[i].batch == in->grid_batch)
            row(f, &in->meas[i].measured, breakdown);
    fputs("</table></details>\n", f);
}

/* Each rank's foreground seconds by phase (traceinfo_rank_totals_of: communication beside
 * the rank's own timeline is not counted twice). */
static void timeline_table(FILE *f, const char *label, const trace *t) {
    traceinfo_rank_totals *tot;
    int ranks = traceinfo_rank_totals_of(t, &tot);
    for (int r = 0; r < ranks; r++) {
        fprintf(f, "<tr><td>%s</td><td>%d</td>", label, r);
        for (int p = 0; p < TRACE_PHASE_COUNT; p++)
            fprintf(f, "<td>%.3f</td>", tot[r].phase_s[p]);
        fputs("</tr>\n", f);
    }
    free(tot);
}

static void pre_file(FILE *f, const char *path) {
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    char line[1024];
    fputs("<pre>", f);
    while (fgets(line, sizeof line, in))
        esc(f, line);
    fputs("</pre>\n", f);
    fclose(in);
}

static void write_head(FILE *f, const report_html_input *in) {
    char when[64];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>speedup report: ", f);
    esc(f, in->cal->host);
    fputs("</title>\n<style>body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em}"
          "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}td,th{border:1px solid #bbb;"
          "padding:2px 6px;text-align:right}th{background:#eee}img{max-width:100%;height:auto;border:1px solid #ddd}"
          "pre{background:#f6f6f6;padding:0.5em;overflow-x:auto;font-size:0.8em}.bad{color:#b00}</style>\n"
          "</head><body>\n<h1>speedup report: ", f);
    esc(f, in->cal->host);
    fputs("</h1>\n<p><b>Host:</b> ", f);
    esc(f, in->host_desc);
    fputs("<br><b>Neural network:</b> ", f);
    esc(f, in->net_desc);
    fputs("<br><b>Interconnect:</b> ", f);
    esc(f, in->link_desc);
    fprintf(f, "<br><b>Generated:</b> %s</p>\n", when);
    fputs("<p>Times are training times from the traces: start-up (MPI, data, model) and training, "
          "evaluation on the test set left out, as the model predicts them. A run's whole wall time "
          "(mpirun launch and evaluation included) is shown for the held-out runs.</p>\n"
          "<p><a href=\"#cluster\">on a cluster</a> &middot; <a href=\"#errors\">prediction errors</a> &middot; "
          "<a href=\"#speedup\">speedup</a> &middot; "
          "<a href=\"#splits\">splits</a> &middot; <a href=\"#breakdown\">breakdown</a> &middot; "
          "<a href=\"#timeline\">timeline</a> &middot; <a href=\"#calibration\">calibration</a></p>\n", f);

}

/* The fastest row of a cluster what-if, and for a series its best worker count. */
static const prediction_row *fastest(const prediction_row *rows, int n, const char *sync, int topology) {
    const prediction_row *best = NULL;
    for (int i = 0; i < n; i++)
        if ((!sync || (strcmp(rows[i].sync, sync) == 0 && (int)rows[i].topology == topology)) &&
            (!best || rows[i].time_s < best->time_s))
            best = &rows[i];
    return best;
}

/* The (sync, topology) series of a what-if's rows, in the order they first appear. */
enum { MAX_SERIES = 16 };
static int series_of(const report_cluster *k, const prediction_row *first[MAX_SERIES]) {
    int n = 0;
    for (int i = 0; i < k->n_rows && n < MAX_SERIES; i++) {
        bool seen = false;
        for (int s = 0; s < n && !seen; s++)
            seen = strcmp(first[s]->sync, k->rows[i].sync) == 0 && first[s]->topology == k->rows[i].topology;
        if (!seen)
            first[n++] = &k->rows[i];
    }
    return n;
}

/* One cluster what-if: its figure, what scales best, and the table of speedups by workers,
 * one column a (sync, topology) series it has. */
static void write_cluster(FILE *f, const report_cluster *k, int index) {
    fprintf(f, "<h3 id=\"cluster-%d\">On ", index + 1);
    esc(f, k->desc);
    fprintf(f, "</h3>\n<p><a href=\"figures/cluster-%d/speedup.svg\"><img src=\"figures/cluster-%d/speedup.png\" "
               "alt=\"cluster-%d speedup\" width=\"1000\" height=\"640\"></a><br>"
               "<a href=\"figures/cluster-%d/speedup.svg\">SVG</a> &middot; <a href=\"cluster-%d.csv\">CSV</a></p>\n",
            index + 1, index + 1, index + 1, index + 1, index + 1);
    const prediction_row *series[MAX_SERIES];
    const int n_series = series_of(k, series);
    const prediction_row *best = fastest(k->rows, k->n_rows, NULL, 0);
    if (best)
        fprintf(f, "<p><b>Fastest:</b> %d workers, %s sync, %s: speedup <b>%.2f</b> (95%% PI %.2f&ndash;%.2f). "
                   "Best worker count per mode:", best->workers, best->sync, job_topology_name(best->topology),
                best->speedup, best->ci_lo, best->ci_hi);
    for (int s = 0; s < n_series; s++) {
        const prediction_row *b = fastest(k->rows, k->n_rows, series[s]->sync, (int)series[s]->topology);
        fprintf(f, "%s %s/%s at K = %d (%.2f&times;)", s ? ";" : "", b->sync, job_topology_name(b->topology),
                b->workers, b->speedup);
    }
    fputs(".</p>\n<table>\n<tr><th>workers</th>", f);
    for (int s = 0; s < n_series; s++)
        fprintf(f, "<th>%s/%s speedup (95%% PI)</th>", series[s]->sync, job_topology_name(series[s]->topology));
    fputs("</tr>\n", f);
    for (int i = 0; i < k->n_rows; i++) {
        if (n_series == 0 || strcmp(k->rows[i].sync, series[0]->sync) != 0 ||
            k->rows[i].topology != series[0]->topology)
            continue; /* one line per worker count, from the first series' rows */
        fprintf(f, "<tr><td>%d</td>", k->rows[i].workers);
        for (int s = 0; s < n_series; s++) {
            const prediction_row *r = NULL;
            for (int j = 0; j < k->n_rows && !r; j++)
                if (k->rows[j].workers == k->rows[i].workers && strcmp(k->rows[j].sync, series[s]->sync) == 0 &&
                    k->rows[j].topology == series[s]->topology)
                    r = &k->rows[j];
            if (r)
                fprintf(f, "<td>%.2f (%.2f&ndash;%.2f)</td>", r->speedup, r->ci_lo, r->ci_hi);
            else
                fputs("<td>&ndash;</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* The what-if section: the report's main result. */
static void write_clusters(FILE *f, const report_html_input *in) {
    if (in->n_clusters == 0)
        return;
    fprintf(f, "<h2 id=\"cluster\">What if: this training on a cluster</h2>\n<p>The model calibrated on this "
               "host, for the whole training (%ld examples &times; %d epochs, global batch %ld split over the workers: "
               "strong scaling), with the workers placed on the machines of a cluster: the first machine's cores "
               "filled first, ranks on one machine sharing its cores and talking through shared memory, ranks on "
               "different machines crossing the network (its latency added to each message, its rate capping the "
               "bandwidth). One core per worker. The band is the 95%% prediction interval of one run. This host's "
               "measured runs are short (%ld examples, 1 epoch: start-up weighs far more there): they are in the "
               "validation section below, against predictions of the same runs.</p>\n",
            in->what_if_examples, in->what_if_epochs, in->grid_batch, in->examples);
    for (int i = 0; i < in->n_clusters; i++)
        write_cluster(f, &in->clusters[i], i);
    fputs("<h2 id=\"validation\">Validation on this host</h2>\n<p>How far to trust the what-if: the same model "
          "against runs measured here, on configurations it was and was not fitted on.</p>\n", f);
}

/* Every measured configuration against its predictions, the fidelity figures above. */
static void write_errors(FILE *f, const report_html_input *in) {
    /* Prediction error of every measured configuration. */
    double e_model[REPORT_HTML_MAX_MEAS];
    int n_held = 0;
    fputs("<h2 id=\"errors\">Prediction error of every measured configuration</h2>\n", f);
    if (in->fidelity) {
        const fidelity_summary *s = in->fidelity;
        fprintf(f, "<p class=\"fidelity\"><b>Held-out configurations (%d, %d runs):</b> median |error| of the "
                   "median run <b>%.1f%%</b>, worst <b>%.1f%%</b> (simulated); <b>%d of %d</b> single runs "
                   "(<b>%.0f%%</b>) inside the 95%% prediction interval for one run, whose mean half-width is "
                   "<b>%.1f%%</b>",
                s->configs, s->runs, 100 * s->median_abs_error, 100 * s->worst_abs_error, s->inside, s->runs,
                100 * s->coverage, 100 * s->mean_half_width);
        if (s->spread > 0)
            fprintf(f, " = %.1f&times; the measured run-to-run spread (&sigma; of ln time within a configuration: "
                       "%.1f%%)", s->width_over_spread, 100 * s->spread);
        fputs(".</p>\n", f);
    }
    fputs("<table>\n<tr><th>configuration (K&times;T sync topology batch)</th><th>in the fit?</th>"
          "<th>runs s</th><th>median s</th><th>run wall s</th><th>model s</th><th>model error</th>"
          "<th>simulated s</th><th>simulated error</th><th>95% PI, one run (s)</th><th>runs inside</th>"
          "<th>measured speedup</th><th>simulated speedup (95% PI)</th></tr>\n", f);
    for (int i = 0; i < in->n_meas; i++) {
        const report_measured *m = &in->meas[i];
        double em = rel_err(m->model_s, m->measured.time_s), es = rel_err(m->sim.time_s, m->measured.time_s);
        if (m->held_out && n_held < REPORT_HTML_MAX_MEAS)
            e_model[n_held++] = em;
        fputs("<tr><td style=\"text-align:left\">", f);
        esc(f, m->name);
        fprintf(f, "</td><td>%s</td><td>", m->held_out ? "held out" : "in the fit");
        for (int r = 0; r < m->n_runs; r++)
            fprintf(f, "%s%.2f", r ? " " : "", m->runs_s[r]);
        int inside = fidelity_inside(m->runs_s, m->n_runs, m->sim.time_lo, m->sim.time_hi);
        fprintf(f, "</td><td>%.3f</td>", m->measured.time_s);
        if (m->wall_s > 0)
            fprintf(f, "<td>%.2f</td>", m->wall_s);
        else
            fputs("<td>(calibrate)</td>", f);
        fprintf(f, "<td>%.3f</td><td%s>%+.1f%%</td><td>%.3f</td><td%s>%+.1f%%</td><td>%.2f&ndash;%.2f</td>"
                   "<td>%d/%d</td><td>%.3f</td><td>%.3f (%.3f&ndash;%.3f)</td></tr>\n",
                m->model_s, fabs(em) > 15 ? " class=\"bad\"" : "", em, m->sim.time_s,
                fabs(es) > 15 ? " class=\"bad\"" : "", es, m->sim.time_lo, m->sim.time_hi, inside, m->n_runs,
                m->measured.speedup, m->sim.speedup, m->sim.ci_lo, m->sim.ci_hi);
    }
    fprintf(f, "</table>\n<p>Closed form on the held-out configurations: median |error| %.1f%%. The simulated "
               "interval is a prediction interval for one run (step noise, the host's run-to-run factor and the "
               "fit's uncertainty); the interval of the simulated <i>mean</i> is in predicted/*.csv "
               "(mean_lo, mean_hi).</p>\n",
            median_abs(e_model, n_held));

}

/* Figures 1 to 4, each with its table. */
static void write_figures(FILE *f, const report_html_input *in) {
    figure(f, "speedup", "1. Speedup on this host against total cores, batch and epoch sync: predicted (95% band) "
                         "and measured");
    tables(f, in, 0);
    figure(f, "splits", "2. The same total cores split into workers differently");
    fputs("<p>The grid's rows with 2 to 8 cores in all (the measured 1&times;2 and 2&times;1 are in the "
          "tables of figure 1):</p>\n", f);
    fputs("<details><summary>the splits, predicted</summary><table>\n", f);
    row_head(f, 0);
    for (int i = 0; i < in->n_pred; i++) {
        int total = in->pred[i].workers * in->pred[i].cores;
        if (total >= 2 && total <= 8)
            row(f, &in->pred[i], 0);
    }
    fputs("</table></details>\n", f);
    figure(f, "breakdown", "3. Where the time goes: start-up, compute, communication, wait");
    tables(f, in, 1);
    figure(f, "timeline", "4. Timeline of the 2&times;1 batch all-reduce run: measured (top) and simulated (bottom)");
    fputs("<table>\n<tr><th>run</th><th>rank</th>", f);
    for (int p = 0; p < TRACE_PHASE_COUNT; p++)
        fprintf(f, "<th>%s s</th>", trace_phase_name((trace_phase)p));
    fputs("</tr>\n", f);
    timeline_table(f, "measured", in->timeline_measured);
    timeline_table(f, "simulated", in->timeline_simulated);
    fputs("</table>\n", f);
}

/* The calibration's parameters, every one the registry has and the file gave. */
static void write_params(FILE *f, const calibration *cal) {
    fputs("<table>\n<tr><th>parameter</th><th>value</th><th>standard error</th><th>unit</th></tr>\n", f);
    for (int i = 0; i < PARAM_COUNT; i++) {
        const param_row *r = param_info((param_id)i);
        const double v = param_get(&cal->params, (param_id)i), se = param_se_get(&cal->stderr_, (param_id)i);
        if (r->required < 0 && v == 0)
            continue;
        fprintf(f, "<tr><td>%s</td><td>%.4g</td><td>%.2g</td><td>%s</td></tr>\n", r->name, v, isfinite(se) ? se : 0,
                r->unit);
    }
    fputs("</table>\n", f);
}

/* Figure 5 and the fitted parameters. */
static void write_calibration(FILE *f, const report_html_input *in) {
    figure(f, "calibration", "5. Calibration: measured step and sync times against the fit, with residuals");
    write_params(f, in->cal);
}

/* Figure 6 and the accuracy fit (model/efficiency.h), when the traces held accuracy curves. */
static void write_accuracy(FILE *f, const report_html_input *in) {
    figure(f, "accuracy", "6. Test accuracy against training time per configuration: measured (dots: the whole test "
                          "set at each epoch's end; circles: a fixed subset) and predicted (lines)");
    const efficiency_model *m = &in->cal->efficiency;
    if (!m->known) {
        fputs("<p>No accuracy fit in calibration.json: the curves are measured only (see calibrate's output "
              "below for why).</p>\n", f);
        return;
    }
    fprintf(f, "<p>The fit (model/efficiency.h): <code>%s</code>, chance %.3g, batch %ld; %d runs, %ld points, %ld "
               "examples, %d-epoch schedule. <code>speedup model --target-accuracy A</code> predicts from it.</p>\n",
            efficiency_form(m->legacy_log_h), m->chance, m->batch, m->runs, m->points, m->examples, m->epochs);
    fputs("<table>\n<tr><th>parameter</th><th>value</th><th>standard error</th><th></th></tr>\n", f);
    for (int j = 0; j < efficiency_n_params(m); j++)
        fprintf(f, "<tr><td>%s</td><td>%.4g</td><td>%.2g</td><td>%s</td></tr>\n", efficiency_param_name(j),
                m->theta[j], sqrt(fmax(m->cov[j][j], 0)), m->fitted[j] ? "" : "not fitted: held at 0");
    fprintf(f, "</table>\n<p>Residual sd %.2f%% (whole test set), %.2f%% (subset).</p>\n", 100 * m->sd_test,
            100 * m->sd_subset);
}

/* The fastest choice averages models (epoch, every:N) or trains on stale gradients: what
 * the calibration's accuracy fit says that does to accuracy, beside the fastest batch sync;
 * a warning where there is no fit or the fit cannot say. */
static void write_averaging_note(FILE *f, const prediction_row *best, const prediction_row *batch,
                                 const calibration *cal, const job_config *workload) {
    char why[256] = "", why_batch[256] = "", t[32];
    const double acc = predictions_accuracy_after(&cal->efficiency, best, workload, why, sizeof why);
    const double acc_batch = batch ? predictions_accuracy_after(&cal->efficiency, batch, workload, why_batch,
                                                               sizeof why_batch) : NAN;
    fprintf(f, " %c%s sync %s: it trains differently", toupper((unsigned char)best->sync[0]), best->sync + 1,
            predictions_row_is_async(best) ? "trains on stale gradients" : "averages models instead of gradients");
    if (!isnan(acc)) {
        fprintf(f, "; the calibration's accuracy fit predicts %.1f%% test accuracy after %d epoch%s", 100 * acc,
                workload->epochs, workload->epochs == 1 ? "" : "s");
        if (!isnan(acc_batch))
            fprintf(f, ", against %.1f%% for the fastest batch sync", 100 * acc_batch);
        fputs(".", f);
    } else if (cal->efficiency.known) {
        fputs(", and the calibration's accuracy fit cannot say by how much here (", f);
        esc(f, why);
        fputs("): check its accuracy before choosing it.", f);
    } else {
        fputs(", and this calibration has no accuracy fit (calibrate --accuracy-plan), so it is ranked on time "
              "alone: check its accuracy before choosing it.", f);
    }
    if (batch) {
        predictions_duration(batch->time_s, t, sizeof t);
        fprintf(f, " The fastest batch sync: %d workers, %s, %s.", batch->workers, job_topology_name(batch->topology),
                t);
    }
}

/* The answer for one cluster: its fastest row, its time and machine-hours, one worker's,
 * and what the fastest choice does to accuracy when it is not batch sync. */
static void write_answer(FILE *f, const report_cluster *k, const calibration *cal, const job_config *workload) {
    const prediction_row *best = fastest(k->rows, k->n_rows, NULL, 0), *one = NULL;
    for (int i = 0; i < k->n_rows; i++)
        if (k->rows[i].workers == 1 && (!one || k->rows[i].time_s < one->time_s))
            one = &k->rows[i];
    if (!best)
        return;
    char t[32], lo[32], hi[32], t1[32];
    predictions_duration(best->time_s, t, sizeof t);
    predictions_duration(best->time_lo, lo, sizeof lo);
    predictions_duration(best->time_hi, hi, sizeof hi);
    const int machines = cluster_spec_machines_filled(k->per_machine, best->workers, best->cores);
    fprintf(f, "<p class=\"answer\"><b>On ");
    esc(f, k->desc);
    fprintf(f, ": %d worker%s &times; %d %s, %s sync, %s</b> &mdash; training takes <b>%s</b> (95%%: %s&ndash;%s), "
               "%.3g machine-hours", best->workers, best->workers == 1 ? "" : "s", best->cores,
            cal->params.worker_device ? "GPU" : (best->cores == 1 ? "core" : "cores"), best->sync,
            job_topology_name(best->topology), t, lo, hi, machines * best->time_s / 3600.0);
    if (one) {
        predictions_duration(one->time_s, t1, sizeof t1);
        fprintf(f, "; one worker: %s", t1);
    }
    fputs(".", f);
    if (calibration_beyond_range(cal->range_workers, cal->range_machines, best->workers, machines))
        fprintf(f, " <span class=\"bad\">Extrapolated: the calibration measured at most %d workers on %d "
                   "machine%s.</span>", cal->range_workers, cal->range_machines, cal->range_machines == 1 ? "" : "s");
    if (strcmp(best->sync, "batch") != 0)
        write_averaging_note(f, best, predictions_fastest_batch_sync(k->rows, k->n_rows), cal, workload);
    fputs("</p>\n", f);
}

int report_html_write_whatif(const char *path, const report_whatif_input *in, char *err, int errlen) {
    atomicfile *af = atomicfile_open(path, err, errlen);
    if (!af)
        return -1;
    FILE *f = atomicfile_stream(af);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>speedup report: what if</title>\n"
          "<style>body{font-family:sans-serif;max-width:1100px;margin:1em auto;padding:0 1em}"
          "table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}td,th{border:1px solid #bbb;"
          "padding:2px 6px;text-align:right}th{background:#eee}img{max-width:100%;height:auto;border:1px solid #ddd}"
          "pre{background:#f6f6f6;padding:0.5em;overflow-x:auto;font-size:0.8em}.bad{color:#b00}"
          ".answer{font-size:1.1em}</style>\n</head><body>\n<h1>speedup report: what if</h1>\n", f);
    const job_config workload = { .examples = in->examples, .batch = in->batch, .epochs = in->epochs,
                                  .batch_per_worker = in->cal->params.worker_device > 0 };
    for (int i = 0; i < in->n_clusters; i++)
        write_answer(f, &in->clusters[i], in->cal, &workload);
    fputs("<p><b>Calibration:</b> ", f);
    esc(f, in->calib_path);
    fputs(" (", f);
    esc(f, in->cal->source[0] ? in->cal->source : in->cal->host);
    fprintf(f, "); nothing was measured for this report.<br><b>Workload:</b> %ld examples &times; %d epoch%s, batch "
               "%ld %s.</p>\n", in->examples, in->epochs, in->epochs == 1 ? "" : "s", in->batch,
            in->cal->params.worker_device ? "per worker (weak scaling)" : "split over the workers");
    if (in->net) {
        fputs("<p><b>Neural network:</b> <code>", f);
        esc(f, in->net);
        fputs("</code>, priced layer by layer with the rates the calibration measured on <code>", f);
        esc(f, in->cal->network.spec);
        fputs("</code> (docs/networks.md); the intervals carry the transfer's error.", f);
        if (in->net_unlike && in->net_unlike[0]) {
            fputs(" ", f);
            esc(f, in->net_unlike);
            fputs(".", f);
        }
        fputs("</p>\n", f);
    }
    for (int i = 0; i < in->n_clusters; i++)
        write_cluster(f, &in->clusters[i], i);
    fputs("<h2>The calibration</h2>\n", f);
    write_params(f, in->cal);
    fputs("<h2>How this report was made</h2>\n<pre>", f);
    esc(f, in->commands);
    fputs("</pre>\n</body></html>\n", f);
    return atomicfile_commit(af, err, errlen);
}

int report_html_write(const char *path, const report_html_input *in, char *err, int errlen) {
    atomicfile *af = atomicfile_open(path, err, errlen);
    if (!af)
        return -1;
    FILE *f = atomicfile_stream(af);
    write_head(f, in);
    const job_config workload = { .examples = in->what_if_examples, .batch = in->grid_batch,
                                  .epochs = in->what_if_epochs };
    for (int i = 0; i < in->n_clusters; i++)
        write_answer(f, &in->clusters[i], in->cal, &workload);
    write_clusters(f, in);
    write_errors(f, in);
    write_figures(f, in);
    write_calibration(f, in);
    if (in->accuracy_figure)
        write_accuracy(f, in);
    if (in->n_memory_traces > 0 && report_memory_html(f, &in->cal->memory, in->memory_traces, in->n_memory_traces,
                                                      in->pred, in->n_pred, err, errlen)) {
        atomicfile_abort(af);
        return -1;
    }
    if (in->calibrate_log) {
        fputs("<p>The fit and its leave-one-configuration-out check (<code>speedup calibrate</code>'s output):</p>\n", f);
        pre_file(f, in->calibrate_log);
    }
    fputs("<h2>How this report was made</h2>\n<pre>", f);
    esc(f, in->commands);
    fputs("</pre>\n<p>Files: <a href=\"calibration.json\">calibration.json</a>, <a href=\"predictions.csv\">"
          "predictions.csv</a>, <a href=\"measurements.csv\">measurements.csv</a>, traces in "
          "<a href=\"traces/\">traces/</a> and <a href=\"measured/\">measured/</a>.</p>\n</body></html>\n", f);
    return atomicfile_commit(af, err, errlen);
}
