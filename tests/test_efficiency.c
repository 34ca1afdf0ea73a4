/* efficiency — the accuracy-curve fit against synthetic curves whose parameters are
 * known (generated here by the form written out by hand, noise from a fixed GSL RNG),
 * epochs to an accuracy worked out by hand, and the targets that are never reached. */
#include "fit/efficiency_fit.h"
#include "model/efficiency.h"

#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* The truth of the synthetic runs: plateau, x0, power, w, gamma, H_c, beta; chance 0.1. */
static const double A_TRUE = 0.92, X0_TRUE = 0.5, ALPHA_TRUE = 1.2, W_TRUE = 0.3, GAMMA_TRUE = 0.4, HC_TRUE = 30,
                    BETA_TRUE = 0.1, CHANCE = 0.1;
enum { D = 6000, B = 32, E = 10, MAX_POINTS = 64, N_RUNS = 7 };

static job_config cfg(int k, job_sync sync, int every, bool per_worker) {
    return (job_config){ .workers = k, .cores = 1, .sync = sync, .every_n = every,
                               .topology = JOB_TOPO_ALLREDUCE, .batch_per_worker = per_worker,
                               .examples = D, .batch = B, .epochs = E };
}

/* The runs, each with its slowdown worked out by hand from the form (D = 6000, B = 32):
 *   s = (1 + w·(G/32 − 1))·(1 + γ·(1 − 1/K)·(H − 1)/(H − 1 + H_c))
 *   1 worker:           G 32,  H 1                    s = 1
 *   2 every:8:          G 64,  H 8                    (1 + w)(1 + γ·0.5·7/(7 + H_c))
 *   4 every:8:          G 128, H 8                    (1 + 3w)(1 + γ·0.75·7/(7 + H_c))
 *   2 epoch:            G 64,  H ⌈6000/64⌉ = 94       (1 + w)(1 + γ·0.5·93/(93 + H_c))
 *   4 epoch:            G 128, H ⌈6000/128⌉ = 47      (1 + 3w)(1 + γ·0.75·46/(46 + H_c))
 *   2 batch per worker: G 64,  H 1                    1 + w
 *   4 async, τ = 3:     G 32,  H 1                    1 + 3β (each gradient its own update) */
typedef struct {
    job_config c;
    double s, tau;
} synth_run;

static void synth_runs(synth_run r[N_RUNS], double g) {
    const double w = W_TRUE, hc = HC_TRUE;
    r[0] = (synth_run){ cfg(1, JOB_SYNC_BATCH, 1, false), 1, 0 };
    r[1] = (synth_run){ cfg(2, JOB_SYNC_EVERY, 8, false), (1 + w) * (1 + g * 0.5 * 7 / (7 + hc)), 0 };
    r[2] = (synth_run){ cfg(4, JOB_SYNC_EVERY, 8, false), (1 + 3 * w) * (1 + g * 0.75 * 7 / (7 + hc)), 0 };
    r[3] = (synth_run){ cfg(2, JOB_SYNC_EPOCH, 1, false), (1 + w) * (1 + g * 0.5 * 93 / (93 + hc)), 0 };
    r[4] = (synth_run){ cfg(4, JOB_SYNC_EPOCH, 1, false), (1 + 3 * w) * (1 + g * 0.75 * 46 / (46 + hc)), 0 };
    r[5] = (synth_run){ cfg(2, JOB_SYNC_BATCH, 1, true), 1 + w, 0 };
    job_config async = cfg(4, JOB_SYNC_ASYNC, 1, false);
    async.topology = JOB_TOPO_PS;
    r[6] = (synth_run){ async, 1 + 3 * BETA_TRUE, 3 };
}

/* The truth's accuracy after e epochs of a run slowed s times. */
static double truth(double e, double s) {
    return A_TRUE - (A_TRUE - CHANCE) / (1 + pow(e / (s * X0_TRUE), ALPHA_TRUE));
}

typedef struct {
    double epochs[N_RUNS][MAX_POINTS], acc[N_RUNS][MAX_POINTS];
    bool subset[N_RUNS][MAX_POINTS];
    efficiency_run runs[N_RUNS];
} synth_data;

/* Every run measured at every quarter epoch on the whole test set (σ = 0.004) and, from
 * 0.05 to 1 epoch, every 0.05 on a subset (σ = 0.012); local SGD's penalty γ = gamma. */
