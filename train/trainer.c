/* trainer — the training run of one rank (trainer.h), top to bottom: the schedule (which
 * examples a rank trains on), then the run's phases in the order they happen: start-up
 * (MPI, data, model, trace), per epoch the steps (compute, update or exchange), evaluation
 * and checkpoint, and the summary with the gathered trace. */
#define _POSIX_C_SOURCE 200809L
#include "train/trainer.h"

#include "trace/trace.h"
#include "train/asyncps.h"
#include "train/checkpoint.h"
#include "train/sync.h"
#include "util/atomicfile.h"
#include "util/errmsg.h"
#include "util/host.h"

#include <mpi.h>

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void openblas_set_num_threads(int num_threads); // OpenBLAS's own, not in cblas.h

void trainer_config_default(trainer_config *c) {
    memset(c, 0, sizeof *c);
    c->data_dir = DATASET_DEFAULT_DIR;
    c->epochs = 5;
    c->batch = 32;
    c->lr = 0.02;
    c->warmup_epochs = 1.0;
    c->momentum = 0.9;
    c->weight_decay = 5e-4;
    c->schedule = SCHEDULE_COSINE;
    c->net_spec = NETSPEC_DEFAULT;
    c->seed = 1;
    c->threads = 1;
    c->git = "unknown";
    c->sync = JOB_SYNC_BATCH;
    c->every_n = 1;
    c->topology = JOB_TOPO_ALLREDUCE;
    c->master = JOB_MASTER_WORKER;
    c->eval_subset = 2000;
}

void trainer_result_release(trainer_result *r) {
    if (!r)
        return;
    free(r->subset_curve);
    r->subset_curve = NULL;
    r->n_subset = 0;
}

int trainer_check_eval(const trainer_config *c, char *err, int errlen) {
    if (c->eval_every <= 0)
        return 0;
    if (c->sync == JOB_SYNC_EPOCH)
        return errmsg_set(err, errlen, "--eval-every with --sync epoch: the workers' models are equal only at the "
                          "end of an epoch, where the whole test set is evaluated anyway; leave --eval-every out");
    if (job_sync_is_async(c->sync))
        return errmsg_set(err, errlen, "--eval-every with --sync %s: the model is the server's, which the workers "
                          "hold only at an epoch's end, where the whole test set is evaluated anyway; leave "
                          "--eval-every out", c->sync == JOB_SYNC_ASYNC ? "async" : "hogwild");
    if (c->sync == JOB_SYNC_EVERY && c->eval_every % c->every_n != 0)
        return errmsg_set(err, errlen, "--eval-every %ld with --sync every:%d: evaluate the averaged model, every "
                          "multiple of %d steps (e.g. --eval-every %ld)", c->eval_every, c->every_n, c->every_n,
                          (c->eval_every / c->every_n + 1) * (long)c->every_n);
    if (c->eval_subset < 1)
        return errmsg_set(err, errlen, "--eval-subset %ld: expected at least 1 example", c->eval_subset);
    return 0;
}

double trainer_lr(const trainer_config *c, long t, long total, int epoch) {
    double lr = c->lr;
    if (c->schedule == SCHEDULE_COSINE) {
        lr *= 0.5 * (1.0 + cos(3.14159265358979323846 * (double)t / (double)(total > 0 ? total : 1)));
    } else { // step: x0.1 at half and at three quarters of the epochs
        if (c->epochs >= 2 && epoch >= c->epochs / 2)
            lr *= 0.1;
        if (c->epochs >= 4 && epoch >= (3 * c->epochs) / 4)
            lr *= 0.1;
    }
    // Warm-up: without normalisation layers a large first step throws the network into a
    // region it spends the first epoch leaving; ramping up lets the peak rate be higher.
    const double warmup_steps = c->warmup_epochs * (double)total / (double)(c->epochs > 0 ? c->epochs : 1);
    if (warmup_steps > 0.0 && (double)t < warmup_steps)
        lr *= ((double)t + 1.0) / warmup_steps;
    return lr;
}

float trainer_step(net *n, const dataset *d, const long *idx, int count, uint8_t *labels_buf, float lr,
                   float momentum, float weight_decay) {
    dataset_batch(d, idx, count, n->in_mean, n->in_std, net_input(n), labels_buf);
    float loss = net_forward(n, count, labels_buf, 1, 0.0f);
    net_backward(n, count, labels_buf, 0.0f);
    net_update(n, lr, momentum, weight_decay);
    return loss;
}

/* Correct predictions on examples [begin, end) of d — or, with pick, on the examples
 * pick[begin..end) — in batches of n->max_batch. */
static long evaluate_range(net *n, const dataset *d, const long *pick, long begin, long end, long *idx_buf,
                           uint8_t *labels_buf) {
    long correct = 0;
    for (long s = begin; s < end; s += n->max_batch) {
        int count = (int)(end - s < n->max_batch ? end - s : n->max_batch);
        for (int i = 0; i < count; i++)
            idx_buf[i] = pick ? pick[s + i] : s + i;
        dataset_batch(d, idx_buf, count, n->in_mean, n->in_std, net_input(n), labels_buf);
        net_forward(n, count, labels_buf, 0, 0.0f);
        correct += net_count_correct(n, count, labels_buf);
    }
    return correct;
}

double trainer_evaluate(net *n, const dataset *d, long *idx_buf, uint8_t *labels_buf) {
    long correct = evaluate_range(n, d, NULL, 0, d->n, idx_buf, labels_buf);
    return d->n ? (double)correct / (double)d->n : 0.0;
}

static bool mpi_running(void) {
    int up = 0, down = 0;
    MPI_Initialized(&up);
    MPI_Finalized(&down);
    return up && !down;
}

void trainer_abort(int code) {
    if (mpi_running())
        MPI_Abort(MPI_COMM_WORLD, code);
}

