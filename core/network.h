/* network — what a network costs, layer by layer (Paleo, ICLR 2017): each layer's kind and
 * its work, shared by the trainer (which times every layer), the fit (which turns the times
 * into this host's rates per kind) and the model (which prices another network with them).
 *
 * A layer's work, forward and backward together:
 *   flops       floating-point operations per example (a multiply-add counts 2; backward
 *               twice the forward: the weights' gradient and the input's), conv and fc;
 *   bytes       bytes its passes move per example (activations; a conv's im2col matrix,
 *               written and read);
 *   step_bytes  bytes it moves once a step whatever the batch (its weights, read by the
 *               forward and twice by the backward).
 * Kinds: conv (a relu right after it is fused into it, and then a layer of no work), fc,
 * elementwise (relu, dropout), pool. A layer of no work costs nothing: no rate applies to
 * it. What is in no layer (the loss, the optimizer's update, the step's framework) is the
 * step's rest, measured whole.
 */
#ifndef SPEEDUP_CORE_NETWORK_H
#define SPEEDUP_CORE_NETWORK_H

typedef enum { NETWORK_CONV, NETWORK_FC, NETWORK_ELEMENTWISE, NETWORK_POOL, NETWORK_KINDS } network_kind;

enum { NETWORK_MAX_LAYERS = 64 };

/* A layer's shape, where known: its input and output channels (an fc's inputs and
 * outputs), its output positions per example (h·w; 1 for an fc) and its kernel's side (1
 * but for conv and pool). The trainer's plan knows it (train/net.h's net_cost_of); traces
 * and calibration.json carry the work only, and read back 0: not known. */
typedef struct {
    int channels_in, channels_out, kernel;
    long positions;
} network_shape;

typedef struct {
    network_kind kind;
    double flops, bytes, step_bytes;  /* see above */
    network_shape shape;
} network_layer;

typedef struct {
    int n;
    network_layer layer[NETWORK_MAX_LAYERS];
    long params;                  /* parameters: the model bytes are 4 times */
} network_cost;

/* The layer does no work of its own (a relu fused into its conv, a dropout of 0). */
static inline int network_layer_idle(const network_layer *l) {
    return !(l->flops > 0) && !(l->bytes > 0) && !(l->step_bytes > 0);
}

/* Are a and b alike: the same kind, both shapes known, and each of their channels in and
 * out, positions and kernel within a factor of 2 of the other's? A kind's rate measured on
 * one prices the other as the calibration measured it; how fast a kernel runs changes with
 * its shape beyond that (convolutions of 6 channels ran at a third to half the rate per
 * FLOP of those of 32: docs/networks.md, "Layers unlike the measured ones"). */
int network_layers_alike(const network_layer *a, const network_layer *b);

const char *network_kind_name(network_kind k);   /* "conv", "fc", "elementwise", "pool" */
int network_kind_parse(const char *s, network_kind *out);

#endif