static void synth_fill_gamma(synth_data *d, unsigned long seed, int n_runs, double gamma) {
    synth_run r[N_RUNS];
    synth_runs(r, gamma);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    for (int i = 0; i < n_runs; i++) {
        long n = 0;
        for (int q = 1; q <= 4 * E; q++, n++) {
            d->epochs[i][n] = 0.25 * q;
            d->subset[i][n] = false;
            d->acc[i][n] = truth(d->epochs[i][n], r[i].s) + gsl_ran_gaussian(rng, 0.004);
        }
        for (int q = 1; q <= 20; q++, n++) {
            d->epochs[i][n] = 0.05 * q;
            d->subset[i][n] = true;
            d->acc[i][n] = truth(d->epochs[i][n], r[i].s) + gsl_ran_gaussian(rng, 0.012);
        }
        d->runs[i] = (efficiency_run){ "synthetic", r[i].c, d->epochs[i], d->acc[i], d->subset[i], n, r[i].tau };
    }
    gsl_rng_free(rng);
}

static void synth_fill(synth_data *d, unsigned long seed, int n_runs) {
    synth_fill_gamma(d, seed, n_runs, GAMMA_TRUE);
}

static double se(const efficiency_model *m, int j) {
    return sqrt(m->cov[j][j]);
}

Test(efficiency, fit_recovers_the_generating_parameters_within_three_standard_errors) {
    static synth_data d;
    synth_fill(&d, 11, N_RUNS);
    efficiency_model m;
    char why[256] = "";
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), 0, "%s", why);
    const double truth_theta[EFFICIENCY_NP] = { A_TRUE, log(X0_TRUE), ALPHA_TRUE, W_TRUE, GAMMA_TRUE, log(HC_TRUE),
                                                BETA_TRUE };
    for (int j = 0; j < EFFICIENCY_NP; j++) {
        cr_assert(m.fitted[j], "parameter %d not fitted", j);
        cr_assert(se(&m, j) > 0, "parameter %d: standard error %g", j, se(&m, j));
        cr_assert(fabs(m.theta[j] - truth_theta[j]) < 3 * se(&m, j), "parameter %d: %g, truth %g, se %g", j,
                  m.theta[j], truth_theta[j], se(&m, j));
    }
    /* The two groups' noise, recovered from the residuals. */
    cr_assert(fabs(m.sd_test - 0.004) < 0.001, "sd_test %g", m.sd_test);
    cr_assert(fabs(m.sd_subset - 0.012) < 0.003, "sd_subset %g", m.sd_subset);
    cr_assert_eq(m.batch, B);
    cr_assert_eq(m.epochs, E);
    cr_assert_eq(m.examples, D);
    cr_assert_eq(m.points, N_RUNS * (4 * E + 20));
    cr_assert_eq(m.staleness_max, 3);
}

/* The standard errors mean what they say: over 40 noise seeds the interval ±1.96 se holds
 * the truth about 95% of the time (≥ 85% and ≤ 100% allowed: 40 draws of a binomial). */
Test(efficiency, standard_errors_cover_the_truth_at_their_rate) {
    static synth_data d;
    const double truth_theta[EFFICIENCY_NP] = { A_TRUE, log(X0_TRUE), ALPHA_TRUE, W_TRUE, GAMMA_TRUE, log(HC_TRUE),
                                                BETA_TRUE };
    int inside[EFFICIENCY_NP] = { 0 }, seeds = 40;
    for (int s = 0; s < seeds; s++) {
        synth_fill(&d, 100 + (unsigned long)s, N_RUNS);
        efficiency_model m;
        char why[256] = "";
        cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), 0, "%s", why);
        for (int j = 0; j < EFFICIENCY_NP; j++)
            inside[j] += fabs(m.theta[j] - truth_theta[j]) < 1.96 * se(&m, j);
    }
    for (int j = 0; j < EFFICIENCY_NP; j++)
        cr_assert(inside[j] >= 34, "parameter %d: truth inside its 95%% interval in %d of %d fits", j, inside[j],
                  seeds);
}

