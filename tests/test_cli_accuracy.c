/* Time to accuracy end to end through the real binary: `speedup calibrate --from-traces`
 * on synthetic traces whose accuracy follows a known curve (written out here by hand,
 * noise from a fixed GSL RNG) fits model/efficiency.h's parameters back; `speedup
 * model|simulate|advise --target-accuracy` predict from it; `speedup plot` draws the
 * accuracy figure; and every way of asking for what cannot be answered is refused with
 * one clear line. */
#define _POSIX_C_SOURCE 200809L
#include "model/calibration.h"
#include "tests/clirun.h"
#include "tests/synth.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The truth: plateau 0.9, x0 0.4 epochs, power 1.3, w 0.35, gamma 0.08; chance 0.1 (the
 * synthetic network "cnn" has no fcN layer). */
static const double A = 0.9, X0 = 0.4, ALPHA = 1.3, W = 0.35, GAMMA = 0.3, HC = 8;
enum { D = 1024, B = 16, E = 6 };

static double truth_curve(double epochs, const void *ctx) {
    const double s = *(const double *)ctx;
    return A - (A - 0.1) / (1 + pow(epochs / (s * X0), ALPHA));
}

static synth_truth timing_truth(void) {
    synth_truth t = { .times = synth_plain_times, .startup_noise_s = 0.01, .comm_noise = 0.03 };
    t.p = (costmodel_params){ .c0_s = 0.003, .c1_s = 0.0005, .sigma = 0.15, .model_bytes = 1819688, .w0_s = 0.4,
                              .w1_s = 0.12, .cv = 0.05, .host_cores = 2 };
    t.p.link[JOB_TOPO_PS] = (costmodel_link){ 3e-4, 1e-8 };
    t.p.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ 1.5e-4, 6e-9 };
    return t;
}

static void put(const char *dir, const char *name, trace *t) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
}

static job_config cfg(int k, int t, const char *sync, long d, long b, int e) {
    job_config c = { .workers = k, .cores = t, .topology = JOB_TOPO_ALLREDUCE, .examples = d, .batch = b,
                           .epochs = e };
    job_sync_parse(sync, &c.sync, &c.every_n);
    return c;
}

/* A calibration plan's traces (one epoch, no accuracy): 1x1, 1x2, 2x1 batch and epoch, a
 * communication benchmark. */
static void timing_traces(const char *dir, gsl_rng *rng) {
    synth_truth truth = timing_truth();
    const char *syncs[] = { "batch", "epoch" };
    const int shapes[3][2] = { { 1, 1 }, { 1, 2 }, { 2, 1 } };
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) {
            job_config c = cfg(shapes[k][0], shapes[k][1], syncs[s], 512, 64, 1);
            char name[64];
            snprintf(name, sizeof name, "%dx%d-%s.trace.jsonl", shapes[k][0], shapes[k][1], syncs[s]);
            put(dir, name, synth_run(&truth, &c, "h", "cnn", rng));
        }
    static const long sizes[] = { 8, 65536, 1819688 };
    put(dir, "commbench-2.trace.jsonl", synth_commbench(&truth, 2, sizes, 3, 4, "h", rng));
}

/* The accuracy runs (D = 1024, B = 16, 6 epochs), each slowed as the form says, worked out
 * by hand: s = (1 + w·(G/16 − 1))·(1 + γ·(1 − 1/K)·(H − 1)/(H − 1 + H_c)), γ 0.3, H_c 8
 *   1x1 batch        G 16, H 1                        1
 *   2x1 every:2      G 32, H 2                        1.35·(1 + 0.15·1/9)   = 1.3725
 *   2x1 batch, bpw   G 32, H 1                        1.35
 *   2x1 epoch        G 32, H 1024/32 = 32             1.35·(1 + 0.15·31/39) = 1.5109615
 *   4x1 every:2      G 64, H 2                        2.05·(1 + 0.225·1/9)  = 2.10125 */
