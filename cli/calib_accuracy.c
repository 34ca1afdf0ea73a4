/* calib_accuracy — the accuracy plan (see calib_accuracy.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/calib_accuracy.h"
#include "util/host.h"

#include "cli/spawn.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

const calib_accuracy_run calib_accuracy_runs[CALIB_ACCURACY_RUNS] = {
    { 1, "batch", false }, { 2, "batch", true }, { 2, "every:8", false }, { 2, "epoch", false },
    { 4, "every:8", false }, { 4, "async", false },
};

long calib_accuracy_limit(double budget_s, int epochs) {
    /* 1.15: the test set's forward pass each epoch and the subsets, beside the training. */
    const double d = floor(budget_s * CALIB_ACCURACY_RATE / (CALIB_ACCURACY_RUNS * (epochs > 0 ? epochs : 1) * 1.15) /
                           64.0) * 64.0;
    return d < 640 ? 640 : d > 60000 ? 60000 : (long)d;
}

long calib_accuracy_eval_every(const calib_accuracy_run *r, long limit) {
    if (strcmp(r->sync, "epoch") == 0 || strcmp(r->sync, "async") == 0)
        return 0;
    const bool one_batch = strcmp(r->sync, "batch") == 0 && !r->batch_per_worker;
    const double g = (double)CALIB_ACCURACY_BATCH * (one_batch ? 1 : r->workers);
    const double steps = (double)limit / (10 * g);
    if (strcmp(r->sync, "every:8") == 0) {
        const long n = 8 * lround(steps / 8);
        return n < 8 ? 8 : n;
    }
    const long n = lround(steps);
    return n < 1 ? 1 : n;
}

void calib_accuracy_trace_name(const calib_accuracy_run *r, char *buf, size_t len) {
    const char *sync = strcmp(r->sync, "every:8") == 0 ? "every8" : r->sync;
    snprintf(buf, len, "acc-%dx1-%s%s-b%d.trace.jsonl", r->workers, sync, r->batch_per_worker ? "-bpw" : "",
             CALIB_ACCURACY_BATCH);
}

/* Run r, the i-th of the plan; 0, or -1 with err. */
static int run_one(const calib_accuracy_run *r, int i, const char *dir, long limit, int epochs, const char *hostfile,
                   const char *net, char *err, int errlen) {
    char path[4096], name[128], k[16], b[16], l[24], e[16], every[24], subset[24], sub[512];
    calib_accuracy_trace_name(r, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(k, sizeof k, "%d", r->workers);
    snprintf(b, sizeof b, "%d", CALIB_ACCURACY_BATCH);
    snprintf(l, sizeof l, "%ld", limit);
    snprintf(e, sizeof e, "%d", epochs);
    const long n_every = calib_accuracy_eval_every(r, limit);
    snprintf(every, sizeof every, "%ld", n_every);
    snprintf(subset, sizeof subset, "%ld", limit < 2000 ? limit : 2000);
    const char *topology = strcmp(r->sync, "async") == 0 ? "ps" : "allreduce"; /* async: through its server */
    const char *av[32] = { "train", "--workers", k, "--threads", "1", "--sync", r->sync, "--topology", topology,
                           "--batch", b, "--limit", l, "--epochs", e, "--quiet", "--trace", path };
    int a = 18;
    if (n_every > 0) {
        av[a++] = "--eval-every";
        av[a++] = every;
        av[a++] = "--eval-subset";
        av[a++] = subset;
    }
    if (r->batch_per_worker)
        av[a++] = "--batch-per-worker";
    if (hostfile) {
        av[a++] = "--hostfile";
        av[a++] = hostfile;
    }
    if (net) {
        av[a++] = "--net";
        av[a++] = net;
    }
    av[a] = NULL;
    fprintf(stderr, "  [%d/%d] %dx1 %-7s%s ... ", i + 1, CALIB_ACCURACY_RUNS, r->workers, r->sync,
            r->batch_per_worker ? " batch per worker" : "");
    const double t0 = host_monotonic_s();
    const int code = spawn_self(av, "/dev/null", sub, sizeof sub);
    if (code == 0) {
        fprintf(stderr, "%.0f s\n", host_monotonic_s() - t0);
        return 0;
    }
    fprintf(stderr, "failed\n");
    if (code < 0)
        snprintf(err, (size_t)errlen, "accuracy plan run %dx1 %s: %s", r->workers, r->sync, sub);
    else
        snprintf(err, (size_t)errlen, "accuracy plan run `speedup train --workers %d --sync %s%s --limit %ld "
                 "--epochs %d` failed (exit %d)", r->workers, r->sync, r->batch_per_worker ? " --batch-per-worker" : "",
                 limit, epochs, code);
    return -1;
}

int calib_accuracy_plan_run(const char *dir, double budget_s, int epochs, const char *hostfile, const char *net,
                            char *err, int errlen) {
    const long limit = calib_accuracy_limit(budget_s, epochs);
    fprintf(stderr, "speedup calibrate: accuracy plan: %d runs of %ld examples x %d epochs (a test subset evaluated "
            "about ten times an epoch), about %.0f s; traces in %s\n", CALIB_ACCURACY_RUNS, limit, epochs, budget_s,
            dir);
    const double t0 = host_monotonic_s();
    for (int i = 0; i < CALIB_ACCURACY_RUNS; i++)
        if (run_one(&calib_accuracy_runs[i], i, dir, limit, epochs, hostfile, net, err, errlen))
            return -1;
    fprintf(stderr, "speedup calibrate: accuracy plan done in %.0f s\n", host_monotonic_s() - t0);
    return 0;
}