Test(efficiency, reference_runs_alone_fit_the_curve_and_hold_w_and_gamma) {
    static synth_data d;
    synth_fill(&d, 5, 1);
    efficiency_model m;
    char why[256] = "";
    cr_assert_eq(efficiency_fit(d.runs, 1, CHANCE, &m, why, sizeof why), 0, "%s", why);
    cr_assert(!m.fitted[EFFICIENCY_W] && !m.fitted[EFFICIENCY_GAMMA] && !m.fitted[EFFICIENCY_LOG_HC] &&
              !m.fitted[EFFICIENCY_STALE_COST]);
    cr_assert_eq(m.theta[EFFICIENCY_W], 0);
    cr_assert_eq(m.cov[EFFICIENCY_W][EFFICIENCY_W], 0);
    cr_assert(fabs(m.theta[EFFICIENCY_PLATEAU] - A_TRUE) < 3 * se(&m, EFFICIENCY_PLATEAU));
    /* Local SGD or a larger batch needs what was not fitted: refused, naming it. */
    job_config local = cfg(2, JOB_SYNC_EVERY, 8, false);
    efficiency_prediction p;
    cr_assert_eq(efficiency_predict(&m, &local, 0, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "global batch of 64") != NULL, "%s", why);
    m.fitted[EFFICIENCY_W] = true; /* as if w were known: then gamma is what is missing */
    cr_assert_eq(efficiency_predict(&m, &local, 0, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "local SGD (2 workers averaging every 8 steps)") != NULL, "%s", why);
    /* Batch sync splitting the reference batch over 4 workers is the reference itself. */
    job_config split = cfg(4, JOB_SYNC_BATCH, 1, false);
    cr_assert_eq(efficiency_predict(&m, &split, 0, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(p.slowdown, 1.0, 1e-15);
}

/* Local SGD at one period only (every:8 at K = 2 and 4): γ·D(8) is all the runs tell, so
 * H_c is held at ln H_c = 0 (D = 1 − 1/H, saturated) and γ fitted against that. Then
 * γ·(7/8) is what the truth's γ·7/37 was: 0.4·7/37 = 0.0756757, γ = 0.0864865. */
Test(efficiency, one_averaging_period_fits_gamma_and_holds_h_c) {
    static synth_data d;
    synth_fill(&d, 7, N_RUNS);
    efficiency_run runs[] = { d.runs[0], d.runs[1], d.runs[2], d.runs[5] };
    efficiency_model m;
    char why[256] = "";
    cr_assert_eq(efficiency_fit(runs, 4, CHANCE, &m, why, sizeof why), 0, "%s", why);
    cr_assert(m.fitted[EFFICIENCY_GAMMA] && !m.fitted[EFFICIENCY_LOG_HC]);
    cr_assert_eq(m.theta[EFFICIENCY_LOG_HC], 0);
    cr_assert_eq(m.cov[EFFICIENCY_LOG_HC][EFFICIENCY_LOG_HC], 0);
    const double g = 0.4 * 7 / 37 * 8 / 7;
    cr_assert(fabs(m.theta[EFFICIENCY_GAMMA] - g) < 3 * se(&m, EFFICIENCY_GAMMA), "gamma %g, expected %g, se %g",
              m.theta[EFFICIENCY_GAMMA], g, se(&m, EFFICIENCY_GAMMA));
}

/* Local SGD that costs nothing (γ = 0): H_c is anywhere, and an unbounded fit runs it off
 * to ±∞. It is held at a bound of [1, H_max = 94] instead, marked so, and γ comes back 0
 * within 3 standard errors, every number finite. */
Test(efficiency, a_drift_the_runs_cannot_place_is_held_at_a_bound) {
    static synth_data d;
    synth_fill_gamma(&d, 13, N_RUNS, 0);
    efficiency_model m;
    char why[256] = "";
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), 0, "%s", why);
    const double hc = m.theta[EFFICIENCY_LOG_HC];
    cr_assert(m.at_bound[EFFICIENCY_LOG_HC] && !m.fitted[EFFICIENCY_LOG_HC], "ln H_c %g", hc);
    cr_assert(hc == 0 || fabs(hc - log(94)) < 1e-12, "ln H_c %g: not a bound", hc);
    cr_assert(m.fitted[EFFICIENCY_GAMMA] && isfinite(m.theta[EFFICIENCY_GAMMA]));
    cr_assert(fabs(m.theta[EFFICIENCY_GAMMA]) < 3 * se(&m, EFFICIENCY_GAMMA), "gamma %g, se %g",
              m.theta[EFFICIENCY_GAMMA], se(&m, EFFICIENCY_GAMMA));
    cr_assert(fabs(m.theta[EFFICIENCY_W] - W_TRUE) < 3 * se(&m, EFFICIENCY_W));
}

