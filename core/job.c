/* job — the job's names and ranks (job.h). */
#include "core/job.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* Ranks */

static const char *const role_names[JOB_ROLE_COUNT] = { "worker", "master+worker", "master" };

const char *job_role_name(job_role r) {
    return r >= 0 && r < JOB_ROLE_COUNT ? role_names[r] : "?";
}

bool job_dedicated_master(const job_config *c) {
    return c->topology == JOB_TOPO_PS && c->master == JOB_MASTER_DEDICATED;
}

double job_loaded_examples(const job_config *c, double test_examples) {
    const double d = (double)c->examples;
    return d + fmin(d, test_examples);
}

int job_ranks(const job_config *c) { return c->workers + (job_dedicated_master(c) ? 1 : 0); }

job_role job_role_of(const job_config *c, int rank) {
    if (rank != 0 || c->topology != JOB_TOPO_PS || job_ranks(c) < 2)
        return JOB_ROLE_WORKER;
    return job_dedicated_master(c) ? JOB_ROLE_MASTER : JOB_ROLE_MASTER_WORKER;
}

/* ---------------------------------------------------------------------------------- */
/* Names */

static const char *const topology_names[] = { "ps", "allreduce" };

const char *job_topology_name(job_topology t) {
    return (t >= 0 && t < JOB_TOPO_COUNT) ? topology_names[t] : "?";
}

int job_topology_parse(const char *s, job_topology *out) {
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        if (strcmp(s, topology_names[t]) == 0) {
            *out = (job_topology)t;
            return 0;
        }
    return -1;
}

bool job_sync_is_async(job_sync s) { return s == JOB_SYNC_ASYNC || s == JOB_SYNC_HOGWILD; }

/* "NAME" (pull period 1) or "NAME:N", N in [1, 1e9]: 0, else -1. */
static int parse_async(const char *s, const char *name, int *every_n) {
    size_t len = strlen(name);
    if (strncmp(s, name, len) != 0)
        return -1;
    if (s[len] == '\0') {
        *every_n = 1;
        return 0;
    }
    if (s[len] != ':')
        return -1;
    char *end = NULL;
    long n = strtol(s + len + 1, &end, 10);
    if (end == s + len + 1 || *end != '\0' || n < 1 || n > 1000000000L)
        return -1;
    *every_n = (int)n;
    return 0;
}

int job_sync_parse(const char *s, job_sync *out, int *every_n) {
    if (parse_async(s, "async", every_n) == 0) {
        *out = JOB_SYNC_ASYNC;
        return 0;
    }
    if (parse_async(s, "hogwild", every_n) == 0) {
        *out = JOB_SYNC_HOGWILD;
        return 0;
    }
    if (strcmp(s, "batch") == 0) {
        *out = JOB_SYNC_BATCH;
        *every_n = 1;
        return 0;
    }
    if (strcmp(s, "epoch") == 0) {
        *out = JOB_SYNC_EPOCH;
        *every_n = 0;
        return 0;
    }
    if (strncmp(s, "every:", 6) == 0) {
        char *end = NULL;
        long n = strtol(s + 6, &end, 10);
        if (end == s + 6 || *end != '\0' || n < 1 || n > 1000000000L)
            return -1;
        *out = JOB_SYNC_EVERY;
        *every_n = (int)n;
        return 0;
    }
    return -1;
}

void job_sync_format(job_sync s, int every_n, char *buf, int buflen) {
    switch (s) {
    case JOB_SYNC_BATCH: snprintf(buf, (size_t)buflen, "batch"); break;
    case JOB_SYNC_EPOCH: snprintf(buf, (size_t)buflen, "epoch"); break;
    case JOB_SYNC_EVERY: snprintf(buf, (size_t)buflen, "every:%d", every_n); break;
    case JOB_SYNC_ASYNC:
    case JOB_SYNC_HOGWILD:
        if (every_n > 1)
            snprintf(buf, (size_t)buflen, "%s:%d", s == JOB_SYNC_ASYNC ? "async" : "hogwild", every_n);
        else
            snprintf(buf, (size_t)buflen, "%s", s == JOB_SYNC_ASYNC ? "async" : "hogwild");
        break;
    }
}

const char *job_master_name(job_master m) {
    return m == JOB_MASTER_DEDICATED ? "dedicated" : "worker";
}

int job_master_parse(const char *s, job_master *out) {
    if (strcmp(s, "worker") == 0)
        *out = JOB_MASTER_WORKER;
    else if (strcmp(s, "dedicated") == 0)
        *out = JOB_MASTER_DEDICATED;
    else
        return -1;
    return 0;
}


