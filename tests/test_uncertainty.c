/* model/uncertainty.c: the closed form's prediction interval against intervals worked out
 * by hand for small cases, and the parameter draws against the distributions they claim
 * (sample moments of many draws from a fixed seed). */
#define _DEFAULT_SOURCE /* M_PI */
#include "model/costmodel.h"
#include "model/uncertainty.h"

#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double z975 = 1.959963984540054; /* Φ⁻¹(0.975) */

/* One worker, T = 1, no start-up, update or communication: T(K,T) = E·s·step. */
static costmodel_params bare_params(void) {
    costmodel_params p = { .c0_s = 0.01, .c1_s = 0.002, .sigma = 0.2, .model_bytes = 1e6 };
    return p;
}

static job_config config_of(int k, long examples, long batch, int epochs) {
    return (job_config){ .workers = k, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                               .topology = JOB_TOPO_ALLREDUCE, .master = JOB_MASTER_WORKER,
                               .examples = examples, .batch = batch, .epochs = epochs };
}

static int close_rel(double got, double want, double rel) {
    return fabs(got - want) <= rel * fabs(want);
}

/* ---------------------------------------------------------------------------------- */
/* Closed form */

Test(uncertainty, run_factor_alone_gives_exp_of_1_96_run_cv) {
    /* CV = 0, parameters known, run_cv = 0.05: ln of one run's time is ln T + N(0, 0.05²),
     * so T·exp(±1.96·0.05); a speedup is two runs: S·exp(±1.96·0.05·√2). */
    costmodel_params p = bare_params();
    p.w0_s = 3;
    p.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ .alpha_s = 1e-3, .beta_s_per_byte = 1e-8 };
    p.run_cv = 0.05;
    job_config c = config_of(4, 1000, 48, 2);
    uncertainty_interval pi = uncertainty_closed_form(&p, &c, NULL);
    double t = costmodel_total_time(&p, &c), s = costmodel_speedup(&p, &c);
    cr_assert(close_rel(pi.time_lo_s, t * exp(-z975 * 0.05), 1e-12), "%.15g", pi.time_lo_s);
    cr_assert(close_rel(pi.time_hi_s, t * exp(z975 * 0.05), 1e-12), "%.15g", pi.time_hi_s);
    cr_assert(close_rel(pi.speedup_lo, s * exp(-z975 * 0.05 * sqrt(2.0)), 1e-12), "%.15g", pi.speedup_lo);
    cr_assert(close_rel(pi.speedup_hi, s * exp(z975 * 0.05 * sqrt(2.0)), 1e-12), "%.15g", pi.speedup_hi);
}

/* The model's own error where ranks share cores stays there: on 2 cores, 2 workers have
 * a core each and carry model_cv = 0.03; 4 workers share them and carry model_cv_oversub
 * = 0.2 instead; their speedups add the baseline's 0.03 (it has a core). run_cv 0.05. */
Test(uncertainty, the_models_error_where_ranks_share_cores_stays_with_those_configurations) {
    costmodel_params p = bare_params();
    p.host_cores = 2, p.run_cv = 0.05, p.model_cv = 0.03, p.model_cv_oversub = 0.2;
    job_config two = config_of(2, 1000, 48, 2), four = config_of(4, 1000, 48, 2);
    four.sync = JOB_SYNC_EPOCH; /* rounds of an epoch: ρ = 2 shares the cores, nothing to pack */
    uncertainty_interval a = uncertainty_closed_form(&p, &two, NULL), b = uncertainty_closed_form(&p, &four, NULL);
    cr_assert(close_rel(a.sd_ln_time, sqrt(0.05 * 0.05 + 0.03 * 0.03), 1e-12), "%.15g", a.sd_ln_time);
    cr_assert(close_rel(b.sd_ln_time, sqrt(0.05 * 0.05 + 0.2 * 0.2), 1e-12), "%.15g", b.sd_ln_time);
    cr_assert(close_rel(b.sd_ln_speedup, sqrt(2 * 0.05 * 0.05 + 0.2 * 0.2 + 0.03 * 0.03), 1e-12), "%.15g",
              b.sd_ln_speedup);
    p.model_cv_oversub = 0; /* not measured apart: model_cv everywhere */
    b = uncertainty_closed_form(&p, &four, NULL);
    cr_assert(close_rel(b.sd_ln_time, sqrt(0.05 * 0.05 + 0.03 * 0.03), 1e-12), "%.15g", b.sd_ln_time);
}

