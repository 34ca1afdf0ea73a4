/* speedup simulate — the discrete-event simulator (sim/) over a grid of configurations:
 * R replications of every config and of its one-worker, one-core baseline
 * (sim/replicate.h: parameters drawn from the calibration's uncertainty, a run-to-run
 * factor per run, step noise), printed as the predictions of DESIGN.md with the 95%
 * prediction interval of one run and, apart, the interval of the mean; optionally one
 * replication's schedule as a Chrome trace-event timeline. */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/grid.h"
#include "cli/wrap.h"
#include "cli/memopt.h"
#include "trace/chrome.h"
#include "model/predictions.h"
#include "trace/trace.h"
#include "sim/job.h"
#include "sim/replicate.h"
#include "util/host.h"
#include "git_revision.h" /* SPEEDUP_GIT: generated at build time (cmake/git_revision.cmake) */

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup simulate [FLAGS]\n"
            "\n"
            "Simulates every combination of the lists below event by event: start-up, compute\n"
            "steps drawn from the calibrated distribution (or replayed from a trace), updates,\n"
            "barriers, the parameter server's queue or the ring all-reduce. Each replication is\n"
            "one possible pair of runs (the config and its 1-worker, 1-core baseline): the\n"
            "parameters drawn from --calib's standard errors, each run's time scaled by a\n"
            "run-to-run factor (log-normal, median 1, log-sd run_cv), steps drawn with spread cv.\n"
            "Prints the time and speedup at the calibrated values (the mean over the step draws,\n"
            "the host at its median speed), the 95%% prediction interval of ONE run (where\n"
            "your next run should land) and where the time goes (means over workers).\n"
            "\n");
    grid_print_usage(out);
    fputs(MEMOPT_USAGE, out);
    fprintf(out,
            "Simulation:\n"
            "  --reps R             replications per configuration; more settle the ends of\n"
            "                       the interval (at 50 its half-width is known to ~10%%)  [50]\n"
            "  --seed S             seed of the first replication's RNG          [1]\n"
            "  --launch MODE        start-up W(K) = w0 + w1*K: parallel (all at once, each\n"
            "                       slowed by K) | sequential (one launched every w1 s)  [parallel]\n"
            "  --replay TRACE       resample the steps (compute spans with examples) of a\n"
            "                       measured *.trace.jsonl (all ranks) instead of drawing\n"
            "                       log-normal steps (--cv is then unused); each span is scaled\n"
            "                       by the model's step time here / on the trace's configuration\n"
            "                       at that span's examples\n"
            "  --contention HOW     where ranks share a host's cores: scheduled (the simulator\n"
            "                       places them on the cores and shares each core among the\n"
            "                       ranks on it: a synchronous job on one host, one core a\n"
            "                       worker) | closed-form (every step slowed by the model's\n"
            "                       rho')                                      [scheduled]\n"
            "Output:\n"
            "  --csv                the predictions CSV on stdout instead of a table:\n"
            "                       time_s, speedup: means over the replications' step\n"
            "                       draws at the calibrated values (no parameter draws);\n"
            "                       time_lo,time_hi / ci_lo,ci_hi: 95%% prediction interval of\n"
            "                       ONE run's time / speedup; mean_lo,mean_hi: 95%% interval of\n"
            "                       the mean speedup (Monte-Carlo error, far narrower);\n"
            "                       compute_s, update_s, comm_s, wait_s, startup_s: per worker;\n"
            "                       with --target-accuracy the time-to-accuracy columns (as\n"
            "                       speedup model --csv: empty where not reached)\n"
            "  --out FILE           also write the predictions CSV to FILE (atomically)\n"
            "  --timeline FILE      the first configuration's first replication, one track per\n"
            "                       worker: a trace if FILE ends in .jsonl (for speedup plot\n"
            "                       --sim-trace), else Chrome trace-event JSON (Perfetto)\n"
            "  --help               this text\n");
}

enum { OPT_CSV = 1, OPT_OUT, OPT_HELP, OPT_REPS, OPT_SEED, OPT_LAUNCH, OPT_REPLAY, OPT_TIMELINE, OPT_CONTENTION };

/* ---------------------------------------------------------------------------------- */
/* The timeline: one replication's spans collected as a trace, written as a trace
 * (FILE.trace.jsonl, which `speedup plot --sim-trace` draws under a measured run) or as
 * Chrome trace-event JSON (anything else). */

typedef struct {
    trace *t;
    int failed;
} timeline;

