/* memory — the per-rank peak model (memory.h): roles, the known byte counts of train/, the
 * fitted terms' features, sizes, and the seed-like example's stated assumptions. */
#include "model/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int memory_model_copies(const job_config *c, job_role role) {
    const bool batch = c->sync == JOB_SYNC_BATCH;
    if (c->sync == JOB_SYNC_ASYNC)
        /* The server receives into its gradients and updates (3); a worker sends gradients
         * and receives weights (2: its momentum stays untouched). */
        return role == JOB_ROLE_MASTER ? 3 : 2;
    if (c->sync == JOB_SYNC_HOGWILD)
        /* The server: weights, momentum, one gradient buffer per updater thread (T) and the
         * copy a pull sends (train/asyncps.h). */
        return role == JOB_ROLE_MASTER ? 3 + c->cores : 2;
    switch (role) {
    case JOB_ROLE_MASTER_WORKER:
        return 4; /* weights, gradients, momentum and the receive buffer */
    case JOB_ROLE_MASTER:
        /* Batch sync: it zeroes its gradients (its share of the sum) and updates. Averaging:
         * it zeroes its weights and takes the sum; gradients and momentum stay untouched. */
        return batch ? 4 : 2;
    case JOB_ROLE_WORKER:
    default:
        /* A ps worker in batch sync sends gradients and receives weights: rank 0 updates. */
        return batch && c->topology == JOB_TOPO_PS && job_ranks(c) >= 2 ? 2 : 3;
    }
}

long memory_trace_events(const job_config *c, job_role role, bool checkpoint) {
    const job_schedule s = job_schedule_of(c);
    const bool single = job_ranks(c) == 1, ps = c->topology == JOB_TOPO_PS;
    const bool master = role != JOB_ROLE_WORKER;
    long per_epoch;
    if (job_sync_is_async(c->sync)) {
        /* Every step has examples (a shard's short last batch included): a worker records
         * compute and push every step, a pull every N, and the epoch's barrier; the master
         * per push a wait for its header, the receive (beside its timeline), a wait for
         * the receive's end and the update, per pull a wait for its header, a wait for its
         * turn and the send, per worker's end
         * of epoch a wait, and its barrier (train/asyncps.h). Hogwild's waits for a free
         * buffer are not counted. */
        const long pulls = (s.steps_per_epoch + c->every_n - 1) / c->every_n;
        per_epoch = master ? c->workers * (4 * s.steps_per_epoch + 3 * pulls + 1) + 1
                           : 2 * s.steps_per_epoch + pulls + 1;
    } else if (c->sync == JOB_SYNC_BATCH) {
        /* compute, then: the update alone (one rank); wait, comm, update (all-reduce); wait
         * and comm (ps worker); wait, pushes, update, pulls (ps master). */
        const long per_step = single ? 2 : !ps ? 4 : master ? 5 : 3;
        per_epoch = s.steps_per_epoch * per_step;
    } else {
        /* compute and the local update every step (not on a dedicated master, which has
         * no examples), then at each averaging: wait, comm, average (all-reduce); wait and
         * comm (ps worker); wait, pushes, average, pulls (ps master). */
        const long per_step = role == JOB_ROLE_MASTER ? 1 : 2;
        const long per_sync = single ? 0 : !ps ? 3 : master ? 4 : 2;
        per_epoch = s.steps_per_epoch * per_step + s.rounds_per_epoch * per_sync;
    }
    per_epoch += checkpoint ? 2 : 1; /* the evaluation, the checkpoint */
    return 3 + (long)c->epochs * per_epoch; /* mpi_init, data_load, model_build */
}

void memory_features(double model_bytes, const job_config *c, job_role role, double features[4]) {
    const int k = c->workers;
    features[0] = 1.0;
    features[1] = (double)(job_ranks(c) - 1);
    features[2] = role == JOB_ROLE_MASTER ? 0.0 : (double)(c->cores - 1);
    /* Open MPI's ring all-reduce: one segment of M/K at K = 2, two at K ≥ 3. */
    features[3] = c->topology == JOB_TOPO_ALLREDUCE && k >= 2 ? model_bytes * (k == 2 ? 1.0 : 2.0) / k : 0.0;
}