/* A model with the synthetic truth as its parameters and no uncertainty. */
static efficiency_model hand_model(void) {
    efficiency_model m = { .known = true, .examples = D, .batch = B, .epochs = E, .chance = CHANCE,
                           .theta = { A_TRUE, log(X0_TRUE), ALPHA_TRUE, W_TRUE, GAMMA_TRUE, log(HC_TRUE),
                                      BETA_TRUE },
                           .staleness_max = 3 };
    for (int j = 0; j < EFFICIENCY_NP; j++)
        m.fitted[j] = true;
    return m;
}

Test(efficiency, epochs_to_an_accuracy_match_the_hand_computation) {
    /* 4 workers every:8, B = 32: G = 128, H = 8:
     *   s = (1 + 0.3·3)·(1 + 0.4·0.75·7/(7 + 30)) = 1.9 · 1.0567568 = 2.0078378;
     *   to 85%: x = 0.5·((0.85 − 0.1)/(0.92 − 0.85))^(1/1.2) = 0.5·10.714286^0.833333 = 3.6080512,
     *   e = s·x = 7.2443817 epochs (within the 10-epoch schedule). */
    efficiency_model m = hand_model();
    job_config c = cfg(4, JOB_SYNC_EVERY, 8, false);
    cr_assert_float_eq(efficiency_slowdown(&m, &c, 0), 2.0078378378, 1e-9);
    efficiency_prediction p;
    char why[256] = "";
    const efficiency_timing t = { .startup_s = 5, .epoch_s = 100, .sd_ln = 0 };
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.85, &t, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.reach, EFFICIENCY_REACHED);
    cr_assert_float_eq(p.epochs, 7.2443816989, 1e-8);
    cr_assert_float_eq(p.time_s, 5 + 724.43816989, 1e-6);
    /* No parameter uncertainty, no run noise, no time spread: the interval is the point. */
    cr_assert_float_eq(p.epochs_lo, p.epochs, 1e-9);
    cr_assert_float_eq(p.epochs_hi, p.epochs, 1e-9);
    cr_assert_float_eq(p.time_hi_s, p.time_s, 1e-6);
    /* The curve there is the target, and e/s is the reference's epochs. */
    cr_assert_float_eq(efficiency_accuracy(&m, &c, 0, p.epochs), 0.85, 1e-12);
}

/* A calibration.json from before H_c (legacy_log_h) keeps its ln H form: 4 workers
 * every:8, s = (1 + 0.3·3)·(1 + 0.4·0.75·ln 8) = 1.9·1.6238325 = 3.0852817. */
Test(efficiency, a_legacy_model_keeps_the_ln_h_form) {
    efficiency_model m = hand_model();
    m.legacy_log_h = true;
    job_config c = cfg(4, JOB_SYNC_EVERY, 8, false);
    cr_assert_float_eq(efficiency_slowdown(&m, &c, 0), 3.0852817, 1e-7);
}

Test(efficiency, run_noise_widens_the_interval_around_the_point) {
    efficiency_model m = hand_model();
    m.sd_test = 0.004;
    job_config c = cfg(1, JOB_SYNC_BATCH, 1, false);
    efficiency_prediction p;
    char why[256] = "";
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    /* 85% ± 1.96·0.004: the run reaches it between f⁻¹(0.84216) and f⁻¹(0.85784). */
    const double lo = 0.5 * pow((0.85 - 1.959964 * 0.004 - 0.1) / (0.92 - 0.85 + 1.959964 * 0.004), 1 / 1.2);
    const double hi = 0.5 * pow((0.85 + 1.959964 * 0.004 - 0.1) / (0.92 - 0.85 - 1.959964 * 0.004), 1 / 1.2);
    cr_assert(p.lo_reached && p.hi_reached);
    cr_assert(fabs(p.epochs_lo - lo) < 0.03 * lo, "lo %g, expected %g", p.epochs_lo, lo);
    cr_assert(fabs(p.epochs_hi - hi) < 0.03 * hi, "hi %g, expected %g", p.epochs_hi, hi);
}

