/* trainer — the training loop of one rank. */
#define _POSIX_C_SOURCE 200809L
#include "train/trainer.h"

#include "model/trace.h"
#include "train/checkpoint.h"

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
    c->lr = 0.01;
    c->momentum = 0.9;
    c->weight_decay = 5e-4;
    c->schedule = SCHEDULE_COSINE;
    c->net_spec = NETSPEC_DEFAULT;
    c->seed = 1;
    c->threads = 1;
    c->git = "unknown";
    c->world = 1;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double trainer_lr(const trainer_config *c, long t, long total, int epoch) {
    if (c->schedule == SCHEDULE_COSINE)
        return c->lr * 0.5 * (1.0 + cos(3.14159265358979323846 * (double)t / (double)(total > 0 ? total : 1)));
    // step: ×0.1 at half and at three quarters of the epochs
    double lr = c->lr;
    if (c->epochs >= 2 && epoch >= c->epochs / 2)
        lr *= 0.1;
    if (c->epochs >= 4 && epoch >= (3 * c->epochs) / 4)
        lr *= 0.1;
    return lr;
}

float trainer_step(const trainer_config *c, net *n, const dataset *d, const long *idx, int count,
                   uint8_t *labels_buf, float lr, long step, char *err, int errlen) {
    dataset_batch(d, idx, count, n->in_mean, n->in_std, net_input(n), labels_buf);
    float loss = net_forward(n, count, labels_buf, 1, c->grad_divisor);
    net_backward(n, count, labels_buf, c->grad_divisor);
    if (c->after_backward && c->after_backward(c->after_backward_ctx, n, step, err, errlen))
        return NAN;
    net_update(n, lr, (float)c->momentum, (float)c->weight_decay);
    return loss;
}

double trainer_evaluate(net *n, const dataset *d, long *idx_buf, uint8_t *labels_buf) {
    long correct = 0;
    for (long s = 0; s < d->n; s += n->max_batch) {
        int count = (int)(d->n - s < n->max_batch ? d->n - s : n->max_batch);
        for (int i = 0; i < count; i++)
            idx_buf[i] = s + i;
        dataset_batch(d, idx_buf, count, n->in_mean, n->in_std, net_input(n), labels_buf);
        net_forward(n, count, labels_buf, 0, 0.0f);
        correct += net_count_correct(n, count, labels_buf);
    }
    return d->n ? (double)correct / (double)d->n : 0.0;
}

/* Adds an event when tracing; a failed add only loses the trace, which is reported at
 * the end, not the training. */
static void record(trace *tr, int *trace_oom, int rank, trace_phase ph, double t0, double t1, int epoch,
                   long step, long examples, const char *name) {
    if (!tr)
        return;
    trace_event e = { .rank = rank, .ph = ph, .t0_s = t0, .t1_s = t1, .epoch = epoch, .step = step,
                      .examples = examples };
    snprintf(e.name, sizeof e.name, "%s", name ? name : "");
    if (trace_add(tr, &e))
        *trace_oom = 1;
}