void trainer_finish(void) {
    if (mpi_running()) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Finalize();
    }
}

// ---------------------------------------------------------------------------------------
// The schedule: which examples a rank trains on at every step (the cost model's b, s)

job_config trainer_model_config(const trainer_config *c, int train_world, long examples) {
    return (job_config){ .workers = train_world, .cores = c->threads, .sync = c->sync,
                               .every_n = c->sync == JOB_SYNC_EVERY || job_sync_is_async(c->sync)
                                              ? c->every_n
                                          : c->sync == JOB_SYNC_BATCH ? 1 : 0,
                               .topology = c->topology, .master = c->master,
                               .batch_per_worker = c->batch_per_worker != 0, .examples = examples,
                               .batch = c->batch, .epochs = c->epochs };
}

int trainer_check_schedule(const trainer_config *c, int train_world, long examples, char *err, int errlen) {
    if (examples < train_world) {
        snprintf(err, (size_t)errlen, "%ld training examples for %d training ranks: use fewer ranks or more data",
                 examples, train_world);
        return -1;
    }
    // The model's refusals are the trainer's: one wording, one rule (K > B in split batch sync).
    const job_config m = trainer_model_config(c, train_world, examples);
    return job_check(&m, err, errlen);
}

/* Batch sync's global batch: B split over the ranks, or B per rank. */
static long global_batch(const trainer_config *c, int train_world) {
    return c->batch_per_worker ? (long)c->batch * train_world : c->batch;
}

long trainer_steps_per_epoch(const trainer_config *c, int train_world, long examples) {
    if (c->sync == JOB_SYNC_BATCH) {
        const long G = global_batch(c, train_world);
        return (examples + G - 1) / G;
    }
    const long largest = (examples + train_world - 1) / train_world; // dataset_shard's largest shard
    return (largest + c->batch - 1) / c->batch;
}

trainer_range trainer_slice(const trainer_config *c, int train_rank, int train_world, long examples, long step) {
    trainer_range r = { 0, 0, 1 };
    if (c->sync == JOB_SYNC_BATCH) {
        const long G = global_batch(c, train_world), first = step * G;
        const long g = examples - first < G ? examples - first : G;
        r.lo = r.hi = first;
        r.divisor = g;
        if (train_rank >= 0) {
            r.lo = first + g * train_rank / train_world;
            r.hi = first + g * (train_rank + 1) / train_world;
        }
        return r;
    }
    if (train_rank < 0)
        return r;
    long begin, end;
    dataset_shard(examples, train_rank, train_world, &begin, &end);
    r.lo = begin + step * c->batch < end ? begin + step * c->batch : end;
    r.hi = r.lo + c->batch < end ? r.lo + c->batch : end;
    r.divisor = r.hi > r.lo ? r.hi - r.lo : 1;
    return r;
}

/* The most examples one step of this rank takes: the network's batch capacity. */
static int local_max_batch(const trainer_config *c, int train_world) {
    if (c->sync == JOB_SYNC_BATCH && !c->batch_per_worker)
        return (c->batch + train_world - 1) / train_world;
    return c->batch;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

/* User + system CPU seconds of this process so far (every thread). */
static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)ru.ru_stime.tv_usec;
}

// ---------------------------------------------------------------------------------------
// One rank's run, phase by phase. Every phase returns 0, -1 (failed on every rank, agreed)
// or -2 (failed here only), as trainer_run does.

typedef struct {
    const trainer_config *c;
    trainer_result *r;
    char *err;
    int errlen;
    sync_ctx sc;
    sync_rec rec;              /* the trace (rec.tr, NULL without --trace) and its mark */
    dataset train, test;
    net *n;
    checkpoint_state st;       /* where training starts: 0, or the resumed checkpoint's */
    checkpoint_file *resume;   /* rank 0, while the resumed momentum is handed out */
    long *order;               /* (D) the epoch's shuffled example order */
    long *idx_buf;             /* (max_batch) example indices of one evaluation batch */
    uint8_t *labels;           /* (max_batch) */
    long steps_per_epoch, total_steps;
    long step;                 /* the global step, counted from the first epoch */
    double step_time_s;        /* this rank's time in steps: compute through the update */
    long step_examples;        /* and the examples it trained on */
    long steps_with_examples;  /* this rank's steps that trained on some (the layer kinds' timed passes) */
    int synced;                /* the last step left every rank with the same weights */
    double eval_time_s;        /* this rank's eval-phase time so far: evaluations, checkpoints */
    long *subset;              /* (subset_n) --eval-every's test examples, ascending */
    long subset_n;
    long next_subset_step;     /* evaluate the subset once this many global steps are done */
    double since_loss_sum;     /* this rank's step losses since the last subset point */
    long since_loss_steps, since_steps; /* its steps with examples; global steps */
    long subset_cap;           /* entries of r->subset_curve allocated */
    int stop;                  /* the test accuracy reached stop_at_accuracy (the same on every rank) */
    asyncps_server *server;    /* async, hogwild: rank 0's parameter server */
    long version;              /* async worker: the server version of its weights */
} run;

/* One epoch's tally on this rank. */
typedef struct {
    double loss_sum;           /* sum of this rank's step losses */
    long loss_steps;           /* steps with examples */
    long examples;
    double step_s;
} epoch_tally;

