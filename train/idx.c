/* idx — IDX reader through zlib (gzread passes raw files through unchanged). */
#include "train/idx.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Reads exactly n bytes at offset *off or says how many were there. */
static int read_exact(gzFile gz, const char *path, void *buf, size_t n, size_t *off,
                      const char *what, char *err, int errlen) {
    size_t got = 0;
    while (got < n) {
        unsigned chunk = n - got > (1u << 30) ? (1u << 30) : (unsigned)(n - got);
        int r = gzread(gz, (char *)buf + got, chunk);
        if (r < 0) {
            int zerr;
            const char *msg = gzerror(gz, &zerr);
            snprintf(err, (size_t)errlen, "%s: byte %zu: %s while reading %s", path, *off + got,
                     zerr == Z_ERRNO ? strerror(errno) : msg, what);
            return -1;
        }
        if (r == 0) {
            snprintf(err, (size_t)errlen, "%s: byte %zu: file ends, expected %zu more bytes of %s",
                     path, *off + got, n - got, what);
            return -1;
        }
        got += (size_t)r;
    }
    *off += n;
    return 0;
}

int idx_read(const char *path, int want_ndims, idx_file *out, char *err, int errlen) {
    return idx_read_first(path, want_ndims, 0, out, err, errlen);
}

int idx_read_first(const char *path, int want_ndims, long max_items, idx_file *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    gzFile gz = gzopen(path, "rb");
    if (!gz) {
        snprintf(err, (size_t)errlen, "%s: %s", path, errno ? strerror(errno) : "cannot open");
        return -1;
    }
    size_t off = 0;
    uint8_t magic[4];
    if (read_exact(gz, path, magic, 4, &off, "the IDX magic", err, errlen))
        goto fail;
    if (magic[0] != 0 || magic[1] != 0) {
        snprintf(err, (size_t)errlen,
                 "%s: byte 0: expected IDX magic 00 00 08 %02x, got %02x %02x %02x %02x",
                 path, want_ndims, magic[0], magic[1], magic[2], magic[3]);
        goto fail;
    }
    if (magic[2] != 0x08) {
        snprintf(err, (size_t)errlen, "%s: byte 2: expected data type 0x08 (unsigned byte), got 0x%02x",
                 path, magic[2]);
        goto fail;
    }
    if (magic[3] != want_ndims) {
        snprintf(err, (size_t)errlen, "%s: byte 3: expected %d dimensions, got %d", path, want_ndims,
                 magic[3]);
        goto fail;
    }
    out->ndims = want_ndims;
    size_t total = 1;
    for (int i = 0; i < want_ndims; i++) {
        uint8_t be[4];
        size_t at = off;
        if (read_exact(gz, path, be, 4, &off, "a dimension", err, errlen))
            goto fail;
        long d = (long)((uint32_t)be[0] << 24 | (uint32_t)be[1] << 16 | (uint32_t)be[2] << 8 | be[3]);
        if (d < 1 || d > IDX_MAX_DIM) {
            snprintf(err, (size_t)errlen, "%s: byte %zu: expected dimension %d in [1, %ld], got %ld",
                     path, at, i, IDX_MAX_DIM, d);
            goto fail;
        }
        out->dims[i] = d;
        total *= (size_t)d;
        if (total > (size_t)IDX_MAX_BYTES) {
            snprintf(err, (size_t)errlen, "%s: byte %zu: dimensions give more than %ld bytes of data",
                     path, at, IDX_MAX_BYTES);
            goto fail;
        }
    }
    const bool whole = max_items <= 0 || max_items >= out->dims[0];
    out->items = whole ? out->dims[0] : max_items;
    const size_t want = total / (size_t)out->dims[0] * (size_t)out->items;
    out->data = malloc(want);
    if (!out->data) {
        snprintf(err, (size_t)errlen, "%s: out of memory for %zu bytes", path, want);
        goto fail;
    }
    out->n_bytes = want;
    if (read_exact(gz, path, out->data, want, &off, "data", err, errlen))
        goto fail;
    uint8_t extra;
    if (whole && gzread(gz, &extra, 1) != 0) {
        snprintf(err, (size_t)errlen, "%s: byte %zu: expected end of file after %zu data bytes",
                 path, off, total);
        goto fail;
    }
    gzclose(gz);
    return 0;
fail:
    gzclose(gz);
    idx_free(out);
    return -1;
}

void idx_free(idx_file *f) {
    if (!f)
        return;
    free(f->data);
    memset(f, 0, sizeof *f);
}
