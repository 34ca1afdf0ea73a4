/* job — a data-parallel training job simulated on the engine (sim/engine.h): K workers
 * × T cores that start up, compute, update, wait at barriers and synchronise, round after
 * round.
 *
 * The schedule is the cost model's (model/costmodel.h): E epochs of s local steps, in
 * rounds of p steps (batch p = 1, every:n p = n, epoch p = s); the last round of an epoch
 * has s mod p steps when p does not divide s. One round:
 *   1. every worker computes its steps; each step's span is drawn independently:
 *      log-normal with mean costmodel_step_time (which carries c0, c1, σ, T, the local
 *      batch b and the oversubscription ρ') and the calibrated CV, from a GSL
 *      gsl_rng_mt19937 seeded per run; or bootstrapped from a measured trace (replay);
 *   2. a barrier: the round goes on when the slowest worker arrives; the others wait;
 *   3. the synchronisation, a collective every worker leaves together:
 *      ps: the master's link (one engine resource, latency α, bandwidth 1/β) takes each
 *          remote worker's push of M bytes one at a time, in rank order, then sends the
 *          averaged model back to each one at a time: 2·(K−1)·(α+βM) when the master
 *          trains too (rank 0 needs no message), 2·K·(α+βM) when it is dedicated (each
 *          message master_wake more where its workers take every core:
 *          costmodel_message_time);
 *      allreduce: a ring of 2(K−1) steps, each moving M/K bytes over every link at once
 *          (α + β·M/K). The K links are identical and start together after the barrier,
 *          so one event stands for a step's K simultaneous transfers.
 *      With an overlap φ > 0 and batch sync through an all-reduce (costmodel_overlaps:
 *      DDP's buckets go out while backward still runs), the exchange began before the
 *      barrier: at max over the workers of (its arrival − φ·its last step), when the last
 *      worker's first bucket was ready. That head start is a credit the exchange spends
 *      first (the scheduler's delay, then the ring steps, each shortened to what is left
 *      of it, 0 when the credit covers it); the round waits only for the exposed rest,
 *      which is its comm time; the credit is at most (1 − ε)·S, what can hide (the
 *      last bucket goes out only when backward ends). With CV = 0 that is
 *      max(ε·S, S − φ·step), the closed form's X(K); the step itself is the closed
 *      form's, (1 + χ) times as long where the exchange runs beside it.
 * The optimizer update (costmodel_update_time, constant) runs once per step, where the
 * trainer runs it:
 *      local SGD (epoch, every:N): every worker right after each of its steps;
 *      batch sync, ps: the master, between the last push and the first pull;
 *      batch sync, allreduce: every rank, after the ring.
 * A synchronisation's update is every worker's update time (they all wait for it, as the
 * exchange is every worker's comm), so each worker's update time is E·s·upd whatever the
 * schedule. With CV = 0 every span is the closed form's, so the simulated time equals
 * costmodel_total_time and the breakdown costmodel_breakdown_of, to rounding.
 *
 * Async and hogwild (sim/job_async.c) have no rounds: every worker takes its s steps,
 * pulling the weights every N (every_n) and pushing each step's gradient; the master takes
 * one push in and sends one pull out at a time, each direction in arrival order (async: a
 * push is its transfer and then the update, during which nothing starts; hogwild: the
 * transfer, the update on one of T updaters while the master goes on; a worker's pull
 * waits for its own push); the epoch ends with a barrier once every worker is
 * done and the master idle. The staleness of every gradient (updates applied between its
 * worker's pull and its own) is counted: job_result's median, 90th percentile and mean.
 * With one worker and CV = 0 the time is the closed form's (costmodel_async_of); with
 * more it is at least the closed form's bound, more where requests collide.
 *
 * Oversubscription (ρ = (K·T + m)/P > 1, m = 1 − y for a dedicated master's polling core)
 * slows every step and update by the constant ρ' of costmodel_slowdown (ρ, the threads'
 * packing on the busiest core over a short round, κ), the same for every worker, not by a
 * sharing that changes as workers reach a barrier: MPI waits by polling, so a waiting
 * worker keeps its cores busy (async and hogwild workers, which wait on the master after
 * every step, are counted in ρ by the share of their cycle they compute, and nap at the
 * epoch's barrier, so they are never packed: the closed form's ρ', constant too). Ranks whose waits block (gloo's: costmodel_shared_rho > 1
 * on one host) do change it: a round's steps are drawn when it starts and each worker's
 * are stretched to when it would end under processor sharing (the first to finish gives
 * its core to the rest; model/gmax.h), so the round's mean is the closed form's
 * CV·step·√p·G_ρ(K) beyond its steps.
 *
 * Start-up W(K) = w0 + w1·K + d·(ρ − 1) (costmodel_startup_time):
 *   parallel    every worker starts at 0 and takes W(K) (they load a shared launcher
 *               and file system at once, so each start-up grows with K);
 *   sequential  a launcher starts one worker after the other, w1 apart; worker i starts at
 *               i·w1 and takes w1 + w0 + d·(ρ − 1) (its own launch, then its set-up); training begins
 *               when the last is up, at W(K). Time before a worker's launch and after its
 *               set-up is wait. Same makespan as parallel, a different breakdown.
 *
 * Replay: the steps of a measured trace (trace/traceinfo.h: compute events with examples
 * > 0; a rank's empty slice or a dedicated master's turn is no step) are resampled with
 * replacement. Each span is scaled by costmodel_step_time(this config) / the model's step
 * on the trace's configuration and host cores at that span's own examples: the measured
 * level and spread are kept, the model supplies only the change of configuration, and a
 * short slice (⌊B/K⌋ where others take ⌈B/K⌉, an epoch's short last batch) counts as the
 * full step it stands for in the simulated schedule, not as a fast one that would bias
 * the mean down and widen the spread. The trace's update spans are not replayed: the
 * update is the model's u.
 *
 * Accounting per worker: startup + compute + update + comm + wait = makespan (busy +
 * idle), every worker, every run. The master's peak memory is an estimate: a parameter
 * server keeps the model, the momentum (its running sum takes each averaged push) and one
 * receive buffer for the push it is serving (served one at a time): 3·M; a ring's rank 0
 * keeps model, gradient, momentum and one incoming chunk: 3·M + M/K; a hogwild master
 * (3 + T)·M (model/memory.h).
 *
 * Memory is O(K) plus the replayed steps: at most one event per worker and one for the
 * link or ring is pending (hogwild: one per updater; a crowded master: one read of a
 * pull's weights); async counts staleness in a table
 * as long as the largest staleness, not per gradient. Nothing prints; errors come back as a status and a one-line
 * message.
 */
