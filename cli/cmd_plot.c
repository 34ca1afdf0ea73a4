/* speedup plot — the gnuplot figures from predictions, measurements, traces and a
 * calibration: every figure whose inputs are given, as PNG and SVG in --out DIR. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/commands.h"
#include "model/calibration.h"
#include "model/predictions.h"
#include "trace/trace.h"
#include "plots/figures.h"

#include <dirent.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup plot --out-dir DIR [INPUTS] [--title TEXT]\n"
            "\n"
            "Draws every figure whose inputs are given, as DIR/NAME.png and DIR/NAME.svg:\n"
            "  speedup, splits, breakdown   from --predictions (and --measurements)\n"
            "  timeline                     from --trace and/or --sim-trace\n"
            "  calibration                  from --calib with --traces\n"
            "  accuracy                     from --calib with --traces, when some trace has\n"
            "                               an accuracy curve (two points or more): measured,\n"
            "                               and predicted from the calibration's accuracy fit\n"
            "\n"
            "Inputs:\n"
            "  --predictions FILE   predictions CSV (speedup model/simulate --out)\n"
            "  --measurements FILE  measurements CSV, same columns, measured\n"
            "  --trace FILE         a measured *.trace.jsonl (timeline, top)\n"
            "  --sim-trace FILE     a simulated *.trace.jsonl (timeline, bottom)\n"
            "  --calib FILE         calibration.json whose fit figure 5 shows\n"
            "  --traces DIR         the *.trace.jsonl files the calibration was fitted on\n"
            "Output:\n"
            "  --out-dir DIR        where the figures go (created; --out DIR is its\n"
            "                       older name)                               [required]\n"
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
    static const char *const known[] = { "speedup", "splits", "breakdown", "timeline", "calibration", "accuracy" };
    for (const char *p = only; *p;) {
        size_t len = strcspn(p, ",");
        int ok = 0;
        for (int i = 0; i < 6; i++)
            ok |= len == strlen(known[i]) && strncmp(p, known[i], len) == 0;
        if (!ok) {
            args_error("--only: unknown figure '%.*s' (expected speedup, splits, breakdown, timeline, calibration, "
                       "accuracy)", (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    return 0;
}

typedef struct {
    const char *pred_path, *meas_path, *trace_path, *sim_path, *calib_path, *traces_dir, *out_dir, *title, *only;
} plot_args;

/* 0 to go on, else the exit status (2 usage, -1 after --help). */
static int parse_args(int argc, char **argv, plot_args *a) {
    static const struct option options[] = {
        { "predictions", required_argument, 0, OPT_PRED }, { "measurements", required_argument, 0, OPT_MEAS },
        { "trace", required_argument, 0, OPT_TRACE },      { "sim-trace", required_argument, 0, OPT_SIM },
        { "calib", required_argument, 0, OPT_CALIB },      { "traces", required_argument, 0, OPT_TRACES },
        { "out", required_argument, 0, OPT_OUT },          { "out-dir", required_argument, 0, OPT_OUT },          { "title", required_argument, 0, OPT_TITLE },
        { "only", required_argument, 0, OPT_ONLY },        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_PRED: a->pred_path = optarg; break;
        case OPT_MEAS: a->meas_path = optarg; break;
        case OPT_TRACE: a->trace_path = optarg; break;
        case OPT_SIM: a->sim_path = optarg; break;
        case OPT_CALIB: a->calib_path = optarg; break;
        case OPT_TRACES: a->traces_dir = optarg; break;
        case OPT_OUT: a->out_dir = optarg; break;
        case OPT_TITLE: a->title = optarg; break;
        case OPT_ONLY: a->only = optarg; break;
        case OPT_HELP: usage(stdout); return -1;
        default:
            return args_unknown_flag("plot", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return args_unexpected("plot", argv[optind]);
    if (!a->out_dir) {
        args_error("plot: --out-dir DIR is required");
        return 2;
    }
    if (a->only && check_only(a->only))
        return 2;
    if (!a->pred_path && !a->trace_path && !a->sim_path && !a->calib_path) {
        args_error("plot: nothing to plot: give --predictions, --trace, --sim-trace or --calib with --traces");
        return 2;
    }
    if (a->meas_path && !a->pred_path) {
        args_error("plot: --measurements needs --predictions to compare with");
        return 2;
    }
    if (!a->calib_path != !a->traces_dir) {
        args_error("plot: --calib and --traces go together (the fit and the traces it came from)");
        return 2;
    }
    return 0;
}

/* What the figures read. */
typedef struct {
    prediction_row *pred, *meas;
    int n_pred, n_meas, n_traces;
    trace *measured, *simulated, **traces;
    calibration cal;
} plot_inputs;

static void inputs_free(plot_inputs *in) {
    free(in->pred);
    free(in->meas);
    trace_free(in->measured);
    trace_free(in->simulated);
    for (int i = 0; i < in->n_traces; i++)
        trace_free(in->traces[i]);
    free(in->traces);
}

/* 0, -1 with the reason in err, or -2 when it has been printed. */
static int read_inputs(const plot_args *a, plot_inputs *in, char *err, int errlen) {
    if (a->pred_path && predictions_read_csv(a->pred_path, &in->pred, &in->n_pred, err, errlen))
        return -1;
    if (a->meas_path && predictions_read_csv(a->meas_path, &in->meas, &in->n_meas, err, errlen))
        return -1;
    if (a->trace_path && !(in->measured = trace_read(a->trace_path, err, errlen)))
        return -1;
    if (a->sim_path && !(in->simulated = trace_read(a->sim_path, err, errlen)))
        return -1;
    if (!a->calib_path)
        return 0;
    if (calibration_read(a->calib_path, &in->cal, err, errlen))
        return -1;
    in->traces = calloc(MAX_TRACES, sizeof *in->traces);
    if (!in->traces || (in->n_traces = read_trace_dir(a->traces_dir, in->traces)) < 0) {
        in->n_traces = 0;
        return -2;
    }
    return 0;
}

/* The title names the host and the network the numbers belong to. */
static void default_title(const plot_args *a, const plot_inputs *in, char *title, size_t size) {
    const trace *any = in->measured ? in->measured : in->simulated;
    for (int i = 0; !any && i < in->n_traces; i++)
        if (strcmp(in->traces[i]->run.net, "commbench") != 0) /* a training run's CNN, not the benchmark's */
            any = in->traces[i];
    if (a->title)
        snprintf(title, size, "%s", a->title);
    else if (any)
        snprintf(title, size, "on %s, CNN %s", any->run.host, any->run.net[0] ? any->run.net : "?");
    else if (a->calib_path)
        snprintf(title, size, "speedup on %s", in->cal.host);
    else
        snprintf(title, size, "speedup predictions (%s)", a->pred_path);
}

/* Every figure whose inputs are there (and --only wants): 0, or -1 with err. */
static int draw(const plot_args *a, const plot_inputs *in, const char *title, char *err, int errlen) {
    const char *only = a->only, *out = a->out_dir;
    if (in->pred && wanted(only, "speedup") &&
        figures_speedup(in->pred, in->n_pred, in->meas, in->n_meas, title, out, err, errlen))
        return -1;
    if (in->pred && wanted(only, "splits") &&
        figures_splits(in->pred, in->n_pred, in->meas, in->n_meas, title, out, err, errlen)) {
        /* Asked for by name it must be drawn; otherwise a grid without splits just has none. */
        if (only)
            return -1;
        fprintf(stderr, "speedup: note: %s\n", err);
    }
    if (in->pred && wanted(only, "breakdown") &&
        figures_breakdown(in->pred, in->n_pred, in->meas, in->n_meas, title, out, err, errlen))
        return -1;
    if ((in->measured || in->simulated) && wanted(only, "timeline") &&
        figures_timeline(in->measured, in->simulated, title, out, err, errlen))
        return -1;
    if (in->n_traces && wanted(only, "calibration") &&
        figures_calibration(in->traces, in->n_traces, &in->cal.params, title, out, err, errlen))
        return -1;
    /* Drawn when the traces hold accuracy curves; asked for by name, their absence is an error. */
    if (in->n_traces && wanted(only, "accuracy") && (only || figures_accuracy_curves(in->traces, in->n_traces) > 0) &&
        figures_accuracy(in->traces, in->n_traces, &in->cal, title, out, err, errlen))
        return -1;
    if (only && wanted(only, "accuracy") && !in->n_traces) {
        snprintf(err, (size_t)errlen, "plot: the accuracy figure needs --calib and --traces");
        return -1;
    }
    return 0;
}

int cmd_plot(int argc, char **argv) {
    plot_args a = { 0 };
    int code = parse_args(argc, argv, &a);
    if (code)
        return code < 0 ? 0 : code;
    plot_inputs in = { 0 };
    char err[1024], title[512];
    int rc = read_inputs(&a, &in, err, sizeof err);
    if (rc == 0) {
        default_title(&a, &in, title, sizeof title);
        rc = draw(&a, &in, title, err, sizeof err);
    }
    if (rc == -1)
        args_error("%s", err);
    else if (rc == 0)
        printf("figures written to %s/\n", a.out_dir);
    inputs_free(&in);
    return rc == 0 ? 0 : 1;
}
