/* idx — read an IDX file (the MNIST container: magic 0x0000 TT NN, NN big-endian uint32
 * dimensions, then the data), gzip'd or raw (zlib reads both).
 *
 * Only unsigned bytes (type 0x08) are accepted: that is what image and label files hold.
 * Every check names the file and the byte offset where the file stopped matching what
 * was expected: "PATH: byte 4: expected 3 dimensions, got 1". The whole payload is read
 * into one malloc'd block; the caller owns it (idx_free).
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
    uint8_t *data;           /* (dims[0], dims[1], ...) row-major, owned */
    size_t n_bytes;
} idx_file;

/* Reads path expecting exactly want_ndims dimensions (1 for labels, 3 for images).
 * Returns 0, or -1 with "PATH: byte B: ..." in err and *out left empty. */
int idx_read(const char *path, int want_ndims, idx_file *out, char *err, int errlen);
void idx_free(idx_file *f); /* frees the payload; NULL or an empty file is a no-op */

#endif