#ifndef SPEEDUP_JOB_H
#define SPEEDUP_JOB_H

#include "model/costmodel.h"
#include "trace/trace.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

typedef enum { JOB_LAUNCH_PARALLEL, JOB_LAUNCH_SEQUENTIAL } job_launch;

/* Per-step compute spans measured in a trace, for replay. */
typedef struct {
    double *steps_s;         /* (n) owned */
    long *examples;          /* (n) owned: each step's examples, > 0 */
    long n;
    job_config config; /* the run they were measured on */
    double host_cores;       /* P of the measuring host; 0 unknown */
} job_replay;

/* Reads the steps of a trace; NULL with "PATH: line L: ..." or
 * "PATH: no steps to replay (...)" in err. */
job_replay *job_replay_read(const char *path, char *err, int errlen);
void job_replay_free(job_replay *r);                  /* NULL is a no-op */

typedef struct {
    costmodel_params params;
    job_config config;
    job_launch launch;
    const job_replay *replay;    /* NULL: log-normal spans with params.cv */
} job_spec;

/* One worker's time; the five add up to the makespan. */
typedef struct {
    double startup_s, compute_s, update_s, comm_s, wait_s;
} job_worker;

typedef struct {
    double makespan_s;
    double startup_s, compute_s, update_s, comm_s, wait_s;  /* means over the workers */
    double barrier_wait_s;       /* mean wait of a worker at one training barrier */
    long rounds;                 /* training barriers passed */
    double master_peak_bytes;
    /* async, hogwild: the gradients the master applied and their staleness (the updates
     * applied between the pull of the weights a gradient was computed on and its own):
     * median and 90th percentile (as trace/traceinfo.h computes them) and mean; 0 otherwise */
    long updates;
    double staleness_median, staleness_p90, staleness_mean;
    uint64_t events;             /* engine events run */
    long peak_pending;           /* most events pending at once: at most K + 1 (hogwild K + T) */
} job_result;

/* Called once per span of the schedule, in time order per worker (a timeline). */
typedef void (*job_span_fn)(void *ctx, int rank, trace_phase ph, double t0_s, double t1_s);

typedef struct job job;

/* A simulator for one job, reusable across runs. NULL with the reason in err (a config
 * costmodel_check refuses, out of memory). */
job *job_new(const job_spec *spec, char *err, int errlen);
void job_free(job *j);                                /* NULL is a no-op */
void job_set_timeline(job *j, job_span_fn fn, void *ctx);
/* Simulates the whole job once with the RNG seeded by seed. 0, or -1 with err. */
int job_run(job *j, unsigned long seed, job_result *out, char *err, int errlen);
/* The last run's accounting, one entry per worker (K entries). */
const job_worker *job_workers(const job *j);

/* The seed of replication r of a sweep seeded with seed: distinct for distinct pairs. */
unsigned long job_seed(unsigned long seed, int r);
/* An MT19937 generator (gsl_rng_free it), or NULL out of memory. GSL's error handler is
 * turned off for this call only and restored: the process's handler stays the caller's. */
gsl_rng *job_rng_new(void);

#endif
