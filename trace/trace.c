#define _POSIX_C_SOURCE 200809L
#include "trace/trace.h"

#include "util/jsonout.h"
#include "model/memory.h"

#include "util/errmsg.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const phase_names[TRACE_PHASE_COUNT] = { "startup", "compute", "comm", "wait", "eval", "update" };

const char *trace_phase_name(trace_phase ph) {
    return (ph >= 0 && ph < TRACE_PHASE_COUNT) ? phase_names[ph] : "?";
}

int trace_phase_parse(const char *s, trace_phase *out) {
    for (int i = 0; i < TRACE_PHASE_COUNT; i++)
        if (strcmp(s, phase_names[i]) == 0) {
            *out = (trace_phase)i;
            return 0;
        }
    return -1;
}

trace *trace_new(const trace_run *run) {
    trace *t = calloc(1, sizeof *t);
    if (t && run)
        t->run = *run;
    return t;
}

void trace_free(trace *t) {
    if (!t)
        return;
    free(t->events);
    free(t);
}

int trace_add(trace *t, const trace_event *e) {
    if (t->n_events == t->cap_events) {
        long cap = t->cap_events ? 2 * t->cap_events : 1024;
        trace_event *ev = realloc(t->events, sizeof *ev * (size_t)cap);
        if (!ev)
            return -1;
        t->events = ev;
        t->cap_events = cap;
    }
    t->events[t->n_events++] = *e;
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Writing */

/* The header's "host_speed": the transfer probe's pair only where it was measured. NULL out
 * of memory. */
static json_t *host_speed_to_json(const trace_host_speed *h) {
    json_t *o = json_pack("{s:f, s:f, s:f, s:f}", "probe_before_s", h->probe_before_s, "probe_after_s",
                          h->probe_after_s, "steal_s", h->steal_s, "cpu_s", h->cpu_s);
    if (o && (h->transfer_before_s > 0 || h->transfer_after_s > 0) &&
        (json_object_set_new(o, "transfer_before_s", json_real(h->transfer_before_s)) ||
         json_object_set_new(o, "transfer_after_s", json_real(h->transfer_after_s)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The header's "memory" object (trace.h); NULL out of memory. */
static json_t *memory_to_json(const trace_run *r) {
    const trace_memory *m = &r->memory;
    json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "fwd_bytes_per_example",
                          (json_int_t)m->fwd_bytes_per_example, "train_bytes_per_example",
                          (json_int_t)m->train_bytes_per_example, "workspace_bytes", (json_int_t)m->workspace_bytes,
                          "workspace_bytes_per_thread", (json_int_t)m->workspace_bytes_per_thread, "example_bytes",
                          (json_int_t)m->example_bytes, "test_examples", (json_int_t)m->test_examples,
                          "test_set_examples", (json_int_t)m->test_set_examples);
    json_t *roles = json_array(), *peaks = json_array();
    for (int i = 0; roles && peaks && i < m->n_ranks; i++)
        if (json_array_append_new(roles, json_string(job_role_name(job_role_of(&r->config, i)))) ||
            json_array_append_new(peaks, json_integer((json_int_t)m->peak_rss_kib[i])))
            break;
    if (!o || json_object_set_new(o, "roles", roles) || json_object_set_new(o, "peak_rss_kib", peaks)) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The header's "layers" object: "params", "input", "steps", "examples" and "list", one
 * {"kind", "time_s", "flops", "bytes", "step_bytes"} a layer. NULL out of memory. */
static json_t *layers_to_json(const trace_layers *l) {
    json_t *list = json_array();
    for (int i = 0; list && i < l->cost.n; i++) {
        const network_layer *y = &l->cost.layer[i];
        if (json_array_append_new(list, json_pack("{s:s, s:f, s:f, s:f, s:f}", "kind", network_kind_name(y->kind),
                                                  "time_s", l->time_s[i], "flops", y->flops, "bytes", y->bytes,
                                                  "step_bytes", y->step_bytes))) {
            json_decref(list);
            return NULL;
        }
    }
    return list ? json_pack("{s:I, s:[i,i,i,i], s:I, s:f, s:o}", "params", (json_int_t)l->cost.params, "input",
                            l->input[0], l->input[1], l->input[2], l->input[3], "steps", (json_int_t)l->steps,
                            "examples", l->examples, "list", list)
                : NULL;
}

static json_t *run_to_json(const trace_run *r) {
    char sync[24];
    job_sync_format(r->config.sync, r->config.every_n, sync, sizeof sync);
    json_t *o = json_pack("{s:s, s:i, s:s, s:i, s:s, s:s, s:I, s:i, s:i, s:s, s:s, s:s, s:I, s:I, s:i, s:b, s:I}",
                     "format", TRACE_FORMAT, "version", TRACE_VERSION, "host", r->host,
                     "host_cores", r->host_cores, "git", r->git, "net", r->net,
                     "model_bytes", (json_int_t)r->model_bytes, "workers", r->config.workers,
                     "cores", r->config.cores, "sync", sync,
                     "topology", job_topology_name(r->config.topology),
                     "master", job_master_name(r->config.master),
                     "examples", (json_int_t)r->config.examples, "batch", (json_int_t)r->config.batch,
                     "epochs", r->config.epochs, "batch_per_worker", r->config.batch_per_worker,
                     "seed", (json_int_t)r->seed);
    if (o && r->waits_block && json_object_set_new(o, "waits", json_string("block"))) {
        json_decref(o);
        return NULL;
    }
    if (o && r->memory.has && json_object_set_new(o, "memory", memory_to_json(r))) {
        json_decref(o);
        return NULL;
    }
    if (o && r->layers.has && json_object_set_new(o, "layers", layers_to_json(&r->layers))) {
        json_decref(o);
        return NULL;
    }
    if (o && r->speed.has && json_object_set_new(o, "host_speed", host_speed_to_json(&r->speed))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* One event line; its name quoted by jansson. NULL, or what is wrong with the event (a name
 * that is not UTF-8, an accuracy or loss JSON cannot hold). */
static const char *write_event(FILE *out, const trace_event *e) {
    if (e->has_accuracy && !(e->accuracy >= 0 && e->accuracy <= 1 && isfinite(e->loss) && e->loss >= 0))
        return "its accuracy is not in [0, 1] or its loss not a finite number >= 0";
    /* %.9f: nanosecond resolution, the resolution of the clock the trainer reads. */
    fprintf(out, "{\"rank\":%d,\"ph\":\"%s\",\"t0\":%.9f,\"t1\":%.9f,\"epoch\":%d,\"step\":%ld", e->rank,
            trace_phase_name(e->ph), e->t0_s, e->t1_s, e->epoch, e->step);
    if (e->bytes)
        fprintf(out, ",\"bytes\":%ld", e->bytes);
    /* Always written: a zero-example step is a fact (an empty slice), not a default. */
    fprintf(out, ",\"examples\":%ld", e->examples);
    if (e->name[0]) {
        fputs(",\"name\":", out);
        if (jsonout_string(out, e->name))
            return "its name is not valid UTF-8";
    }
    if (e->background)
        fputs(",\"background\":true", out);
    /* %.17g: the double read back is the one written. */
    if (e->has_accuracy)
        fprintf(out, ",\"accuracy\":%.17g,\"loss\":%.17g", e->accuracy, e->loss);
    if (e->has_staleness)
        fprintf(out, ",\"staleness\":%ld", e->staleness);
    if (e->has_cpu)
        fprintf(out, ",\"cpu\":[%d,%d]", e->cpu_begin, e->cpu_end);
    fputs("}\n", out);
    return NULL;
}

int trace_write(const trace *t, const char *path, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    FILE *out = atomicfile_stream(f);
    json_t *run = json_pack("{s:o}", "run", run_to_json(&t->run));
    char *line = run ? json_dumps(run, JSON_COMPACT) : NULL;
    json_decref(run);
    if (!line) {
        // json_pack refuses a string that is not UTF-8 (or runs out of memory).
        snprintf(err, (size_t)errlen, "%s: cannot encode the run header (host, git or net not UTF-8?)", path);
        atomicfile_abort(f);
        return -1;
    }
    fprintf(out, "%s\n", line);
    free(line);
    for (long i = 0; i < t->n_events; i++) {
        const char *bad = write_event(out, &t->events[i]);
        if (bad) {
            snprintf(err, (size_t)errlen, "%s: event %ld: %s", path, i + 1, bad);
            atomicfile_abort(f);
            return -1;
        }
    }
    return atomicfile_commit(f, err, errlen);
}

/* ---------------------------------------------------------------------------------- */
/* Reading */

static int get_int(json_t *o, const char *key, long min, long *out) {
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < min)
        return -1;
    *out = (long)json_integer_value(v);
    return 0;
}

/* A finite number >= 0 at key of o into *out; -1 when it is not one. */
static int get_nonneg(json_t *o, const char *key, double *out) {
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v) || !(json_number_value(v) >= 0) || !isfinite(json_number_value(v)))
        return -1;
    *out = json_number_value(v);
    return 0;
}

/* The header's optional "layers" object (layers_to_json). */
static int parse_layers(json_t *o, trace_run *r, const char *path, long line, char *err, int errlen) {
    trace_layers *l = &r->layers;
    json_t *params = json_object_get(o, "params"), *steps = json_object_get(o, "steps");
    json_t *input = json_object_get(o, "input"), *list = json_object_get(o, "list");
    if (!json_is_integer(params) || json_integer_value(params) < 0 || !json_is_integer(steps) ||
        json_integer_value(steps) < 1 || get_nonneg(o, "examples", &l->examples) || !json_is_array(list) ||
        json_array_size(list) > NETWORK_MAX_LAYERS || !json_is_array(input) || json_array_size(input) != 4)
        return errmsg_set(err, errlen, "%s: line %ld: run.layers: expected params, steps (>= 1), examples, input "
                          "[h, w, c, classes] and a list of at most %d layers", path, line, NETWORK_MAX_LAYERS);
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_array_get(input, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65536)
            return errmsg_set(err, errlen, "%s: line %ld: run.layers.input: expected whole numbers in [1, 65536]",
                              path, line);
        l->input[i] = (int)json_integer_value(v);
    }
    l->cost.params = (long)json_integer_value(params);
    l->steps = (long)json_integer_value(steps);
    l->cost.n = (int)json_array_size(list);
    for (int i = 0; i < l->cost.n; i++) {
        json_t *y = json_array_get(list, (size_t)i);
        network_layer *c = &l->cost.layer[i];
        const char *kind = json_string_value(json_object_get(y, "kind"));
        if (!kind || network_kind_parse(kind, &c->kind) || get_nonneg(y, "time_s", &l->time_s[i]) ||
            get_nonneg(y, "flops", &c->flops) || get_nonneg(y, "bytes", &c->bytes) ||
            get_nonneg(y, "step_bytes", &c->step_bytes))
            return errmsg_set(err, errlen, "%s: line %ld: run.layers.list[%d]: expected kind (conv, fc, elementwise, "
                              "pool) and time_s, flops, bytes, step_bytes (numbers >= 0)", path, line, i);
    }
    l->has = true;
    return 0;
}

/* The header's optional "host_speed" object: four finite numbers >= 0, and the transfer
 * probe's two where present. */
static int parse_host_speed(json_t *o, trace_run *r, const char *path, long line, char *err, int errlen) {
    trace_host_speed *h = &r->speed;
    struct { const char *key; double *out; } f[] = { { "probe_before_s", &h->probe_before_s },
                                                     { "probe_after_s", &h->probe_after_s },
                                                     { "steal_s", &h->steal_s }, { "cpu_s", &h->cpu_s } };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (get_nonneg(o, f[i].key, f[i].out))
            return errmsg_set(err, errlen, "%s: line %ld: run.host_speed.%s: expected a finite number >= 0", path,
                              line, f[i].key);
    struct { const char *key; double *out; } g[] = { { "transfer_before_s", &h->transfer_before_s },
                                                     { "transfer_after_s", &h->transfer_after_s } };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (json_object_get(o, g[i].key) && get_nonneg(o, g[i].key, g[i].out))
            return errmsg_set(err, errlen, "%s: line %ld: run.host_speed.%s: expected a finite number >= 0", path,
                              line, g[i].key);
    h->has = true;
    return 0;
}

/* The header's optional "memory" object; its "roles" are for the reader and not read. */
static int parse_memory(json_t *o, trace_run *r, const char *path, long line, char *err, int errlen) {
    trace_memory *m = &r->memory;
    if (!json_is_object(o))
        return errmsg_set(err, errlen, "%s: line %ld: run.memory: expected an object", path, line);
    struct { const char *key; long *out; } ints[] = {
        { "fwd_bytes_per_example", &m->fwd_bytes_per_example }, { "train_bytes_per_example", &m->train_bytes_per_example },
        { "workspace_bytes", &m->workspace_bytes }, { "workspace_bytes_per_thread", &m->workspace_bytes_per_thread },
        { "example_bytes", &m->example_bytes }, { "test_examples", &m->test_examples },
        { "test_set_examples", &m->test_set_examples },
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
        if (get_int(o, ints[i].key, 0, ints[i].out))
            return errmsg_set(err, errlen, "%s: line %ld: run.memory.%s: expected an integer >= 0", path, line, ints[i].key);
    json_t *peaks = json_object_get(o, "peak_rss_kib");
    size_t ranks = (size_t)job_ranks(&r->config);
    ranks = ranks < TRACE_MAX_RANKS ? ranks : TRACE_MAX_RANKS;
    if (!json_is_array(peaks) || json_array_size(peaks) != ranks)
        return errmsg_set(err, errlen, "%s: line %ld: run.memory.peak_rss_kib: expected an array of %zu integers (one per rank)",
                          path, line, ranks);
    for (size_t i = 0; i < json_array_size(peaks); i++) {
        json_t *v = json_array_get(peaks, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1)
            return errmsg_set(err, errlen, "%s: line %ld: run.memory.peak_rss_kib[%zu]: expected an integer >= 1", path, line, i);
        m->peak_rss_kib[i] = (long)json_integer_value(v);
    }
    m->n_ranks = (int)json_array_size(peaks);
    m->has = true;
    return 0;
}

static int parse_run(json_t *root, trace_run *r, const char *path, long line, char *err, int errlen) {
    json_t *run = json_object_get(root, "run");
    if (!json_is_object(run))
        return errmsg_set(err, errlen, "%s: line %ld: expected {\"run\": {...}} describing the run", path, line);
    json_t *format = json_object_get(run, "format");
    if (!json_is_string(format) || strcmp(json_string_value(format), TRACE_FORMAT) != 0)
        return errmsg_set(err, errlen, "%s: line %ld: run.format: expected \"%s\"", path, line, TRACE_FORMAT);
    long version = 0;
    if (get_int(run, "version", 0, &version) || version != TRACE_VERSION)
        return errmsg_set(err, errlen, "%s: line %ld: run.version: expected %d", path, line, TRACE_VERSION);

    const char *host = json_string_value(json_object_get(run, "host"));
    const char *git = json_string_value(json_object_get(run, "git"));
    const char *net = json_string_value(json_object_get(run, "net"));
    jsonout_copy(r->host, sizeof r->host, host ? host : "unknown");
    jsonout_copy(r->git, sizeof r->git, git ? git : "unknown");
    jsonout_copy(r->net, sizeof r->net, net ? net : "");

    long host_cores = 0, workers, cores, examples, batch, epochs, model_bytes = 0, seed = 0;
    struct { const char *key; long min; long *out; bool required; } ints[] = {
        { "workers", 1, &workers, true }, { "cores", 1, &cores, true },
        { "examples", 1, &examples, true }, { "batch", 1, &batch, true },
        { "epochs", 1, &epochs, true }, { "host_cores", 0, &host_cores, false },
        { "model_bytes", 0, &model_bytes, false }, { "seed", 0, &seed, false },
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        json_t *v = json_object_get(run, ints[i].key);
        if (!v && !ints[i].required)
            continue;
        if (get_int(run, ints[i].key, ints[i].min, ints[i].out))
            return errmsg_set(err, errlen, "%s: line %ld: run.%s: expected an integer >= %ld", path, line, ints[i].key, ints[i].min);
    }
    job_config *c = &r->config;
    c->workers = (int)workers;
    c->cores = (int)cores;
    c->examples = examples;
    c->batch = batch;
    c->epochs = (int)epochs;
    r->host_cores = (int)host_cores;
    r->model_bytes = model_bytes;
    r->seed = seed;

    const char *sync = json_string_value(json_object_get(run, "sync"));
    if (!sync || job_sync_parse(sync, &c->sync, &c->every_n))
        return errmsg_set(err, errlen, "%s: line %ld: run.sync: expected batch, epoch, every:N, async[:N] or hogwild[:N]",
                          path, line);
    const char *topo = json_string_value(json_object_get(run, "topology"));
    if (!topo || job_topology_parse(topo, &c->topology))
        return errmsg_set(err, errlen, "%s: line %ld: run.topology: expected ps or allreduce", path, line);
    const char *master = json_string_value(json_object_get(run, "master"));
    c->master = JOB_MASTER_WORKER;
    if (master && job_master_parse(master, &c->master))
        return errmsg_set(err, errlen, "%s: line %ld: run.master: expected worker or dedicated", path, line);
    c->batch_per_worker = json_is_true(json_object_get(run, "batch_per_worker"));
    json_t *waits = json_object_get(run, "waits");
    if (waits && !(json_is_string(waits) && (strcmp(json_string_value(waits), "poll") == 0 ||
                                            strcmp(json_string_value(waits), "block") == 0)))
        return errmsg_set(err, errlen, "%s: line %ld: run.waits: expected \"poll\" or \"block\"", path, line);
    r->waits_block = waits && strcmp(json_string_value(waits), "block") == 0;
    json_t *layers = json_object_get(run, "layers");
    if (layers && parse_layers(layers, r, path, line, err, errlen))
        return -1;
    json_t *speed = json_object_get(run, "host_speed");
    if (speed && parse_host_speed(speed, r, path, line, err, errlen))
        return -1;
    json_t *memory = json_object_get(run, "memory");
    return memory ? parse_memory(memory, r, path, line, err, errlen) : 0;
}

static int parse_event(json_t *o, const trace_run *run, trace_event *e, const char **what) {
    memset(e, 0, sizeof *e);
    long rank, epoch = -1, step = -1, bytes = 0, examples = 0;
    *what = "an object";
    if (!json_is_object(o))
        return -1;
    *what = "\"rank\": an integer in [0, workers)";
    if (get_int(o, "rank", 0, &rank) || rank >= run->config.workers + 1)
        return -1;
    const char *ph = json_string_value(json_object_get(o, "ph"));
    *what = "\"ph\": one of startup, compute, comm, wait, eval";
    if (!ph || trace_phase_parse(ph, &e->ph))
        return -1;
    json_t *t0 = json_object_get(o, "t0"), *t1 = json_object_get(o, "t1");
    *what = "\"t0\" and \"t1\": finite numbers with t0 <= t1";
    if (!json_is_number(t0) || !json_is_number(t1))
        return -1;
    e->t0_s = json_number_value(t0);
    e->t1_s = json_number_value(t1);
    if (!isfinite(e->t0_s) || !isfinite(e->t1_s) || e->t1_s < e->t0_s)
        return -1;
    *what = "\"epoch\", \"step\": integers >= -1 (epoch at most 2147483647); \"bytes\", \"examples\": "
            "integers >= 0";
    if ((json_object_get(o, "epoch") && (get_int(o, "epoch", -1, &epoch) || epoch > INT_MAX)) ||
        (json_object_get(o, "step") && get_int(o, "step", -1, &step)) ||
        (json_object_get(o, "bytes") && get_int(o, "bytes", 0, &bytes)) ||
        (json_object_get(o, "examples") && get_int(o, "examples", 0, &examples)))
        return -1;
    json_t *name = json_object_get(o, "name");
    *what = "\"name\": a string";
    if (name && !json_is_string(name))
        return -1;
    json_t *bg = json_object_get(o, "background");
    *what = "\"background\": true or false, and true only on a comm or update event";
    if (bg && (!json_is_boolean(bg) || (json_is_true(bg) && e->ph != TRACE_COMM && e->ph != TRACE_UPDATE)))
        return -1;
    e->background = json_is_true(bg);
    json_t *acc = json_object_get(o, "accuracy"), *loss = json_object_get(o, "loss");
    *what = "\"accuracy\" (a number in [0, 1]) and \"loss\" (a finite number >= 0): both or neither, on an eval event only";
    if (acc || loss) {
        if (!acc || !loss || e->ph != TRACE_EVAL || !json_is_number(acc) || !json_is_number(loss))
            return -1;
        e->accuracy = json_number_value(acc);
        e->loss = json_number_value(loss);
        if (!(e->accuracy >= 0 && e->accuracy <= 1) || !isfinite(e->loss) || e->loss < 0)
            return -1;
        e->has_accuracy = true;
    }
    long staleness = 0;
    *what = "\"staleness\": an integer >= 0, on an update event only";
    if (json_object_get(o, "staleness") && (e->ph != TRACE_UPDATE || get_int(o, "staleness", 0, &staleness)))
        return -1;
    e->has_staleness = json_object_get(o, "staleness") != NULL;
    e->staleness = staleness;
    json_t *cpu = json_object_get(o, "cpu");
    *what = "\"cpu\": [begin, end], two integers in [0, 32767], on a compute event only";
    if (cpu) {
        json_t *b = json_array_get(cpu, 0), *en = json_array_get(cpu, 1);
        if (e->ph != TRACE_COMPUTE || !json_is_array(cpu) || json_array_size(cpu) != 2 || !json_is_integer(b) ||
            !json_is_integer(en) || json_integer_value(b) < 0 || json_integer_value(en) < 0 ||
            json_integer_value(b) > SHRT_MAX || json_integer_value(en) > SHRT_MAX)
            return -1;
        e->has_cpu = true;
        e->cpu_begin = (short)json_integer_value(b);
        e->cpu_end = (short)json_integer_value(en);
    }
    e->rank = (int)rank;
    e->epoch = (int)epoch;
    e->step = step;
    e->bytes = bytes;
    e->examples = examples;
    if (name)
        jsonout_copy(e->name, sizeof e->name, json_string_value(name));
    return 0;
}

trace *trace_read(const char *path, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    trace *t = trace_new(NULL);
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int ok = t != NULL, have_run = 0;
    ssize_t len;
    while (ok && (len = getline(&line, &cap, f)) != -1) {
        lineno++;
        if (line[0] == '\n')
            continue;
        json_error_t jerr;
        // By length, not up to a NUL: a NUL byte inside a line is an error, not its end.
        json_t *o = json_loadb(line, (size_t)len, 0, &jerr);
        if (!o) {
            errmsg_set(err, errlen, "%s: line %ld column %d: %s", path, lineno, jerr.column, jerr.text);
            ok = 0;
        } else if (!have_run) {
            ok = parse_run(o, &t->run, path, lineno, err, errlen) == 0;
            have_run = 1;
        } else {
            trace_event e;
            const char *what;
            if (parse_event(o, &t->run, &e, &what)) {
                errmsg_set(err, errlen, "%s: line %ld: expected %s", path, lineno, what);
                ok = 0;
            } else if (trace_add(t, &e)) {
                errmsg_set(err, errlen, "%s: out of memory at line %ld", path, lineno);
                ok = 0;
            }
        }
        json_decref(o);
    }
    if (ok && !have_run) {
        errmsg_set(err, errlen, "%s: empty file: expected a {\"run\": ...} line", path);
        ok = 0;
    }
    free(line);
    fclose(f);
    if (!ok) {
        trace_free(t);
        return NULL;
    }
    return t;
}
