/* calib_plan — the live measurement plan (see calib_plan.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/calib_plan.h"

#include "cli/spawn.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_RUNS = 32 };

typedef struct {
    int workers, cores;
    const char *sync, *topology;
    long batch;
} plan_run;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int host_cores(void) {
    long p = sysconf(_SC_NPROCESSORS_ONLN);
    return p < 1 ? 1 : p > 8 ? 8 : (int)p;
}

/* The plan's runs for this host (see the header). */
static int plan_runs(plan_run *out) {
    int n = 0, p = host_cores(), top = 1;
    const long b = CALIB_PLAN_BATCH;
    while (top * 2 <= p)
        top *= 2;
    if (top < 2)
        top = 2; /* one core: 1×2 and 2×1 oversubscribed, still two K and two T */
    for (int total = 1; total <= top; total *= 2)
        for (int k = 1; k <= total; k *= 2) {
            int t = total / k;
            out[n++] = (plan_run){ k, t, "batch", "allreduce", b };
            if (k >= 2)
                out[n++] = (plan_run){ k, t, "epoch", "allreduce", b };
        }
    out[n++] = (plan_run){ 1, 1, "batch", "allreduce", b / 2 };
    out[n++] = (plan_run){ 1, 1, "batch", "allreduce", b * 2 };
    out[n++] = (plan_run){ 1, top, "batch", "allreduce", b * 2 };
    out[n++] = (plan_run){ 2, 1, "batch", "ps", b };
    return n;
}

int calib_plan_load_averages(double load[3]) {
    FILE *f = fopen("/proc/loadavg", "r");
    int ok = f && fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3;
    if (f)
        fclose(f);
    if (!ok)
        load[0] = load[1] = load[2] = 0;
    return ok ? 0 : -1;
}

long calib_plan_limit(double budget_s) {
    /* About 40 examples per second of budget: on this 2-core host one example of the
     * default CNN costs ~1 ms per run, 8 runs plus ~2 s of start-up and evaluation each and
     * a commbench, with room for a machine that is busy with something else. */
    double l = floor(budget_s * 40.0 / 64.0) * 64.0;
    return l < 256 ? 256 : l > 60000 ? 60000 : (long)l;
}

int calib_plan_run(const char *dir, double budget_s, long limit, const char *hostfile, char *err, int errlen) {
    plan_run runs[MAX_RUNS];
    int n = plan_runs(runs);
    if (limit <= 0)
        limit = calib_plan_limit(budget_s);
    double t_start = now_s();
    char sub[512];
    fprintf(stderr, "speedup calibrate: %d training runs of %ld examples (1 epoch) + commbench, traces in %s\n", n,
            limit, dir);
    /* Other jobs on the host slow some runs and not others (on this 2-core VM at load 3-8
     * leave-one-out errors were 28-41 %, idle 1-5 %): say so before the fit absorbs it. */
    double load[3];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (calib_plan_load_averages(load) == 0 && online > 0 && load[0] > 0.5 * (double)online)
        fprintf(stderr, "speedup calibrate: warning: load average %.2f on %ld cores: other processes will slow "
                        "some runs and not others, and the fit will carry it\n", load[0], online);
    for (int i = 0; i < n; i++) {
        const plan_run *r = &runs[i];
        char path[4096], k[16], t[16], b[24], l[24];
        snprintf(path, sizeof path, "%s/train-%dx%d-%s-%s-b%ld.trace.jsonl", dir, r->workers, r->cores, r->sync,
                 r->topology, r->batch);
        snprintf(k, sizeof k, "%d", r->workers);
        snprintf(t, sizeof t, "%d", r->cores);
        snprintf(b, sizeof b, "%ld", r->batch);
        snprintf(l, sizeof l, "%ld", limit);
        const char *av[24] = { "train", "--workers", k, "--threads", t, "--sync", r->sync, "--topology",
                               r->topology, "--batch", b, "--limit", l, "--epochs", "1", "--quiet",
                               "--trace", path, NULL };
        int a = 18;
        if (hostfile) {
            av[a++] = "--hostfile";
            av[a++] = hostfile;
        }
        av[a] = NULL;
        fprintf(stderr, "  [%d/%d] %dx%d %-5s %-9s batch %-3ld ... ", i + 1, n + 1, r->workers, r->cores, r->sync,
                r->topology, r->batch);
        double t0 = now_s();
        int code = spawn_self(av, "/dev/null", sub, sizeof sub);
        if (code != 0) {
            fprintf(stderr, "failed\n");
            if (code < 0)
                snprintf(err, (size_t)errlen, "plan run %dx%d %s: %s", r->workers, r->cores, r->sync, sub);
            else
                snprintf(err, (size_t)errlen,
                         "plan run `speedup train --workers %d --threads %d --sync %s --topology %s --batch %ld "
                         "--limit %ld` failed (exit %d)", r->workers, r->cores, r->sync, r->topology, r->batch, limit,
                         code);
            return -1;
        }
        fprintf(stderr, "%.1f s\n", now_s() - t0);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/commbench.trace.jsonl", dir);
    const char *av[] = { "commbench", "--trace", path, NULL };
    fprintf(stderr, "  [%d/%d] commbench, 2 ranks ... ", n + 1, n + 1);
    double t0 = now_s();
    int code = spawn_mpi_self(2, hostfile, av, "/dev/null", sub, sizeof sub);
    if (code != 0) {
        fprintf(stderr, "failed\n");
        if (code < 0)
            snprintf(err, (size_t)errlen, "commbench: %s", sub);
        else
            snprintf(err, (size_t)errlen, "`%s -np 2 speedup commbench` failed (exit %d)", spawn_mpiexec(), code);
        return -1;
    }
    fprintf(stderr, "%.1f s\nspeedup calibrate: plan done in %.0f s\n", now_s() - t0, now_s() - t_start);
    return 0;
}
