/* net — a CNN built from a netspec: its parameters, gradients and momentum each in ONE
 * contiguous block of n_params floats (llm.c's malloc_and_point_parameters), so saving,
 * loading, or averaging over MPI ranks is one call on one buffer; all activation and
 * workspace buffers sized once for max_batch, so a training step allocates nothing.
 *
 * A step, for a local batch of `count` ≤ max_batch examples:
 *   dataset_batch(..., net_input(n), labels);       // (count, H, W, C)
 *   loss = net_forward(n, count, labels, 1, d);     // Σ loss / d
 *   net_backward(n, count, labels, d);              // grads = ∂(Σ loss / d)/∂params
 *   (MPI: sum grads over ranks here, with d = the global batch)
 *   net_update(n, lr, momentum, weight_decay);      // SGD, PyTorch's convention
 * Threads: as many as omp_get_max_threads() when net_new ran (set it first).
 * The last layer must be fc with as many units as there are classes; softmax
 * cross-entropy follows it implicitly.
 */
#ifndef SPEEDUP_NET_H
#define SPEEDUP_NET_H

#include "core/network.h"
#include "train/conv_dnnl.h"
#include "train/netspec.h"

#include <gsl/gsl_rng.h>
#include <stdint.h>

typedef struct {
    netspec_layer spec;
    int h, w, c;         /* input shape (per example) */
    int oh, ow, oc;      /* output shape */
    long w_off, b_off;   /* offsets of weights and bias in the parameter block; -1 if none */
    long n_w;            /* weight count: conv (O, K, K, C), fc (O, I) */
    float *in;           /* (B, h, w, c), the previous layer's out (not owned) */
    float *out;          /* (B, oh, ow, oc); relu and dropout work in place: out == in */
    float *col;          /* conv: im2col workspace, a chunk of images per thread */
    float *ws;           /* conv: other threads' partial dw, db (conv_workspace_floats) */
    conv_dnnl *dnnl;     /* conv: oneDNN's passes; NULL where it has none fast here (then col, ws) */
    int relu_fused;      /* conv followed by relu: the conv applies it (and its backward) */
    float *mask;         /* dropout: (B, oh·ow·oc) of 0 or 1/(1-p) */
} net_layer;

typedef struct {
    char spec_text[512];
    netspec spec;
    int h, w, c, classes, max_batch;
    int threads;             /* omp_get_max_threads() when built: the most a pass uses */
    float in_mean, in_std;   /* input normalisation, saved with the weights */
    int n_layers;
    net_layer layers[NETSPEC_MAX_LAYERS];
    long n_params;
    float *params;           /* (n_params) one block, every layer's w then b */
    float *grads;            /* (n_params) same layout */
    float *momentum;         /* (n_params) same layout */
    float *input;            /* (max_batch, h, w, c) */
    float *probs;            /* (max_batch, classes) */
    float *dbuf[2];          /* activation-gradient ping-pong, each (max_batch, largest layer) */
    gsl_rng *dropout_rng;
    unsigned long dropout_seed;  /* the masks' key, with each example's position */
    long dropout_pos;        /* position (in the epoch's order) of the next batch's first example */
    double layer_s[NETWORK_MAX_LAYERS]; /* training passes' time in each layer so far (a fused
                                     relu in its conv's), for the per-kind rates (core/network.h) */
} net;

/* The most floats a network's buffers may take (16 GiB): a spec and shape asking for more
 * is refused before anything is allocated. */
#define NET_MAX_BUFFER_FLOATS (1L << 32)

/* Builds the network for (h, w, c) inputs and `classes` outputs; params zero until
 * net_init. NULL with the reason in err (bad spec, shapes that do not fit, buffers beyond
 * NET_MAX_BUFFER_FLOATS, memory). */
net *net_new(const char *spec_text, int h, int w, int c, int classes, int max_batch, char *err, int errlen);
/* The network's plan at batch 1 and nothing allocated for its buffers: every layer's shape
 * and n_params, what net_cost_of and net_memory_of read (a checkpoint's parameter count,
 * `--net`'s cost and memory for a network nobody trains here). Nothing that trains or
 * evaluates accepts it. Free with net_free; NULL with the reason in err (bad spec, shapes
 * that do not fit, memory). */
net *net_plan(const char *spec_text, int h, int w, int c, int classes, char *err, int errlen);
void net_free(net *n); /* NULL is a no-op */

/* He initialisation: weights ~ N(0, 2/fan_in), biases 0, momentum 0; from seed. */
void net_init(net *n, unsigned long seed);
/* Dropout masks are a function of (seed, example position, layer) only, never of which
 * rank or thread draws them, so a batch split over K ranks sees the masks one rank would.
 * net_seed_dropout sets the seed (the trainer: per epoch, for --resume) and position 0;
 * net_dropout_at sets the position of the next batch's first example (each training
 * forward then advances it by the batch). */
void net_seed_dropout(net *n, unsigned long seed);
void net_dropout_at(net *n, long position);

float *net_input(net *n);
float net_forward(net *n, int count, const uint8_t *labels, int training, float divisor);
void net_backward(net *n, int count, const uint8_t *labels, float divisor);
void net_update(net *n, float lr, float momentum, float weight_decay);
/* The SGD step net_update takes on each element, on n elements of any blocks: weights p,
 * momentum v, gradients g (a hogwild master's updater applies a received gradient with
 * it: train/asyncps.h). */
void net_sgd(float *p, float *v, const float *g, long n, float lr, float momentum, float weight_decay);
/* After net_forward: how many of the count predictions equal the labels. */
int net_count_correct(const net *n, int count, const uint8_t *labels);

/* zlib's crc32 of the parameter block: the weights' fingerprint (train's and eval's
 * "params_crc32"), equal exactly when the weights are equal bit for bit. */
unsigned long net_params_crc32(const net *n);

/* The bytes a rank's resident set holds for the network's buffers beyond its three
 * parameter-sized blocks, counted as the passes write them (calloc'd pages nobody writes
 * are never resident): model/memory.h's known terms, recorded in the trace header.
 *   fwd    every forward writes (evaluation too): the input, each conv, pool and fc
 *          output, the probabilities — per example of max_batch;
 *   train  what only training writes: dropout masks, and of the two activation-gradient
 *          buffers the part backward writes (each layer's dx, when an earlier layer has
 *          parameters) — per example;
 *   workspace  one thread's im2col chunk at its full size (chunk images, not fewer: an
 *          upper bound when max_batch is smaller);
 *   per_thread each further thread's im2col chunk and partial dw, db. */
typedef struct {
    long fwd_bytes_per_example, train_bytes_per_example;
    long workspace_bytes, workspace_bytes_per_thread;
} net_memory;
net_memory net_memory_of(const net *n);

/* Floating-point operations of one example's forward pass (multiply-adds count 2). */
double net_forward_flops(const net *n);

/* What the network costs layer by layer (core/network.h): both passes. A relu fused into
 * its conv is the conv's (its time is too). */
network_cost net_cost_of(const net *n);

#endif
