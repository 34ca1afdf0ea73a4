/* speedup trace — look at a recorded trace: per-phase totals per rank, convert it to
 * Chrome trace-event JSON for Perfetto / chrome://tracing, or turn training traces into
 * the measurements CSV of DESIGN.md (one row per run, speedup against a K = 1 run). The
 * traces may be the project's or PyTorch profiler traces and Horovod timelines
 * (trace/tracefile.h, cli/import_flags.h). */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/import_flags.h"
#include "trace/chrome.h"
#include "fit/fit.h"
#include "trace/traceinfo.h"
#include "model/calibration.h"
#include "model/netcost.h"
#include "model/predictions.h"
#include "trace/measurements.h"
#include "trace/trace.h"
#include "trace/tracefile.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup trace --summary [--calib FILE] [import flags] IN...\n"
            "       speedup trace --chrome [import flags] IN... OUT.json\n"
            "       speedup trace --jsonl [import flags] IN... OUT.trace.jsonl\n"
            "       speedup trace --measurements [--baseline K1] [--out FILE] [import flags] IN...\n"
            "\n"
            "IN: a trace of `speedup train` (*.trace.jsonl), or Chrome trace-event JSON of a\n"
            "PyTorch profiler (one file per rank, RUN.rank0.json ...: give them all) or a\n"
            "Horovod timeline, told apart by content. --summary, --chrome and --jsonl take\n"
            "one run.\n"
            "\n"
            "  --summary   per rank: seconds in startup, compute, comm, wait, eval, their sum,\n"
            "              the rank's wall time (first start to last end) and the share of it\n"
            "              the phases account for; with communication beside the rank's own\n"
            "              timeline (DDP's all-reduce during backward), its seconds too\n"
            "              (beside_s, not in the sum); for an async or hogwild run, the\n"
            "              gradients the master applied, the workers' pushes and pulls, the\n"
            "              staleness (median, 90th percentile, mean: updates applied between\n"
            "              a gradient's pull and its update) and the master's time per request;\n"
            "              first, where the trace has them, the host's speed beside the run\n"
            "              (train/probe.h: the sgemm probe, the transfer between two cores,\n"
            "              before and after, and the steal time) and rank 0's layers\n"
            "  --calib FILE  with --summary: each of rank 0's layers priced by FILE's layer\n"
            "              kinds' rates (what `--net` prices another network with, before the\n"
            "              measured step's level) against its time: where the calibration\n"
            "              prices your network's layers off (docs/networks.md)\n"
            "  --chrome    Chrome trace-event JSON, one thread per rank (open in Perfetto)\n"
            "  --jsonl     the run as a speedup trace (trace/trace.h): a profiler trace read\n"
            "              with this run's own --cores, --batch ... once, for a directory of\n"
            "              runs that differ in them (`speedup calibrate --from-traces`)\n"
            "  --measurements  the measurements CSV of DESIGN.md, one row per training trace:\n"
            "              time_s = the run's training time (trace/traceinfo.h: latest end of\n"
            "              any rank's non-eval events, less the eval before it); speedup =\n"
            "              baseline time_s / time_s (every interval = the value: one run each);\n"
            "              compute_s, comm_s, wait_s, startup_s, update_s = that phase's seconds per\n"
            "              rank, averaged over the ranks. Communication-benchmark traces are\n"
            "              skipped. Every trace must run the baseline's workload (D, B, E)\n"
            "  --baseline FILE  the run speedups are against (default: the first IN with\n"
            "              1 worker x 1 core)\n"
            "  --out FILE  write the CSV to FILE (atomically) instead of stdout\n"
            "  --help      this text\n"
            "\n" IMPORT_FLAGS_USAGE);
}

/* An async run's requests and staleness (trace/traceinfo.h), under the table. */
static int async_summary(const trace *t) {
    traceinfo_async a;
    if (traceinfo_async_of(t, &a)) {
        args_error("trace: out of memory");
        return 1;
    }
    if (!job_sync_is_async(t->run.config.sync))
        return 0;
    printf("async: the master applied %ld gradients (workers' pushes %ld, pulls %ld); staleness median %g, "
           "p90 %g, mean %.2f; the master's median push %.3f ms, update %.3f ms, pull %.3f ms\n",
           a.updates, a.pushes, a.pulls, a.staleness_median, a.staleness_p90, a.staleness_mean, 1e3 * a.push_s,
           1e3 * a.update_s, 1e3 * a.pull_s);
    return 0;
}

