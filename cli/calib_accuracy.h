/* calib_accuracy — the accuracy plan of `speedup calibrate --accuracy-plan SECONDS`: the
 * training runs model/efficiency.h's fit needs, each to the end of an E-epoch schedule,
 * the test set evaluated after every epoch and a fixed subset of it every N global steps
 * (`speedup train --eval-every N`), sized so that the plan takes about the stated budget.
 *
 * The runs, in the order they run (B = 32, allreduce, one core per worker):
 *   1x1 batch                       the reference curve f (G = B, H = 1)
 *   2x1 batch, --batch-per-worker   a global batch of 2B without local steps: w alone
 *   2x1 every:8                     local SGD, H = 8: γ
 *   2x1 epoch                       local SGD, H = the steps of an epoch: γ at another ln H
 *   4x1 every:8                     another K: the K·B and (1 − 1/K) dependences
 *   4x1 async                       stale gradients (mean staleness about 3, a dedicated
 *                                   master: 5 ranks): β, and the staleness predictions
 *                                   may reach (model/efficiency.h)
 * Traces: acc-KxT-SYNC[-bpw]-bB.trace.jsonl (every:8 written every8).
 *
 * Size: every run trains D examples per epoch for E epochs and evaluates min(D, 10000)
 * test examples per epoch (a forward pass: about a third of a training step's cost per
 * example) plus the subsets; at CALIB_ACCURACY_RATE examples per second of budget (well
 * under what an idle core trains, for a host shared with other work: docs/time-to-accuracy.md)
 *   D = ⌊budget·rate / (runs·E·1.15) / 64⌋·64, clamped to [640, 60000];
 * N global steps between subset points: about D/10 training examples (ten a reference
 * epoch), a step being the run's global batch G (B; K·B with --batch-per-worker or local
 * SGD): N = max(1, round(D / (10·G))); every:8 rounds it to a multiple of 8 (the trainer
 * evaluates only the averaged model), epoch sync has none (its workers share a model only
 * at the epoch's end, where the whole test set is evaluated anyway) and neither has async
 * (the model is the server's, evaluated at each epoch's end). The subset: min(2000,
 * D) test examples. The fit is for this D and E: predictions with --target-accuracy
 * default to them.
 */
#ifndef SPEEDUP_CALIB_ACCURACY_H
#define SPEEDUP_CALIB_ACCURACY_H

#include <stdbool.h>
#include <stddef.h>

#define CALIB_ACCURACY_RATE 400.0
#define CALIB_ACCURACY_BATCH 32

enum { CALIB_ACCURACY_RUNS = 6, CALIB_ACCURACY_DEFAULT_EPOCHS = 10 };

typedef struct {
    int workers;
    const char *sync;             /* "batch", "every:8", "epoch", "async" */
    bool batch_per_worker;
} calib_accuracy_run;

/* The plan's runs (see above), in order. */
extern const calib_accuracy_run calib_accuracy_runs[CALIB_ACCURACY_RUNS];

/* D, examples per epoch of every run, for a plan of budget_s seconds and E epochs. */
long calib_accuracy_limit(double budget_s, int epochs);
/* N, the global steps between two subset evaluations of run r of `limit` examples; 0: none
 * (epoch sync). */
long calib_accuracy_eval_every(const calib_accuracy_run *r, long limit);
/* The trace file name of run r. */
void calib_accuracy_trace_name(const calib_accuracy_run *r, char *buf, size_t len);

/* Runs the plan into dir (which must exist), one run after the other, progress on stderr.
 * 0, or -1 with one line in err. */
int calib_accuracy_plan_run(const char *dir, double budget_s, int epochs, const char *hostfile, const char *net,
                            char *err, int errlen);

#endif
