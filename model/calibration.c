#include "model/calibration.h"

#include "model/calibration_efficiency.h"
#include "model/calibration_network.h"
#include "util/jsonout.h"

#include "util/errmsg.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One required entry of "params": {"value": v, ...}, v finite and ≥ lo. */
static int read_param(const char *path, json_t *params, const char *section, const char *name, double lo,
                      double *value, double *stderr_out, char *err, int errlen) {
    json_t *entry = json_object_get(params, name);
    if (!entry)
        return errmsg_set(err, errlen, "%s: %s.%s: missing", path, section, name);
    if (!json_is_object(entry))
        return errmsg_set(err, errlen, "%s: %s.%s: expected an object {\"value\": ...}", path, section, name);
    json_t *v = json_object_get(entry, "value");
    if (!v)
        return errmsg_set(err, errlen, "%s: %s.%s.value: missing", path, section, name);
    if (!json_is_number(v))
        return errmsg_set(err, errlen, "%s: %s.%s.value: expected a number", path, section, name);
    double x = json_number_value(v);
    if (!isfinite(x) || x < lo)
        return errmsg_set(err, errlen, "%s: %s.%s.value: expected a finite number >= %g, got %g", path, section, name, lo,
                          x);
    *value = x;
    json_t *e = json_object_get(entry, "stderr");
    *stderr_out = json_is_number(e) ? json_number_value(e) : NAN;
    return 0;
}

static int read_count(const char *path, json_t *obj, const char *name, long *out, char *err, int errlen) {
    json_t *v = json_object_get(obj, name);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return errmsg_set(err, errlen, "%s: workload.%s: expected an integer >= 1", path, name);
    *out = (long)json_integer_value(v);
    return 0;
}

/* "uncalibrated_topologies": ["ps", ...], optional. */
static int read_uncalibrated(const char *path, json_t *root, calibration *out, char *err, int errlen) {
    json_t *a = json_object_get(root, "uncalibrated_topologies");
    if (!a)
        return 0;
    if (!json_is_array(a))
        return errmsg_set(err, errlen, "%s: uncalibrated_topologies: expected an array of topology names", path);
    for (size_t i = 0; i < json_array_size(a); i++) {
        const char *name = json_string_value(json_array_get(a, i));
        job_topology t;
        if (!name || job_topology_parse(name, &t))
            return errmsg_set(err, errlen, "%s: uncalibrated_topologies[%zu]: expected ps or allreduce", path, i);
        out->uncalibrated[t] = true;
    }
    return 0;
}

/* model/memory.h's parameters under "memory" (calibration.h): name, unit, value and
 * standard error (NULL: a known or stated count, none). */
typedef struct {
    const char *name, *unit;
    double *value, *se;
} memory_field;

enum { MEMORY_FIELDS = 13, MEMORY_FIELDS_REQUIRED = 10 };

static void memory_fields(memory_params *m, memory_field f[MEMORY_FIELDS]) {
    const memory_field all[MEMORY_FIELDS] = {
        { "base", "byte", &m->base_bytes, &m->se_base_bytes },
        { "peer", "byte/rank", &m->peer_bytes, &m->se_peer_bytes },
        { "thread", "byte/thread", &m->thread_bytes, &m->se_thread_bytes },
        { "allreduce_scratch", "M*min(K-1,2)/K", &m->allreduce_scratch, &m->se_allreduce_scratch },
        { "fwd_bytes_per_example", "byte/example", &m->fwd_bytes_per_example, NULL },
        { "train_bytes_per_example", "byte/example", &m->train_bytes_per_example, NULL },
        { "workspace", "byte", &m->workspace_bytes, NULL },
        { "workspace_per_thread", "byte/thread", &m->workspace_bytes_per_thread, NULL },
        { "example_bytes", "byte/example", &m->example_bytes, NULL },
        { "test_examples", "example", &m->test_examples, NULL },
        /* stated, optional on reading (0; the master holds examples as a worker does) */
        { "master_extra", "byte", &m->master_extra_bytes, NULL },
        { "master_models_per_worker", "model/worker", &m->master_models_per_worker, NULL },
        { "master_example_bytes", "byte/example", &m->master_example_bytes, NULL },
    };
    memcpy(f, all, sizeof all);
}

