#define _POSIX_C_SOURCE 200809L
#include "bench/commbench.h"

#include "fit/fit.h"
#include "comm/psx.h" // defines: psx_exchange, the trainer's parameter-server exchange
#include "util/host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

commbench_options commbench_defaults(void) {
    commbench_options o = { .sizes_bytes = { 8, 1024, 16384, 131072, 524288, 1819688 }, .n_sizes = 6,
                            .reps = 20, .warmup = 2, .git = "unknown" };
    return o;
}

static int fail(char *err, int errlen, const char *what) {
    snprintf(err, (size_t)errlen, "%s", what);
    return -1;
}

typedef struct {
    MPI_Comm comm;
    int rank, size;
    float *send, *recv;          /* (max floats) message buffers */
    double start;                /* MPI_Wtime of the common start */
    trace *t;                    /* this rank's events */
    int ok;
} bench;

static void record(bench *b, const char *name, double t0, double t1, long step, long bytes) {
    trace_event e = { .rank = b->rank, .ph = TRACE_COMM, .t0_s = t0 - b->start, .t1_s = t1 - b->start,
                      .epoch = -1, .step = step, .bytes = bytes };
    snprintf(e.name, sizeof e.name, "%s", name);
    if (trace_add(b->t, &e))
        b->ok = 0;
}

static void pingpong(bench *b, int floats, long step, int keep) {
    MPI_Barrier(b->comm);
    double t0 = MPI_Wtime();
    if (b->rank == 0) {
        MPI_Send(b->send, floats, MPI_FLOAT, 1, 1, b->comm);
        MPI_Recv(b->recv, floats, MPI_FLOAT, 1, 2, b->comm, MPI_STATUS_IGNORE);
    } else if (b->rank == 1) {
        MPI_Recv(b->recv, floats, MPI_FLOAT, 0, 1, b->comm, MPI_STATUS_IGNORE);
        MPI_Send(b->send, floats, MPI_FLOAT, 0, 2, b->comm);
    } else {
        return;
    }
    if (keep)
        record(b, "pingpong", t0, MPI_Wtime(), step, 4L * floats);
}

static void allreduce(bench *b, int floats, long step, int keep) {
    MPI_Barrier(b->comm);
    double t0 = MPI_Wtime();
    MPI_Allreduce(MPI_IN_PLACE, b->recv, floats, MPI_FLOAT, MPI_SUM, b->comm);
    if (keep)
        record(b, "allreduce", t0, MPI_Wtime(), step, 4L * floats);
}

/* The parameter server: the trainer's exchange itself (comm/psx.h), with nothing between
 * the pushes and the pulls. b->send is every rank's block (rank 0 adds the pushes into it,
 * the workers receive the pull into it), b->recv rank 0's receive buffer. */
static void ps(bench *b, int floats, long step, int keep) {
    MPI_Barrier(b->comm);
    double t0 = MPI_Wtime();
    psx_exchange(b->comm, b->send, b->send, floats, b->rank == 0 ? b->recv : NULL, NULL, NULL);
    if (keep)
        record(b, "ps", t0, MPI_Wtime(), step, 4L * floats);
}

static int check_options(const commbench_options *o, int size, char *err, int errlen) {
    if (size < 2)
        return fail(err, errlen, "commbench needs 2 or more ranks: run it as mpirun -np 2 speedup commbench ...");
    if (o->n_sizes < 1 || o->n_sizes > COMMBENCH_MAX_SIZES)
        return fail(err, errlen, "commbench: between 1 and 32 message sizes");
    for (int i = 0; i < o->n_sizes; i++)
        if (o->sizes_bytes[i] < 1 || o->sizes_bytes[i] > (1L << 30))
            return fail(err, errlen, "commbench: message sizes must be in [1, 2^30] bytes");
    if (o->reps < 1 || o->warmup < 0)
        return fail(err, errlen, "commbench: reps must be >= 1 and warmup >= 0");
    return 0;
}

