#include "cli/cluster_spec.h"

#include "cli/args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *flag, const char *text, const char *why) {
    args_error("%s: %s; expected MACHINESxCORES@RATE[,LATENCY] such as 16x4@10gbit,50us, got '%s'", flag, why,
               text);
    return -1;
}

/* A whole positive int at *p, up to the character stop; advances *p past stop. */
static int count_before(const char **p, char stop, int *out) {
    char *end = NULL;
    long v = strtol(*p, &end, 10);
    if (end == *p || *end != stop || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    *p = end + 1;
    return 0;
}

int cluster_spec_parse(const char *flag, const char *text, cluster_spec *out) {
    const char *p = text;
    cluster_spec s = { .latency_s = CLUSTER_SPEC_DEFAULT_LATENCY_S };
    if (count_before(&p, 'x', &s.machines))
        return bad(flag, text, "the number of machines (an integer >= 1, then 'x')");
    if (count_before(&p, '@', &s.cores))
        return bad(flag, text, "the cores per machine (an integer >= 1, then '@')");
    char rate[64];
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= sizeof rate)
        return bad(flag, text, "the network's rate after '@'");
    memcpy(rate, p, len);
    rate[len] = '\0';
    if (args_bandwidth(flag, rate, &s.rate_bytes_per_s))
        return -1;
    if (p[len] == ',' && args_seconds(flag, p + len + 1, &s.latency_s))
        return -1;
    *out = s;
    return 0;
}

void cluster_spec_apply(const cluster_spec *s, costmodel_params *p) {
    p->machines = s->machines;
    p->host_cores = s->cores;
    p->net = (costmodel_link){ .alpha_s = s->latency_s, .beta_s_per_byte = 1.0 / s->rate_bytes_per_s };
}

int cluster_spec_describe(const cluster_spec *s, char *out, int size) {
    double bits = 8 * s->rate_bytes_per_s;
    const char *unit = bits >= 1e9 ? "Gbit/s" : bits >= 1e6 ? "Mbit/s" : "kbit/s";
    double scale = bits >= 1e9 ? 1e9 : bits >= 1e6 ? 1e6 : 1e3;
    return snprintf(out, (size_t)size, "%d machine%s x %d cores, %g %s, %g us", s->machines,
                    s->machines == 1 ? "" : "s", s->cores, bits / scale, unit, s->latency_s * 1e6);
}
