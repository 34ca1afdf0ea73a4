/* netcost — another network than the one a calibration measured (Paleo, ICLR 2017, with
 * this host's fitted rates): a step's compute priced layer by layer (core/network.h).
 *
 * A calibration of this host's trainer records the network it ran (its spec, its input and
 * every layer's kind and work) and what each layer kind k costs here per unit of work:
 *   s_per_flop[k]        seconds per FLOP of an example,
 *   s_per_byte[k]        seconds per byte an example's passes move,
 *   s_per_step_byte[k]   seconds per byte moved once a step (the weights),
 *   s_per_layer_step[k]  seconds per layer and step (set-up, loop overheads).
 * A network x's layers cost, per example and per step,
 *   E(x) = Σ_layers s_per_flop·flops + s_per_byte·bytes,
 *   S(x) = Σ_layers s_per_step_byte·step_bytes + s_per_layer_step.
 * Predicting x from a calibration of network m keeps what no layer holds (the loss, the
 * update, the step's framework) as measured:
 *   c1' = c1 · (E(x) + r)/(E(m) + r), r = max(0, c1 − E(m))   (= E(x) + c1 − E(m) when c1 ≥ E(m))
 *   c0' = max(0, c0 + S(x) − S(m)),   or where c1 < E(m) and c0 > S(m) (the whole-step
 *         fit moved part of the layers' per-example cost into c0) S(x) + (c0 − S(m))·E(x)/E(m),
 *   update' = update · params(x)/params(m),
 *   model bytes' = 4 · params(x),
 * and the prediction carries the transfer's own error: model_cv' = √(model_cv² + τ²), τ =
 * transfer_cv (what experiments/networks measured such transfers to miss by).
 */
#ifndef SPEEDUP_NETCOST_H
#define SPEEDUP_NETCOST_H

#include "core/network.h"
#include "model/costmodel.h"

#include <stdbool.h>

typedef struct {
    double s_per_flop, s_per_byte, s_per_step_byte, s_per_layer_step;
} netcost_rates;

typedef struct {
    bool known;                   /* the calibration has a "network" */
    char spec[256];               /* the network measured (train's --net syntax) */
    int input[4];                 /* its input h, w, c and classes */
    network_cost cost;            /* its layers' kinds and work, its parameters */
    netcost_rates rate[NETWORK_KINDS];
    double transfer_cv;           /* log-sd of a transfer's error */
} calibration_network;

/* The transfer error a calibration states when it has not its own: experiments/networks
 * measured a median |error| of a few percent and a worst near 10% (docs/networks.md). */
#define NETCOST_DEFAULT_TRANSFER_CV 0.10

/* E(x) and S(x) of the header. */
double netcost_example_s(const calibration_network *n, const network_cost *x);
double netcost_step_s(const calibration_network *n, const network_cost *x);

/* Makes p predict target instead of n's network (see above); *c1_se scales with c1, and
 * *c0_se with the part of c0 that scales with the layers (where c0's excess does).
 * 0, or -1 with the reason in err (no rates: n not known, or E(measured) = 0). */
int netcost_transfer(const calibration_network *n, const network_cost *target, costmodel_params *p,
                     double *c0_se, double *c1_se, char *err, int errlen);

#endif