/* Rank 0's training passes layer by layer: where a step's compute goes. */
static void layers_line(const trace_layers *ly) {
    double total = 0;
    for (int i = 0; i < ly->cost.n; i++)
        total += ly->time_s[i];
    printf("layers (rank 0, %ld steps, %.0f examples):", ly->steps, ly->examples);
    for (int i = 0; i < ly->cost.n; i++) {
        const network_layer *y = &ly->cost.layer[i];
        const double t = ly->time_s[i];
        printf("%s %d %s %.4g s (%.0f%%", i ? ";" : "", i, network_kind_name(y->kind), t,
               total > 0 ? 100 * t / total : 0.0);
        if (y->flops > 0 && t > 0)
            printf(", %.3g GFLOP/s", y->flops * ly->examples / t / 1e9);
        printf(")");
    }
    printf("\n");
}

/* The same layers priced by a calibration's rates (model/netcost.h), against their times;
 * layers of no work left out. */
static void priced_line(const trace_layers *ly, const calibration_network *n, const char *path) {
    double measured = 0, priced = 0;
    printf("priced by %s's rates (measured on %s):", path, n->spec);
    for (int i = 0, first = 1; i < ly->cost.n; i++) {
        const network_layer *y = &ly->cost.layer[i];
        if (network_layer_idle(y))
            continue;
        const double p = netcost_layer_s(n, y, ly->examples, (double)ly->steps), t = ly->time_s[i];
        measured += t, priced += p;
        printf("%s %d %s %.4g s", first ? "" : ";", i, network_kind_name(y->kind), p);
        if (t > 0)
            printf(" (%+.0f%%)", 100 * (p / t - 1));
        first = 0;
    }
    printf("; all %.4g s", priced);
    if (measured > 0)
        printf(" (%+.0f%%)", 100 * (priced / measured - 1));
    printf("\n");
}

static int summary(const trace *t, const char *calib_path) {
    int ranks = traceinfo_ranks(t);
    const job_config *c = &t->run.config;
    char sync[24];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    bool beside = false;
    for (long i = 0; i < t->n_events; i++)
        beside |= traceinfo_is_background(&t->events[i]);
    static calibration cal;
    char err[1400];
    if (calib_path) {
        if (calibration_read(calib_path, &cal, err, sizeof err)) {
            args_error("trace: %s", err);
            return 1;
        }
        if (!cal.network.known) {
            args_error("trace: --calib %s has no per-layer rates to price layers with (calibrate again: its traces "
                       "time each layer kind)", calib_path);
            return 2;
        }
        if (!t->run.layers.has) {
            args_error("trace: --calib: the trace times no layers (a `speedup train --trace` of this version does)");
            return 2;
        }
    }
    printf("run: %d workers x %d cores, sync %s, topology %s, host %s, net %s%s\n", c->workers, c->cores, sync,
           job_topology_name(c->topology), t->run.host, t->run.net,
           t->run.waits_block ? ", waits block" : "");
    if (t->run.layers.has)
        layers_line(&t->run.layers);
    if (calib_path)
        priced_line(&t->run.layers, &cal.network, calib_path);
    const trace_host_speed *hs = &t->run.speed;
    if (hs->has) {
        printf("host speed: probe %.3f ms before the run, %.3f ms after; ", 1e3 * hs->probe_before_s,
               1e3 * hs->probe_after_s);
        if (hs->transfer_before_s > 0 || hs->transfer_after_s > 0)
            printf("%.0f KiB between two cores in %.0f us before, %.0f us after; ", TRACE_TRANSFER_BYTES / 1024.0,
                   1e6 * hs->transfer_before_s, 1e6 * hs->transfer_after_s);
        printf("steal %.2f s of %.1f s of CPU (%.1f%%)\n", hs->steal_s, hs->cpu_s,
               hs->cpu_s > 0 ? 100 * hs->steal_s / hs->cpu_s : 0.0);
    }
    printf("%4s %10s %10s %10s %10s %10s %10s %10s %10s %9s%s\n", "rank", "startup_s", "compute_s", "update_s",
           "comm_s", "wait_s", "eval_s", "sum_s", "wall_s", "covered", beside ? "   beside_s" : "");
    traceinfo_rank_totals *totals;
    if (traceinfo_rank_totals_of(t, &totals) < 0) {
        args_error("trace: out of memory");
        return 1;
    }
    for (int r = 0; r < ranks; r++) {
        const traceinfo_rank_totals *x = &totals[r];
        if (x->events == 0) {
            printf("%4d %10s\n", r, "no events");
            continue;
        }
        const double *ph = x->phase_s, wall = x->last_s - x->first_s;
        printf("%4d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %8.1f%%", r, ph[TRACE_STARTUP],
               ph[TRACE_COMPUTE], ph[TRACE_UPDATE], ph[TRACE_COMM], ph[TRACE_WAIT], ph[TRACE_EVAL], x->sum_s, wall,
               wall > 0 ? 100.0 * x->sum_s / wall : 100.0);
        if (beside)
            printf(" %10.3f", x->background_s);
        printf("\n");
    }
    free(totals);
    return async_summary(t);
}