static void timeline_span(void *ctx, int rank, trace_phase ph, double t0_s, double t1_s) {
    timeline *tl = ctx;
    trace_event e = { .rank = rank, .ph = ph, .t0_s = t0_s, .t1_s = t1_s, .epoch = -1, .step = -1 };
    if (trace_add(tl->t, &e))
        tl->failed = 1;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int write_timeline(const job_spec *spec, const char *host, unsigned long seed, const char *path) {
    char err[512];
    job *j = job_new(spec, err, sizeof err);
    if (!j) {
        args_error("%s", err);
        return 1;
    }
    trace_run run = { .config = spec->config, .model_bytes = (long)spec->params.model_bytes,
                      .host_cores = (int)spec->params.host_cores, .seed = (long)seed };
    snprintf(run.host, sizeof run.host, "%s", host);
    snprintf(run.net, sizeof run.net, "simulated");
    snprintf(run.git, sizeof run.git, "%s", SPEEDUP_GIT);
    timeline tl = { .t = trace_new(&run) };
    if (!tl.t) {
        job_free(j);
        args_error("out of memory");
        return 1;
    }
    job_set_timeline(j, timeline_span, &tl);
    job_result r;
    int rc = job_run(j, job_seed(seed, 0), &r, err, sizeof err);
    job_free(j);
    if (rc == 0 && tl.failed)
        rc = -1, snprintf(err, sizeof err, "%s: out of memory collecting the timeline", path);
    if (rc == 0)
        rc = ends_with(path, ".jsonl") ? trace_write(tl.t, path, err, sizeof err)
                                       : chrome_write(tl.t, 1, "simulated", path, err, sizeof err);
    trace_free(tl.t);
    if (rc) {
        args_error("%s", err);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */

static prediction_row row_of(const job_config *c, const replicate_summary *s) {
    prediction_row r = {
        .workers = c->workers, .cores = c->cores, .topology = c->topology,
        .time_s = s->time_s, .speedup = s->speedup, .ci_lo = s->speedup_lo, .ci_hi = s->speedup_hi,
        .time_lo = s->time_lo_s, .time_hi = s->time_hi_s, .mean_hi = s->speedup_mean_hi,
        /* A speedup is positive: with few replications the t interval of the mean can
         * reach below 0, which the predictions CSV (rightly) refuses. */
        .mean_lo = s->speedup_mean_lo > 0 ? s->speedup_mean_lo : 0,
        .compute_s = s->compute_s, .comm_s = s->comm_s, .wait_s = s->wait_s, .startup_s = s->startup_s,
        .update_s = s->update_s, .has_staleness = job_sync_is_async(c->sync),
        .staleness_median = s->staleness_median, .staleness_p90 = s->staleness_p90,
        .staleness_mean = s->staleness_mean,
    };
    job_sync_format(c->sync, c->every_n, r.sync, sizeof r.sync);
    return r;
}

typedef struct {
    int csv, reps;
    long seed;
    job_launch launch;
    job_contention contention;
    const char *out_path, *replay_path, *timeline_path;
    memopt memory;
} simulate_options;

/* 0 to go on, else the exit status (-1: --help shown, exit 0). */
static int parse_options(int argc, char **argv, grid *g, simulate_options *o) {
    static const struct option options[] = {
        GRID_LONG_OPTIONS,
        MEMOPT_LONG_OPTIONS,
        { "reps", required_argument, 0, OPT_REPS },
        { "seed", required_argument, 0, OPT_SEED },
        { "launch", required_argument, 0, OPT_LAUNCH },
        { "contention", required_argument, 0, OPT_CONTENTION },
        { "replay", required_argument, 0, OPT_REPLAY },
        { "timeline", required_argument, 0, OPT_TIMELINE },
        { "csv", no_argument, 0, OPT_CSV },
        { "out", required_argument, 0, OPT_OUT },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_CSV: o->csv = 1; continue;
        case OPT_OUT: o->out_path = optarg; continue;
        case OPT_REPLAY: o->replay_path = optarg; continue;
        case OPT_TIMELINE: o->timeline_path = optarg; continue;
        case OPT_HELP: usage(stdout); return -1;
        case OPT_REPS:
            if (args_int("--reps", optarg, 1, 1000000, &o->reps))
                return 2;
            continue;
        case OPT_SEED:
            if (args_long("--seed", optarg, 0, 2147483647L, &o->seed))
                return 2;
            continue;
        case OPT_LAUNCH: { /* in job_launch's order */
            static const char *const launches[] = { "parallel", "sequential" };
            int i;
            if (args_choice("--launch", optarg, launches, 2, &i))
                return 2;
            o->launch = (job_launch)i;
            continue;
        }
        case OPT_CONTENTION: { /* in job_contention's order */
            static const char *const ways[] = { "scheduled", "closed-form" };
            int i;
            if (args_choice("--contention", optarg, ways, 2, &i))
                return 2;
            o->contention = (job_contention)i;
            continue;
        }
        case '?':
            return args_unknown_flag("simulate", argv[optind - 1]);
        }
        const int mem = memopt_handle_option(&o->memory, code, optarg);
        if (mem < 0 || (mem > 0 && grid_handle_option(g, code, optarg)))
            return 2;
    }
    if (optind < argc)
        return args_unexpected("simulate", argv[optind]);
    int rc = grid_finish(g);
    return rc ? rc : memopt_finish(&o->memory, g->calib_path, g->net_spec);
}

/* Every configuration of the grid into rows[0..grid_size), with each rank's peak memory
 * (cli/memopt.h: the whole process, not only the simulator's model-sized blocks); the
 * first configuration's timeline when asked. 0, or 1 after an error line. */
static int simulate_grid(const grid *g, const simulate_options *o, const job_replay *replay, prediction_row *rows) {
    char err[512];
    const double start_s = host_monotonic_s();
    double said_s = start_s; /* progress every 2 s once a grid takes longer than that */
    const char *every = getenv("SPEEDUP_PROGRESS_S"); /* another interval (tests: 0) */
    const double every_s = every && *every ? atof(every) : 2.0;
    for (int i = 0; i < grid_size(g); i++) {
        const double now = host_monotonic_s();
        if (i > 0 && now - said_s >= every_s) {
            fprintf(stderr, "speedup simulate: %d of %d configurations in %.0f s\n", i, grid_size(g), now - start_s);
            said_s = now;
        }
        job_spec spec = { .params = g->params, .config = grid_config(g, i), .launch = o->launch, .replay = replay,
                          .contention = o->contention };
        replicate_summary s;
        if (replicate_run(&spec, &g->unc, o->reps, (unsigned long)o->seed, &s, err, sizeof err)) {
            args_error("%s", err);
            return 1;
        }
        rows[i] = row_of(&spec.config, &s);
        memopt_fill(&o->memory, g->params.model_bytes, &spec.config, &rows[i]);
        if (grid_fill_tta(g, &spec.config, &rows[i]))
            return 1;
        if (i == 0 && o->timeline_path && write_timeline(&spec, g->host, (unsigned long)o->seed, o->timeline_path))
            return 1;
    }
    return 0;
}

static void print_table(const grid *g, const simulate_options *o, const prediction_row *rows, int n) {
    FILE *out = wrap_open(stdout, g->wide ? 0 : WRAP_COLUMNS);
    fprintf(out, "simulated: %d replications from seed %ld, %s launch, %s%s%s\n", o->reps, o->seed,
            o->launch == JOB_LAUNCH_SEQUENTIAL ? "sequential" : "parallel",
            o->contention == JOB_CONTENTION_SCHEDULED ? "cores scheduled" : "the closed form's rho'",
            o->replay_path ? ", compute replayed from " : "", o->replay_path ? o->replay_path : "");
    grid_print_setting(g, out);
    predictions_write_table(out, rows, n, g->wide);
    grid_print_interval_note(g, out);
    grid_print_range_note(g, rows, n, out);
    memopt_print_note(&o->memory, rows, n, out);
    if (!isnan(g->target_accuracy)) {
        fprintf(out, "\n");
        predictions_write_tta_table(out, rows, n, g->base.epochs);
    }
    wrap_close(out, stdout);
}

int cmd_simulate(int argc, char **argv) {
    grid g;
    grid_init(&g);
    simulate_options o = { .reps = 50, .seed = 1, .launch = JOB_LAUNCH_PARALLEL };
    memopt_init(&o.memory);
    int rc = parse_options(argc, argv, &g, &o);
    if (rc)
        return rc < 0 ? 0 : rc;
    char err[512];
    job_replay *replay = NULL;
    if (o.replay_path && !(replay = job_replay_read(o.replay_path, err, sizeof err))) {
        args_error("%s", err);
        return 1;
    }
    int n = grid_size(&g);
    prediction_row *rows = malloc(sizeof *rows * (size_t)n);
    if (!rows) {
        args_error("out of memory");
        rc = 1;
    } else {
        rc = simulate_grid(&g, &o, replay, rows);
    }
    if (rc == 0 && o.out_path && predictions_save_csv(o.out_path, rows, n, err, sizeof err)) {
        args_error("%s", err);
        rc = 1;
    }
    if (rc == 0 && o.csv)
        predictions_write_csv(stdout, rows, n);
    else if (rc == 0)
        print_table(&g, &o, rows, n);
    free(rows);
    job_replay_free(replay);
    return rc;
}
