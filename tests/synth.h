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

#include "model/trace.h"

#include <gsl/gsl_rng.h>

typedef struct {
    costmodel_params p;          /* the truth */
    double startup_noise_s;      /* sd of W per run */
    double comm_noise;           /* relative sd of one synchronisation */
} synth_truth;

trace *synth_run(const synth_truth *truth, const costmodel_config *cfg, const char *host, const char *net,
                 gsl_rng *rng);
trace *synth_commbench(const synth_truth *truth, int workers, const long *sizes, int n_sizes, int reps,
                       const char *host, gsl_rng *rng);

#endif
