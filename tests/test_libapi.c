/* lib/speedup.h: libspeedup's stable API through the shared library, against numbers
 * worked out by hand (and, for a calibration file, against `speedup model`'s golden CSV). */
#define _POSIX_C_SOURCE 200809L
#include "lib/speedup.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double z95 = 1.959963984540054; /* Φ⁻¹(0.975) */

static void assert_rel(double got, double want, double tol, const char *what) {
    cr_assert(fabs(got - want) <= tol * fabs(want), "%s: %.12g, expected %.12g", what, got, want);
}

/* The seed's example with every parameter 0 but c1 = 0.001 s/example (host_cores 0: cores
 * unlimited). */
static speedup_params *only_c1(void) {
    speedup_params *h = speedup_params_new();
    cr_assert_not_null(h);
    char err[256] = "";
    for (int i = 0; i < speedup_params_count(); i++)
        cr_assert_eq(speedup_params_set(h, speedup_params_name(i), 0.0, err, sizeof err), 0, "%s", err);
    cr_assert_eq(speedup_params_set(h, "c1", 0.001, err, sizeof err), 0, "%s", err);
    return h;
}

/* K workers of one core in batch sync through a parameter server on D = 1000 examples in
 * batches of B = 10 for E = 2 epochs. */
static speedup_job small_job(int workers) {
    speedup_job j = SPEEDUP_JOB_INIT;
    j.workers = workers;
    j.examples = 1000;
    j.batch = 10;
    j.epochs = 2;
    return j;
}

static speedup_prediction predict(const speedup_params *h, const speedup_job *j) {
    speedup_prediction p = SPEEDUP_PREDICTION_INIT;
    char err[256] = "";
    cr_assert_eq(speedup_predict(h, j, &p, err, sizeof err), 0, "%s", err);
    return p;
}

/* small_job(workers) predicted under only_c1() with the parameter named name set to value. */
static speedup_prediction predict_only_c1_and(const char *name, double value, int workers) {
    speedup_params *h = only_c1();
    char err[256] = "";
    cr_assert_eq(speedup_params_set(h, name, value, err, sizeof err), 0, "%s", err);
    const speedup_job j = small_job(workers);
    const speedup_prediction p = predict(h, &j);
    speedup_params_free(h);
    return p;
}

/* One worker, one core: 100 steps an epoch of 10 examples at 0.001 s each, 2 epochs:
 * 2·100·(10·0.001) = 2.0 s, all of it compute; its own baseline: speedup 1; nothing
 * uncertain (cv, run_cv, model_cv and every standard error 0): the intervals are the point. */
Test(libapi, one_worker_takes_its_steps_and_nothing_else) {
    const speedup_prediction p = predict_only_c1_and("c1", 0.001, 1);
    assert_rel(p.time_s, 2.0, 1e-12, "time");
    assert_rel(p.compute_s, 2.0, 1e-12, "compute");
    cr_assert(p.startup_s == 0 && p.update_s == 0 && p.comm_s == 0 && p.wait_s == 0);
    assert_rel(p.speedup, 1.0, 1e-12, "speedup");
    cr_assert(p.time_lo_s == p.time_s && p.time_hi_s == p.time_s, "[%g, %g]", p.time_lo_s, p.time_hi_s);
    cr_assert(p.speedup_lo == p.speedup && p.speedup_hi == p.speedup);
}

/* Two workers through a parameter server whose master trains, alpha_ps = 0.01 s: slices of
 * 10/2 = 5 examples, a step 0.005 s, one push and one pull with the other worker,
 * 2·(0.01 + 0·M) = 0.02 s, per step: 2·100·(0.005 + 0.02) = 5.0 s (compute 1.0, comm 4.0),
 * speedup 2.0/5.0 = 0.4. */
Test(libapi, two_workers_pay_their_exchange) {
    const speedup_prediction p = predict_only_c1_and("alpha_ps", 0.01, 2);
    assert_rel(p.time_s, 5.0, 1e-12, "time");
    assert_rel(p.compute_s, 1.0, 1e-12, "compute");
    assert_rel(p.comm_s, 4.0, 1e-12, "comm");
    assert_rel(p.speedup, 0.4, 1e-12, "speedup");
}

