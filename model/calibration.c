#include "model/calibration.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int fail(char *err, int errlen, const char *fmt, ...) {
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, (size_t)errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* One required entry of "params": {"value": v, ...}, v finite and ≥ 0. */
static int read_param(const char *path, json_t *params, const char *name, double *value,
                      double *stderr_out, char *err, int errlen) {
    json_t *entry = json_object_get(params, name);
    if (!entry)
        return fail(err, errlen, "%s: params.%s: missing", path, name);
    if (!json_is_object(entry))
        return fail(err, errlen, "%s: params.%s: expected an object {\"value\": ...}", path, name);
    json_t *v = json_object_get(entry, "value");
    if (!v)
        return fail(err, errlen, "%s: params.%s.value: missing", path, name);
    if (!json_is_number(v))
        return fail(err, errlen, "%s: params.%s.value: expected a number", path, name);
    double x = json_number_value(v);
    if (!isfinite(x) || x < 0)
        return fail(err, errlen, "%s: params.%s.value: expected a finite number >= 0, got %g", path, name, x);
    *value = x;
    json_t *e = json_object_get(entry, "stderr");
    *stderr_out = json_is_number(e) ? json_number_value(e) : NAN;
    return 0;
}

static int read_count(const char *path, json_t *obj, const char *name, long *out, char *err, int errlen) {
    json_t *v = json_object_get(obj, name);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return fail(err, errlen, "%s: workload.%s: expected an integer >= 1", path, name);
    *out = (long)json_integer_value(v);
    return 0;
}

static int read_root(const char *path, json_t *root, calibration *out, char *err, int errlen) {
    if (!json_is_object(root))
        return fail(err, errlen, "%s: expected a JSON object at the top", path);
    json_t *format = json_object_get(root, "format");
    if (!json_is_string(format) || strcmp(json_string_value(format), CALIBRATION_FORMAT) != 0)
        return fail(err, errlen, "%s: format: expected \"%s\"", path, CALIBRATION_FORMAT);
    json_t *version = json_object_get(root, "version");
    if (!json_is_integer(version) || json_integer_value(version) != CALIBRATION_VERSION)
        return fail(err, errlen, "%s: version: expected %d", path, CALIBRATION_VERSION);
    json_t *params = json_object_get(root, "params");
    if (!json_is_object(params))
        return fail(err, errlen, "%s: params: missing or not an object", path);

    costmodel_params *p = &out->params;
    calibration_stderr *e = &out->stderr_;
    costmodel_link *ps = &p->link[COSTMODEL_TOPO_PS], *ar = &p->link[COSTMODEL_TOPO_ALLREDUCE];
    struct { const char *name; double *value, *se; } fields[] = {
        { "c0", &p->c0_s, &e->c0_s },
        { "c1", &p->c1_s, &e->c1_s },
        { "sigma", &p->sigma, &e->sigma },
        { "alpha_ps", &ps->alpha_s, &e->alpha_ps },
        { "beta_ps", &ps->beta_s_per_byte, &e->beta_ps },
        { "alpha_allreduce", &ar->alpha_s, &e->alpha_allreduce },
        { "beta_allreduce", &ar->beta_s_per_byte, &e->beta_allreduce },
        { "model_bytes", &p->model_bytes, &e->model_bytes },
        { "w0", &p->w0_s, &e->w0_s },
        { "w1", &p->w1_s, &e->w1_s },
        { "cv", &p->cv, &e->cv },
        { "host_cores", &p->host_cores, &e->host_cores },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (read_param(path, params, fields[i].name, fields[i].value, fields[i].se, err, errlen))
            return -1;
    if (p->sigma > 1)
        return fail(err, errlen, "%s: params.sigma.value: expected a fraction in [0, 1], got %g", path, p->sigma);

    json_t *host = json_object_get(root, "host");
    json_t *name = json_object_get(host, "name");
    snprintf(out->host, sizeof out->host, "%s", json_is_string(name) ? json_string_value(name) : "unknown");

    json_t *workload = json_object_get(root, "workload");
    if (workload) {
        long epochs = 0;
        if (!json_is_object(workload))
            return fail(err, errlen, "%s: workload: expected an object", path);
        if (read_count(path, workload, "examples", &out->examples, err, errlen) ||
            read_count(path, workload, "batch", &out->batch, err, errlen) ||
            read_count(path, workload, "epochs", &epochs, err, errlen))
            return -1;
        out->epochs = (int)epochs;
        out->has_workload = true;
    }
    return 0;
}

int calibration_read(const char *path, calibration *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    json_error_t jerr;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!root) {
        if (jerr.line < 1)
            return fail(err, errlen, "%s: %s", path, jerr.text);
        return fail(err, errlen, "%s: line %d column %d: %s", path, jerr.line, jerr.column, jerr.text);
    }
    int rc = read_root(path, root, out, err, errlen);
    json_decref(root);
    return rc;
}