static trace_run header(const commbench_options *o, int size, long max_bytes) {
    trace_run run;
    memset(&run, 0, sizeof run);
    if (gethostname(run.host, sizeof run.host - 1) != 0)
        snprintf(run.host, sizeof run.host, "unknown");
    run.host_cores = host_online_cores();
    snprintf(run.git, sizeof run.git, "%s", o->git ? o->git : "unknown");
    snprintf(run.net, sizeof run.net, "%s", FIT_COMMBENCH_NET);
    run.model_bytes = max_bytes;
    run.config = (job_config){ .workers = size, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = JOB_TOPO_ALLREDUCE, .master = JOB_MASTER_WORKER,
                                     .examples = 1, .batch = 1, .epochs = 1 };
    return run;
}

/* Rank 0 collects every rank's events into its trace. */
static int gather(bench *b) {
    int n = (int)b->t->n_events, *counts = NULL, *displs = NULL;
    if (b->rank == 0) {
        counts = calloc((size_t)b->size, sizeof *counts);
        displs = calloc((size_t)b->size, sizeof *displs);
    }
    int bytes = n * (int)sizeof(trace_event);
    MPI_Gather(&bytes, 1, MPI_INT, counts, 1, MPI_INT, 0, b->comm);
    trace_event *all = NULL;
    int total = 0;
    if (b->rank == 0 && counts && displs) {
        for (int r = 0; r < b->size; r++) {
            displs[r] = total;
            total += counts[r];
        }
        all = malloc((size_t)total + 1);
    }
    MPI_Gatherv(b->t->events, bytes, MPI_BYTE, all, counts, displs, MPI_BYTE, 0, b->comm);
    int rc = 0;
    if (b->rank == 0) {
        if (!all) {
            rc = -1;
        } else {
            b->t->n_events = 0;     /* rank 0's own events come back first in all */
            for (int i = 0; i < total / (int)sizeof(trace_event) && rc == 0; i++)
                rc = trace_add(b->t, &all[i]);
        }
    }
    free(all);
    free(counts);
    free(displs);
    return rc;
}

int commbench_run(MPI_Comm comm, const commbench_options *o, trace **out, char *err, int errlen) {
    bench b = { .comm = comm, .ok = 1 };
    *out = NULL;
    MPI_Comm_rank(comm, &b.rank);
    MPI_Comm_size(comm, &b.size);
    if (check_options(o, b.size, err, errlen))
        return -1;
    long max_bytes = 0;
    for (int i = 0; i < o->n_sizes; i++)
        max_bytes = o->sizes_bytes[i] > max_bytes ? o->sizes_bytes[i] : max_bytes;
    int max_floats = (int)((max_bytes + 3) / 4);
    trace_run run = header(o, b.size, 4L * max_floats);
    b.t = trace_new(&run);
    b.send = calloc((size_t)max_floats, sizeof *b.send);
    b.recv = calloc((size_t)max_floats, sizeof *b.recv);
    int mine = b.t && b.send && b.recv, all_ok = 0;
    MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    if (!all_ok) {
        trace_free(b.t);
        free(b.send);
        free(b.recv);
        return fail(err, errlen, "commbench: out of memory");
    }
    MPI_Barrier(comm);
    b.start = MPI_Wtime();
    for (int i = 0; i < o->n_sizes; i++) {
        int floats = (int)((o->sizes_bytes[i] + 3) / 4);
        for (int r = -o->warmup; r < o->reps; r++) {
            pingpong(&b, floats, r, r >= 0);
            allreduce(&b, floats, r, r >= 0);
            ps(&b, floats, r, r >= 0);
        }
    }
    mine = b.ok;
    MPI_Allreduce(&mine, &all_ok, 1, MPI_INT, MPI_LAND, comm);
    int rc = all_ok ? gather(&b) : -1;
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    free(b.send);
    free(b.recv);
    if (rc) {
        trace_free(b.t);
        return fail(err, errlen, "commbench: out of memory while recording");
    }
    if (b.rank == 0)
        *out = b.t;
    else
        trace_free(b.t);
    return 0;
}