static void accuracy_traces(const char *dir, gsl_rng *rng) {
    synth_truth truth = timing_truth();
    const struct { const char *name, *sync; int k; bool bpw; double s; } runs[] = {
        { "acc-1x1-batch", "batch", 1, false, 1 },
        { "acc-2x1-every2", "every:2", 2, false, 1.35 * (1 + 0.15 / 9) },
        { "acc-2x1-batch-bpw", "batch", 2, true, 1.35 },
        { "acc-2x1-epoch", "epoch", 2, false, 1.35 * (1 + 0.15 * 31 / 39) },
        { "acc-4x1-every2", "every:2", 4, false, 2.05 * (1 + 0.225 / 9) },
    };
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        job_config c = cfg(runs[i].k, 1, runs[i].sync, D, B, E);
        c.batch_per_worker = runs[i].bpw;
        trace *t = synth_run(&truth, &c, "h", "cnn", rng);
        synth_add_accuracy(t, truth_curve, &runs[i].s, 8, 0.004, 0.012, rng);
        char name[64];
        snprintf(name, sizeof name, "%s.trace.jsonl", runs[i].name);
        put(dir, name, t);
    }
}

static char *dir_with(bool accuracy) {
    char *dir = clirun_tmpdir();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 23);
    timing_traces(dir, rng);
    if (accuracy)
        accuracy_traces(dir, rng);
    gsl_rng_free(rng);
    return dir;
}

static void rm_dir(char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

/* DIR/calibration.json from DIR's traces; the calibrate output is checked to succeed. */
static void calibrate(const char *dir) {
    char args[1200];
    snprintf(args, sizeof args, "calibrate --from-traces '%s' --out '%s/calibration.json'", dir, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "calibrate failed: %s", r.err);
    cr_assert(strstr(r.out, "accuracy against epochs (model/efficiency.h), 5 runs"), "%s", r.out);
    clirun_free(&r);
}

Test(cli_accuracy, calibrate_fits_the_curve_the_traces_follow) {
    char *dir = dir_with(true);
    calibrate(dir);
    char path[600], err[512];
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    calibration cal;
    cr_assert_eq(calibration_read(path, &cal, err, sizeof err), 0, "%s", err);
    const efficiency_model *m = &cal.efficiency;
    cr_assert(m->known);
    cr_assert(m->examples == D && m->batch == B && m->epochs == E, "workload %ld %ld %d", m->examples, m->batch,
              m->epochs);
    /* every point after the first epoch (the warm-up, left out): 6 test + 5·8 subset a run */
    cr_assert_eq(m->points, 5 * (E + (E - 1) * 8), "points %ld", m->points);
    /* No async run: what staleness costs is not fitted (held at 0). */
    cr_assert(!m->fitted[EFFICIENCY_STALE_COST] && m->theta[EFFICIENCY_STALE_COST] == 0);
    const double truth[EFFICIENCY_STALE_COST] = { A, log(X0), ALPHA, W, GAMMA, log(HC) };
    for (int j = 0; j < EFFICIENCY_STALE_COST; j++) {
        const double se = sqrt(m->cov[j][j]);
        cr_assert(m->fitted[j] && se > 0, "parameter %d", j);
        cr_assert(fabs(m->theta[j] - truth[j]) < 3 * se, "parameter %d: %g, truth %g, se %g", j, m->theta[j],
                  truth[j], se);
    }
    rm_dir(dir);
}

/* `speedup ARGS` succeeds and prints needle (and, with finite, no "nan" and no "inf"). */
static void assert_prints(const char *args, const char *needle, bool finite) {
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "speedup %s: %s", args, r.err);
    cr_assert(clirun_says(r.out, needle), "speedup %s printed no '%s':\n%s", args, needle, r.out);
    cr_assert(!finite || (!strstr(r.out, "nan") && !strstr(r.out, "inf")), "%s", r.out);
    clirun_free(&r);
}

