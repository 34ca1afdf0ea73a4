/* dataset — loading, shuffling (GSL), sharding, per-batch conversion. */
#include "train/dataset.h"

#include "train/idx.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* DIR/NAME if it exists, else DIR/NAME.gz (whose absence the reader reports). */
static void find_file(const char *dir, const char *name, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s", dir, name);
    if (access(path, R_OK) == 0)
        return;
    snprintf(path, cap, "%s/%s.gz", dir, name);
}

int dataset_load(const char *dir, const char *prefix, long limit, dataset *out, char *err, int errlen) {
    char images[4096], labels[4096], name[128];
    snprintf(name, sizeof name, "%s-images-idx3-ubyte", prefix);
    find_file(dir, name, images, sizeof images);
    snprintf(name, sizeof name, "%s-labels-idx1-ubyte", prefix);
    find_file(dir, name, labels, sizeof labels);
    return dataset_load_files(images, labels, limit, out, err, errlen);
}

int dataset_load_files(const char *images_path, const char *labels_path, long limit, dataset *out,
                       char *err, int errlen) {
    memset(out, 0, sizeof *out);
    idx_file im, lb;
    // Only the first limit examples are read: --limit bounds the memory (the peak too).
    if (idx_read_first(images_path, 3, limit, &im, err, errlen))
        return -1;
    if (idx_read_first(labels_path, 1, limit, &lb, err, errlen)) {
        idx_free(&im);
        return -1;
    }
    if (im.dims[0] != lb.dims[0]) {
        snprintf(err, (size_t)errlen, "%s: byte 4: %ld labels, but %s holds %ld images", labels_path,
                 lb.dims[0], images_path, im.dims[0]);
        goto fail;
    }
    const long n = im.items;
    int maxl = 0;
    for (long i = 0; i < n; i++)
        if (lb.data[i] > maxl)
            maxl = lb.data[i];
    out->images = im.data;
    out->labels = lb.data;
    out->n = n;
    out->n_in_file = im.dims[0];
    out->h = (int)im.dims[1];
    out->w = (int)im.dims[2];
    out->classes = maxl + 1;
    return 0;
fail:
    idx_free(&im);
    idx_free(&lb);
    return -1;
}

void dataset_free(dataset *d) {
    if (!d)
        return;
    free(d->images);
    free(d->labels);
    memset(d, 0, sizeof *d);
}

void dataset_pixel_stats(const dataset *d, float *mean, float *std) {
    // A histogram of the 256 byte values makes this one cheap pass.
    long hist[256] = { 0 };
    const long n = d->n * d->h * d->w;
    for (long i = 0; i < n; i++)
        hist[d->images[i]]++;
    double s = 0.0, s2 = 0.0;
    for (int v = 0; v < 256; v++) {
        double x = v / 255.0;
        s += (double)hist[v] * x;
        s2 += (double)hist[v] * x * x;
    }
    double m = n ? s / (double)n : 0.0;
    double var = n ? s2 / (double)n - m * m : 0.0;
    *mean = (float)m;
    *std = var > 1e-12 ? (float)sqrt(var) : 1.0f;
}

int dataset_epoch_order(long n, unsigned long seed, int epoch, long *order) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!rng)
        return -1;
    // One stream per (seed, epoch): mixing with a large odd constant keeps the seeds apart.
    gsl_rng_set(rng, seed * 1000003UL + (unsigned long)epoch * 7919UL + 1UL);
    for (long i = 0; i < n; i++)
        order[i] = i;
    gsl_ran_shuffle(rng, order, (size_t)n, sizeof *order);
    gsl_rng_free(rng);
    return 0;
}

void dataset_shard(long n, int rank, int world, long *begin, long *end) {
    *begin = n * rank / world;
    *end = n * (rank + 1) / world;
}

void dataset_batch(const dataset *d, const long *idx, int count, float mean, float std, float *x,
                   uint8_t *y) {
    const long hw = (long)d->h * d->w;
    const float scale = 1.0f / (255.0f * std), shift = -mean / std;
    for (int i = 0; i < count; i++) {
        const uint8_t *src = d->images + idx[i] * hw;
        float *dst = x + (long)i * hw;
#pragma omp simd
        for (long j = 0; j < hw; j++)
            dst[j] = (float)src[j] * scale + shift;
        y[i] = d->labels[idx[i]];
    }
}
