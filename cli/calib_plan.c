/* calib_plan — the live measurement plan (see calib_plan.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/calib_plan.h"

#include "cli/spawn.h"
#include "util/host.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The plan's configurations for a host of p cores (see the header), once each. */
static int plan_configs(int p, calib_plan_entry *out) {
    int n = 0, top = 1;
    const long b = CALIB_PLAN_BATCH;
    while (top * 2 <= p && top * 2 <= 8)
        top *= 2;
    if (top < 2)
        top = 2; /* one core: 1×2 and 2×1 oversubscribed, still two K and two T */
    for (int total = 1; total <= top; total *= 2)
        for (int k = 1; k <= total; k *= 2) {
            int t = total / k;
            out[n++] = (calib_plan_entry){ k, t, "batch", "allreduce", b, 1, NULL };
            if (k >= 2)
                out[n++] = (calib_plan_entry){ k, t, "epoch", "allreduce", b, 1, NULL };
        }
    out[n++] = (calib_plan_entry){ 1, 1, "batch", "allreduce", b / 2, 1, NULL };
    out[n++] = (calib_plan_entry){ 1, 1, "batch", "allreduce", b * 2, 1, NULL };
    out[n++] = (calib_plan_entry){ 1, top, "batch", "allreduce", b * 2, 1, NULL };
    out[n++] = (calib_plan_entry){ 2, 1, "batch", "ps", b, 1, NULL };
    /* One worker more than cores: what oversubscription does beyond ρ (the start-up's data
     * load shared; rounds of one step, which wait for the core that holds two workers, give
     * κ; rounds of four steps, over which the scheduler starts to even the cores out, τ:
     * fit_oversub). A round of the epoch, where the packing has gone, gives the round over
     * which κ's extra cost is spread (τ_κ): no run of shorter rounds can tell it, and left
     * out it misses such rounds by 8-14 % (experiments/oversubscription's rounds). Two
     * workers on every core, 16 examples each, in rounds of one step: κ again, with
     * nothing to pack (a second source, so that one noisy configuration does not set it,
     * and each can be left out). Both again at 4 examples a rank, a step a quarter as
     * long: what tells the exchange's wait on shared cores a cost per exchange (Λ) from a
     * share of the step (λ) (fit_oversub), twice, so that either can be left out. */
    out[n++] = (calib_plan_entry){ p + 1, 1, "batch", "allreduce", b * 3 / 2, 1, NULL };
    out[n++] = (calib_plan_entry){ p + 1, 1, "every:4", "allreduce", b, 1, NULL };
    out[n++] = (calib_plan_entry){ p + 1, 1, "epoch", "allreduce", b * 2, 1, NULL };
    out[n++] = (calib_plan_entry){ 2 * p, 1, "batch", "allreduce", 16L * 2 * p, 1, NULL };
    out[n++] = (calib_plan_entry){ 2 * p, 1, "batch", "allreduce", 4L * 2 * p, 1, NULL };
    out[n++] = (calib_plan_entry){ p + 1, 1, "batch", "allreduce", 4L * (p + 1), 1, NULL };
    /* The workers fill the cores and a dedicated master polls beside them, between
     * exchanges one step apart (master_yield, and master_wake from the exchanges) and an
     * epoch apart (master_yield_loss). */
    out[n++] = (calib_plan_entry){ p, 1, "batch", "ps", b, 1, "dedicated" };
    out[n++] = (calib_plan_entry){ p, 1, "epoch", "ps", b, 1, "dedicated" };
    return n;
}

int calib_plan_runs(int cores, calib_plan_entry out[CALIB_PLAN_MAX_RUNS]) {
    calib_plan_entry configs[CALIB_PLAN_MAX_RUNS / CALIB_PLAN_REPEATS];
    int n = plan_configs(cores, configs), runs = 0;
    /* Interleaved, A B C … A B C: a slow spell of the host then hits one repeat of several
     * configurations, not every repeat of one, and shows as run-to-run spread. */
    for (int r = 1; r <= CALIB_PLAN_REPEATS; r++)
        for (int i = 0; i < n; i++) {
            out[runs] = configs[i];
            out[runs++].repeat = r;
        }
    return runs;
}

void calib_plan_trace_name(const calib_plan_entry *r, char *buf, size_t len) {
    char sync[32];
    snprintf(sync, sizeof sync, "%s", r->sync);
    for (char *c = sync; *c; c++)
        if (*c == ':')
            *c = '-'; /* every:4 as the report's held-out traces name it: every-4 */
    snprintf(buf, len, "train-%dx%d-%s-%s-b%ld%s-r%d.trace.jsonl", r->workers, r->cores, sync, r->topology,
             r->batch, r->master ? "-dedicated" : "", r->repeat);
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
    /* About 20 examples per second of budget: the plan's runs, each with its start-up and
     * evaluation, and a commbench then take well under the budget, with room for a machine
     * that is busy with something else (what it was sized on: docs/calibration.md). Whole
     * batches of the plan's largest (64). */
    double l = floor(budget_s * 20.0 / 64.0) * 64.0;
    return l < 128 ? 128 : l > 60000 ? 60000 : (long)l;
}

