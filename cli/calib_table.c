/* calib_table — calibrate --from-table (calib_table.h). */
#include "cli/calib_table.h"

#include "cli/args.h"
#include "model/calibration.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void calib_table_init(calib_table_flags *f) { *f = (calib_table_flags){ .opts = table_opts_default() }; }

int calib_table_handle(calib_table_flags *f, int code, const char *arg) {
    table_opts *o = &f->opts;
    if (code < CALIB_TABLE_OPT_FIRST || code >= CALIB_TABLE_OPT_LAST)
        return 1;
    f->given |= code != CALIB_TABLE_OPT_FROM && code != CALIB_TABLE_OPT_LATENCY;
    f->latency_given |= code == CALIB_TABLE_OPT_LATENCY;
    switch (code) {
    case CALIB_TABLE_OPT_FROM: f->path = arg; return 0;
    case CALIB_TABLE_OPT_TOPOLOGY:
        if (job_topology_parse(arg, &o->topology) == 0)
            return 0;
        args_error("--topology: expected allreduce or ps, got '%s'", arg);
        return -1;
    case CALIB_TABLE_OPT_ALLREDUCE:
        if (costmodel_allreduce_parse(arg, &o->algorithm) == 0)
            return 0;
        args_error("--allreduce: expected ring, hierarchical or either, got '%s'", arg);
        return -1;
    case CALIB_TABLE_OPT_PLACEMENT:
        if (strcmp(arg, "colocated") == 0 || strcmp(arg, "separate") == 0) {
            o->ps_separate = strcmp(arg, "separate") == 0;
            return 0;
        }
        args_error("--ps-placement: expected colocated or separate, got '%s'", arg);
        return -1;
    case CALIB_TABLE_OPT_LATENCY: return args_latency("--latency", arg, &o->net_latency_s);
    case CALIB_TABLE_OPT_INTRA_LATENCY: return args_latency("--intra-latency", arg, &o->intra_latency_s);
    case CALIB_TABLE_OPT_ROW_NOISE: return args_double("--row-noise", arg, 1e-6, 1, &o->row_noise);
    case CALIB_TABLE_OPT_LARGEST: return args_size("--largest-tensor", arg, 1, 1e15, &o->largest_bytes);
    case CALIB_TABLE_OPT_LINE_RATE: return args_bandwidth("--line-rate", arg, &o->line_rate_bytes_per_s);
    }
    return 1;
}

static void print_param(const calibration *cal, const calibration_note *notes, int n_notes, param_id id) {
    const param_row *r = param_info(id);
    const char *note = "";
    for (int i = 0; i < n_notes; i++)
        if (strcmp(notes[i].param, r->name) == 0)
            note = "  (see the note below)";
    printf("  %-16s %-12.6g +- %-10.3g %s%s\n", r->name, param_get(&cal->params, id), param_se_get(&cal->stderr_, id),
           r->unit, note);
}

int calib_table_run(const calib_table_flags *f, double model_bytes, const char *out_path, bool strict) {
    char err[1024];
    table t;
    if (table_read(f->path, &t, err, sizeof err)) {
        args_error("calibrate: %s", err);
        return 1;
    }
    table_opts o = f->opts;
    o.model_bytes = model_bytes;
    calibration cal;
    calibration_fit fit;
    if (table_fit(&t, &o, &cal, &fit, err, sizeof err)) {
        args_error("calibrate: %s: %s", f->path, err);
        table_free(&t);
        return 1;
    }
    snprintf(cal.host, sizeof cal.host, "table %.120s", f->path);
    snprintf(cal.source, sizeof cal.source, "table %.240s", f->path);
    printf("calibration of a cluster of devices (%s) from %d rows of %s (%s%s)\n", job_topology_name(o.topology), t.n,
           f->path, o.topology == JOB_TOPO_ALLREDUCE ? "all-reduce across machines: " : "ps shards ",
           o.topology == JOB_TOPO_ALLREDUCE ? costmodel_allreduce_name(o.algorithm)
                                            : (o.ps_separate ? "on machines of their own" : "on the workers' machines"));
    const param_id shown[] = { PARAM_C0, PARAM_C1,
                               o.topology == JOB_TOPO_PS ? PARAM_ALPHA_PS : PARAM_ALPHA_ALLREDUCE,
                               o.topology == JOB_TOPO_PS ? PARAM_BETA_PS : PARAM_BETA_ALLREDUCE,
                               PARAM_NET_ALPHA, PARAM_NET_BETA, PARAM_NET_LINE_BETA, PARAM_MODEL_BYTES,
                               PARAM_PS_LARGEST, PARAM_HOST_CORES, PARAM_RUN_CV, PARAM_MODEL_CV };
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; i++)
        print_param(&cal, fit.notes, fit.n_notes, shown[i]);
    if (cal.params.net.beta_s_per_byte > 0)
        printf("  the fabric's effective rate: %.4g Gbit/s\n", 8e-9 / cal.params.net.beta_s_per_byte);
    for (int i = 0; i < fit.n_notes; i++)
        printf("  note on %s: %s\n", fit.notes[i].param, fit.notes[i].text);
    printf("rows (step = workers x local_batch / throughput), and the calibration's step for each:\n");
    printf("  %7s %8s %11s %12s %12s %8s\n", "workers", "machines", "local_batch", "measured_s", "model_s", "error");
    for (int i = 0; i < t.n; i++) {
        const table_row *r = &t.rows[i];
        const double m = table_row_step_s(r), p = table_predict_step_s(&cal.params, r, o.topology);
        printf("  %7d %8d %11g %12.6g %12.6g %+7.2f%%\n", r->workers, r->machines, r->local_batch, m, p,
               100 * (p - m) / m);
    }
    table_free(&t);
    printf("verdict: %s%s\n", fit.verdict_poor ? "poor: " : "", fit.verdict);
    if (calibration_write(out_path, &cal, &fit, err, sizeof err)) {
        args_error("calibrate: %s", err);
        return 1;
    }
    printf("wrote %s\n", out_path);
    if (fit.verdict_poor && strict) {
        args_error("calibrate --strict: the verdict is poor (%s written all the same)", out_path);
        return 1;
    }
    return 0;
}
