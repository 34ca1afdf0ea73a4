/* trainer — the training run of one rank: start MPI when asked (train/sync.h), load the
 * data, build or resume the network (rank 0) and broadcast it, run the epochs of SGD steps
 * with the learning-rate schedule and the chosen synchronisation, evaluate (the test set
 * split over the ranks), checkpoint (rank 0), and time every phase on the common clock
 * into ONE trace/trace.h trace gathered to rank 0.
 *
 *   trainer_config c; trainer_config_default(&c); ... set data, epochs, sync ...
 *   int rc = trainer_run(&c, &r, err, sizeof err);   // every rank
 *   if (rc == -1) { report on rank 0; trainer_finish(); }   // failed on every rank
 *   if (rc == -2) { report; trainer_abort(1); }              // failed on this rank only
 *   trainer_result_release(&r);
 *
 * Synchronisation (K = the training ranks; rank 0 is not one with --master dedicated):
 *   batch            synchronous SGD: the global batch split over the K ranks in slices
 *                    that differ by at most one example (the largest ⌈B/K⌉, the cost
 *                    model's b); summed gradients, so K ranks follow one rank's trajectory
 *   epoch, every:N   local SGD on contiguous shards, weights averaged every N steps and at
 *                    every epoch's end; momentum stays local
 *   async, hogwild   Elephas' modes (train/asyncps.h): rank 0 serves, workers pull and push
 * The schedule is the cost model's (job_schedule_of): trainer_slice and
 * trainer_steps_per_epoch state it. Every step records compute, then the update as its own
 * phase; each rank's phases tile its time. The whole test set is evaluated after every
 * epoch (eval "test"), eval_every's fixed subset every N global steps where the models are
 * equal (eval "subset"); stop_at_accuracy stops every rank after the same epoch.
 * Slices, shards, when the subset is evaluated and why: docs/data-parallel.md ("One rank's
 * run in full").
 *
 * Failures every rank saw (bad data, more ranks than examples or than the batch, a bad
 * checkpoint, a diverging loss in batch sync) are agreed on before any other collective:
 * -1 on every rank, MPI still up. A failure only this rank saw: -2, and trainer_abort ends
 * the job, so no rank hangs. Never prints: progress goes to the caller's callback (rank 0
 * only), failures to err. A result owns subset_curve (trainer_result_release).
 */
#ifndef SPEEDUP_TRAINER_H
#define SPEEDUP_TRAINER_H

#include "core/job.h"
#include "train/dataset.h"
#include "train/net.h"

#define TRAINER_MAX_EPOCHS 1000
#define TRAINER_MAX_RANKS 1024 /* ranks whose peak memory the result lists */

typedef enum { SCHEDULE_COSINE, SCHEDULE_STEP } trainer_schedule;

typedef struct {
    const char *data_dir;
    long limit;               /* ≤ 0: every example; else the first N of train and of test */
    int epochs, batch;
    double lr, momentum, weight_decay;
    trainer_schedule schedule;
    double warmup_epochs;         /* linear ramp from 0 to the schedule's rate over these epochs */
    const char *net_spec;
    unsigned long seed;
    int threads;
    int stop_after;               /* > 0: stop after this epoch, as if interrupted */
    long eval_every;              /* > 0: evaluate the fixed subset every N global steps (see above) */
    long eval_subset;             /* its size (at most the test set's) */
    double stop_at_accuracy;      /* > 0: stop after the first epoch whose test accuracy reaches it */
    const char *checkpoint_path;  /* NULL: none; else saved after every epoch */
    const char *resume_path;      /* NULL: fresh start */
    const char *trace_path;       /* NULL: no trace */
    const char *git;              /* recorded in the trace header */
    int mpi;                      /* start MPI (the process runs under mpirun) */
    job_sync sync;
    int every_n;                  /* sync every:N */
    job_topology topology;
    job_master master;
    int batch_per_worker;         /* batch sync: every training rank takes B (global K·B) */
    /* Called on every rank at the start of every global step (may be NULL): where a test
     * makes a rank fail (the CLI's SPEEDUP_TEST_KILL, cli/cmd_train.c). */
    void (*step_hook)(void *ctx, int rank, long step);
    void *step_hook_ctx;
    /* Called after every step (may be NULL). */
    void (*progress)(void *ctx, int epoch, int epochs, long done, long total, double examples_per_s,
                     double loss);
    void *progress_ctx;
} trainer_config;

/* One accuracy measurement, as rank 0 recorded it (its trace event's, trace/traceinfo.h's
 * accuracy point). */
