/* network — the names of the layer kinds (network.h). */
#include "core/network.h"

#include <string.h>

static const char *const names[NETWORK_KINDS] = { "conv", "fc", "elementwise", "pool" };

const char *network_kind_name(network_kind k) { return k >= 0 && k < NETWORK_KINDS ? names[k] : "?"; }

int network_kind_parse(const char *s, network_kind *out) {
    for (int k = 0; k < NETWORK_KINDS; k++)
        if (strcmp(s, names[k]) == 0) {
            *out = (network_kind)k;
            return 0;
        }
    return -1;
}
