/* checkpoint — a trained network on disk: what is needed to rebuild it (spec, input shape,
 * classes, normalisation), its parameters and momentum, where training stood, and which
 * run it belongs to, so that --resume can refuse to continue a different one.
 *
 * Layout, version 2 (little-endian):
 *   "SPDCKPT\0" magic, u32 version, u32 spec length, spec bytes, i32 h, w, c, classes,
 *   f32 in_mean, in_std, i32 epochs_done, i64 steps_done,
 *   the run: u64 seed, i64 examples, i32 epochs, batch, batch_per_worker, workers, ranks,
 *            sync, every_n, topology, master, schedule, f64 lr, momentum, weight_decay,
 *            warmup_epochs,
 *   i64 n_params, i32 momentum_blocks, f32 params[n_params],
 *   f32 momentum[momentum_blocks][n_params], u32 zlib crc32 of all bytes before it.
 * One momentum block, or one per rank (rank order) when the ranks' momenta differ (local
 * SGD keeps momentum local; every rank holds the same weights at a checkpoint).
 * Version 1 (no run, one momentum block; seed after steps_done) is still read: it can be
 * evaluated, and checkpoint_state.version tells the trainer it cannot be resumed.
 *
 * Written through util/atomicfile.h, so a crash leaves the previous checkpoint whole; the
 * momentum blocks of other ranks are streamed in one at a time (checkpoint_writer), so the
 * writer never holds more than one of them. Reading checks every field and says
 * "PATH: byte B: expected ..." when one is wrong; it allocates nothing a field asks for
 * before the file has shown it holds that much.
 *
 *   checkpoint_writer *w = checkpoint_begin(path, n, &st, err, sizeof err); // block 0: n->momentum
 *   checkpoint_put_momentum(w, block_of_rank_1); ...                         // st.momentum_blocks − 1 more
 *   checkpoint_commit(w, err, sizeof err);
 *
 *   checkpoint_file *f = checkpoint_open(path, err, sizeof err);             // whole file, checked
 *   net *n = checkpoint_net(f, max_batch, err, sizeof err);                   // params + block 0
 *   checkpoint_momentum(f, r, n->grads);                                      // rank r's block
 *   checkpoint_close(f);
 */
#ifndef SPEEDUP_CHECKPOINT_H
#define SPEEDUP_CHECKPOINT_H

#include "core/job.h"
#include "train/net.h"

#include <stddef.h>
#include <stdint.h>

#define CHECKPOINT_VERSION 2
#define CHECKPOINT_MAX_RANKS 65536

/* The run a checkpoint continues: everything that decides its weights, step by step. */
typedef struct {
    unsigned long seed;
    long examples;              /* D, training examples (after --limit) */
    int epochs, batch, batch_per_worker;
    int workers, ranks;         /* K training ranks; ranks = K, or K + 1 with a dedicated master */
    job_sync sync;
    int every_n;
    job_topology topology;
    job_master master;
    int schedule;               /* trainer_schedule */
    double lr, momentum, weight_decay, warmup_epochs;
} checkpoint_run;

typedef struct {
    int version;                /* of the file read; 1: run is unknown (all zero) */
    int epochs_done;
    long steps_done;
    checkpoint_run run;
    int momentum_blocks;        /* 1, or run.ranks: one per rank */
} checkpoint_state;

typedef struct checkpoint_writer checkpoint_writer;
typedef struct checkpoint_file checkpoint_file;

/* Starts path's temporary file with everything up to and including momentum block 0
 * (n->momentum). NULL with err (the file cannot be created). */
checkpoint_writer *checkpoint_begin(const char *path, const net *n, const checkpoint_state *st, char *err,
                                    int errlen);
/* The next momentum block (n_params floats). */
void checkpoint_put_momentum(checkpoint_writer *w, const float *block);
/* Checksum, fsync, rename into place; frees w. 0, or -1 with err (a write failed, or not
 * every block was put): nothing is left at path then but the previous file. */
int checkpoint_commit(checkpoint_writer *w, char *err, int errlen);
/* Drops the temporary file; frees w. NULL is a no-op. */
void checkpoint_abort(checkpoint_writer *w);
/* begin + commit, for st->momentum_blocks == 1. */
int checkpoint_save(const char *path, const net *n, const checkpoint_state *st, char *err, int errlen);

/* Reads and checks the whole file (magic, checksum, every field, the sizes against the
 * file's length). NULL with "PATH: byte B: ..." in err. */
checkpoint_file *checkpoint_open(const char *path, char *err, int errlen);
/* The same from len bytes in memory (copied), named `name` in messages. */
checkpoint_file *checkpoint_parse(const uint8_t *buf, size_t len, const char *name, char *err, int errlen);
const checkpoint_state *checkpoint_state_of(const checkpoint_file *f);
/* Rebuilds the network (for batches up to max_batch) with its parameters, normalisation
 * and momentum block 0. NULL with err (the spec does not build the stored shape). */
net *checkpoint_net(const checkpoint_file *f, int max_batch, char *err, int errlen);
/* Copies momentum block b (< momentum_blocks) into dst (n_params floats). */
void checkpoint_momentum(const checkpoint_file *f, int b, float *dst);
void checkpoint_close(checkpoint_file *f); /* NULL is a no-op */

/* open + net + close. */
net *checkpoint_load(const char *path, int max_batch, checkpoint_state *st, char *err, int errlen);

#endif