/* Start-up: MPI (when asked) with its common clock, then the configuration's check. */
static int run_start(run *R) {
    const trainer_config *c = R->c;
    if (c->epochs < 1 || c->epochs > TRAINER_MAX_EPOCHS || c->batch < 1 || c->threads < 1 ||
        ((c->sync == JOB_SYNC_EVERY || job_sync_is_async(c->sync)) && c->every_n < 1) ||
        c->stop_at_accuracy > 1) {
        snprintf(R->err, (size_t)R->errlen, "trainer: epochs, batch, threads, every:N or stop_at_accuracy out of range");
        return -1;
    }
    if (trainer_check_eval(c, R->err, R->errlen))
        return -1;
    // One thread pool: OpenMP splits every product over the threads, each calling
    // single-threaded OpenBLAS (two pools of spinning threads fight over the cores).
    openblas_set_num_threads(1);
#ifdef _OPENMP
    omp_set_num_threads(c->threads);
#endif
    int failed = sync_init(&R->sc, c->mpi, c->sync, c->topology, c->master, R->err, R->errlen);
    R->r->rank = R->sc.rank;
    R->r->world = R->sc.world;
    R->r->workers = R->sc.train_world;
    // Rank 0 writes the checkpoint and the trace: a read-only or full directory is said
    // now, not after the first epoch (or the whole run) has been trained for nothing.
    if (!failed && R->sc.rank == 0)
        failed = (c->checkpoint_path && atomicfile_probe(c->checkpoint_path, R->err, R->errlen)) ||
                 (c->trace_path && atomicfile_probe(c->trace_path, R->err, R->errlen));
    return sync_agree(&R->sc, failed, R->err, R->errlen) ? -1 : 0;
}

/* Every rank holds all of the data (each epoch's shards are new), and the schedule is
 * checked on it. */
static int run_load_data(run *R) {
    const trainer_config *c = R->c;
    int failed = 0;
    if (dataset_load(c->data_dir, "train", c->limit, &R->train, R->err, R->errlen) ||
        dataset_load(c->data_dir, "t10k", c->limit, &R->test, R->err, R->errlen))
        failed = 1;
    else if (R->train.h != R->test.h || R->train.w != R->test.w) {
        snprintf(R->err, (size_t)R->errlen, "%s: test images are %dx%d, training images %dx%d", c->data_dir,
                 R->test.h, R->test.w, R->train.h, R->train.w);
        failed = 1;
    } else {
        failed = trainer_check_schedule(c, R->sc.train_world, R->train.n, R->err, R->errlen) != 0;
    }
    return sync_agree(&R->sc, failed, R->err, R->errlen) ? -1 : 0;
}

// ---------------------------------------------------------------------------------------
// Resuming: the checkpoint must be of this very run

/* This run as a checkpoint records it (checkpoint.h): what decides its weights. */
static checkpoint_run run_identity(const run *R) {
    const trainer_config *c = R->c;
    return (checkpoint_run){ .seed = c->seed, .examples = R->train.n, .epochs = c->epochs, .batch = c->batch,
                             .batch_per_worker = c->batch_per_worker != 0, .workers = R->sc.train_world,
                             .ranks = R->sc.world, .sync = c->sync,
                             .every_n = c->sync == JOB_SYNC_EVERY || job_sync_is_async(c->sync)
                                            ? c->every_n : 0,
                             .topology = c->topology, .master = c->master, .schedule = (int)c->schedule,
                             .lr = c->lr, .momentum = c->momentum, .weight_decay = c->weight_decay,
                             .warmup_epochs = c->warmup_epochs };
}

/* Momentum blocks a checkpoint holds: one per rank where each rank keeps its own (local
 * SGD), else one (batch sync: the ranks' momenta are equal, or only rank 0's is used;
 * async: only the server's). */
static int momentum_blocks(const run *R) {
    const job_sync sy = R->c->sync;
    return sy != JOB_SYNC_BATCH && !job_sync_is_async(sy) && R->sc.world > 1 ? R->sc.world : 1;
}

/* Appends "; WHAT A in the checkpoint, B here" to msg when a and b differ. */
static void differ(char *msg, size_t cap, const char *what, const char *a, const char *b) {
    if (strcmp(a, b) != 0) {
        size_t len = strlen(msg);
        snprintf(msg + len, cap - len, "%s%s %s in the checkpoint, %s here", len ? "; " : "", what, a, b);
    }
}

static void differ_num(char *msg, size_t cap, const char *what, double a, double b) {
    char x[32], y[32];
    snprintf(x, sizeof x, "%.17g", a);
    snprintf(y, sizeof y, "%.17g", b);
    differ(msg, cap, what, x, y);
}

/* Every setting of the checkpoint's run against this one's, all mismatches named. */
static void compare_runs(const checkpoint_run *was, const checkpoint_run *now, char *msg, size_t cap) {
    msg[0] = '\0';
    differ_num(msg, cap, "--seed", (double)was->seed, (double)now->seed);
    differ_num(msg, cap, "training examples (--data, --limit)", (double)was->examples, (double)now->examples);
    differ_num(msg, cap, "--epochs", was->epochs, now->epochs);
    differ_num(msg, cap, "--batch", was->batch, now->batch);
    differ(msg, cap, "--batch-per-worker", was->batch_per_worker ? "on" : "off", now->batch_per_worker ? "on" : "off");
    differ_num(msg, cap, "workers", was->workers, now->workers);
    char a[32], b[32];
    job_sync_format(was->sync, was->every_n, a, sizeof a);
    job_sync_format(now->sync, now->every_n, b, sizeof b);
    differ(msg, cap, "--sync", a, b);
    differ(msg, cap, "--topology", job_topology_name(was->topology), job_topology_name(now->topology));
    differ(msg, cap, "--master", job_master_name(was->master), job_master_name(now->master));
    differ(msg, cap, "--schedule", was->schedule == SCHEDULE_STEP ? "step" : "cosine",
           now->schedule == SCHEDULE_STEP ? "step" : "cosine");
    differ_num(msg, cap, "--lr", was->lr, now->lr);
    differ_num(msg, cap, "--momentum", was->momentum, now->momentum);
    differ_num(msg, cap, "--weight-decay", was->weight_decay, now->weight_decay);
    differ_num(msg, cap, "--warmup-epochs", was->warmup_epochs, now->warmup_epochs);
}