static int same_workload(const trace *a, const trace *b) {
    const job_config *x = &a->run.config, *y = &b->run.config;
    return x->examples == y->examples && x->batch == y->batch && x->epochs == y->epochs;
}

/* One row per training run of in, speedup against base (base_name in messages). */
static int measurements(const tracefile_set *in, const trace *base, const char *base_name, const char *out) {
    char err[1024];
    prediction_row *rows = calloc((size_t)in->n + 1, sizeof *rows);
    int n_rows = 0;
    if (!rows) {
        args_error("trace: out of memory");
        return 1;
    }
    if (strcmp(base->run.net, FIT_COMMBENCH_NET) == 0) {
        args_error("%s: a communication benchmark, not a training run: cannot be the baseline", base_name);
        free(rows);
        return 1;
    }
    double base_s = traceinfo_training_time(base);
    if (!(base_s > 0)) {
        args_error("%s: no training time in the baseline (no events outside eval)", base_name);
        free(rows);
        return 1;
    }
    for (int i = 0; i < in->n; i++) {
        const trace *t = in->runs[i].t;
        if (strcmp(t->run.net, FIT_COMMBENCH_NET) == 0)
            continue;
        if (!same_workload(t, base)) {
            const job_config *c = &t->run.config, *b = &base->run.config;
            args_error("%s: workload D=%ld B=%ld E=%d differs from the baseline's (%s: D=%ld B=%ld E=%d)",
                       in->runs[i].name, c->examples, c->batch, c->epochs, base_name, b->examples, b->batch,
                       b->epochs);
            free(rows);
            return 1;
        }
        prediction_row r = measurements_from_trace(t);
        if (!(r.time_s > 0)) {
            args_error("%s: no training time (no events outside eval)", in->runs[i].name);
            free(rows);
            return 1;
        }
        r.speedup = base_s / r.time_s;
        predictions_set_point(&r);
        rows[n_rows++] = r;
    }
    int rc = 0;
    if (out) {
        if ((rc = predictions_save_csv(out, rows, n_rows, err, sizeof err) ? 1 : 0))
            args_error("%s", err);
    } else {
        predictions_write_csv(stdout, rows, n_rows);
    }
    free(rows);
    return rc;
}

