/* speedup plot — the gnuplot figures from predictions, measurements, traces and a
 * calibration: every figure whose inputs are given, as PNG and SVG in --out DIR. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/commands.h"
#include "model/calibration.h"
#include "model/predictions.h"
#include "model/trace.h"
#include "plots/figures.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup plot --out DIR [INPUTS] [--title TEXT]\n"
            "\n"
            "Draws every figure whose inputs are given, as DIR/NAME.png and DIR/NAME.svg:\n"
            "  speedup, splits, breakdown   from --predictions (and --measurements)\n"
            "  timeline                     from --trace and/or --sim-trace\n"
            "  calibration                  from --calib with --traces\n"
            "\n"
            "Inputs:\n"
            "  --predictions FILE   predictions CSV (speedup model/simulate --out)\n"
            "  --measurements FILE  measurements CSV, same columns, measured\n"
            "  --trace FILE         a measured *.trace.jsonl (timeline, top)\n"
            "  --sim-trace FILE     a simulated *.trace.jsonl (timeline, bottom)\n"
            "  --calib FILE         calibration.json whose fit figure 5 shows\n"
            "  --traces DIR         the *.trace.jsonl files the calibration was fitted on\n"
            "Output:\n"
            "  --out DIR            where the figures go (created)            [required]\n"
            "  --title TEXT         what the figures show, under each one's question\n"
            "                       [on HOST, CNN NET]\n"
            "  --only LIST          only these figures, e.g. speedup,timeline  [all given]\n"
            "  --help               this text\n"
            "gnuplot is run from PATH ($SPEEDUP_GNUPLOT overrides).\n");
}

enum { OPT_PRED = 1, OPT_MEAS, OPT_TRACE, OPT_SIM, OPT_CALIB, OPT_TRACES, OPT_OUT, OPT_TITLE, OPT_ONLY, OPT_HELP };

enum { MAX_TRACES = 256 };

/* Reads every *.trace.jsonl in dir (sorted by name). Returns the count or -1 (printed). */
static int read_trace_dir(const char *dir, trace **out) {
    struct dirent **names = NULL;
    int n = scandir(dir, &names, NULL, alphasort);
    if (n < 0) {
        args_error("%s: cannot read directory", dir);
        return -1;
    }
    int count = 0, rc = 0;
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        size_t len = strlen(name), suffix = strlen(".trace.jsonl");
        if (rc == 0 && len > suffix && strcmp(name + len - suffix, ".trace.jsonl") == 0) {
            char path[2048], err[600];
            snprintf(path, sizeof path, "%s/%s", dir, name);
            if (count == MAX_TRACES) {
                args_error("%s: more than %d traces", dir, MAX_TRACES);
                rc = -1;
            } else if (!(out[count] = trace_read(path, err, sizeof err))) {
                args_error("%s", err);
                rc = -1;
            } else {
                count++;
            }
        }
        free(names[i]);
    }
    free(names);
    if (rc == 0 && count == 0) {
        args_error("%s: no *.trace.jsonl files", dir);
        rc = -1;
    }
    if (rc) {
        for (int i = 0; i < count; i++)
            trace_free(out[i]);
        return -1;
    }
    return count;
}

static int wanted(const char *only, const char *name) {
    if (!only)
        return 1;
    size_t n = strlen(name);
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, name, n) == 0)
            return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

