/* layers — forward and backward passes of the CNN's layers on raw float arrays.
 *
 * Dimension letters: B batch, H W height and width, C input channels, O output channels
 * (or units), K kernel side, P pool side. Activations are channels-last (B, H, W, C):
 * the im2col rows are then contiguous runs of C floats, and a convolution's output
 * (B·H·W, O) is exactly the next layer's (B, H, W, O) input, with no transpose.
 *
 * Backward passes overwrite (never accumulate) the parameter gradients and dx. Every
 * function is deterministic for a fixed thread count. Threads: OpenMP only, one parallel
 * region per call in which every thread owns a block of images (or units) and calls
 * single-threaded OpenBLAS on it; small work runs on one thread (a barrier costs more).
 * Nothing allocates: buffers come from the caller (net.c sizes them once).
 */
#ifndef SPEEDUP_LAYERS_H
#define SPEEDUP_LAYERS_H

#include <stdint.h>

/* Convolution, stride 1, "same" zero padding K/2 (K odd): (B, H, W, C) -> (B, H, W, O),
 * followed by ReLU when relu is set. w (O, K, K, C), bias (O). col is the im2col
 * workspace of conv_col_floats(B, H, W, C, K, col_threads) floats: each thread fills it
 * for a cache-sized chunk of images at a time, so it is a few MiB, not (B·H·W, K·K·C). */
void conv_forward(const float *x, const float *w, const float *bias, float *col, float *y,
                  int B, int H, int W, int C, int K, int O, int relu, int col_threads);
/* dy (B, H, W, O) -> dw (O, K, K, C), db (O) and, when dx is not NULL, dx (B, H, W, C);
 * x is the forward's input. When y (the forward output after ReLU) is not NULL, dy is
 * first masked in place by the ReLU (y > 0). ws holds the per-thread partial dw and db of
 * up to ws_threads extra threads (conv_workspace_floats); ws_threads + 1 and col_threads
 * bound the threads this call uses. */
void conv_backward(float *dy, const float *x, const float *y, const float *w, float *col, float *dw, float *db,
                   float *dx, float *ws, int ws_threads, int col_threads, int B, int H, int W, int C, int K,
                   int O);
long conv_col_floats(int B, int H, int W, int C, int K, int threads);
long conv_workspace_floats(int K, int C, int O, int threads);
/* Inside a parallel region of T threads, after a barrier: thread t adds its share of the
 * other threads' partial dw (O·K·K·C = n_w floats) and db, kept in ws as conv_backward
 * keeps them, into dw and db, in thread order (deterministic). conv_dnnl uses it too. */
void conv_sum_partials(float *dw, float *db, const float *ws, long n_w, int O, int t, int T);

/* Dense: x (B, In) -> y (B, O) = x·wᵀ + bias, w (O, In). */
void dense_forward(const float *x, const float *w, const float *bias, float *y, int B, int In, int O);
/* dy (B, O) -> dw (O, In), db (O), dx (B, In) when dx is not NULL. */
void dense_backward(const float *dy, const float *x, const float *w, float *dw, float *db, float *dx,
                    int B, int In, int O);

/* ReLU in place on n floats; backward zeroes dy where y ≤ 0 (in place). */
void relu_forward(float *x, long n);
void relu_backward(const float *y, float *dy, long n);

/* Max-pool P×P, stride P, floor: (B, H, W, C) -> (B, H/P, W/P, C). Backward takes the
 * forward's x and y and gives each window's dy to its first maximal input (dx fully written). */
void maxpool_forward(const float *x, float *y, int B, int H, int W, int C, int P);
void maxpool_backward(const float *dy, const float *x, const float *y, float *dx, int B, int H, int W, int C,
                      int P);

/* Inverted dropout in place: mask[i] is 0 or 1/(1-p), drawn by the caller. */
void dropout_apply(float *x, const float *mask, long n);

/* Softmax cross-entropy over O classes, averaged with divisor d (normally B):
 * logits (B, O), labels (B) -> probs (B, O), returns Σ loss / d; dlogits = (probs - onehot)/d.
 * dlogits may alias logits. */
float softmax_xent_forward(const float *logits, const uint8_t *labels, float *probs, int B, int O, float d);
void softmax_xent_backward(const float *probs, const uint8_t *labels, float *dlogits, int B, int O, float d);

#endif