/* run_cv = 0.1 alone: ln T spreads by 0.1, so one run's 95% interval is 2·e^(∓1.96·0.1);
 * a speedup is two runs, each with its own factor: e^(∓1.96·√(0.1² + 0.1²)) around 1. */
Test(libapi, the_interval_is_the_run_to_run_spread) {
    const speedup_prediction p = predict_only_c1_and("run_cv", 0.1, 1);
    assert_rel(p.time_s, 2.0, 1e-12, "time");
    assert_rel(p.time_lo_s, 2.0 * exp(-z95 * 0.1), 1e-9, "time_lo");
    assert_rel(p.time_hi_s, 2.0 * exp(z95 * 0.1), 1e-9, "time_hi");
    assert_rel(p.speedup_lo, exp(-z95 * sqrt(0.02)), 1e-9, "speedup_lo");
    assert_rel(p.speedup_hi, exp(z95 * sqrt(0.02)), 1e-9, "speedup_hi");
}

Test(libapi, every_parameter_is_listed_by_name_and_set_and_got_back) {
    speedup_params *h = speedup_params_new();
    char err[256] = "";
    double v = -1;
    cr_assert_eq(speedup_params_get(h, "c1", &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v, 0.956, "the seed's example: c1 = 0.956 s/example");
    const int n = speedup_params_count();
    cr_assert_geq(n, 27);
    for (int i = 0; i < n; i++) {
        const char *name = speedup_params_name(i);
        cr_assert(name && speedup_params_unit(i), "parameter %d", i);
        for (int k = 0; k < i; k++)
            cr_assert_str_neq(name, speedup_params_name(k));
        /* In every parameter's range (fractions included); the whole-numbered ones (waits_block,
         * worker_device, allreduce_algorithm, ps_shards, ps_separate) are 1. */
        static const char *const whole[] = { "waits_block", "worker_device", "allreduce_algorithm", "ps_shards",
                                             "ps_separate" };
        bool is_whole = false;
        for (size_t w = 0; w < sizeof whole / sizeof whole[0]; w++)
            is_whole |= strcmp(name, whole[w]) == 0;
        const double want = is_whole ? 1.0 : (i + 1) / 64.0;
        double got = -1;
        cr_assert_eq(speedup_params_set(h, name, want, err, sizeof err), 0, "%s: %s", name, err);
        cr_assert_eq(speedup_params_get(h, name, &got, err, sizeof err), 0, "%s", err);
        cr_assert_eq(got, want, "%s: set %g, got %g", name, want, got);
    }
    cr_assert_null(speedup_params_name(n));
    cr_assert_null(speedup_params_name(-1));
    cr_assert_null(speedup_params_unit(n));
    speedup_params_free(h);
}

Test(libapi, an_unknown_name_or_a_value_out_of_range_is_refused_and_changes_nothing) {
    speedup_params *h = speedup_params_new();
    char err[256] = "";
    double v = 0;
    cr_assert_eq(speedup_params_set(h, "c2", 1.0, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown parameter 'c2'"), "%s", err);
    err[0] = '\0';
    cr_assert_eq(speedup_params_get(h, "latency", &v, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown parameter 'latency'"), "%s", err);
    cr_assert_eq(speedup_params_set(h, "sigma", 1.5, err, sizeof err), -1);
    cr_assert(strstr(err, "sigma must be in [0, 1] (got 1.5)"), "%s", err);
    cr_assert_eq(speedup_params_set(h, "c1", -0.1, err, sizeof err), -1);
    cr_assert(strstr(err, "c1 must be a finite number >= 0"), "%s", err);
    cr_assert_eq(speedup_params_set(h, "c1", NAN, err, sizeof err), -1);
    cr_assert_eq(speedup_params_get(h, "sigma", &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v, 0.1, "sigma moved to %g", v);
    cr_assert_eq(speedup_params_get(h, "c1", &v, err, sizeof err), 0, "%s", err);
    cr_assert_eq(v, 0.956, "c1 moved to %g", v);
    cr_assert_eq(speedup_params_set(h, "c1", 1.0, NULL, 0), 0, "no message buffer is needed");
    speedup_params_free(h);
    speedup_params_free(NULL);
}

static void refused(const speedup_params *h, const speedup_job *j, const char *needle) {
    speedup_prediction p = SPEEDUP_PREDICTION_INIT;
    char err[256] = "";
    double t = 0;
    cr_assert_eq(speedup_predict(h, j, &p, err, sizeof err), -1, "predicted %g", p.time_s);
    cr_assert(strstr(err, needle), "'%s' without '%s'", err, needle);
    err[0] = '\0';
    cr_assert_eq(speedup_simulate(h, j, 1, &t, err, sizeof err), -1);
    cr_assert(strstr(err, needle), "simulate: '%s' without '%s'", err, needle);
}

Test(libapi, a_job_that_cannot_run_is_refused_with_the_reason) {
    speedup_params *h = speedup_params_new();
    speedup_job j = small_job(1);
    j.sync = "weekly";
    refused(h, &j, "sync 'weekly': expected batch, epoch, every:N");
    j = small_job(1);
    j.topology = "ring";
    refused(h, &j, "topology 'ring'");
    j = small_job(1);
    j.master = NULL;
    refused(h, &j, "master '(null)'");
    j = small_job(20); /* batch sync splits 10 examples over 20 workers */
    refused(h, &j, "20 workers need a batch of 20 or more (got 10)");
    j = small_job(1);
    j.size = 0;
    refused(h, &j, "SPEEDUP_JOB_INIT");
    j = small_job(1);
    speedup_prediction p = { .size = 8 };
    char err[256] = "";
    cr_assert_eq(speedup_predict(h, &j, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "SPEEDUP_PREDICTION_INIT"), "%s", err);
    speedup_params_free(h);
}

/* A program built with a later header passes a larger prediction: the members this
 * library does not know are left as they were. */
Test(libapi, a_larger_prediction_keeps_what_the_library_does_not_know) {
    speedup_params *h = only_c1();
    struct {
        speedup_prediction p;
        double later;
    } out = { .p = { .size = sizeof out }, .later = 42 };
    speedup_job j = small_job(1);
    char err[256] = "";
    cr_assert_eq(speedup_predict(h, &j, &out.p, err, sizeof err), 0, "%s", err);
    assert_rel(out.p.time_s, 2.0, 1e-12, "time");
    cr_assert_eq(out.p.size, sizeof out);
    cr_assert_eq(out.later, 42.0);
    speedup_params_free(h);
}

/* The simulator with every step at its mean (cv = 0) takes the closed form's time: the
 * seed's example at 4x1 batch ps; with cv > 0, one seed gives one run. */
Test(libapi, a_simulated_run_at_cv_0_is_the_closed_form) {
    speedup_params *h = speedup_params_new();
    char err[256] = "";
    cr_assert_eq(speedup_params_set(h, "cv", 0, err, sizeof err), 0, "%s", err);
    speedup_job j = SPEEDUP_JOB_INIT;
    j.workers = 4;
    j.examples = 6000;
    j.batch = 32;
    j.epochs = 5;
    double t = 0, u = 0;
    cr_assert_eq(speedup_simulate(h, &j, 1, &t, err, sizeof err), 0, "%s", err);
    assert_rel(t, predict(h, &j).time_s, 1e-9, "simulated at cv 0");
    cr_assert_eq(speedup_params_set(h, "cv", 0.1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(speedup_simulate(h, &j, 7, &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(speedup_simulate(h, &j, 7, &u, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t, u, "seed 7 twice: %g and %g", t, u);
    speedup_params_free(h);
}

/* tests/data/golden/calibration.json predicts what `speedup model --calib` printed for it
 * (tests/data/golden/model.csv: 2x1 batch ps on the seed's workload, D 6000, B 32, E 5). */
Test(libapi, a_calibration_file_predicts_as_speedup_model_does) {
    char err[512] = "";
    speedup_params *h = speedup_params_read(SPEEDUP_SOURCE_DIR "/tests/data/golden/calibration.json", err, sizeof err);
    cr_assert_not_null(h, "%s", err);
    double c1 = 0;
    cr_assert_eq(speedup_params_get(h, "c1", &c1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c1, 0.00098912541064709466);
    speedup_job j = SPEEDUP_JOB_INIT;
    j.workers = 2;
    j.examples = 6000;
    j.batch = 32;
    j.epochs = 5;
    const speedup_prediction p = predict(h, &j);
    /* 2,1,batch,ps,18.9741447,1.65975369,1.38233849,1.99284208,...,16.3911025,21.9642435 */
    assert_rel(p.time_s, 18.9741447, 1e-8, "time");
    assert_rel(p.speedup, 1.65975369, 1e-8, "speedup");
    assert_rel(p.speedup_lo, 1.38233849, 1e-8, "speedup_lo");
    assert_rel(p.speedup_hi, 1.99284208, 1e-8, "speedup_hi");
    assert_rel(p.time_lo_s, 16.3911025, 1e-8, "time_lo");
    assert_rel(p.time_hi_s, 21.9642435, 1e-8, "time_hi");
    speedup_params_free(h);
    cr_assert_null(speedup_params_read("/nonexistent/calibration.json", err, sizeof err));
    cr_assert(strstr(err, "/nonexistent/calibration.json"), "%s", err);
}

/* The text of the file at path (malloc'd). */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    char *text = malloc(1 << 16);
    text[fread(text, 1, (1 << 16) - 1, f)] = '\0';
    fclose(f);
    return text;
}

/* A calibration with c1 = 0.002 ± 0.0002 and nothing else but sigma (tests/clirun.h): one
 * worker's D = 1000, B = 10, E = 2 take 2·100·(0.002·10) = 4.0 s, proportional to c1, so
 * ln T spreads by 0.0002/0.002 = 0.1: 4·e^(∓1.96·0.1); the speedup against itself, none.
 * Marked as having measured no ps synchronisation, ps is refused until alpha_ps and
 * beta_ps are both given. */
Test(libapi, a_calibrations_standard_errors_and_uncalibrated_topologies_are_kept) {
    char *dir = clirun_tmpdir(), *path = clirun_write_c1_calibration(dir), err[512] = "";
    speedup_params *h = speedup_params_read(path, err, sizeof err);
    cr_assert_not_null(h, "%s", err);
    speedup_job j = small_job(1);
    speedup_prediction p = predict(h, &j);
    assert_rel(p.time_s, 4.0, 1e-12, "time");
    assert_rel(p.time_lo_s, 4.0 * exp(-z95 * 0.1), 1e-6, "time_lo");
    assert_rel(p.time_hi_s, 4.0 * exp(z95 * 0.1), 1e-6, "time_hi");
    assert_rel(p.speedup_lo, 1.0, 1e-12, "speedup_lo");
    speedup_params_free(h);

    char *text = slurp(path), *marked = malloc(strlen(text) + 64);
    sprintf(marked, "{\"uncalibrated_topologies\": [\"ps\"], %s", strchr(text, '{') + 1);
    free(path);
    path = clirun_write_file(dir, "cal.json", marked);
    h = speedup_params_read(path, err, sizeof err);
    cr_assert_not_null(h, "%s", err);
    refused(h, &j, "the calibration measured no ps synchronisation, so ps is not calibrated: set alpha_ps and beta_ps");
    cr_assert_eq(speedup_params_set(h, "alpha_ps", 0.01, err, sizeof err), 0, "%s", err);
    refused(h, &j, "set alpha_ps and beta_ps");
    cr_assert_eq(speedup_params_set(h, "beta_ps", 1e-9, err, sizeof err), 0, "%s", err);
    assert_rel(predict(h, &j).time_s, 4.0, 1e-12, "time once ps's link is given");
    j.topology = "allreduce";
    assert_rel(predict(h, &j).time_s, 4.0, 1e-12, "allreduce was measured");
    speedup_params_free(h);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
    free(text);
    free(marked);
}
