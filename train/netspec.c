/* netspec — a strict parser: every token must match in full, numbers included. */
#include "train/netspec.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *netspec_kind_name(layer_kind k) {
    switch (k) {
    case LAYER_CONV: return "conv";
    case LAYER_RELU: return "relu";
    case LAYER_POOL: return "pool";
    case LAYER_FC: return "fc";
    case LAYER_DROPOUT: return "dropout";
    }
    return "?";
}

/* A decimal int in [lo, hi] at *s; advances *s past it. */
static int take_int(const char **s, int lo, int hi, int *out) {
    if (**s < '0' || **s > '9')
        return -1;
    errno = 0;
    char *end;
    long v = strtol(*s, &end, 10);
    if (errno || v < lo || v > hi)
        return -1;
    *s = end;
    *out = (int)v;
    return 0;
}

static int parse_token(const char *t, netspec_layer *l) {
    memset(l, 0, sizeof *l);
    if (strcmp(t, "relu") == 0) {
        l->kind = LAYER_RELU;
        return 0;
    }
    const char *s;
    if (strncmp(t, "conv", 4) == 0) {
        s = t + 4;
        int k1, k2;
        l->kind = LAYER_CONV;
        if (take_int(&s, 1, 15, &k1) || *s++ != 'x' || take_int(&s, 1, 15, &k2) || *s++ != 'x' ||
            take_int(&s, 1, 4096, &l->out) || *s || k1 != k2 || k1 % 2 == 0)
            return -1;
        l->k = k1;
        return 0;
    }
    if (strncmp(t, "pool", 4) == 0) {
        s = t + 4;
        l->kind = LAYER_POOL;
        return take_int(&s, 2, 8, &l->k) || *s ? -1 : 0;
    }
    if (strncmp(t, "fc", 2) == 0) {
        s = t + 2;
        l->kind = LAYER_FC;
        return take_int(&s, 1, 65536, &l->out) || *s ? -1 : 0;
    }
    if (strncmp(t, "dropout", 7) == 0) {
        s = t + 7;
        l->kind = LAYER_DROPOUT;
        if ((*s < '0' || *s > '9') && *s != '.')
            return -1;
        errno = 0;
        char *end;
        double p = strtod(s, &end);
        if (errno || *end || !(p >= 0.0 && p < 1.0))
            return -1;
        l->p = (float)p;
        return 0;
    }
    return -1;
}

int netspec_parse(const char *text, netspec *out, char *err, int errlen) {
    memset(out, 0, sizeof *out);
    const char *s = text;
    int index = 1;
    for (;;) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        char tok[64];
        int ok = len > 0 && len < sizeof tok;
        if (ok) {
            memcpy(tok, s, len);
            tok[len] = '\0';
        } else {
            snprintf(tok, sizeof tok, "%.*s", (int)(len < 40 ? len : 40), s);
        }
        if (ok && out->n >= NETSPEC_MAX_LAYERS) {
            snprintf(err, (size_t)errlen, "token %d '%s' (character %ld): more than %d layers", index,
                     tok, (long)(s - text) + 1, NETSPEC_MAX_LAYERS);
            return -1;
        }
        if (!ok || parse_token(tok, &out->layers[out->n])) {
            snprintf(err, (size_t)errlen,
                     "token %d '%s' (character %ld): expected convKxKxO (K odd), relu, poolP, fcN or "
                     "dropoutP (0 <= P < 1)",
                     index, tok, (long)(s - text) + 1);
            return -1;
        }
        out->n++;
        if (!comma)
            return 0;
        s = comma + 1;
        index++;
    }
}

int netspec_equal(const netspec *a, const netspec *b) {
    if (a->n != b->n)
        return 0;
    for (int i = 0; i < a->n; i++) {
        const netspec_layer *x = &a->layers[i], *y = &b->layers[i];
        // parse_token zeroes every layer first, so unused fields compare equal.
        if (x->kind != y->kind || x->k != y->k || x->out != y->out || x->p != y->p)
            return 0;
    }
    return 1;
}
