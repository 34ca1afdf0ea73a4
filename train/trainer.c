/* trainer — the training loop of one rank. */
#define _POSIX_C_SOURCE 200809L
#include "train/trainer.h"

#include "model/trace.h"
#include "train/checkpoint.h"
#include "train/sync.h"

#include <mpi.h>
#include <signal.h>

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
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
    c->sync = COSTMODEL_SYNC_BATCH;
    c->every_n = 1;
    c->topology = COSTMODEL_TOPO_ALLREDUCE;
    c->master = COSTMODEL_MASTER_WORKER;
    c->fail_rank = -1;
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

/* Correct predictions on examples [begin, end) of d, in batches of n->max_batch. */
static long evaluate_range(net *n, const dataset *d, long begin, long end, long *idx_buf, uint8_t *labels_buf) {
    long correct = 0;
    for (long s = begin; s < end; s += n->max_batch) {
        int count = (int)(end - s < n->max_batch ? end - s : n->max_batch);
        for (int i = 0; i < count; i++)
            idx_buf[i] = s + i;
        dataset_batch(d, idx_buf, count, n->in_mean, n->in_std, net_input(n), labels_buf);
        net_forward(n, count, labels_buf, 0, 0.0f);
        correct += net_count_correct(n, count, labels_buf);
    }
    return correct;
}