/* 0 when the checkpoint continues this run; else -1 with every mismatch in err. */
static int check_resume(const run *R, const checkpoint_file *f, const net *n, char *err, int errlen) {
    const trainer_config *c = R->c;
    const checkpoint_state *st = checkpoint_state_of(f);
    if (st->version < 2)
        return errmsg_set(err, errlen, "%s: a version-%d checkpoint does not record its run's settings (seed, "
                          "batch, workers, sync, ...): it can be evaluated (speedup eval) but not resumed",
                          c->resume_path, st->version);
    char msg[1536];
    const checkpoint_run now = run_identity(R);
    compare_runs(&st->run, &now, msg, sizeof msg);
    netspec want;
    if (netspec_parse(c->net_spec, &want, err, errlen))
        return -1;
    if (!netspec_equal(&want, &n->spec))
        differ(msg, sizeof msg, "--net", n->spec_text, c->net_spec);
    if (msg[0])
        return errmsg_set(err, errlen, "%s: the checkpoint is of another run: %s (resume with the settings it was "
                          "saved with, or start afresh without --resume)", c->resume_path, msg);
    const int classes = R->train.classes > R->test.classes ? R->train.classes : R->test.classes;
    if (n->h != R->train.h || n->w != R->train.w || n->classes < classes)
        return errmsg_set(err, errlen, "%s: network is for %dx%d images and %d classes, data has %dx%d and %d",
                          c->resume_path, n->h, n->w, n->classes, R->train.h, R->train.w, classes);
    if (st->epochs_done >= c->epochs)
        return errmsg_set(err, errlen, "%s: already %d epochs done, --epochs is %d", c->resume_path,
                          st->epochs_done, c->epochs);
    const long steps = trainer_steps_per_epoch(c, R->sc.train_world, R->train.n);
    if (st->steps_done != (long)st->epochs_done * steps || st->momentum_blocks != momentum_blocks(R))
        return errmsg_set(err, errlen, "%s: %ld steps and %d momentum blocks after %d epochs: expected %ld and %d",
                          c->resume_path, st->steps_done, st->momentum_blocks, st->epochs_done,
                          (long)st->epochs_done * steps, momentum_blocks(R));
    return 0;
}

/* Rank 0: the network, fresh or from the checkpoint, checked against the data and the
 * run; a resumed checkpoint stays open in R->resume for its other ranks' momentum. */
static net *build_master(run *R, int max_batch) {
    const trainer_config *c = R->c;
    char *err = R->err;
    const int errlen = R->errlen;
    if (c->resume_path) {
        R->resume = checkpoint_open(c->resume_path, err, errlen);
        if (!R->resume)
            return NULL;
        char why[512] = "";
        net *n = checkpoint_net(R->resume, max_batch, why, sizeof why);
        if (!n) {
            errmsg_set(err, errlen, "%s: network: %s", c->resume_path, why);
            return NULL;
        }
        if (check_resume(R, R->resume, n, err, errlen)) {
            net_free(n);
            return NULL;
        }
        R->st = *checkpoint_state_of(R->resume);
        return n;
    }
    // The spec's last fc decides the class count; the data must fit in it.
    const int classes = R->train.classes > R->test.classes ? R->train.classes : R->test.classes;
    netspec spec;
    if (netspec_parse(c->net_spec, &spec, err, errlen))
        return NULL;
    int out = spec.n ? spec.layers[spec.n - 1].out : 0;
    net *n = net_new(c->net_spec, R->train.h, R->train.w, 1, out > classes ? out : classes, max_batch, err, errlen);
    if (!n)
        return NULL;
    net_init(n, c->seed);
    dataset_pixel_stats(&R->train, &n->in_mean, &n->in_std);
    return n;
}

/* Rank 0's copy of rank r's resumed momentum (sync_scatter_floats). */
static void resumed_momentum(void *ctx, int rank, float *block) {
    checkpoint_momentum(ctx, rank, block);
}

/* What rank 0 broadcasts so that every rank builds the same network. */
typedef struct {
    char spec[512];
    int h, w, c, classes;
    float in_mean, in_std;
    int epochs_done;
    long steps_done;
    int resumed;
    int momentum_blocks;
} model_header;

