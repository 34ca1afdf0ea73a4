/* fit/verdict.h: a calibration says whether it is good enough, and why not. */
#include "fit/verdict.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* Ten configurations left out; the model within 3% (median), Ernest 8%, a 2% run spread. */
static void good(calibration *cal, calibration_fit *fit) {
    memset(cal, 0, sizeof *cal);
    memset(fit, 0, sizeof *fit);
    cal->params.c1_s = 1e-3, cal->stderr_.c1_s = 1e-5;
    cal->params.sigma = 0.1, cal->stderr_.sigma = 0.01;
    cal->params.link[JOB_TOPO_PS].beta_s_per_byte = 1e-9, cal->stderr_.beta_ps = 1e-10;
    cal->params.link[JOB_TOPO_ALLREDUCE].beta_s_per_byte = 1e-9, cal->stderr_.beta_allreduce = 1e-10;
    cal->params.run_cv = 0.02;
    fit->loo_model_n = fit->loo_ernest_n = 10;
    fit->loo_model_median = 0.03, fit->loo_ernest_median = 0.08;
}

Test(verdict, a_model_within_the_run_spread_and_ahead_of_ernest_is_good) {
    calibration cal;
    calibration_fit fit;
    good(&cal, &fit);
    verdict_judge(&cal, &fit);
    cr_assert(fit.has_verdict && !fit.verdict_poor, "%s", fit.verdict);
    cr_assert(strstr(fit.verdict, "good: ") == fit.verdict, "%s", fit.verdict);
}

Test(verdict, each_reason_makes_it_poor_and_says_what_to_run) {
    calibration cal;
    calibration_fit fit;
    /* 13.6% median against max(2 x 2%, 5%) = 5%; the calibration of 10 s. */
    good(&cal, &fit);
    fit.loo_model_median = 0.136;
    verdict_judge(&cal, &fit);
    cr_assert(fit.verdict_poor && strstr(fit.verdict, "by 13.6% (median)") && strstr(fit.verdict, "(5.0%)"),
              "%s", fit.verdict);
    /* Ernest ahead: 6% against the model's 4% is fine, 3% is not. */
    good(&cal, &fit);
    fit.loo_model_median = 0.04, fit.loo_ernest_median = 0.03;
    verdict_judge(&cal, &fit);
    cr_assert(fit.verdict_poor && strstr(fit.verdict, "Ernest's regression predicts"), "%s", fit.verdict);
    /* c1 uncertain by 9.5% (the plan's rounds disagreed): poor; by 4%: not. */
    good(&cal, &fit);
    cal.stderr_.c1_s = 9.5e-5;
    verdict_judge(&cal, &fit);
    cr_assert(fit.verdict_poor && strstr(fit.verdict, "c1 is uncertain by 9.5%") &&
              strstr(fit.verdict, "the host changed speed during the plan"), "%s", fit.verdict);
    cal.stderr_.c1_s = 4e-5;
    verdict_judge(&cal, &fit);
    cr_assert(!fit.verdict_poor, "%s", fit.verdict);
    /* sigma clamped to 1 with no interval. */
    good(&cal, &fit);
    cal.params.sigma = 1, cal.stderr_.sigma = 0;
    verdict_judge(&cal, &fit);
    cr_assert(fit.verdict_poor && strstr(fit.verdict, "sigma is at its bound 1: add runs at 2 and 4 threads"), "%s",
              fit.verdict);
    /* ... but not when sigma was never measured (a prediction at T > 1 is refused instead). */
    cal.sigma_unmeasured = true;
    verdict_judge(&cal, &fit);
    cr_assert(!fit.verdict_poor, "%s", fit.verdict);
    /* A calibrated topology's beta at 0; an uncalibrated one's is not judged. */
    good(&cal, &fit);
    cal.params.link[JOB_TOPO_PS].beta_s_per_byte = 0, cal.stderr_.beta_ps = 0;
    verdict_judge(&cal, &fit);
    cr_assert(fit.verdict_poor && strstr(fit.verdict, "beta_ps is at its bound 0"), "%s", fit.verdict);
    cal.uncalibrated[JOB_TOPO_PS] = true;
    verdict_judge(&cal, &fit);
    cr_assert(!fit.verdict_poor, "%s", fit.verdict);
}