Test(efficiency, a_target_above_the_plateau_is_not_reached_with_a_message) {
    efficiency_model m = hand_model();
    job_config c = cfg(1, JOB_SYNC_BATCH, 1, false);
    efficiency_prediction p;
    char why[256] = "", line[256];
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.95, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.reach, EFFICIENCY_ABOVE_PLATEAU);
    cr_assert(!p.lo_reached && !p.hi_reached);
    cr_assert(isfinite(p.epochs) && isfinite(p.epochs_lo) && isfinite(p.epochs_hi));
    efficiency_describe_miss(&p, E, line, sizeof line);
    cr_assert_str_eq(line, "not reached: 95.0% is above the fitted plateau 92.0%");
}

Test(efficiency, a_target_beyond_the_schedule_says_what_its_end_reaches) {
    /* 4 workers every:8 to 90%: e = s·x = 2.0078378·10.8148375 = 21.71 > 10 epochs; at
     * the end, x = 10/s = 4.9805 reference epochs: 0.92 − 0.82/(1 + (4.9805/0.5)^1.2) = 0.87112. */
    efficiency_model m = hand_model();
    job_config c = cfg(4, JOB_SYNC_EVERY, 8, false);
    efficiency_prediction p;
    char why[256] = "", line[256];
    const efficiency_timing t = { .startup_s = 5, .epoch_s = 100, .sd_ln = 0.05 };
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.90, &t, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(p.reach, EFFICIENCY_BEYOND_SCHEDULE);
    cr_assert_float_eq(p.epochs, 21.7144398847, 1e-8);
    cr_assert_float_eq(p.accuracy_at_end, 0.8711169161, 1e-9);
    cr_assert(!p.hi_reached);
    cr_assert(isfinite(p.time_s) && isfinite(p.time_lo_s) && isfinite(p.time_hi_s));
    efficiency_describe_miss(&p, E, line, sizeof line);
    cr_assert_str_eq(line, "not reached within the 10-epoch schedule: 87.1% at its end (the curve would need 21.7 "
                           "epochs)");
}

Test(efficiency, another_schedule_or_data_size_is_refused) {
    efficiency_model m = hand_model();
    job_config c = cfg(1, JOB_SYNC_BATCH, 1, false);
    efficiency_prediction p;
    char why[256] = "";
    c.epochs = 5;
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "10-epoch schedule") && strstr(why, "not 5"), "%s", why);
    c.epochs = E;
    c.examples = 60000;
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "6000 examples, not 60000"), "%s", why);
    c.examples = D;
    cr_assert_eq(efficiency_predict(&m, &c, 0, 1.5, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "expected a fraction in (0, 1)"), "%s", why);
}

Test(efficiency, the_fit_refuses_runs_it_cannot_use) {
    static synth_data d;
    synth_fill(&d, 3, N_RUNS);
    efficiency_model m;
    char why[256] = "";
    /* Without a reference run (one worker or batch sync), s and x0 trade off. */
    cr_assert_eq(efficiency_fit(d.runs + 1, 4, CHANCE, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "no reference run"), "%s", why);
    cr_assert(!m.known);
    d.runs[2].config.epochs = 4;
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "different schedules: 10 epochs"), "%s", why);
    d.runs[2].config.epochs = E;
    /* The reference at two progresses only: the curve's three shape parameters are not all told. */
    d.runs[0].n = 2;
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "measured at 2 progresses"), "%s", why);
    d.runs[0].n = 4 * E + 20;
    d.acc[1][3] = 1.5;
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &m, why, sizeof why), -1);
    cr_assert(strstr(why, "accuracy point 4"), "%s", why);
}

Test(efficiency, noise_scale_is_the_batch_where_w_is_one_half) {
    /* w = B_ref/(B_ref + B_noise): w = 0.3 at B_ref 32 gives B_noise = 32·0.7/0.3 = 74.67. */
    efficiency_model m = hand_model();
    m.cov[EFFICIENCY_W][EFFICIENCY_W] = 0.01;
    double bn, bse;
    bool inf;
    efficiency_noise_scale(&m, &bn, &bse, &inf);
    cr_assert(!inf);
    cr_assert_float_eq(bn, 32 * 0.7 / 0.3, 1e-9);
    cr_assert_float_eq(bse, 32 / 0.09 * 0.1, 1e-9);
}