/* Rank 0 builds or resumes the network, every other rank receives it; the buffers. */
static int run_build_model(run *R) {
    const trainer_config *c = R->c;
    const int max_batch = local_max_batch(c, R->sc.train_world);
    model_header hdr;
    memset(&hdr, 0, sizeof hdr);
    R->st = (checkpoint_state){ .version = CHECKPOINT_VERSION, .momentum_blocks = 1 };
    if (R->sc.rank == 0) {
        R->n = build_master(R, max_batch);
        if (R->n) {
            hdr = (model_header){ .h = R->n->h, .w = R->n->w, .c = R->n->c, .classes = R->n->classes,
                                  .in_mean = R->n->in_mean, .in_std = R->n->in_std,
                                  .epochs_done = R->st.epochs_done, .steps_done = R->st.steps_done,
                                  .resumed = c->resume_path != NULL, .momentum_blocks = R->st.momentum_blocks };
            snprintf(hdr.spec, sizeof hdr.spec, "%s", R->n->spec_text);
        }
    }
    if (sync_agree(&R->sc, R->sc.rank == 0 && !R->n, R->err, R->errlen))
        return -1;
    sync_bcast(&R->sc, &hdr, (long)sizeof hdr);
    if (R->sc.rank != 0) {
        R->n = net_new(hdr.spec, hdr.h, hdr.w, hdr.c, hdr.classes, max_batch, R->err, R->errlen);
        if (R->n) {
            R->n->in_mean = hdr.in_mean;
            R->n->in_std = hdr.in_std;
        }
        R->st.epochs_done = hdr.epochs_done;
        R->st.steps_done = hdr.steps_done;
    }
    R->order = malloc(sizeof *R->order * (size_t)R->train.n);
    R->idx_buf = malloc(sizeof *R->idx_buf * (size_t)max_batch);
    R->labels = malloc((size_t)max_batch);
    int failed = !R->n || !R->order || !R->idx_buf || !R->labels || (R->n && sync_reserve(&R->sc, R->n->n_params));
    if (failed && R->n)
        snprintf(R->err, (size_t)R->errlen, "out of memory");
    if (sync_agree(&R->sc, failed, R->err, R->errlen))
        return -1;
    sync_bcast(&R->sc, R->n->params, (long)sizeof(float) * R->n->n_params);
    // Resumed momentum: the one block to everyone, or each rank its own (local SGD), rank 0
    // staging them in its gradients, which are dead between steps.
    if (hdr.resumed && hdr.momentum_blocks == 1)
        sync_bcast(&R->sc, R->n->momentum, (long)sizeof(float) * R->n->n_params);
    else if (hdr.resumed)
        sync_scatter_floats(&R->sc, R->n->momentum, R->n->n_params, R->n->grads, resumed_momentum, R->resume);
    checkpoint_close(R->resume);
    R->resume = NULL;
    // Async: rank 0 serves with the network it holds (its momentum is the server's).
    failed = 0;
    if (job_sync_is_async(c->sync) && R->sc.rank == 0) {
        R->server = asyncps_server_new(&R->sc, R->n, c->threads, (float)c->momentum, (float)c->weight_decay, R->err,
                                       R->errlen);
        failed = !R->server;
    }
    return sync_agree(&R->sc, failed, R->err, R->errlen) ? -1 : 0;
}

/* The trace (with --trace) and its start-up events, which tile [init, t_model1). From here
 * on every event starts at rec.mark_s. */
static void run_open_trace(run *R, double t_data1, double t_model1) {
    const trainer_config *c = R->c;
    R->rec = (sync_rec){ .rank = R->sc.rank, .mark_s = t_model1, .epoch = -1, .step = -1 };
    if (!c->trace_path)
        return;
    trace_run head = { 0 };
    gethostname(head.host, sizeof head.host - 1);
    head.host_cores = host_online_cores();
    snprintf(head.git, sizeof head.git, "%s", c->git ? c->git : "unknown");
    snprintf(head.net, sizeof head.net, "%.255s", R->n->spec_text);
    head.model_bytes = (long)sizeof(float) * R->n->n_params;
    head.config = trainer_model_config(c, R->sc.train_world, R->train.n);
    head.seed = (long)c->seed;
    // What this rank's memory holds beyond the runtime (model/memory.h's known terms); the
    // measured peaks are added at the end (run_summary).
    const net_memory nm = net_memory_of(R->n);
    head.memory = (trace_memory){ .has = true, .fwd_bytes_per_example = nm.fwd_bytes_per_example,
                                  .train_bytes_per_example = nm.train_bytes_per_example,
                                  .workspace_bytes = nm.workspace_bytes,
                                  .workspace_bytes_per_thread = nm.workspace_bytes_per_thread,
                                  .example_bytes = (long)R->train.h * R->train.w + 1, .test_examples = R->test.n,
                                  .test_set_examples = R->test.n_in_file };
    R->rec.tr = trace_new(&head);
    R->rec.oom = !R->rec.tr;
    R->rec.mark_s = R->sc.mpi ? R->sc.init_t0_s : R->sc.init_t1_s;
    if (R->sc.mpi)
        sync_mark_until(&R->rec, TRACE_STARTUP, R->sc.init_t1_s, 0, 0, "mpi_init");
    sync_mark_until(&R->rec, TRACE_STARTUP, t_data1, 0, 0, "data_load");
    sync_mark_until(&R->rec, TRACE_STARTUP, t_model1, 0, 0, "model_build");
}

/* One step of this rank: its slice's gradients (compute), then the update as its own phase:
 * here (local SGD) or in the exchange (batch sync). Local SGD averages every N steps and at
 * the end of the epoch. Returns the slice's example count, *loss its mean loss (0 when empty). */
static int run_step(run *R, int e, long s, float *loss) {
    const trainer_config *c = R->c;
    net *n = R->n;
    const trainer_range sl = trainer_slice(c, R->sc.train_rank, R->sc.train_world, R->train.n, s);
    const int count = (int)(sl.hi - sl.lo);
    const int batch_sync = c->sync == JOB_SYNC_BATCH, async = job_sync_is_async(c->sync);
    const sync_sgd opt = { (float)trainer_lr(c, R->step, R->total_steps, e), (float)c->momentum,
                           (float)c->weight_decay };
    R->rec.epoch = e;
    R->rec.step = R->step;
    *loss = 0.0f;
    // Async: the server's weights every N steps (Elephas' frequency), then the gradient
    // goes to the server; the worker itself never updates. An empty slice asks nothing.
    if (async && count > 0 && s % c->every_n == 0)
        asyncps_pull(&R->sc, &R->rec, n, &R->version);
    const int cpu_begin = host_current_cpu(); /* where the step runs: the scheduler's placement */
    if (count > 0) {
        dataset_batch(&R->train, R->order + sl.lo, count, n->in_mean, n->in_std, net_input(n), R->labels);
        net_dropout_at(n, sl.lo);
        *loss = net_forward(n, count, R->labels, 1, (float)sl.divisor);
        net_backward(n, count, R->labels, (float)sl.divisor);
    } else if (batch_sync) {
        memset(n->grads, 0, sizeof(float) * (size_t)n->n_params); // an empty slice adds nothing
    }
    trace_event *step = sync_mark(&R->sc, &R->rec, TRACE_COMPUTE, 0, count, NULL);
    const int cpu_end = host_current_cpu();
    if (step && cpu_begin >= 0 && cpu_end >= 0 && cpu_begin <= SHRT_MAX && cpu_end <= SHRT_MAX) {
        step->has_cpu = true;
        step->cpu_begin = (short)cpu_begin;
        step->cpu_end = (short)cpu_end;
    }
    R->synced = batch_sync;
    if (async) {
        if (count > 0)
            asyncps_push(&R->sc, &R->rec, n, R->version, opt.lr);
        return count;
    }
    if (batch_sync) {
        sync_step(&R->sc, n, &opt, &R->rec);
        return count;
    }
    if (count > 0)
        sync_local_update(&R->sc, &R->rec, n, &opt);
    const int every = c->sync == JOB_SYNC_EVERY ? c->every_n : 0;
    if ((every && (s + 1) % every == 0) || s + 1 == R->steps_per_epoch) {
        sync_average(&R->sc, n, &R->rec);
        R->synced = 1;
    }
    return count;
}

