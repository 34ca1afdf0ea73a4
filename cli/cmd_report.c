/* speedup report — the whole study in one command, into one directory:
 *   1. calibrate: the live measurement plan (cli/calib_plan.h), traces kept in OUT/traces;
 *   2. measure the held-out configurations that fit this host (not in the fit), each a
 *      short `speedup train --workers K` run whose trace goes to OUT/measured;
 *   3. predict: `speedup simulate` of the grid (workers 1..--max-workers, cores 1,2,4,
 *      batch/epoch, ps/allreduce) and of every measured configuration, plus the closed form;
 *   4. OUT/measurements.csv from the traces, `speedup plot` of all five figures;
 *   5. OUT/index.html (cli/report_html.h).
 * Sub-steps run this same binary (/proc/self/exe) through cli/spawn.h. A measured time is
 * the trace's training time (model/traceinfo.h traceinfo_training_time: start-up + training, the
 * evaluation left out, as the model predicts it); the run's whole wall time is shown too.
 * A failing step stops the report with one line naming the step; exit 1. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/calib_plan.h"
#include "cli/commands.h"
#include "cli/report_html.h"
#include "cli/spawn.h"
#include "model/fit.h"
#include "model/traceinfo.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { MAX_MEASURED = 24, PATH_LEN = 4096 };

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup report [--out DIR] [--budget SECONDS] [--max-workers K] [FLAGS]\n"
            "\n"
            "Calibrates on this machine (speedup calibrate's plan), measures configurations\n"
            "left out of the fit, simulates the grid of workers x cores x sync x topology with\n"
            "the calibration, draws the five figures and writes DIR/index.html with every\n"
            "figure, its table and the prediction error of every measured configuration.\n"
            "\n"
            "  --out DIR          where everything goes                          [out]\n"
            "  --budget SECONDS   calibration plan budget (sizes every run)      [120]\n"
            "  --limit N          examples per run instead of from --budget      [from --budget]\n"
            "  --max-workers K    the grid's largest worker count (powers of 2)  [64]\n"
            "  --reps R           simulation replications per configuration      [30]\n"
            "  --hostfile FILE    passed to mpirun for every measured run        [none]\n"
            "  --help             this text\n"
            "Needs gnuplot ($SPEEDUP_GNUPLOT overrides) and mpirun ($MPIEXEC overrides).\n");
}

/* One measured configuration. */
typedef struct {
    int workers, cores;
    const char *sync, *topology;
    long batch;
    int held_out;
} config;

typedef struct {
    const char *out;
    long limit;
    int reps;
    const char *hostfile;
    char cal_path[PATH_LEN];
    char commands[8192];
} ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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

static void config_name(const config *k, char *out, size_t size) {
    snprintf(out, size, "%dx%d %s %s b%ld", k->workers, k->cores, k->sync, k->topology, k->batch);
}

static void plan_trace_path(const ctx *c, const config *k, char *out, size_t size) {
    snprintf(out, size, "%s/traces/train-%dx%d-%s-%s-b%ld.trace.jsonl", c->out, k->workers, k->cores, k->sync,
             k->topology, k->batch);
}

static void measured_trace_path(const ctx *c, const config *k, char *out, size_t size) {
    const char *sync = k->sync;
    char s[32];
    snprintf(s, sizeof s, "%s", sync);
    for (char *p = s; *p; p++)
        if (*p == ':')
            *p = '-';
    snprintf(out, size, "%s/measured/train-%dx%d-%s-%s-b%ld.trace.jsonl", c->out, k->workers, k->cores, s,
             k->topology, k->batch);
}

/* The measured row of a trace: time = training time, breakdown = per-rank phase totals
 * averaged over the ranks, speedup against base_s. */
static prediction_row row_of_trace(const trace *t, double base_s) {
    prediction_row r = { 0 };
    const costmodel_config *k = &t->run.config;
    r.workers = k->workers;
    r.cores = k->cores;
    costmodel_sync_format(k->sync, k->every_n, r.sync, sizeof r.sync);
    r.topology = k->topology;
    r.time_s = traceinfo_training_time(t);
    r.speedup = base_s / r.time_s;
    predictions_set_point(&r);
    traceinfo_phases ph = traceinfo_phase_means(t);
    r.startup_s = ph.startup_s;
    r.compute_s = ph.compute_s;
    r.update_s = ph.update_s;
    r.comm_s = ph.comm_s;
    r.wait_s = ph.wait_s;
    return r;
}

static void int_text(long v, char *out, size_t size) {
    snprintf(out, size, "%ld", v);
}

