/* idx — read an IDX file (the MNIST container: magic 0x0000 TT NN, NN big-endian uint32
 * dimensions, then the data), gzip'd or raw (zlib reads both).
 *
 * Only unsigned bytes (type 0x08) are accepted: that is what image and label files hold.
 * Every check names the file and the byte offset where the file stopped matching what
 * was expected: "PATH: byte 4: expected 3 dimensions, got 1". The payload (or its first
 * items: idx_read_first) is read into one malloc'd block; the caller owns it (idx_free).
 */
#ifndef SPEEDUP_IDX_H
#define SPEEDUP_IDX_H

#include <stddef.h>
#include <stdint.h>

#define IDX_MAX_DIMS 4
/* Any single dimension beyond this is taken for corruption rather than data. */
#define IDX_MAX_DIM 100000000L
/* Payload bytes beyond this (1 GiB) are refused before allocating. */
#define IDX_MAX_BYTES (1L << 30)

typedef struct {
    int ndims;
    long dims[IDX_MAX_DIMS];
    long items;              /* rows of data read along dims[0]: dims[0], or fewer (idx_read_first) */
    uint8_t *data;           /* (items, dims[1], ...) row-major, owned */
    size_t n_bytes;
} idx_file;

/* Reads path expecting exactly want_ndims dimensions (1 for labels, 3 for images).
 * Returns 0, or -1 with "PATH: byte B: ..." in err and *out left empty. */
int idx_read(const char *path, int want_ndims, idx_file *out, char *err, int errlen);
/* The same, reading only the first max_items rows along dims[0] (max_items <= 0 or at
 * least dims[0]: all of them, and then the file must end there). Only those rows are
 * allocated and read, so a --limit run never holds the whole file: its peak memory is
 * what it keeps (model/memory.h counts it so). dims[0] stays the file's count. */
int idx_read_first(const char *path, int want_ndims, long max_items, idx_file *out, char *err, int errlen);
void idx_free(idx_file *f); /* frees the payload; NULL or an empty file is a no-op */

#endif