Test(uncertainty, without_any_spread_the_interval_is_the_point) {
    costmodel_params p = bare_params();
    job_config c = config_of(4, 1000, 48, 2);
    uncertainty none = { 0 };
    uncertainty_interval pi = uncertainty_closed_form(&p, &c, &none);
    cr_assert_eq(pi.time_lo_s, costmodel_total_time(&p, &c));
    cr_assert_eq(pi.time_hi_s, pi.time_lo_s);
    cr_assert_eq(pi.speedup_lo, costmodel_speedup(&p, &c));
    cr_assert_eq(pi.speedup_hi, pi.speedup_lo);
}

Test(uncertainty, step_noise_of_one_worker_is_cv_over_root_steps) {
    /* One worker, 2 epochs of 50 steps: T = 100·step, sd 0.1·step·√100, so
     * sd(ln T) = 0.1/√100 = 0.01; its speedup over itself is two such runs: 0.01·√2. */
    costmodel_params p = bare_params();
    p.cv = 0.1;
    job_config c = config_of(1, 50 * 32, 32, 2);
    uncertainty_interval pi = uncertainty_closed_form(&p, &c, NULL);
    cr_assert(close_rel(pi.sd_ln_time, 0.01, 1e-12), "%.15g", pi.sd_ln_time);
    cr_assert(close_rel(pi.sd_ln_speedup, 0.01 * sqrt(2.0), 1e-12), "%.15g", pi.sd_ln_speedup);
}

Test(uncertainty, step_noise_of_two_workers_is_the_spread_of_their_maximum) {
    /* Two workers, free all-reduce, 100 rounds of one step: each round lasts the longer
     * of two steps, mean step·(1 + CV·G(2)), variance (CV·step)²·V(2), G(2) = 1/√π,
     * V(2) = 1 − 1/π. So sd(ln T) = CV·√(V(2)/100) / (1 + CV/√π). */
    costmodel_params p = bare_params();
    p.cv = 0.1;
    job_config c = config_of(2, 50 * 32, 32, 2);
    uncertainty_interval pi = uncertainty_closed_form(&p, &c, NULL);
    double want = 0.1 * sqrt((1 - 1 / M_PI) / 100) / (1 + 0.1 / sqrt(M_PI));
    cr_assert(close_rel(pi.sd_ln_time, want, 1e-9), "%.15g, by hand %.15g", pi.sd_ln_time, want);
}

/* c0 = 0 and nothing but compute: every run's time is proportional to c1, which is
 * 0.002 ± se. The interval of K workers, D = 1000, B = 48, E = 2. */
static uncertainty_interval c1_only(int k, double se, double *time_s) {
    costmodel_params p = bare_params();
    p.c0_s = 0;
    job_config c = config_of(k, 1000, 48, 2);
    uncertainty u = { .se = { .c1_s = se } };
    *time_s = costmodel_total_time(&p, &c);
    return uncertainty_closed_form(&p, &c, &u);
}

Test(uncertainty, one_uncertain_parameter_by_hand) {
    /* T ∝ c1, so sd(ln T) = se(c1)/c1 = 0.0002/0.002 = 0.1. */
    double t;
    uncertainty_interval pi = c1_only(1, 0.0002, &t);
    cr_assert(close_rel(pi.sd_ln_time, 0.1, 1e-7), "%.15g", pi.sd_ln_time);
    cr_assert(close_rel(pi.time_hi_s, t * exp(z975 * 0.1), 1e-7), "%.15g", pi.time_hi_s);
}

Test(uncertainty, a_parameter_that_scales_both_runs_alike_leaves_the_speedup_known) {
    /* Free communication: the job and its baseline are both proportional to c1, so their
     * ratio does not depend on it, however uncertain c1 is (sd(ln T) = 0.25). */
    double t;
    uncertainty_interval pi = c1_only(4, 0.0005, &t);
    cr_assert(close_rel(pi.sd_ln_time, 0.25, 1e-7), "%.15g", pi.sd_ln_time);
    cr_assert_lt(pi.sd_ln_speedup, 1e-7, "%g", pi.sd_ln_speedup);
}

