/* speedup advise — the best split of N cores into K workers × T cores, and the sync mode
 * and topology to use, ranked by predicted time (closed-form model), each with the 95%
 * prediction interval of one run, and why the winner wins: for the runner-up of every
 * other kind (another split, sync mode or topology), the term of the model that costs it
 * most against the winner.
 *
 * N cores means N cores in all: on --cluster MxP@RATE (N ≤ M·P, workers placed on its
 * machines), else on one machine of N cores (whatever this host has: the calibration's
 * per-core costs, N cores of them). A split the model refuses (batch sync cannot split a
 * batch of B examples over K > B workers; a worker larger than a machine) is no way to
 * use the cores: it is skipped with a note, and the advice comes from the rest. */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/grid.h"
#include "cli/wrap.h"
#include "cli/memopt.h"
#include "model/predictions.h"

#include <getopt.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup advise --total-cores N [--cores LIST] [--cluster MxP@RATE[,LAT]] [--calib F] [FLAGS]\n"
            "\n"
            "Ranks every way to use N cores in all — K workers x T cores with K*T = N, each\n"
            "sync mode and topology — by predicted training time, best first, and says why\n"
            "the best wins: the term (compute, update, comm, wait, start-up) that costs each\n"
            "other kind of choice the most. Epoch and every:N sync average models instead of\n"
            "gradients: they train differently, so check accuracy before switching from batch\n"
            "sync, or rank by the time to reach an accuracy (--target-accuracy). Batch sync\n"
            "cannot split B examples over more than B workers: such splits are skipped, with\n"
            "a note. Elephas' asynchronous modes are ranked only when asked (--sync\n"
            "batch,epoch,async,hogwild): through ps, with a dedicated master; their staleness\n"
            "(updates between a gradient's pull and its own) costs accuracy.\n"
            "\n"
            "  --total-cores N      total cores to use (K*T = N): on one machine of N\n"
            "                       cores, or on --cluster (N <= M*P)             [required]\n"
            "  --cores LIST         T, cores per worker, as in model: only the splits with T\n"
            "                       in it                                        [every T]\n"
            "                       (--cores N alone, without --total-cores, is the old\n"
            "                       spelling of --total-cores N: taken, with a warning)\n"
            "  --cluster SPEC       MxP@RATE[,LATENCY], e.g. 4x4@10gbit,50us: M machines of\n"
            "                       P cores on a network (workers fill machine 0 first)\n"
            "  --top N              show the N best alternatives                 [all]\n"
            "  --target-accuracy A  rank by the time to reach test accuracy A (0..1) instead,\n"
            "                       from --calib's accuracy fit: epochs to A (the sync mode's\n"
            "                       and the global batch's slowdown) x time per epoch; the\n"
            "                       splits that do not reach it last                 [none]\n"
            "  --csv                the predictions CSV instead of a table\n"
            "  --help               this text\n"
            "\n"
            "Sync modes, topologies, workload and parameters as for speedup model\n"
            "(--workers is not used: advise tries every divisor of N):\n"
            "  --sync LIST  [batch,epoch; also every:N, async[:N], hogwild[:N]]\n"
            "  --topology LIST  [ps,allreduce]   --master MODE\n"
            "  --calib FILE, --c0, --c1, --sigma, --latency, --bandwidth, --model-bytes,\n"
            "  --startup, --cv, --update, --run-cv, --rank-cv, --examples, --batch, --epochs,\n"
            "  --scaling strong|weak (--batch-per-worker)\n"
            "  --net SPEC  another network than the one --calib measured (train's --net\n"
            "              syntax): its compute, bytes and buffers priced from its layers\n");
    fputs(MEMOPT_USAGE, out);
}

enum { OPT_TOP = 1, OPT_CSV, OPT_TOTAL, OPT_HELP };

typedef char skip_note[640]; /* "CONFIG: no time to accuracy: " and a 512-byte reason */

/* Is T one of --cores (every T when --cores was not given as a list)? */
static bool cores_allowed(const grid *g, int t) {
    if (!g->cores_given)
        return true;
    for (int i = 0; i < g->n_cores; i++)
        if (g->cores[i] == t)
            return true;
    return false;
}

/* Every way to use total cores (K | total, T = total/K) with each sync mode and topology
 * of g that the model accepts, as rows; each refused one (batch sync split over K > B
 * workers) as a note "CONFIG: why" in skipped. Returns the number of rows. */