typedef struct {
    int epoch;                /* epochs completed */
    long step;                /* global steps done */
    double train_time_s;      /* rank 0's common-clock time less its evaluations and checkpoints so far */
    double examples_seen;     /* training examples of every rank so far (resumed epochs included) */
    long evaluated;           /* test examples evaluated */
    double accuracy;          /* 0..1 */
    double train_loss;        /* mean step loss since the previous measurement of its kind */
} trainer_accuracy;

typedef struct {
    int epochs_run;                               /* this run, after any resume */
    int first_epoch;                              /* 0, or the resumed checkpoint's epochs_done */
    double epoch_times_s[TRAINER_MAX_EPOCHS];
    double train_loss[TRAINER_MAX_EPOCHS];        /* mean step loss of each epoch */
    double examples_per_s;                        /* training examples / training step time */
    double test_accuracy;
    trainer_accuracy test_curve[TRAINER_MAX_EPOCHS]; /* the whole test set after each epoch run */
    trainer_accuracy *subset_curve;               /* eval_every's points, owned: trainer_result_release */
    long n_subset;
    int reached;                                  /* index into test_curve of the first accuracy ≥
                                                   * stop_at_accuracy; -1: none (or not asked) */
    long train_examples, test_examples;
    long n_params;
    double forward_flops;                         /* per example */
    double data_load_s, model_build_s, eval_s, wall_s;
    unsigned long params_crc32;                   /* of the final parameter block */
    long server_updates;                          /* async master: gradients it applied */
    int rank, world, workers;                     /* this rank; ranks; training ranks (K) */
    long steps_per_epoch;
    /* rank 0: every rank's peak resident set after training (before the trace is gathered
     * to rank 0: what training holds), and after the run (with rank 0's whole trace) */
    double peak_rss_mib[TRAINER_MAX_RANKS];
    double peak_rss_final_mib[TRAINER_MAX_RANKS];
    /* rank 0: every rank's CPU seconds (user + system) after training: a rank that polls
     * while it waits shows here, not in its wall time */
    double cpu_s[TRAINER_MAX_RANKS];
} trainer_result;

void trainer_config_default(trainer_config *c);
/* Frees what a result owns (subset_curve); the struct itself is the caller's. */
void trainer_result_release(trainer_result *r);
/* 0, or -1 with why in err: eval_every with epoch sync, async or hogwild, or not a
 * multiple of every:k. */
int trainer_check_eval(const trainer_config *c, char *err, int errlen);

/* ---- the schedule, for training rank train_rank of train_world (K) on D = examples */

/* The cost model's view of the run (the trace header's config): K = train_world. */
job_config trainer_model_config(const trainer_config *c, int train_world, long examples);
/* 0, or -1 with the reason in err when the trainer cannot run this schedule: fewer examples
 * than training ranks, or what costmodel_check refuses (batch sync split over more ranks
 * than the batch). */
int trainer_check_schedule(const trainer_config *c, int train_world, long examples, char *err, int errlen);
/* s: batch sync ⌈D/G⌉ (G = B, or K·B with batch_per_worker); local SGD ⌈⌈D/K⌉/B⌉, the
 * largest shard's steps. */
long trainer_steps_per_epoch(const trainer_config *c, int train_world, long examples);

/* One rank's examples of one step: positions [lo, hi) of the epoch's shuffled order
 * (lo == hi: an empty slice), and the divisor of their summed loss: the step's global
 * batch in batch sync (the ranks' gradients are summed), else the slice's own count (1
 * when empty). */
typedef struct {
    long lo, hi;
    long divisor;
} trainer_range;

/* Step `step` (0-based, within an epoch) of training rank train_rank (-1: a dedicated
 * master, which gets an empty slice). A checked schedule (trainer_check_schedule). */
trainer_range trainer_slice(const trainer_config *c, int train_rank, int train_world, long examples, long step);
/* learning rate at global step t of total (the schedule's shape). */
double trainer_lr(const trainer_config *c, long t, long total, int epoch);
/* 0; -1 failed on every rank (agreed; call trainer_finish after reporting); -2 failed on
 * this rank only (call trainer_abort). */
int trainer_run(const trainer_config *c, trainer_result *r, char *err, int errlen);
/* After -2: ends every rank of the job (MPI_Abort) when MPI runs; else returns. */
void trainer_abort(int code);
/* After -1: waits for every rank (so rank 0 has reported) and finalises MPI; no-op
 * without MPI. */
void trainer_finish(void);

/* One SGD step on examples idx[0..count) of d: convert, forward, backward, update.
 * Returns the mean loss. */
float trainer_step(net *n, const dataset *d, const long *idx, int count, uint8_t *labels_buf, float lr,
                   float momentum, float weight_decay);
/* Fraction of d classified correctly, in batches of n->max_batch. */
double trainer_evaluate(net *n, const dataset *d, long *idx_buf, uint8_t *labels_buf);

#endif
