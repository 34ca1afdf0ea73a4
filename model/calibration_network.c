/* calibration_network — the "network" object of calibration.json (see the header). */
#include "model/calibration_network.h"

#include "util/errmsg.h"
#include "util/jsonout.h"

#include <math.h>
#include <string.h>

static const char *const rate_key[4] = { "s_per_flop", "s_per_byte", "s_per_step_byte", "s_per_layer_step" };
static const char *const layer_key[3] = { "flops", "bytes", "step_bytes" };

static double *rate_field(netcost_rates *r, int j) {
    double *f[4] = { &r->s_per_flop, &r->s_per_byte, &r->s_per_step_byte, &r->s_per_layer_step };
    return f[j];
}

static double *layer_field(network_layer *l, int j) {
    double *f[3] = { &l->flops, &l->bytes, &l->step_bytes };
    return f[j];
}

json_t *calibration_network_to_json(const calibration_network *n) {
    json_t *rates = json_object(), *layers = json_array();
    int bad = !rates || !layers;
    for (int k = 0; !bad && k < NETWORK_KINDS; k++) {
        json_t *r = json_object();
        netcost_rates copy = n->rate[k];
        for (int j = 0; r && !bad && j < 4; j++)
            bad = json_object_set_new(r, rate_key[j], json_real(*rate_field(&copy, j)));
        bad = bad || !r || json_object_set_new(rates, network_kind_name((network_kind)k), r);
    }
    for (int i = 0; !bad && i < n->cost.n; i++) {
        const network_layer *l = &n->cost.layer[i];
        bad = json_array_append_new(layers, json_pack("{s:s, s:f, s:f, s:f}", "kind", network_kind_name(l->kind),
                                                      "flops", l->flops, "bytes", l->bytes, "step_bytes",
                                                      l->step_bytes));
    }
    if (bad) {
        json_decref(rates), json_decref(layers);
        return NULL;
    }
    return json_pack("{s:s, s:[i,i,i,i], s:I, s:f, s:o, s:o}", "spec", n->spec, "input", n->input[0], n->input[1],
                     n->input[2], n->input[3], "params", (json_int_t)n->cost.params, "transfer_cv", n->transfer_cv,
                     "rates", rates, "layers", layers);
}

/* o's key as a finite number >= 0 into *v: 0, or -1 naming where (prefix.key). */
static int read_amount(const char *path, json_t *o, const char *prefix, const char *key, double *v, char *err,
                       int errlen) {
    json_t *x = json_object_get(o, key);
    if (!json_is_number(x) || !(json_number_value(x) >= 0) || !isfinite(json_number_value(x)))
        return errmsg_set(err, errlen, "%s: %s.%s: expected a finite number >= 0", path, prefix, key);
    *v = json_number_value(x);
    return 0;
}

static int read_rates(const char *path, json_t *o, calibration_network *n, char *err, int errlen) {
    for (int k = 0; k < NETWORK_KINDS; k++) {
        char where[64];
        snprintf(where, sizeof where, "network.rates.%s", network_kind_name((network_kind)k));
        json_t *r = json_object_get(o, network_kind_name((network_kind)k));
        if (!json_is_object(r))
            return errmsg_set(err, errlen, "%s: %s: expected an object of four rates", path, where);
        for (int j = 0; j < 4; j++)
            if (read_amount(path, r, where, rate_key[j], rate_field(&n->rate[k], j), err, errlen))
                return -1;
    }
    return 0;
}

static int read_layers(const char *path, json_t *a, calibration_network *n, char *err, int errlen) {
    if (!json_is_array(a) || json_array_size(a) < 1 || json_array_size(a) > NETWORK_MAX_LAYERS)
        return errmsg_set(err, errlen, "%s: network.layers: expected an array of 1 to %d layers", path,
                          NETWORK_MAX_LAYERS);
    n->cost.n = (int)json_array_size(a);
    for (int i = 0; i < n->cost.n; i++) {
        json_t *l = json_array_get(a, (size_t)i), *kind = json_object_get(l, "kind");
        char where[64];
        snprintf(where, sizeof where, "network.layers[%d]", i);
        if (!json_is_string(kind) || network_kind_parse(json_string_value(kind), &n->cost.layer[i].kind))
            return errmsg_set(err, errlen, "%s: %s.kind: expected conv, fc, elementwise or pool", path, where);
        for (int j = 0; j < 3; j++)
            if (read_amount(path, l, where, layer_key[j], layer_field(&n->cost.layer[i], j), err, errlen))
                return -1;
    }
    return 0;
}

int calibration_network_read(const char *path, json_t *o, calibration_network *n, char *err, int errlen) {
    memset(n, 0, sizeof *n);
    json_t *spec = json_object_get(o, "spec"), *input = json_object_get(o, "input");
    json_t *params = json_object_get(o, "params");
    if (!json_is_object(o) || !json_is_string(spec) || strlen(json_string_value(spec)) >= sizeof n->spec)
        return errmsg_set(err, errlen, "%s: network.spec: expected the network's spec (under %zu characters)", path,
                          sizeof n->spec);
    jsonout_copy(n->spec, sizeof n->spec, json_string_value(spec));
    if (!json_is_array(input) || json_array_size(input) != 4)
        return errmsg_set(err, errlen, "%s: network.input: expected [h, w, c, classes]", path);
    for (size_t i = 0; i < 4; i++) {
        json_t *v = json_array_get(input, i);
        if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65536)
            return errmsg_set(err, errlen, "%s: network.input[%zu]: expected a whole number in [1, 65536]", path, i);
        n->input[i] = (int)json_integer_value(v);
    }
    if (!json_is_integer(params) || json_integer_value(params) < 1)
        return errmsg_set(err, errlen, "%s: network.params: expected a whole number >= 1", path);
    n->cost.params = (long)json_integer_value(params);
    if (read_amount(path, o, "network", "transfer_cv", &n->transfer_cv, err, errlen) ||
        read_rates(path, json_object_get(o, "rates"), n, err, errlen) ||
        read_layers(path, json_object_get(o, "layers"), n, err, errlen))
        return -1;
    n->known = true;
    return 0;
}
