/* checkpoint — stream it with a running crc into an atomic file; read it back whole, check
 * the crc, and parse with a cursor that knows its byte offset. */
#include "train/checkpoint.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char MAGIC[8] = "SPDCKPT";

// ---------------------------------------------------------------------------------------
// Writing

/* Streams straight into the atomic file, with a running crc32: saving holds no second copy
 * of the parameters and momentum (rank 0's memory must stay close to a worker's). */
struct checkpoint_writer {
    atomicfile *f;
    FILE *out;
    uLong crc;
    long n_params;
    int blocks_left;           /* momentum blocks still to put */
};

static void put(checkpoint_writer *w, const void *p, size_t n) {
    // crc32 takes a uInt length: feed a large block in pieces.
    for (size_t off = 0; off < n; off += 1u << 30) {
        size_t len = n - off < (1u << 30) ? n - off : (1u << 30);
        w->crc = crc32(w->crc, (const Bytef *)p + off, (uInt)len);
    }
    fwrite(p, 1, n, w->out);
}
static void put_u32(checkpoint_writer *w, uint32_t v) { put(w, &v, 4); }
static void put_i32(checkpoint_writer *w, int32_t v) { put(w, &v, 4); }
static void put_i64(checkpoint_writer *w, int64_t v) { put(w, &v, 8); }
static void put_f32(checkpoint_writer *w, float v) { put(w, &v, 4); }
static void put_f64(checkpoint_writer *w, double v) { put(w, &v, 8); }

static void put_run(checkpoint_writer *w, const checkpoint_run *r) {
    put_i64(w, (int64_t)r->seed);
    put_i64(w, r->examples);
    put_i32(w, r->epochs), put_i32(w, r->batch), put_i32(w, r->batch_per_worker);
    put_i32(w, r->workers), put_i32(w, r->ranks);
    put_i32(w, (int32_t)r->sync), put_i32(w, r->every_n), put_i32(w, (int32_t)r->topology);
    put_i32(w, (int32_t)r->master), put_i32(w, r->schedule);
    put_f64(w, r->lr), put_f64(w, r->momentum), put_f64(w, r->weight_decay), put_f64(w, r->warmup_epochs);
}

checkpoint_writer *checkpoint_begin(const char *path, const net *n, const checkpoint_state *st, char *err,
                                    int errlen) {
    checkpoint_writer *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, (size_t)errlen, "%s: out of memory", path);
        return NULL;
    }
    w->f = atomicfile_open(path, err, errlen);
    if (!w->f) {
        free(w);
        return NULL;
    }
    w->out = atomicfile_stream(w->f);
    w->crc = crc32(0L, Z_NULL, 0);
    w->n_params = n->n_params;
    w->blocks_left = st->momentum_blocks - 1;
    put(w, MAGIC, 8);
    put_u32(w, CHECKPOINT_VERSION);
    uint32_t sl = (uint32_t)strlen(n->spec_text);
    put_u32(w, sl);
    put(w, n->spec_text, sl);
    put_i32(w, n->h), put_i32(w, n->w), put_i32(w, n->c), put_i32(w, n->classes);
    put_f32(w, n->in_mean), put_f32(w, n->in_std);
    put_i32(w, st->epochs_done);
    put_i64(w, st->steps_done);
    put_run(w, &st->run);
    put_i64(w, n->n_params);
    put_i32(w, st->momentum_blocks);
    put(w, n->params, sizeof(float) * (size_t)n->n_params);
    put(w, n->momentum, sizeof(float) * (size_t)n->n_params);
    return w;
}

void checkpoint_put_momentum(checkpoint_writer *w, const float *block) {
    put(w, block, sizeof(float) * (size_t)w->n_params);
    w->blocks_left--;
}

int checkpoint_commit(checkpoint_writer *w, char *err, int errlen) {
    if (w->blocks_left != 0) {
        snprintf(err, (size_t)errlen, "checkpoint: %d momentum blocks missing", w->blocks_left);
        checkpoint_abort(w);
        return -1;
    }
    uint32_t crc = (uint32_t)w->crc;
    fwrite(&crc, 1, 4, w->out);
    int rc = atomicfile_commit(w->f, err, errlen);
    free(w);
    return rc;
}

void checkpoint_abort(checkpoint_writer *w) {
    if (!w)
        return;
    atomicfile_abort(w->f);
    free(w);
}

int checkpoint_save(const char *path, const net *n, const checkpoint_state *st, char *err, int errlen) {
    checkpoint_writer *w = checkpoint_begin(path, n, st, err, errlen);
    return w ? checkpoint_commit(w, err, errlen) : -1;
}

// ---------------------------------------------------------------------------------------
// Reading: the whole file, its crc, then every field in order

struct checkpoint_file {
    uint8_t *buf;
    size_t len;
    checkpoint_state st;
    char spec[512];
    int32_t h, w, c, classes;
    float in_mean, in_std;
    long n_params;
    size_t params_off;         /* byte offset of params; the momentum blocks follow */
};

typedef struct {
    const uint8_t *buf;
    size_t len, off;
} reader;