static int read_memory(const char *path, json_t *o, memory_params *m, char *err, int errlen) {
    if (!json_is_object(o))
        return errmsg_set(err, errlen, "%s: memory: expected an object", path);
    memory_field f[MEMORY_FIELDS];
    memory_fields(m, f);
    for (int i = 0; i < MEMORY_FIELDS; i++) {
        double se = NAN;
        if ((i < MEMORY_FIELDS_REQUIRED || json_object_get(o, f[i].name)) &&
            read_param(path, o, "memory", f[i].name, 0.0, f[i].value, &se, err, errlen))
            return -1;
        if (f[i].se)
            *f[i].se = se;
    }
    if (!json_object_get(o, "master_example_bytes"))
        m->master_example_bytes = m->example_bytes;
    m->sharded_data = json_is_true(json_object_get(o, "sharded_data"));
    json_t *fit = json_object_get(o, "fit");
    m->points = (long)json_integer_value(json_object_get(fit, "points"));
    m->rms_bytes = json_number_value(json_object_get(fit, "rms_bytes"));
    m->worst_rel_error = json_number_value(json_object_get(fit, "worst_rel_error"));
    m->known = true;
    return 0;
}

/* The "params" object into out's params and standard errors, each checked for its range
 * (model/params.h: the registry says which are required). A parameter added in a later
 * revision of this version is absent from a file written before it and reads as 0 (an
 * update inside c0 and comm, no run-to-run spread, ...). The oversub_sync of earlier files
 * (a delay per synchronisation, which oversub_compute and balance replace) is not read:
 * such a file predicts ρ > 1 by ρ and the threads' packing alone. */
static int read_params(const char *path, json_t *params, calibration *out, char *err, int errlen) {
    costmodel_params *p = &out->params;
    for (int i = 0; i < PARAM_COUNT; i++) {
        const param_row *r = param_info((param_id)i);
        if ((r->required > 0 || json_object_get(params, r->name)) &&
            read_param(path, params, "params", r->name, r->lo, param_value(p, (param_id)i),
                       param_se(&out->stderr_, (param_id)i), err, errlen))
            return -1;
    }
    /* Above their range (read_param has checked the lower bound): a file that passes here
     * passes costmodel_check. */
    if (p->waits_block != 0 && p->waits_block != 1)
        return errmsg_set(err, errlen, "%s: params.waits_block.value: expected 0 (waits poll) or 1 (waits block), got %g",
                          path, p->waits_block);
    for (int i = 0; i < PARAM_COUNT; i++) {
        const param_row *r = param_info((param_id)i);
        const double v = param_get(p, (param_id)i);
        if (r->lo != 0 && !param_in_range(r, v)) /* a signed correction (read_param checked lo) */
            return errmsg_set(err, errlen, "%s: params.%s.value: expected a number in [%g, %g], got %g", path, r->name,
                              r->lo, r->hi, v);
        if (r->hi == 1.0 && v > 1)
            return errmsg_set(err, errlen, "%s: params.%s.value: expected a fraction in [0, 1], got %g", path, r->name, v);
        if (v > r->hi) // the writer and the placement count cores in ints
            return errmsg_set(err, errlen, "%s: params.%s.value: expected at most %.15g %s, got %g", path, r->name, r->hi,
                              strcmp(r->unit, "core") == 0 ? "cores" : r->unit, v);
    }
    return 0;
}

/* The optional "workload" the calibration was measured on. */
static int read_workload(const char *path, json_t *root, calibration *out, char *err, int errlen) {
    json_t *workload = json_object_get(root, "workload");
    if (!workload)
        return 0;
    long epochs = 0;
    if (!json_is_object(workload))
        return errmsg_set(err, errlen, "%s: workload: expected an object", path);
    if (read_count(path, workload, "examples", &out->examples, err, errlen) ||
        read_count(path, workload, "batch", &out->batch, err, errlen) ||
        read_count(path, workload, "epochs", &epochs, err, errlen))
        return -1;
    out->epochs = (int)epochs;
    out->has_workload = true;
    return 0;
}