/* The simulated prediction of one config (its own batch), in out. */
static int simulate_one(ctx *c, const config *k, prediction_row *out) {
    char w[16], t[16], b[24], l[24], reps[16], csv[PATH_LEN], name[96];
    int_text(k->workers, w, sizeof w);
    int_text(k->cores, t, sizeof t);
    int_text(k->batch, b, sizeof b);
    int_text(c->limit, l, sizeof l);
    int_text(c->reps, reps, sizeof reps);
    config_name(k, name, sizeof name);
    for (char *p = name; *p; p++)
        if (*p == ' ' || *p == ':')
            *p = '-';
    snprintf(csv, sizeof csv, "%s/predicted/%s.csv", c->out, name);
    const char *av[] = { "simulate", "--calib", c->cal_path, "--workers", w, "--cores", t, "--sync", k->sync,
                         "--topology", k->topology, "--examples", l, "--batch", b, "--epochs", "1", "--reps", reps,
                         "--csv", "--out", csv, NULL };
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

/* Measures (held out) or reads (in the fit) config k; fills m. wall_s of a plan run is
 * not known here (calibrate ran it) and is left 0. */
static int measure(ctx *c, const config *k, double base_s, const calibration *cal, report_measured *m) {
    char path[PATH_LEN], err[1400];
    double wall = 0;
    if (k->held_out) {
        char w[16], t[16], b[24], l[24];
        int_text(k->workers, w, sizeof w);
        int_text(k->cores, t, sizeof t);
        int_text(k->batch, b, sizeof b);
        int_text(c->limit, l, sizeof l);
        measured_trace_path(c, k, path, sizeof path);
        const char *av[24] = { "train", "--workers", w, "--threads", t, "--sync", k->sync, "--topology", k->topology,
                               "--batch", b, "--limit", l, "--epochs", "1", "--quiet", "--trace", path, NULL };
        if (c->hostfile) {
            av[18] = "--hostfile";
            av[19] = c->hostfile;
            av[20] = NULL;
        }
        char name[96];
        config_name(k, name, sizeof name);
        fprintf(stderr, "speedup report: measuring %s (held out) ... ", name);
        double t0 = now_s();
        if (step(c, "a held-out training run", 0, av, "/dev/null"))
            return -1;
        wall = now_s() - t0;
        fprintf(stderr, "%.1f s\n", wall);
    } else {
        plan_trace_path(c, k, path, sizeof path);
    }
    trace *tr = trace_read(path, err, sizeof err);
    if (!tr) {
        args_error("report: %s", err);
        return -1;
    }
    config_name(k, m->name, sizeof m->name);
    m->held_out = k->held_out;
    m->batch = k->batch;
    m->measured = row_of_trace(tr, base_s);
    m->wall_s = wall;
    costmodel_config cc = tr->run.config;
    trace_free(tr);
    prediction_row model = predictions_from_model(&cal->params, &cc);
    m->model_s = model.time_s;
    return simulate_one(c, k, &m->sim);
}

static void describe_host(char *out, size_t size) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    double load[3];
    calib_plan_load_averages(load);
    snprintf(out, size, "%s, %ld cores; load average at the end of the report %.2f %.2f %.2f", host,
             sysconf(_SC_NPROCESSORS_ONLN), load[0], load[1], load[2]);
}

enum { OPT_OUT = 1, OPT_BUDGET, OPT_LIMIT, OPT_MAXW, OPT_REPS, OPT_HOSTFILE, OPT_HELP };