// ---------------------------------------------------------------------------------------
// Accuracy: the test set after every epoch, the fixed subset every N steps (trainer.h)

/* The seed of --eval-every's subset: its own, so that runs of any --seed measure the same
 * examples. */
#define SUBSET_SEED 0x5eedUL

static int by_long(const void *a, const void *b) {
    const long p = *(const long *)a, q = *(const long *)b;
    return (p > q) - (p < q);
}

/* --eval-every's subset: the first eval_subset positions of a fixed shuffle of the test
 * set (all of it when smaller), ascending. Every rank draws the same. */
static int run_prepare_subset(run *R) {
    const trainer_config *c = R->c;
    if (c->eval_every <= 0)
        return 0;
    R->subset_n = c->eval_subset < R->test.n ? c->eval_subset : R->test.n;
    R->subset = malloc(sizeof *R->subset * (size_t)(R->test.n > 0 ? R->test.n : 1));
    int failed = !R->subset || dataset_epoch_order(R->test.n, SUBSET_SEED, 0, R->subset) != 0;
    if (failed)
        snprintf(R->err, (size_t)R->errlen, "out of memory");
    else
        qsort(R->subset, (size_t)R->subset_n, sizeof *R->subset, by_long);
    R->next_subset_step = (R->step / c->eval_every + 1) * c->eval_every;
    return sync_agree(&R->sc, failed, R->err, R->errlen) ? -1 : 0;
}

/* Collective: the mean step loss over the ranks from this rank's sums. Batch sync sums the
 * ranks' parts of each step's mean (steps: the global steps); local SGD averages the ranks'
 * step means. */
static double mean_loss(run *R, double loss_sum, long loss_steps, long steps) {
    const double all = sync_sum(&R->sc, loss_sum);
    const double n = R->c->sync == JOB_SYNC_BATCH ? (double)steps : sync_sum(&R->sc, (double)loss_steps);
    return all / (n > 0 ? n : 1.0);
}

/* Collective: the training examples of every rank so far, the epochs before a resume
 * included (each trained all D). */
static double examples_seen(run *R) {
    return (double)R->st.epochs_done * (double)R->train.n + (double)sync_sum_long(&R->sc, R->step_examples);
}

/* Records the eval event [tv, now) named name, during epoch e after `done` global steps,
 * with its accuracy and loss (every rank knows both), counts its time as not training, and
 * returns the measurement as this rank's clock has it. */
static trainer_accuracy record_accuracy(run *R, const char *name, int e, long done, long evaluated, long correct,
                                        double loss, double seen, double tv) {
    const double acc = evaluated > 0 ? (double)correct / (double)evaluated : 0.0;
    const trainer_accuracy p = { .epoch = (int)((long)seen / (R->train.n > 0 ? R->train.n : 1)), .step = done,
                                 .train_time_s = tv - R->eval_time_s, .examples_seen = seen,
                                 .evaluated = evaluated, .accuracy = acc, .train_loss = loss };
    R->rec.epoch = e;
    R->rec.step = done;
    trace_event *ev = sync_mark(&R->sc, &R->rec, TRACE_EVAL, 0, evaluated, name);
    if (ev) {
        ev->has_accuracy = true;
        ev->accuracy = acc;
        ev->loss = loss;
    }
    R->rec.step = -1;
    R->eval_time_s += R->rec.mark_s - tv;
    R->r->eval_s += R->rec.mark_s - tv;
    return p;
}

/* The fixed subset split over the ranks after `done` global steps (the ranks' models are
 * equal here), with the loss of the steps since the last subset point. */
static int run_evaluate_subset(run *R, int e, long done) {
    trainer_result *r = R->r;
    const double tv = R->rec.mark_s;
    long begin, end;
    dataset_shard(R->subset_n, R->sc.rank, R->sc.world, &begin, &end);
    const long correct =
        sync_sum_long(&R->sc, evaluate_range(R->n, &R->test, R->subset, begin, end, R->idx_buf, R->labels));
    const double loss = mean_loss(R, R->since_loss_sum, R->since_loss_steps, R->since_steps);
    const double seen = examples_seen(R);
    if (!isfinite(loss))
        return errmsg_set(R->err, R->errlen, "step %ld: loss is %g (lower --lr?)", done, loss);
    if (r->n_subset == R->subset_cap) {
        const long cap = R->subset_cap ? 2 * R->subset_cap : 64;
        trainer_accuracy *v = realloc(r->subset_curve, sizeof *v * (size_t)cap);
        if (!v) {
            snprintf(R->err, (size_t)R->errlen, "out of memory");
            return -2;
        }
        r->subset_curve = v;
        R->subset_cap = cap;
    }
    r->subset_curve[r->n_subset++] = record_accuracy(R, "subset", e, done, R->subset_n, correct, loss, seen, tv);
    R->next_subset_step = (done / R->c->eval_every + 1) * R->c->eval_every;
    R->since_loss_sum = 0;
    R->since_loss_steps = R->since_steps = 0;
    return 0;
}

