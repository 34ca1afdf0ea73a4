/* fit/verdict.h: a calibration says whether it is good enough, and why not. */
#include "fit/verdict.h"

#include <criterion/criterion.h>
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
