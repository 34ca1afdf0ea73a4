/* verdict — whether a calibration is good enough to predict from, said in words, with what
 * to run to make it better. `speedup calibrate` prints it last and writes it into
 * calibration.json ("verdict"); `--strict` exits non-zero when it is poor.
 *
 * Poor when any of:
 *   - the leave-one-configuration-out median error exceeds max(2·run_cv, 5%): the model
 *     misses the configurations it was not fitted on by more than the host's own run-to-run
 *     spread can explain (2·run_cv: twice the log-sd of a run's speed factor);
 *   - Ernest's fit (fit/ernest.h), a four-term regression with no mechanism, predicts the
 *     left-out configurations better than the model (its median error is lower);
 *   - a parameter that every prediction uses sits at a bound of its fit with a zero-width
 *     interval (c1 = 0; sigma clamped to 0 or 1 where it was measured; a calibrated
 *     topology's beta = 0): the data pushed it past where the model allows.
 *   - c1's standard error is above VERDICT_DRIFT_LIMIT of c1: its runs disagree about the
 *     host's speed far beyond their own noise (the plan's rounds fitted alone: a round's c1
 *     rests on a dozen runs, so rounds of a steady host agree to ~1%; 1.6-3.7% in the
 *     calibrations of experiments/fidelity, 9.5% in one that caught a slow, noisy phase
 *     and predicted every network of experiments/networks 18-100% slow). Every prediction
 *     carries that phase, and a larger run_cv, which the first test's threshold grows
 *     with, does not say so.
 * Each reason names what to run. Not enough to judge (fewer than two configurations
 * predicted) is said, and is not poor. A calibration from a table of throughputs has no
 * runs to leave out: its verdict is its rows against the model (fit/table.h, table_fit).
 */
#ifndef SPEEDUP_VERDICT_H
#define SPEEDUP_VERDICT_H

#include "model/calibration.h"

#include <stdbool.h>

/* c1's relative standard error above which the host drifted during the calibration. */
#define VERDICT_DRIFT_LIMIT 0.05

/* The threshold on the leave-one-out median error below which run noise explains it. */
double verdict_threshold(const calibration *cal);

/* Fills fit->verdict and fit->verdict_poor from cal and fit's validation. */
void verdict_judge(const calibration *cal, calibration_fit *fit);

/* What to measure again when the verdict is poor (`calibrate` does, before it writes): the
 * configurations of one epoch (the plan's) whose left-out runs the model misses by more than
 * verdict_threshold on average, worst first, at most max; the two worst when none does
 * (poor for a parameter at a bound, or Ernest ahead). Each with the last round it ran in
 * (fit/rounds.h's trace names), in last_round. How many: 0 when the verdict is not poor. */
int verdict_remeasure(const calibration *cal, const calibration_fit *fit, job_config *out, int *last_round, int max);

#endif
