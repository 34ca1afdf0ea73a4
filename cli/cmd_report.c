/* speedup report — the whole study in one command, into one directory:
 *   1. measure: the live calibration plan (cli/calib_plan.h, traces in OUT/traces) and the
 *      held-out configurations (cli/report_configs.h: built in for this host, or
 *      --held-out FILE), never fitted, each --repeats times, all interleaved round by round
 *      (the plan's configurations once, the held-out ones once, and again: A B C … A B C),
 *      as short `speedup train --workers K` runs (held-out traces in OUT/measured); then
 *      the fit of the plan's traces (`speedup calibrate --from-traces`);
 *   2. predict
 *      each with `speedup simulate` (mean time and the 95% prediction interval of one run)
 *      and the closed form; OUT/fidelity.csv and the three fidelity figures
 *      (fit/fidelity.h: median and worst |error| of the median run, the share of single
 *      runs inside the interval, its mean half-width against the run-to-run spread);
 *   3. `speedup simulate` of the grid (workers 1..--max-workers but at most the batch,
 *      cores 1,2,4, batch/epoch, ps/allreduce);
 *   4. OUT/measurements.csv (the median runs), `speedup plot` of all five figures;
 *   5. OUT/index.html (cli/report_html.h).
 * Sub-steps run this same binary (/proc/self/exe) through cli/spawn.h. A measured time is
 * the trace's training time (trace/traceinfo.h traceinfo_training_time: start-up + training, the
 * evaluation left out, as the model predicts it); the run's whole wall time is shown too.
 * A failing step stops the report with one line naming the step; exit 1. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/calib_accuracy.h"
#include "cli/calib_plan.h"
#include "cli/cluster_spec.h"
#include "cli/commands.h"
#include "cli/grid.h"
#include "cli/report_configs.h"
#include "cli/report_html.h"
#include "cli/spawn.h"
#include "fit/fit.h"
#include "trace/measurements.h"
#include "trace/traceinfo.h"
#include "plots/gnuplot.h"
#include "util/atomicfile.h"
#include "util/host.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { PATH_LEN = 4096 };

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup report [--out-dir DIR] [--budget SECONDS] [--max-workers K] [FLAGS]\n"
            "       speedup report --calib FILE --cluster SPEC [--cluster SPEC ...] [--net SPEC] [--out-dir DIR]\n"
            "\n"
            "With --calib: measures nothing. The what-if of each --cluster (up to 4) from a\n"
            "calibration made elsewhere (calibrate --from-table, another host's traces):\n"
            "simulated, drawn, and DIR/index.html opens with the answer (the fastest choice,\n"
            "its training time with its 95%% interval, machine-hours, one worker's time).\n"
            "\n"
            "Calibrates on this machine (speedup calibrate's plan) and measures configurations\n"
            "left out of the fit, the two interleaved round by round; simulates the grid of\n"
            "workers x cores x sync x topology with the calibration, draws the five figures\n"
            "and writes DIR/index.html with every figure, its table and the prediction error\n"
            "of every measured configuration.\n"
            "\n"
            "  --out-dir DIR      where everything goes (a directory, as calibrate's\n"
            "                     --out-dir; --out DIR is its older name)         [out]\n"
            "  --calib FILE       a calibration to reuse: no measuring, the what-ifs only [none]\n"
            "  --net SPEC         with --calib: another network than the calibrated one,\n"
            "                     priced by layer kind (model --net)      [the calibration's]\n"
            "  --budget SECONDS   calibration plan budget (sizes every run)      [120]\n"
            "  --limit N          examples per run instead of from --budget      [from --budget]\n"
            "  --max-workers K    the grid's largest worker count (powers of 2;   [32]\n"
            "                     never above the batch, which batch sync splits)\n"
            "  --reps R           simulation replications per configuration      [30]\n"
            "  --repeats R        runs of every held-out configuration,          [2]\n"
            "                     interleaved (A B C ... A B C), 1..16\n"
            "  --held-out FILE    the held-out configurations, one per line:     [built in]\n"
            "                     WORKERS CORES SYNC TOPOLOGY BATCH MASTER EPOCHS [weak]\n"
            "                     (weak: every worker takes BATCH a step; batch sync)\n"
            "  --hostfile FILE    passed to mpirun for every measured run        [none]\n"
            "  --cluster SPEC     the what-if cluster(s), MxP@RATE[,LATENCY]; repeat for up to\n"
            "                     4 (default: 16 machines like this one, 1gbit and 10gbit, 50us)\n"
            "  --what-if D,E      the what-if's workload: D examples, E epochs    [60000,5]\n"
            "                     (Fashion-MNIST's training set, speedup train's epochs)\n"
            "  --sync LIST        sync modes of the grid and the what-ifs        [batch,epoch]\n"
            "                     (batch, epoch, every:N, async[:N], hogwild[:N]: Elephas'\n"
            "                     asynchronous modes are in the report only when asked;\n"
            "                     they run through ps on a dedicated master)\n"
            "  --accuracy-plan SECONDS  also run speedup calibrate's accuracy plan    [off]\n"
            "                     (10-epoch runs, cli/calib_accuracy.h) in about this long:\n"
            "                     the report then shows accuracy against time, measured\n"
            "                     and predicted, and the accuracy fit\n"
            "  --help             this text\n"
            "Needs gnuplot ($SPEEDUP_GNUPLOT overrides) and mpirun ($MPIEXEC overrides).\n");
}

typedef struct {
    const char *out;
    long limit;
    int reps, repeats;
    const char *hostfile;
    const char *sync;             /* the grid's and the what-ifs' sync modes, a list */
    char cal_path[PATH_LEN];
    const costmodel_params *params; /* the calibration's, once it is read */
    char commands[8192];
} ctx;

