/* uncertainty — how far one run may land from a prediction: the 95% prediction interval
 * of ONE run (DESIGN.md, "Uncertainty: what the 95% interval means"), in closed form for
 * `speedup model`, and the draws the simulator's replications make (sim/replicate.h).
 *
 * Three sources, each independent of the others:
 *   run factor   the host's run-to-run speed: one log-normal factor f per run on the
 *                run's whole time, ln f ~ N(0, run_cv²). Median 1, not mean 1: the
 *                model's point time is then the median run, the interval is symmetric
 *                on the log scale, and run_cv is simply the sd of ln f, what repeated
 *                runs of one config spread by. A speedup is two runs (the job and its
 *                baseline), each with its own factor. Runs whose ranks outnumber the
 *                cores spread more (the scheduler's placement of them differs from run to
 *                run): theirs is run_cv_oversub where the calibration measured it
 *                (costmodel_run_cv).
 *   step noise   within a run, each step's time spreads by CV·step; a barrier waits for
 *                the slowest of K workers, whose round length (n steps) then spreads by
 *                CV·step·√n·√V(K) (model/gmax.h: V = variance of the max of K standard
 *                normals, V(1) = 1). Rounds are independent, so over the run's E·s steps
 *                per worker:  var(T) = (CV·step)²·E·s·V(K).
 *   parameters   the calibration's estimate: c0, c1 jointly normal (their standard errors
 *                and cov_c0_c1); sigma, alpha/beta per topology, w0, w1, cv, update, overlap
 *                (φ, χ, ε), the oversubscription's parameters and the crowded master's wake
 *                independent normal with their standard errors. model_bytes and
 *                host_cores come from the run header (exact); run_cv itself is taken at
 *                its value. A standard error of 0 (or NaN: not reported) means known.
 *
 *   algorithm    an all-reduce across machines whose algorithm is not known (params'
 *                allreduce_algorithm either, model/costmodel.h): the run is the ring's or
 *                the hierarchical's, each as likely; a draw picks one.
 *
 * Closed form (uncertainty_closed_form), the delta method on the log scale:
 *   var ln T(K,T) = run_cv² + model_cv² + (CV·step)²·E·s·V(K) / T² + gᵀ Σ g + A
 *       A    = (ln T_ring − ln T_hier)²/4 where the algorithm is either, else 0
 *       g_i  = ∂ln T/∂θ_i by central differences, h_i = 1e-4·(|θ_i| + se_i) (T is linear
 *              in every θ_i, so this is exact to rounding but for ln's curvature, O(h²))
 *       gᵀΣg = Σ g_i²·se_i² + 2·g_c0·g_c1·cov_c0_c1
 *   time 95% PI    T·exp(∓ z·√var),  z = Φ⁻¹(0.975) = 1.95996
 *   var ln S       = run_cv(1,1)² + run_cv(K,T)² + 2·model_cv² + noise(1,1) + noise(K,T) + dᵀ Σ d,
 *                    d = g(1,1) − g(K,T)
 *                    (the same parameters drive both runs, so their share partly cancels)
 *   speedup 95% PI S·exp(∓ z·√var ln S)
 * The point is the closed form's T (and S); with run_cv = CV = 0 and every se 0 the
 * interval is the point.
 *
 * Draws (uncertainty_draw): the parameters from the estimate, each truncated to its valid
 * range (≥ 0; sigma in [0, 1]) by rejection — the normal conditioned on the range, c0 and
 * c1 jointly; after 1000 rejections (a range the estimate barely reaches) the last draw is
 * clamped to it. Pure functions but for the caller's gsl_rng; nothing allocates or prints.
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
 * (1 when 0), run_cv that of c (costmodel_run_cv): the host's run-to-run factor and the
 * model's own error on a configuration it was not fitted on. */
double uncertainty_run_factor(const costmodel_params *p, const job_config *c, gsl_rng *rng);

#endif