static int check_only(const char *only) {
    static const char *const known[] = { "speedup", "splits", "breakdown", "timeline", "calibration" };
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        int ok = 0;
        for (int i = 0; i < 5; i++)
            ok |= len == strlen(known[i]) && strncmp(p, known[i], len) == 0;
        if (!ok) {
            args_error("--only: unknown figure '%.*s' (expected speedup, splits, breakdown, timeline, calibration)", (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

int cmd_plot(int argc, char **argv) {
    static const struct option options[] = {
        { "predictions", required_argument, 0, OPT_PRED }, { "measurements", required_argument, 0, OPT_MEAS },
        { "trace", required_argument, 0, OPT_TRACE },      { "sim-trace", required_argument, 0, OPT_SIM },
        { "calib", required_argument, 0, OPT_CALIB },      { "traces", required_argument, 0, OPT_TRACES },
        { "out", required_argument, 0, OPT_OUT },          { "title", required_argument, 0, OPT_TITLE },
        { "only", required_argument, 0, OPT_ONLY },        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    const char *pred_path = NULL, *meas_path = NULL, *trace_path = NULL, *sim_path = NULL;
    const char *calib_path = NULL, *traces_dir = NULL, *out_dir = NULL, *title_arg = NULL, *only = NULL;
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_PRED: pred_path = optarg; break;
        case OPT_MEAS: meas_path = optarg; break;
        case OPT_TRACE: trace_path = optarg; break;
        case OPT_SIM: sim_path = optarg; break;
        case OPT_CALIB: calib_path = optarg; break;
        case OPT_TRACES: traces_dir = optarg; break;
        case OPT_OUT: out_dir = optarg; break;
        case OPT_TITLE: title_arg = optarg; break;
        case OPT_ONLY: only = optarg; break;
        case OPT_HELP: usage(stdout); return 0;
        default:
            return args_unknown_flag("plot", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return args_unexpected("plot", argv[optind]);
    if (!out_dir) {
        args_error("plot: --out DIR is required");
        return 2;
    }
    if (only && check_only(only))
        return 2;
    if (!pred_path && !trace_path && !sim_path && !calib_path) {
        args_error("plot: nothing to plot: give --predictions, --trace, --sim-trace or --calib with --traces");
        return 2;
    }
    if (meas_path && !pred_path) {
        args_error("plot: --measurements needs --predictions to compare with");
        return 2;
    }
    if (!calib_path != !traces_dir) {
        args_error("plot: --calib and --traces go together (the fit and the traces it came from)");
        return 2;
    }

    int rc = 1, n_pred = 0, n_meas = 0, n_traces = 0;
    prediction_row *pred = NULL, *meas = NULL;
    trace *measured = NULL, *simulated = NULL, **traces = NULL;
    calibration cal;
    char err[1024], title[512];
    if (pred_path && predictions_read_csv(pred_path, &pred, &n_pred, err, sizeof err))
        goto report;
    if (meas_path && predictions_read_csv(meas_path, &meas, &n_meas, err, sizeof err))
        goto report;
    if (trace_path && !(measured = trace_read(trace_path, err, sizeof err)))
        goto report;
    if (sim_path && !(simulated = trace_read(sim_path, err, sizeof err)))
        goto report;
    if (calib_path) {
        if (calibration_read(calib_path, &cal, err, sizeof err))
            goto report;
        traces = calloc(MAX_TRACES, sizeof *traces);
        if (!traces || (n_traces = read_trace_dir(traces_dir, traces)) < 0) {
            n_traces = 0;
            goto done;
        }
    }

    /* The title names the host and the network the numbers belong to. */
    const trace *any = measured ? measured : simulated ? simulated : NULL;
    for (int i = 0; !any && i < n_traces; i++)
        if (strcmp(traces[i]->run.net, "commbench") != 0) /* a training run's CNN, not the benchmark's */
            any = traces[i];
    if (title_arg)
        snprintf(title, sizeof title, "%s", title_arg);
    else if (any)
        snprintf(title, sizeof title, "on %s, CNN %s", any->run.host, any->run.net[0] ? any->run.net : "?");
    else if (calib_path)
        snprintf(title, sizeof title, "speedup on %s", cal.host);
    else
        snprintf(title, sizeof title, "speedup predictions (%s)", pred_path);

    if (pred_path && wanted(only, "speedup") && figures_speedup(pred, n_pred, meas, n_meas, title, out_dir, err, sizeof err))
        goto report;
    if (pred_path && wanted(only, "splits") &&
        figures_splits(pred, n_pred, meas, n_meas, title, out_dir, err, sizeof err)) {
        /* Asked for by name it must be drawn; otherwise a grid without splits just has none. */
        if (only)
            goto report;
        fprintf(stderr, "speedup: note: %s\n", err);
    }
    if (pred_path && wanted(only, "breakdown") && figures_breakdown(pred, n_pred, meas, n_meas, title, out_dir, err, sizeof err))
        goto report;
    if ((measured || simulated) && wanted(only, "timeline") && figures_timeline(measured, simulated, title, out_dir, err, sizeof err))
        goto report;
    if (n_traces && wanted(only, "calibration") &&
        figures_calibration(traces, n_traces, &cal.params, title, out_dir, err, sizeof err))
        goto report;
    printf("figures written to %s/\n", out_dir);
    rc = 0;
    goto done;
report:
    args_error("%s", err);
done:
    free(pred);
    free(meas);
    trace_free(measured);
    trace_free(simulated);
    for (int i = 0; i < n_traces; i++)
        trace_free(traces[i]);
    free(traces);
    return rc;
}
