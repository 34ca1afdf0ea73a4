/* conv_dnnl — a convolution layer's passes through oneDNN (Debian's libdnnl), the engine
 * behind PyTorch's CPU convolutions: direct, JIT-compiled convolutions for this CPU's ISA
 * instead of layers.c's im2col + sgemm (experiments/bench-train measures the two).
 *
 * Same contract as conv_forward/conv_backward in layers.h: stride 1, "same" zero padding
 * K/2 (K odd), channels-last activations (B, H, W, C) -> (B, H, W, O), weights (O, K, K, C),
 * bias (O), an optional ReLU fused into the forward and its mask into the backward;
 * backward overwrites dw, db and (when not NULL) dx.
 *
 * Threads as in layers.c: each of omp_get_max_threads() (when made) owns a contiguous block
 * of the batch and runs oneDNN on it with one thread; the weights' gradients of the blocks
 * are summed in thread order. So a worker's T threads split its batch, as the cost model's
 * σ says (model/costmodel.h), and every thread's working set is a block's: oneDNN's own
 * threading over a whole batch of 64 on this 2-core VM ran conv2 no faster than one thread.
 * Deterministic for a fixed thread count.
 *
 * One conv_dnnl per conv layer. Each thread builds its primitives the first time it meets
 * a block size (a JIT compilation, milliseconds) and keeps the last few. conv_dnnl_new
 * returns NULL when oneDNN has only its reference (slow, scalar) implementation for the
 * shape on this CPU: the caller then keeps layers.c's path. A pass returns nonzero when
 * oneDNN fails at run time; the caller then runs layers.c's pass, which computes the same.
 */
#ifndef SPEEDUP_CONV_DNNL_H
#define SPEEDUP_CONV_DNNL_H

typedef struct conv_dnnl conv_dnnl;

/* For inputs (H, W, C), O outputs, kernel K; probes the primitives at batch probe_batch. */
conv_dnnl *conv_dnnl_new(int H, int W, int C, int K, int O, int relu, int probe_batch);
void conv_dnnl_free(conv_dnnl *cv);

/* y = relu?(conv(x, w) + bias) for a batch of B. 0 on success. */
int conv_dnnl_forward(conv_dnnl *cv, const float *x, const float *w, const float *bias, float *y, int B);
/* dy (masked in place by y > 0 when y is not NULL) -> dw, db and dx when not NULL. ws holds
 * the other threads' partial dw and db: conv_workspace_floats(K, C, O, threads) of
 * layers.h. 0 on success. */
int conv_dnnl_backward(conv_dnnl *cv, float *dy, const float *x, const float *y, const float *w, float *dw,
                       float *db, float *dx, float *ws, int B);

/* The threads it splits a batch over (omp_get_max_threads() when made). */
int conv_dnnl_threads(const conv_dnnl *cv);

/* oneDNN's name for the forward implementation it chose ("brgconv:avx512_core", …). */
const char *conv_dnnl_impl(const conv_dnnl *cv);

#endif
