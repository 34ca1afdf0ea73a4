/* cluster_spec — a cluster what-if as one flag value: `MxP[@RATE[,LATENCY]]`, M machines of
 * P cores (or P devices: P workers that are GPUs, with a calibration of device workers)
 * each, joined by a network of RATE (args_bandwidth: 1gbit, 10gbit, 125MB) and LATENCY per
 * message (args_seconds: 50us, 0.1ms; default CLUSTER_SPEC_DEFAULT_LATENCY_S).
 *   --cluster 16x4@10gbit,50us     16 machines of 4 cores on 10 Gbit/s, 50 µs
 *   --cluster 8x4                  8 machines of 4 on the fabric the calibration measured
 * The model places ranks on its machines (model/costmodel.h, contention_placement_of).
 *
 * A rate given by its nominal value is not a measurement: the fabric's effective rate
 * (what its TCP or RDMA stack reaches for this exchange) is below it by an amount nothing
 * here knows, so the per-byte cost it gives is drawn in the interval with a relative
 * standard error of CLUSTER_SPEC_NOMINAL_RATE_SE. The calibrated fabric keeps the standard
 * errors its fit gave it.
 */
#ifndef SPEEDUP_CLUSTER_SPEC_H
#define SPEEDUP_CLUSTER_SPEC_H

#include "model/costmodel.h"
#include "model/params.h"

#include <stdbool.h>

/* A typical latency of one MPI message over TCP on a switched Ethernet. */
#define CLUSTER_SPEC_DEFAULT_LATENCY_S 50e-6
/* The relative standard error of the per-byte cost a nominal rate gives (see above). */
#define CLUSTER_SPEC_NOMINAL_RATE_SE 0.5

typedef struct {
    int machines;            /* M ≥ 1 */
    int cores;               /* P ≥ 1 per machine */
    double rate_bytes_per_s; /* the link's rate; 0: the calibrated fabric */
    double latency_s;        /* per message, on top of the host's own cost */
} cluster_spec;

/* 0, or -1 after printing "speedup: FLAG: expected ..., got 'TEXT'". */
int cluster_spec_parse(const char *flag, const char *text, cluster_spec *out);

/* Does the spec name its own rate (MxP@RATE), or the calibrated fabric (MxP)? */
bool cluster_spec_has_rate(const cluster_spec *s);

/* Makes p describe the cluster: machines, cores (or devices) per machine, and the network
 * link when the spec gives a rate (its standard errors in se: a nominal rate's, the
 * latency exact); without one, p keeps its calibrated fabric and its standard errors. */
void cluster_spec_apply(const cluster_spec *s, costmodel_params *p, calibration_stderr *se);

/* The machines `workers` workers of `cores` cores (or devices) each fill, per_machine a
 * machine, filling machine 0 first: ⌈workers·cores/per_machine⌉ (per_machine ≤ 0: one a
 * core). What a table of rows or the report's answer counts against the calibrated range. */
int cluster_spec_machines_filled(int per_machine, int workers, int cores);

/* "16 machines x 4 cores, 10 Gbit/s, 50 us"; "8 machines x 4 GPUs, the calibrated fabric
 * (11.8 Gbit/s effective, 20 us)" (snprintf's return). p: the parameters it applies to. */
int cluster_spec_describe(const cluster_spec *s, const costmodel_params *p, char *out, int size);

#endif
