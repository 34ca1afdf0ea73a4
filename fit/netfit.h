/* netfit — this host's cost of each layer kind (model/netcost.h), from the training traces
 * that time their layers (trace/trace.h's "layers").
 *
 * Over the runs at one core per worker whose ranks each have a core (the rates of an idle
 * core), every layer of kind k in every run is one row:
 *   time = s_per_flop·flops·examples + s_per_byte·bytes·examples
 *        + s_per_step_byte·step_bytes·steps + s_per_layer_step·steps,
 * fitted by NNLS (fit/nnls.h) on relative errors (each row divided by its time, so a
 * large layer does not drown a small one). A FLOP costs what it costs on the kind's engine,
 * and the other rates are fitted to the rest (with two conv layers a free per-FLOP rate
 * trades off against the per-byte one and prices a wider network's larger products at
 * more than the machine's peak):
 *   fc (OpenBLAS's sgemm, the probe's own kernel): the probe's (trace_host_speed, the
 *     median over the runs of their faster probe). What the probe's moment misses of the
 *     run's goes mostly to fc's weights, in proportion to an fc's FLOPs.
 *   conv (oneDNN's direct convolution): its fastest layer's (in each run the fastest conv's
 *     time per FLOP, the median over the runs). Anchored at the probe, a host phase
 *     slower than the probe went to conv's bytes, whose share of a conv's FLOPs varies
 *     30-fold between layers (experiments/networks).
 * Without a probe, fc too is anchored at its fastest layer. A column no layer of the kind
 * has (a pool's FLOPs) is left out and its rate is 0; where the rows cannot tell the
 * columns apart (one layer, one batch size) the per-step columns go first, then the
 * bytes, and a note says which. The network, its input and its layers are the runs' (one
 * network: fit/fit.h refuses others).
 */
#ifndef SPEEDUP_NETFIT_H
#define SPEEDUP_NETFIT_H

#include "model/netcost.h"
#include "trace/trace.h"

/* Fills *out (transfer_cv: NETCOST_DEFAULT_TRANSFER_CV). Returns 0 fitted (note: "" or what
 * it could not separate), 1 no trace times its layers (out->known false), -1 out of memory
 * or a failed solve (note says which). */
int netfit_traces(trace *const *traces, int n, calibration_network *out, char *note, int notelen);

#endif