double trainer_evaluate(net *n, const dataset *d, long *idx_buf, uint8_t *labels_buf) {
    long correct = evaluate_range(n, d, 0, d->n, idx_buf, labels_buf);
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

/* What rank 0 broadcasts so that every rank builds the same network. */
typedef struct {
    char spec[512];
    int h, w, c, classes;
    float in_mean, in_std;
    int epochs_done;
    long steps_done;
    int resumed;
} model_header;

/* Rank 0: the network, fresh or from the checkpoint, checked against the data. */
static net *build_master(const trainer_config *c, const dataset *train, const dataset *test, int max_batch,
                         checkpoint_state *st, char *err, int errlen) {
    int classes = train->classes > test->classes ? train->classes : test->classes;
    net *n = NULL;
    if (c->resume_path) {
        n = checkpoint_load(c->resume_path, max_batch, st, err, errlen);
        if (!n)
            return NULL;
        if (n->h != train->h || n->w != train->w || n->classes < classes) {
            snprintf(err, (size_t)errlen, "%s: network is for %dx%d images and %d classes, data has %dx%d and %d",
                     c->resume_path, n->h, n->w, n->classes, train->h, train->w, classes);
            net_free(n);
            return NULL;
        }
        if (st->epochs_done >= c->epochs) {
            snprintf(err, (size_t)errlen, "%s: already %d epochs done, --epochs is %d", c->resume_path,
                     st->epochs_done, c->epochs);
            net_free(n);
            return NULL;
        }
        return n;
    }
    // The spec's last fc decides the class count; the data must fit in it.
    netspec spec;
    if (netspec_parse(c->net_spec, &spec, err, errlen))
        return NULL;
    int out = spec.n ? spec.layers[spec.n - 1].out : 0;
    n = net_new(c->net_spec, train->h, train->w, 1, out > classes ? out : classes, max_batch, err, errlen);
    if (!n)
        return NULL;
    net_init(n, c->seed);
    dataset_pixel_stats(train, &n->in_mean, &n->in_std);
    return n;
}

// ---------------------------------------------------------------------------------------
// The schedule: which examples a rank trains on at every step (the cost model's b, s)

costmodel_config trainer_model_config(const trainer_config *c, int train_world, long examples) {
    return (costmodel_config){ .workers = train_world, .cores = c->threads, .sync = c->sync,
                               .every_n = c->sync == COSTMODEL_SYNC_EVERY ? c->every_n
                                          : c->sync == COSTMODEL_SYNC_BATCH ? 1 : 0,
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
    const costmodel_params none = { 0 };
    const costmodel_config m = trainer_model_config(c, train_world, examples);
    return costmodel_check(&none, &m, err, errlen);
}

/* Batch sync's global batch: B split over the ranks, or B per rank. */
static long global_batch(const trainer_config *c, int train_world) {
    return c->batch_per_worker ? (long)c->batch * train_world : c->batch;
}

long trainer_steps_per_epoch(const trainer_config *c, int train_world, long examples) {
    if (c->sync == COSTMODEL_SYNC_BATCH) {
        const long G = global_batch(c, train_world);
        return (examples + G - 1) / G;
    }
    const long largest = (examples + train_world - 1) / train_world; // dataset_shard's largest shard
    return (largest + c->batch - 1) / c->batch;
}

trainer_range trainer_slice(const trainer_config *c, int train_rank, int train_world, long examples, long step) {
    trainer_range r = { 0, 0, 1 };
    if (c->sync == COSTMODEL_SYNC_BATCH) {
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
    if (c->sync == COSTMODEL_SYNC_BATCH && !c->batch_per_worker)
        return (c->batch + train_world - 1) / train_world;
    return c->batch;
}

static double peak_rss_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

int trainer_run(const trainer_config *c, trainer_result *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    err[0] = '\0';
    if (c->epochs < 1 || c->epochs > TRAINER_MAX_EPOCHS || c->batch < 1 || c->threads < 1 ||
        (c->sync == COSTMODEL_SYNC_EVERY && c->every_n < 1)) {
        snprintf(err, (size_t)errlen, "trainer: epochs, batch, threads or every:N out of range");
        return -1;
    }
    // One thread pool: OpenMP splits every product over the threads, each calling
    // single-threaded OpenBLAS (two pools of spinning threads fight over the cores).
    openblas_set_num_threads(1);
#ifdef _OPENMP
    omp_set_num_threads(c->threads);
#endif
    sync_ctx sc;
    int failed = sync_init(&sc, c->mpi, c->topology, c->master, err, errlen);
    r->rank = sc.rank;
    r->world = sc.world;
    r->workers = sc.train_world;
    int rc = -1, trace_oom = 0;
    dataset train = { 0 }, test = { 0 };
    net *n = NULL;
    trace *tr = NULL;
    long *order = NULL, *idx_buf = NULL;
    uint8_t *labels = NULL;
    if (sync_agree(&sc, failed, err, errlen))
        goto done;

    // ---- data: every rank holds all of it (each epoch's shards are new)
    const double t_data0 = sync_now(&sc);
    if (dataset_load(c->data_dir, "train", c->limit, &train, err, errlen) ||
        dataset_load(c->data_dir, "t10k", c->limit, &test, err, errlen))
        failed = 1;
    else if (train.h != test.h || train.w != test.w) {
        snprintf(err, (size_t)errlen, "%s: test images are %dx%d, training images %dx%d", c->data_dir, test.h,
                 test.w, train.h, train.w);
        failed = 1;
    } else {
        failed = trainer_check_schedule(c, sc.train_world, train.n, err, errlen) != 0;
    }
    if (sync_agree(&sc, failed, err, errlen))
        goto done;
    const double t_data1 = sync_now(&sc);
    r->data_load_s = t_data1 - t_data0;

    // ---- model: rank 0 builds or resumes it, every other rank receives it
    const int max_batch = local_max_batch(c, sc.train_world);
    checkpoint_state st = { 0, 0, c->seed };
    model_header hdr;
    memset(&hdr, 0, sizeof hdr);
    if (sc.rank == 0) {
        n = build_master(c, &train, &test, max_batch, &st, err, errlen);
        if (n) {
            snprintf(hdr.spec, sizeof hdr.spec, "%s", n->spec_text);
            hdr.h = n->h;
            hdr.w = n->w;
            hdr.c = n->c;
            hdr.classes = n->classes;
            hdr.in_mean = n->in_mean;
            hdr.in_std = n->in_std;
            hdr.epochs_done = st.epochs_done;
            hdr.steps_done = st.steps_done;
            hdr.resumed = c->resume_path != NULL;
        }
    }
    if (sync_agree(&sc, sc.rank == 0 && !n, err, errlen))
        goto done;
    sync_bcast(&sc, &hdr, (long)sizeof hdr);
    if (sc.rank != 0) {
        n = net_new(hdr.spec, hdr.h, hdr.w, hdr.c, hdr.classes, max_batch, err, errlen);
        if (n) {
            n->in_mean = hdr.in_mean;
            n->in_std = hdr.in_std;
        }
        st.epochs_done = hdr.epochs_done;
        st.steps_done = hdr.steps_done;
    }
    order = malloc(sizeof *order * (size_t)train.n);
    idx_buf = malloc(sizeof *idx_buf * (size_t)max_batch);
    labels = malloc((size_t)max_batch);
    failed = !n || !order || !idx_buf || !labels;
    if (failed && n)
        snprintf(err, (size_t)errlen, "out of memory");
    if (sync_agree(&sc, failed, err, errlen))
        goto done;
    sync_bcast(&sc, n->params, (long)sizeof(float) * n->n_params);
    if (hdr.resumed)
        sync_bcast(&sc, n->momentum, (long)sizeof(float) * n->n_params);
    const double t_model1 = sync_now(&sc);
    r->model_build_s = t_model1 - t_data1;
    r->n_params = n->n_params;
    r->forward_flops = net_forward_flops(n);
    if (c->trace_path) {
        trace_run run = { 0 };
        gethostname(run.host, sizeof run.host - 1);
        run.host_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(run.git, sizeof run.git, "%s", c->git ? c->git : "unknown");
        snprintf(run.net, sizeof run.net, "%.255s", n->spec_text);
        run.model_bytes = (long)sizeof(float) * n->n_params;
        run.config = trainer_model_config(c, sc.train_world, train.n);
        run.seed = (long)c->seed;
        tr = trace_new(&run);
        trace_oom = !tr;
        if (sc.mpi)
            sync_record(tr, &trace_oom, sc.rank, TRACE_STARTUP, sc.init_t0_s, sc.init_t1_s, -1, -1, 0, 0,
                        "mpi_init");
        sync_record(tr, &trace_oom, sc.rank, TRACE_STARTUP, sc.init_t1_s, t_data1, -1, -1, 0, 0, "data_load");
        sync_record(tr, &trace_oom, sc.rank, TRACE_STARTUP, t_data1, t_model1, -1, -1, 0, 0, "model_build");
    }

    // ---- training
    const long spe = trainer_steps_per_epoch(c, sc.train_world, train.n);
    const long total_steps = spe * c->epochs;
    const int batch_sync = c->sync == COSTMODEL_SYNC_BATCH;
    const int every = c->sync == COSTMODEL_SYNC_EVERY ? c->every_n : 0;
    long step = st.steps_done;
    double step_time_s = 0.0;
    long step_examples = 0;
    r->steps_per_epoch = spe;
    r->first_epoch = st.epochs_done;
    r->train_examples = train.n;
    r->test_examples = test.n;
    long test_begin, test_end;
    dataset_shard(test.n, sc.rank, sc.world, &test_begin, &test_end);
    double mark = t_model1; // end of the last recorded event: bookkeeping between steps counts in the next
    for (int e = st.epochs_done; e < c->epochs; e++) {
        double te = sync_now(&sc);
        if (dataset_epoch_order(train.n, c->seed, e, order)) {
            snprintf(err, (size_t)errlen, "out of memory");
            rc = -2;
            goto done;
        }
        // Dropout masks restart per epoch too, so --resume repeats an uninterrupted run.
        net_seed_dropout(n, c->seed * 2654435761UL + (unsigned long)e);
        double loss_sum = 0.0, epoch_step_s = 0.0;
        long done_ex = 0, loss_steps = 0;
        for (long s = 0; s < spe; s++, step++) {
            if (c->fail_rank == sc.rank && step == c->fail_at_step)
                raise(SIGKILL); // fault tests: this rank dies as a crashed node would
            const trainer_range sl = trainer_slice(c, sc.train_rank, sc.train_world, train.n, s);
            const long lo = sl.lo;
            const float divisor = (float)sl.divisor;
            const int count = (int)(sl.hi - sl.lo);
            const float lr = (float)trainer_lr(c, step, total_steps, e);
            const double ts = sync_now(&sc);
            float loss = 0.0f;
            if (count > 0) {
                dataset_batch(&train, order + lo, count, n->in_mean, n->in_std, net_input(n), labels);
                net_dropout_at(n, lo);
                loss = net_forward(n, count, labels, 1, divisor);
                net_backward(n, count, labels, divisor);
                loss_sum += loss;
                loss_steps++;
            } else if (batch_sync) {
                memset(n->grads, 0, sizeof(float) * (size_t)n->n_params);
            }
            // Each event starts where this rank's previous one ended: the phases tile its time.
            if (batch_sync && sc.world > 1) {
                double tc = sync_now(&sc);
                sync_record(tr, &trace_oom, sc.rank, TRACE_COMPUTE, mark, tc, e, step, 0, count, NULL);
                mark = tc;
                sync_step(&sc, n, lr, (float)c->momentum, (float)c->weight_decay, tr, &trace_oom, e, step, &mark);
            } else {
                if (count > 0)
                    net_update(n, lr, (float)c->momentum, (float)c->weight_decay);
                double tc = sync_now(&sc);
                sync_record(tr, &trace_oom, sc.rank, TRACE_COMPUTE, mark, tc, e, step, 0, count, NULL);
                mark = tc;
                if (!batch_sync && ((every && (s + 1) % every == 0) || s + 1 == spe))
                    sync_average(&sc, n, tr, &trace_oom, e, step, &mark);
            }
            const double tf = mark;
            epoch_step_s += tf - ts;
            done_ex += count;
            if (sc.world == 1 && !isfinite(loss)) {
                snprintf(err, (size_t)errlen, "epoch %d step %ld: loss is %g (lower --lr?)", e + 1, s + 1,
                         (double)loss);
                goto done;
            }
            if (c->progress && sc.rank == 0)
                c->progress(c->progress_ctx, e, c->epochs, s + 1, spe, done_ex / epoch_step_s,
                            loss_sum / (double)(loss_steps ? loss_steps : 1));
        }
        step_time_s += epoch_step_s;
        step_examples += done_ex;
        const double tv = mark;
        long correct = evaluate_range(n, &test, test_begin, test_end, idx_buf, labels);
        correct = sync_sum_long(&sc, correct);
        // The epoch's loss: batch sync sums the ranks' parts of each step's mean; local SGD
        // averages the ranks' step means.
        double loss_all = sync_sum(&sc, loss_sum);
        double steps_all = batch_sync ? (double)spe : sync_sum(&sc, (double)loss_steps);
        r->test_accuracy = test.n ? (double)correct / (double)test.n : 0.0;
        const double tv1 = sync_now(&sc);
        r->eval_s += tv1 - tv;
        sync_record(tr, &trace_oom, sc.rank, TRACE_EVAL, tv, tv1, e, -1, 0, 0, "test");
        mark = tv1;
        int i = r->epochs_run++;
        r->train_loss[i] = loss_all / (steps_all > 0 ? steps_all : 1.0);
        r->epoch_times_s[i] = tv - te;
        if (!isfinite(r->train_loss[i])) {
            snprintf(err, (size_t)errlen, "epoch %d: loss is %g (lower --lr?)", e + 1, r->train_loss[i]);
            goto done;
        }
        if (c->checkpoint_path) {
            failed = 0;
            if (sc.rank == 0) {
                checkpoint_state now = { e + 1, step, c->seed };
                failed = checkpoint_save(c->checkpoint_path, n, &now, err, errlen) != 0;
            }
            if (sync_agree(&sc, failed, err, errlen))
                goto done;
            const double tk = sync_now(&sc);
            sync_record(tr, &trace_oom, sc.rank, TRACE_EVAL, tv1, tk, e, -1, 0, 0, "checkpoint");
            mark = tk;
        }
        if (c->stop_after > 0 && e + 1 >= c->stop_after)
            break;
    }
    step_examples = sync_sum_long(&sc, step_examples);
    r->examples_per_s = step_time_s > 0 ? (double)step_examples / step_time_s : 0.0;
    r->params_crc32 = crc32(0L, (const Bytef *)n->params, (uInt)(sizeof(float) * (size_t)n->n_params));
    r->wall_s = sync_now(&sc) - sc.init_t0_s;
    sync_gather_rss(&sc, peak_rss_mib(), r->peak_rss_mib, TRAINER_MAX_RANKS);
    if (c->trace_path) {
        // Every rank knows whether its own trace is whole; one failure loses the file.
        failed = trace_oom;
        if (failed)
            snprintf(err, (size_t)errlen, "%s: out of memory while recording the trace", c->trace_path);
        if (sync_agree(&sc, failed, err, errlen))
            goto done;
        failed = sync_gather_trace(&sc, tr) != 0;
        if (failed)
            snprintf(err, (size_t)errlen, "%s: out of memory while gathering the trace", c->trace_path);
        else if (sc.rank == 0)
            failed = trace_write(tr, c->trace_path, err, errlen) != 0;
        if (sync_agree(&sc, failed, err, errlen))
            goto done;
    }
    trace_free(tr);
    tr = NULL;
    sync_gather_rss(&sc, peak_rss_mib(), r->peak_rss_final_mib, TRAINER_MAX_RANKS);
    rc = 0;
done:
    trace_free(tr);
    free(order);
    free(idx_buf);
    free(labels);
    net_free(n);
    dataset_free(&train);
    dataset_free(&test);
    // After an agreed failure MPI stays up: the caller reports it on rank 0 and then calls
    // trainer_finish, whose barrier keeps the other ranks from exiting first (mpirun would
    // kill rank 0 at their non-zero exit, before it printed why).
    if (rc == 0)
        sync_finish(&sc);
    return rc;
}
