/* speedup trace — look at a recorded trace: per-phase totals per rank, or convert it to
 * Chrome trace-event JSON for Perfetto / chrome://tracing. */
#include "cli/args.h"
#include "cli/commands.h"
#include "model/chrome.h"
#include "model/trace.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup trace --summary IN.trace.jsonl\n"
            "       speedup trace --chrome IN.trace.jsonl OUT.json\n"
            "\n"
            "  --summary   per rank: seconds in startup, compute, comm, wait, eval, their sum,\n"
            "              the rank's wall time (first start to last end) and the share of it\n"
            "              the phases account for\n"
            "  --chrome    Chrome trace-event JSON, one thread per rank (open in Perfetto)\n"
            "  --help      this text\n");
}

static int summary(const trace *t) {
    int ranks = 0;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].rank + 1 > ranks)
            ranks = t->events[i].rank + 1;
    const costmodel_config *c = &t->run.config;
    char sync[24];
    costmodel_sync_format(c->sync, c->every_n, sync, sizeof sync);
    printf("run: %d workers x %d cores, sync %s, topology %s, host %s, net %s\n", c->workers, c->cores, sync,
           costmodel_topology_name(c->topology), t->run.host, t->run.net);
    printf("%4s %10s %10s %10s %10s %10s %10s %10s %9s\n", "rank", "startup_s", "compute_s", "comm_s", "wait_s",
           "eval_s", "sum_s", "wall_s", "covered");
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
        printf("%4d %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %8.1f%%\n", r, total[TRACE_STARTUP],
               total[TRACE_COMPUTE], total[TRACE_COMM], total[TRACE_WAIT], total[TRACE_EVAL], sum, wall,
               wall > 0 ? 100.0 * sum / wall : 100.0);
    }
    return 0;
}

enum { OPT_SUMMARY = 1, OPT_CHROME, OPT_HELP };

int cmd_trace(int argc, char **argv) {
    static const struct option options[] = {
        { "summary", no_argument, 0, OPT_SUMMARY },
        { "chrome", no_argument, 0, OPT_CHROME },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int mode = 0, code;
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
        mode = code;
    }
    int want = mode == OPT_CHROME ? 2 : 1;
    if (!mode || argc - optind != want) {
        args_error("trace: expected --summary IN or --chrome IN OUT (try speedup trace --help)");
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
