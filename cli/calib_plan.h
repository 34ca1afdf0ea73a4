/* calib_plan — the measurement plan of `speedup calibrate` on this machine: short
 * `speedup train --workers K --threads T` runs at configurations chosen from the host's
 * cores, each run CALIB_PLAN_REPEATS times, and `mpirun -np 2 speedup commbench` once,
 * every one writing a *.trace.jsonl into a directory that `calibrate --from-traces` then
 * fits.
 *
 * The configurations (calib_plan_runs; P = cores of this host): every power-of-two split
 * K×T ≤ min(P, 8) at batch 32 (batch and epoch sync at K ≥ 2), K = 1 at two more batches
 * and T = max at one (c0, c1, σ), 2×1 ps, one rank more than cores ((P+1)×1 batch,
 * every:4 and epoch, and batch again at 4 examples a rank) and two per core ((2P)×1 batch
 * at 16 and 4 a rank) for what ρ > 1 costs, and P×1 batch and epoch ps with a dedicated
 * master (its yield and wake). 16 configurations on 2 cores.
 *
 * Repeats run interleaved (A B C … A B C … A B C), so that the fit measures the
 * run-to-run spread from identical runs and a slow spell of the host lands on one repeat
 * of several configurations; three, not two, because the host drifts from minute to
 * minute. Trace names carry the repeat: train-KxT-SYNC-TOPOLOGY-bB-rN.trace.jsonl (every:N
 * as every-N). Each run's size follows the budget (calib_plan_limit_for, from two pilot
 * runs). The runs go one after
 * the other, progress on stderr, each line naming its repeat; a loaded host is warned of.
 * Every configuration and why, and what the repeats and the sizes were chosen from:
 * docs/calibration.md ("The plan in full").
 *
 * The runs are this binary run again (cli/spawn.h), their output to /dev/null. Errors: -1
 * with one line in err.
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

/* Examples per run for the n runs of a plan (and its commbench) to take budget_s seconds on
 * a host of host_cores cores where a run costs run_s to start and stop and an example
 * example_s on one core: run r's examples spread over min(K·T + a dedicated master,
 * host_cores) cores at 85% efficiency beyond one. Whole batches of 64, 128 to 60000;
 * *plan_s the time the plan is then expected to take (above budget_s when 128 examples
 * a run already are). What the pilot runs measure (calib_plan_run_rounds). */
long calib_plan_limit_for(const calib_plan_entry *runs, int n, int host_cores, double budget_s, double run_s,
                          double example_s, double *plan_s);

/* The training runs of the plan on a host of host_cores cores, in the order they run
 * (every configuration, then all of them again, CALIB_PLAN_REPEATS rounds); returns how
 * many. */
int calib_plan_runs(int cores, calib_plan_entry out[CALIB_PLAN_MAX_RUNS]);

/* The trace file name of run r (the header's pattern). */
void calib_plan_trace_name(const calib_plan_entry *r, char *buf, size_t len);

/* Runs the plan into dir (which must exist), limit examples per run (0: from budget_s),
 * training net (train's --net; NULL: its default network). Returns 0, or -1 with one line
 * in err. */
int calib_plan_run(const char *dir, double budget_s, long limit, const char *hostfile, const char *net, char *err,
                   int errlen);

/* Runs each of runs[0..n) once (their repeat numbers name the traces: one past the plan's
 * for a run again), limit examples a run, training net (NULL: the default). What
 * `calibrate` does with the configurations a poor fit disagrees with. 0, or -1 with err. */
int calib_plan_rerun(const char *dir, const calib_plan_entry *runs, int n, long limit, const char *hostfile,
                     const char *net, char *err, int errlen);

/* Called after every round of the plan (all its configurations once, repeat = 1, 2, …):
 * 0 to go on, or -1 with one line in err to stop the plan. */
typedef int (*calib_plan_round_fn)(void *ctx, int repeat, char *err, int errlen);

/* calib_plan_run with after_round (may be NULL) called after each round, before the
 * commbench: `speedup report` runs its held-out configurations there, so that the plan's
 * runs and the runs it is checked against share the same minutes of a drifting host. */
int calib_plan_run_rounds(const char *dir, double budget_s, long limit, const char *hostfile, const char *net,
                          calib_plan_round_fn after_round, void *ctx, char *err, int errlen);

#endif
