/* speedup trace — look at a recorded trace: per-phase totals per rank, convert it to
 * Chrome trace-event JSON for Perfetto / chrome://tracing, or turn training traces into
 * the measurements CSV of DESIGN.md (one row per run, speedup against a K = 1 run). */
#include "cli/args.h"
#include "cli/commands.h"
#include "model/chrome.h"
#include "model/fit.h"
#include "model/traceinfo.h"
#include "model/predictions.h"
#include "model/trace.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup trace --summary IN.trace.jsonl\n"
            "       speedup trace --chrome IN.trace.jsonl OUT.json\n"
            "       speedup trace --measurements [--baseline K1.trace.jsonl] [--out FILE] IN...\n"
            "\n"
            "  --summary   per rank: seconds in startup, compute, comm, wait, eval, their sum,\n"
            "              the rank's wall time (first start to last end) and the share of it\n"
            "              the phases account for\n"
            "  --chrome    Chrome trace-event JSON, one thread per rank (open in Perfetto)\n"
            "  --measurements  the measurements CSV of DESIGN.md, one row per training trace:\n"
            "              time_s = the run's training time (model/traceinfo.h: latest end of\n"
            "              any rank's non-eval events, less the eval before it); speedup =\n"
            "              baseline time_s / time_s (every interval = the value: one run each);\n"
            "              compute_s, comm_s, wait_s, startup_s, update_s = that phase's seconds per\n"
            "              rank, averaged over the ranks. Communication-benchmark traces are\n"
            "              skipped. Every trace must run the baseline's workload (D, B, E)\n"
            "  --baseline FILE  the run speedups are against (default: the first IN with\n"
            "              1 worker x 1 core)\n"
            "  --out FILE  write the CSV to FILE (atomically) instead of stdout\n"
            "  --help      this text\n");
}

static int summary(const trace *t) {
    int ranks = traceinfo_ranks(t);
    const costmodel_config *c = &t->run.config;
    char sync[24];
    costmodel_sync_format(c->sync, c->every_n, sync, sizeof sync);
    printf("run: %d workers x %d cores, sync %s, topology %s, host %s, net %s\n", c->workers, c->cores, sync,
           costmodel_topology_name(c->topology), t->run.host, t->run.net);
    printf("%4s %10s %10s %10s %10s %10s %10s %10s %10s %9s\n", "rank", "startup_s", "compute_s", "update_s",
           "comm_s", "wait_s", "eval_s", "sum_s", "wall_s", "covered");
    for (int r = 0; r < ranks; r++) {
        double total[TRACE_PHASE_COUNT] = { 0 }, first = 1e300, last = -1e300, sum = 0;
        long n = 0;
        for (long i = 0; i < t->n_events; i++) {
            const trace_event *e = &t->events[i];
            if (e->rank != r)
                continue;
            total[e->ph] += e->t1_s - e->t0_s;
            sum += e->t1_s - e->t0_s;
            if (e->t0_s < first) first = e->t0_s;
            if (e->t1_s > last) last = e->t1_s;
            n++;
        }
        if (n == 0) {
            printf("%4d %10s\n", r, "no events");
            continue;
        }
        double wall = last - first;
        printf("%4d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %8.1f%%\n", r, total[TRACE_STARTUP],
               total[TRACE_COMPUTE], total[TRACE_UPDATE], total[TRACE_COMM], total[TRACE_WAIT], total[TRACE_EVAL], sum,
               wall, wall > 0 ? 100.0 * sum / wall : 100.0);
    }
    return 0;
}

static int same_workload(const trace *a, const trace *b) {
    const costmodel_config *x = &a->run.config, *y = &b->run.config;
    return x->examples == y->examples && x->batch == y->batch && x->epochs == y->epochs;
}