enum { OPT_OUT = 1, OPT_BUDGET, OPT_LIMIT, OPT_MAXW, OPT_REPS, OPT_HOSTFILE, OPT_REPEATS, OPT_HELD_OUT, OPT_CLUSTER,
       OPT_WHAT_IF, OPT_SYNC, OPT_ACCURACY_PLAN, OPT_CALIB, OPT_NET, OPT_HELP };

typedef struct {
    double budget_s;
    double accuracy_s;            /* --accuracy-plan: 0, none */
    int max_workers;
    const char *held_out;
    char cluster_text[REPORT_MAX_CLUSTERS][64];
    cluster_spec cluster[REPORT_MAX_CLUSTERS];
    int n_clusters;
    const char *calib;            /* --calib: the what-ifs of this calibration, nothing measured */
    const char *net;              /* --net (with --calib): another network, priced by layer kind */
    bool what_if_given;
    long what_if_examples;
    int what_if_epochs;
} report_options;

static int make_dir(const char *path) {
    if (mkdir(path, 0755) && errno != EEXIST) {
        args_error("report: %s: cannot create directory: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Is prog runnable: a path that is executable, or a name found on PATH? */
static int have_program(const char *prog) {
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0;
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t len = strcspn(p, ":");
        char full[PATH_LEN];
        snprintf(full, sizeof full, "%.*s/%s", (int)len, p, prog);
        if (len && access(full, X_OK) == 0)
            return 1;
        p += len + (p[len] == ':');
    }
    return 0;
}

/* Runs `speedup argv...` (stdout to stdout_path), notes the command line in c->commands;
 * a failure is reported as one line naming the step. */
static int step(ctx *c, const char *what, int np, const char *const *argv, const char *stdout_path) {
    size_t used = strlen(c->commands);
    char *cmd = c->commands + used;
    size_t room = sizeof c->commands - used;
    int w = snprintf(cmd, room, "speedup");
    for (int i = 0; argv[i] && w >= 0 && (size_t)w < room; i++)
        w += snprintf(cmd + w, room - (size_t)w, " %s", argv[i]);
    if (w >= 0 && (size_t)w + 2 < room)
        strcat(cmd, "\n");
    /* A step's output file appears only whole: written to PATH.tmp, renamed on success. */
    char err[600], tmp[PATH_LEN + 8];
    int to_file = stdout_path && strcmp(stdout_path, "/dev/null") != 0;
    if (to_file)
        snprintf(tmp, sizeof tmp, "%s.tmp", stdout_path);
    int code = np ? spawn_mpi_self(np, c->hostfile, argv, to_file ? tmp : stdout_path, err, sizeof err)
                  : spawn_self(argv, to_file ? tmp : stdout_path, err, sizeof err);
    if (to_file && code == 0 && rename(tmp, stdout_path)) {
        args_error("report: %s: cannot rename to %s: %s", tmp, stdout_path, strerror(errno));
        return -1;
    }
    if (code < 0) {
        args_error("report: %s: %s", what, err);
        return -1;
    }
    if (code != 0) {
        args_error("report: %s failed (exit %d)%s%s", what, code, to_file ? "; its output: " : "",
                   to_file ? tmp : "");
        return -1;
    }
    return 0;
}

/* The config's name with '-' for ' ' and ':' (a file name). */
static void file_name(const report_config *k, char *out, int size) {
    report_config_name(k, out, size);
    for (char *p = out; *p; p++)
        if (*p == ' ' || *p == ':')
            *p = '-';
}

/* Run rep (1-based) of k: a held-out run in OUT/measured, a plan run in OUT/traces (the
 * plan names its repeats -rN; a plan of one run per configuration has no suffix). */
static void run_trace_path(const ctx *c, const report_config *k, int rep, char *out, size_t size) {
    char name[128];
    if (k->held_out) {
        file_name(k, name, sizeof name);
        snprintf(out, size, "%s/measured/train-%s-r%d.trace.jsonl", c->out, name, rep);
        return;
    }
    snprintf(out, size, "%s/traces/train-%dx%d-%s-%s-b%ld-r%d.trace.jsonl", c->out, k->workers, k->cores, k->sync,
             k->topology, k->batch, rep);
    if (rep == 1 && access(out, R_OK) != 0)
        snprintf(out, size, "%s/traces/train-%dx%d-%s-%s-b%ld.trace.jsonl", c->out, k->workers, k->cores, k->sync,
                 k->topology, k->batch);
}

static void int_text(long v, char *out, size_t size) {
    snprintf(out, size, "%ld", v);
}

/* The simulated prediction of one config (its own batch, master and epochs), in out. */
static int simulate_one(ctx *c, const report_config *k, prediction_row *out) {
    char w[16], t[16], b[24], l[24], e[16], reps[16], csv[PATH_LEN], name[128];
    int_text(k->workers, w, sizeof w);
    int_text(k->cores, t, sizeof t);
    int_text(k->batch, b, sizeof b);
    int_text(c->limit, l, sizeof l);
    int_text(k->epochs, e, sizeof e);
    int_text(c->reps, reps, sizeof reps);
    file_name(k, name, sizeof name);
    snprintf(csv, sizeof csv, "%s/predicted/%s.csv", c->out, name);
    const char *av[] = { "simulate", "--calib", c->cal_path, "--workers", w, "--cores", t, "--sync", k->sync,
                         "--topology", k->topology, "--master", job_master_name(k->master), "--examples", l,
                         "--batch", b, "--epochs", e, "--reps", reps, "--csv", "--out", csv,
                         k->batch_per_worker ? "--batch-per-worker" : NULL, NULL };
    if (step(c, "simulate (a measured configuration)", 0, av, "/dev/null"))
        return -1;
    prediction_row *rows = NULL;
    int n = 0;
    char err[1024];
    if (predictions_read_csv(csv, &rows, &n, err, sizeof err) || n != 1) {
        args_error("report: %s", n == 1 ? err : "simulate gave no single row");
        free(rows);
        return -1;
    }
    *out = rows[0];
    free(rows);
    return 0;
}

/* One held-out run of k (repeat rep) into its trace; *wall_s = the whole run. */
static int train_held_out(ctx *c, const report_config *k, int rep, double *wall_s) {
    char w[16], t[16], b[24], l[24], e[16], path[PATH_LEN], name[128];
    int_text(k->workers, w, sizeof w);
    int_text(k->cores, t, sizeof t);
    int_text(k->batch, b, sizeof b);
    int_text(c->limit, l, sizeof l);
    int_text(k->epochs, e, sizeof e);
    run_trace_path(c, k, rep, path, sizeof path);
    const char *av[26] = { "train", "--workers", w, "--threads", t, "--sync", k->sync, "--topology", k->topology,
                           "--master", job_master_name(k->master), "--batch", b, "--limit", l, "--epochs", e,
                           "--quiet", "--trace", path, NULL };
    int n_av = 20;
    if (c->hostfile) {
        av[n_av++] = "--hostfile";
        av[n_av++] = c->hostfile;
    }
    if (k->batch_per_worker)
        av[n_av++] = "--batch-per-worker";
    av[n_av] = NULL;
    report_config_name(k, name, sizeof name);
    fprintf(stderr, "speedup report: measuring %s (held out), run %d of %d ... ", name, rep, c->repeats);
    double t0 = host_monotonic_s();
    if (step(c, "a held-out training run", 0, av, "/dev/null"))
        return -1;
    *wall_s = host_monotonic_s() - t0;
    fprintf(stderr, "%.1f s\n", *wall_s);
    return 0;
}

/* Reads every run of k (held out: c->repeats; in the fit: the plan's repeats that exist)
 * into m: the runs' times, the median run's row and the closed form's time. */
static int read_runs(ctx *c, const report_config *k, double base_s, const calibration *cal, report_measured *m) {
    char path[PATH_LEN], err[1400];
    prediction_row rows[FIDELITY_MAX_RUNS];
    m->n_runs = 0;
    for (int rep = 1; rep <= (k->held_out ? c->repeats : FIDELITY_MAX_RUNS); rep++) {
        run_trace_path(c, k, rep, path, sizeof path);
        if (!k->held_out && rep > 1 && access(path, R_OK) != 0)
            break;
        trace *tr = trace_read(path, err, sizeof err);
        if (!tr) {
            args_error("report: %s", err);
            return -1;
        }
        if (m->n_runs == 0)
            m->model_s = predictions_from_model(&cal->params, &tr->run.config).time_s;
        rows[m->n_runs] = measurements_from_trace(tr);
        m->runs_s[m->n_runs] = rows[m->n_runs].time_s;
        m->n_runs++;
        trace_free(tr);
    }
    report_config_name(k, m->name, sizeof m->name);
    m->held_out = k->held_out;
    m->batch = k->batch;
    /* The run nearest the median stands for the configuration; its time is the median. */
    fidelity_config fc = { .n_runs = m->n_runs };
    memcpy(fc.runs_s, m->runs_s, sizeof m->runs_s);
    double med = fidelity_median_run(&fc);
    int best = 0;
    for (int i = 1; i < m->n_runs; i++)
        if (fabs(m->runs_s[i] - med) < fabs(m->runs_s[best] - med))
            best = i;
    m->measured = rows[best];
    m->measured.time_s = med; /* the speedup of the median run */
    m->measured.speedup = base_s / med;
    predictions_set_point(&m->measured);
    return 0;
}

/* The held-out runs of one round: every held-out configuration once. */
typedef struct {
    ctx *c;
    const report_config *k;
    int n;
    report_measured *m;
} held_out_round;

static int run_held_out_round(void *arg, int rep, char *err, int errlen) {
    held_out_round *h = arg;
    for (int i = 0; i < h->n && rep <= h->c->repeats; i++) {
        double wall = 0;
        if (h->k[i].held_out && train_held_out(h->c, &h->k[i], rep, &wall)) {
            if (errlen > 0)
                err[0] = '\0'; /* step() has said what failed */
            return -1;
        }
        h->m[i].wall_s += wall / h->c->repeats;
    }
    return 0;
}

/* 1. The calibration plan and the held-out runs, interleaved round by round (the plan's
 * configurations once, every held-out one once, and again): a host whose speed drifts
 * over minutes then drifts under both, and the plan's repeats measure that drift (run_cv)
 * over the whole session rather than its first minute. Then the fit of the plan's traces
 * (`speedup calibrate --from-traces`), *cal read back. */
static int measure_and_calibrate(ctx *c, double budget_s, double accuracy_s, const report_config *k, int n,
                                 report_measured *m, const char *cal_out, calibration *cal) {
    char traces_dir[PATH_LEN], err[1400];
    snprintf(traces_dir, sizeof traces_dir, "%s/traces", c->out);
    held_out_round h = { c, k, n, m };
    size_t used = strlen(c->commands);
    snprintf(c->commands + used, sizeof c->commands - used,
             "(speedup calibrate's plan, cli/calib_plan.h, into %s, each round followed by the held-out runs)\n",
             traces_dir);
    err[0] = '\0';
    if (calib_plan_run_rounds(traces_dir, budget_s, c->limit, c->hostfile, NULL, run_held_out_round, &h, err, sizeof err)) {
        if (err[0])
            args_error("report: calibration plan: %s", err);
        return -1;
    }
    for (int rep = CALIB_PLAN_REPEATS + 1; rep <= c->repeats; rep++)
        if (run_held_out_round(&h, rep, err, sizeof err))
            return -1;
    if (accuracy_s > 0) {
        used = strlen(c->commands);
        snprintf(c->commands + used, sizeof c->commands - used,
                 "(speedup calibrate's accuracy plan, cli/calib_accuracy.h, %.0f s, into %s)\n", accuracy_s, traces_dir);
        if (calib_accuracy_plan_run(traces_dir, accuracy_s, CALIB_ACCURACY_DEFAULT_EPOCHS, c->hostfile, NULL, err,
                                    sizeof err)) {
            args_error("report: accuracy plan: %s", err);
            return -1;
        }
    }
    const char *av[] = { "calibrate", "--from-traces", traces_dir, "--out", c->cal_path, NULL };
    if (step(c, "calibrate (the fit)", 0, av, cal_out))
        return -1;
    if (calibration_read(c->cal_path, cal, err, sizeof err)) {
        args_error("report: %s", err);
        return -1;
    }
    return 0;
}

/* The fidelity figures of the held-out configurations against the simulation's 95%
 * prediction interval; also OUT/fidelity.csv, one row per configuration. */
static int fidelity_of(ctx *c, const report_measured *m, int n, fidelity_summary *out) {
    fidelity_config fc[REPORT_MAX_CONFIGS];
    int held = 0;
    char path[PATH_LEN], err[512];
    snprintf(path, sizeof path, "%s/fidelity.csv", c->out);
    atomicfile *f = atomicfile_open(path, err, sizeof err);
    if (!f) {
        args_error("report: %s", err);
        return -1;
    }
    FILE *o = atomicfile_stream(f);
    fprintf(o, "# held-out configurations: measured training times against the simulation's 95%% prediction "
               "interval for one run\nconfiguration,runs,median_s,predicted_s,pi_lo_s,pi_hi_s,error,inside\n");
    for (int i = 0; i < n; i++) {
        if (!m[i].held_out)
            continue;
        fidelity_config *x = &fc[held++];
        *x = (fidelity_config){ .n_runs = m[i].n_runs, .pred_s = m[i].sim.time_s, .pred_lo_s = m[i].sim.time_lo,
                                .pred_hi_s = m[i].sim.time_hi };
        memcpy(x->runs_s, m[i].runs_s, sizeof x->runs_s);
        int inside = fidelity_inside(x->runs_s, x->n_runs, x->pred_lo_s, x->pred_hi_s);
        double med = fidelity_median_run(x);
        fprintf(o, "%s,%d,%.6g,%.6g,%.6g,%.6g,%.4f,%d\n", m[i].name, x->n_runs, med, x->pred_s, x->pred_lo_s,
                x->pred_hi_s, (x->pred_s - med) / med, inside);
    }
    if (held == 0 || fidelity_summarise(fc, held, out, err, sizeof err)) {
        atomicfile_abort(f);
        args_error("report: %s", held ? err : "no held-out configurations");
        return -1;
    }
    fprintf(o, "# median |error| %.4f, worst %.4f; %d of %d runs inside (%.3f); mean half-width %.4f; "
               "run-to-run spread %.4f\n", out->median_abs_error, out->worst_abs_error, out->inside, out->runs,
            out->coverage, out->mean_half_width, out->spread);
    if (atomicfile_commit(f, err, sizeof err)) {
        args_error("report: %s", err);
        return -1;
    }
    printf("held-out: %d configurations x %d runs: median |error| %.1f%% (worst %.1f%%); %d of %d single runs "
           "(%.0f%%) inside the 95%% prediction interval, mean half-width %.1f%% (%.1fx the run-to-run spread "
           "%.1f%%)\n", out->configs, c->repeats, 100 * out->median_abs_error, 100 * out->worst_abs_error,
           out->inside, out->runs, 100 * out->coverage, 100 * out->mean_half_width, out->width_over_spread,
           100 * out->spread);
    return 0;
}

static void describe_host(char *out, size_t size) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    double load[3];
    calib_plan_load_averages(load);
    snprintf(out, size, "%s, %ld cores; load average at the end of the report %.2f %.2f %.2f", host,
             (long)host_online_cores(), load[0], load[1], load[2]);
}

/* 3. The grid: workers 1, 2, 4, … up to max_workers and never beyond the batch (batch
 * sync splits it over the workers), cores 1, 2, 4, the --sync modes (batch and epoch),
 * ps and all-reduce (async and hogwild: ps only). */
static int simulate_grid(ctx *c, int max_workers, long batch, const char *path) {
    char workers[256] = "1", reps[16], b[24], limit[24];
    for (int k = 2; k <= max_workers && k <= batch; k *= 2) {
        size_t len = strlen(workers);
        snprintf(workers + len, sizeof workers - len, ",%d", k);
    }
    int_text(c->reps, reps, sizeof reps);
    int_text(batch, b, sizeof b);
    int_text(c->limit, limit, sizeof limit);
    const char *av[] = { "simulate", "--calib", c->cal_path, "--workers", workers, "--cores", "1,2,4",
                         "--sync", c->sync, "--topology", "ps,allreduce", "--examples", limit, "--batch", b,
                         "--epochs", "1", "--reps", reps, "--csv", "--out", path, NULL };
    fprintf(stderr, "speedup report: simulating workers %s x cores 1,2,4 x %s x ps,allreduce, %s reps\n", workers,
            c->sync, reps);
    return step(c, "simulate (the grid)", 0, av, "/dev/null");
}

/* Without --cluster: 16 machines like this one (its cores), on 1 and 10 Gbit/s. */
static void default_clusters(report_options *o, long cores) {
    static const char *const rates[] = { "1gbit", "10gbit" };
    for (o->n_clusters = 0; o->n_clusters < 2; o->n_clusters++) {
        int i = o->n_clusters;
        snprintf(o->cluster_text[i], sizeof o->cluster_text[i], "16x%ld@%s,50us", cores, rates[i]);
        cluster_spec_parse("--cluster", o->cluster_text[i], &o->cluster[i]); /* well formed by construction */
    }
}

/* 3b. The cluster what-if i: `speedup simulate --cluster` of workers 1, 2, 4, … (one core
 * each, the what-if's workload) into OUT/cluster-i.csv, and its speedup figure in
 * OUT/figures/cluster-i/. This host's measured runs are drawn on it only when they ran the
 * same workload (they ran as the cluster's first machine would): a short run's start-up
 * weighs far more than a whole training's, so its speedup is another quantity. */
static int cluster_what_if(ctx *c, const report_options *o, int i, long batch) {
    char reps[16], b[24], limit[24], epochs[16], csv[PATH_LEN], fig[PATH_LEN], meas[PATH_LEN], where[200],
        title[512];
    int_text(c->reps, reps, sizeof reps);
    int_text(batch, b, sizeof b);
    int_text(o->what_if_examples, limit, sizeof limit);
    int_text(o->what_if_epochs, epochs, sizeof epochs);
    snprintf(csv, sizeof csv, "%s/cluster-%d.csv", c->out, i + 1);
    snprintf(fig, sizeof fig, "%s/figures/cluster-%d", c->out, i + 1);
    snprintf(meas, sizeof meas, "%s/measurements.csv", c->out);
    const char *av[] = { "simulate", "--calib", c->cal_path, "--cluster", o->cluster_text[i], "--cores", "1",
                         "--sync", c->sync, "--topology", "ps,allreduce", "--examples", limit, "--batch", b,
                         "--epochs", epochs, "--reps", reps, "--csv", "--out", csv, NULL };
    fprintf(stderr, "speedup report: simulating the cluster %s\n", o->cluster_text[i]);
    if (step(c, "simulate (a cluster what-if)", 0, av, "/dev/null"))
        return -1;
    cluster_spec_describe(&o->cluster[i], c->params, where, sizeof where);
    snprintf(title, sizeof title, "on %s; %s examples x %s epochs, batch %s split over the workers", where, limit,
             epochs, b);
    bool same_workload = o->what_if_examples == c->limit && o->what_if_epochs == 1;
    const char *pv[] = { "plot", "--out", fig, "--predictions", csv, "--only", "speedup", "--title", title,
                         same_workload ? "--measurements" : NULL, meas, NULL };
    return step(c, "plot (a cluster what-if)", 0, pv, "/dev/null");
}

/* 4. The simulated timeline of the measured 2x1 batch all-reduce run (measured_path),
 * and every figure. */
static int draw_figures(ctx *c, long batch, const char *measured_path, const char *sim_path) {
    char b[24], limit[24], fig[PATH_LEN], predp[PATH_LEN], measp[PATH_LEN], traces_dir[PATH_LEN];
    int_text(batch, b, sizeof b);
    int_text(c->limit, limit, sizeof limit);
    const char *tl[] = { "simulate", "--calib", c->cal_path, "--workers", "2", "--cores", "1", "--sync", "batch",
                         "--topology", "allreduce", "--examples", limit, "--batch", b, "--epochs", "1",
                         "--reps", "1", "--timeline", sim_path, NULL };
    if (step(c, "simulate (the timeline)", 0, tl, "/dev/null"))
        return -1;
    snprintf(fig, sizeof fig, "%s/figures", c->out);
    snprintf(predp, sizeof predp, "%s/predictions.csv", c->out);
    snprintf(measp, sizeof measp, "%s/measurements.csv", c->out);
    snprintf(traces_dir, sizeof traces_dir, "%s/traces", c->out);
    const char *av[] = { "plot", "--out", fig, "--predictions", predp, "--measurements", measp, "--trace",
                         measured_path, "--sim-trace", sim_path, "--calib", c->cal_path, "--traces", traces_dir, NULL };
    fprintf(stderr, "speedup report: drawing the figures\n");
    return step(c, "plot", 0, av, "/dev/null");
}


/* --what-if D,E: 0, or -1 after printing why. */
static int parse_what_if(const char *arg, report_options *o) {
    char buf[64];
    snprintf(buf, sizeof buf, "%s", arg);
    char *comma = strchr(buf, ',');
    if (!comma) {
        args_error("--what-if: expected EXAMPLES,EPOCHS such as 60000,5, got '%s'", arg);
        return -1;
    }
    *comma = '\0';
    return args_long("--what-if", buf, 1, 1000000000000L, &o->what_if_examples) ||
                   args_int("--what-if", comma + 1, 1, 1000000, &o->what_if_epochs)
               ? -1
               : 0;
}

/* --sync's list: every item a sync mode (said on stderr when not). 0 or -1. */
static int check_sync_list(const char *list) {
    char buf[512];
    if (snprintf(buf, sizeof buf, "%s", list) >= (int)sizeof buf) {
        args_error("report: --sync: list too long");
        return -1;
    }
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), n++) {
        job_sync s;
        int every;
        if (job_sync_parse(tok, &s, &every)) {
            args_error("report: --sync: unknown sync mode '%s' (expected batch, epoch, every:N, async[:N] or "
                       "hogwild[:N] with N >= 1)", tok);
            return -1;
        }
    }
    if (n == 0) {
        args_error("report: --sync: expected a list of sync modes, got '%s'", list);
        return -1;
    }
    return 0;
}

