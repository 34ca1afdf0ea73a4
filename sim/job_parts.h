/* job_parts — the simulated job's state, shared by sim/job.c (rounds: batch, epoch,
 * every:N) and sim/job_async.c (async, hogwild); not a public header. What the job does is
 * sim/job.h's. */
#ifndef SPEEDUP_JOB_PARTS_H
#define SPEEDUP_JOB_PARTS_H

#include "sim/cores.h"
#include "sim/engine.h"
#include "sim/job.h"

#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdbool.h>

typedef enum { PHASE_STARTUP, PHASE_TRAIN } phase;

typedef enum { JOB_SYNC, JOB_ASYNC, JOB_HOGWILD } job_async_mode;
enum { JOB_PULL, JOB_PUSH };

/* Where the optimizer update runs (model/costmodel.h: once per step, on the critical path). */
typedef enum {
    UPDATE_AFTER_STEP,            /* local SGD (epoch, every:N): every worker after each step */
    UPDATE_AFTER_RING,            /* batch sync, all-reduce: every rank after the exchange */
    UPDATE_ON_MASTER,             /* batch sync, ps: the master, between pushes and pulls */
} update_place;

struct job {
    job_spec spec;
    int k;                        /* K */
    job_schedule sched;
    double step_s;                /* mean step: costmodel_step_time */
    bool overlapped;              /* the exchange hides behind the steps: costmodel_overlapped */
    double update_s;              /* one update: costmodel_update_time */
    update_place update_at;
    double zeta, sigma_ln;        /* log-normal parameters of a step; sigma_ln = 0: constant */
    double rank_cv;               /* ς of the config (costmodel_rank_cv); 0: ranks alike */
    double *rank_speed;           /* (K) each rank's own factor on its steps, drawn per run
                                     (log-normal, mean 1, log-sd ς); NULL where ς = 0 */
    double *pool_s;               /* (pool_n) replayed steps scaled to this config; NULL: none */
    long pool_n;
    int remote;                   /* ps: workers that message the master */
    int workers_on_master;        /* workers 0..this−1 share the master's machine */
    double msg_local_s, msg_remote_s; /* ps: one message over shared memory / the network */
    costmodel_stage stages[COSTMODEL_MAX_STAGES + 1]; /* all-reduce: costmodel_allreduce_stages,
                                                         then Λ·(ρ − 1) on shared cores */
    int n_stages;
    double shard_phase_s;         /* sharded ps (remote 1): the local stage and one phase,
                                     costmodel_ps_local_time + costmodel_ps_phase_time */

    engine *e;
    int k_startup, k_step, k_push, k_update, k_pull, k_ring;
    int link;                     /* the master's link (ps) */
    gsl_rng *rng;

    /* Ranks that sleep while they wait and share the cores (contention_shared_rho > 1):
     * a round's steps are drawn when it starts, and each worker's are stretched to its
     * finish under processor sharing (model/gmax.h). NULL where each keeps its core. */
    double shared_rho;
    long round_n;                 /* steps in the current round */
    double *round_steps_s;        /* (K × steps_per_round) the round's draws, worker-major */
    double *round_total_s;        /* (K) each worker's sum of them */
    double *round_stretch;        /* (K) its finish under sharing ÷ that sum */
    size_t *round_order;          /* (K) the workers by their sum */

    /* Where the simulator schedules the host's cores (JOB_CONTENTION_SCHEDULED, and a job it
     * can play so): each step and its update are idle-core work on the cores, which decide
     * when it ends. NULL: every step is slowed by the closed form's ρ' instead. */
    cores *cores;
    engine_event *cores_ev;       /* the cores' next event, pending; NULL: none */
    int k_cores;
    double step_update_s;         /* the update after each step (UPDATE_AFTER_STEP): update_s,
                                     or its idle-core work where the cores are scheduled */
    double *step_part_s;          /* (K) the step's part of the work in progress */
    int *cores_done;              /* (K) the ranks whose work ends at a cores event */
    int master_entity;            /* the cores' entity that sends a parameter server's pulls:
                                     rank 0, or K for a dedicated master; -1 where the pulls
                                     go through the link (engine resource) instead */
    int pulling;                  /* the worker whose pull the master is sending on the
                                     cores; -1 none */
    bool *started;                /* (K) a ps worker began the next round after its own pull
                                     (start_after_pull); NULL where the cores are not
                                     scheduled */

