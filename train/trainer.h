/* trainer — the training run: load the data (this rank's shard of each epoch's shuffled
 * order), build or resume the network, run the epochs of SGD steps with the learning-rate
 * schedule, evaluate, checkpoint, and time every phase on the monotonic clock into a
 * model/trace.h trace (startup data_load / model_build, compute per step with its
 * examples, eval per epoch).
 *
 * One process today (rank 0 of world 1); the MPI trainer keeps this loop and plugs in
 * through rank/world (each rank trains its shard of the common epoch order),
 * after_backward (one MPI_Allreduce of the single gradient block n->grads) and
 * grad_divisor (the global batch, so the summed gradient is the global mean).
 * Never prints: progress goes to the caller's callback, failures to err.
 */
#ifndef SPEEDUP_TRAINER_H
#define SPEEDUP_TRAINER_H

#include "train/dataset.h"
#include "train/net.h"

#define TRAINER_MAX_EPOCHS 1000

typedef enum { SCHEDULE_COSINE, SCHEDULE_STEP } trainer_schedule;

typedef struct {
    const char *data_dir;
    long limit;               /* ≤ 0: every example; else the first N of train and of test */
    int epochs, batch;
    double lr, momentum, weight_decay;
    trainer_schedule schedule;
    const char *net_spec;
    unsigned long seed;
    int threads;
    int stop_after;               /* > 0: stop after this epoch, as if interrupted */
    const char *checkpoint_path;  /* NULL: none; else saved after every epoch */
    const char *resume_path;      /* NULL: fresh start */
    const char *trace_path;       /* NULL: no trace */
    const char *git;              /* recorded in the trace header */
    int rank, world;              /* this process's shard: 0 of 1 without MPI */
    /* Called between every step's backward pass and its update (may be NULL): where the
     * MPI trainer sums n->grads over ranks. Non-zero stops the run with err filled in. */
    int (*after_backward)(void *ctx, net *n, long step, char *err, int errlen);
    void *after_backward_ctx;
    /* The loss and gradient are Σ over the local batch / this; 0: the local batch size. */
    float grad_divisor;
    /* Called after every step (may be NULL). */
    void (*progress)(void *ctx, int epoch, int epochs, long done, long total, double examples_per_s,
                     double loss);
    void *progress_ctx;
} trainer_config;

typedef struct {
    int epochs_run;                               /* this run, after any resume */
    int first_epoch;                              /* 0, or the resumed checkpoint's epochs_done */
    double epoch_times_s[TRAINER_MAX_EPOCHS];
    double train_loss[TRAINER_MAX_EPOCHS];        /* mean step loss of each epoch */
    double examples_per_s;                        /* training examples / training step time */
    double test_accuracy;
    long train_examples, test_examples;
    long n_params;
    double forward_flops;                         /* per example */
    double data_load_s, model_build_s, eval_s, wall_s;
    unsigned long params_crc32;                   /* of the final parameter block */
} trainer_result;

void trainer_config_default(trainer_config *c);
/* learning rate at global step t of total (the schedule's shape). */
double trainer_lr(const trainer_config *c, long t, long total, int epoch);
int trainer_run(const trainer_config *c, trainer_result *r, char *err, int errlen);

/* One SGD step on examples idx[0..count) of d: convert, forward, backward,
 * c->after_backward, update. Returns the loss (NAN if after_backward failed, err filled). */
float trainer_step(const trainer_config *c, net *n, const dataset *d, const long *idx, int count,
                   uint8_t *labels_buf, float lr, long step, char *err, int errlen);
/* Fraction of d classified correctly, in batches of n->max_batch. */
double trainer_evaluate(net *n, const dataset *d, long *idx_buf, uint8_t *labels_buf);

#endif
