/* netfit — this host's cost of each layer kind (model/netcost.h), from the training traces
 * that time their layers (trace/trace.h's "layers").
 *
 * Over the runs at one core per worker whose ranks each have a core (the rates of an idle
 * core), every layer of kind k in every run is one row:
 *   time = s_per_flop·flops·examples + s_per_byte·bytes·examples
 *        + s_per_step_byte·step_bytes·steps + s_per_layer_step·steps,
 * fitted by NNLS (fit/nnls.h) on relative errors (each row divided by its time, so a
 * large layer does not drown a small one). Where the traces record the host's speed
 * (trace_host_speed), a FLOP of conv and fc costs what it costs in the probe's sgemm (the
 * median over the runs of their faster probe), or in the fastest layer of the kind where
 * that ran faster than the probe (oneDNN's convolutions beat OpenBLAS's sgemm), and the
 * other rates are fitted to the rest:
 * with two conv layers a free per-FLOP rate trades off against the per-byte one and
 * prices a wider network's larger products at more than the machine's peak
 * (experiments/networks). A column no layer of the kind has (a pool's
 * FLOPs) is left out and its rate is 0; where the rows cannot tell the columns apart (one
 * layer, one batch size) the per-step columns go first, then the bytes, and a note says
 * which. The network, its input and its layers are the runs' (one network: fit/fit.h
 * refuses others).
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