static int read_root(const char *path, json_t *root, calibration *out, char *err, int errlen) {
    if (!json_is_object(root))
        return errmsg_set(err, errlen, "%s: expected a JSON object at the top", path);
    json_t *format = json_object_get(root, "format");
    if (!json_is_string(format) || strcmp(json_string_value(format), CALIBRATION_FORMAT) != 0)
        return errmsg_set(err, errlen, "%s: format: expected \"%s\"", path, CALIBRATION_FORMAT);
    json_t *version = json_object_get(root, "version");
    if (!json_is_integer(version) || json_integer_value(version) != CALIBRATION_VERSION)
        return errmsg_set(err, errlen, "%s: version: expected %d", path, CALIBRATION_VERSION);
    json_t *params = json_object_get(root, "params");
    if (!json_is_object(params))
        return errmsg_set(err, errlen, "%s: params: missing or not an object", path);

    if (read_params(path, params, out, err, errlen))
        return -1;
    json_t *cov = json_object_get(root, "cov_c0_c1");
    if (cov) {
        if (!json_is_number(cov) || !isfinite(json_number_value(cov)))
            return errmsg_set(err, errlen, "%s: cov_c0_c1: expected a finite number", path);
        out->cov_c0_c1 = json_number_value(cov);
    }
    if (read_uncalibrated(path, root, out, err, errlen))
        return -1;

    json_t *memory = json_object_get(root, "memory");
    if (memory && read_memory(path, memory, &out->memory, err, errlen))
        return -1;
    json_t *efficiency = json_object_get(root, "efficiency");
    if (efficiency && calibration_efficiency_read(path, efficiency, &out->efficiency, err, errlen))
        return -1;
    json_t *network = json_object_get(root, "network");
    if (network && calibration_network_read(path, network, &out->network, err, errlen))
        return -1;

    json_t *host = json_object_get(root, "host");
    json_t *name = json_object_get(host, "name");
    jsonout_copy(out->host, sizeof out->host, json_is_string(name) ? json_string_value(name) : "unknown");
    json_t *unmeasured = json_object_get(root, "unmeasured");
    for (size_t i = 0; json_is_array(unmeasured) && i < json_array_size(unmeasured); i++) {
        const char *name = json_string_value(json_array_get(unmeasured, i));
        if (!name || strcmp(name, "sigma") != 0)
            return errmsg_set(err, errlen, "%s: unmeasured[%zu]: expected \"sigma\"", path, i);
        out->sigma_unmeasured = true;
    }
    if (unmeasured && !json_is_array(unmeasured))
        return errmsg_set(err, errlen, "%s: unmeasured: expected an array of parameter names", path);
    json_t *source = json_object_get(root, "source");
    if (json_is_string(source))
        jsonout_copy(out->source, sizeof out->source, json_string_value(source));
    json_t *range = json_object_get(root, "range");
    if (range) {
        json_t *k = json_object_get(range, "workers"), *m = json_object_get(range, "machines");
        if (!json_is_integer(k) || !json_is_integer(m) || json_integer_value(k) < 1 || json_integer_value(m) < 1 ||
            json_integer_value(k) > INT_MAX || json_integer_value(m) > INT_MAX)
            return errmsg_set(err, errlen, "%s: range: expected {\"workers\": K, \"machines\": M}, whole numbers >= 1",
                              path);
        out->range_workers = (int)json_integer_value(k);
        out->range_machines = (int)json_integer_value(m);
    }

    return read_workload(path, root, out, err, errlen);
}

int calibration_read(const char *path, calibration *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line < 1)
            return errmsg_set(err, errlen, "%s: %s", path, jerr.text);
        return errmsg_set(err, errlen, "%s: line %d column %d: %s", path, jerr.line, jerr.column, jerr.text);
    }
    int rc = read_root(path, root, out, err, errlen);
    json_decref(root);
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Writing */

