#include "cli/cluster_spec.h"

#include "cli/args.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(const char *flag, const char *text, const char *why) {
    args_error("%s: %s; expected MACHINESxCORES[@RATE[,LATENCY]] such as 16x4@10gbit,50us or 8x4 (the calibrated "
               "fabric), got '%s'", flag, why, text);
    return -1;
}

/* A whole positive int at *p, up to the character stop (or the end when stop_or_end);
 * advances *p past it. */
static int count_before(const char **p, char stop, bool stop_or_end, int *out) {
    char *end = NULL;
    long v = strtol(*p, &end, 10);
    if (end == *p || (*end != stop && !(stop_or_end && *end == '\0')) || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    *p = *end ? end + 1 : end;
    return 0;
}

int cluster_spec_parse(const char *flag, const char *text, cluster_spec *out) {
    const char *p = text;
    cluster_spec s = { .latency_s = CLUSTER_SPEC_DEFAULT_LATENCY_S };
    if (count_before(&p, 'x', false, &s.machines))
        return bad(flag, text, "the number of machines (an integer >= 1, then 'x')");
    if (count_before(&p, '@', true, &s.cores))
        return bad(flag, text, "the cores per machine (an integer >= 1, then '@' or the end)");
    if (*p == '\0' && p[-1] != '@') { /* MxP: the calibrated fabric */
        *out = s;
        return 0;
    }
    char rate[64];
    size_t len = strcspn(p, ",");
    if (len == 0 || len >= sizeof rate)
        return bad(flag, text, "the network's rate after '@'");
    memcpy(rate, p, len);
    rate[len] = '\0';
    if (args_bandwidth(flag, rate, &s.rate_bytes_per_s))
        return -1;
    if (p[len] == ',' && args_latency(flag, p + len + 1, &s.latency_s))
        return -1;
    *out = s;
    return 0;
}

bool cluster_spec_has_rate(const cluster_spec *s) { return s->rate_bytes_per_s > 0; }

void cluster_spec_apply(const cluster_spec *s, costmodel_params *p, calibration_stderr *se) {
    p->machines = s->machines;
    p->host_cores = s->cores;
    se->host_cores = 0;
    if (!cluster_spec_has_rate(s))
        return;
    p->net = (costmodel_link){ .alpha_s = s->latency_s, .beta_s_per_byte = 1.0 / s->rate_bytes_per_s };
    se->net_alpha = 0;
    se->net_beta = CLUSTER_SPEC_NOMINAL_RATE_SE * p->net.beta_s_per_byte;
    /* The nominal rate is the line's too: the busiest link's floor (costmodel_line_floor_time),
     * taken as given (its doubt is drawn once, in net_beta). */
    p->net_line_beta_s_per_byte = p->net.beta_s_per_byte;
    se->net_line_beta = 0;
}

/* "10 Gbit/s" for a rate in bytes per second. */
static void describe_rate(double bytes_per_s, char *out, size_t size) {
    double bits = 8 * bytes_per_s;
    const char *unit = bits >= 1e9 ? "Gbit/s" : bits >= 1e6 ? "Mbit/s" : "kbit/s";
    double scale = bits >= 1e9 ? 1e9 : bits >= 1e6 ? 1e6 : 1e3;
    snprintf(out, size, "%.3g %s", bits / scale, unit);
}

int cluster_spec_describe(const cluster_spec *s, const costmodel_params *p, char *out, int size) {
    char rate[32];
    const char *what = p->worker_device ? (s->cores == 1 ? "GPU" : "GPUs") : "cores";
    if (cluster_spec_has_rate(s)) {
        double bits = 8 * s->rate_bytes_per_s;
        const char *unit = bits >= 1e9 ? "Gbit/s" : bits >= 1e6 ? "Mbit/s" : "kbit/s";
        double scale = bits >= 1e9 ? 1e9 : bits >= 1e6 ? 1e6 : 1e3;
        return snprintf(out, (size_t)size, "%d machine%s x %d %s, %g %s, %g us", s->machines,
                        s->machines == 1 ? "" : "s", s->cores, what, bits / scale, unit, s->latency_s * 1e6);
    }
    const double beta = p->net.beta_s_per_byte;
    if (beta > 0)
        describe_rate(1.0 / beta, rate, sizeof rate);
    else
        snprintf(rate, sizeof rate, "no rate");
    return snprintf(out, (size_t)size, "%d machine%s x %d %s, the calibrated fabric (%s effective, %.3g us)",
                    s->machines, s->machines == 1 ? "" : "s", s->cores, what, rate, p->net.alpha_s * 1e6);
}

int cluster_spec_machines_filled(int per_machine, int workers, int cores) {
    const int per = per_machine > 0 ? per_machine : 1;
    return (workers * cores + per - 1) / per;
}
