/* dataset — labelled images kept as bytes in memory (60000 Fashion-MNIST images are
 * 47 MB as bytes, four times that as floats), converted to normalised floats one batch
 * at a time; the epoch's example order, shuffled deterministically from the seed; and the
 * contiguous shard of that order that rank r of W trains on.
 *
 * Files: DIR/{train,t10k}-{images-idx3,labels-idx1}-ubyte, raw or with ".gz" (the names of
 * MNIST and of Debian's dataset-fashion-mnist). Errors name the file and byte (idx.h) or
 * say which counts disagree.
 */
#ifndef SPEEDUP_DATASET_H
#define SPEEDUP_DATASET_H

#include <stdint.h>

#define DATASET_DEFAULT_DIR "/usr/share/datasets/fashion-mnist"
#define DATASET_MAX_CLASSES 256

typedef struct {
    uint8_t *images;   /* (N, H, W) owned */
    uint8_t *labels;   /* (N) owned, each < classes */
    long n;
    long n_in_file;    /* the file's examples: n, or more when limited */
    int h, w;
    int classes;       /* 1 + the largest label */
} dataset;

/* Loads DIR/PREFIX-images-idx3-ubyte[.gz] and DIR/PREFIX-labels-idx1-ubyte[.gz], keeping the
 * first limit examples (limit ≤ 0: all). prefix is "train" or "t10k". */
int dataset_load(const char *dir, const char *prefix, long limit, dataset *out, char *err, int errlen);
/* Loads an explicit pair of files. */
int dataset_load_files(const char *images_path, const char *labels_path, long limit, dataset *out,
                       char *err, int errlen);
void dataset_free(dataset *d); /* NULL or empty is a no-op */

/* Mean and standard deviation of the pixel values scaled to [0, 1]. */
void dataset_pixel_stats(const dataset *d, float *mean, float *std);

/* order[0..n) = the example order of epoch `epoch`: a permutation that depends only on
 * (seed, epoch), so a resumed run sees the same orders as an uninterrupted one. */
int dataset_epoch_order(long n, unsigned long seed, int epoch, long *order);

/* [*begin, *end) of the n-long order that rank of world trains on: contiguous, sizes
 * differ by at most one. */
void dataset_shard(long n, int rank, int world, long *begin, long *end);

/* x (count, H, W, 1) = (pixel/255 - mean)/std for examples idx[0..count), y (count). */
void dataset_batch(const dataset *d, const long *idx, int count, float mean, float std, float *x,
                   uint8_t *y);

#endif
