/* job — what a data-parallel training job is, shared by every part that runs, records,
 * fits or predicts one (train/, trace/, fit/, model/, sim/): its configuration, its sync
 * mode and topology, how many ranks it has and what each rank does.
 *
 *   K workers × T cores, sync batch | every:N | epoch | async[:N] | hogwild[:N],
 *   topology ps | allreduce, a ps master that trains too (worker) or only serves
 *   (dedicated: one rank more), D examples in batches of B (split over the workers, or
 *   B each with batch_per_worker), E epochs.
 *
 * The names below are the ones flags, CSV columns, trace headers and calibration files
 * use; parsers return 0 or -1 and never print. Pure functions on plain structs.
 */
#ifndef SPEEDUP_CORE_JOB_H
#define SPEEDUP_CORE_JOB_H

#include <stdbool.h>

/* The most cores a host (or a cluster's machine) may have: counts of cores are ints. */
#define JOB_MAX_HOST_CORES 1048576

/* async, hogwild: Elephas' asynchronous modes; every_n is then the pull period N (a
 * worker pulls the weights every N of its steps). */
typedef enum { JOB_SYNC_BATCH, JOB_SYNC_EPOCH, JOB_SYNC_EVERY, JOB_SYNC_ASYNC, JOB_SYNC_HOGWILD } job_sync;
typedef enum { JOB_TOPO_PS, JOB_TOPO_ALLREDUCE, JOB_TOPO_COUNT } job_topology;
/* Parameter server only: does rank 0 train as well (worker) or only serve (dedicated)? */
typedef enum { JOB_MASTER_WORKER, JOB_MASTER_DEDICATED } job_master;

/* What the user runs. */
typedef struct {
    int workers;             /* K ≥ 1 training workers (a dedicated master is not one) */
    int cores;               /* T ≥ 1 per worker */
    job_sync sync;
    int every_n;             /* steps between synchronisations for JOB_SYNC_EVERY; the
                                pull period N for async and hogwild */
    job_topology topology;
    job_master master;
    bool batch_per_worker;   /* batch sync: every worker takes B (true) or B/K (false) */
    long examples;           /* D */
    long batch;              /* B: global batch */
    int epochs;              /* E */
} job_config;

/* Derived schedule quantities of a config (DESIGN.md's b, s, p). */
typedef struct {
    double local_batch;      /* b: the slowest worker's examples per step (⌈B/K⌉ when split) */
    long steps_per_epoch;    /* s = ⌈D/(K·b)⌉ */
    long steps_per_round;    /* p */
    long rounds_per_epoch;   /* ⌈s/p⌉ */
} job_schedule;

/* DESIGN.md's b, s, p of a config: the schedule the trainer runs and the model times. */
job_schedule job_schedule_of(const job_config *c);

/* n(D), the examples one rank of the trainer loads: the config's D training examples and
 * min(D, test_examples) of the test file (test_examples >= 0; 0: D alone). The one place
 * that says it: the data load (model/costmodel.h) and the data held (model/memory.h). */
double job_loaded_examples(const job_config *c, double test_examples);

/* Returns 0 when c is a job that can run, else -1 with a one-line reason in err naming
 * the bad value (batch sync over more workers than examples in a batch, async without a
 * dedicated master, ...). */
int job_check(const job_config *c, char *err, int errlen);

/* What one rank of a job does: rank 0 of a parameter server with two ranks or more is its
 * master (training too, or dedicated); every other rank (an all-reduce's, a single
 * rank's) a worker. */
typedef enum { JOB_ROLE_WORKER, JOB_ROLE_MASTER_WORKER, JOB_ROLE_MASTER, JOB_ROLE_COUNT } job_role;

/* R: the job's ranks, K, or K + 1 with a dedicated master. The one place that says it. */
int job_ranks(const job_config *c);
job_role job_role_of(const job_config *c, int rank);
const char *job_role_name(job_role r);   /* "worker", "master+worker", "master" */
/* Is the job's master a dedicated parameter server (ps topology, master dedicated)? */
bool job_dedicated_master(const job_config *c);

/* Names used in flags, CSV and JSON: "batch", "epoch", "every:N", "async", "hogwild"
 * ("async:N", "hogwild:N" with a pull period N > 1); "ps", "allreduce"; "worker",
 * "dedicated". */
const char *job_topology_name(job_topology t);
int job_topology_parse(const char *s, job_topology *out);
int job_sync_parse(const char *s, job_sync *out, int *every_n);
/* Writes "batch", "epoch", "every:N", "async[:N]" or "hogwild[:N]" into buf. */
void job_sync_format(job_sync s, int every_n, char *buf, int buflen);
const char *job_master_name(job_master m);
int job_master_parse(const char *s, job_master *out);
/* Is s one of Elephas' asynchronous modes (async, hogwild)? */
bool job_sync_is_async(job_sync s);

#endif
