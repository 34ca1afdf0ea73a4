/* speedup calibrate — fit the cost model's parameters (fit/fit.h) from traces and write
 * calibration.json, or fit Ernest's model to an Ernest training-data CSV. With neither
 * source given it first measures: the plan of cli/calib_plan.h records the traces, then
 * the same --from-traces fit runs on them. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/calib_accuracy.h"
#include "cli/calib_plan.h"
#include "cli/calib_table.h"
#include "cli/commands.h"
#include "cli/import_flags.h"
#include "model/calibration.h"
#include "model/params.h"
#include "fit/efficiency_fit.h"
#include "model/efficiency.h"
#include "fit/ernest.h"
#include "fit/fit.h"
#include "fit/netfit.h"
#include "fit/rounds.h"
#include "fit/verdict.h"
#include "train/net.h"
#include "trace/trace.h"
#include "trace/tracefile.h"
#include "util/atomicfile.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_MACHINES = 64, MAX_TRACES = 4096 };
static const double MIB = 1048576.0;

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup calibrate [--budget SECONDS] [--accuracy-plan SECONDS [--accuracy-epochs E]]\n"
            "                         [--net SPEC] [--out-dir DIR] [--hostfile F] [--out FILE]\n"
            "       speedup calibrate --from-traces DIR [--out FILE] [import flags]\n"
            "       speedup calibrate --ernest FILE.csv [--predict-machines LIST] [--fraction F]\n"
            "       speedup calibrate --from-table FILE.csv --model-bytes SIZE [--topology allreduce|ps]\n"
            "                         [--allreduce ring|hierarchical|either] [--out FILE]\n"
            "\n"
            "Measuring (no --from-traces, no --ernest): short `speedup train --workers K\n"
            "--threads T` runs at 1x1, 1x2, 2x1 ... (the splits of this host's cores, batch and\n"
            "epoch sync, three batch sizes at K = 1, the ps topology at 2x1), every\n"
            "configuration three times, interleaved (A B C ... A B C ...; traces ...-r1, -r2, -r3), and\n"
            "`mpirun -np 2 speedup commbench` once, then the fit below on their traces.\n"
            "With --accuracy-plan, also the runs the accuracy fit needs (cli/calib_accuracy.h:\n"
            "1x1 batch, 2x1 batch with --batch-per-worker, 2x1 every:8, 2x1 epoch, 4x1 every:8,\n"
            "4x1 async: what staleness costs),\n"
            "each to the end of its --accuracy-epochs schedule, sized to the stated seconds.\n"
            "\n"
            "From traces: fits c0, c1, sigma, alpha and beta per topology, w0, w1, cv, the\n"
            "update u and the run-to-run spread run_cv (from configurations run more than once),\n"
            "the memory per rank (from the peaks the traces record: calibration.json's memory),\n"
            "each with a standard error, from every *.trace.jsonl in DIR (runs of `speedup\n"
            "train` and `speedup commbench` on one host and one network), checks the fit by\n"
            "leaving each configuration out (with every repeat of it), and writes\n"
            "calibration.json. Traces without update events or repeats still fit (u = 0,\n"
            "run_cv = 0, each with a note in calibration.json). DIR may hold PyTorch profiler\n"
            "traces (RUN.rank0.json, RUN.rank1.json ...: one run) and Horovod timelines\n"
            "(*.json, *.json.gz; see the import flags below); communication that ran beside\n"
            "backward in them gives the overlap (how much of a step it ran beside, how much\n"
            "longer that made the step, and how much of it was still waited for after it).\n"
            "A topology no trace synchronises through is\n"
            "left uncalibrated (a PyTorch job: ps). Traces with accuracy points (every run of\n"
            "`speedup train` since it records them) also give the accuracy curve against epochs\n"
            "and each configuration's slowdown of it (model/efficiency.h; calibration.json's\n"
            "efficiency), fitted on the runs of the schedule (examples, epochs) with the most\n"
            "points (async and hogwild runs too, each at the mean staleness the cost model\n"
            "gives its configuration: what staleness costs in epochs, stale_cost):\n"
            "what `--target-accuracy` predicts from.\n"
            "\n");
    fprintf(out,
            "From an Ernest CSV (lines machines,input_fraction,time_s; '#' comments): fits\n"
            "Ernest's time = t0 + t1*fraction/machines + t2*machines + t3*ln(machines) by\n"
            "non-negative least squares, as amplab/ernest does, and predicts.\n"
            "\n"
            "  --budget SECONDS         measuring: about how long the plan takes; more is more\n"
            "                           precise (scales the examples per run)          [120]\n"
            "  --out-dir DIR            measuring: keep every trace in DIR  [a temporary dir, removed]\n"
            "  --hostfile FILE          measuring: passed to mpirun                    [none]\n"
            "  --net SPEC               measuring: the network the plan trains (train's --net);\n"
            "                           every layer's time gives this host's rate per layer\n"
            "                           kind, which prices another network (model --net)\n"
            "                           [train's default CNN]\n"
            "  --limit N                measuring: examples per run  [from --budget: 2 pilots]\n"
            "  --accuracy-plan SECONDS  measuring: also run the accuracy plan in about this\n"
            "                           long (examples per run from it: 400/s over 5 runs)  [off]\n"
            "  --accuracy-epochs E      the accuracy plan's schedule: epochs per run; the fit\n"
            "                           predicts for this schedule only                 [10]\n"
            "  --from-traces DIR        directory of traces: *.trace.jsonl, *.json, *.json.gz\n"
            "  --latency S              --from-traces: a message's latency where the traces\n"
            "                           cannot separate it from its bytes (fewer than 3\n"
            "                           exchange shapes: one K = 2 run)            [50us]\n"
            "  --bandwidth RATE         --from-traces: the link's rate likewise (10gbit)\n"
            "                           [fitted from the exchanges, latency stated]\n"
            "  --without TERMS          --from-traces: hold these terms at 0 in the fit and in\n"
            "                           every refit of the validation (an ablation, e.g.\n"
            "                           master_wake,oversub_compute: experiments/ablation)\n"
            "  --strict                 exit 1 when the verdict (printed last, and in\n"
            "                           calibration.json) is poor; the file is written\n"
            "  --out FILE               where to write the calibration     [calibration.json]\n"
            "  --ernest FILE.csv        Ernest's training data instead of traces\n"
            "  --predict-machines LIST  machines to predict for (Ernest)  [4,8,16,32,64]\n"
            "  --fraction F             input fraction to predict for     [1]\n"
            "  --help                   this text\n"
            "\n" IMPORT_FLAGS_USAGE);
    fprintf(out, "\n" CALIB_TABLE_USAGE);
}

/* ---------------------------------------------------------------------------------- */
/* Ernest */