    /* Per worker (K each). */
    double *arrive_s;             /* arrival at the current barrier */
    double *step_start_s;         /* start of the step in progress */
    double *compute_end_s;        /* end of its compute; its update follows (UPDATE_AFTER_STEP) */
    long *steps_left;             /* in the current round */
    job_worker *acc;

    /* The round in progress. */
    phase ph;
    int epoch;
    long round;                   /* within the epoch */
    long rounds_done;
    int arrived, msgs_done;
    int stage;                    /* all-reduce: the stage in progress, its steps left */
    long stage_left;
    double credit_s;              /* head start of the exchange before the barrier (overlap) */
    double comm_t0_s;             /* start of the exchange's current comm part */
    double update_t0_s;           /* start of the synchronisation's update */
    double comm_total_s, sync_update_total_s, barrier_wait_total_s, finish_s;

    job_span_fn span;
    void *span_ctx;

    /* Async and hogwild (sim/job_async.c): the master's two directions, each a queue of
     * requests in arrival order (pushes coming in, pulls going out); each worker has at
     * most one request in all. */
    job_async_mode async;
    int k_served, k_updated, k_astep, k_copied;
    double update_one_s;          /* hogwild: one updater's update (one core) */
    double wake_s;                /* a crowded master's wake: a pull's weights are read this
                                     long after its transfer starts (msg_s holds it, so the
                                     read comes before the transfer ends) */
    double *msg_s;                /* (K) each worker's message time to the master */
    int *in_queue, *out_queue;    /* (K each) rings of workers waiting to push / to pull */
    long in_head, in_len, out_head, out_len;
    int *req_kind;                /* (K) its request: JOB_PULL or JOB_PUSH */
    double *req_t_s;              /* (K) when it was queued */
    bool *pull_deferred;          /* (K) its pull waits for its own push's update (async) */
    long *steps_done;             /* (K) steps done this epoch */
    long *pulled;                 /* (K) version of the weights it computes on */
    int in_worker;                /* whose push is coming in (async: or being applied); -1: none */
    bool out_busy;                /* a pull is going out */
    bool applying;                /* async: the master applies a gradient, and starts nothing */
    int updating;                 /* hogwild: gradients being applied */
    long version;                 /* updates applied (completed) */
    int at_barrier;
    long *stale_count;            /* (stale_cap) how many applied gradients had each staleness */
    long stale_cap, stale_n;
    double stale_sum;
};


static inline void job_emit(job *j, int rank, trace_phase ph, double t0, double t1) {
    if (j->span && t1 > t0)
        j->span(j->span_ctx, rank, ph, t0, t1);
}

/* One step's compute span, drawn alike for every rank. */
static inline double job_draw_any_step(job *j) {
    if (j->pool_s)
        return j->pool_s[gsl_rng_uniform_int(j->rng, (unsigned long)j->pool_n)];
    if (j->sigma_ln == 0)
        return j->step_s;
    /* exp(ζ + σ·Z) is gsl_ran_lognormal's variate; the ziggurat normal is the fast one. */
    return exp(j->zeta + j->sigma_ln * gsl_ran_gaussian_ziggurat(j->rng, 1.0));
}

/* One step's compute span of rank w, at its own speed for the run. */
static inline double job_draw_step(job *j, int w) {
    const double d = job_draw_any_step(j);
    return j->rank_speed ? d * j->rank_speed[w] : d;
}


/* Async and hogwild (sim/job_async.c): 0, or -1 out of memory. */
int job_async_new(job *j);
void job_async_free(job *j);
/* Starts the training after the start-up barrier (every worker at engine_now). */
void job_async_start(job *j);
/* Resets the per-run state. */
void job_async_reset(job *j);
/* Fills the result's async part and the workers' accounting after a run. */
void job_async_result(job *j, job_result *r);

#endif