static int get(reader *r, void *p, size_t n) {
    if (n > r->len - r->off)
        return -1;
    memcpy(p, r->buf + r->off, n);
    r->off += n;
    return 0;
}

#define FAIL(...) return snprintf(err, (size_t)errlen, __VA_ARGS__), -1

/* The run fields of version 2: present and in range. */
static int parse_run(reader *r, checkpoint_run *run, const char *name, char *err, int errlen) {
    const size_t at = r->off;
    int64_t seed, examples;
    int32_t v[10];
    double f[4];
    for (int i = 0; i < 4; i++)
        f[i] = NAN;
    if (get(r, &seed, 8) || get(r, &examples, 8) || get(r, v, sizeof v) || get(r, f, sizeof f))
        FAIL("%s: byte %zu: expected the run's settings (seed, examples, epochs, batch, ...)", name, at);
    *run = (checkpoint_run){ .seed = (unsigned long)seed, .examples = (long)examples, .epochs = v[0],
                             .batch = v[1], .batch_per_worker = v[2], .workers = v[3], .ranks = v[4],
                             .sync = (job_sync)v[5], .every_n = v[6], .topology = (job_topology)v[7],
                             .master = (job_master)v[8], .schedule = v[9], .lr = f[0], .momentum = f[1],
                             .weight_decay = f[2], .warmup_epochs = f[3] };
    const int dedicated = run->master == JOB_MASTER_DEDICATED;
    if (examples < 1 || run->epochs < 1 || run->batch < 1 || (run->batch_per_worker & ~1) || run->workers < 1 ||
        run->workers > CHECKPOINT_MAX_RANKS || run->ranks != run->workers + dedicated ||
        (run->sync != JOB_SYNC_BATCH && run->sync != JOB_SYNC_EPOCH && run->sync != JOB_SYNC_EVERY &&
         !job_sync_is_async(run->sync)) ||
        run->every_n < 0 ||
        (run->topology != JOB_TOPO_PS && run->topology != JOB_TOPO_ALLREDUCE) ||
        (run->master != JOB_MASTER_WORKER && !dedicated) || (run->schedule & ~1) || !isfinite(run->lr) ||
        !isfinite(run->momentum) || !isfinite(run->weight_decay) || !isfinite(run->warmup_epochs))
        FAIL("%s: byte %zu: the run's settings are out of range (file damaged?)", name, at);
    return 0;
}

/* Header through the momentum block count; f->params_off set. */
static int parse_header(checkpoint_file *f, reader *r, const char *name, char *err, int errlen) {
    checkpoint_state *st = &f->st;
    uint32_t version, sl;
    int32_t epochs;
    int64_t steps, seed, n_params;
    int32_t blocks = 1;
    size_t at = r->off;
    if (get(r, &version, 4) || (version != 1 && version != CHECKPOINT_VERSION))
        FAIL("%s: byte %zu: expected version 1 or %d", name, at, CHECKPOINT_VERSION);
    st->version = (int)version;
    at = r->off;
    if (get(r, &sl, 4) || sl >= sizeof f->spec || get(r, f->spec, sl))
        FAIL("%s: byte %zu: expected a network spec shorter than %zu bytes", name, at, sizeof f->spec);
    f->spec[sl] = '\0';
    at = r->off;
    if (get(r, &f->h, 4) || get(r, &f->w, 4) || get(r, &f->c, 4) || get(r, &f->classes, 4) || f->h < 1 ||
        f->w < 1 || f->c < 1 || f->classes < 1 || f->h > 4096 || f->w > 4096 || f->c > 4096 || f->classes > 65536)
        FAIL("%s: byte %zu: expected input height, width, channels and classes", name, at);
    at = r->off;
    if (get(r, &f->in_mean, 4) || get(r, &f->in_std, 4) || !isfinite(f->in_mean) || !(f->in_std > 0.0f) ||
        !isfinite(f->in_std))
        FAIL("%s: byte %zu: expected input mean and a positive standard deviation", name, at);
    at = r->off;
    if (get(r, &epochs, 4) || get(r, &steps, 8) || (version == 1 && get(r, &seed, 8)) || epochs < 0 || steps < 0)
        FAIL("%s: byte %zu: expected epochs done and steps done", name, at);
    st->epochs_done = epochs;
    st->steps_done = (long)steps;
    if (version >= 2 && parse_run(r, &st->run, name, err, errlen))
        return -1;
    if (version >= 2 && epochs > st->run.epochs)
        FAIL("%s: byte %zu: %d epochs done of %d", name, at, epochs, st->run.epochs);
    at = r->off;
    if (get(r, &n_params, 8) || (version >= 2 && get(r, &blocks, 4)))
        FAIL("%s: byte %zu: expected the parameter and momentum block counts", name, at);
    if (blocks != 1 && (version < 2 || blocks != st->run.ranks))
        FAIL("%s: byte %zu: expected 1 momentum block or one per rank (%d), got %d", name, at, st->run.ranks, blocks);
    st->momentum_blocks = blocks;
    // The spec decides the count: check it before trusting the file's, allocating nothing.
    char why[512];
    net *planned = net_plan(f->spec, f->h, f->w, f->c, f->classes, why, sizeof why);
    if (!planned)
        FAIL("%s: byte 16: network spec '%s' on %dx%dx%d inputs: %s", name, f->spec, f->h, f->w, f->c, why);
    const long want = planned->n_params;
    net_free(planned);
    if (n_params != want)
        FAIL("%s: byte %zu: expected %ld parameters for '%s', got %lld", name, at, want, f->spec, (long long)n_params);
    f->n_params = want;
    f->params_off = r->off;
    const size_t floats = (size_t)want * (size_t)(1 + blocks); // both < 2^28 and 2^16+1: no overflow
    if (r->len - r->off != floats * sizeof(float))
        FAIL("%s: byte %zu: expected %ld parameters and %d momentum blocks (%zu bytes), then the checksum; "
             "%zu bytes are left", name, r->off, want, blocks, floats * sizeof(float), r->len - r->off);
    return 0;
}