/* The steps of epoch e. */
static int run_epoch(run *R, int e, epoch_tally *t) {
    const trainer_config *c = R->c;
    memset(t, 0, sizeof *t);
    if (dataset_epoch_order(R->train.n, c->seed, e, R->order)) {
        snprintf(R->err, (size_t)R->errlen, "out of memory");
        return -2;
    }
    // Dropout masks restart per epoch too, so --resume repeats an uninterrupted run.
    net_seed_dropout(R->n, c->seed * 2654435761UL + (unsigned long)e);
    if (R->server) { // the async master: the epoch is the workers' requests
        const double ts = sync_now(&R->sc);
        asyncps_serve(R->server, &R->rec, e, &R->r->server_updates);
        t->step_s = R->rec.mark_s - ts;
        R->step += R->steps_per_epoch;
        R->step_time_s += t->step_s;
        return 0;
    }
    for (long s = 0; s < R->steps_per_epoch; s++, R->step++) {
        if (c->step_hook)
            c->step_hook(c->step_hook_ctx, R->sc.rank, R->step);
        const double ts = sync_now(&R->sc);
        float loss;
        const int count = run_step(R, e, s, &loss);
        t->step_s += R->rec.mark_s - ts;
        t->examples += count;
        R->step_examples += count;
        R->steps_with_examples += count > 0;
        R->since_steps++;
        if (count > 0) {
            t->loss_sum += loss;
            t->loss_steps++;
            R->since_loss_sum += loss;
            R->since_loss_steps++;
        }
        if (R->sc.world == 1 && !isfinite(loss)) {
            snprintf(R->err, (size_t)R->errlen, "epoch %d step %ld: loss is %g (lower --lr?)", e + 1, s + 1,
                     (double)loss);
            return -1;
        }
        if (c->progress && R->sc.rank == 0)
            c->progress(c->progress_ctx, e, c->epochs, s + 1, R->steps_per_epoch, t->examples / t->step_s,
                        t->loss_sum / (double)(t->loss_steps ? t->loss_steps : 1));
        int rc;
        if (R->subset && R->synced && R->step + 1 >= R->next_subset_step && (rc = run_evaluate_subset(R, e, R->step + 1)))
            return rc;
    }
    if (job_sync_is_async(c->sync)) { // tell the server, and the epoch's barrier
        const double ts = R->rec.mark_s;
        asyncps_end_epoch(&R->sc, &R->rec);
        t->step_s += R->rec.mark_s - ts;
    }
    R->step_time_s += t->step_s;
    return 0;
}

/* The test set split over the ranks, and the epoch's loss over the ranks; te: the epoch's
 * start, eval_at_start_s: R->eval_time_s then (the subset's evaluations are not the
 * epoch's training time). Every rank sees the same accuracy, so all stop together. */
static int run_evaluate(run *R, int e, double te, double eval_at_start_s, const epoch_tally *t) {
    trainer_result *r = R->r;
    const trainer_config *c = R->c;
    const double tv = R->rec.mark_s;
    // Async: the model is the server's; every rank evaluates its share of it.
    if (job_sync_is_async(R->c->sync))
        sync_bcast(&R->sc, R->n->params, (long)sizeof(float) * R->n->n_params);
    long test_begin, test_end;
    dataset_shard(R->test.n, R->sc.rank, R->sc.world, &test_begin, &test_end);
    const long correct =
        sync_sum_long(&R->sc, evaluate_range(R->n, &R->test, NULL, test_begin, test_end, R->idx_buf, R->labels));
    const double loss = mean_loss(R, t->loss_sum, t->loss_steps, R->steps_per_epoch);
    const double seen = examples_seen(R);
    const int i = r->epochs_run++;
    r->train_loss[i] = loss;
    r->epoch_times_s[i] = tv - te - (R->eval_time_s - eval_at_start_s);
    if (!isfinite(loss)) {
        snprintf(R->err, (size_t)R->errlen, "epoch %d: loss is %g (lower --lr?)", e + 1, loss);
        return -1;
    }
    r->test_curve[i] = record_accuracy(R, "test", e, R->step, R->test.n, correct, loss, seen, tv);
    r->test_accuracy = r->test_curve[i].accuracy;
    if (c->stop_at_accuracy > 0 && r->reached < 0 && r->test_accuracy >= c->stop_at_accuracy) {
        r->reached = i;
        R->stop = 1;
    }
    return 0;
}

static void put_momentum(void *ctx, const float *block) { checkpoint_put_momentum(ctx, block); }

/* Rank 0 saves the network after epoch e (with --checkpoint), with every rank's momentum
 * where they differ: the other ranks' blocks come in one at a time through rank 0's
 * gradients (dead between steps), so rank 0 never holds more than its own model. */
static int run_checkpoint(run *R, int e) {
    if (!R->c->checkpoint_path)
        return 0;
    const checkpoint_state now = { .version = CHECKPOINT_VERSION, .epochs_done = e + 1, .steps_done = R->step,
                                   .run = run_identity(R), .momentum_blocks = momentum_blocks(R) };
    checkpoint_writer *w = NULL;
    if (R->sc.rank == 0)
        w = checkpoint_begin(R->c->checkpoint_path, R->n, &now, R->err, R->errlen);
    if (sync_agree(&R->sc, R->sc.rank == 0 && !w, R->err, R->errlen))
        return -1;
    if (now.momentum_blocks > 1)
        sync_gather_floats(&R->sc, R->n->momentum, R->n->n_params, R->n->grads, put_momentum, w);
    int failed = R->sc.rank == 0 && checkpoint_commit(w, R->err, R->errlen) != 0;
    if (sync_agree(&R->sc, failed, R->err, R->errlen))
        return -1;
    const double tc = R->rec.mark_s;
    sync_mark(&R->sc, &R->rec, TRACE_EVAL, 0, 0, "checkpoint");
    R->eval_time_s += R->rec.mark_s - tc; // not training: the accuracy points' times leave it out
    return 0;
}