static int advise_rows(const grid *g, const memopt *mo, int total, prediction_row *rows, skip_note *skipped,
                       int *n_skipped) {
    int n = 0;
    for (int s = 0; s < g->n_sync; s++)
        for (int t = 0; t < g->n_topology; t++)
            for (int k = 1; k <= total; k++) {
                /* On a cluster a worker's cores are one machine's: larger splits are no
                 * split of these cores at all (the header says so once). */
                if (total % k || (g->has_cluster && total / k > g->cluster.cores) || !cores_allowed(g, total / k))
                    continue;
                /* Async runs through a parameter server on a dedicated master only. */
                if (job_sync_is_async(g->sync[s]) && g->topology[t] != JOB_TOPO_PS)
                    continue;
                job_config c = g->base;
                c.workers = k;
                c.cores = total / k;
                c.sync = g->sync[s];
                c.every_n = g->every_n[s];
                c.topology = g->topology[t];
                if (job_sync_is_async(c.sync))
                    c.master = JOB_MASTER_DEDICATED;
                char err[512], name[64];
                if (costmodel_check(&g->params, &c, err, sizeof err)) {
                    grid_describe(&c, name, sizeof name);
                    snprintf(skipped[(*n_skipped)++], sizeof *skipped, "%s: %s", name, err);
                    continue;
                }
                rows[n] = predictions_from_model_interval(&g->params, &c, &g->unc);
                if (!isnan(g->target_accuracy) &&
                    efficiency_check_at(&g->efficiency, &c, rows[n].staleness_mean, err, sizeof err)) {
                    grid_describe(&c, name, sizeof name);
                    snprintf(skipped[(*n_skipped)++], sizeof *skipped, "%s: no time to accuracy: %s", name, err);
                    continue;
                }
                memopt_fill(mo, g->params.model_bytes, &c, &rows[n]);
                if (grid_fill_tta(g, &c, &rows[n]))
                    return -1;
                n++;
            }
    return n;
}

static int by_time(const void *a, const void *b) {
    const prediction_row *x = a, *y = b;
    return (x->time_s > y->time_s) - (x->time_s < y->time_s);
}

/* By time to the target: those that reach it first, fastest first; then the others, the
 * highest accuracy at the schedule's end first. */
static int by_time_to_accuracy(const void *a, const void *b) {
    const efficiency_prediction *x = &((const prediction_row *)a)->tta, *y = &((const prediction_row *)b)->tta;
    const bool rx = x->reach == EFFICIENCY_REACHED, ry = y->reach == EFFICIENCY_REACHED;
    if (rx != ry)
        return rx ? -1 : 1;
    if (rx)
        return (x->time_s > y->time_s) - (x->time_s < y->time_s);
    return (x->accuracy_at_end < y->accuracy_at_end) - (x->accuracy_at_end > y->accuracy_at_end);
}

/* ---------------------------------------------------------------------------------- */
/* Why the winner wins */

enum { TERM_COMPUTE, TERM_UPDATE, TERM_COMM, TERM_WAIT, TERM_STARTUP, TERM_COUNT };

static const char *const term_why[TERM_COUNT] = {
    "compute: each worker's steps take longer (more examples per step, fewer cores per worker, "
    "or cores shared)",
    "update: the optimizer update on the critical path",
    "comm: the synchronisations (S(K) every round: more workers, more rounds, or the network)",
    "wait: waiting at the barriers for the slowest worker",
    "start-up: starting the workers and loading the data",
};

static double term_of(const prediction_row *r, int t) {
    switch (t) {
    case TERM_COMPUTE: return r->compute_s;
    case TERM_UPDATE: return r->update_s;
    case TERM_COMM: return r->comm_s;
    case TERM_WAIT: return r->wait_s;
    default: return r->startup_s;
    }
}

/* The term by which loser costs the most more than winner. */
static int dominant_term(const prediction_row *winner, const prediction_row *loser) {
    int best = 0;
    for (int t = 1; t < TERM_COUNT; t++)
        if (term_of(loser, t) - term_of(winner, t) > term_of(loser, best) - term_of(winner, best))
            best = t;
    return best;
}

static void describe_row(const prediction_row *r, char *out, size_t size) {
    snprintf(out, size, "%d x %d, %s sync, %s", r->workers, r->cores, r->sync, job_topology_name(r->topology));
}

