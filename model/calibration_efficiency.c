/* calibration_efficiency — the "efficiency" object of calibration.json (see the header). */
#include "model/calibration_efficiency.h"

#include "util/errmsg.h"

#include <math.h>
#include <string.h>

/* Each parameter: its name, unit, and the range a file's value must be in. */
typedef enum { RANGE_FINITE, RANGE_POSITIVE, RANGE_NONNEGATIVE, RANGE_PLATEAU } value_range;

static const struct {
    const char *unit;
    value_range range;
} PARAMS[EFFICIENCY_NP] = {
    [EFFICIENCY_PLATEAU] = { "1", RANGE_PLATEAU },   [EFFICIENCY_LOG_X0] = { "ln(epochs)", RANGE_FINITE },
    [EFFICIENCY_POWER] = { "1", RANGE_POSITIVE },    [EFFICIENCY_W] = { "1", RANGE_NONNEGATIVE },
    [EFFICIENCY_GAMMA] = { "1", RANGE_FINITE },      [EFFICIENCY_LOG_HC] = { "ln(steps)", RANGE_FINITE },
    [EFFICIENCY_STALE_COST] = { "1/update", RANGE_FINITE },
};


/* ---------------------------------------------------------------------------------- */
/* Writing */

static json_t *number_or_null(double x) {
    return isfinite(x) ? json_real(x) : json_null();
}

/* Sets key to value in obj (which takes value, even failing): 0, or -1. */
static int put(json_t *obj, const char *key, json_t *value) {
    return value ? json_object_set_new(obj, key, value) : -1;
}

static json_t *params_json(const efficiency_model *m) {
    json_t *params = json_object();
    for (int j = 0; params && j < efficiency_n_params(m); j++) {
        json_t *entry = json_object();
        if (put(entry, "value", json_real(m->theta[j])) ||
            put(entry, "stderr", number_or_null(sqrt(fmax(m->cov[j][j], 0)))) ||
            put(entry, "unit", json_string(PARAMS[j].unit)) || put(entry, "fitted", json_boolean(m->fitted[j])) ||
            (m->at_bound[j] && put(entry, "at_bound", json_true())) || put(params, efficiency_param_name(j), entry)) {
            json_decref(params);
            return NULL;
        }
    }
    return params;
}

static json_t *cov_json(const efficiency_model *m) {
    json_t *rows = json_array();
    for (int a = 0; rows && a < efficiency_n_params(m); a++) {
        json_t *row = json_array();
        for (int b = 0; row && b < efficiency_n_params(m); b++)
            if (json_array_append_new(row, json_real(m->cov[a][b]))) {
                json_decref(row);
                row = NULL;
            }
        if (!row || json_array_append_new(rows, row)) {
            json_decref(rows);
            return NULL;
        }
    }
    return rows;
}