Test(uncertainty, negative_c0_c1_covariance_narrows_the_interval_at_the_calibrated_batch) {
    /* One worker at B = 32, T = 100·step, step = c0 + 32·c1 = 0.074 s:
     *   var(step) = se0² + 32²·se1² + 2·32·cov = 2.5e-5 + 2.56e-4 + 64·cov,
     * 2.81e-4 with cov = 0 and 1.37e-4 with cov = −0.9·se0·se1 = −2.25e-6: the fit that
     * trades c0 against c1 knew the step at this batch better than either parameter. */
    costmodel_params p = bare_params();
    job_config c = config_of(1, 3200, 32, 1);
    uncertainty u = { .se = { .c0_s = 0.005, .c1_s = 0.0005 } };
    double indep = uncertainty_closed_form(&p, &c, &u).sd_ln_time;
    u.cov_c0_c1 = -0.9 * 0.005 * 0.0005;
    double neg = uncertainty_closed_form(&p, &c, &u).sd_ln_time;
    cr_assert(close_rel(indep, sqrt(2.81e-4) / 0.074, 1e-6), "%.15g", indep);
    cr_assert(close_rel(neg, sqrt(1.37e-4) / 0.074, 1e-6), "%.15g", neg);
    cr_assert_lt(neg, indep);
}

Test(uncertainty, sources_add_as_variances_on_the_log_scale) {
    /* run_cv 0.03 and se(c1)/c1 = 0.04 with c0 = 0: sd(ln T) = √(0.03² + 0.04²) = 0.05. */
    costmodel_params p = bare_params();
    p.c0_s = 0;
    p.run_cv = 0.03;
    job_config c = config_of(1, 1000, 32, 1);
    uncertainty u = { .se = { .c1_s = 0.04 * 0.002 } };
    cr_assert(close_rel(uncertainty_closed_form(&p, &c, &u).sd_ln_time, 0.05, 1e-7));
}

/* ---------------------------------------------------------------------------------- */
/* Draws */

enum { DRAWS = 20000 };

Test(uncertainty, known_parameters_are_not_drawn) {
    costmodel_params est = bare_params(), out;
    uncertainty none = { 0 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    unsigned long before = gsl_rng_get(rng);
    gsl_rng_set(rng, 0);
    uncertainty_draw(&none, &est, rng, &out);
    cr_assert_eq(memcmp(&est, &out, sizeof est), 0);
    cr_assert_eq(gsl_rng_get(rng), before, "no random number used");
    gsl_rng_free(rng);
}

Test(uncertainty, draws_have_the_estimate_and_its_standard_error) {
    /* w0 = 10 ± 1 (far from 0): sample mean within 5 sd of the mean's error (0.007), sd
     * within 3%; c0, c1 far from 0 with correlation −0.8: sample correlation within 0.02
     * (its standard error is (1 − 0.64)/√20000 = 0.0025). */
    costmodel_params est = bare_params(), out;
    est.w0_s = 10;
    est.c0_s = 1.0;
    est.c1_s = 2.0;
    uncertainty u = { .se = { .w0_s = 1, .c0_s = 0.1, .c1_s = 0.2 }, .cov_c0_c1 = -0.8 * 0.1 * 0.2 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 11);
    double *w0 = malloc(sizeof *w0 * DRAWS), *c0 = malloc(sizeof *c0 * DRAWS), *c1 = malloc(sizeof *c1 * DRAWS);
    for (int i = 0; i < DRAWS; i++) {
        uncertainty_draw(&u, &est, rng, &out);
        w0[i] = out.w0_s;
        c0[i] = out.c0_s;
        c1[i] = out.c1_s;
        cr_assert_eq(out.w1_s, est.w1_s, "w1 has no standard error: not drawn");
    }
    cr_assert(fabs(gsl_stats_mean(w0, 1, DRAWS) - 10) < 0.035, "mean %g", gsl_stats_mean(w0, 1, DRAWS));
    cr_assert(fabs(gsl_stats_sd(w0, 1, DRAWS) - 1) < 0.03, "sd %g", gsl_stats_sd(w0, 1, DRAWS));
    double r = gsl_stats_correlation(c0, 1, c1, 1, DRAWS);
    cr_assert(fabs(r + 0.8) < 0.02, "correlation %g", r);
    free(w0);
    free(c0);
    free(c1);
    gsl_rng_free(rng);
}

Test(uncertainty, draws_are_truncated_to_the_range_not_clamped) {
    /* An estimate at the bound, c0 = 0 ± 0.01: the normal conditioned on c0 ≥ 0 is the
     * half-normal, mean 0.01·√(2/π) = 0.00798 (clamping would give 0.00399 and half
     * the draws at 0). sigma = 0.95 ± 0.1 stays within [0, 1]. */
    costmodel_params est = bare_params(), out;
    est.c0_s = 0;
    est.sigma = 0.95;
    uncertainty u = { .se = { .c0_s = 0.01, .sigma = 0.1 } };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    double *c0 = malloc(sizeof *c0 * DRAWS);
    int zeros = 0;
    for (int i = 0; i < DRAWS; i++) {
        uncertainty_draw(&u, &est, rng, &out);
        cr_assert(out.c0_s >= 0 && out.sigma >= 0 && out.sigma <= 1, "c0 %g sigma %g", out.c0_s, out.sigma);
        zeros += out.c0_s == 0;
        c0[i] = out.c0_s;
    }
    double mean = gsl_stats_mean(c0, 1, DRAWS), want = 0.01 * sqrt(2 / M_PI);
    cr_assert(fabs(mean - want) < 0.03 * want, "mean %g, half-normal %g", mean, want);
    cr_assert_eq(zeros, 0);
    free(c0);
    gsl_rng_free(rng);
}

Test(uncertainty, run_factor_has_median_one_and_log_sd_run_cv) {
    costmodel_params p = bare_params();
    p.run_cv = 0.05;
    const job_config c = config_of(4, 1000, 48, 2);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 3);
    double *f = malloc(sizeof *f * DRAWS), *ln = malloc(sizeof *ln * DRAWS);
    for (int i = 0; i < DRAWS; i++) {
        f[i] = uncertainty_run_factor(&p, &c, rng);
        ln[i] = log(f[i]);
    }
    gsl_sort(f, 1, DRAWS);
    /* The median's standard error: 1.2533·0.05/√20000 = 0.00044. */
    cr_assert(fabs(gsl_stats_median_from_sorted_data(f, 1, DRAWS) - 1) < 0.002);
    cr_assert(fabs(gsl_stats_sd(ln, 1, DRAWS) - 0.05) < 0.0015, "%g", gsl_stats_sd(ln, 1, DRAWS));
    p.run_cv = 0;
    cr_assert_eq(uncertainty_run_factor(&p, &c, rng), 1.0);
    free(f);
    free(ln);
    gsl_rng_free(rng);
}

