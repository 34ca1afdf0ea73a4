/* uncertainty — how far one run may land from a prediction: the 95% prediction interval
 * of ONE run (DESIGN.md, "Uncertainty: what the 95% interval means"), in closed form for
 * `speedup model`, and the draws the simulator's replications make (sim/replicate.h).
 *
 * Independent sources: the run's speed factor (log-normal, median 1, log-sd
 * √(run_cv² + model_cv²), run_cv_oversub where ranks outnumber the cores: one per run, and
 * a speedup is two runs); step noise (CV·step, the barrier waiting for the slowest of K:
 * V(K) of model/gmax.h); the calibration's parameters (c0 and c1 jointly normal with
 * cov_c0_c1, the others independent; a standard error of 0 or NaN means known); and an
 * all-reduce across machines whose algorithm is not known (ring or hierarchical).
 *
 * Closed form (uncertainty_closed_form), the delta method on the log scale:
 *   var ln T = run_cv² + model_cv² + (CV·step)²·E·s·V(K)/T² + gᵀΣg + A
 *     g_i = ∂ln T/∂θ_i by central differences; A = (ln T_ring − ln T_hier)²/4 for "either"
 *   time 95% PI    T·exp(∓ 1.95996·√var)
 *   var ln S = both runs' factors and noise + dᵀΣd, d = g(1,1) − g(K,T)
 *   speedup 95% PI S·exp(∓ 1.95996·√var ln S)
 * With run_cv = CV = 0 and every se 0 the interval is the point.
 *
 * Draws (uncertainty_draw, uncertainty_run_factor): the parameters from the estimate,
 * truncated to their ranges by rejection (clamped after 1000), c0 and c1 jointly.
 *
 * Why median 1, the variances term by term and the derivative steps: docs/model.md ("The
 * 95% interval in full").
 *
 * Pure functions but for the caller's gsl_rng; nothing allocates or prints.
 */
#ifndef SPEEDUP_UNCERTAINTY_H
#define SPEEDUP_UNCERTAINTY_H

#include "model/calibration.h"
#include "model/costmodel.h"

#include <gsl/gsl_rng.h>
#include <stdbool.h>

/* What is not known about the parameters. All zero: they are known exactly. */
typedef struct {
    calibration_stderr se;   /* standard errors by parameter; 0 or NaN: known */
    double cov_c0_c1;        /* covariance of the c0 and c1 estimates (s²/example) */
} uncertainty;

/* Prediction intervals (95%) of one run. */
typedef struct {
    double sd_ln_time, sd_ln_speedup;   /* √var on the log scale (see above) */
    double time_lo_s, time_hi_s;
    double speedup_lo, speedup_hi;
} uncertainty_interval;

/* The uncertainty of a calibration (its stderr_ and cov_c0_c1). */
uncertainty uncertainty_of_calibration(const calibration *cal);

/* True when some drawn parameter has a standard error > 0. NULL: false. */
bool uncertainty_has_params(const uncertainty *u);

/* The closed-form intervals of config c (see above). u NULL: parameters known. */
uncertainty_interval uncertainty_closed_form(const costmodel_params *p, const job_config *c,
                                             const uncertainty *u);

/* One draw of the parameters from the estimate est (see above) into *out; every field
 * that is not drawn is est's. u NULL or all zero: *out = *est, no random number used. */
void uncertainty_draw(const uncertainty *u, const costmodel_params *est, gsl_rng *rng, costmodel_params *out);

/* One run of c's speed factor: log-normal with median 1 and log-sd √(run_cv² + model_cv²)
 * (1 when 0), run_cv that of c (contention_run_cv): the host's run-to-run factor and the
 * model's own error on a configuration it was not fitted on. */
double uncertainty_run_factor(const costmodel_params *p, const job_config *c, gsl_rng *rng);

#endif
