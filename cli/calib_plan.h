/* calib_plan — the measurement plan of `speedup calibrate` on this machine: short
 * `speedup train --workers K --threads T` runs at configurations chosen from the host's
 * cores, each run CALIB_PLAN_REPEATS times, and `mpirun -np 2 speedup commbench` once,
 * every one writing a *.trace.jsonl into a directory that `calibrate --from-traces` then
 * fits.
 *
 * The configurations (P = cores of this host, n = 1, 2, 4, ... ≤ min(P, 8)):
 *   every split K×T = n with K, T powers of two, global batch B = 32, allreduce;
 *   K ≥ 2 in both batch and epoch sync (at K = 1 the two are the same run);
 *   K = 1 again at B/2 and 2B (c0 and c1 need two batch sizes, and leaving a configuration
 *   out needs a third so that c0 and c1 stay fittable), T = max at 2B as well (σ);
 *   2×1 batch with the parameter server (the ps topology's own training run);
 *   (P+1)×1 batch at 3B/2 and (P+1)×1 every:4 at B: one rank more than cores,
 *   oversubscribed, for what ρ > 1 does beyond compute (startup_cpu, and the rounds of one
 *   step and of four: oversub_compute, balance); (2P)×1 batch at 32P (16 examples a
 *   worker): two on every core, oversub_compute again with nothing to pack;
 *   P×1 batch and epoch ps with a dedicated master: how much of a core its polling takes
 *   between exchanges one step and an epoch apart (master_yield, master_yield_loss), and
 *   what each of its messages takes beyond the link's α + β·M, with no core of its own
 *   (master_wake, from the batch run's exchanges; the name carries "-dedicated").
 * On 2 cores: 1×1 b32, 1×2 b32, 2×1 batch, 2×1 epoch, 1×1 b16, 1×1 b64, 1×2 b64, 2×1 batch
 * ps, 3×1 batch b48, 3×1 every:4, 4×1 batch b64, 2×1 batch and epoch ps dedicated: 13
 * configurations of one epoch of --limit examples.
 *
 * Repeats: every configuration runs three times, interleaved (A B C … A B C … A B C), so
 * that the fit measures the run-to-run spread (run_cv) from identical runs, and a slow
 * spell of the host lands on one repeat of several configurations rather than on every
 * repeat of one. Three, not two: the host's speed drifts from minute to minute, and with
 * two rounds the whole plan sees one difference of that drift (on the 2-core VM the plan's
 * pairs said 1.4 % while the held-out runs beside them spread 4.2 %, and the interval held
 * 67 % of them). The validation leaves every repeat of a configuration out together.
 * Trace names carry the repeat: train-KxT-SYNC-TOPOLOGY-bB-rN.trace.jsonl (every:N as
 * every-N).
 *
 * The size of each run (--limit, the examples per epoch, and as many test examples)
 * follows the time budget: calib_plan_limit (the fit uses per-step spans, not one number
 * per run). The
 * runs go one after the other (never two at once, so they do not slow each other),
 * progress on stderr, each line naming its repeat.
 */
#ifndef SPEEDUP_CALIB_PLAN_H
#define SPEEDUP_CALIB_PLAN_H

#include <stddef.h>

#define CALIB_PLAN_DEFAULT_BUDGET_S 120.0
#define CALIB_PLAN_BATCH 32
#define CALIB_PLAN_REPEATS 3
#define CALIB_PLAN_MAX_RUNS 96

/* One training run of the plan. */
typedef struct {
    int workers, cores;
    const char *sync, *topology;  /* "batch"/"epoch", "allreduce"/"ps" */
    long batch;
    int repeat;                   /* 1 .. CALIB_PLAN_REPEATS */
    const char *master;           /* "dedicated", or NULL: the master trains */
} calib_plan_entry;

/* The 1-, 5- and 15-minute load averages from /proc/loadavg: 0, or -1 (all three 0) where
 * they cannot be read. */
int calib_plan_load_averages(double load[3]);

/* Examples per run for a plan that should take about budget_s seconds on this host: about
 * 20 per second of budget, whole batches of 64 (120 s → 2368), 128 to 60000. */
long calib_plan_limit(double budget_s);

/* The training runs of the plan on a host of host_cores cores, in the order they run
 * (every configuration, then every configuration again); returns how many. */
int calib_plan_runs(int cores, calib_plan_entry out[CALIB_PLAN_MAX_RUNS]);

/* The trace file name of run r (see above). */
void calib_plan_trace_name(const calib_plan_entry *r, char *buf, size_t len);

/* Runs the plan into dir (which must exist), limit examples per run (0: from budget_s).
 * Returns 0, or -1 with one line in err. */
int calib_plan_run(const char *dir, double budget_s, long limit, const char *hostfile, char *err, int errlen);

/* Called after every round of the plan (all its configurations once, repeat = 1, 2, …):
 * 0 to go on, or -1 with one line in err to stop the plan. */
typedef int (*calib_plan_round_fn)(void *ctx, int repeat, char *err, int errlen);

/* calib_plan_run with after_round (may be NULL) called after each round, before the
 * commbench: `speedup report` runs its held-out configurations there, so that the plan's
 * runs and the runs it is checked against share the same minutes of a drifting host. */
int calib_plan_run_rounds(const char *dir, double budget_s, long limit, const char *hostfile,
                          calib_plan_round_fn after_round, void *ctx, char *err, int errlen);

#endif