json_t *calibration_efficiency_to_json(const efficiency_model *m) {
    double bn, bse;
    bool infinite;
    efficiency_noise_scale(m, &bn, &bse, &infinite);
    json_t *o = json_object();
    if (!o || put(o, "form", json_string(efficiency_form(m->legacy_log_h))) ||
        put(o, "workload", json_pack("{s:I, s:I, s:i, s:s}", "examples", (json_int_t)m->examples, "batch",
                                     (json_int_t)m->batch, "epochs", m->epochs, "schedule", "cosine")) ||
        put(o, "chance", json_real(m->chance)) || put(o, "params", params_json(m)) || put(o, "cov", cov_json(m)) ||
        put(o, "noise", json_pack("{s:f, s:f}", "sd_test", m->sd_test, "sd_subset", m->sd_subset)) ||
        put(o, "fit", json_pack("{s:I, s:i, s:i, s:f}", "points", (json_int_t)m->points, "runs", m->runs, "dof",
                                m->dof, "staleness_max", m->staleness_max)) ||
        put(o, "b_noise", infinite || !m->fitted[EFFICIENCY_W]
                              ? json_null()
                              : json_pack("{s:f, s:f, s:s}", "value", bn, "stderr", bse, "unit", "example"))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---------------------------------------------------------------------------------- */
/* Reading */

static int read_count(const char *path, json_t *w, const char *key, long *out, char *err, int errlen) {
    json_t *v = json_object_get(w, key);
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        return errmsg_set(err, errlen, "%s: efficiency.workload.%s: expected an integer >= 1", path, key);
    *out = (long)json_integer_value(v);
    return 0;
}

static int read_workload(const char *path, json_t *o, efficiency_model *m, char *err, int errlen) {
    json_t *w = json_object_get(o, "workload");
    long epochs = 0;
    if (!json_is_object(w))
        return errmsg_set(err, errlen, "%s: efficiency.workload: missing or not an object", path);
    if (read_count(path, w, "examples", &m->examples, err, errlen) ||
        read_count(path, w, "batch", &m->batch, err, errlen) || read_count(path, w, "epochs", &epochs, err, errlen))
        return -1;
    if (epochs > 1000000)
        return errmsg_set(err, errlen, "%s: efficiency.workload.epochs: expected at most 1000000", path);
    m->epochs = (int)epochs;
    json_t *schedule = json_object_get(w, "schedule");
    if (schedule && (!json_is_string(schedule) || strcmp(json_string_value(schedule), "cosine") != 0))
        return errmsg_set(err, errlen, "%s: efficiency.workload.schedule: expected \"cosine\" (the only schedule "
                          "fitted)", path);
    return 0;
}

/* A number of o named key, finite and >= 0: 0, or -1 naming efficiency.WHERE.key. */
static int read_sd(const char *path, json_t *o, const char *where, const char *key, double *out, char *err,
                   int errlen) {
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v) || !isfinite(json_number_value(v)) || json_number_value(v) < 0)
        return errmsg_set(err, errlen, "%s: efficiency.%s%s: expected a finite number >= 0", path, where, key);
    *out = json_number_value(v);
    return 0;
}

static int read_params(const char *path, json_t *o, efficiency_model *m, char *err, int errlen) {
    json_t *params = json_object_get(o, "params");
    if (!json_is_object(params))
        return errmsg_set(err, errlen, "%s: efficiency.params: missing or not an object", path);
    /* Written before H_c: the ln H form, five parameters; before β: six, β = 0 (efficiency.h). */
    m->legacy_log_h = json_object_get(params, efficiency_param_name(EFFICIENCY_LOG_HC)) == NULL;
    m->pre_stale = m->legacy_log_h || json_object_get(params, efficiency_param_name(EFFICIENCY_STALE_COST)) == NULL;
    for (int j = 0; j < efficiency_n_params(m); j++) {
        const char *name = efficiency_param_name(j);
        json_t *entry = json_object_get(params, name), *v = json_object_get(entry, "value");
        if (!json_is_object(entry))
            return errmsg_set(err, errlen, "%s: efficiency.params.%s: missing or not an object {\"value\": ...}",
                              path, name);
        if (!json_is_number(v))
            return errmsg_set(err, errlen, "%s: efficiency.params.%s.value: expected a number", path, name);
        const double x = json_number_value(v);
        const char *want = NULL;
        switch (PARAMS[j].range) {
        case RANGE_FINITE: want = isfinite(x) ? NULL : "a finite number"; break;
        case RANGE_POSITIVE: want = isfinite(x) && x > 0 ? NULL : "a finite number > 0"; break;
        case RANGE_NONNEGATIVE: want = isfinite(x) && x >= 0 ? NULL : "a finite number >= 0"; break;
        case RANGE_PLATEAU: want = isfinite(x) && x > m->chance && x <= 1 ? NULL : "an accuracy in (chance, 1]"; break;
        }
        if (want)
            return errmsg_set(err, errlen, "%s: efficiency.params.%s.value: expected %s, got %g", path, name, want, x);
        m->theta[j] = x;
        json_t *fitted = json_object_get(entry, "fitted");
        if (fitted && !json_is_boolean(fitted))
            return errmsg_set(err, errlen, "%s: efficiency.params.%s.fitted: expected true or false", path, name);
        m->fitted[j] = !fitted || json_is_true(fitted);
        json_t *at_bound = json_object_get(entry, "at_bound");
        if (at_bound && !json_is_boolean(at_bound))
            return errmsg_set(err, errlen, "%s: efficiency.params.%s.at_bound: expected true or false", path, name);
        m->at_bound[j] = json_is_true(at_bound);
    }
    return 0;
}