checkpoint_file *checkpoint_parse(const uint8_t *buf, size_t len, const char *name, char *err, int errlen) {
    checkpoint_file *f = calloc(1, sizeof *f);
    uint8_t *copy = malloc(len ? len : 1);
    if (!f || !copy) {
        free(f);
        free(copy);
        snprintf(err, (size_t)errlen, "%s: out of memory", name);
        return NULL;
    }
    if (len)
        memcpy(copy, buf, len);
    f->buf = copy;
    f->len = len;
    char magic[8];
    reader r = { copy, len, 0 };
    uint32_t crc;
    int bad = 0;
    if (get(&r, magic, 8) || memcmp(magic, MAGIC, 8))
        bad = snprintf(err, (size_t)errlen, "%s: byte 0: expected the checkpoint magic \"SPDCKPT\"", name);
    else if (len < 12)
        bad = snprintf(err, (size_t)errlen, "%s: byte %zu: file ends inside the header", name, len);
    if (!bad) {
        memcpy(&crc, copy + len - 4, 4);
        uLong sum = crc32(0L, Z_NULL, 0);
        for (size_t off = 0; off < len - 4; off += 1u << 30)
            sum = crc32(sum, copy + off, (uInt)(len - 4 - off < (1u << 30) ? len - 4 - off : (1u << 30)));
        if (crc != (uint32_t)sum)
            bad = snprintf(err, (size_t)errlen, "%s: byte %zu: checksum mismatch (file corrupt or truncated)", name,
                           len - 4);
    }
    r.len = len - 4;
    if (bad || parse_header(f, &r, name, err, errlen)) {
        checkpoint_close(f);
        return NULL;
    }
    return f;
}

checkpoint_file *checkpoint_open(const char *path, char *err, int errlen) {
    FILE *in = fopen(path, "rb");
    if (!in) {
        snprintf(err, (size_t)errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;
    do {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 16;
            uint8_t *b = cap <= (size_t)1 << 34 ? realloc(buf, cap) : NULL;
            if (!b) {
                fclose(in);
                free(buf);
                snprintf(err, (size_t)errlen, "%s: too large for a checkpoint", path);
                return NULL;
            }
            buf = b;
        }
        got = fread(buf + len, 1, cap - len, in);
        len += got;
    } while (got > 0);
    const int failed = ferror(in);
    fclose(in);
    if (failed) {
        free(buf);
        snprintf(err, (size_t)errlen, "%s: read failed", path);
        return NULL;
    }
    checkpoint_file *f = checkpoint_parse(buf, len, path, err, errlen);
    free(buf);
    return f;
}

const checkpoint_state *checkpoint_state_of(const checkpoint_file *f) { return &f->st; }

net *checkpoint_net(const checkpoint_file *f, int max_batch, char *err, int errlen) {
    net *n = net_new(f->spec, f->h, f->w, f->c, f->classes, max_batch, err, errlen);
    if (!n)
        return NULL;
    n->in_mean = f->in_mean;
    n->in_std = f->in_std;
    memcpy(n->params, f->buf + f->params_off, sizeof(float) * (size_t)f->n_params);
    checkpoint_momentum(f, 0, n->momentum);
    return n;
}

void checkpoint_momentum(const checkpoint_file *f, int b, float *dst) {
    const size_t bytes = sizeof(float) * (size_t)f->n_params;
    memcpy(dst, f->buf + f->params_off + bytes * (size_t)(1 + b), bytes);
}

void checkpoint_close(checkpoint_file *f) {
    if (!f)
        return;
    free(f->buf);
    free(f);
}

net *checkpoint_load(const char *path, int max_batch, checkpoint_state *st, char *err, int errlen) {
    checkpoint_file *f = checkpoint_open(path, err, errlen);
    if (!f)
        return NULL;
    char why[512] = "";
    net *n = checkpoint_net(f, max_batch, why, sizeof why);
    if (!n)
        snprintf(err, (size_t)errlen, "%s: network '%s': %s", path, f->spec, why);
    else
        *st = f->st;
    checkpoint_close(f);
    return n;
}