/* Throughput, checksum and memory; every rank's events to rank 0, which writes the trace. */
static int run_summary(run *R) {
    const trainer_config *c = R->c;
    trainer_result *r = R->r;
    const long examples = sync_sum_long(&R->sc, R->step_examples);
    r->examples_per_s = R->step_time_s > 0 ? (double)examples / R->step_time_s : 0.0;
    r->params_crc32 = net_params_crc32(R->n);
    r->wall_s = sync_now(&R->sc) - R->sc.init_t0_s;
    if (R->rec.tr && R->sc.rank == 0 && R->steps_with_examples > 0) { /* rank 0's passes, by layer kind */
        trace_layers *l = &R->rec.tr->run.layers;
        *l = (trace_layers){ .has = true, .cost = net_cost_of(R->n), .steps = R->steps_with_examples,
                             .examples = (double)R->step_examples,
                             .input = { R->n->h, R->n->w, R->n->c, R->n->classes } };
        for (int i = 0; i < l->cost.n; i++)
            l->time_s[i] = R->n->layer_s[i];
    }
    sync_gather_value(&R->sc, peak_rss_mib(), r->peak_rss_mib, TRAINER_MAX_RANKS);
    sync_gather_value(&R->sc, cpu_s(), r->cpu_s, TRAINER_MAX_RANKS);
    if (c->trace_path) {
        // Every rank knows whether its own trace is whole; one failure loses the file.
        int failed = R->rec.oom;
        if (failed)
            snprintf(R->err, (size_t)R->errlen, "%s: out of memory while recording the trace", c->trace_path);
        if (sync_agree(&R->sc, failed, R->err, R->errlen))
            return -1;
        trace_memory *mem = &R->rec.tr->run.memory;
        mem->n_ranks = R->sc.world < TRACE_MAX_RANKS ? R->sc.world : TRACE_MAX_RANKS;
        for (int i = 0; R->sc.rank == 0 && i < mem->n_ranks; i++)
            mem->peak_rss_kib[i] = lround(r->peak_rss_mib[i] * 1024.0);
        failed = sync_gather_trace(&R->sc, R->rec.tr) != 0;
        if (failed)
            snprintf(R->err, (size_t)R->errlen, "%s: out of memory while gathering the trace", c->trace_path);
        else if (R->sc.rank == 0)
            failed = trace_write(R->rec.tr, c->trace_path, R->err, R->errlen) != 0;
        if (sync_agree(&R->sc, failed, R->err, R->errlen))
            return -1;
    }
    trace_free(R->rec.tr);
    R->rec.tr = NULL;
    sync_gather_value(&R->sc, peak_rss_mib(), r->peak_rss_final_mib, TRAINER_MAX_RANKS);
    return 0;
}

static void run_free(run *R, int rc) {
    asyncps_server_free(R->server);
    checkpoint_close(R->resume);
    trace_free(R->rec.tr);
    free(R->order);
    free(R->subset);
    free(R->idx_buf);
    free(R->labels);
    net_free(R->n);
    dataset_free(&R->train);
    dataset_free(&R->test);
    sync_release(&R->sc);
    // After an agreed failure MPI stays up: the caller reports it on rank 0 and then calls
    // trainer_finish, whose barrier keeps the other ranks from exiting first (mpirun would
    // kill rank 0 at their non-zero exit, before it printed why).
    if (rc == 0)
        sync_finish(&R->sc);
}

int trainer_run(const trainer_config *c, trainer_result *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    r->reached = -1;
    err[0] = '\0';
    run R = { .c = c, .r = r, .err = err, .errlen = errlen };
    int rc = run_start(&R);
    if (rc)
        goto done;
    const double t_data0 = sync_now(&R.sc);
    if ((rc = run_load_data(&R)))
        goto done;
    const double t_data1 = sync_now(&R.sc);
    if ((rc = run_build_model(&R)))
        goto done;
    const double t_model1 = sync_now(&R.sc);
    r->data_load_s = t_data1 - t_data0;
    r->model_build_s = t_model1 - t_data1;
    r->n_params = R.n->n_params;
    r->forward_flops = net_forward_flops(R.n);
    r->train_examples = R.train.n;
    r->test_examples = R.test.n;
    run_open_trace(&R, t_data1, t_model1);

    R.steps_per_epoch = r->steps_per_epoch = trainer_steps_per_epoch(c, R.sc.train_world, R.train.n);
    R.total_steps = R.steps_per_epoch * c->epochs;
    R.step = R.st.steps_done;
    r->first_epoch = R.st.epochs_done;
    if ((rc = run_prepare_subset(&R)))
        goto done;
    for (int e = R.st.epochs_done; e < c->epochs; e++) {
        const double te = sync_now(&R.sc), eval_at_start_s = R.eval_time_s;
        epoch_tally t;
        if ((rc = run_epoch(&R, e, &t)) || (rc = run_evaluate(&R, e, te, eval_at_start_s, &t)) ||
            (rc = run_checkpoint(&R, e)))
            goto done;
        if (R.stop || (c->stop_after > 0 && e + 1 >= c->stop_after))
            break;
    }
    rc = run_summary(&R);
done:
    run_free(&R, rc);
    return rc;
}