/* One line for the best row of another kind than the winner's: kind says what differs. */
static void print_reason(FILE *out, const prediction_row *winner, const prediction_row *r, const char *kind) {
    char name[96];
    describe_row(r, name, sizeof name);
    int t = dominant_term(winner, r);
    double delta = r->time_s - winner->time_s;
    /* Closer than the winner's own interval reaches: the model cannot tell them apart. */
    bool tie = delta < winner->time_hi - winner->time_s;
    fprintf(out, "  %-18s %-34s %+8.1f s (%+.0f%%)%s: %+.1f s of %s\n", kind, name, delta, 100 * delta / winner->time_s,
           tie ? ", a tie within the 95% interval" : "", term_of(r, t) - term_of(winner, t), term_why[t]);
}

/* The first row (rows sorted by time) that differs from rows[0] by kind: 0 another split
 * (K x T), 1 another sync mode, 2 another topology. -1 when none does. */
static int runner_up(const prediction_row *rows, int n, int kind) {
    for (int i = 1; i < n; i++) {
        bool split = rows[i].workers != rows[0].workers, sync = strcmp(rows[i].sync, rows[0].sync) != 0,
             topo = rows[i].topology != rows[0].topology;
        if ((kind == 0 && split && !sync && !topo) || (kind == 1 && sync && !split && !topo) ||
            (kind == 2 && topo && !split && !sync))
            return i;
    }
    return -1;
}

/* The same for time to accuracy, W + e·t_epoch: the loser's extra time splits into its
 * extra epochs (at its own time per epoch), its slower epochs (over the winner's epochs)
 * and its start-up. A loser that does not reach the target says why. */
static void print_tta_reason(FILE *out, const prediction_row *winner, const prediction_row *r, const char *kind, int epochs) {
    char name[96], miss[200];
    describe_row(r, name, sizeof name);
    const efficiency_prediction *w = &winner->tta, *l = &r->tta;
    if (l->reach != EFFICIENCY_REACHED) {
        efficiency_describe_miss(l, epochs, miss, sizeof miss);
        fprintf(out, "  %-18s %-34s %s\n", kind, name, miss);
        return;
    }
    const double per_w = w->epochs > 0 ? (w->time_s - winner->startup_s) / w->epochs : 0;
    const double per_l = l->epochs > 0 ? (l->time_s - r->startup_s) / l->epochs : 0;
    const double delta = l->time_s - w->time_s;
    /* An interval open above (some runs do not reach the target) cannot call it either. */
    const bool tie = !w->hi_reached || delta < w->time_hi_s - w->time_s;
    fprintf(out, "  %-18s %-34s %+8.1f s (%+.0f%%)%s: %+.1f s from %.2f epochs instead of %.2f, %+.1f s from %.1f s per "
           "epoch instead of %.1f, %+.1f s of start-up\n", kind, name, delta, 100 * delta / w->time_s,
           tie ? ", a tie within the 95% interval" : "", (l->epochs - w->epochs) * per_l, l->epochs, w->epochs,
           w->epochs * (per_l - per_w), per_l, per_w, r->startup_s - winner->startup_s);
}

/* tta_epochs > 0: the rows are ranked by time to accuracy, of a schedule of that many
 * epochs. */
static void print_reasons(FILE *out, const prediction_row *rows, int n, int tta_epochs) {
    static const char *const kinds[] = { "another split:", "another sync:", "another topology:", "runner-up:" };
    if (tta_epochs > 0)
        fprintf(out, "\nwhy: the best of each other choice, with the winner's other settings: its time to the target "
               "split into more epochs and slower epochs:\n");
    else
        fprintf(out, "\nwhy: the best of each other choice, with the winner's other settings, and the term that "
               "costs it most:\n");
    for (int k = 0; k < 4; k++) {
        int i = k < 3 ? runner_up(rows, n, k) : n > 1 ? 1 : -1;
        if (i > 0 && tta_epochs > 0)
            print_tta_reason(out, &rows[0], &rows[i], kinds[k], tta_epochs);
        else if (i > 0)
            print_reason(out, &rows[0], &rows[i], kinds[k]);
    }
}

/* ---------------------------------------------------------------------------------- */

/* The winner, by time (or by time to the target accuracy, when tta). */
/* Model averaging (epoch, every:N) or stale gradients ranked on time trains differently:
 * what the calibration's accuracy fit predicts it does to accuracy after the workload's
 * epochs, beside the fastest batch sync's; a warning where there is no fit or it cannot
 * say. */
