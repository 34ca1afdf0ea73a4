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
 * Predicting x from a calibration of network m at a batch of B examples: the whole-step
 * fit (c0 + c1·B) and the layers' (S(m) + E(m)·B) are two fits of the same steps. The
 * layers say how a step splits into its fixed and per-example cost (the bytes an fc layer
 * moves once a step are its weights); the whole step says how much it costs, and a fit of
 * it on a plan whose batches vary little trades c0 against c1 freely (it can put c0 at 0
 * where the layers move their weights every step). So
 *   k = (c0 + c1·B)/(S(m) + E(m)·B),   c0' = k·S(x),   c1' = k·E(x):
 * x's layers at the measured step's level, whichever fit is the higher. What a step spends
 * outside its layers (the loss, the framework) is too small to carry apart (0.1–0.6% of a
 * CNN's step): what tells the two fits apart is their level (the whole step's is the mean
 * step, slow ones included), which grows with the step; carried per example, it priced a
 * small network far over its layers (docs/networks.md). At B, x = m gives back c0 + c1·B;
 * both standard errors scale as the step at B does;
 *   update' = update · params(x)/params(m),
 *   model bytes' = 4 · params(x),
 *   the traffic a step moves (costmodel_allreduce_beta): x's layers' bytes and step bytes,
 * and the prediction carries the transfer's own error: model_cv' = √(model_cv² + τ² + (u·U)²),
 * τ = transfer_cv (what experiments/networks measured transfers between alike layers to
 * miss by), u the share of x's layer time (S(x) + E(x)·B) in layers unlike any of m's
 * (core/network.h's network_layers_alike: a kind's rate measured at other channels,
 * positions or kernel), U = NETCOST_UNLIKE_CV (what such layers missed by).
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

/* The transfer error a calibration states when it has not its own: the log-rms of the
 * transfers experiments/networks measured (docs/networks.md). */
#define NETCOST_DEFAULT_TRANSFER_CV 0.06

/* U of the header: the log-rms of the transfers experiments/networks measured to networks
 * whose layers are all unlike the calibrated one's, over the transfer_cv their alike
 * layers miss by (docs/networks.md, "Layers unlike the measured ones"). */
#define NETCOST_UNLIKE_CV 0.10

/* A layer's price over `examples` examples in `steps` steps by n's rates (what E and S sum;
 * 0 for a layer of no work), before the step's level k. */
double netcost_layer_s(const calibration_network *n, const network_layer *l, double examples, double steps);

/* E(x) and S(x) of the header. */
double netcost_example_s(const calibration_network *n, const network_cost *x);
double netcost_step_s(const calibration_network *n, const network_cost *x);

/* c0', c1' of the header from the measured step's c0, c1 (in place) at a batch of `batch`
 * examples (≥ 1; n known, E(measured) > 0). Returns (c0' + c1'·batch)/(c0 + c1·batch), 1
 * where that step is 0. With target n's own network it moves the whole step's fit to its
 * layers' split, the same at `batch`: what fit/ does with a calibration's c0, c1. */
double netcost_split(const calibration_network *n, const network_cost *target, double batch, double *c0_s,
                     double *c1_s);

/* u of the header, and how many layers it counts. */
typedef struct {
    double share;   /* of target's layer time at the batch asked, in layers alike none measured */
    int unlike;     /* target's layers of work alike none of the measured network's */
    int layers;     /* target's layers of work */
} netcost_unlike;

/* u for target against `measured` (n's network with its shapes: n->cost, read from
 * calibration.json, carries none), its layers priced by n's rates at a batch of `batch`.
 * share 1 where no layer of target has a shape, 0 where its layers cost nothing. */
netcost_unlike netcost_unlike_of(const calibration_network *n, const network_cost *measured,
                                 const network_cost *target, double batch);

/* The sentence that names them for a prediction of spec ("" where none is unlike; outlen ≥ 1). */
void netcost_unlike_describe(const netcost_unlike *u, const char *spec, char *out, int outlen);

/* √(τ² + (u·U)²): the transfer's error (log-sd) at u = unlike_share. */
double netcost_transfer_cv(const calibration_network *n, double unlike_share);

/* Makes p predict target instead of n's network at a batch of `batch` examples (see above),
 * u = unlike_share in [0, 1]. 0, or -1 with the reason in err (no rates: n not known, or
 * E(measured) = 0; batch < 1). */
int netcost_transfer(const calibration_network *n, const network_cost *target, double batch, double unlike_share,
                     costmodel_params *p, double *c0_se, double *c1_se, char *err, int errlen);

#endif
