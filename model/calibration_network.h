/* calibration_network — calibration.json's optional "network" object: the network the
 * calibration measured and its layer kinds' rates on this host (model/netcost.h;
 * model/calibration.h's reader and writer call these).
 *
 *   "network": {
 *     "spec": "conv5x16,relu,pool2,...",  (the network measured, train's --net syntax)
 *     "input": [h, w, c, classes],
 *     "params": n,                          (its parameters: model bytes 4·n)
 *     "transfer_cv": t,                     (log-sd of a transfer's error, >= 0)
 *     "rates": {"conv": {"s_per_flop": r, "s_per_byte": r, "s_per_step_byte": r,
 *                        "s_per_layer_step": r}, "fc": {...}, "elementwise": {...}, "pool": {...}},
 *     "layers": [{"kind": "conv", "flops": f, "bytes": b, "step_bytes": s}, ...]
 *   }
 * Every number finite and >= 0; 1 to NETWORK_MAX_LAYERS layers of a known kind; a bad value
 * is refused naming it: "PATH: network.layers[2].kind: expected conv, fc, elementwise or pool".
 */
#ifndef SPEEDUP_CALIBRATION_NETWORK_H
#define SPEEDUP_CALIBRATION_NETWORK_H

#include "model/netcost.h"

#include <jansson.h>

/* The object above; NULL out of memory. */
json_t *calibration_network_to_json(const calibration_network *n);

/* Reads o (calibration.json's "network") of path into *n (known = true): 0, or -1 with
 * the message in err. */
int calibration_network_read(const char *path, json_t *o, calibration_network *n, char *err, int errlen);

#endif