/* The rows `speedup ARGS --csv` printed (read back by the predictions CSV reader). */
static prediction_row *csv_rows(const char *args, int *n) {
    char with_csv[1500], err[512];
    snprintf(with_csv, sizeof with_csv, "%s --csv", args);
    clirun_result r = clirun(with_csv);
    cr_assert_eq(r.status, 0, "speedup %s: %s", with_csv, r.err);
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "rows.csv", r.out);
    prediction_row *rows = NULL;
    cr_assert_eq(predictions_read_csv(path, &rows, n, err, sizeof err), 0, "%s", err);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
    clirun_free(&r);
    return rows;
}

Test(cli_accuracy, model_predicts_epochs_and_time_to_the_target_with_intervals) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    /* 1x1 batch to 80%: x0·((0.8 − 0.1)/(0.9 − 0.8))^(1/1.3) = 0.4·7^0.7692 = 1.7870 epochs;
     * 2x1 every:2: 1.3725 times that = 2.4527. Each inside its 95% interval of one run. */
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.8 --workers 1,2 --cores 1 "
             "--sync batch,every:2 --topology allreduce", dir);
    int n = 0;
    prediction_row *rows = csv_rows(args, &n);
    cr_assert_eq(n, 4);
    const double truth_1 = 0.4 * pow(7, 1 / 1.3), truth_2 = 1.3725 * truth_1;
    for (int i = 0; i < n; i++) {
        const efficiency_prediction *t = &rows[i].tta;
        cr_assert(rows[i].has_tta && t->reach == EFFICIENCY_REACHED && t->lo_reached && t->hi_reached);
        const double want = strcmp(rows[i].sync, "every:2") == 0 && rows[i].workers == 2 ? truth_2 : truth_1;
        cr_assert(t->epochs_lo <= want && want <= t->epochs_hi, "%dx1 %s: truth %g outside [%g, %g]", rows[i].workers,
                  rows[i].sync, want, t->epochs_lo, t->epochs_hi);
        /* time = W + e·(T − W)/E, from the same row's cost-model time */
        cr_assert_float_eq(t->time_s, rows[i].startup_s + t->epochs * (rows[i].time_s - rows[i].startup_s) / E, 1e-6);
        cr_assert(t->time_lo_s < t->time_s && t->time_s < t->time_hi_s);
    }
    free(rows);
    assert_prints(args, "time to 80.0% test accuracy", true);
    rm_dir(dir);
}

Test(cli_accuracy, a_target_above_the_plateau_is_not_reached_and_says_so) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.97 --workers 1 --cores 1 "
             "--sync batch --topology allreduce", dir);
    assert_prints(args, "not reached: 97.0% is above the fitted plateau", true);
    /* target, reach, then epochs and times empty, and the accuracy at the schedule's end */
    strcat(args, " --csv");
    assert_prints(args, ",0.97,above_plateau,,,,,,,0.8", true);
    rm_dir(dir);
}

Test(cli_accuracy, advise_ranks_by_time_to_accuracy_and_simulate_carries_it) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    snprintf(args, sizeof args, "advise --calib '%s/calibration.json' --target-accuracy 0.8 --cores 4 --sync "
             "batch,every:2 --topology allreduce", dir);
    int n = 0;
    prediction_row *rows = csv_rows(args, &n);
    cr_assert(n >= 4);
    for (int i = 1; i < n; i++)
        if (rows[i].tta.reach == EFFICIENCY_REACHED)
            cr_assert(rows[i - 1].tta.time_s <= rows[i].tta.time_s, "row %d ranked before a faster one", i);
    free(rows);
    snprintf(args, sizeof args, "simulate --calib '%s/calibration.json' --target-accuracy 0.8 --workers 2 --cores 1 "
             "--sync every:2 --topology allreduce --reps 5", dir);
    rows = csv_rows(args, &n);
    cr_assert(n == 1 && rows[0].has_tta && rows[0].tta.reach == EFFICIENCY_REACHED);
    free(rows);
    rm_dir(dir);
}