static int read_cov(const char *path, json_t *o, efficiency_model *m, char *err, int errlen) {
    json_t *cov = json_object_get(o, "cov");
    const int np = efficiency_n_params(m);
    if (!json_is_array(cov) || json_array_size(cov) != (size_t)np)
        return errmsg_set(err, errlen, "%s: efficiency.cov: expected %d rows of %d numbers", path, np, np);
    for (int a = 0; a < np; a++) {
        json_t *row = json_array_get(cov, (size_t)a);
        if (!json_is_array(row) || json_array_size(row) != (size_t)np)
            return errmsg_set(err, errlen, "%s: efficiency.cov[%d]: expected %d numbers", path, a, np);
        for (int b = 0; b < np; b++) {
            json_t *v = json_array_get(row, (size_t)b);
            if (!json_is_number(v) || !isfinite(json_number_value(v)))
                return errmsg_set(err, errlen, "%s: efficiency.cov[%d][%d]: expected a finite number", path, a, b);
            m->cov[a][b] = json_number_value(v);
        }
        if (m->cov[a][a] < 0)
            return errmsg_set(err, errlen, "%s: efficiency.cov[%d][%d]: a variance, expected >= 0, got %g", path, a,
                              a, m->cov[a][a]);
    }
    for (int a = 0; a < np; a++)
        for (int b = 0; b < a; b++)
            if (fabs(m->cov[a][b] - m->cov[b][a]) > 1e-9 * (fabs(m->cov[a][b]) + fabs(m->cov[b][a])) + 1e-300)
                return errmsg_set(err, errlen, "%s: efficiency.cov[%d][%d]: expected the symmetric entry's %g, got %g",
                                  path, a, b, m->cov[b][a], m->cov[a][b]);
    return 0;
}

int calibration_efficiency_read(const char *path, json_t *o, efficiency_model *m, char *err, int errlen) {
    memset(m, 0, sizeof *m);
    if (!json_is_object(o))
        return errmsg_set(err, errlen, "%s: efficiency: expected an object", path);
    json_t *chance = json_object_get(o, "chance");
    if (!json_is_number(chance) || !(json_number_value(chance) >= 0 && json_number_value(chance) < 1))
        return errmsg_set(err, errlen, "%s: efficiency.chance: expected a number in [0, 1)", path);
    m->chance = json_number_value(chance);
    json_t *noise = json_object_get(o, "noise");
    if (!json_is_object(noise))
        return errmsg_set(err, errlen, "%s: efficiency.noise: missing or not an object", path);
    if (read_workload(path, o, m, err, errlen) || read_params(path, o, m, err, errlen) ||
        read_cov(path, o, m, err, errlen) || read_sd(path, noise, "noise.", "sd_test", &m->sd_test, err, errlen) ||
        read_sd(path, noise, "noise.", "sd_subset", &m->sd_subset, err, errlen))
        return -1;
    json_t *fit = json_object_get(o, "fit");
    m->points = (long)json_integer_value(json_object_get(fit, "points"));
    m->runs = (int)json_integer_value(json_object_get(fit, "runs"));
    m->dof = (int)json_integer_value(json_object_get(fit, "dof"));
    /* Absent before β; a β fitted needs it (else every stale prediction would be refused). */
    json_t *tau_max = json_object_get(fit, "staleness_max");
    if (tau_max && (!json_is_number(tau_max) || !(json_number_value(tau_max) >= 0)))
        return errmsg_set(err, errlen, "%s: efficiency.fit.staleness_max: expected a number >= 0", path);
    if (!tau_max && m->fitted[EFFICIENCY_STALE_COST] && !m->pre_stale)
        return errmsg_set(err, errlen, "%s: efficiency.fit.staleness_max: missing, and stale_cost is fitted: "
                          "expected the largest mean staleness of the fitted runs", path);
    m->staleness_max = tau_max ? json_number_value(tau_max) : 0;
    m->known = true;
    return 0;
}
