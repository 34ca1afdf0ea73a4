/* network — the names of the layer kinds, and when two layers are alike (network.h). */
#include "core/network.h"

#include <string.h>

static const char *const names[NETWORK_KINDS] = { "conv", "fc", "elementwise", "pool" };

/* Within a factor of 2 either way; both known (> 0). */
static int near(double a, double b) { return a > 0 && b > 0 && a <= 2 * b && b <= 2 * a; }

int network_layers_alike(const network_layer *a, const network_layer *b) {
    const network_shape *x = &a->shape, *y = &b->shape;
    return a->kind == b->kind && near(x->channels_in, y->channels_in) && near(x->channels_out, y->channels_out) &&
           near((double)x->positions, (double)y->positions) && near(x->kernel, y->kernel);
}

const char *network_kind_name(network_kind k) { return k >= 0 && k < NETWORK_KINDS ? names[k] : "?"; }

int network_kind_parse(const char *s, network_kind *out) {
    for (int k = 0; k < NETWORK_KINDS; k++)
        if (strcmp(s, names[k]) == 0) {
            *out = (network_kind)k;
            return 0;
        }
    return -1;
}