static int measurements(char **paths, int n, const char *baseline_path, const char *out) {
    char err[1024];
    trace **t = calloc((size_t)n + 1, sizeof *t);
    prediction_row *rows = calloc((size_t)n, sizeof *rows);
    int rc = 1, n_rows = 0;
    const trace *base = NULL;
    const char *base_name = baseline_path;
    if (!t || !rows) {
        args_error("trace: out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (!(t[i] = trace_read(paths[i], err, sizeof err))) {
            args_error("%s", err);
            goto done;
        }
    }
    if (baseline_path) {
        if (!(t[n] = trace_read(baseline_path, err, sizeof err))) {
            args_error("%s", err);
            goto done;
        }
        base = t[n];
    } else {
        for (int i = 0; i < n && !base; i++)
            if (strcmp(t[i]->run.net, FIT_COMMBENCH_NET) != 0 && t[i]->run.config.workers == 1 &&
                t[i]->run.config.cores == 1) {
                base = t[i];
                base_name = paths[i];
            }
        if (!base) {
            args_error("trace: no training trace with 1 worker x 1 core among the inputs; give --baseline");
            goto done;
        }
    }
    if (strcmp(base->run.net, FIT_COMMBENCH_NET) == 0) {
        args_error("%s: a communication benchmark, not a training run: cannot be the baseline", base_name);
        goto done;
    }
    double base_s = traceinfo_training_time(base);
    if (!(base_s > 0)) {
        args_error("%s: no training time in the baseline (no events outside eval)", base_name);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        if (strcmp(t[i]->run.net, FIT_COMMBENCH_NET) == 0)
            continue;
        if (!same_workload(t[i], base)) {
            const costmodel_config *c = &t[i]->run.config, *b = &base->run.config;
            args_error("%s: workload D=%ld B=%ld E=%d differs from the baseline's (%s: D=%ld B=%ld E=%d)", paths[i],
                       c->examples, c->batch, c->epochs, base_name, b->examples, b->batch,
                       b->epochs);
            goto done;
        }
        prediction_row r = predictions_from_trace(t[i]);
        if (!(r.time_s > 0)) {
            args_error("%s: no training time (no events outside eval)", paths[i]);
            goto done;
        }
        r.speedup = base_s / r.time_s;
        predictions_set_point(&r);
        rows[n_rows++] = r;
    }
    if (out) {
        if (predictions_save_csv(out, rows, n_rows, err, sizeof err)) {
            args_error("%s", err);
            goto done;
        }
    } else {
        predictions_write_csv(stdout, rows, n_rows);
    }
    rc = 0;
done:
    if (t)
        for (int i = 0; i <= n; i++)
            trace_free(t[i]);
    free(t);
    free(rows);
    return rc;
}

enum { OPT_SUMMARY = 1, OPT_CHROME, OPT_MEASUREMENTS, OPT_BASELINE, OPT_OUT, OPT_HELP };

int cmd_trace(int argc, char **argv) {
    static const struct option options[] = {
        { "summary", no_argument, 0, OPT_SUMMARY },
        { "chrome", no_argument, 0, OPT_CHROME },
        { "measurements", no_argument, 0, OPT_MEASUREMENTS },
        { "baseline", required_argument, 0, OPT_BASELINE },
        { "out", required_argument, 0, OPT_OUT },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int mode = 0, code;
    const char *baseline = NULL, *out = NULL;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
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
        else
            mode = code;
    }
    if ((baseline || out) && mode != OPT_MEASUREMENTS) {
        args_error("trace: --baseline and --out go with --measurements (try speedup trace --help)");
        return 2;
    }
    if (mode == OPT_MEASUREMENTS) {
        if (optind >= argc) {
            args_error("trace: --measurements needs one or more IN.trace.jsonl (try speedup trace --help)");
            return 2;
        }
        return measurements(argv + optind, argc - optind, baseline, out);
    }
    int want = mode == OPT_CHROME ? 2 : 1;
    if (!mode || argc - optind != want) {
        args_error("trace: expected --summary IN, --chrome IN OUT or --measurements IN... (try speedup trace --help)");
        return 2;
    }
    char err[1024];
    trace *t = trace_read(argv[optind], err, sizeof err);
    if (!t) {
        args_error("%s", err);
        return 1;
    }
    int rc = 0;
    if (mode == OPT_SUMMARY) {
        rc = summary(t);
    } else if (chrome_write(t, 0, "measured", argv[optind + 1], err, sizeof err)) {
        args_error("%s", err);
        rc = 1;
    }
    trace_free(t);
    return rc;
}