/* 0 to go on, else the exit status (2 usage, 0 after --help). */
static int parse_options(int argc, char **argv, ctx *c, report_options *o) {
    static const struct option options[] = {
        { "out", required_argument, 0, OPT_OUT },         { "out-dir", required_argument, 0, OPT_OUT },         { "budget", required_argument, 0, OPT_BUDGET },
        { "limit", required_argument, 0, OPT_LIMIT },     { "max-workers", required_argument, 0, OPT_MAXW },
        { "reps", required_argument, 0, OPT_REPS },       { "hostfile", required_argument, 0, OPT_HOSTFILE },
        { "repeats", required_argument, 0, OPT_REPEATS }, { "held-out", required_argument, 0, OPT_HELD_OUT },
        { "cluster", required_argument, 0, OPT_CLUSTER }, { "what-if", required_argument, 0, OPT_WHAT_IF },
        { "sync", required_argument, 0, OPT_SYNC },       { "accuracy-plan", required_argument, 0, OPT_ACCURACY_PLAN },
        { "calib", required_argument, 0, OPT_CALIB },
        { "net", required_argument, 0, OPT_NET },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_OUT: c->out = optarg; break;
        case OPT_SYNC:
            if (check_sync_list(optarg))
                return 2;
            c->sync = optarg;
            break;
        case OPT_BUDGET:
            if (args_double("--budget", optarg, 1, 1e6, &o->budget_s))
                return 2;
            break;
        case OPT_LIMIT:
            if (args_long("--limit", optarg, 64, 60000, &c->limit))
                return 2;
            break;
        case OPT_MAXW:
            if (args_int("--max-workers", optarg, 2, 4096, &o->max_workers))
                return 2;
            break;
        case OPT_REPS:
            if (args_int("--reps", optarg, 1, 100000, &c->reps))
                return 2;
            break;
        case OPT_REPEATS:
            if (args_int("--repeats", optarg, 1, FIDELITY_MAX_RUNS, &c->repeats))
                return 2;
            break;
        case OPT_HOSTFILE: c->hostfile = optarg; break;
        case OPT_HELD_OUT: o->held_out = optarg; break;
        case OPT_WHAT_IF:
            if (parse_what_if(optarg, o))
                return 2;
            o->what_if_given = true;
            break;
        case OPT_CALIB: o->calib = optarg; break;
        case OPT_NET: o->net = optarg; break;
        case OPT_ACCURACY_PLAN:
            if (args_double("--accuracy-plan", optarg, 1, 1e7, &o->accuracy_s))
                return 2;
            break;
        case OPT_CLUSTER:
            if (o->n_clusters == REPORT_MAX_CLUSTERS) {
                args_error("report: --cluster: at most %d clusters", REPORT_MAX_CLUSTERS);
                return 2;
            }
            if (strlen(optarg) >= sizeof o->cluster_text[0] ||
                cluster_spec_parse("--cluster", optarg, &o->cluster[o->n_clusters]))
                return 2;
            snprintf(o->cluster_text[o->n_clusters++], sizeof o->cluster_text[0], "%s", optarg);
            break;
        case OPT_HELP: usage(stdout); return -1;
        default:
            return args_unknown_flag("report", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return args_unexpected("report", argv[optind]);
    return 0;
}

/* gnuplot, its scripts and mpirun are needed: fail before minutes of measuring, not after. */
static int check_programs(void) {
    const char *gp = getenv("SPEEDUP_GNUPLOT");
    if (!have_program(gp && *gp ? gp : "gnuplot")) {
        args_error("report: gnuplot not found (%s): install it (scripts/setup) or set SPEEDUP_GNUPLOT",
                   gp && *gp ? gp : "not on PATH");
        return -1;
    }
    if (!have_program(spawn_mpiexec())) {
        args_error("report: mpirun not found (%s): install Open MPI (scripts/setup) or set MPIEXEC", spawn_mpiexec());
        return -1;
    }
    char err[4400];
    if (gnuplot_scripts_check(err, sizeof err)) {
        args_error("report: %s", err);
        return -1;
    }
    return 0;
}

static int make_dirs(const ctx *c) {
    static const char *const subdirs[] = { "traces", "measured", "predicted", "figures" };
    char dir[PATH_LEN];
    if (make_dir(c->out))
        return -1;
    for (int i = 0; i < 4; i++) {
        snprintf(dir, sizeof dir, "%s/%s", c->out, subdirs[i]);
        if (make_dir(dir))
            return -1;
    }
    // A full disk is said now, before minutes of measuring, not when the first file fails.
    char probe[PATH_LEN + 16], err[PATH_LEN + 128];
    snprintf(probe, sizeof probe, "%s/index.html", c->out);
    if (atomicfile_probe(probe, err, sizeof err)) {
        args_error("report: %s", err);
        return -1;
    }
    return 0;
}

/* 2. Every configuration's runs and their predictions; OUT/measurements.csv holds the
 * median runs at the grid's batch. */
static int measure_all(ctx *c, const report_config *k, int n, const calibration *cal, report_measured *m,
                       fidelity_summary *fid) {
    char path[PATH_LEN], err[1400];
    run_trace_path(c, &k[0], 1, path, sizeof path); /* 1x1 at the grid's batch: the baseline */
    trace *base = trace_read(path, err, sizeof err);
    if (!base) {
        args_error("report: %s", err);
        return -1;
    }
    double base_s = traceinfo_training_time(base);
    trace_free(base);
    prediction_row rows[REPORT_MAX_CONFIGS];
    int n_rows = 0;
    for (int i = 0; i < n; i++) {
        if (read_runs(c, &k[i], base_s, cal, &m[i]) || simulate_one(c, &k[i], &m[i].sim))
            return -1;
        if (k[i].batch == k[0].batch && k[i].master == JOB_MASTER_WORKER && k[i].epochs == 1)
            rows[n_rows++] = m[i].measured; /* comparable with the grid in the figures */
    }
    snprintf(path, sizeof path, "%s/measurements.csv", c->out);
    if (predictions_save_csv(path, rows, n_rows, err, sizeof err)) {
        args_error("report: %s", err);
        return -1;
    }
    return fidelity_of(c, m, n, fid);
}

/* 3b for every cluster: its what-if simulated, drawn and read back into clusters[];
 * *n_read counts those read (to free), also on failure. 0, or -1 (printed). */
static int cluster_what_ifs(ctx *c, const report_options *o, long batch, report_cluster *clusters, int *n_read) {
    char path[PATH_LEN], err[1400];
    for (int i = 0; i < o->n_clusters; i++) {
        if (cluster_what_if(c, o, i, batch))
            return -1;
        cluster_spec_describe(&o->cluster[i], c->params, clusters[i].desc, sizeof clusters[i].desc);
        clusters[i].machines = o->cluster[i].machines;
        clusters[i].per_machine = o->cluster[i].cores;
        snprintf(path, sizeof path, "%s/cluster-%d.csv", c->out, i + 1);
        if (predictions_read_csv(path, &clusters[i].rows, &clusters[i].n_rows, err, sizeof err)) {
            args_error("report: %s", err);
            return -1;
        }
        *n_read = i + 1;
    }
    return 0;
}

/* The neural network the runs trained, and the interconnect between their ranks. */
static void describe_networks(const ctx *c, const trace *t, char *net, size_t net_size, char *link, size_t link_size) {
    snprintf(net, net_size, "CNN %s (%ld bytes of parameters), trained on the first %ld Fashion-MNIST examples for "
             "1 epoch", t->run.net, t->run.model_bytes, c->limit);
    snprintf(link, link_size, "workers are Open MPI ranks %s",
             c->hostfile ? "on the hosts of the hostfile" : "on this one host (shared memory between ranks)");
}

/* --calib: the what-ifs of a calibration made elsewhere; nothing is measured. Workers are
 * one core each (one device each for a calibration of devices, weakly scaled: each takes
 * the calibrated local batch), every calibrated topology, the sync modes of --sync. */
static int report_from_calibration(ctx *c, report_options *o) {
    static calibration cal;
    char err[1400], path[PATH_LEN], topo[32] = "", batch[24], limit[24], epochs[16], reps[16];
    if (calibration_read(o->calib, &cal, err, sizeof err)) {
        args_error("report: %s", err);
        return 2;
    }
    c->params = &cal.params;
    snprintf(c->cal_path, sizeof c->cal_path, "%s", o->calib);
    if (o->n_clusters == 0) {
        if (cal.params.worker_device) {
            args_error("report: --calib %s is a calibration of devices: name the cluster(s) with --cluster MxG "
                       "(the calibrated fabric) or MxG@RATE", o->calib);
            return 2;
        }
        default_clusters(o, host_online_cores());
    }
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        if (!cal.uncalibrated[t])
            snprintf(topo + strlen(topo), sizeof topo - strlen(topo), "%s%s", topo[0] ? "," : "",
                     job_topology_name((job_topology)t));
    const long b = cal.has_workload && cal.params.worker_device ? cal.batch : CALIB_PLAN_BATCH;
    if (!o->what_if_given && cal.params.worker_device) /* one epoch of a million examples */
        o->what_if_examples = 1000000, o->what_if_epochs = 1;
    char err2[4400];
    if (make_dir(c->out) || (snprintf(path, sizeof path, "%s/figures", c->out), make_dir(path)))
        return 1;
    if (gnuplot_scripts_check(err2, sizeof err2)) {
        args_error("report: %s", err2);
        return 1;
    }
    int_text(b, batch, sizeof batch);
    int_text(o->what_if_examples, limit, sizeof limit);
    int_text(o->what_if_epochs, epochs, sizeof epochs);
    int_text(c->reps, reps, sizeof reps);
    static report_cluster clusters[REPORT_MAX_CLUSTERS];
    int n = 0, rc = 1;
    for (; n < o->n_clusters; n++) {
        char csv[PATH_LEN], fig[PATH_LEN], where[200], title[512];
        snprintf(csv, sizeof csv, "%s/cluster-%d.csv", c->out, n + 1);
        snprintf(fig, sizeof fig, "%s/figures/cluster-%d", c->out, n + 1);
        /* --net: the simulator prices another network, or refuses it with the reason. */
        const char *av[] = { "simulate", "--calib", c->cal_path, "--cluster", o->cluster_text[n], "--cores", "1",
                             "--sync", c->sync, "--topology", topo, "--examples", limit, "--batch", batch, "--epochs",
                             epochs, "--reps", reps, "--scaling", cal.params.worker_device ? "weak" : "strong",
                             "--csv", "--out", csv, o->net ? "--net" : NULL, o->net, NULL };
        fprintf(stderr, "speedup report: simulating the cluster %s\n", o->cluster_text[n]);
        if (step(c, "simulate (a cluster what-if)", 0, av, "/dev/null"))
            goto done;
        cluster_spec_describe(&o->cluster[n], c->params, where, sizeof where);
        snprintf(title, sizeof title, "on %s; %s examples x %s epochs, batch %s %s", where, limit, epochs, batch,
                 cal.params.worker_device ? "per worker" : "split over the workers");
        const char *pv[] = { "plot", "--out", fig, "--predictions", csv, "--only", "speedup", "--title", title, NULL };
        if (step(c, "plot (a cluster what-if)", 0, pv, "/dev/null"))
            goto done;
        snprintf(clusters[n].desc, sizeof clusters[n].desc, "%s", where);
        clusters[n].machines = o->cluster[n].machines;
        clusters[n].per_machine = o->cluster[n].cores;
        if (predictions_read_csv(csv, &clusters[n].rows, &clusters[n].n_rows, err, sizeof err)) {
            args_error("report: %s", err);
            goto done;
        }
    }
    char unlike[1024] = ""; /* --net: its layers unlike the calibrated ones, as simulate priced them */
    network_cost target;
    netcost_unlike u;
    if (o->net && cal.network.known && grid_net_cost(&cal.network, o->net, (double)b, &target, &u, err, sizeof err) == 0)
        netcost_unlike_describe(&u, o->net, unlike, sizeof unlike);
    report_whatif_input in = { .cal = &cal, .calib_path = o->calib, .net = o->net, .net_unlike = unlike,
                               .commands = c->commands,
                               .clusters = clusters,
                               .n_clusters = n, .examples = o->what_if_examples, .epochs = o->what_if_epochs,
                               .batch = b };
    snprintf(path, sizeof path, "%s/index.html", c->out);
    if (report_html_write_whatif(path, &in, err, sizeof err)) {
        args_error("report: %s", err);
        goto done;
    }
    printf("wrote %s\n", path);
    rc = 0;
done:
    for (int i = 0; i < n; i++)
        free(clusters[i].rows);
    return rc;
}

/* The memory section's traces: every configuration's first run (each rank measured
 * against predicted). The paths live in static storage until the next call. */
static void first_runs(const ctx *c, const report_config *k, int n, const char **out) {
    static char paths[REPORT_MAX_CONFIGS][PATH_LEN];
    for (int i = 0; i < n; i++) {
        run_trace_path(c, &k[i], 1, paths[i], sizeof paths[i]);
        out[i] = paths[i];
    }
}

/* The defaults --help states. */
static void report_defaults(ctx *c, report_options *o) {
    memset(c, 0, sizeof *c);
    c->out = "out";
    c->reps = 30;
    c->repeats = 2;
    c->sync = "batch,epoch";
    memset(o, 0, sizeof *o);
    o->budget_s = CALIB_PLAN_DEFAULT_BUDGET_S;
    o->max_workers = 32;
    o->what_if_examples = 60000;
    o->what_if_epochs = 5;
}

int cmd_report(int argc, char **argv) {
    static ctx c;
    static report_options o;
    report_defaults(&c, &o);
    int code = parse_options(argc, argv, &c, &o);
    if (code)
        return code < 0 ? 0 : code;
    if (o.calib)
        return report_from_calibration(&c, &o);
    if (o.net) {
        args_error("report: --net prices another network from a calibration: it goes with --calib FILE (to measure "
                   "a network here, speedup calibrate --net SPEC, then report --calib)");
        return 2;
    }
    if (o.n_clusters == 0)
        default_clusters(&o, host_online_cores());
    if (check_programs())
        return 1;
    if (!c.limit)
        c.limit = calib_plan_limit(o.budget_s);
    double t_start = host_monotonic_s();
    const long B = CALIB_PLAN_BATCH, cores = host_online_cores();
    static report_config configs[REPORT_MAX_CONFIGS];
    char err[1400], path[PATH_LEN], sim_tl[PATH_LEN], cal_out[PATH_LEN];
    int n_configs = o.held_out ? report_configs_read(o.held_out, B, cores, configs, REPORT_MAX_CONFIGS, err, sizeof err)
                               : report_configs_builtin(B, cores, configs);
    if (n_configs < 0) {
        args_error("report: %s", err);
        return 2;
    }
    if (make_dirs(&c))
        return 1;
    snprintf(c.cal_path, sizeof c.cal_path, "%s/calibration.json", c.out);
    snprintf(cal_out, sizeof cal_out, "%s/calibrate.txt", c.out);
    static report_measured meas[REPORT_MAX_CONFIGS];
    memset(meas, 0, sizeof meas);
    calibration cal;
    if (measure_and_calibrate(&c, o.budget_s, o.accuracy_s, configs, n_configs, meas, cal_out, &cal))
        return 1;
    c.params = &cal.params;
    fidelity_summary fid;
    prediction_row *pred = NULL;
    trace *tl_measured = NULL, *tl_sim = NULL;
    int n_pred = 0, rc = 1, n_clusters_read = 0;
    static report_cluster clusters[REPORT_MAX_CLUSTERS];
    if (measure_all(&c, configs, n_configs, &cal, meas, &fid))
        goto done;
    snprintf(path, sizeof path, "%s/predictions.csv", c.out);
    if (simulate_grid(&c, o.max_workers, B, path) || predictions_read_csv(path, &pred, &n_pred, err, sizeof err)) {
        if (pred == NULL && n_pred == 0 && err[0])
            args_error("report: %s", err);
        goto done;
    }
    run_trace_path(&c, &configs[2], 1, path, sizeof path); /* the plan's 2x1 batch all-reduce */
    snprintf(sim_tl, sizeof sim_tl, "%s/predicted/timeline-2x1-batch-allreduce.trace.jsonl", c.out);
    if (draw_figures(&c, B, path, sim_tl))
        goto done;
    if (!(tl_measured = trace_read(path, err, sizeof err)) || !(tl_sim = trace_read(sim_tl, err, sizeof err))) {
        args_error("report: %s", err);
        goto done;
    }
    if (cluster_what_ifs(&c, &o, B, clusters, &n_clusters_read))
        goto done;

    /* 5. index.html */
    char host_desc[512], net_desc[1024], link_desc[256];
    describe_host(host_desc, sizeof host_desc);
    describe_networks(&c, tl_measured, net_desc, sizeof net_desc, link_desc, sizeof link_desc);
    const char *memory_traces[REPORT_MAX_CONFIGS];
    first_runs(&c, configs, n_configs, memory_traces);
    snprintf(path, sizeof path, "%s/figures/accuracy.png", c.out);
    const bool accuracy_figure = access(path, R_OK) == 0; /* drawn when the traces hold accuracy curves */
    report_html_input in = { .accuracy_figure = accuracy_figure, .host_desc = host_desc, .net_desc = net_desc,
                             .link_desc = link_desc, .commands = c.commands, .cal = &cal,
                             .pred = pred, .n_pred = n_pred, .meas = meas, .n_meas = n_configs, .fidelity = &fid,
                             .timeline_measured = tl_measured, .timeline_simulated = tl_sim,
                             .examples = c.limit, .epochs = 1, .grid_batch = B, .calibrate_log = cal_out,
                             .clusters = clusters, .n_clusters = n_clusters_read,
                             .what_if_examples = o.what_if_examples, .what_if_epochs = o.what_if_epochs,
                             .memory_traces = memory_traces, .n_memory_traces = n_configs };
    snprintf(path, sizeof path, "%s/index.html", c.out);
    if (report_html_write(path, &in, err, sizeof err)) {
        args_error("report: %s", err);
        goto done;
    }
    printf("report written to %s (%.0f s)\n", path, host_monotonic_s() - t_start);
    rc = 0;
done:
    for (int i = 0; i < n_clusters_read; i++)
        free(clusters[i].rows);
    free(pred);
    trace_free(tl_measured);
    trace_free(tl_sim);
    return rc;
}