Test(verdict, too_few_left_out_configurations_are_not_judged) {
    calibration cal;
    calibration_fit fit;
    good(&cal, &fit);
    fit.loo_model_n = 1, fit.loo_model_median = 0.5;
    verdict_judge(&cal, &fit);
    cr_assert(!fit.verdict_poor && strstr(fit.verdict, "not judged"), "%s", fit.verdict);
}

/* A run of config (workers, sync) in round r, measured 10 s, predicted without its
 * configuration at 10·(1 + miss) s. */
static calibration_run run_of(int workers, job_sync sync, int round, double miss) {
    calibration_run r = { .config = { .workers = workers, .cores = 1, .sync = sync, .every_n = 1, .batch = 32,
                                      .epochs = 1, .examples = 1152, .topology = JOB_TOPO_ALLREDUCE },
                          .measured_s = 10, .loo_model_s = 10 * (1 + miss) };
    snprintf(r.trace, sizeof r.trace, "plan/train-%dx1-r%d.trace.jsonl", workers, round);
    return r;
}

/* Poor, threshold 5% (run_cv 2%): 3x1 batch misses by 20% and 10% (mean 15%), 2x1 epoch by
 * 8% twice, 1x1 by 1% and 3%, 4x1 by 30% but over five epochs (not the plan's, left
 * alone): 3x1 then 2x1 are measured again, each after its last round (2 and 3). When no
 * configuration misses by more than the threshold (poor for a parameter at a bound), the
 * two worst; a good verdict measures nothing. */
Test(verdict, a_poor_fit_measures_again_the_configurations_it_misses_most) {
    calibration cal;
    calibration_fit fit;
    good(&cal, &fit);
    calibration_run runs[] = { run_of(3, JOB_SYNC_BATCH, 1, 0.20), run_of(2, JOB_SYNC_EPOCH, 1, -0.08),
                               run_of(1, JOB_SYNC_BATCH, 1, 0.01), run_of(3, JOB_SYNC_BATCH, 2, -0.10),
                               run_of(2, JOB_SYNC_EPOCH, 3, 0.08), run_of(1, JOB_SYNC_BATCH, 2, -0.03),
                               run_of(4, JOB_SYNC_BATCH, 1, 0.30) };
    runs[6].config.epochs = 5;
    fit.runs = runs, fit.n_runs = 7;
    job_config again[4];
    int last[4];
    cr_assert_eq(verdict_remeasure(&cal, &fit, again, last, 4), 0, "a good verdict measures nothing");
    fit.verdict_poor = true;
    cr_assert_eq(verdict_remeasure(&cal, &fit, again, last, 4), 2);
    cr_assert_eq(again[0].workers, 3);
    cr_assert_eq(last[0], 2);
    cr_assert_eq(again[1].workers, 2);
    cr_assert_eq(again[1].sync, JOB_SYNC_EPOCH);
    cr_assert_eq(last[1], 3);
    cr_assert_eq(verdict_remeasure(&cal, &fit, again, last, 1), 1, "at most max");
    for (int i = 0; i < 6; i++)
        runs[i].loo_model_s = 10 * (1 + 0.01 * (i % 3)); /* every miss under 5% */
    cr_assert_eq(verdict_remeasure(&cal, &fit, again, last, 4), 2, "the two worst");
    cr_assert_eq(again[0].sync, JOB_SYNC_BATCH);
    cr_assert_eq(again[0].workers, 1); /* 1x1: 2% twice; 2x1 epoch 1% twice; 3x1 0% */
}