Test(cli_accuracy, plot_draws_accuracy_against_time) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    snprintf(args, sizeof args, "plot --calib '%s/calibration.json' --traces '%s' --out '%s/fig' --only accuracy", dir,
             dir, dir);
    assert_prints(args, "figures written to", false);
    char fig[600];
    snprintf(fig, sizeof fig, "%s/fig", dir);
    clirun_assert_png(fig, "accuracy", 1000, 640);
    rm_dir(dir);
}

Test(cli_accuracy, what_cannot_be_answered_is_refused_naming_why) {
    char *dir = dir_with(false), args[1400];
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "calibrate --from-traces '%s' --out '%s/calibration.json'", dir, dir);
    assert_prints(cmd, "accuracy against epochs: not fitted: no trace has an accuracy curve", false);
    clirun_assert_refused("model --target-accuracy 0.9", 2, "--target-accuracy needs --calib FILE with an accuracy fit");
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.9", dir);
    clirun_assert_refused(args, 2, "has no accuracy fit");
    clirun_assert_refused("model --target-accuracy 1.5", 2, "--target-accuracy: expected a number in [0, 1]");
    clirun_assert_refused("model --target-accuracy 0", 2, "strictly between 0 and 1");
    clirun_assert_refused("simulate --target-accuracy ninety", 2, "--target-accuracy: expected a number");
    clirun_assert_refused("calibrate --accuracy-epochs 5", 2, "it goes with --accuracy-plan SECONDS");
    snprintf(args, sizeof args, "calibrate --from-traces '%s' --accuracy-plan 60", dir);
    clirun_assert_refused(args, 2, "are for measuring");
    rm_dir(dir);
    dir = dir_with(true);
    calibrate(dir);
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.9 --epochs 3", dir);
    clirun_assert_refused(args, 2, "the efficiency fit is for a 6-epoch schedule");
    snprintf(args, sizeof args, "advise --calib '%s/calibration.json' --target-accuracy 0.9 --cores 2 --examples 60000",
             dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 2, "%s", r.out);
    cr_assert(strstr(r.err, "measured on 1024 examples, not 60000"), "%s", r.err);
    clirun_free(&r);
    rm_dir(dir);
}

/* K async workers to 80% (the link given: ps was never measured here): `model` refuses
 * with status and why, `advise` over K cores skips the K-worker split with why. */
static void assert_no_async_tta(const char *dir, int k, int status, const char *why) {
    char args[1400], line[800];
    const char *link = "--latency 3e-4 --bandwidth 1e8";
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.8 --workers %d --cores 1 "
             "--sync async --topology ps %s", dir, k, link);
    clirun_assert_refused(args, status, why);
    snprintf(args, sizeof args, "advise --calib '%s/calibration.json' --target-accuracy 0.8 --cores %d --sync "
             "batch,async --topology ps,allreduce %s", dir, k, link);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    snprintf(line, sizeof line, "skipped %d workers x 1 core, async sync, ps: no time to accuracy: %s", k, why);
    cr_assert(clirun_says(r.out, line), "no '%s' in:\n%s", line, r.out);
    clirun_free(&r);
}

/* Async rows with a target. One async worker pulling every step is plain SGD: the
 * reference's epochs to 80% (the 1x1 batch row's, worked out above: 1.7856), the closed
 * form's staleness K·(N + 1)/2 − 1 = 0; its row carries both the staleness and the nine
 * time-to-accuracy columns, and the CSV reads back as written. Two async workers train on
 * stale gradients, which this fit (no async run) did not measure: model refuses them,
 * advise skips them with a note. (ps was never measured here: its link is given.) */