/* Runs whose ranks outnumber the cores spread by run_cv_oversub, the others by run_cv: K =
 * 4 on 2 cores (ρ = 2) at 0.08 against 0.02, so the time's interval is exp(±z·0.08) and
 * the speedup's, over a baseline on one core (ρ = 1), exp(±z·√(0.08² + 0.02²)); on 4 cores
 * both runs are at ρ = 1 and 0.02 each. Unknown (0), it is run_cv. */
Test(uncertainty, oversubscribed_runs_spread_by_their_own_run_cv) {
    costmodel_params p = bare_params();
    p.run_cv = 0.02;
    p.run_cv_oversub = 0.08;
    p.host_cores = 2;
    job_config c = config_of(4, 1000, 48, 2);
    uncertainty_interval pi = uncertainty_closed_form(&p, &c, NULL);
    double t = costmodel_total_time(&p, &c), s = costmodel_speedup(&p, &c);
    cr_assert(close_rel(pi.time_hi_s, t * exp(z975 * 0.08), 1e-12), "%.15g", pi.time_hi_s);
    cr_assert(close_rel(pi.speedup_hi, s * exp(z975 * sqrt(0.08 * 0.08 + 0.02 * 0.02)), 1e-12), "%.15g",
              pi.speedup_hi);
    p.host_cores = 4;
    pi = uncertainty_closed_form(&p, &c, NULL);
    t = costmodel_total_time(&p, &c);
    cr_assert(close_rel(pi.time_hi_s, t * exp(z975 * 0.02), 1e-12), "%.15g", pi.time_hi_s);
    p.host_cores = 2;
    p.run_cv_oversub = 0;
    pi = uncertainty_closed_form(&p, &c, NULL);
    t = costmodel_total_time(&p, &c);
    cr_assert(close_rel(pi.time_hi_s, t * exp(z975 * 0.02), 1e-12), "%.15g", pi.time_hi_s);
}
