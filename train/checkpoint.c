/* checkpoint — stream it with a running crc into an atomic file; read it back whole and
 * parse with a cursor that knows its byte offset. */
#include "train/checkpoint.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char MAGIC[8] = "SPDCKPT";

/* Streams straight into the atomic file, with a running crc32: saving holds no second copy
 * of the parameters and momentum (rank 0's memory must stay close to a worker's). */
typedef struct {
    FILE *out;
    uLong crc;
} writer;

static void put(writer *w, const void *p, size_t n) {
    w->crc = crc32(w->crc, (const Bytef *)p, (uInt)n);
    fwrite(p, 1, n, w->out);
}
static void put_u32(writer *w, uint32_t v) { put(w, &v, 4); }
static void put_i32(writer *w, int32_t v) { put(w, &v, 4); }
static void put_i64(writer *w, int64_t v) { put(w, &v, 8); }
static void put_f32(writer *w, float v) { put(w, &v, 4); }

int checkpoint_save(const char *path, const net *n, const checkpoint_state *st, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    writer w = { atomicfile_stream(f), crc32(0L, Z_NULL, 0) };
    put(&w, MAGIC, 8);
    put_u32(&w, CHECKPOINT_VERSION);
    uint32_t sl = (uint32_t)strlen(n->spec_text);
    put_u32(&w, sl);
    put(&w, n->spec_text, sl);
    put_i32(&w, n->h), put_i32(&w, n->w), put_i32(&w, n->c), put_i32(&w, n->classes);
    put_f32(&w, n->in_mean), put_f32(&w, n->in_std);
    put_i32(&w, st->epochs_done);
    put_i64(&w, st->steps_done);
    put_i64(&w, (int64_t)st->seed);
    put_i64(&w, n->n_params);
    put(&w, n->params, sizeof(float) * (size_t)n->n_params);
    put(&w, n->momentum, sizeof(float) * (size_t)n->n_params);
    uint32_t crc = (uint32_t)w.crc;
    fwrite(&crc, 1, 4, w.out);
    return atomicfile_commit(f, err, errlen);
}

typedef struct {
    const uint8_t *buf;
    size_t len, off;
} reader;

static int get(reader *r, void *p, size_t n) {
    if (r->off + n > r->len)
        return -1;
    memcpy(p, r->buf + r->off, n);
    r->off += n;
    return 0;
}

net *checkpoint_load(const char *path, int max_batch, checkpoint_state *st, char *err, int errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *b = cap <= (size_t)1 << 31 ? realloc(buf, cap) : NULL;
            if (!b) {
                fclose(f);
                free(buf);
                snprintf(err, (size_t)errlen, "%s: too large for a checkpoint", path);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);

    net *n = NULL;
    reader r = { buf, len, 0 };
    char magic[8], spec[512];
    uint32_t version, sl, crc;
    int32_t h, w, c, classes, epochs;
    float mean, sd;
    int64_t steps, seed, n_params;
    size_t at = 0;
#define FAIL(...) do { snprintf(err, (size_t)errlen, __VA_ARGS__); goto fail; } while (0)
    if (get(&r, magic, 8) || memcmp(magic, MAGIC, 8))
        FAIL("%s: byte 0: expected the checkpoint magic \"SPDCKPT\"", path);
    if (len < 12)
        FAIL("%s: byte %zu: file ends inside the header", path, len);
    memcpy(&crc, buf + len - 4, 4);
    if (crc != (uint32_t)crc32(0L, buf, (uInt)(len - 4)))
        FAIL("%s: byte %zu: checksum mismatch (file corrupt or truncated)", path, len - 4);
    r.len = len - 4;
    at = r.off;
    if (get(&r, &version, 4) || version != CHECKPOINT_VERSION)
        FAIL("%s: byte %zu: expected version %d", path, at, CHECKPOINT_VERSION);
    at = r.off;
    if (get(&r, &sl, 4) || sl >= sizeof spec || get(&r, spec, sl))
        FAIL("%s: byte %zu: expected a network spec shorter than %zu bytes", path, at, sizeof spec);
    spec[sl] = '\0';
    at = r.off;
    if (get(&r, &h, 4) || get(&r, &w, 4) || get(&r, &c, 4) || get(&r, &classes, 4) || h < 1 || w < 1 ||
        c < 1 || classes < 1 || h > 4096 || w > 4096 || c > 4096 || classes > 65536)
        FAIL("%s: byte %zu: expected input height, width, channels and classes", path, at);
    at = r.off;
    if (get(&r, &mean, 4) || get(&r, &sd, 4) || !(sd > 0.0f))
        FAIL("%s: byte %zu: expected input mean and a positive standard deviation", path, at);
    at = r.off;
    if (get(&r, &epochs, 4) || get(&r, &steps, 8) || get(&r, &seed, 8) || epochs < 0 || steps < 0)
        FAIL("%s: byte %zu: expected epochs done, steps done and seed", path, at);
    at = r.off;
    if (get(&r, &n_params, 8))
        FAIL("%s: byte %zu: expected the parameter count", path, at);
    n = net_new(spec, h, w, c, classes, max_batch, err, errlen);
    if (!n) {
        char why[512];
        snprintf(why, sizeof why, "%s", err);
        FAIL("%s: byte 16: network spec '%s': %s", path, spec, why);
    }
    if (n_params != n->n_params)
        FAIL("%s: byte %zu: expected %ld parameters for '%s', got %lld", path, at, n->n_params, spec,
             (long long)n_params);
    at = r.off;
    if (get(&r, n->params, sizeof(float) * (size_t)n_params) ||
        get(&r, n->momentum, sizeof(float) * (size_t)n_params) || r.off != r.len)
        FAIL("%s: byte %zu: expected %lld parameters and their momentum, then the checksum", path, at,
             (long long)n_params);
#undef FAIL
    n->in_mean = mean, n->in_std = sd;
    st->epochs_done = epochs;
    st->steps_done = (long)steps;
    st->seed = (unsigned long)seed;
    net_seed_dropout(n, (unsigned long)seed);
    free(buf);
    return n;
fail:
    net_free(n);
    free(buf);
    return NULL;
}
