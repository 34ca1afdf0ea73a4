/* checkpoint — a trained network on disk: what is needed to rebuild it (spec, input shape,
 * classes, normalisation), its parameters and momentum, and where training stood.
 *
 * Layout (little-endian):
 *   "SPDCKPT\0" magic, u32 version, u32 spec length, spec bytes, i32 h, w, c, classes,
 *   f32 in_mean, in_std, i32 epochs_done, i64 steps_done, u64 seed, i64 n_params,
 *   f32 params[n_params], f32 momentum[n_params], u32 zlib crc32 of all bytes before it.
 * Written through util/atomicfile.h, so a crash leaves the previous checkpoint whole.
 * Reading checks every field and says "PATH: byte B: expected ..." when one is wrong.
 */
#ifndef SPEEDUP_CHECKPOINT_H
#define SPEEDUP_CHECKPOINT_H

#include "train/net.h"

#define CHECKPOINT_VERSION 1

typedef struct {
    int epochs_done;
    long steps_done;
    unsigned long seed;
} checkpoint_state;

int checkpoint_save(const char *path, const net *n, const checkpoint_state *st, char *err, int errlen);
/* Rebuilds the network (for batches up to max_batch) with its parameters and momentum. */
net *checkpoint_load(const char *path, int max_batch, checkpoint_state *st, char *err, int errlen);

#endif
