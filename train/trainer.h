/* trainer — the training run of one rank: start MPI when asked (train/sync.h), load the
 * data, build or resume the network (rank 0) and broadcast it, run the epochs of SGD steps
 * with the learning-rate schedule and the chosen synchronisation, evaluate (the test set
 * split over the ranks), checkpoint (rank 0), and time every phase on the common clock
 * into ONE trace/trace.h trace gathered to rank 0.
 *
 * Synchronisation (K = the training ranks; rank 0 is not one with --master dedicated):
 *   batch:    synchronous SGD. Step s of an epoch takes the global batch
 *             order[s·G, s·G + g) (G = B, or K·B with batch_per_worker; g = G but the
 *             epoch's remainder on the last step) and gives training rank i the slice
 *             [g·i/K, g·(i+1)/K) of it: slices differ by at most one example, the largest
 *             is ⌈B/K⌉ (the cost model's b), and in the last step some may be empty (a
 *             rank then contributes a zero gradient). K > B is refused unless
 *             batch_per_worker: K − B ranks would never get an example. Gradients use
 *             divisor g and are summed, so K ranks follow one rank's trajectory to float
 *             rounding; dropout masks are drawn per example position (net.h), not per rank.
 *   epoch, every:N: local SGD (model averaging). Each epoch's order is cut into K
 *             contiguous shards (dataset_shard); every rank runs ceil(largest shard / B)
 *             local steps (empty once its shard is done) and the weights are averaged every
 *             N steps (every:N) and at the end of every epoch. Momentum stays local to
 *             each rank; a checkpoint keeps rank 0's, which --resume gives to every rank.
 *   async, hogwild: Elephas' asynchronous modes (train/asyncps.h): rank 0 is a dedicated
 *             parameter server; the training ranks take the shards of local SGD, pull the
 *             server's weights every N steps (every_n, --pull-every) and push every
 *             step's gradient (divisor: the slice's count), never updating themselves.
 *             No barrier but at each epoch's end, where every rank evaluates the server's
 *             weights (broadcast from rank 0) and rank 0 checkpoints them with its
 *             momentum. The learning rate follows each worker's own steps. One worker
 *             pulling every step trains exactly as one plain rank does.
 * Accuracy (the time to accuracy): after every epoch the whole test set is evaluated, split
 * over the ranks, and recorded as an eval event "test" with the accuracy and the epoch's
 * training loss (trace/trace.h). With eval_every = N the fixed subset (eval_subset test
 * examples drawn once with a fixed seed, the same in every run) is evaluated, split over
 * the ranks, as eval "subset" after every N global steps — where the ranks' models are
 * equal: batch sync after step N, 2N, ...; every:k after the first averaging at or after
 * each multiple of N (every:k restarts its count every epoch, so an epoch whose steps are
 * not a multiple of k shifts the averagings); N must be a multiple of k, and epoch sync is
 * refused (its models are equal only at the epoch's end, where the test set is evaluated),
 * as are async and hogwild (the model is the server's, which no worker holds between the
 * epoch barriers). In those the test set after every epoch is the curve.
 * Evaluating changes no weight. stop_at_accuracy > 0 ends the run after the first epoch
 * whose test accuracy reaches it; every rank holds the same count of correct answers, so
 * all stop together (an async master too: it serves no epoch more); the learning-rate
 * schedule still spans `epochs`.
 * The schedule is the cost model's (model/costmodel.h's job_schedule_of): the same
 * steps per epoch and local batch; trainer_slice and trainer_steps_per_epoch state it.
 * Every step records compute (forward and backward; examples 0 for an empty slice), then
 * the update as its own phase (train/sync.h: after the step, the all-reduce, or on the ps
 * master between pushes and pulls), the phases of each rank tiling its time.
 * Failures seen by every rank (bad data, more ranks than examples or than the batch, a
 * corrupt or mismatched checkpoint, a diverging loss in batch sync) are agreed on before
 * any other collective: every rank returns -1 with err holding the message, and MPI still
 * up: the caller prints it on rank 0, then every rank calls trainer_finish. A failure only
 * this rank saw returns -2: the caller reports it and calls trainer_abort, which ends the
 * whole job (mpirun), so no rank hangs.
 * Never prints: progress goes to the caller's callback (rank 0 only), failures to err.
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