Test(cli_accuracy, async_rows_carry_staleness_and_time_to_accuracy_or_are_refused) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    const char *link = "--latency 3e-4 --bandwidth 1e8";
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.8 --workers 1 --cores 1 "
             "--sync batch,async --topology ps %s", dir, link);
    int n = 0;
    prediction_row *rows = csv_rows(args, &n);
    cr_assert_eq(n, 2);
    const double truth_1 = 0.4 * pow(7, 1 / 1.3);
    for (int i = 0; i < n; i++) {
        const bool async = strcmp(rows[i].sync, "async") == 0;
        cr_assert(rows[i].has_tta && rows[i].tta.reach == EFFICIENCY_REACHED, "%s", rows[i].sync);
        cr_assert(rows[i].tta.epochs_lo <= truth_1 && truth_1 <= rows[i].tta.epochs_hi, "%s: [%g, %g]", rows[i].sync,
                  rows[i].tta.epochs_lo, rows[i].tta.epochs_hi);
        cr_assert_eq(rows[i].has_staleness, async, "%s", rows[i].sync);
        cr_assert_eq(rows[i].staleness_median, 0.0);
    }
    cr_assert_float_eq(rows[0].tta.epochs, rows[1].tta.epochs, 1e-9);
    free(rows);
    assert_no_async_tta(dir, 2, 2, "stale gradients (async or hogwild with more than one worker or a pull period): "
                        "the efficiency fit had no such run, so what staleness costs in epochs (stale_cost) was not "
                        "fitted");
    rm_dir(dir);
}

/* calibration.json's efficiency with what staleness costs set by hand: β = stale_cost,
 * fitted, measured up to staleness_max. */
static void set_stale_cost(const char *dir, double beta, double tau_max) {
    char path[600];
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    json_error_t jerr;
    json_t *root = json_load_file(path, 0, &jerr);
    cr_assert_not_null(root, "%s", jerr.text);
    json_t *eff = json_object_get(root, "efficiency");
    json_t *entry = json_object_get(json_object_get(eff, "params"), "stale_cost");
    cr_assert_not_null(entry, "calibration.json has no efficiency.params.stale_cost");
    json_object_set_new(entry, "value", json_real(beta));
    json_object_set_new(entry, "fitted", json_true());
    json_object_set_new(json_object_get(eff, "fit"), "staleness_max", json_real(tau_max));
    cr_assert_eq(json_dump_file(root, path, JSON_INDENT(1)), 0);
    json_decref(root);
}

/* The staleness the cost model and the simulator predict reaches the accuracy fit. With
 * β = 0.2 measured up to τ = 1.2: two async workers pulling every step have the closed
 * form's τ = 2·(1 + 1)/2 − 1 = 1, so they need 1 + 0.2·1 = 1.2 times the epochs of one
 * worker (the same fit, the same draws: exactly); the simulator's τ is about 1 (its
 * queue), so about 1.2 times too. Four workers (τ = 3) are beyond what was measured:
 * model refuses, advise skips, naming the staleness. */
Test(cli_accuracy, the_predicted_staleness_stretches_the_epochs_to_the_target) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    set_stale_cost(dir, 0.2, 1.2);
    const char *link = "--latency 3e-4 --bandwidth 1e8";
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --target-accuracy 0.8 --workers 1,2 --cores 1 "
             "--sync async --topology ps %s", dir, link);
    int n = 0;
    prediction_row *rows = csv_rows(args, &n);
    cr_assert_eq(n, 2);
    cr_assert(rows[0].workers == 1 && rows[1].workers == 2);
    cr_assert_float_eq(rows[1].staleness_median, 1.0, 1e-12);
    /* exactly 1.2, but for the CSV's six digits */
    cr_assert_float_eq(rows[1].tta.epochs / rows[0].tta.epochs, 1.2, 1e-5, "%g / %g epochs", rows[1].tta.epochs,
                       rows[0].tta.epochs);
    free(rows);
    snprintf(args, sizeof args, "simulate --calib '%s/calibration.json' --target-accuracy 0.8 --workers 1,2 --cores 1 "
             "--sync async --topology ps --reps 3 %s", dir, link);
    rows = csv_rows(args, &n);
    cr_assert_eq(n, 2);
    const double ratio = rows[1].tta.epochs / rows[0].tta.epochs;
    cr_assert(ratio > 1.1 && ratio < 1.3, "simulated: %g times one worker's epochs", ratio);
    free(rows);
    assert_no_async_tta(dir, 4, 1, "a mean staleness of 3.00 updates is beyond the 1.20 of the stalest run");
    rm_dir(dir);
}

