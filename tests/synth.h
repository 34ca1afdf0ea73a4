/* synth — traces of a known truth with noise (GSL RNG), for the calibration tests: the fit
 * must recover the parameters that made them.
 *
 * synth decides no duration itself from the truth: the test that draws a run writes down
 * what its step, update, synchronisation and start-up take (synth_truth.times, a formula of
 * its own from the documented form, never the cost model's code: traces made by the model
 * that the fit assumes could not fail for a wrong form), and synth lays them out as the
 * trainer records them, with noise.
 *
 * A training run: every rank starts up until W + noise (one draw per run: the ranks leave
 * start-up together at a barrier; its last `data_load_s` is a "data_load" span when > 0),
 * then per round each rank does its local steps, each step_s·(1 + CV·z) (times the rank's
 * own speed where the truth gives one: rank_speed); ranks wait at the
 * barrier for the slowest; then one synchronisation sync_s·(1 + comm_noise·z) on every
 * rank, with bytes = M. A dedicated master is rank 0 and the workers 1..K, as the trainer
 * numbers them: at every step the master records a compute event of 0 examples (its turn,
 * 20 µs), then waits and exchanges with the workers. When the run has an update
 * (update_s > 0), update events of update_s·(1 + CV·z) are where the trainer puts them:
 * after every local step (local SGD, or one worker without an exchange), after the
 * all-reduce on every rank (batch sync), or on rank 0 between the pushes and the pulls of a
 * parameter server (batch sync: its comm is then two spans, and the other ranks' spans
 * hold the update). A communication benchmark: rank 0 records ping-pong, all-reduce and ps
 * exchanges at several sizes, each α + β·n of the truth's link as that exchange moves it
 * (synth_commbench) times (1 + comm_noise·z), named as `speedup commbench` names them.
 */
#ifndef SPEEDUP_TESTS_SYNTH_H
#define SPEEDUP_TESTS_SYNTH_H

#include "trace/trace.h"

#include <gsl/gsl_rng.h>

enum { SYNTH_MAX_RANK_SPEEDS = 8 };

/* What one run of a configuration takes, before noise. */
typedef struct {
    double step_s;               /* one local step of the slice b (a dedicated master's turn apart) */
    double update_s;             /* one optimizer update; 0 = no update events */
    double sync_s;               /* one synchronisation; 0 = none */
    double startup_s;            /* W: every rank's start-up, the data load included */
    double data_load_s;          /* the last part of W, its "data_load" span; 0 = none */
} synth_times;

typedef struct {
    costmodel_params p;          /* the truth: what the fit must give back; M (model_bytes), P
                                    (host_cores) and CV (cv) go into the runs as they are */
    synth_times (*times)(const costmodel_params *p, const job_config *c); /* the test's formula:
                                    a run of c under p */
    double startup_noise_s;      /* sd of W per run */
    double comm_noise;           /* relative sd of one synchronisation */
    double rank_speed[SYNTH_MAX_RANK_SPEEDS]; /* rank r's steps times this in every run (its own
                                    speed: rank_cv's truth); 0 = 1 */
} synth_truth;

/* A plain formula, for the tests of the command line rather than of the model's form: on
 * one host of P cores, a = σ + (1 − σ)/T, b the slice (job_schedule_of),
 *   step = (c0 + c1·a·b)·ρ, ρ = max(1, K·T/P): the cores shared evenly (rounds longer than
 *          a step only: one-step rounds at ρ > 1 would pack, and are refused)
 *   S    = 2(K − 1)·(α + β·M) through a parameter server whose master trains,
 *          2(K − 1)·(α + β·M/K) through a ring all-reduce
 *   W    = w0 + w1·K
 * and no update and no data load; a truth with u, d or l, or a dedicated master, is
 * refused (abort): its test writes its own formula. */
synth_times synth_plain_times(const costmodel_params *p, const job_config *c);

trace *synth_run(const synth_truth *truth, const job_config *cfg, const char *host, const char *net,
                 gsl_rng *rng);
/* Accuracy points on a synth_run trace t, as the trainer records them (trace/trace.h):
 * its steps renumbered to global ones (epoch·s + i, as the trainer counts), then on rank 0
 * a zero-length eval event "test" after every epoch's last step and `subset_per_epoch`
 * "subset" ones spread over each epoch, each with accuracy acc(epochs seen, ctx) plus
 * normal noise of sd noise_test / noise_subset, clamped to [0, 1]. Epochs seen are exact
 * when D = s·K·b (no short last step). */
void synth_add_accuracy(trace *t, double (*acc)(double epochs, const void *ctx), const void *ctx,
                        int subset_per_epoch, double noise_test, double noise_subset, gsl_rng *rng);
trace *synth_commbench(const synth_truth *truth, int workers, const long *sizes, int n_sizes, int reps,
                       const char *host, gsl_rng *rng);

#endif