/* ---------------------------------------------------------------------------------- */
/* Checking */

static int fail(char *err, int errlen, const char *what, double value) {
    if (err && errlen > 0)
        snprintf(err, (size_t)errlen, "%s (got %g)", what, value);
    return -1;
}

int job_check(const job_config *c, char *err, int errlen) {
    if (c->workers < 1)
        return fail(err, errlen, "workers must be >= 1", c->workers);
    if (c->cores < 1)
        return fail(err, errlen, "cores must be >= 1", c->cores);
    if (c->examples < 1)
        return fail(err, errlen, "examples must be >= 1", (double)c->examples);
    if (c->batch < 1)
        return fail(err, errlen, "batch must be >= 1", (double)c->batch);
    if (c->epochs < 1)
        return fail(err, errlen, "epochs must be >= 1", c->epochs);
    if (c->sync == JOB_SYNC_EVERY && c->every_n < 1)
        return fail(err, errlen, "every:N needs N >= 1", c->every_n);
    if (c->topology != JOB_TOPO_PS && c->topology != JOB_TOPO_ALLREDUCE)
        return fail(err, errlen, "unknown topology", c->topology);
    if (c->sync != JOB_SYNC_BATCH && c->sync != JOB_SYNC_EPOCH && c->sync != JOB_SYNC_EVERY &&
        !job_sync_is_async(c->sync))
        return fail(err, errlen, "unknown sync mode", c->sync);
    if (job_sync_is_async(c->sync) && c->every_n < 1)
        return fail(err, errlen, "async and hogwild need a pull period N >= 1", c->every_n);
    if (job_sync_is_async(c->sync) &&
        (c->topology != JOB_TOPO_PS || c->master != JOB_MASTER_DEDICATED)) {
        /* The server applies pushes as they arrive: a rank that trains cannot also serve. */
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "%s sync runs through a parameter server on a dedicated master "
                     "(topology ps, master dedicated; got %s, %s)", c->sync == JOB_SYNC_ASYNC ? "async" : "hogwild",
                     job_topology_name(c->topology), job_master_name(c->master));
        return -1;
    }
    if (c->master != JOB_MASTER_WORKER && c->master != JOB_MASTER_DEDICATED)
        return fail(err, errlen, "unknown master", c->master);
    if (c->master == JOB_MASTER_DEDICATED && c->topology != JOB_TOPO_PS) {
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "a dedicated master needs the ps topology (got %s)",
                     job_topology_name(c->topology));
        return -1;
    }
    if (c->sync == JOB_SYNC_BATCH && !c->batch_per_worker && c->workers > c->batch) {
        /* The trainer refuses it too: K − B ranks would get no examples and still pay every
         * exchange. */
        if (err && errlen > 0)
            snprintf(err, (size_t)errlen, "batch sync splits the global batch over the workers: %d workers "
                     "need a batch of %d or more (got %ld); use a larger batch or --batch-per-worker",
                     c->workers, c->workers, c->batch);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* The schedule: b, s, p */

job_schedule job_schedule_of(const job_config *c) {
    job_schedule s;
    /* Batch sync splits one global batch over the workers (the seed's regime) unless
     * every worker is told to take a whole batch of its own. */
    bool split = c->sync == JOB_SYNC_BATCH && !c->batch_per_worker;
    /* Slices differ by at most one example and the barrier waits for the largest. */
    s.local_batch = split ? (double)((c->batch + c->workers - 1) / c->workers) : (double)c->batch;
    if (split) {
        /* K workers each on B/K examples cover one global batch per step. */
        s.steps_per_epoch = (c->examples + c->batch - 1) / c->batch;
    } else {
        long per_step = (long)c->workers * c->batch;
        s.steps_per_epoch = (c->examples + per_step - 1) / per_step;
    }
    switch (c->sync) {
    case JOB_SYNC_BATCH: s.steps_per_round = 1; break;
    case JOB_SYNC_EPOCH:
    case JOB_SYNC_ASYNC: /* no round: each worker's epoch is its own, ended by a barrier */
    case JOB_SYNC_HOGWILD: s.steps_per_round = s.steps_per_epoch; break;
    case JOB_SYNC_EVERY:
        s.steps_per_round = c->every_n < s.steps_per_epoch ? c->every_n : s.steps_per_epoch;
        break;
    }
    s.rounds_per_epoch = (s.steps_per_epoch + s.steps_per_round - 1) / s.steps_per_round;
    return s;
}