/* Reads `text` as a predictions CSV: 0 with *rows, or -1 with err. */
static int read_csv_text(const char *text, prediction_row **rows, int *n, char *err, int errlen) {
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "p.csv", text);
    const int rc = predictions_read_csv(path, rows, n, err, errlen);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
    return rc;
}

#define TTA_NAMES ",target_accuracy,reach,epochs_to_target,epochs_lo,epochs_hi,tta_s,tta_lo,tta_hi,accuracy_at_end"
#define V3_NAMES                                                                                                \
    "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,update_s,time_lo," \
    "time_hi,mean_lo,mean_hi,rss_worker_mib,rss_master_mib,fits"

/* The time-to-accuracy columns follow the staleness (31 columns); a file written before
 * the staleness columns (29: the nine right after fits) reads to the same row, without
 * staleness. A bad staleness in a 31-column file names its line and the columns. */
Test(cli_accuracy, predictions_with_time_to_accuracy_read_with_or_without_staleness) {
    const char *v31 = V3_NAMES ",staleness_median,staleness_p90" TTA_NAMES "\n"
                      "2,1,async,ps,6,1.6,1.5,1.7,5,1,0,0,0,5.5,6.5,1.6,1.6,,,,1,1.5,"
                      "0.8,reached,2.5,2,3,15,12,18,0.88\n";
    const char *v29 = V3_NAMES TTA_NAMES "\n"
                      "2,1,async,ps,6,1.6,1.5,1.7,5,1,0,0,0,5.5,6.5,1.6,1.6,,,,0.8,reached,2.5,2,3,15,12,18,0.88\n";
    prediction_row *rows[2] = { NULL, NULL };
    int n[2];
    char err[1024];
    cr_assert_eq(read_csv_text(v31, &rows[0], &n[0], err, sizeof err), 0, "%s", err);
    cr_assert_eq(read_csv_text(v29, &rows[1], &n[1], err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 2; i++) {
        const prediction_row *r = rows[i];
        cr_assert_eq(n[i], 1);
        cr_assert(r->has_tta && r->tta.reach == EFFICIENCY_REACHED);
        cr_assert_eq(r->tta.target, 0.8);
        cr_assert_eq(r->tta.epochs, 2.5);
        cr_assert_eq(r->tta.time_hi_s, 18.0);
        cr_assert_eq(r->tta.accuracy_at_end, 0.88);
        cr_assert(!r->has_memory);
    }
    cr_assert(rows[0]->has_staleness && rows[0]->staleness_median == 1.0 && rows[0]->staleness_p90 == 1.5);
    cr_assert(!rows[1]->has_staleness);
    free(rows[0]);
    free(rows[1]);
    prediction_row *bad = NULL;
    int nb;
    const char *v31_bad = V3_NAMES ",staleness_median,staleness_p90" TTA_NAMES "\n"
                          "2,1,async,ps,6,1.6,1.5,1.7,5,1,0,0,0,5.5,6.5,1.6,1.6,,,,one,1.5,,,,,,,,,\n";
    cr_assert_eq(read_csv_text(v31_bad, &bad, &nb, err, sizeof err), -1);
    cr_assert(strstr(err, "p.csv: line 2: ") && strstr(err, "staleness_median,staleness_p90") &&
              strstr(err, "target_accuracy"), "%s", err);
    cr_assert_null(bad);
}

/* The text of DIR/index.html's first answer paragraph, tags removed (malloc'd). */
static char *report_answer(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/index.html", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char html[1 << 20];
    const size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    const char *p = strstr(html, "class=\"answer\">"), *end = p ? strstr(p, "</p>") : NULL;
    cr_assert(p && end, "no answer paragraph in %s", path);
    char *text = malloc((size_t)(end - p) + 1), *o = text;
    for (int tag = 0; p < end; p++) {
        tag = *p == '<' ? 1 : tag;
        if (!tag)
            *o++ = *p;
        tag = *p == '>' ? 0 : tag;
    }
    *o = '\0';
    return text;
}

/* `report --calib DIR/calibration.json` of D examples × epochs on a 100 Mbit/s cluster of
 * 4 × 2 cores into DIR/r: its first answer's text (malloc'd). */
static char *what_if_answer(const char *dir, int epochs) {
    char args[1400], rdir[600];
    snprintf(args, sizeof args, "report --calib '%s/calibration.json' --cluster 4x2@100mbit --what-if %d,%d "
             "--out-dir '%s/r'", dir, D, epochs, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    snprintf(rdir, sizeof rdir, "%s/r", dir);
    return report_answer(rdir);
}

/* report --calib on a slow cluster, where averaging wins on time: the answer says what it
 * does to accuracy from the fit. Batch sync at the report's global batch 32 against the
 * fit's 16: s = 1 + W·(32/16 − 1) = 1.35, so after E = 6 epochs
 * A − (A − 0.1)/(1 + (6/(X0·1.35))^ALPHA) = 0.9 − 0.8/(1 + 11.11^1.3) = 86.7%, by hand.
 * Another schedule: the fit cannot say, and the answer says why. */
Test(cli_accuracy, the_report_answer_says_what_averaging_does_to_accuracy_from_the_fit) {
    char *dir = dir_with(true);
    calibrate(dir);
    char *answer = what_if_answer(dir, E);
    cr_assert(!strstr(answer, " batch sync,"), "averaging should win on 100 Mbit/s: %s", answer);
    const char *at = strstr(answer, "the calibration's accuracy fit predicts ");
    cr_assert(at, "%s", answer);
    double acc = 0, acc_batch = 0;
    const char *against = strstr(at, "against ");
    cr_assert(sscanf(at, "the calibration's accuracy fit predicts %lf%%", &acc) == 1 && against &&
                  sscanf(against, "against %lf%%", &acc_batch) == 1, "%s", answer);
    cr_assert(fabs(acc_batch - 86.7) < 1.5, "batch sync after 6 epochs: %.1f%%, by hand 86.7%%", acc_batch);
    cr_assert(acc > 10 && acc < 90, "%s", answer);
    free(answer);
    answer = what_if_answer(dir, E + 2);
    cr_assert(strstr(answer, "cannot say by how much here (the efficiency fit is for a 6-epoch schedule"), "%s",
              answer);
    free(answer);
    rm_dir(dir);
}

/* advise without a target, where averaging wins on time: its caveat says what the fit
 * predicts. Batch sync at the fit's own global batch 16 (s = 1) after E = 6 epochs:
 * 0.9 − 0.8/(1 + (6/0.4)^1.3) = 0.9 − 0.8/34.80 = 87.7%, by hand. */
Test(cli_accuracy, advise_says_what_averaging_does_to_accuracy_from_the_fit) {
    char *dir = dir_with(true), args[1400];
    calibrate(dir);
    snprintf(args, sizeof args, "advise --calib '%s/calibration.json' --total-cores 8 --cluster 4x2@100mbit "
             "--examples %d --epochs %d --batch %d", dir, D, E, B);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(clirun_says(r.out, "averages models instead of gradients: it trains differently; the accuracy fit "
                                 "predicts"), "%s", r.out);
    const char *against = strstr(r.out, "against ");
    double acc_batch = 0;
    cr_assert(against && sscanf(against, "against %lf%%", &acc_batch) == 1, "%s", r.out);
    cr_assert(fabs(acc_batch - 87.7) < 1.5, "batch sync after 6 epochs: %.1f%%, by hand 87.7%%", acc_batch);
    clirun_free(&r);
    rm_dir(dir);
}