static void print_averaging_caveat(FILE *out, const grid *g, const prediction_row *best, const prediction_row *rows,
                                   int n) {
    if (strcmp(best->sync, "batch") == 0)
        return;
    const prediction_row *batch = predictions_fastest_batch_sync(rows, n);
    char why[256] = "", why_batch[256] = "";
    const double acc = predictions_accuracy_after(&g->efficiency, best, &g->base, why, sizeof why);
    const double acc_batch = batch ? predictions_accuracy_after(&g->efficiency, batch, &g->base, why_batch,
                                                               sizeof why_batch) : NAN;
    fprintf(out, "caveat: %s sync %s: it trains differently", best->sync,
            predictions_row_is_async(best) ? "trains on stale gradients" : "averages models instead of gradients");
    if (!isnan(acc)) {
        fprintf(out, "; the accuracy fit predicts %.1f%% test accuracy after %d epochs", 100 * acc, g->base.epochs);
        if (!isnan(acc_batch))
            fprintf(out, ", against %.1f%% for the fastest batch sync", 100 * acc_batch);
        fprintf(out, " (--target-accuracy ranks by time to an accuracy).");
    } else if (g->efficiency.known) {
        fprintf(out, ", and the accuracy fit cannot say by how much here (%s): check its accuracy.", why);
    } else {
        fprintf(out, ", and with no accuracy fit (calibrate --accuracy-plan, then --target-accuracy) it is ranked on "
                     "time alone; check its accuracy.");
    }
    if (batch) {
        char t[24];
        predictions_duration(batch->time_s, t, sizeof t);
        fprintf(out, " The fastest batch sync: %d workers x %d cores, %s, %s.", batch->workers, batch->cores,
               job_topology_name(batch->topology), t);
    }
    fprintf(out, "\n\n");
}

static void print_best(FILE *out, const prediction_row *r, bool tta, int epochs) {
    const efficiency_prediction *t = &r->tta;
    char time[24], lo[24], hi[24];
    fprintf(out, "best%s: %d worker%s x %d core%s, %s sync, %s: ", tta ? " to the target" : "", r->workers,
           r->workers == 1 ? "" : "s", r->cores, r->cores == 1 ? "" : "s", r->sync, job_topology_name(r->topology));
    predictions_duration(r->time_s, time, sizeof time);
    predictions_duration(r->time_lo, lo, sizeof lo);
    predictions_duration(r->time_hi, hi, sizeof hi);
    if (!tta)
        fprintf(out, "%s [95%% PI %s, %s], speedup %.3g over 1 core\n\n", time, lo, hi, r->speedup);
    else if (t->reach == EFFICIENCY_REACHED) {
        fprintf(out, "%.1f%% test accuracy after %.2f epochs, %.1f s [95%% PI %.1f, ", 100 * t->target, t->epochs, t->time_s,
               t->time_lo_s);
        t->hi_reached ? fprintf(out, "%.1f]\n\n", t->time_hi_s) : fprintf(out, "not reached]\n\n");
    } else {
        char miss[200];
        efficiency_describe_miss(t, epochs, miss, sizeof miss);
        fprintf(out, "no configuration reaches %.1f%%; the closest: %s\n\n", 100 * t->target, miss);
    }
}

/* N cores in all: on --cluster (N ≤ M·P), else one machine of N cores. 0, or 2 with the
 * reason printed. */
static int place_cores(grid *g, int total) {
    if (g->has_cluster) {
        long most = (long)g->cluster.machines * g->cluster.cores;
        if (total > most) {
            args_error("advise: --cores %d is more than the cluster's %ld (%d machines x %d cores)", total, most,
                       g->cluster.machines, g->cluster.cores);
            return 2;
        }
        return 0;
    }
    g->params.machines = 1;
    g->params.host_cores = total;
    g->unc.se.host_cores = 0;
    return 0;
}

/* The human-readable answer: the setting, the best split, the ranked table, why. */
static void print_advice(FILE *out, const grid *g, const memopt *mo, int total, const prediction_row *rows, int n, int shown,
                         bool tta) {
    fprintf(out, "advise: %d cores in all", total);
    if (g->has_cluster)
        fprintf(out, " (workers of at most %d cores: one machine's)", g->cluster.cores);
    fprintf(out, "\n");
    grid_print_setting(g, out);
    print_best(out, &rows[0], tta, g->base.epochs);
    if (!tta)
        print_averaging_caveat(out, g, &rows[0], rows, n);
    predictions_write_table(out, rows, shown, g->wide);
    grid_print_interval_note(g, out);
    grid_print_range_note(g, rows, shown, out);
    if (tta) {
        fprintf(out, "\n");
        predictions_write_tta_table(out, rows, shown, g->base.epochs);
    }
    print_reasons(out, rows, n, tta ? g->base.epochs : 0);
    memopt_print_note(mo, rows, shown, out);
}