int trainer_run(const trainer_config *c, trainer_result *r, char *err, int errlen) {
    memset(r, 0, sizeof *r);
    if (c->epochs < 1 || c->epochs > TRAINER_MAX_EPOCHS || c->batch < 1 || c->threads < 1 || c->world < 1 ||
        c->rank < 0 || c->rank >= c->world) {
        snprintf(err, (size_t)errlen, "trainer: epochs, batch, threads or rank out of range");
        return -1;
    }
    // One thread pool: OpenMP splits every product over the threads, each calling
    // single-threaded OpenBLAS (two pools of spinning threads fight over the cores).
    openblas_set_num_threads(1);
#ifdef _OPENMP
    omp_set_num_threads(c->threads);
#endif
    const double t_start = now_s();
    int rc = -1, trace_oom = 0;
    dataset train = { 0 }, test = { 0 };
    net *n = NULL;
    trace *tr = NULL;
    long *order = NULL, *idx_buf = NULL;
    uint8_t *labels = NULL;

    // ---- data
    double t0 = now_s();
    if (dataset_load(c->data_dir, "train", c->limit, &train, err, errlen) ||
        dataset_load(c->data_dir, "t10k", c->limit, &test, err, errlen))
        goto done;
    if (train.h != test.h || train.w != test.w) {
        snprintf(err, (size_t)errlen, "%s: test images are %dx%d, training images %dx%d", c->data_dir, test.h,
                 test.w, train.h, train.w);
        goto done;
    }
    if (train.n < c->world) {
        snprintf(err, (size_t)errlen, "%ld training examples for %d ranks", train.n, c->world);
        goto done;
    }
    r->data_load_s = now_s() - t0;
    double t_data = now_s();

    // ---- model
    checkpoint_state st = { 0, 0, c->seed };
    int classes = train.classes > test.classes ? train.classes : test.classes;
    if (c->resume_path) {
        n = checkpoint_load(c->resume_path, c->batch, &st, err, errlen);
        if (!n)
            goto done;
        if (n->h != train.h || n->w != train.w || n->classes < classes) {
            snprintf(err, (size_t)errlen, "%s: network is for %dx%d images and %d classes, data has %dx%d and %d",
                     c->resume_path, n->h, n->w, n->classes, train.h, train.w, classes);
            goto done;
        }
        if (st.epochs_done >= c->epochs) {
            snprintf(err, (size_t)errlen, "%s: already %d epochs done, --epochs is %d", c->resume_path,
                     st.epochs_done, c->epochs);
            goto done;
        }
    } else {
        // The spec's last fc decides the class count; the data must fit in it.
        netspec spec;
        if (netspec_parse(c->net_spec, &spec, err, errlen))
            goto done;
        int out = spec.n ? spec.layers[spec.n - 1].out : 0;
        n = net_new(c->net_spec, train.h, train.w, 1, out > classes ? out : classes, c->batch, err, errlen);
        if (!n)
            goto done;
        net_init(n, c->seed);
        dataset_pixel_stats(&train, &n->in_mean, &n->in_std);
    }
    order = malloc(sizeof *order * (size_t)train.n);
    idx_buf = malloc(sizeof *idx_buf * (size_t)c->batch);
    labels = malloc((size_t)c->batch);
    if (!order || !idx_buf || !labels) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    r->model_build_s = now_s() - t_data;
    r->n_params = n->n_params;
    r->forward_flops = net_forward_flops(n);
    if (c->trace_path) {
        trace_run run = { 0 };
        gethostname(run.host, sizeof run.host - 1);
        run.host_cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
        snprintf(run.git, sizeof run.git, "%s", c->git ? c->git : "unknown");
        snprintf(run.net, sizeof run.net, "%.255s", n->spec_text);
        run.model_bytes = (long)sizeof(float) * n->n_params;
        run.config = (costmodel_config){ .workers = c->world, .cores = c->threads, .sync = COSTMODEL_SYNC_BATCH,
                                         .every_n = 1, .topology = COSTMODEL_TOPO_ALLREDUCE,
                                         .master = COSTMODEL_MASTER_WORKER, .batch_per_worker = false,
                                         .examples = train.n, .batch = c->batch, .epochs = c->epochs };
        run.seed = (long)c->seed;
        tr = trace_new(&run);
        if (!tr) {
            snprintf(err, (size_t)errlen, "out of memory for the trace");
            goto done;
        }
        record(tr, &trace_oom, c->rank, TRACE_STARTUP, t0 - t_start, t_data - t_start, -1, -1, 0, "data_load");
        record(tr, &trace_oom, c->rank, TRACE_STARTUP, t_data - t_start, now_s() - t_start, -1, -1, 0,
               "model_build");
    }

    // ---- training
    long begin, end;
    dataset_shard(train.n, c->rank, c->world, &begin, &end);
    const long shard = end - begin;
    const long steps_per_epoch = (shard + c->batch - 1) / c->batch;
    const long total_steps = steps_per_epoch * c->epochs;
    long step = st.steps_done;
    double step_time_s = 0.0;
    long step_examples = 0;
    r->first_epoch = st.epochs_done;
    r->train_examples = train.n;
    r->test_examples = test.n;
    for (int e = st.epochs_done; e < c->epochs; e++) {
        double te = now_s();
        if (dataset_epoch_order(train.n, c->seed, e, order)) {
            snprintf(err, (size_t)errlen, "out of memory");
            goto done;
        }
        // Dropout masks restart per epoch too, so --resume repeats an uninterrupted run.
        net_seed_dropout(n, c->seed * 2654435761UL + (unsigned long)e);
        double loss_sum = 0.0, epoch_step_s = 0.0;
        long done_ex = 0;
        for (long s = 0; s < steps_per_epoch; s++, step++) {
            int count = (int)(shard - s * c->batch < c->batch ? shard - s * c->batch : c->batch);
            float lr = (float)trainer_lr(c, step, total_steps, e);
            double ts = now_s();
            err[0] = '\0';
            float loss = trainer_step(c, n, &train, order + begin + s * c->batch, count, labels, lr, step, err,
                                      errlen);
            if (err[0])
                goto done;
            double tf = now_s();
            record(tr, &trace_oom, c->rank, TRACE_COMPUTE, ts - t_start, tf - t_start, e, step, count, NULL);
            epoch_step_s += tf - ts;
            loss_sum += loss;
            done_ex += count;
            if (!isfinite(loss)) {
                snprintf(err, (size_t)errlen, "epoch %d step %ld: loss is %g (lower --lr?)", e + 1, s + 1,
                         (double)loss);
                goto done;
            }
            if (c->progress)
                c->progress(c->progress_ctx, e, c->epochs, done_ex, shard, done_ex / epoch_step_s,
                            loss_sum / (double)(s + 1));
        }
        step_time_s += epoch_step_s;
        step_examples += done_ex;
        double tv = now_s();
        r->test_accuracy = trainer_evaluate(n, &test, idx_buf, labels);
        double tv1 = now_s();
        r->eval_s += tv1 - tv;
        record(tr, &trace_oom, c->rank, TRACE_EVAL, tv - t_start, tv1 - t_start, e, -1, test.n, "test");
        int i = r->epochs_run++;
        r->train_loss[i] = loss_sum / (double)steps_per_epoch;
        r->epoch_times_s[i] = tv - te;
        if (c->checkpoint_path && c->rank == 0) {
            checkpoint_state now = { e + 1, step, c->seed };
            if (checkpoint_save(c->checkpoint_path, n, &now, err, errlen))
                goto done;
        }
        if (c->stop_after > 0 && e + 1 >= c->stop_after)
            break;
    }
    r->examples_per_s = step_time_s > 0 ? (double)step_examples / step_time_s : 0.0;
    r->params_crc32 = crc32(0L, (const Bytef *)n->params, (uInt)(sizeof(float) * (size_t)n->n_params));
    r->wall_s = now_s() - t_start;
    if (tr) {
        if (trace_oom) {
            snprintf(err, (size_t)errlen, "%s: out of memory while recording the trace", c->trace_path);
            goto done;
        }
        if (trace_write(tr, c->trace_path, err, errlen))
            goto done;
    }
    rc = 0;
done:
    trace_free(tr);
    free(order);
    free(idx_buf);
    free(labels);
    net_free(n);
    dataset_free(&train);
    dataset_free(&test);
    return rc;
}