static int run_ernest(const char *path, const int *machines, int n_machines, double fraction) {
    char err[512];
    ernest_data *d = ernest_read_csv(path, err, sizeof err);
    if (!d) {
        args_error("%s", err);
        return 1;
    }
    ernest_model m;
    if (ernest_fit(d->points, d->n, &m, err, sizeof err)) {
        args_error("%s: %s", path, err);
        ernest_data_free(d);
        return 1;
    }
    static const char *const meaning[ERNEST_N_THETA] = { "constant", "x fraction/machines", "x machines",
                                                         "x ln(machines)" };
    printf("Ernest's model (amplab/ernest predictor.py), NNLS fit to %ld points of %s:\n", d->n, path);
    printf("  time_s = theta0 + theta1*fraction/machines + theta2*machines + theta3*ln(machines)\n");
    for (int j = 0; j < ERNEST_N_THETA; j++)
        printf("  theta%d = %-12.6g +- %-10.3g %s%s\n", j, m.theta[j], m.se[j], meaning[j],
               m.at_bound[j] ? "  (at the bound 0: zero-width interval)" : "");
    printf("  residual rms %.4g s over %d degrees of freedom\n", sqrt(m.rss / (double)d->n), m.dof);
    printf("Prediction ratios (predicted/measured) on the training points:");
    for (long i = 0; i < d->n; i++) {
        const ernest_point *p = &d->points[i];
        if (p->time_s > 0)
            printf(" %.1f%%", 100.0 * ernest_predict(&m, p->machines, p->fraction) / p->time_s);
    }
    printf("\n\nmachines,input_fraction,predicted_s\n");
    for (int i = 0; i < n_machines; i++)
        printf("%d,%g,%.6g\n", machines[i], fraction, ernest_predict(&m, machines[i], fraction));
    ernest_data_free(d);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Traces */

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool is_trace_name(const char *name) {
    static const char suffix[] = ".trace.jsonl";
    size_t n = strlen(name), k = sizeof suffix - 1;
    return n > k && strcmp(name + n - k, suffix) == 0;
}

/* The *.trace.jsonl paths in dir, sorted; NULL with the reason printed. */
static char **list_traces(const char *dir, int *n) {
    DIR *d = opendir(dir);
    if (!d) {
        args_error("%s: cannot open directory: %s", dir, strerror(errno));
        return NULL;
    }
    char **paths = calloc(MAX_TRACES, sizeof *paths);
    const char *why = paths ? NULL : "out of memory";
    *n = 0;
    struct dirent *ent;
    while (!why && (ent = readdir(d)) != NULL) {
        if (!is_trace_name(ent->d_name))
            continue;
        size_t len = strlen(dir) + strlen(ent->d_name) + 2;
        if (*n == MAX_TRACES)
            why = "too many trace files";
        else if (!(paths[*n] = malloc(len)))
            why = "out of memory";
        else
            snprintf(paths[(*n)++], len, "%s/%s", dir, ent->d_name);
    }
    closedir(d);
    if (why) {
        args_error("%s: %s", dir, why);
        for (int i = 0; paths && i < *n; i++)
            free(paths[i]);
        free(paths);
        return NULL;
    }
    qsort(paths, (size_t)*n, sizeof *paths, by_name);
    return paths;
}

static void print_param(const fit_result *r, const char *name, double value, double se, const char *unit) {
    bool noted = false;
    for (int i = 0; i < r->fit.n_notes; i++)
        noted |= strcmp(r->fit.notes[i].param, name) == 0;
    printf("  %-16s %-12.6g +- %-10.3g %s%s\n", name, value, se, unit,
           noted ? "  (see the note below)" : se == 0 && value == 0 ? "  (at the bound 0: zero-width interval)" : "");
}

/* Leave-one-family-out (fit/families.h), one line a family. */
static void print_families(const calibration_fit *fit) {
    if (fit->n_families == 0)
        return;
    printf("leave-one-family-out (every run of a family left out together, the rest refitted): family, runs, "
           "configurations, predicted, median |error|, worst, median signed\n");
    for (int i = 0; i < fit->n_families; i++) {
        const calibration_family *f = &fit->families[i];
        printf("  %-12s %3d %3d %3d", f->name, f->runs, f->configs, f->predicted);
        if (f->predicted > 0)
            printf(" %6.1f%% %6.1f%% %+6.1f%%", 100 * f->median, 100 * f->worst, 100 * f->bias);
        printf("%s%s\n", f->note[0] ? "  " : "", f->note);
    }
}

static void print_fit(const fit_result *r, int n_traces, const char *dir) {
    const costmodel_params *p = &r->cal.params;
    const calibration_stderr *e = &r->cal.stderr_;
    printf("calibration of host %s from %d traces in %s (%d training runs)\n", r->cal.host, n_traces, dir,
           r->fit.n_runs);
    for (int place = 1; place <= PARAM_COUNT; place++) // in the registry's print order
        for (int i = 0; i < PARAM_COUNT; i++)
            if (param_info((param_id)i)->print == place &&
                (param_info((param_id)i)->required >= 0 || param_get(p, (param_id)i) != 0))
                print_param(r, param_info((param_id)i)->name, param_get(p, (param_id)i), param_se_get(e, (param_id)i),
                            param_info((param_id)i)->says);
    printf("  %-16s %.0f bytes, host cores %.0f (from the run headers)\n", "model_bytes", p->model_bytes,
           p->host_cores);
    if (p->test_examples > 0)
        printf("  %-16s %.0f (the test file's: a rank loads min(D, it) beside its D; from the run headers)\n",
               "test_examples", p->test_examples);
    printf("  %-16s %s (from the run headers)\n", "waits", p->waits_block ? "block: a waiting rank sleeps, the cores are "
           "shared evenly" : "poll: a waiting rank keeps its core (ranks pack on the cores)");
    const memory_params *m = &r->cal.memory;
    if (m->known)
        printf("  memory per rank  base %.1f +- %.2f MiB, %.2f +- %.2f MiB per other rank, %.2f +- %.2f MiB per "
               "further thread, all-reduce scratch %.2f +- %.2f (fitted to %ld rank peaks: rms %.2f MiB, worst %.1f%%)\n",
               m->base_bytes / MIB, m->se_base_bytes / MIB, m->peer_bytes / MIB, m->se_peer_bytes / MIB,
               m->thread_bytes / MIB, m->se_thread_bytes / MIB, m->allreduce_scratch, m->se_allreduce_scratch,
               m->points, m->rms_bytes / MIB, 100 * m->worst_rel_error);
    else
        printf("  memory per rank  not fitted: no trace records the ranks' peak memory\n");
    for (int i = 0; i < r->fit.n_notes; i++)
        printf("  note on %s: %s\n", r->fit.notes[i].param, r->fit.notes[i].text);
    printf("regressions:\n");
    for (int i = 0; i < r->fit.n_regressions; i++) {
        const calibration_regression *g = &r->fit.regressions[i];
        /* rms_s is of the step or span times, but for the spreads, whose rms is the spread itself. */
        const bool spread = strcmp(g->name, "cv") == 0 || strcmp(g->name, "run_cv") == 0 ||
                            strcmp(g->name, "run_cv_oversub") == 0 || strcmp(g->name, "rank_cv") == 0;
        printf("  %-16s %6ld points  %6d dof  rms %-10.4g%s  %s", g->name, g->points, g->dof, g->rms_s,
               spread ? "  " : " s", g->method);
        if (g->outliers > 0)
            printf(" (%ld outliers at weight 0)", g->outliers);
        printf("\n");
    }
    if (r->fit.has_ernest)
        printf("Ernest-style fit: T = %.4g + %.4g*work/K + %.4g*log2(K) + %.4g*K  (K = workers*cores)\n",
               r->fit.ernest_theta[0], r->fit.ernest_theta[1], r->fit.ernest_theta[2], r->fit.ernest_theta[3]);
    else
        printf("Ernest-style fit: left out (needs 5 or more training runs)\n");
    printf("leave-one-configuration-out (every repeat of a configuration left out together): run, measured_s, "
           "model_s, ernest_s\n");
    for (int i = 0; i < r->fit.n_runs; i++) {
        const calibration_run *run = &r->runs[i];
        char sync[24];
        job_sync_format(run->config.sync, run->config.every_n, sync, sizeof sync);
        printf("  %dx%d %-8s %-9s b%-4ld %10.4g %10.4g %10.4g%s%s\n", run->config.workers, run->config.cores, sync,
               job_topology_name(run->config.topology), run->config.batch, run->measured_s, run->loo_model_s,
               run->loo_ernest_s, run->loo_note[0] ? "  " : "", run->loo_note);
    }
    printf("leave-one-configuration-out error (%d configurations): model median %.1f%% worst %.1f%% (%d runs); "
           "Ernest median %.1f%% worst %.1f%% (%d runs)\n", r->fit.loo_configs, 100 * r->fit.loo_model_median,
           100 * r->fit.loo_model_worst, r->fit.loo_model_n, 100 * r->fit.loo_ernest_median,
           100 * r->fit.loo_ernest_worst, r->fit.loo_ernest_n);
    print_families(&r->fit);
}

static void print_efficiency(const efficiency_model *m, const char *note) {
    const double *t = m->theta;
    double bn, bse;
    bool infinite;
    efficiency_noise_scale(m, &bn, &bse, &infinite);
    printf("accuracy against epochs (model/efficiency.h), %d runs, %ld points: %ld examples, batch %ld, %d-epoch "
           "schedule\n", m->runs, m->points, m->examples, m->batch, m->epochs);
    printf("  %s; chance %.3g, batch %ld\n", efficiency_form(m->legacy_log_h), m->chance, m->batch);
    for (int j = 0; j < efficiency_n_params(m); j++) {
        printf("  %-16s %-12.6g +- %-10.3g", efficiency_param_name(j), t[j], sqrt(fmax(m->cov[j][j], 0)));
        if (j == EFFICIENCY_LOG_X0)
            printf(" (x0 = %.3g epochs)", exp(t[j]));
        if (j == EFFICIENCY_LOG_HC && m->fitted[j])
            printf(" (H_c = %.3g steps: averaging every %.3g steps pays half of gamma)", exp(t[j]), exp(t[j]) + 1);
        if (j == EFFICIENCY_W && m->fitted[j])
            infinite ? printf(" (B_noise unbounded: a larger batch costs no epochs)")
                     : printf(" (B_noise = %.3g +- %.2g examples)", bn, bse);
        if (j == EFFICIENCY_STALE_COST && m->fitted[j])
            printf(" (each update of mean staleness stretches the epochs by %.3g; the stalest configuration "
                   "fitted: %.3g)", t[j], m->staleness_max);
        if (m->at_bound[j] && j == EFFICIENCY_LOG_HC)
            printf(" (held, H_c = %.3g steps: the runs do not place it inside [1, the longest period])", exp(t[j]));
        else if (m->at_bound[j])
            printf(" (fitted below 0, held at the bound 0: a larger batch cost no epochs)");
        else if (!m->fitted[j] && j == EFFICIENCY_LOG_HC && m->fitted[EFFICIENCY_GAMMA])
            printf(" (not fitted: the local-SGD runs had one averaging period; held at 0: drift saturated)");
        else if (!m->fitted[j] && j == EFFICIENCY_STALE_COST)
            printf(" (not fitted: no async or hogwild run with stale gradients; held at 0)");
        else if (!m->fitted[j])
            printf(" (not fitted: no run varied it; held at 0)");
        printf("\n");
    }
    printf("  residual sd      %.3g%% (whole test set), %.3g%% (subset); %d dof\n", 100 * m->sd_test,
           100 * m->sd_subset, m->dof);
    if (note[0])
        printf("  note: %s\n", note);
}

/* The accuracy fit of the traces into cal (model/efficiency.h): 0 fitted or nothing to fit
 * (said), -1 a fit that failed when need is set (else a note and no efficiency). */
static int fit_efficiency(trace **tr, const char **names, int n, bool need, calibration *cal) {
    char note[512];
    int rc = efficiency_fit_traces(tr, names, n, &cal->params, &cal->efficiency, note, sizeof note);
    if (rc == 0)
        print_efficiency(&cal->efficiency, note);
    else if (rc == 1 && !need)
        printf("accuracy against epochs: not fitted: no trace has an accuracy curve (two points or more after the "
               "first epoch's warm-up)%s%s\n", *note ? "; " : "", note);
    else if (!need)
        printf("accuracy against epochs: not fitted: %s\n", note);
    else if (rc == 1) {
        args_error("accuracy fit: no trace has an accuracy curve (two points or more after the first epoch's "
                   "warm-up)%s%s", *note ? "; " : "", note);
        return -1;
    } else {
        args_error("accuracy fit: %s", note);
        return -1;
    }
    return 0;
}

/* The layer kinds' rates (fit/netfit.h) and what the fit could not separate. */
static void print_network(const calibration_network *net, const char *note) {
    if (!net->known)
        return;
    printf("layer kinds (--net prices another network with them): %s\n", net->spec);
    for (int k = 0; k < NETWORK_KINDS; k++) {
        const netcost_rates *r = &net->rate[k];
        printf("  %-11s %6.3g GFLOP/s  %6.3g GB/s  weights %6.3g GB/s  %7.3g us a layer-step\n",
               network_kind_name((network_kind)k), r->s_per_flop > 0 ? 1e-9 / r->s_per_flop : 0.0,
               r->s_per_byte > 0 ? 1e-9 / r->s_per_byte : 0.0,
               r->s_per_step_byte > 0 ? 1e-9 / r->s_per_step_byte : 0.0, 1e6 * r->s_per_layer_step);
    }
    if (note[0])
        printf("  note on the layer kinds: %s\n", note);
}

/* A directory of traces, read and fitted: what run_from_traces prints and writes, and what
 * the plan judges before it writes (plan_disagreeing). */
typedef struct {
    tracefile_set set;
    trace **tr;
    const char **names;
    fit_result r;                 /* r.cal.network: the layer kinds' rates, when the traces time them */
    char network_note[512];       /* what netfit could not separate */
    int rounds;                   /* fitted alone (fit/rounds.h) */
    bool fitted;
} fitted_dir;

static void fitted_dir_release(fitted_dir *d) {
    if (d->fitted)
        fit_result_release(&d->r);
    free(d->tr);
    free(d->names);
    tracefile_set_free(&d->set);
    memset(d, 0, sizeof *d);
}

/* Reads and fits every trace in dir, the rounds' spread and the verdict included: 0, or 1
 * after an error line (d released either way on failure). */
static int fit_dir(const char *dir, const chrome_import_opts *opts, const fit_options *fo, fitted_dir *d) {
    memset(d, 0, sizeof *d);
    int n = 0;
    char **paths = NULL, err[1400];
    if (tracefile_list_dir(dir, &paths, &n, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    int rc = 1;
    if (n == 0) {
        args_error("%s: no *.trace.jsonl files (nor *.json, *.json.gz traces): nothing to calibrate from", dir);
        goto done;
    }
    if (tracefile_open((const char *const *)paths, n, opts, true, &d->set, err, sizeof err)) {
        args_error("%s", err);
        goto done;
    }
    d->tr = calloc((size_t)d->set.n, sizeof *d->tr);
    d->names = calloc((size_t)d->set.n, sizeof *d->names);
    if (!d->tr || !d->names) {
        args_error("out of memory");
        goto done;
    }
    for (int i = 0; i < d->set.n; i++) {
        d->tr[i] = d->set.runs[i].t;
        d->names[i] = d->set.runs[i].name;
    }
    if (fit_traces_with(d->tr, d->names, d->set.n, fo, &d->r, err, sizeof err)) {
        args_error("%s: %s", dir, err);
        goto done;
    }
    d->fitted = true;
    d->rounds = fit_rounds_widen(d->tr, d->names, d->set.n, fo, &d->r);
    if (d->rounds < 0) {
        args_error("out of memory");
        goto done;
    }
    verdict_judge(&d->r.cal, &d->r.fit);
    if (netfit_traces(d->tr, d->set.n, &d->r.cal.network, d->network_note, sizeof d->network_note) < 0)
        fprintf(stderr, "speedup calibrate: the layer kinds' rates: %s (another network cannot be priced)\n",
                d->network_note);
    rc = 0;
done:
    tracefile_paths_free(paths, n);
    if (rc)
        fitted_dir_release(d);
    return rc;
}

/* Prints d's fit and writes it to out_path: 0, or 1 after an error line (or a poor verdict
 * with strict). */
static int write_fitted(fitted_dir *d, const char *dir, const char *out_path, bool need_efficiency, bool strict) {
    int rc = 1;
    char err[1400];
    fit_result *r = &d->r;
    print_fit(r, d->set.n, dir);
    if (d->rounds >= 2)
        printf("rounds: %d fitted alone; where their spread is wider than the pooled fit's, it is the standard error "
               "(the notes say which)\n", d->rounds);
    print_network(&r->cal.network, d->network_note);
    if (fit_efficiency(d->tr, d->names, d->set.n, need_efficiency, &r->cal) == 0) {
        printf("verdict: %s%s\n", r->fit.verdict_poor ? "poor: " : "", r->fit.verdict);
        if (calibration_write(out_path, &r->cal, &r->fit, err, sizeof err))
            args_error("%s", err);
        else {
            printf("wrote %s\n", out_path);
            rc = r->fit.verdict_poor && strict ? 1 : 0;
            if (rc)
                args_error("calibrate --strict: the verdict is poor (%s written all the same)", out_path);
        }
    }
    return rc;
}

static int run_from_traces(const char *dir, const char *out_path, const chrome_import_opts *opts,
                           const fit_options *fo, bool need_efficiency, bool strict) {
    fitted_dir d;
    if (fit_dir(dir, opts, fo, &d))
        return 1;
    const int rc = write_fitted(&d, dir, out_path, need_efficiency, strict);
    fitted_dir_release(&d);
    return rc;
}

/* ---------------------------------------------------------------------------------- */

/* Removes dir's *.trace.jsonl files and dir itself (the plan's temporary directory). */
static void remove_plan_dir(const char *dir) {
    int n = 0;
    char **paths = list_traces(dir, &n);
    for (int i = 0; paths && i < n; i++) {
        unlink(paths[i]);
        free(paths[i]);
    }
    free(paths);
    rmdir(dir);
}

/* Measures (cli/calib_plan.h) into out_dir or a temporary directory, then fits. */
/* The accuracy plan's budget and schedule (accuracy_s 0: no accuracy plan). */
typedef struct {
    double accuracy_s;
    int epochs;
} accuracy_plan;

/* What the flags said: the source, and each source's settings. */
typedef struct {
    const char *dir, *out_path, *ernest;
    int machines[MAX_MACHINES], n_machines;
    double fraction, budget_s;
    const char *out_dir, *hostfile;
    const char *net;              /* --net: the network the plan trains (NULL: train's default) */
    long limit;
    accuracy_plan acc;
    int measuring_flags, epochs_given;
    bool strict;
    fit_options fo;
} calib_cli;

/* A calibration that knows it is bad (docs/calibration.md): when the plan's fit is poor,
 * the configurations its left-out fit misses by more than the verdict's threshold (worst
 * first, at most PLAN_REMEASURE; the two worst when it is poor for another reason) run
 * once more, before the fit that writes (fit/verdict.h's verdict_remeasure). 1 re-run,
 * 0 nothing to re-run (the fit is not poor), -1 after an error line. */
enum { PLAN_REMEASURE = 4 };
static int plan_remeasure(const char *dir, const fitted_dir *d, const calib_cli *c) {
    job_config missed[PLAN_REMEASURE];
    int last_round[PLAN_REMEASURE];
    const int k = verdict_remeasure(&d->r.cal, &d->r.fit, missed, last_round, PLAN_REMEASURE);
    if (k == 0)
        return 0;
    calib_plan_entry again[PLAN_REMEASURE];
    char sync[PLAN_REMEASURE][24];
    for (int i = 0; i < k; i++) {
        const job_config *cf = &missed[i];
        job_sync_format(cf->sync, cf->every_n, sync[i], sizeof sync[i]);
        again[i] = (calib_plan_entry){ cf->workers, cf->cores, sync[i], job_topology_name(cf->topology), cf->batch,
                                       last_round[i] + 1,
                                       cf->master == JOB_MASTER_DEDICATED ? "dedicated" : NULL };
    }
    fprintf(stderr, "speedup calibrate: the fit is poor (%s): running the %d configuration%s it misses most once more "
            "before writing\n", d->r.fit.verdict, k, k == 1 ? "" : "s");
    char err[1400];
    if (calib_plan_rerun(dir, again, k, missed[0].examples, c->hostfile, c->net, err, sizeof err)) {
        args_error("calibrate: %s", err);
        return -1;
    }
    return 1;
}

/* The plan's traces in dir fitted, measured again where a poor fit misses most, and
 * written: 0, or 1 after an error line. */
static int fit_plan(const char *dir, const calib_cli *c) {
    const chrome_import_opts none = { 0 };
    const fit_options fo = fit_options_default();
    fitted_dir d;
    if (fit_dir(dir, &none, &fo, &d))
        return 1;
    const int again = plan_remeasure(dir, &d, c);
    if (again != 0)
        fitted_dir_release(&d);
    if (again < 0 || (again > 0 && fit_dir(dir, &none, &fo, &d)))
        return 1;
    const int rc = write_fitted(&d, dir, c->out_path, c->acc.accuracy_s > 0, c->strict);
    fitted_dir_release(&d);
    return rc;
}

static int run_plan(const calib_cli *c) {
    const accuracy_plan *acc = &c->acc;
    const char *out_dir = c->out_dir, *hostfile = c->hostfile, *out_path = c->out_path;
    char tmp[] = "/tmp/speedup-calibrate-XXXXXX", err[1400];
    const char *dir = out_dir;
    if (!dir) {
        if (!mkdtemp(tmp)) {
            args_error("calibrate: cannot create a temporary directory: %s", strerror(errno));
            return 1;
        }
        dir = tmp;
    } else if (mkdir(dir, 0755) && errno != EEXIST) {
        args_error("%s: cannot create directory: %s", dir, strerror(errno));
        return 1;
    }
    // Where the traces and calibration.json go must take them: said now, not after the plan.
    char probe[4096 + 32];
    snprintf(probe, sizeof probe, "%.4096s/commbench.trace.jsonl", dir);
    if (atomicfile_probe(probe, err, sizeof err) || atomicfile_probe(out_path, err, sizeof err)) {
        args_error("calibrate: %s", err);
        if (!out_dir)
            rmdir(dir);
        return 1;
    }
    int rc;
    if (calib_plan_run(dir, c->budget_s, c->limit, hostfile, c->net, err, sizeof err) ||
        (acc->accuracy_s > 0 && calib_accuracy_plan_run(dir, acc->accuracy_s, acc->epochs, hostfile, c->net, err, sizeof err))) {
        args_error("calibrate: %s", err);
        rc = 1;
    } else {
        rc = fit_plan(dir, c);
    }
    if (!out_dir)
        remove_plan_dir(dir);
    return rc;
}

enum { OPT_FROM_TRACES = 1, OPT_OUT, OPT_ERNEST, OPT_PREDICT, OPT_FRACTION, OPT_BUDGET, OPT_OUT_DIR, OPT_HOSTFILE,
       OPT_LIMIT, OPT_ACCURACY_PLAN, OPT_ACCURACY_EPOCHS, OPT_BANDWIDTH, OPT_WITHOUT, OPT_STRICT, OPT_HELP };

/* --net for the plan: a network train can build on its default data (Fashion-MNIST,
 * 28x28x1, 10 classes), said now rather than after the plan's first run fails. */
static int check_plan_net(const char *spec) {
    char err[512];
    net *planned = spec ? net_plan(spec, 28, 28, 1, 10, err, sizeof err) : NULL;
    if (!spec || planned) {
        net_free(planned);
        return 0;
    }
    args_error("calibrate --net %s: %s", spec, err);
    return 2;
}

/* The flags that do not go together: 0, or 2 after a usage message. */
static int check_flag_combinations(const char *dir, const char *ernest, int measuring_flags, int epochs_without_plan,
                                   int import_given) {
    if (dir && ernest) {
        args_error("calibrate: --from-traces and --ernest are two different fits: give one");
        return 2;
    }
    if ((dir || ernest) && measuring_flags) {
        args_error("calibrate: --budget, --out-dir, --hostfile, --limit and --accuracy-plan are for measuring; --%s "
                   "fits what is given", dir ? "from-traces" : "ernest");
        return 2;
    }
    if (epochs_without_plan) {
        args_error("calibrate: --accuracy-epochs is the accuracy plan's schedule: it goes with --accuracy-plan SECONDS");
        return 2;
    }
    if (import_given && !dir) {
        args_error("calibrate: --batch, --workers, --phase-map ... describe imported traces: they go with --from-traces");
        return 2;
    }
    return 0;
}

/* --from-table: its own flags and the import flags' --model-bytes, nothing else. */
static int from_table(const calib_table_flags *tab, const import_flags *imp, bool other_source, int import_given,
                      const char *out_path, bool strict) {
    if (!tab->path) {
        args_error("calibrate: --topology, --allreduce, --ps-placement, --latency, --intra-latency and --row-noise "
                   "describe a table: they go with --from-table FILE.csv");
        return 2;
    }
    if (other_source) {
        args_error("calibrate: --from-table fits a table: --from-traces, --ernest and the measuring flags are other "
                   "sources");
        return 2;
    }
    if (import_given && !(imp->opts.model_bytes > 0 && import_given == 1)) {
        args_error("calibrate: of the import flags only --model-bytes goes with --from-table");
        return 2;
    }
    if (!(imp->opts.model_bytes > 0)) {
        args_error("calibrate: --from-table needs --model-bytes SIZE: the bytes each worker exchanges a step "
                   "(4 x the parameters in fp32: 102MB for ResNet-50)");
        return 2;
    }
    return calib_table_run(tab, (double)imp->opts.model_bytes, out_path, strict);
}

/* One of calibrate's own flags: 0 taken, 2 a bad value (printed), -1 --help (printed), 1
 * not one of them. */
/* --without NAME[,NAME...]: the terms held at 0 (fit_options.without). 0, or -1 after an
 * error line naming the terms that can be. */
static int parse_without(const char *arg, uint64_t *without) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", arg);
    if (strspn(buf, ",") == strlen(buf)) {
        args_error("--without: expected TERM[,TERM...], a term of calibration.json's params (got '%s')", arg);
        return -1;
    }
    for (char *save = NULL, *name = strtok_r(buf, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        const int id = param_by_name(name);
        if (fit_without_allowed(id)) {
            *without |= UINT64_C(1) << id;
            continue;
        }
        char allowed[1024] = "";
        for (int k = 0; k < PARAM_COUNT; k++)
            if (fit_without_allowed(k))
                snprintf(allowed + strlen(allowed), sizeof allowed - strlen(allowed), "%s%s", allowed[0] ? "," : "",
                         param_info((param_id)k)->name);
        args_error("--without: '%s' is not a term the fit can hold at 0 (one of: %s)", name, allowed);
        return -1;
    }
    return 0;
}

static int handle_own(calib_cli *c, int code, const char *arg) {
    switch (code) {
    case OPT_FROM_TRACES: c->dir = arg; return 0;
    case OPT_OUT: c->out_path = arg; return 0;
    case OPT_ERNEST: c->ernest = arg; return 0;
    case OPT_PREDICT:
        return args_int_list("--predict-machines", arg, 1, 1000000, c->machines, MAX_MACHINES, &c->n_machines) ? 2 : 0;
    case OPT_FRACTION: return args_double("--fraction", arg, 1e-12, 1e12, &c->fraction) ? 2 : 0;
    case OPT_BUDGET:
        c->measuring_flags = 1;
        return args_double("--budget", arg, 1, 1e6, &c->budget_s) ? 2 : 0;
    case OPT_OUT_DIR: c->out_dir = arg; c->measuring_flags = 1; return 0;
    case OPT_HOSTFILE: c->hostfile = arg; c->measuring_flags = 1; return 0;
    case OPT_LIMIT:
        c->measuring_flags = 1;
        return args_long("--limit", arg, 64, 60000, &c->limit) ? 2 : 0;
    case OPT_ACCURACY_PLAN:
        c->measuring_flags = 1;
        return args_double("--accuracy-plan", arg, 1, 1e7, &c->acc.accuracy_s) ? 2 : 0;
    case OPT_ACCURACY_EPOCHS:
        c->epochs_given = 1;
        return args_int("--accuracy-epochs", arg, 1, 1000, &c->acc.epochs) ? 2 : 0;
    case OPT_BANDWIDTH: return args_bandwidth("--bandwidth", arg, &c->fo.bandwidth_bytes_per_s) ? 2 : 0;
    case OPT_WITHOUT: return parse_without(arg, &c->fo.without) ? 2 : 0;
    case OPT_STRICT: c->strict = true; return 0;
    case OPT_HELP: usage(stdout); return -1;
    default: return 1;
    }
}

int cmd_calibrate(int argc, char **argv) {
    static const struct option options[] = {
        { "from-traces", required_argument, 0, OPT_FROM_TRACES },
        { "out", required_argument, 0, OPT_OUT },
        { "ernest", required_argument, 0, OPT_ERNEST },
        { "predict-machines", required_argument, 0, OPT_PREDICT },
        { "fraction", required_argument, 0, OPT_FRACTION },
        { "budget", required_argument, 0, OPT_BUDGET },
        { "out-dir", required_argument, 0, OPT_OUT_DIR },
        { "hostfile", required_argument, 0, OPT_HOSTFILE },
        { "limit", required_argument, 0, OPT_LIMIT },
        { "accuracy-plan", required_argument, 0, OPT_ACCURACY_PLAN },
        { "accuracy-epochs", required_argument, 0, OPT_ACCURACY_EPOCHS },
        { "bandwidth", required_argument, 0, OPT_BANDWIDTH },
        { "without", required_argument, 0, OPT_WITHOUT },
        { "strict", no_argument, 0, OPT_STRICT },
        { "help", no_argument, 0, OPT_HELP },
        IMPORT_FLAGS_LONG_OPTIONS,
        CALIB_TABLE_LONG_OPTIONS,
        { 0, 0, 0, 0 },
    };
    calib_cli c = { .out_path = "calibration.json", .machines = { 4, 8, 16, 32, 64 }, .n_machines = 5,
                    .fraction = 1.0, .budget_s = CALIB_PLAN_DEFAULT_BUDGET_S,
                    .acc = { 0, CALIB_ACCURACY_DEFAULT_EPOCHS }, .fo = fit_options_default() };
    int code, import_given = 0;
    import_flags imp;
    import_flags_init(&imp);
    calib_table_flags tab;
    calib_table_init(&tab);
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        int handled = calib_table_handle(&tab, code, optarg);
        if (handled == 1 && (handled = import_flags_handle(&imp, code, optarg)) == 0)
            import_given += code != IMPORT_OPT_PRINT_MAP && code != IMPORT_OPT_NET;
        if (code == IMPORT_OPT_NET) /* imported traces' name, or the network the plan trains */
            c.net = optarg;
        if (handled == 1)
            handled = handle_own(&c, code, optarg);
        if (handled == 1)
            return args_unknown_flag("calibrate", argv[optind - 1]);
        if (handled != 0)
            return handled < 0 && code == OPT_HELP ? 0 : 2;
    }
    if (optind < argc)
        return args_unexpected("calibrate", argv[optind]);
    if (tab.path || tab.given)
        return from_table(&tab, &imp, c.dir || c.ernest || c.measuring_flags, import_given, c.out_path, c.strict);
    if ((tab.latency_given || isfinite(c.fo.bandwidth_bytes_per_s)) && !c.dir) {
        args_error("calibrate: --latency and --bandwidth state what a few traces cannot tell: they go with "
                   "--from-traces DIR (--latency also with --from-table)");
        return 2;
    }
    if (tab.latency_given)
        c.fo.latency_s = tab.opts.net_latency_s; /* --from-traces: where the spans cannot tell it */
    if (c.fo.without && !c.dir) {
        args_error("calibrate: --without holds terms out of a fit of traces: it goes with --from-traces DIR");
        return 2;
    }
    if (check_flag_combinations(c.dir, c.ernest, c.measuring_flags, c.epochs_given && c.acc.accuracy_s <= 0,
                                import_given))
        return 2;
    if (!c.dir && !c.ernest && !imp.print_map)
        return check_plan_net(c.net) ? 2 : run_plan(&c);
    if (c.ernest)
        return run_ernest(c.ernest, c.machines, c.n_machines, c.fraction);
    int rc = import_flags_finish(&imp);
    if (rc == 0)
        rc = run_from_traces(c.dir, c.out_path, &imp.opts, &c.fo, false, c.strict);
    import_flags_release(&imp);
    return rc == 3 ? 0 : rc;
}
