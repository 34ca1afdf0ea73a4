/* memory — the peak resident set (RSS) of each rank of a data-parallel run: will the
 * master fit? (The seed's master, Elephas on Spark, did not.)
 *
 * A rank is a worker, a master that also trains (rank 0 of a parameter server, K ≥ 2) or a
 * dedicated master (rank 0 with --master dedicated). With M the model's bytes, b the local
 * batch (model/costmodel.h's job_schedule_of), K workers, R ranks (K, or K + 1 with
 * a dedicated master), T cores per worker and D, D_test the examples:
 *
 *   peak(role) = base + peer·(R − 1) + thread·(T − 1)                       fitted
 *              + copies(role)·M                                             known
 *              + b·(F + G) (a dedicated master: b·F) + Wk + Wt·(T − 1)      known
 *              + data(role) + events·sizeof(trace_event) (when tracing)     known
 *              + x·M·min(K − 1, 2)/K   (all-reduce ranks, K ≥ 2)            x fitted
 *              + master_extra + master_models_per_worker·K·M  (rank 0 of ps) stated
 *
 * Known byte counts, from train/ (what each rank writes; a calloc'd page nobody writes is
 * never resident):
 *   copies   the parameter-sized blocks in use: weights, gradients, momentum (3) on every
 *            rank that runs the optimizer; a ps worker in batch sync never updates, so its
 *            momentum stays untouched (2); ps rank 0 with R ≥ 2 adds the ONE receive
 *            buffer it takes every push into (comm/psx.h), however many workers (4); a
 *            dedicated master averaging (local SGD) holds the weights and that buffer (2).
 *            Async (train/asyncps.h): the master receives into its gradients (3), a worker
 *            never updates (2); a hogwild master holds weights, momentum, one gradient
 *            buffer per updater thread (T of them) and the copy a pull sends (3 + T).
 *   F, G     per example of the local batch: what every forward writes (evaluation too)
 *            and what only training writes (train/net.h's net_memory). A dedicated master
 *            never trains: it writes F only, evaluating its share of the test set.
 *   Wk, Wt   the im2col workspace of one thread, and of each further thread.
 *   data     every rank holds the whole training and test sets as bytes, e per example
 *            (image and label), and the epoch's order (8 bytes per training example):
 *            (D + min(D, D_test))·e + 8·D, D_test the test set's size (--limit cuts both
 *            sets to D). (`sharded_data`, the Spark-like what-if: a worker holds its 1/K
 *            share of both; the master the whole, at master_example_bytes per example.)
 *   events   a trace in memory: each rank's events until the gather (trace/trace.h).
 * Fitted (memory_fit, from the traces' measured per-rank peaks, NNLS with standard
 * errors): base (code, libraries, MPI, the C library's arenas), peer (per other rank:
 * MPI's shared-memory segments), thread (per further OpenMP thread: its stack and BLAS
 * buffers) and x (the scratch MPI_Allreduce takes: Open MPI's ring holds one segment of
 * M/K at K = 2 and two at K ≥ 3, x = 1 when it uses the ring).
 * Stated, not fitted (0 for this trainer, whose master is the same program as a worker
 * and reuses one receive buffer): master_extra, master_models_per_worker — the seed-like
 * example sets them (memory_params_seed_example).
 *
 * The peak is the training run's: measured before rank 0 gathers the trace, so the
 * gathered events are not in it. Valid while the dedicated master's share of the test set
 * is at least b (it then writes all of F) and b is at least the first convolution's chunk
 * (13 images for the default network; below, Wk is an upper bound).
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


/* Parameter-sized blocks a rank of this role writes (see the header). */
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