/* The baseline: --baseline's run, else the first training run of 1 worker x 1 core. */
static int measure(const tracefile_set *in, const char *baseline_path, const import_flags *f, const char *out) {
    char err[1400];
    if (!baseline_path) {
        for (int i = 0; i < in->n; i++) {
            const trace *t = in->runs[i].t;
            if (strcmp(t->run.net, FIT_COMMBENCH_NET) != 0 && t->run.config.workers == 1 && t->run.config.cores == 1)
                return measurements(in, t, in->runs[i].name, out);
        }
        args_error("trace: no training trace with 1 worker x 1 core among the inputs; give --baseline");
        return 1;
    }
    tracefile_set base;
    if (tracefile_open(&baseline_path, 1, &f->opts, true, &base, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    int rc = measurements(in, base.runs[0].t, baseline_path, out);
    tracefile_set_free(&base);
    return rc;
}

enum { OPT_SUMMARY = 1, OPT_CHROME, OPT_JSONL, OPT_MEASUREMENTS, OPT_BASELINE, OPT_OUT, OPT_CALIB, OPT_HELP };

static const char *mode_name(int mode) {
    return mode == OPT_SUMMARY ? "summary" : mode == OPT_CHROME ? "chrome" : "jsonl";
}

/* --summary, --chrome or --jsonl of the one run paths[0..n) make. */
static int one_run(int mode, const char *const *paths, int n, const char *out, const char *calib,
                   const import_flags *f) {
    char err[1400];
    tracefile_set in;
    if (tracefile_open(paths, n, &f->opts, false, &in, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    int rc = 0;
    if (in.n != 1) {
        args_error("trace: the %d files make %d runs; --%s takes one run (the rank files of one PyTorch run, or "
                   "one trace)", n, in.n, mode_name(mode));
        rc = 2;
    } else if (mode == OPT_SUMMARY) {
        rc = summary(in.runs[0].t, calib);
    } else if (mode == OPT_CHROME ? chrome_write(in.runs[0].t, 0, "measured", out, err, sizeof err)
                                  : trace_write(in.runs[0].t, out, err, sizeof err)) {
        args_error("%s", err);
        rc = 1;
    }
    tracefile_set_free(&in);
    return rc;
}

static int run_mode(int mode, char **args, int n, const char *baseline, const char *out, const char *calib,
                    const import_flags *f) {
    if (mode == OPT_MEASUREMENTS) {
        if (n < 1) {
            args_error("trace: --measurements needs one or more traces (try speedup trace --help)");
            return 2;
        }
        char err[1400];
        tracefile_set in;
        if (tracefile_open((const char *const *)args, n, &f->opts, true, &in, err, sizeof err)) {
            args_error("%s", err);
            return 1;
        }
        int rc = measure(&in, baseline, f, out);
        tracefile_set_free(&in);
        return rc;
    }
    bool has_out = mode == OPT_CHROME || mode == OPT_JSONL;
    if (!mode || n < (has_out ? 2 : 1)) {
        args_error("trace: expected --summary IN..., --chrome IN... OUT, --jsonl IN... OUT or --measurements IN... "
                   "(try speedup trace --help)");
        return 2;
    }
    return one_run(mode, (const char *const *)args, has_out ? n - 1 : n, args[n - 1], calib, f);
}

int cmd_trace(int argc, char **argv) {
    static const struct option options[] = {
        { "summary", no_argument, 0, OPT_SUMMARY },
        { "chrome", no_argument, 0, OPT_CHROME },
        { "jsonl", no_argument, 0, OPT_JSONL },
        { "measurements", no_argument, 0, OPT_MEASUREMENTS },
        { "baseline", required_argument, 0, OPT_BASELINE },
        { "out", required_argument, 0, OPT_OUT },
        { "calib", required_argument, 0, OPT_CALIB },
        { "help", no_argument, 0, OPT_HELP },
        IMPORT_FLAGS_LONG_OPTIONS,
        { 0, 0, 0, 0 },
    };
    int mode = 0, code;
    const char *baseline = NULL, *out = NULL, *calib = NULL;
    import_flags f;
    import_flags_init(&f);
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        int handled = import_flags_handle(&f, code, optarg);
        if (handled < 0)
            return 2;
        if (handled == 0)
            continue;
        if (code == OPT_HELP) {
            usage(stdout);
            return 0;
        }
        if (code == '?') {
            args_error("trace: unknown flag '%s' (try speedup trace --help)", argv[optind - 1]);
            return 2;
        }
        if (code == OPT_BASELINE)
            baseline = optarg;
        else if (code == OPT_OUT)
            out = optarg;
        else if (code == OPT_CALIB)
            calib = optarg;
        else
            mode = code;
    }
    if ((baseline || out) && mode != OPT_MEASUREMENTS) {
        args_error("trace: --baseline and --out go with --measurements (try speedup trace --help)");
        return 2;
    }
    if (calib && mode != OPT_SUMMARY) {
        args_error("trace: --calib goes with --summary (try speedup trace --help)");
        return 2;
    }
    int rc = import_flags_finish(&f);
    if (rc == 0)
        rc = run_mode(mode, argv + optind, argc - optind, baseline, out, calib, &f);
    import_flags_release(&f);
    return rc == 3 ? 0 : rc;
}