/* Stale gradients stretch the epochs by 1 + β·τ (β = 0.1 in the hand model). To 85% the
 * reference needs x = 3.6080512 epochs (worked out above), so:
 *   4 async workers, τ = 3:  s = 1.3, e = 4.69046656
 *   2 hogwild workers, τ = 1: s = 1.1, e = 3.96885632
 *   1 async worker pulling every step: plain SGD, τ = 0, s = 1, e = 3.6080512. */
Test(efficiency, staleness_stretches_the_epochs_by_the_hand_computation) {
    efficiency_model m = hand_model();
    efficiency_prediction p;
    char why[256] = "";
    job_config c = cfg(4, JOB_SYNC_ASYNC, 1, false);
    cr_assert_eq(efficiency_predict(&m, &c, 3, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(p.slowdown, 1.3, 1e-12);
    cr_assert_float_eq(p.epochs, 4.69046656, 1e-6);
    c = cfg(2, JOB_SYNC_HOGWILD, 1, false);
    cr_assert_eq(efficiency_predict(&m, &c, 1, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(p.epochs, 3.96885632, 1e-6);
    c = cfg(1, JOB_SYNC_ASYNC, 1, false);
    cr_assert_eq(efficiency_predict(&m, &c, 0, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_float_eq(p.epochs, 3.6080512, 1e-6);
    cr_assert_float_eq(efficiency_accuracy(&m, &c, 0, p.epochs), 0.85, 1e-12);
}

/* What the fit did not measure is refused, naming why: stale gradients when no run was
 * stale (β not fitted; one async worker pulling every step is still plain SGD), and a
 * staleness beyond the fit's largest (3) by more than half an update. */
Test(efficiency, staleness_the_fit_did_not_measure_is_refused) {
    efficiency_model m = hand_model();
    efficiency_prediction p;
    char why[256] = "";
    const job_config async4 = cfg(4, JOB_SYNC_ASYNC, 1, false);
    cr_assert_eq(efficiency_predict(&m, &async4, 3.5, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
    cr_assert_eq(efficiency_predict(&m, &async4, 3.51, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "mean staleness of 3.51 updates is beyond the 3.00 of the stalest run"), "%s", why);
    cr_assert_eq(efficiency_predict(&m, &async4, -1, 0.85, NULL, &p, why, sizeof why), -1);
    cr_assert(strstr(why, "mean staleness -1: expected a number >= 0"), "%s", why);
    m.fitted[EFFICIENCY_STALE_COST] = false;
    m.theta[EFFICIENCY_STALE_COST] = 0;
    const job_config stale[] = { cfg(2, JOB_SYNC_ASYNC, 1, false), cfg(1, JOB_SYNC_ASYNC, 4, false),
                                       cfg(1, JOB_SYNC_HOGWILD, 1, false) };
    for (int i = 0; i < 3; i++) {
        why[0] = '\0';
        cr_assert_eq(efficiency_predict(&m, &stale[i], 1, 0.85, NULL, &p, why, sizeof why), -1, "config %d", i);
        cr_assert(strstr(why, "(stale_cost) was not fitted"), "config %d: %s", i, why);
    }
    const job_config plain = cfg(1, JOB_SYNC_ASYNC, 1, false);
    cr_assert_eq(efficiency_predict(&m, &plain, 0, 0.85, NULL, &p, why, sizeof why), 0, "%s", why);
}

/* The fit refuses a staleness that is no number >= 0, naming the run. */
Test(efficiency, the_fit_refuses_a_staleness_that_is_not_a_count) {
    static synth_data d;
    synth_fill(&d, 5, N_RUNS);
    d.runs[6].staleness = NAN;
    d.runs[6].name = "async-4";
    efficiency_model fit;
    char why[256] = "";
    cr_assert_eq(efficiency_fit(d.runs, N_RUNS, CHANCE, &fit, why, sizeof why), -1);
    cr_assert(strstr(why, "async-4: mean staleness nan: expected a number >= 0"), "%s", why);
}

/* A one-rank trace of config c whose test accuracy is the truth slowed s times, ± 0.002 in
 * turn (the fit weighs points by their residuals' spread: it needs one), measured after
 * every quarter epoch: compute events of D/4 examples, each followed by eval "test". */
static trace *curve_trace(job_config c, double s) {
    trace_run run = { .config = c };
    snprintf(run.net, sizeof run.net, "conv5x5x8,relu,pool2,fc10");
    trace *t = trace_new(&run);
    cr_assert_not_null(t);
    for (int q = 0; q < 4 * E; q++) {
        const double t0 = 1.5 * q;
        const trace_event step = { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = t0, .t1_s = t0 + 1, .epoch = q / 4,
                                   .step = q, .examples = D / 4 };
        const trace_event eval = { .rank = 0, .ph = TRACE_EVAL, .t0_s = t0 + 1, .t1_s = t0 + 1.5, .epoch = q / 4,
                                   .step = q + 1, .examples = 1000, .name = "test", .has_accuracy = true,
                                   .accuracy = truth(0.25 * (q + 1), s) + (q % 2 ? 0.002 : -0.002), .loss = 1 };
        cr_assert_eq(trace_add(t, &step), 0);
        cr_assert_eq(trace_add(t, &eval), 0);
    }
    return t;
}

/* The master's update events of an async trace: staleness 2 and 4 in turn (mean 3). */
static void add_updates(trace *t) {
    for (int u = 0; u < 40; u++) {
        const trace_event ev = { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 0.01 * u, .t1_s = 0.01 * u + 0.005,
                                 .epoch = 0, .step = u, .name = "sgd", .has_staleness = true,
                                 .staleness = u % 2 ? 4 : 2 };
        cr_assert_eq(trace_add(t, &ev), 0);
    }
}

/* The fit from traces, its async run's curve slowed 1.3 times. Without a time model, τ is
 * the mean its master measured (update events: 3), so β = 0.3/3 = 0.1 and τ = 3 is the
 * stalest fitted; without such events the run is left out, with a note. With the time
 * model, τ is the closed form's for its configuration, as predictions take it: 2 workers
 * pulling every step, 2·(1 + 1)/2 − 1 = 1, so β = 0.3/1 = 0.3 (the events unused). */
Test(efficiency, traces_of_async_runs_fit_what_staleness_costs) {
    job_config async = cfg(2, JOB_SYNC_ASYNC, 1, false);
    async.topology = JOB_TOPO_PS;
    trace *tr[2] = { curve_trace(cfg(1, JOB_SYNC_BATCH, 1, false), 1), curve_trace(async, 1.3) };
    const char *names[2] = { "ref.trace.jsonl", "async.trace.jsonl" };
    efficiency_model m;
    char note[512];
    cr_assert_eq(efficiency_fit_traces(tr, names, 2, NULL, &m, note, sizeof note), 0, "%s", note);
    cr_assert_eq(m.runs, 1);
    cr_assert(!m.fitted[EFFICIENCY_STALE_COST]);
    cr_assert(strstr(note, "1 async or hogwild run left out (no update event with a staleness, and no time model "
                           "to predict it)"), "%s", note);
    add_updates(tr[1]);
    cr_assert_eq(efficiency_fit_traces(tr, names, 2, NULL, &m, note, sizeof note), 0, "%s", note);
    cr_assert_str_eq(note, "");
    cr_assert_eq(m.runs, 2);
    cr_assert(m.fitted[EFFICIENCY_STALE_COST]);
    cr_assert_float_eq(m.staleness_max, 3, 1e-12);
    /* 2 × 37 points (each run's first epoch's 3 are the warm-up), ± 0.002: the truth back */
    cr_assert_eq(m.points, 2 * (4 * E - 3));
    cr_assert_float_eq(m.theta[EFFICIENCY_STALE_COST], BETA_TRUE, 0.01, "beta %g", m.theta[EFFICIENCY_STALE_COST]);
    cr_assert_float_eq(m.theta[EFFICIENCY_PLATEAU], A_TRUE, 0.01);
    const costmodel_params p = { .c0_s = 0.001, .c1_s = 0.0005, .model_bytes = 1e6, .update_s = 0.001,
                                 .host_cores = 4, .link[JOB_TOPO_PS] = { 1e-4, 1e-9 } };
    cr_assert_eq(efficiency_fit_traces(tr, names, 2, &p, &m, note, sizeof note), 0, "%s", note);
    cr_assert_float_eq(m.staleness_max, 1, 1e-12);
    cr_assert_float_eq(m.theta[EFFICIENCY_STALE_COST], 0.3, 0.02, "beta %g", m.theta[EFFICIENCY_STALE_COST]);
    trace_free(tr[0]);
    trace_free(tr[1]);
}
