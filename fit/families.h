/* families — families of configurations, held out of the calibration fit one at a time:
 * the honest test of a model term is a family it never saw, not one more configuration of
 * a kind the plan already ran (issue 36; experiments/ablation).
 *
 * A training run's configuration c, on a host of P cores, belongs to
 *   dedicated      a dedicated parameter-server master beside its workers
 *   shared-step    no dedicated master, K·T > P (ranks share cores), one-step rounds (batch sync)
 *   shared-long    no dedicated master, K·T > P, rounds of more than one step (every:N, epoch)
 *   threads        T > 1 with K·T <= P (sigma's family)
 *   batch          a global batch other than the plan's own (the most common one)
 *   weak           every worker takes the whole batch (--batch-per-worker: weak scaling)
 *   ps             a parameter server on a worker (rank 0 trains too), K·T <= P
 *   averaging      epoch or every:N sync, K·T <= P, no dedicated master
 * A run may belong to several; holding a family out leaves out every run that belongs to it.
 * The classification is the configuration's and the host's alone: never a fitted value.
 */
#ifndef SPEEDUP_FAMILIES_H
#define SPEEDUP_FAMILIES_H

#include "core/job.h"

#include <stdbool.h>

typedef enum {
    FIT_FAMILY_DEDICATED,
    FIT_FAMILY_SHARED_STEP,
    FIT_FAMILY_SHARED_LONG,
    FIT_FAMILY_THREADS,
    FIT_FAMILY_BATCH,
    FIT_FAMILY_WEAK,
    FIT_FAMILY_PS,
    FIT_FAMILY_AVERAGING,
    FIT_FAMILY_COUNT
} fit_family;

/* "dedicated", "shared-step", ... (above). */
const char *fit_family_name(fit_family f);
/* One line: what the family is ("a dedicated ps master beside its workers"). */
const char *fit_family_says(fit_family f);
/* Does configuration c on a host of host_cores cores belong to family f? main_batch: the
 * plan's own global batch (fit_family_main_batch). */
bool fit_family_has(fit_family f, const job_config *c, double host_cores, long main_batch);

#endif