/* jansson has no NaN: a number that is not finite is written as null. */
static json_t *number_or_null(double x) {
    return isfinite(x) ? json_real(x) : json_null();
}

static const char *zero_width_note(const char *name, double value) {
    if (strcmp(name, "model_bytes") == 0 || strcmp(name, "host_cores") == 0)
        return "from the run header: exact";
    if (strcmp(name, "waits_block") == 0)
        return value == 1.0 ? "from the run headers: waiting ranks block (no packing of ranks on cores)"
                            : "from the run headers: waiting ranks busy-poll";
    if (strcmp(name, "sigma") == 0 && value == 1.0)
        return "clamped to 1: the fit gave a serial fraction above 1";
    if (strcmp(name, "sigma") == 0 && value == 0.0)
        return "clamped to 0: the fit gave a negative serial fraction";
    if (value == 0.0)
        return "at the bound 0 (non-negative least squares): a one-sided, zero-width interval";
    return NULL;
}

static int set_new(json_t *obj, const char *key, json_t *value) {
    return value ? json_object_set_new(obj, key, value) : -1;
}

/* Every note on parameter `name`, joined by "; " into buf (the fit may say more than one
 * thing of a value: how it was split, where its standard error came from); NULL if none. */
static const char *fit_note(const calibration_fit *fit, const char *name, char *buf, size_t size) {
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; fit && i < fit->n_notes; i++)
        if (strcmp(fit->notes[i].param, name) == 0) {
            int n = snprintf(buf + used, size - used, "%s%s", used ? "; " : "", fit->notes[i].text);
            if (n < 0 || (size_t)n >= size - used)
                break;
            used += (size_t)n;
        }
    return used ? buf : NULL;
}

static json_t *params_to_json(const calibration *cal, const calibration_fit *fit) {
    json_t *params = json_object();
    for (int i = 0; params && i < PARAM_COUNT; i++) {
        const param_row *r = param_info((param_id)i);
        const double value = param_get(&cal->params, (param_id)i), se = param_se_get(&cal->stderr_, (param_id)i);
        if (r->required < 0 && value == 0 && !(se > 0))
            continue; /* a cluster's term this calibration has not: the file stays a host's */
        json_t *entry = json_object();
        if (set_new(entry, "value", json_real(value)) || set_new(entry, "stderr", number_or_null(se)) ||
            set_new(entry, "unit", json_string(r->unit))) {
            json_decref(entry);
            json_decref(params);
            return NULL;
        }
        char joined[CALIBRATION_MAX_NOTES * sizeof fit->notes[0].text];
        const char *note = fit_note(fit, r->name, joined, sizeof joined);
        if (!note && se == 0.0)
            note = zero_width_note(r->name, value);
        if ((note && set_new(entry, "note", json_string(note))) || set_new(params, r->name, entry)) {
            json_decref(params);
            return NULL;
        }
    }
    return params;
}

