/* cluster_spec — a cluster what-if as one flag value: `MxP@RATE[,LATENCY]`, M machines of P
 * cores each joined by a network of RATE (args_bandwidth: 1gbit, 10gbit, 125MB) and
 * LATENCY per message (args_seconds: 50us, 0.1ms; default CLUSTER_SPEC_DEFAULT_LATENCY_S).
 *   --cluster 16x4@10gbit,50us     16 machines of 4 cores on 10 Gbit/s, 50 µs
 * The model places ranks on its machines (model/costmodel.h, costmodel_placement_of).
 */
#ifndef SPEEDUP_CLUSTER_SPEC_H
#define SPEEDUP_CLUSTER_SPEC_H

#include "model/costmodel.h"

/* A typical latency of one MPI message over TCP on a switched Ethernet. */
#define CLUSTER_SPEC_DEFAULT_LATENCY_S 50e-6

typedef struct {
    int machines;            /* M ≥ 1 */
    int cores;               /* P ≥ 1 per machine */
    double rate_bytes_per_s; /* the link's rate */
    double latency_s;        /* per message, on top of the host's own cost */
} cluster_spec;

/* 0, or -1 after printing "speedup: FLAG: expected ..., got 'TEXT'". */
int cluster_spec_parse(const char *flag, const char *text, cluster_spec *out);

/* Makes p describe the cluster: machines, cores per machine, the network link. */
void cluster_spec_apply(const cluster_spec *s, costmodel_params *p);

/* "16 machines x 4 cores, 10 Gbit/s, 50 us" (snprintf's return). */
int cluster_spec_describe(const cluster_spec *s, char *out, int size);

#endif
