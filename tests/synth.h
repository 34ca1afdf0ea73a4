/* synth — traces generated from KNOWN cost-model parameters with noise (GSL RNG), for
 * the calibration tests: the fit must recover the parameters that made them.
 *
 * A training run: every rank starts up until W(K) + noise (one draw per run: the ranks
 * leave start-up together at a barrier; its last d·ρ is a "data_load" span when d > 0), then per round each rank does its local steps,
 * each step_time(K,T)·(1 + CV·z); ranks wait at the barrier for the slowest; then one
 * synchronisation S(K)·(1 + comm_noise·z) on every rank, with bytes = M. A dedicated
 * master is rank 0 and the workers 1..K, as the trainer numbers them: at every step the
 * master records a compute event of 0 examples (its turn, 20 µs), then waits and exchanges
 * with the workers. When the truth has an update (u > 0), update events of
 * costmodel_update_time·(1 + CV·z) are where the trainer puts them: after every local step
 * (local SGD, or one worker without an exchange), after the all-reduce on every rank (batch
 * sync), or on rank 0 between the pushes and the pulls of a parameter server (batch sync:
 * its comm is then two spans, and the other ranks' spans hold the update). A communication
 * benchmark: rank 0 records ping-pong, all-reduce and ps exchanges at several sizes, each
 * the model's time for that size times (1 + comm_noise·z), named as `speedup commbench`
 * names them.
 */
#ifndef SPEEDUP_TESTS_SYNTH_H
#define SPEEDUP_TESTS_SYNTH_H

#include "trace/trace.h"

#include <gsl/gsl_rng.h>

typedef struct {
    costmodel_params p;          /* the truth */
    double startup_noise_s;      /* sd of W per run */
    double comm_noise;           /* relative sd of one synchronisation */
} synth_truth;

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