int cmd_report(int argc, char **argv) {
    static const struct option options[] = {
        { "out", required_argument, 0, OPT_OUT },         { "budget", required_argument, 0, OPT_BUDGET },
        { "limit", required_argument, 0, OPT_LIMIT },     { "max-workers", required_argument, 0, OPT_MAXW },
        { "reps", required_argument, 0, OPT_REPS },       { "hostfile", required_argument, 0, OPT_HOSTFILE },
        { "help", no_argument, 0, OPT_HELP },             { 0, 0, 0, 0 },
    };
    static ctx c;
    memset(&c, 0, sizeof c);
    c.out = "out";
    c.reps = 30;
    double budget_s = CALIB_PLAN_DEFAULT_BUDGET_S;
    int max_workers = 64, code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_OUT: c.out = optarg; break;
        case OPT_BUDGET:
            if (args_double("--budget", optarg, 1, 1e6, &budget_s))
                return 2;
            break;
        case OPT_LIMIT:
            if (args_long("--limit", optarg, 64, 60000, &c.limit))
                return 2;
            break;
        case OPT_MAXW:
            if (args_int("--max-workers", optarg, 2, 4096, &max_workers))
                return 2;
            break;
        case OPT_REPS:
            if (args_int("--reps", optarg, 1, 100000, &c.reps))
                return 2;
            break;
        case OPT_HOSTFILE: c.hostfile = optarg; break;
        case OPT_HELP: usage(stdout); return 0;
        default:
            return args_unknown_flag("report", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return args_unexpected("report", argv[optind]);
    /* Fail before minutes of measuring, not after. */
    const char *gp = getenv("SPEEDUP_GNUPLOT");
    if (!have_program(gp && *gp ? gp : "gnuplot")) {
        args_error("report: gnuplot not found (%s): install it (scripts/setup) or set SPEEDUP_GNUPLOT",
                   gp && *gp ? gp : "not on PATH");
        return 1;
    }
    if (!have_program(spawn_mpiexec())) {
        args_error("report: mpirun not found (%s): install Open MPI (scripts/setup) or set MPIEXEC", spawn_mpiexec());
        return 1;
    }
    if (!c.limit)
        c.limit = calib_plan_limit(budget_s);
    double t_start = now_s();
    char dir[PATH_LEN], path[PATH_LEN], path2[PATH_LEN], err[1400];
    if (make_dir(c.out))
        return 1;
    static const char *const subdirs[] = { "traces", "measured", "predicted", "figures" };
    for (int i = 0; i < 4; i++) {
        snprintf(dir, sizeof dir, "%s/%s", c.out, subdirs[i]);
        if (make_dir(dir))
            return 1;
    }

    /* 1. calibrate */
    char budget[32], limit[24], traces_dir[PATH_LEN], cal_out[PATH_LEN];
    snprintf(budget, sizeof budget, "%g", budget_s);
    int_text(c.limit, limit, sizeof limit);
    snprintf(traces_dir, sizeof traces_dir, "%s/traces", c.out);
    snprintf(c.cal_path, sizeof c.cal_path, "%s/calibration.json", c.out);
    snprintf(cal_out, sizeof cal_out, "%s/calibrate.txt", c.out);
    {
        const char *av[16] = { "calibrate", "--out-dir", traces_dir, "--out", c.cal_path, "--budget", budget,
                               "--limit", limit, NULL };
        if (c.hostfile) {
            av[9] = "--hostfile";
            av[10] = c.hostfile;
            av[11] = NULL;
        }
        if (step(&c, "calibrate", 0, av, cal_out))
            return 1;
    }
    calibration cal;
    if (calibration_read(c.cal_path, &cal, err, sizeof err)) {
        args_error("report: %s", err);
        return 1;
    }

    /* 2. the measured configurations: the plan's runs at the grid's batch (in the fit) and
     * held-out ones that fit this host's cores. */
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const long B = CALIB_PLAN_BATCH;
    config configs[MAX_MEASURED];
    int n_configs = 0;
    configs[n_configs++] = (config){ 1, 1, "batch", "allreduce", B, 0 };
    configs[n_configs++] = (config){ 1, 2, "batch", "allreduce", B, 0 };
    configs[n_configs++] = (config){ 2, 1, "batch", "allreduce", B, 0 };
    configs[n_configs++] = (config){ 2, 1, "epoch", "allreduce", B, 0 };
    configs[n_configs++] = (config){ 2, 1, "batch", "ps", B, 0 };
    configs[n_configs++] = (config){ 2, 1, "every:8", "allreduce", B, 1 };
    configs[n_configs++] = (config){ 2, 1, "every:8", "ps", B, 1 };
    configs[n_configs++] = (config){ 2, 1, "epoch", "ps", B, 1 };
    configs[n_configs++] = (config){ 2, 1, "batch", "allreduce", 2 * B, 1 };
    configs[n_configs++] = (config){ 1, 2, "batch", "allreduce", B / 2, 1 };
    if (cores >= 4) {
        configs[n_configs++] = (config){ 2, 2, "batch", "allreduce", B, 0 };
        configs[n_configs++] = (config){ 4, 1, "batch", "allreduce", B, 0 };
        configs[n_configs++] = (config){ 4, 1, "every:8", "allreduce", B, 1 };
        configs[n_configs++] = (config){ 2, 2, "epoch", "ps", B, 1 };
    }
    char base_path[PATH_LEN];
    plan_trace_path(&c, &configs[0], base_path, sizeof base_path);
    trace *base = trace_read(base_path, err, sizeof err);
    if (!base) {
        args_error("report: %s", err);
        return 1;
    }
    double base_s = traceinfo_training_time(base);
    trace_free(base);
    report_measured *meas = calloc(MAX_MEASURED, sizeof *meas);
    prediction_row *meas_rows = calloc(MAX_MEASURED, sizeof *meas_rows), *pred = NULL;
    trace *tl_measured = NULL, *tl_sim = NULL;
    int n_meas_rows = 0, n_pred = 0, rc = 1;
    if (!meas || !meas_rows) {
        args_error("out of memory");
        goto done;
    }
    for (int i = 0; i < n_configs; i++) {
        if (measure(&c, &configs[i], base_s, &cal, &meas[i]))
            goto done;
        if (configs[i].batch == B) /* the grid's batch: comparable in the figures */
            meas_rows[n_meas_rows++] = meas[i].measured;
    }
    snprintf(path, sizeof path, "%s/measurements.csv", c.out);
    if (predictions_save_csv(path, meas_rows, n_meas_rows, err, sizeof err)) {
        args_error("report: %s", err);
        goto done;
    }

    /* 3. the grid */
    char workers[256] = "1", reps[16], b[24];
    for (int k = 2; k <= max_workers; k *= 2) {
        size_t len = strlen(workers);
        snprintf(workers + len, sizeof workers - len, ",%d", k);
    }
    int_text(c.reps, reps, sizeof reps);
    int_text(B, b, sizeof b);
    snprintf(path, sizeof path, "%s/predictions.csv", c.out);
    {
        const char *av[] = { "simulate", "--calib", c.cal_path, "--workers", workers, "--cores", "1,2,4",
                             "--sync", "batch,epoch", "--topology", "ps,allreduce", "--examples", limit, "--batch", b,
                             "--epochs", "1", "--reps", reps, "--csv", "--out", path, NULL };
        fprintf(stderr, "speedup report: simulating workers %s x cores 1,2,4 x batch,epoch x ps,allreduce, %s reps\n",
                workers, reps);
        if (step(&c, "simulate (the grid)", 0, av, "/dev/null"))
            goto done;
    }
    if (predictions_read_csv(path, &pred, &n_pred, err, sizeof err)) {
        args_error("report: %s", err);
        goto done;
    }

    /* 4. the simulated timeline of the measured 2x1 batch run, and the figures */
    plan_trace_path(&c, &configs[2], path, sizeof path);
    snprintf(path2, sizeof path2, "%s/predicted/timeline-2x1-batch-allreduce.trace.jsonl", c.out);
    {
        const char *av[] = { "simulate", "--calib", c.cal_path, "--workers", "2", "--cores", "1", "--sync", "batch",
                             "--topology", "allreduce", "--examples", limit, "--batch", b, "--epochs", "1",
                             "--reps", "1", "--timeline", path2, NULL };
        if (step(&c, "simulate (the timeline)", 0, av, "/dev/null"))
            goto done;
    }
    if (!(tl_measured = trace_read(path, err, sizeof err)) || !(tl_sim = trace_read(path2, err, sizeof err))) {
        args_error("report: %s", err);
        goto done;
    }
    {
        char fig[PATH_LEN], predp[PATH_LEN], measp[PATH_LEN];
        snprintf(fig, sizeof fig, "%s/figures", c.out);
        snprintf(predp, sizeof predp, "%s/predictions.csv", c.out);
        snprintf(measp, sizeof measp, "%s/measurements.csv", c.out);
        const char *av[] = { "plot", "--out", fig, "--predictions", predp, "--measurements", measp, "--trace", path,
                             "--sim-trace", path2, "--calib", c.cal_path, "--traces", traces_dir, NULL };
        fprintf(stderr, "speedup report: drawing the figures\n");
        if (step(&c, "plot", 0, av, "/dev/null"))
            goto done;
    }

    /* 5. index.html */
    char host_desc[512], net_desc[1024];
    describe_host(host_desc, sizeof host_desc);
    snprintf(net_desc, sizeof net_desc,
             "CNN %s (%ld bytes of parameters), trained on the first %ld Fashion-MNIST examples for 1 epoch; "
             "workers are Open MPI ranks %s",
             tl_measured->run.net, tl_measured->run.model_bytes, c.limit,
             c.hostfile ? "on the hosts of the hostfile" : "on this one host (shared memory between ranks)");
    report_html_input in = { .host_desc = host_desc, .net_desc = net_desc, .commands = c.commands, .cal = &cal,
                             .pred = pred, .n_pred = n_pred, .meas = meas, .n_meas = n_configs,
                             .timeline_measured = tl_measured, .timeline_simulated = tl_sim,
                             .examples = c.limit, .epochs = 1, .grid_batch = B, .calibrate_log = cal_out };
    snprintf(path, sizeof path, "%s/index.html", c.out);
    if (report_html_write(path, &in, err, sizeof err)) {
        args_error("report: %s", err);
        goto done;
    }
    printf("report written to %s (%.0f s)\n", path, now_s() - t_start);
    rc = 0;
done:
    free(meas);
    free(meas_rows);
    free(pred);
    trace_free(tl_measured);
    trace_free(tl_sim);
    return rc;
}
