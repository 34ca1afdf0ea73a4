/* job — a data-parallel training job simulated on the engine (sim/engine.h): K workers
 * × T cores that start up, compute, update, wait at barriers and synchronise, round after
 * round, on the cost model's schedule (model/costmodel.h).
 *
 *   job *j = job_new(&spec, err, sizeof err);        // params, config, launch, replay
 *   job_set_timeline(j, on_span, ctx);               // optional: every span, in time order
 *   job_run(j, job_seed(seed, r), &res, err, sizeof err);   // one run; res: makespan, means
 *   const job_worker *w = job_workers(j);            // the last run, per worker
 *   job_free(j);
 *
 * A round: every worker's steps (log-normal with mean costmodel_step_time and the
 * calibrated CV, or resampled from a measured trace with job_replay, each span scaled to
 * this configuration), a barrier at the slowest, then the synchronisation — a ps master's
 * link taking each push and pull one at a time, or a ring of 2(K−1) steps — less what an
 * overlapping all-reduce hid behind the steps; the optimizer update once per step where
 * the trainer runs it. Where ranks share a host's cores, the cores are scheduled
 * (sim/cores.h, job_contention): steps drawn at their idle-core time, placed on
 * processors and shared there. Async and hogwild (sim/job_async.c) play the master's two queues
 * request by request and count every gradient's staleness. Start-up is parallel or
 * sequential (job_launch): the same makespan, W(K) = costmodel_startup_time.
 *
 * With CV = 0, and no rank sharing a core (or JOB_CONTENTION_CLOSED_FORM), every span
 * is the closed form's: the time equals costmodel_total_time and
 * the breakdown costmodel_breakdown_of, to rounding (async: with one worker; with more the
 * time is at least the closed form's bound). Per worker, startup + compute + update +
 * comm + wait = makespan, every run. master_peak_bytes is an estimate (3·M for a ps,
 * 3·M + M/K for a ring's rank 0, (3 + T)·M for a hogwild master).
 *
 * What each phase plays in detail (the overlap's credit, ranks that block at a barrier,
 * the sequential launch, the replay's scaling): docs/simulator.md ("How a job is played").
 *
 * Memory: O(K) plus the replayed steps (and a round's K·p draws where ranks that block
 * share the cores), allocated by job_new and reused by every job_run; async's staleness
 * table, as long as the largest staleness, grows by doubling within a run. At most one
 * event per worker and one for the link or ring is pending (hogwild: one per updater).
 * job_replay_read's arrays are owned by the job_replay. Nothing prints; errors come back
 * as -1 (NULL) and a one-line message in err.
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

/* Where ranks share a host's cores, how a step learns what that costs it. */
typedef enum {
    JOB_CONTENTION_SCHEDULED,    /* the simulator schedules the cores (sim/cores.h) where it
                                    can: a synchronous job on one host, one core a worker;
                                    elsewhere as the closed form */
    JOB_CONTENTION_CLOSED_FORM,  /* every step slowed by the closed form's ρ' */
} job_contention;

typedef struct {
    costmodel_params params;
    job_config config;
    job_launch launch;
    const job_replay *replay;    /* NULL: log-normal spans with params.cv */
    job_contention contention;
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