/* The "memory" object; NULL out of memory. */
static json_t *memory_to_json(const memory_params *mp) {
    memory_params m = *mp;
    memory_field f[MEMORY_FIELDS];
    memory_fields(&m, f);
    json_t *o = json_object();
    for (int i = 0; o && i < MEMORY_FIELDS; i++) {
        json_t *entry = json_object();
        if (set_new(entry, "value", json_real(*f[i].value)) ||
            (f[i].se && set_new(entry, "stderr", number_or_null(*f[i].se))) ||
            set_new(entry, "unit", json_string(f[i].unit))) {
            json_decref(entry);
            json_decref(o);
            return NULL;
        }
        if (set_new(o, f[i].name, entry)) { /* it took entry, even failing */
            json_decref(o);
            return NULL;
        }
    }
    if (!o || set_new(o, "sharded_data", json_boolean(m.sharded_data)) ||
        set_new(o, "fit", json_pack("{s:I, s:f, s:f}", "points", (json_int_t)m.points, "rms_bytes",
                                    isfinite(m.rms_bytes) ? m.rms_bytes : 0.0, "worst_rel_error",
                                    isfinite(m.worst_rel_error) ? m.worst_rel_error : 0.0))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *run_to_json(const calibration_run *r) {
    char sync[24];
    const job_config *c = &r->config;
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    json_t *o = json_pack("{s:s, s:i, s:i, s:s, s:s, s:s, s:I, s:I, s:i, s:b}", "trace", r->trace,
                          "workers", c->workers, "cores", c->cores, "sync", sync,
                          "topology", job_topology_name(c->topology), "master", job_master_name(c->master),
                          "examples", (json_int_t)c->examples, "batch", (json_int_t)c->batch, "epochs", c->epochs,
                          "batch_per_worker", c->batch_per_worker);
    if (!o || set_new(o, "measured_s", number_or_null(r->measured_s)) ||
        set_new(o, "loo_model_s", number_or_null(r->loo_model_s)) ||
        set_new(o, "loo_ernest_s", number_or_null(r->loo_ernest_s)) ||
        (r->loo_note[0] && set_new(o, "loo_note", json_string(r->loo_note)))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *errors_to_json(double median, double worst) {
    json_t *o = json_object();
    if (set_new(o, "median_rel_error", number_or_null(median)) || set_new(o, "worst_rel_error", number_or_null(worst))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *reals(const double *v, int n) {
    json_t *a = json_array();
    for (int i = 0; a && i < n; i++)
        if (json_array_append_new(a, number_or_null(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* Adds "runs", "fit" and "validation" to root. */
static int fit_to_json(json_t *root, const calibration_fit *fit) {
    json_t *runs = json_array();
    if (set_new(root, "runs", runs))
        return -1;
    for (int i = 0; i < fit->n_runs; i++)
        if (json_array_append_new(runs, run_to_json(&fit->runs[i])))
            return -1;
    json_t *f = json_object(), *regs = json_array();
    if (set_new(root, "fit", f) || set_new(f, "regressions", regs))
        return -1;
    for (int i = 0; i < fit->n_regressions; i++) {
        const calibration_regression *r = &fit->regressions[i];
        if (json_array_append_new(regs, json_pack("{s:s, s:s, s:I, s:i, s:f, s:I}", "name", r->name, "method",
                                                  r->method, "points", (json_int_t)r->points, "dof", r->dof,
                                                  "rms_s", isfinite(r->rms_s) ? r->rms_s : 0.0, "outliers",
                                                  (json_int_t)r->outliers)))
            return -1;
    }
    if (fit->has_ernest) {
        json_t *e = json_object();
        if (set_new(f, "ernest", e) ||
            set_new(e, "form", json_string("T = theta0 + theta1*work/K + theta2*log2(K) + theta3*K; "
                                           "K = workers*cores, work = epochs*examples")) ||
            set_new(e, "theta", reals(fit->ernest_theta, 4)) || set_new(e, "stderr", reals(fit->ernest_stderr, 4)))
            return -1;
    }
    if (fit->has_verdict &&
        set_new(root, "verdict", json_pack("{s:s, s:s}", "quality", fit->verdict_poor ? "poor" : "good",
                                           "text", fit->verdict)))
        return -1;
    json_t *v = json_object();
    if (set_new(root, "validation", v) || set_new(v, "method", json_string("leave-one-configuration-out")) ||
        set_new(v, "configurations", json_integer(fit->loo_configs)) ||
        set_new(v, "runs", json_integer(fit->loo_model_n)) ||
        set_new(v, "model", errors_to_json(fit->loo_model_median, fit->loo_model_worst)) ||
        set_new(v, "runs_ernest", json_integer(fit->loo_ernest_n)) ||
        set_new(v, "ernest", errors_to_json(fit->loo_ernest_median, fit->loo_ernest_worst)))
        return -1;
    if (fit->n_families == 0)
        return 0;
    json_t *fams = json_array();
    if (set_new(v, "families", fams))
        return -1;
    for (int i = 0; i < fit->n_families; i++) {
        const calibration_family *fm = &fit->families[i];
        json_t *o = json_pack("{s:s, s:i, s:i, s:i}", "family", fm->name, "runs", fm->runs, "configurations",
                              fm->configs, "predicted", fm->predicted);
        if (!o || json_array_append_new(fams, o))
            return -1;
        if (fm->predicted > 0 && (set_new(o, "model", errors_to_json(fm->median, fm->worst)) ||
                                  set_new(o, "median_signed", json_real(fm->bias))))
            return -1;
        if (fm->note[0] && set_new(o, "note", json_string(fm->note)))
            return -1;
    }
    return 0;
}

int calibration_write(const char *path, const calibration *cal, const calibration_fit *fit, char *err, int errlen) {
    /* Never write a file calibration_read would refuse (a NaN fit, a negative cost). */
    job_config any = costmodel_config_seed_example();
    char why[160];
    if (costmodel_check(&cal->params, &any, why, sizeof why))
        return errmsg_set(err, errlen, "%s: not written: %s", path, why);
    json_t *root = json_pack("{s:s, s:i, s:{s:s, s:i}}", "format", CALIBRATION_FORMAT, "version", CALIBRATION_VERSION,
                             "host", "name", cal->host, "cores", (int)cal->params.host_cores);
    int bad = !root || set_new(root, "params", params_to_json(cal, fit)) ||
              set_new(root, "cov_c0_c1", json_real(isfinite(cal->cov_c0_c1) ? cal->cov_c0_c1 : 0.0));
    json_t *unc = json_array();
    for (int t = 0; !bad && unc && t < JOB_TOPO_COUNT; t++)
        if (cal->uncalibrated[t])
            bad = json_array_append_new(unc, json_string(job_topology_name((job_topology)t)));
    if (!bad && unc && json_array_size(unc) > 0)
        bad = set_new(root, "uncalibrated_topologies", json_incref(unc));
    bad |= !unc;
    json_decref(unc);
    if (!bad && cal->sigma_unmeasured)
        bad = set_new(root, "unmeasured", json_pack("[s]", "sigma"));
    if (!bad && cal->source[0])
        bad = set_new(root, "source", json_string(cal->source));
    if (!bad && cal->range_workers > 0)
        bad = set_new(root, "range", json_pack("{s:i, s:i}", "workers", cal->range_workers, "machines",
                                               cal->range_machines > 0 ? cal->range_machines : 1));
    if (!bad && cal->has_workload)
        bad = set_new(root, "workload", json_pack("{s:I, s:I, s:i}", "examples", (json_int_t)cal->examples,
                                                  "batch", (json_int_t)cal->batch, "epochs", cal->epochs));
    if (!bad && cal->memory.known)
        bad = set_new(root, "memory", memory_to_json(&cal->memory));
    if (!bad && cal->efficiency.known)
        bad = set_new(root, "efficiency", calibration_efficiency_to_json(&cal->efficiency));
    if (!bad && cal->network.known)
        bad = set_new(root, "network", calibration_network_to_json(&cal->network));
    if (!bad && fit)
        bad = fit_to_json(root, fit);
    if (bad) {
        json_decref(root);
        return errmsg_set(err, errlen, "%s: out of memory while building the calibration", path);
    }
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f) {
        json_decref(root);
        return -1;
    }
    errno = 0;
    int rc = json_dumpf(root, atomicfile_stream(f), JSON_INDENT(2) | JSON_REAL_PRECISION(17) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc || fputc('\n', atomicfile_stream(f)) == EOF) {
        const int why = errno ? errno : EIO; // the failed write's (a full disk: ENOSPC)
        atomicfile_abort(f);
        return errmsg_set(err, errlen, "%s: write failed: %s", path, strerror(why));
    }
    return atomicfile_commit(f, err, errlen);
}

bool calibration_beyond_range(int range_workers, int range_machines, int workers, int machines) {
    return range_workers > 0 && (workers > range_workers || machines > range_machines);
}
