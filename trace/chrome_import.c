/* chrome_import — PyTorch profiler traces and Horovod timelines read as a speedup trace
 * (see chrome_import.h): the files, their events as spans, the ranks and the run header.
 * Placing one rank's spans into its timeline is chrome_timeline.c's. */
#define _POSIX_C_SOURCE 200809L
#include "trace/chrome_import.h"

#include "util/errmsg.h"

#include "trace/chrome_parts.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---------------------------------------------------------------------------------- */
/* Files */

/* The whole file, gunzipped when it is gzip; NULL with err. */
static char *slurp(const char *path, size_t *len, char *err, int errlen) {
    gzFile f = gzopen(path, "rb"); /* reads plain files as they are */
    if (!f) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    int got = 0;
    while (buf && (got = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)got;
        if (n == cap) {
            char *grown = realloc(buf, cap *= 2);
            if (!grown) {
                free(buf);
                buf = NULL;
            }
            buf = grown;
        }
    }
    int gzerr = 0;
    // gzerror's message lives in f: copy it before gzclose frees it (read after the close,
    // it was a use-after-free that tests/fuzz found on a cut gzip file).
    char why[256] = "";
    if (got < 0) { // zlib's message already starts with "PATH: "
        const char *msg = gzerror(f, &gzerr);
        const size_t n = strlen(path);
        snprintf(why, sizeof why, "%s", strncmp(msg, path, n) == 0 && msg[n] == ':' ? msg + n + 2 : msg);
    }
    gzclose(f);
    if (!buf || why[0]) {
        errmsg_set(err, errlen, "%s: %s", path, buf ? why : "out of memory");
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int chrome_import_rank_of_name(const char *path, int *prefix_len) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    int rank = -1;
    /* The last "rank" that follows a separator and is followed by digits. */
    for (const char *p = base; (p = strstr(p, "rank")) != NULL; p += 4) {
        if (p == base || !strchr("._-", p[-1]) || !isdigit((unsigned char)p[4]))
            continue;
        long r = strtol(p + 4, NULL, 10);
        if (r > 1000000)
            continue;
        rank = (int)r;
        if (prefix_len)
            *prefix_len = (int)(p - 1 - path);
    }
    return rank;
}

/* Reads f->path: the root, its events, the rank and world size it states. */
static int load_file(ci_file *f, char *err, int errlen) {
    size_t len = 0;
    char *text = slurp(f->path, &len, err, errlen);
    if (!text)
        return -1;
    json_error_t jerr;
    f->root = json_loadb(text, len, 0, &jerr);
    free(text);
    if (!f->root)
        return errmsg_set(err, errlen, "%s: line %d column %d: %s", f->path, jerr.line, jerr.column, jerr.text);
    f->events = json_is_array(f->root) ? f->root : json_object_get(f->root, "traceEvents");
    if (!json_is_array(f->events))
        return errmsg_set(err, errlen, "%s: expected Chrome trace-event JSON: an array of events, or an object "
                          "with a \"traceEvents\" array", f->path);
    f->rank = chrome_import_rank_of_name(f->path, NULL);
    json_t *info = json_object_get(f->root, "distributedInfo");
    if (info) {
        json_t *rank = json_object_get(info, "rank"), *world = json_object_get(info, "world_size");
        if (!json_is_integer(rank) || !json_is_integer(world) || json_integer_value(world) < 1 ||
            json_integer_value(rank) < 0 || json_integer_value(rank) >= json_integer_value(world))
            return errmsg_set(err, errlen, "%s: distributedInfo: expected integers rank in [0, world_size)", f->path);
        f->rank = (int)json_integer_value(rank);
        f->world = (int)json_integer_value(world);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Events to spans */

static int push_span(ci_run *run, const ci_span *s) {
    if (run->n_spans == run->cap_spans) {
        long cap = run->cap_spans ? 2 * run->cap_spans : 4096;
        ci_span *v = realloc(run->spans, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        run->spans = v;
        run->cap_spans = cap;
    }
    run->spans[run->n_spans++] = *s;
    return 0;
}

/* pid and tid as text: numbers or strings, absent as "". */
static void id_text(json_t *v, char *out, size_t len) {
    if (json_is_integer(v))
        snprintf(out, len, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        snprintf(out, len, "%.17g", json_real_value(v));
    else
        snprintf(out, len, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static int track_of(ci_run *run, int file, json_t *ev) {
    char pid[48], tid[48];
    id_text(json_object_get(ev, "pid"), pid, sizeof pid);
    id_text(json_object_get(ev, "tid"), tid, sizeof tid);
    for (int i = run->n_tracks - 1; i >= 0; i--)
        if (run->tracks[i].file == file && strcmp(run->tracks[i].pid, pid) == 0 && strcmp(run->tracks[i].tid, tid) == 0)
            return i;
    if (run->n_tracks == run->cap_tracks) {
        int cap = run->cap_tracks ? 2 * run->cap_tracks : 16;
        ci_track *v = realloc(run->tracks, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        run->tracks = v;
        run->cap_tracks = cap;
    }
    ci_track *t = &run->tracks[run->n_tracks];
    memset(t, 0, sizeof *t);
    snprintf(t->pid, sizeof t->pid, "%s", pid);
    snprintf(t->tid, sizeof t->tid, "%s", tid);
    t->file = file;
    t->unmatched = -1;
    return run->n_tracks++;
}

/* Horovod's "E" args {"dtype": "HOROVOD_FLOAT32", "shape": "[3, 3]"}: the tensor's
 * bytes; 0 when absent or unknown; -1 when the shape's bytes pass TENSOR_MAX_BYTES (a
 * damaged shape: the product would overflow a long). */
#define TENSOR_MAX_BYTES (1L << 53)
static long tensor_bytes(json_t *args) {
    static const struct { const char *suffix; int size; } types[] = {
        { "UINT8", 1 }, { "INT8", 1 }, { "BOOL", 1 }, { "UINT16", 2 }, { "INT16", 2 }, { "FLOAT16", 2 },
        { "BFLOAT16", 2 }, { "INT32", 4 }, { "FLOAT32", 4 }, { "INT64", 8 }, { "FLOAT64", 8 },
    };
    const char *dtype = json_string_value(json_object_get(args, "dtype"));
    const char *shape = json_string_value(json_object_get(args, "shape"));
    if (!dtype || !shape)
        return 0;
    long size = 0;
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = strlen(dtype), k = strlen(types[i].suffix);
        if (n >= k && strcmp(dtype + n - k, types[i].suffix) == 0 && (n == k || dtype[n - k - 1] == '_'))
            size = types[i].size;
    }
    long bytes = size;
    for (const char *p = shape; *p; p++)
        if (isdigit((unsigned char)*p)) {
            char *end;
            const long dim = strtol(p, &end, 10);
            if (dim > 0 && bytes > TENSOR_MAX_BYTES / dim)
                return -1;
            bytes *= dim;
            p = end - 1;
        }
    return bytes;
}

/* The bytes of event i's tensor into *bytes; -1 with err naming the event when its shape
 * is too large to be a tensor. */
static int event_bytes(ci_run *run, const ci_file *f, long i, json_t *ev, long *bytes) {
    json_t *args = json_object_get(ev, "args");
    *bytes = tensor_bytes(args);
    if (*bytes >= 0)
        return 0;
    return errmsg_set(run->err, run->errlen, "%s: event %ld: args.shape \"%.64s\": expected a tensor of at most 2^53 bytes",
                      f->path, i, json_string_value(json_object_get(args, "shape")));
}

/* ts (and dur for "X") of event ev in microseconds; -1 with err when not finite numbers. */
static int event_times(const ci_file *f, long i, json_t *ev, bool complete, double *ts, double *dur, char *err,
                       int errlen) {
    json_t *t = json_object_get(ev, "ts"), *d = json_object_get(ev, "dur");
    if (!json_is_number(t) || !isfinite(json_number_value(t)))
        return errmsg_set(err, errlen, "%s: event %ld: expected \"ts\", a number of microseconds", f->path, i);
    *ts = json_number_value(t);
    if (complete) {
        if (!json_is_number(d) || !isfinite(json_number_value(d)) || json_number_value(d) < 0)
            return errmsg_set(err, errlen, "%s: event %ld: an \"X\" event needs \"dur\", a number >= 0", f->path, i);
        *dur = json_number_value(d);
    }
    return 0;
}

/* An open "B" of a thread, waiting for its "E". */
typedef struct {
    int track;
    long index;
    const char *name;
    double t0_us;
} open_begin;

/* An "E": ends the innermost open "B" of its thread. */
static int end_span(ci_run *run, int file, long i, json_t *ev, int track, open_begin *open, long *n_open) {
    const ci_file *f = &run->files[file];
    double ts = 0;
    if (event_times(f, i, ev, false, &ts, NULL, run->err, run->errlen))
        return -1;
    long k = *n_open - 1;
    while (k >= 0 && open[k].track != track)
        k--;
    if (k < 0)
        return errmsg_set(run->err, run->errlen, "%s: event %ld: an \"E\" on pid %s tid %s with no \"B\" open there",
                          f->path, i, run->tracks[track].pid, run->tracks[track].tid);
    long bytes = 0;
    if (event_bytes(run, f, i, ev, &bytes))
        return -1;
    ci_span s = { .name = open[k].name, .t0_us = open[k].t0_us, .t1_us = ts, .track = track, .index = open[k].index,
                  .bytes = bytes, .phase = -1 };
    if (ts < s.t0_us)
        return errmsg_set(run->err, run->errlen, "%s: event %ld: ends before its \"B\" (event %ld) began", f->path, i,
                          open[k].index);
    memmove(&open[k], &open[k + 1], sizeof *open * (size_t)(*n_open - k - 1));
    (*n_open)--;
    return push_span(run, &s) ? errmsg_set(run->err, run->errlen, "out of memory") : 0;
}

/* Horovod's negotiation ticks: "X" events of no duration named by a rank. */
static void note_tick(ci_file *f, const char *name, double dur) {
    if (dur != 0 || !*name || strspn(name, "0123456789") != strlen(name) || strlen(name) > 6)
        return;
    int r = atoi(name);
    if (r + 1 > f->ticks)
        f->ticks = r + 1;
}

/* One event: a span ("X"), a begin or an end; everything else ("M", "i", "C", flows, ...)
 * carries no time of a phase and is skipped. */
static int read_event(ci_run *run, int file, long i, json_t *ev, open_begin *open, long *n_open) {
    ci_file *f = &run->files[file];
    if (!json_is_object(ev))
        return errmsg_set(run->err, run->errlen, "%s: event %ld: expected an object", f->path, i);
    const char *ph = json_string_value(json_object_get(ev, "ph"));
    if (!ph)
        return errmsg_set(run->err, run->errlen, "%s: event %ld: expected \"ph\", the event's type", f->path, i);
    if (strcmp(ph, "X") != 0 && strcmp(ph, "B") != 0 && strcmp(ph, "E") != 0)
        return 0;
    int track = track_of(run, file, ev);
    if (track < 0)
        return errmsg_set(run->err, run->errlen, "out of memory");
    if (ph[0] == 'E')
        return end_span(run, file, i, ev, track, open, n_open);
    const char *name = json_string_value(json_object_get(ev, "name"));
    if (!name)
        return errmsg_set(run->err, run->errlen, "%s: event %ld: expected \"name\", a string", f->path, i);
    double ts = 0, dur = 0;
    if (event_times(f, i, ev, ph[0] == 'X', &ts, &dur, run->err, run->errlen))
        return -1;
    if (ph[0] == 'B') {
        open[(*n_open)++] = (open_begin){ .track = track, .index = i, .name = name, .t0_us = ts };
        return 0;
    }
    note_tick(f, name, dur);
    long bytes = 0;
    if (event_bytes(run, f, i, ev, &bytes))
        return -1;
    ci_span s = { .name = name, .t0_us = ts, .t1_us = ts + dur, .track = track, .index = i, .bytes = bytes,
                  .phase = -1 };
    return push_span(run, &s) ? errmsg_set(run->err, run->errlen, "out of memory") : 0;
}

static int read_spans(ci_run *run, int file) {
    ci_file *f = &run->files[file];
    size_t n = json_array_size(f->events);
    open_begin *open = malloc(sizeof *open * (n + 1));
    long n_open = 0;
    int rc = open ? 0 : errmsg_set(run->err, run->errlen, "out of memory");
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = read_event(run, file, (long)i, json_array_get(f->events, i), open, &n_open);
    if (rc == 0 && n_open > 0)
        rc = errmsg_set(run->err, run->errlen, "%s: event %ld ('%s', \"B\"): never ended by an \"E\"", f->path,
                        open[0].index, open[0].name);
    free(open);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Ranks and the run */

/* K, and every file's rank; -1 with err when the files do not make ranks 0..K−1. */
static int assign_ranks(ci_run *run, const chrome_import_opts *o, int *workers) {
    ci_file *fs = run->files;
    int n = run->n_files, k = o->workers;
    for (int i = 0; i < n && !k; i++)
        k = fs[i].world;
    if (n == 1 && fs[0].rank < 0) {
        fs[0].rank = 0; /* one rank's view of the run */
        *workers = k ? k : fs[0].ticks ? fs[0].ticks : 1;
        return 0;
    }
    if (!k)
        k = n;
    for (int i = 0; i < n; i++) {
        if (fs[i].rank < 0)
            return errmsg_set(run->err, run->errlen, "%s: which rank? Name each rank's file RUN.rankR.json (or record "
                              "distributedInfo) so that a run's files are read together", fs[i].path);
        if (fs[i].world && fs[i].world != k)
            return errmsg_set(run->err, run->errlen, "%s: distributedInfo.world_size is %d, but the run has %d workers",
                              fs[i].path, fs[i].world, k);
        if (fs[i].rank >= k)
            return errmsg_set(run->err, run->errlen, "%s: rank %d of a run of %d workers", fs[i].path, fs[i].rank, k);
        for (int j = 0; j < i; j++)
            if (fs[j].rank == fs[i].rank)
                return errmsg_set(run->err, run->errlen, "%s and %s: both rank %d", fs[j].path, fs[i].path, fs[i].rank);
    }
    if (n != k)
        return errmsg_set(run->err, run->errlen, "%s: a run of %d workers needs one file per rank, %d given (RUN.rank0.json "
                          "... RUN.rank%d.json)", fs[0].path, k, n, k - 1);
    *workers = k;
    return 0;
}

/* This rank's examples per step: its slice of B (slices differ by at most one). */
static long slice_of(const chrome_import_opts *o, int workers, int rank) {
    if (o->batch_per_worker || workers <= 1)
        return o->batch;
    return o->batch / workers + (rank < o->batch % workers ? 1 : 0);
}

static trace_run header_of(const chrome_import_opts *o, int workers) {
    trace_run r = { .host_cores = o->host_cores, .model_bytes = o->model_bytes };
    snprintf(r.host, sizeof r.host, "%s", o->host ? o->host : "unknown");
    snprintf(r.git, sizeof r.git, "unknown");
    snprintf(r.net, sizeof r.net, "%s", o->net ? o->net : "");
    r.config = (job_config){ .workers = workers, .cores = o->cores > 0 ? o->cores : 1,
                                   .sync = JOB_SYNC_BATCH, .every_n = 1, .topology = JOB_TOPO_ALLREDUCE,
                                   .master = JOB_MASTER_WORKER, .batch_per_worker = o->batch_per_worker,
                                   .examples = 1, .batch = o->batch > 0 ? o->batch : 1, .epochs = 1 };
    return r;
}

/* D = steps × B (× K per worker), how the ranks wait, and M from the first step's comm
 * where not given. A run whose exchange ran on threads of its own (background comm: DDP's
 * buckets on gloo's threads) waits for it on a future, asleep: waits "block". */
static void finish_header(trace *t, long steps) {
    job_config *c = &t->run.config;
    long per_step = c->batch_per_worker ? c->batch * c->workers : c->batch;
    c->examples = steps > 0 ? steps * per_step : 1;
    for (long i = 0; i < t->n_events && !t->run.waits_block; i++)
        t->run.waits_block = t->events[i].ph == TRACE_COMM && t->events[i].background;
    if (t->run.model_bytes > 0)
        return;
    for (long i = 0; i < t->n_events; i++)
        if (t->events[i].ph == TRACE_COMM && t->events[i].bytes > 0 && t->events[i].rank == 0) {
            t->run.model_bytes = t->events[i].bytes;
            return;
        }
}

/* Every event of rank 0, again for ranks 1..K−1: one file without a rank is every
 * rank's view (Horovod's collectives run in lockstep). */
static int repeat_rank0(trace *t, int workers) {
    long n = t->n_events;
    for (int r = 1; r < workers; r++)
        for (long i = 0; i < n; i++) {
            trace_event e = t->events[i];
            e.rank = r;
            if (trace_add(t, &e))
                return -1;
        }
    return 0;
}

static void run_free(ci_run *run) {
    for (int i = 0; i < run->n_files; i++)
        json_decref(run->files[i].root);
    free(run->files);
    free(run->spans);
    free(run->tracks);
    free(run->order);
    free(run->track_begin);
}

/* The timelines of every file's rank into t; -1 with err. */
static int build_timelines(ci_run *run, const chrome_import_opts *o, int workers, trace *t) {
    long steps = -1;
    for (int f = 0; f < run->n_files; f++) {
        int rank = run->files[f].rank;
        long s = ci_timeline(run, f, rank, o->batch > 0 ? slice_of(o, workers, rank) : 0, t);
        if (s < 0)
            return -1;
        if (rank == 0)
            steps = s;
    }
    if (run->n_files == 1 && workers > 1 && repeat_rank0(t, workers))
        return errmsg_set(run->err, run->errlen, "out of memory");
    finish_header(t, steps);
    return 0;
}

trace *chrome_import(const char *const *paths, int n, const chrome_import_opts *opts, char *err, int errlen) {
    chrome_import_opts o = *opts;
    phasemap *own = o.map ? NULL : phasemap_default();
    ci_run run = { .files = calloc((size_t)(n > 0 ? n : 1), sizeof *run.files), .n_files = n, .err = err,
                   .errlen = errlen, .map = o.map ? o.map : own };
    trace *t = NULL;
    int rc = run.files && run.map ? 0 : errmsg_set(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        run.files[i].path = paths[i];
        run.files[i].rank = -1;
        rc = load_file(&run.files[i], err, errlen) || read_spans(&run, i) ? -1 : 0;
    }
    int workers = 1;
    if (rc == 0)
        rc = assign_ranks(&run, &o, &workers);
    run.origin_us = INFINITY;
    for (long i = 0; i < run.n_spans; i++)
        run.origin_us = fmin(run.origin_us, run.spans[i].t0_us);
    if (rc == 0 && ci_place(&run))
        rc = errmsg_set(err, errlen, "out of memory");
    if (rc == 0) {
        trace_run header = header_of(&o, workers);
        t = trace_new(&header);
        if (!t)
            rc = errmsg_set(err, errlen, "out of memory");
    }
    if (rc == 0 && build_timelines(&run, &o, workers, t))
        rc = -1;
    run_free(&run);
    phasemap_free(own);
    if (rc) {
        trace_free(t);
        return NULL;
    }
    return t;
}