/* Run r's share of one core's time per example (the header's formula). */
static double run_share(const calib_plan_entry *r, int host_cores) {
    double cores = (double)r->workers * r->cores + (r->master ? 1.0 : 0.0);
    if (cores > host_cores)
        cores = host_cores;
    return cores <= 1.0 ? 1.0 : 1.0 / (0.85 * cores);
}

long calib_plan_limit_for(const calib_plan_entry *runs, int n, int host_cores, double budget_s, double run_s,
                          double example_s, double *plan_s) {
    double share = 0;
    for (int i = 0; i < n; i++)
        share += run_share(&runs[i], host_cores);
    const double fixed_s = (n + 1) * run_s; /* every run's start and stop, and the commbench's */
    double l = floor((budget_s - fixed_s) / (example_s * share) / 64.0) * 64.0;
    l = l < 128 ? 128 : l > 60000 ? 60000 : l;
    *plan_s = fixed_s + l * example_s * share;
    return (long)l;
}

/* Two pilot runs of train at 1x1 (PILOT_SMALL and PILOT_LARGE examples, no trace): a run's
 * fixed cost *run_s and an example's *example_s on one core, this host, this network, now.
 * 0, or -1 (a run failed, or the two did not differ: then the plan falls back to
 * calib_plan_limit). */
enum { PILOT_SMALL = 64, PILOT_LARGE = 1024 };
static int pilot(const char *net, double *run_s, double *example_s) {
    double took[2];
    const long sizes[2] = { PILOT_SMALL, PILOT_LARGE };
    for (int i = 0; i < 2; i++) {
        char l[24], sub[512];
        snprintf(l, sizeof l, "%ld", sizes[i]);
        const char *av[] = { "train", "--workers", "1", "--threads", "1", "--limit", l, "--epochs", "1", "--quiet",
                             net ? "--net" : NULL, net, NULL };
        const double t0 = host_monotonic_s();
        if (spawn_self(av, "/dev/null", sub, sizeof sub) != 0)
            return -1;
        took[i] = host_monotonic_s() - t0;
    }
    *example_s = (took[1] - took[0]) / (double)(PILOT_LARGE - PILOT_SMALL);
    *run_s = took[0] - PILOT_SMALL * *example_s;
    if (!(*example_s > 0))
        return -1;
    if (*run_s < 0)
        *run_s = 0;
    return 0;
}

/* Examples per run from the budget: sized by the pilot runs, or 20 a second of budget
 * when they cannot tell; what was chosen and why on stderr. */
static long limit_from_budget(const calib_plan_entry *runs, int n, double budget_s, const char *net) {
    const double t0 = host_monotonic_s();
    double run_s, example_s, plan_s;
    if (pilot(net, &run_s, &example_s)) {
        const long limit = calib_plan_limit(budget_s);
        fprintf(stderr, "speedup calibrate: the pilot runs could not size the plan: %ld examples a run (20 a second of "
                        "budget)\n", limit);
        return limit;
    }
    const double pilot_s = host_monotonic_s() - t0;
    const long limit = calib_plan_limit_for(runs, n, host_online_cores(), budget_s - pilot_s, run_s, example_s, &plan_s);
    fprintf(stderr, "speedup calibrate: two pilot runs (%.1f s): %.2f ms an example on one core, %.2f s to start a run; "
            "%ld examples a run for a plan of about %.0f s\n", pilot_s, 1e3 * example_s, run_s, limit, plan_s + pilot_s);
    if (plan_s + pilot_s > 1.2 * budget_s)
        fprintf(stderr, "speedup calibrate: warning: --budget %.0f is less than the plan's %d runs need on this host at "
                "their smallest (128 examples): about %.0f s\n", budget_s, n, plan_s + pilot_s);
    return limit;
}