memory_breakdown memory_peak(const memory_params *m, double model_bytes, const job_config *c,
                             job_role role, double trace_bytes) {
    memory_breakdown b = { 0 };
    double f[4];
    memory_features(model_bytes, c, role, f);
    b.fitted = m->base_bytes * f[0] + m->peer_bytes * f[1] + m->thread_bytes * f[2] + m->allreduce_scratch * f[3];

    const bool master = role != JOB_ROLE_WORKER;
    const double k = (double)c->workers, local = job_schedule_of(c).local_batch;
    b.model = memory_model_copies(c, role) * model_bytes;
    if (master)
        b.model += m->master_models_per_worker * k * model_bytes;
    const double per_example = m->fwd_bytes_per_example + (role == JOB_ROLE_MASTER ? 0.0 : m->train_bytes_per_example);
    b.activations = local * per_example + m->workspace_bytes +
                    (role == JOB_ROLE_MASTER ? 0.0 : m->workspace_bytes_per_thread * (c->cores - 1));

    /* Every rank of this trainer holds both sets; a sharded (Spark-like) worker its 1/K. */
    const double d = (double)c->examples, share = m->sharded_data && !master ? 1.0 / k : 1.0;
    const double e = master && m->sharded_data ? m->master_example_bytes : m->example_bytes;
    b.data = share * (job_loaded_examples(c, m->test_examples) * e + d * (double)sizeof(long));
    b.trace = trace_bytes;
    b.master_extra = master ? m->master_extra_bytes : 0.0;
    b.total = b.fitted + b.model + b.activations + b.data + b.trace + b.master_extra;
    return b;
}

void memory_rank_peaks(const memory_params *m, double model_bytes, const job_config *c, double *rank0,
                       double *other) {
    *rank0 = memory_peak(m, model_bytes, c, job_role_of(c, 0), 0).total;
    *other = job_ranks(c) > 1 ? memory_peak(m, model_bytes, c, job_role_of(c, 1), 0).total : *rank0;
}

int memory_parse_size(const char *s, double *bytes) {
    static const struct { const char *unit; double scale; } units[] = {
        { "", 1.0 }, { "B", 1.0 },
        { "KiB", 1024.0 }, { "MiB", 1048576.0 }, { "GiB", 1073741824.0 }, { "TiB", 1099511627776.0 },
        { "K", 1024.0 }, { "M", 1048576.0 }, { "G", 1073741824.0 }, { "T", 1099511627776.0 },
        { "kB", 1e3 }, { "KB", 1e3 }, { "MB", 1e6 }, { "GB", 1e9 }, { "TB", 1e12 },
    };
    if (!s || !*s)
        return -1;
    char *end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x) || x < 0)
        return -1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(end, units[i].unit) == 0) {
            *bytes = x * units[i].scale;
            return isfinite(*bytes) ? 0 : -1;
        }
    return -1;
}

memory_params memory_params_seed_example(void) {
    /* The seed trained a Keras CNN on Elephas (synchronous, parameter server in the Spark
     * driver). Its report: "the master node will record all the parameters and gradient
     * updates, having too complicated models will take up too much memory space", and
     * "due to memory issue in spark cluster, we reduce the entire data down to 10 percent".
     * Nothing of theirs was measured; every number below is a stated assumption. */
    const double mib = 1048576.0;
    const double keras_example = 784 * 4 + 10 * 4; /* float32 pixels, float32 one-hot label */
    return (memory_params){
        .known = true,
        /* An executor: a JVM (~384 MiB resident) and its Python worker with TensorFlow and
         * Keras imported (~384 MiB); Spark's network buffers are in there. */
        .base_bytes = 768 * mib,
        /* The driver beside it: its own JVM and Python with Keras and Elephas's server. */
        .master_extra_bytes = 768 * mib,
        /* Elephas collects every worker's update at each synchronisation (an RDD
         * collect()): K models at once on the master, where this trainer reuses one buffer. */
        .master_models_per_worker = 1.0,
        /* A horovod-like all-reduce what-if: Open MPI's ring scratch, as measured here. */
        .allreduce_scratch = 1.0,
        /* The same CNN as train/'s default network: Keras keeps what this trainer keeps
         * (every layer's output for the backward pass, and the gradients it flows back). */
        .fwd_bytes_per_example = 191888, .train_bytes_per_example = 125952,
        .workspace_bytes = 1646400, .workspace_bytes_per_thread = 1854784,
        /* Spark partitions the data: an executor holds its 1/K of the float32 arrays; the
         * driver builds the arrays, the per-example pairs to_simple_rdd makes of them and the
         * pickled copy parallelize ships: three copies of every example. */
        .sharded_data = true,
        .example_bytes = keras_example,
        .master_example_bytes = 3 * keras_example,
        .test_examples = 1000, /* 10 % of the test set, as of the training set */
    };
}
