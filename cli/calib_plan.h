/* calib_plan — the measurement plan of `speedup calibrate` on this machine: short
 * `speedup train --workers K --threads T` runs at configurations chosen from the host's
 * cores, and `mpirun -np 2 speedup commbench`, every one writing a *.trace.jsonl into a
 * directory that `calibrate --from-traces` then fits.
 *
 * The configurations (P = cores of this host, n = 1, 2, 4, ... ≤ min(P, 8)):
 *   every split K×T = n with K, T powers of two, global batch B = 32, allreduce;
 *   K ≥ 2 in both batch and epoch sync (at K = 1 the two are the same run);
 *   K = 1 again at B/2 and 2B (c0 and c1 need two batch sizes, and leave-one-out needs a
 *   third so that leaving one out keeps them fittable), T = max at 2B as well (σ);
 *   2×1 batch with the parameter server (the ps topology's own training run).
 * On 2 cores: 1×1 b32, 1×1 b16, 1×1 b64, 1×2 b32, 1×2 b64, 2×1 batch, 2×1 epoch,
 * 2×1 batch ps: 8 runs of one epoch of --limit examples.
 *
 * The size of each run (--limit, the examples per epoch) follows the time budget:
 * calib_plan_limit. The runs go one after the other (never two at once, so they do not
 * slow each other), progress on stderr.
 */
#ifndef SPEEDUP_CALIB_PLAN_H
#define SPEEDUP_CALIB_PLAN_H

#define CALIB_PLAN_DEFAULT_BUDGET_S 120.0
#define CALIB_PLAN_BATCH 32

/* The 1-, 5- and 15-minute load averages from /proc/loadavg: 0, or -1 (all three 0) where
 * they cannot be read. */
int calib_plan_load_averages(double load[3]);

/* Examples per run for a plan that should take about budget_s seconds on this host. */
long calib_plan_limit(double budget_s);

/* Runs the plan into dir (which must exist), limit examples per run (0: from budget_s).
 * Returns 0, or -1 with one line in err. */
int calib_plan_run(const char *dir, double budget_s, long limit, const char *hostfile, char *err, int errlen);

#endif