/* Plan run r, the i-th of n (progress on stderr); 0, or -1 with err. */
static int run_training(const calib_plan_entry *r, int i, int n, const char *dir, long limit, const char *hostfile,
                        const char *net, char *err, int errlen) {
    char path[4096], name[128], k[16], t[16], b[24], l[24], sub[512];
    calib_plan_trace_name(r, name, sizeof name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(k, sizeof k, "%d", r->workers);
    snprintf(t, sizeof t, "%d", r->cores);
    snprintf(b, sizeof b, "%ld", r->batch);
    snprintf(l, sizeof l, "%ld", limit);
    const char *av[24] = { "train", "--workers", k, "--threads", t, "--sync", r->sync, "--topology",
                           r->topology, "--batch", b, "--limit", l, "--epochs", "1", "--quiet",
                           "--trace", path, "--master", r->master ? r->master : "worker", NULL };
    int a = 20;
    if (hostfile) {
        av[a++] = "--hostfile";
        av[a++] = hostfile;
    }
    if (net) {
        av[a++] = "--net";
        av[a++] = net;
    }
    av[a] = NULL;
    char which[48];
    if (r->repeat <= CALIB_PLAN_REPEATS)
        snprintf(which, sizeof which, "repeat %d of %d", r->repeat, CALIB_PLAN_REPEATS);
    else
        snprintf(which, sizeof which, "once more (r%d)", r->repeat);
    fprintf(stderr, "  [%2d/%d] %dx%d %-5s %-9s batch %-3ld%s %s ... ", i + 1, n + 1, r->workers, r->cores, r->sync,
            r->topology, r->batch, r->master ? " dedicated" : "", which);
    double t0 = host_monotonic_s();
    int code = spawn_self(av, "/dev/null", sub, sizeof sub);
    if (code == 0) {
        fprintf(stderr, "%.1f s\n", host_monotonic_s() - t0);
        return 0;
    }
    fprintf(stderr, "failed\n");
    if (code < 0)
        snprintf(err, (size_t)errlen, "plan run %dx%d %s (repeat %d): %s", r->workers, r->cores, r->sync, r->repeat,
                 sub);
    else
        snprintf(err, (size_t)errlen,
                 "plan run `speedup train --workers %d --threads %d --sync %s --topology %s --batch %ld "
                 "--limit %ld` (repeat %d) failed (exit %d)", r->workers, r->cores, r->sync, r->topology, r->batch,
                 limit, r->repeat, code);
    return -1;
}

static int run_commbench(int n, const char *dir, const char *hostfile, char *err, int errlen) {
    char path[4096], sub[512];
    snprintf(path, sizeof path, "%s/commbench.trace.jsonl", dir);
    const char *av[] = { "commbench", "--trace", path, NULL };
    fprintf(stderr, "  [%2d/%d] commbench, 2 ranks ... ", n + 1, n + 1);
    double t0 = host_monotonic_s();
    int code = spawn_mpi_self(2, hostfile, av, "/dev/null", sub, sizeof sub);
    if (code == 0) {
        fprintf(stderr, "%.1f s\n", host_monotonic_s() - t0);
        return 0;
    }
    fprintf(stderr, "failed\n");
    if (code < 0)
        snprintf(err, (size_t)errlen, "commbench: %s", sub);
    else
        snprintf(err, (size_t)errlen, "`%s -np 2 speedup commbench` failed (exit %d)", spawn_mpiexec(), code);
    return -1;
}

int calib_plan_rerun(const char *dir, const calib_plan_entry *runs, int n, long limit, const char *hostfile,
                     const char *net, char *err, int errlen) {
    for (int i = 0; i < n; i++)
        if (run_training(&runs[i], i, n - 1, dir, limit, hostfile, net, err, errlen))
            return -1;
    return 0;
}

int calib_plan_run(const char *dir, double budget_s, long limit, const char *hostfile, const char *net, char *err,
                   int errlen) {
    return calib_plan_run_rounds(dir, budget_s, limit, hostfile, net, NULL, NULL, err, errlen);
}

int calib_plan_run_rounds(const char *dir, double budget_s, long limit, const char *hostfile, const char *net,
                          calib_plan_round_fn after_round, void *ctx, char *err, int errlen) {
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    /* All the host's cores: the splits stop at 8 (plan_configs), but a run with one rank
     * more than cores must have one more than this host's, or it shares no core. */
    int n = calib_plan_runs(host_online_cores(), runs);
    /* Other jobs on the host slow some runs and not others, and the leave-one-out errors
     * grow several-fold (docs/calibration.md): say so before the fit absorbs it (and
     * before the pilot runs, whose own load it would count). */
    double load[3];
    long online = host_online_cores();
    if (calib_plan_load_averages(load) == 0 && online > 0 && load[0] > 0.5 * (double)online)
        fprintf(stderr, "speedup calibrate: warning: load average %.2f on %ld cores: other processes will slow "
                        "some runs and not others, and the fit will carry it\n", load[0], online);
    const double t_start = host_monotonic_s(); /* the pilot runs are the budget's too */
    const bool from_budget = limit <= 0;
    if (from_budget)
        limit = limit_from_budget(runs, n, budget_s, net);
    fprintf(stderr, "speedup calibrate: %d configurations x %d repeats, interleaved: %d training runs of %ld examples "
            "(1 epoch) + commbench, traces in %s\n", n / CALIB_PLAN_REPEATS, CALIB_PLAN_REPEATS, n, limit, dir);
    for (int i = 0; i < n; i++) {
        if (run_training(&runs[i], i, n, dir, limit, hostfile, net, err, errlen))
            return -1;
        bool round_over = i + 1 == n || runs[i + 1].repeat != runs[i].repeat;
        if (after_round && round_over && after_round(ctx, runs[i].repeat, err, errlen))
            return -1;
    }
    if (run_commbench(n, dir, hostfile, err, errlen))
        return -1;
    const double took = host_monotonic_s() - t_start;
    if (from_budget) /* the runs are sized from a rate of this host's past, not measured now */
        fprintf(stderr, "speedup calibrate: plan done in %.0f s against a budget of %.0f s (%+.0f%%)\n", took, budget_s,
                100 * (took / budget_s - 1));
    else
        fprintf(stderr, "speedup calibrate: plan done in %.0f s\n", took);
    return 0;
}
