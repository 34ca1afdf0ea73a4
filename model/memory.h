/* memory — the peak resident set (RSS) of each rank of a data-parallel run: will the
 * master fit? (The seed's master, Elephas on Spark, did not.)
 *
 * In: memory_params (fitted by fit/memory_fit.h, or stated), the model's bytes M and a
 * job_config; out: one rank's peak by role (worker, training master, dedicated master) as a
 * memory_breakdown whose parts add up to its total. With b the local batch, R the ranks, T
 * the cores per worker:
 *
 *   peak(role) = base + peer·(R − 1) + thread·(T − 1)                       fitted
 *              + copies(role)·M                                             known
 *              + b·(F + G) (a dedicated master: b·F) + Wk + Wt·(T − 1)      known
 *              + data(role) + events·sizeof(trace_event) (when tracing)     known
 *              + x·M·min(K − 1, 2)/K   (all-reduce ranks, K ≥ 2)            x fitted
 *              + master_extra + master_models_per_worker·K·M  (rank 0 of ps) stated
 *
 * copies(role) (memory_model_copies): 3 (weights, gradients, momentum) on a rank that runs
 * the optimizer, 2 on a ps worker in batch sync or an async or hogwild worker, 4 on ps
 * rank 0 with R ≥ 2 (its one receive buffer), 2 on a dedicated master averaging, 3 on an
 * async master, 3 + T on a hogwild master. F, G: what a forward and what training write per example
 * (train/net.h's net_memory); Wk, Wt: the im2col workspace; data: (D + min(D, D_test))·e
 * + 8·D, the whole sets and the epoch's order (sharded_data: a worker's 1/K).
 *
 * The peak is the training run's, before rank 0 gathers the trace; valid while b is at
 * least the first convolution's chunk (below, Wk is an upper bound). Every term, what is
 * fitted and what stated, and why: docs/memory.md ("The memory model in full").
 *
 * Pure functions on plain structs; nothing allocates, nothing prints.
 */
#ifndef SPEEDUP_MEMORY_H
#define SPEEDUP_MEMORY_H

#include "model/costmodel.h"

#include <stdbool.h>

typedef struct {
    bool known;                      /* false: nothing is known about memory (predict nothing) */
    /* fitted (memory_fit) */
    double base_bytes;               /* a rank's resident set beyond every term below */
    double peer_bytes;               /* per other rank of the job */
    double thread_bytes;             /* per further thread of a worker */
    double allreduce_scratch;        /* x: MPI_Allreduce's scratch, in units of M·min(K−1,2)/K */
    double se_base_bytes, se_peer_bytes, se_thread_bytes, se_allreduce_scratch;
    /* known: the network (train/net.h's net_memory) and the data set */
    double fwd_bytes_per_example, train_bytes_per_example;
    double workspace_bytes, workspace_bytes_per_thread;
    double example_bytes;            /* one example held in memory (image, label) */
    double test_examples;            /* the test set's size: a run holds min(D, it) of it
                                        (--limit cuts both sets) beside the training set */
    /* stated: a master unlike this trainer's (0, 0, false, example_bytes here) */
    double master_extra_bytes;       /* a master's own runtime beyond a worker's */
    double master_models_per_worker; /* models the master holds per worker at a synchronisation */
    bool sharded_data;               /* a worker holds only its 1/K of the data; the master all */
    double master_example_bytes;     /* one example as the master holds it */
    /* the fit's quality (memory_fit; 0 when stated) */
    long points;                     /* rank peaks fitted */
    double rms_bytes;                /* root-mean-square residual */
    double worst_rel_error;          /* worst |fitted − measured| / measured */
} memory_params;

/* Where a rank's peak goes, bytes; the parts add up to total. */
typedef struct {
    double total;
    double fitted;                   /* base + peers + threads + the all-reduce scratch */
    double model;                    /* copies·M + the master's per-worker models */
    double activations;              /* b·(F + G) or b·F, and the workspaces */
    double data;
    double trace;
    double master_extra;
} memory_breakdown;


/* Parameter-sized blocks a rank of this role writes: copies(role) of the header. */
int memory_model_copies(const job_config *c, job_role role);
/* Events a rank of this role records in its trace over the run (start-up, per step,
 * per synchronisation, per epoch: train/trainer.c's and train/sync.c's marks); with
 * checkpoint, one more per epoch. */
long memory_trace_events(const job_config *c, job_role role, bool checkpoint);

/* The peak of one rank of role `role`: M = model_bytes, trace_bytes what its trace's
 * events take in memory (0: no trace; fit/memory_fit.h counts them in a trace). */
memory_breakdown memory_peak(const memory_params *m, double model_bytes, const job_config *c,
                             job_role role, double trace_bytes);
/* The fitted part's features for that rank, in memory_params order (base, peer, thread,
 * allreduce_scratch): the peak is known + Σ features·fitted. */
void memory_features(double model_bytes, const job_config *c, job_role role, double features[4]);

/* The peaks of rank 0 and of any other rank (rank 0 itself when it is the only one), bytes,
 * without a trace. */
void memory_rank_peaks(const memory_params *m, double model_bytes, const job_config *c, double *rank0,
                       double *other);

/* Parses a size: a number and a unit, B, KiB MiB GiB TiB (powers of 1024) or kB KB MB GB TB
 * (powers of 1000); K, M, G, T alone are binary (2G = 2 GiB, as ulimit and free mean
 * them). No unit: bytes. 0, or -1 for anything else (an unknown unit, a negative or
 * non-finite number). */
int memory_parse_size(const char *s, double *bytes);

/* The seed-like example: Keras on Elephas on Spark (see memory.c for every assumption). */
memory_params memory_params_seed_example(void);

#endif