/* The cores to split: --total-cores, or a lone --cores N, its old spelling (with a
 * warning); 0 after an error line when neither was given. */
static int total_cores(grid *g, int total) {
    if (total < 1 && g->cores_given && g->n_cores == 1) {
        total = g->cores[0];
        g->cores_given = false;
        args_warning("advise --cores %d: read as --total-cores %d, its old spelling; --cores is now the cores per "
                     "worker, as in model and simulate", total, total);
    }
    if (total < 1)
        args_error("advise: --total-cores N is required (the total number of cores to split)");
    return total;
}

int cmd_advise(int argc, char **argv) {
    static const struct option options[] = {
        GRID_LONG_OPTIONS,
        MEMOPT_LONG_OPTIONS,
        { "top", required_argument, 0, OPT_TOP },
        { "total-cores", required_argument, 0, OPT_TOTAL },
        { "csv", no_argument, 0, OPT_CSV },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    grid g;
    grid_init(&g); /* every topology by default, as model and simulate */
    memopt mo;
    memopt_init(&mo);
    int total = 0, top = 0, csv = 0, code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_TOP:
            if (args_int("--top", optarg, 1, 1000000, &top))
                return 2;
            continue;
        case OPT_CSV: csv = 1; continue;
        case OPT_HELP: usage(stdout); return 0;
        case OPT_TOTAL:
            if (args_int("--total-cores", optarg, 1, 1000000, &total))
                return 2;
            continue;
        case GRID_OPT_WORKERS:
            args_error("advise: --workers is not used: advise tries every K that divides --cores");
            return 2;
        case '?':
            return args_unknown_flag("advise", argv[optind - 1]);
        }
        const int mem = memopt_handle_option(&mo, code, optarg);
        if (mem < 0 || (mem > 0 && grid_handle_option(&g, code, optarg)))
            return 2;
    }
    if (optind < argc)
        return args_unexpected("advise", argv[optind]);
    if ((total = total_cores(&g, total)) < 1)
        return 2;
    /* Every divisor K of N with T = N/K (those in --cores); the grid checks them all. */
    int allowed[GRID_MAX_VALUES], n_allowed = g.n_cores;
    memcpy(allowed, g.cores, sizeof allowed);
    g.n_workers = g.n_cores = 1;
    g.workers[0] = g.cores[0] = 1;
    int rc = grid_finish(&g);
    memcpy(g.cores, allowed, sizeof allowed);
    g.n_cores = n_allowed;
    if (rc || (rc = place_cores(&g, total)) || (rc = memopt_finish(&mo, g.calib_path, g.net_spec)))
        return rc;

    int n_div = 0;
    for (int k = 1; k <= total; k++)
        n_div += total % k == 0;
    int n = n_div * g.n_sync * g.n_topology, n_skipped = 0;
    prediction_row *rows = malloc(sizeof *rows * (size_t)n);
    skip_note *skipped = malloc(sizeof *skipped * (size_t)n);
    if (!rows || !skipped) {
        free(rows);
        free(skipped);
        args_error("out of memory");
        return 1;
    }
    n = advise_rows(&g, &mo, total, rows, skipped, &n_skipped);
    if (n < 0) {
        free(skipped);
        free(rows);
        return 1;
    }
    if (n == 0) {
        for (int k = 0; k < n_skipped; k++)
            fprintf(stderr, "skipped %s\n", skipped[k]);
        args_error("advise: no way to use %d cores: every split was refused (above)", total);
        free(skipped);
        free(rows);
        return 2;
    }
    const bool tta = !isnan(g.target_accuracy);
    qsort(rows, (size_t)n, sizeof *rows, tta ? by_time_to_accuracy : by_time);
    int shown = top > 0 && top < n ? top : n;
    FILE *out = csv ? stderr : wrap_open(stdout, g.wide ? 0 : WRAP_COLUMNS); /* skipped: beside the CSV */
    if (csv)
        predictions_write_csv(stdout, rows, shown);
    else
        print_advice(out, &g, &mo, total, rows, n, shown, tta);
    for (int k = 0; k < n_skipped; k++)
        fprintf(out, "skipped %s\n", skipped[k]);
    if (!csv)
        wrap_close(out, stdout);
    free(skipped);
    free(rows);
    return 0;
}
