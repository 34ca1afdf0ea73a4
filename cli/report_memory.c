/* report_memory — the report's memory section (report_memory.h). */
#include "cli/report_memory.h"

#include "fit/memory_fit.h"
#include "trace/trace.h"

#include <math.h>

static const double MIB = 1048576.0;

/* Rows of one measured run: every rank, measured against predicted. Returns the worst
 * |error| of its ranks (0 when it has no memory). */
static double run_rows(FILE *f, const memory_params *m, const trace *t) {
    const job_config *c = &t->run.config;
    char sync[24];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    double worst = 0;
    for (int r = 0; r < t->run.memory.n_ranks; r++) {
        const job_role role = job_role_of(c, r);
        /* The run held its own trace in memory until the gather: its events count too. */
        const double predicted =
            memory_peak(m, (double)t->run.model_bytes, c, role, memory_fit_rank_trace_bytes(t, r)).total;
        const double measured = 1024.0 * (double)t->run.memory.peak_rss_kib[r];
        const double err = 100.0 * (predicted - measured) / measured;
        worst = fmax(worst, fabs(err));
        fprintf(f, "<tr><td>%d&times;%d %s %s%s b%ld</td><td>%d</td><td>%s</td><td>%.1f</td><td>%.1f</td><td%s>%+.1f%%</td></tr>\n",
                c->workers, c->cores, sync, job_topology_name(c->topology),
                c->master == JOB_MASTER_DEDICATED ? " dedicated" : "", c->batch, r, job_role_name(role),
                measured / MIB, predicted / MIB, fabs(err) > 15 ? " class=\"bad\"" : "", err);
    }
    return worst;
}

static void grid_rows(FILE *f, const prediction_row *pred, int n_pred) {
    int shown = 0;
    for (int i = 0; i < n_pred; i++)
        shown += pred[i].has_memory;
    if (!shown) {
        fputs("<p>The grid's predictions carry no memory columns.</p>\n", f);
        return;
    }
    fprintf(f, "<details><summary>predicted peak per rank on the grid: %d rows</summary><table>\n"
               "<tr><th>workers</th><th>cores</th><th>sync</th><th>topology</th><th>a worker MiB</th>"
               "<th>rank 0 MiB</th><th>fits</th></tr>\n", shown);
    for (int i = 0; i < n_pred; i++) {
        const prediction_row *r = &pred[i];
        if (r->has_memory)
            fprintf(f, "<tr><td>%d</td><td>%d</td><td>%s</td><td>%s</td><td>%.1f</td><td>%.1f</td><td%s>%s</td></tr>\n",
                    r->workers, r->cores, r->sync, job_topology_name(r->topology), r->rss_worker_mib,
                    r->rss_master_mib, r->fits ? "" : " class=\"bad\"", r->fits ? "yes" : "no");
    }
    fputs("</table></details>\n", f);
}

int report_memory_html(FILE *f, const memory_params *m, const char *const *trace_paths, int n_traces,
                       const prediction_row *pred, int n_pred, char *err, int errlen) {
    fputs("<h2 id=\"memory\">Memory per rank: will the master fit?</h2>\n", f);
    if (!m->known) {
        fputs("<p>The calibration has no memory parameters (its traces did not record the ranks' peaks).</p>\n", f);
        return 0;
    }
    fprintf(f, "<p>Peak resident set of each rank (model/memory.h): a base of %.1f &plusmn; %.2f MiB (code, "
               "libraries, MPI), %.2f MiB per other rank, %.2f MiB per further thread and %.2f&times; the ring "
               "all-reduce's scratch, fitted to %ld measured rank peaks (rms %.2f MiB, worst %.1f%%); on top, the "
               "byte counts of the trainer: the parameter-sized blocks each role writes (3 on an all-reduce rank, "
               "2 on a ps worker, 4 on the ps master: its receive buffer), %.0f + %.0f bytes of activations per "
               "example of the local batch (a dedicated master only evaluates: the first), the im2col workspace, "
               "and the data every rank holds.</p>\n",
            m->base_bytes / MIB, m->se_base_bytes / MIB, m->peer_bytes / MIB, m->thread_bytes / MIB,
            m->allreduce_scratch, m->points, m->rms_bytes / MIB, 100 * m->worst_rel_error, m->fwd_bytes_per_example,
            m->train_bytes_per_example);
    fputs("<table>\n<tr><th>run (K&times;T sync topology batch)</th><th>rank</th><th>role</th><th>measured MiB</th>"
          "<th>predicted MiB</th><th>error</th></tr>\n", f);
    double worst = 0;
    int ranks = 0;
    for (int i = 0; i < n_traces; i++) {
        trace *t = trace_read(trace_paths[i], err, errlen);
        if (!t)
            return -1;
        if (t->run.memory.has) {
            worst = fmax(worst, run_rows(f, m, t));
            ranks += t->run.memory.n_ranks;
        }
        trace_free(t);
    }
    fprintf(f, "</table>\n<p>%d ranks: worst |error| %.1f%%.</p>\n", ranks, worst);
    grid_rows(f, pred, n_pred);
    return 0;
}
