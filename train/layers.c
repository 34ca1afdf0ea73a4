/* layers — the passes. Convolution is im2col into the caller's workspace + one sgemm,
 * with the transposes chosen so no matrix is ever copied into another layout. */
#include "train/layers.h"

#include <cblas.h>
#include <omp.h>
#include <float.h>
#include <math.h>
#include <string.h>

// ----------------------------------------------------------------------------
// threads

/* Work below this many multiply-adds (or elements) runs on one thread: a parallel region
 * costs a barrier, and on a busy machine a barrier can wait a whole scheduler slice. */
#define PARALLEL_MIN_WORK 200000L

/* Threads for a loop over `items` independent items doing `work` in all. */
static int threads_for(long items, double work, int cap) {
    int t = omp_get_max_threads();
    if (t > cap)
        t = cap;
    if (t > items)
        t = (int)items;
    return work < (double)PARALLEL_MIN_WORK || t < 1 ? 1 : t;
}

/* [*lo, *hi) of n items for thread t of nt: contiguous, sizes differ by at most one. */
static void share(long n, int t, int nt, long *lo, long *hi) {
    *lo = n * t / nt;
    *hi = n * (t + 1) / nt;
}

// ----------------------------------------------------------------------------
// convolution

/* One im2col row per output pixel of images [b0, b1), col starting at image b0's: for every kernel row ky the valid
 * kernel columns read one contiguous run of the input row (channels-last), so each
 * (pixel, ky) is one memcpy plus zero padding at the edges. */
static void im2col(const float *x, float *col, int b0, int b1, int H, int W, int C, int K) {
    const int pad = K / 2;
    const long KC = (long)K * C, KKC = (long)K * KC;
    for (long r = (long)b0 * H; r < (long)b1 * H; r++) {
        const int b = (int)(r / H), oy = (int)(r % H);
        for (int ox = 0; ox < W; ox++) {
            float *row = col + ((r - (long)b0 * H) * W + ox) * KKC;
            const int x0 = ox - pad;
            const int lo = x0 < 0 ? -x0 : 0;                 // first valid kx
            const int hi = x0 + K > W ? W - x0 : K;           // one past the last valid kx
            for (int ky = 0; ky < K; ky++) {
                float *dst = row + ky * KC;
                const int iy = oy + ky - pad;
                if (iy < 0 || iy >= H) {
                    memset(dst, 0, sizeof(float) * (size_t)KC);
                    continue;
                }
                if (lo > 0)
                    memset(dst, 0, sizeof(float) * (size_t)(lo * C));
                memcpy(dst + lo * C, x + (((long)b * H + iy) * W + x0 + lo) * C,
                       sizeof(float) * (size_t)((hi - lo) * C));
                if (hi < K)
                    memset(dst + hi * C, 0, sizeof(float) * (size_t)((K - hi) * C));
            }
        }
    }
}

/* The adjoint of im2col for images [b0, b1) (col starts at b0's rows): adds every row's runs back into dx. */
static void col2im(const float *col, float *dx, int b0, int b1, int H, int W, int C, int K) {
    const int pad = K / 2;
    const long KC = (long)K * C, KKC = (long)K * KC;
    memset(dx + (long)b0 * H * W * C, 0, sizeof(float) * (size_t)(b1 - b0) * H * W * C);
    for (int b = b0; b < b1; b++) {
        float *img = dx + (long)b * H * W * C;
        for (int oy = 0; oy < H; oy++)
            for (int ox = 0; ox < W; ox++) {
                const float *row = col + (((long)(b - b0) * H + oy) * W + ox) * KKC;
                const int x0 = ox - pad;
                const int lo = x0 < 0 ? -x0 : 0;
                const int hi = x0 + K > W ? W - x0 : K;
                const long n = (long)(hi - lo) * C;
                for (int ky = 0; ky < K; ky++) {
                    const int iy = oy + ky - pad;
                    if (iy < 0 || iy >= H)
                        continue;
                    const float *src = row + ky * KC + lo * C;
                    float *dst = img + ((long)iy * W + x0 + lo) * C;
#pragma omp simd
                    for (long i = 0; i < n; i++)
                        dst[i] += src[i];
                }
            }
    }
}

/* y (N, O) = bias broadcast over rows, so the sgemm can add into it with beta = 1. */
static void fill_bias(float *y, const float *bias, long N, int O, int ldy) {
    for (long n = 0; n < N; n++)
        memcpy(y + n * ldy, bias, sizeof(float) * (size_t)O);
}

/* db (O) = column sums of dy (N, O) with row stride ldy, in a fixed order. */
static void column_sums(const float *dy, float *db, long N, int O, int ldy) {
    memset(db, 0, sizeof(float) * (size_t)O);
    for (long n = 0; n < N; n++) {
        const float *r = dy + n * ldy;
#pragma omp simd
        for (int o = 0; o < O; o++)
            db[o] += r[o];
    }
}

/* im2col rows per chunk: about 1 MiB of floats, so a chunk's columns are still in cache
 * when the sgemm packs them (the whole batch's im2col would be 20 MB for conv2). */
#define COL_CHUNK_FLOATS (256L * 1024)

static int chunk_images(int H, int W, int C, int K) {
    long per = (long)H * W * K * K * C;
    long n = COL_CHUNK_FLOATS / per;
    return n < 1 ? 1 : (int)n;
}

long conv_col_floats(int B, int H, int W, int C, int K, int threads) {
    /* Thread t's chunk starts at t·cb images (conv_forward/backward) and holds at most
     * min(cb, B) of them: a batch smaller than cb·threads still needs the last thread's
     * whole offset (B = 16 on 2 threads with cb = 13 wrote past min(cb·threads, B)). */
    long cb = chunk_images(H, W, C, K);
    long imgs = cb * (threads > 1 ? threads - 1 : 0) + (cb < B ? cb : B);
    return imgs * (long)H * W * K * K * C;
}

long conv_workspace_floats(int K, int C, int O, int threads) {
    return (long)(threads > 1 ? threads - 1 : 0) * ((long)O * K * K * C + O);
}

/* Threads the conv uses: bounded by the batch, the workspaces, and worth a barrier. */
static int conv_threads(int B, int H, int W, int C, int K, int O, int cap) {
    return threads_for(B, (double)B * H * W * K * K * C * O, cap);
}

/* Every thread owns a contiguous block of images and, chunk by chunk, does everything
 * for them: im2col into its own part of col, bias, its rows of the product, ReLU.
 * One parallel region, no barrier inside. */
void conv_forward(const float *x, const float *w, const float *bias, float *col, float *y,
                  int B, int H, int W, int C, int K, int O, int relu, int col_threads) {
    const long HW = (long)H * W;
    const int KKC = K * K * C, cb = chunk_images(H, W, C, K);
    const int nt = conv_threads(B, H, W, C, K, O, col_threads);
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        long b0, b1;
        share(B, t, omp_get_num_threads(), &b0, &b1);
        for (long c0 = b0; c0 < b1; c0 += cb) {
            const long c1 = c0 + cb < b1 ? c0 + cb : b1;
            const long rows = (c1 - c0) * HW;
            float *my_col = col + (long)t * cb * HW * KKC; // this thread's chunk of col
            float *yr = y + c0 * HW * O;
            im2col(x, my_col, (int)c0, (int)c1, H, W, C, K);           // col (rows, KKC)
            fill_bias(yr, bias, rows, O, O);                           // y (rows, O)
            // y (rows, O) += col (rows, KKC) · wᵀ (KKC, O)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, O, KKC, 1.0f, my_col,
                        KKC, w, KKC, 1.0f, yr, O);
            if (relu) {
                const long n = rows * O;
#pragma omp simd
                for (long i = 0; i < n; i++)
                    yr[i] = yr[i] > 0.0f ? yr[i] : 0.0f;
            }
        }
    }
}

void conv_sum_partials(float *dw, float *db, const float *ws, long n_w, int O, int t, int T) {
    long i0, i1;
    share(n_w + O, t, T, &i0, &i1);
    for (int u = 1; u < T; u++) {
        const float *part = ws + (long)(u - 1) * (n_w + O);
        for (long i = i0; i < i1; i++) {
            if (i < n_w)
                dw[i] += part[i];
            else
                db[i - n_w] += part[i];
        }
    }
}

/* Threads own blocks of images again and go chunk by chunk: mask dy by the ReLU, redo
 * the chunk's im2col (cheaper than keeping the whole batch's), add its share of dw and db
 * (thread 0 into dw, the others into ws), compute the chunk's dcol into col and scatter it
 * into dx. After one barrier the shares are summed in thread order: deterministic for a
 * given thread count. */
void conv_backward(float *dy, const float *x, const float *y, const float *w, float *col, float *dw, float *db,
                   float *dx, float *ws, int ws_threads, int col_threads, int B, int H, int W, int C, int K,
                   int O) {
    const long HW = (long)H * W;
    const int KKC = K * K * C, cb = chunk_images(H, W, C, K);
    const long n_w = (long)O * KKC;
    const int nt = conv_threads(B, H, W, C, K, O, ws_threads + 1 < col_threads ? ws_threads + 1 : col_threads);
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        long b0, b1;
        share(B, t, T, &b0, &b1);
        float *my_dw = t == 0 ? dw : ws + (long)(t - 1) * (n_w + O);
        float *my_db = t == 0 ? db : my_dw + n_w;
        memset(my_dw, 0, sizeof(float) * (size_t)n_w);
        memset(my_db, 0, sizeof(float) * (size_t)O);
        for (long c0 = b0; c0 < b1; c0 += cb) {
            const long c1 = c0 + cb < b1 ? c0 + cb : b1;
            const long rows = (c1 - c0) * HW;
            float *colr = col + (long)t * cb * HW * KKC; // this thread's chunk of col
            float *dyr = dy + c0 * HW * O;
            if (y) {
                const float *yr = y + c0 * HW * O;
                const long n = rows * O;
#pragma omp simd
                for (long i = 0; i < n; i++)
                    dyr[i] = yr[i] > 0.0f ? dyr[i] : 0.0f;
            }
            im2col(x, colr, (int)c0, (int)c1, H, W, C, K);
            // dw (O, KKC) += dyᵀ (O, rows) · col (rows, KKC)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, O, KKC, (int)rows, 1.0f, dyr, O, colr, KKC, 1.0f,
                        my_dw, KKC);
            for (long r = 0; r < rows; r++) {
                const float *g = dyr + r * O;
#pragma omp simd
                for (int o = 0; o < O; o++)
                    my_db[o] += g[o];
            }
            if (dx) {
                // dcol (rows, KKC) = dy (rows, O) · w (O, KKC), into the chunk's col
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, KKC, O, 1.0f, dyr, O, w, KKC, 0.0f,
                            colr, KKC);
                col2im(colr, dx, (int)c0, (int)c1, H, W, C, K);
            }
        }
        if (T > 1) {
#pragma omp barrier
            conv_sum_partials(dw, db, ws, n_w, O, t, T);
        }
    }
}

// ----------------------------------------------------------------------------
// dense

/* Threads own blocks of output units. */
void dense_forward(const float *x, const float *w, const float *bias, float *y, int B, int In, int O) {
    const int nt = threads_for(O, (double)B * In * O, 1 << 20);
#pragma omp parallel num_threads(nt)
    {
        long o0, o1;
        share(O, omp_get_thread_num(), omp_get_num_threads(), &o0, &o1);
        if (o1 > o0) {
            fill_bias(y + o0, bias + o0, B, (int)(o1 - o0), O);
            // y (B, o0:o1) += x (B, In) · w[o0:o1]ᵀ (In, o1-o0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B, (int)(o1 - o0), In, 1.0f, x, In, w + o0 * In,
                        In, 1.0f, y + o0, O);
        }
    }
}

/* Threads own blocks of output units for dw and db, and blocks of inputs for dx. */
void dense_backward(const float *dy, const float *x, const float *w, float *dw, float *db, float *dx,
                    int B, int In, int O) {
    const int nt = threads_for(O, (double)B * In * O, 1 << 20);
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        long o0, o1, i0, i1;
        share(O, t, T, &o0, &o1);
        share(In, t, T, &i0, &i1);
        if (o1 > o0) {
            // dw (o0:o1, In) = dy[:, o0:o1]ᵀ (o1-o0, B) · x (B, In)
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)(o1 - o0), In, B, 1.0f, dy + o0, O, x, In,
                        0.0f, dw + o0 * In, In);
            column_sums(dy + o0, db + o0, B, (int)(o1 - o0), O);
        }
        if (dx && i1 > i0) // dx (B, i0:i1) = dy (B, O) · w[:, i0:i1] (O, i1-i0)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, B, (int)(i1 - i0), O, 1.0f, dy, O, w + i0, In,
                        0.0f, dx + i0, In);
    }
}

// ----------------------------------------------------------------------------
// elementwise

void relu_forward(float *x, long n) {
#pragma omp parallel for simd schedule(static) if (n >= PARALLEL_MIN_WORK)
    for (long i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void relu_backward(const float *y, float *dy, long n) {
#pragma omp parallel for simd schedule(static) if (n >= PARALLEL_MIN_WORK)
    for (long i = 0; i < n; i++)
        dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void dropout_apply(float *x, const float *mask, long n) {
#pragma omp parallel for simd schedule(static) if (n >= PARALLEL_MIN_WORK)
    for (long i = 0; i < n; i++)
        x[i] *= mask[i];
}

// ----------------------------------------------------------------------------
// max-pool

void maxpool_forward(const float *x, float *y, int B, int H, int W, int C, int P) {
    const int OH = H / P, OW = W / P;
#pragma omp parallel for schedule(static) if ((long)B * H * W * C >= PARALLEL_MIN_WORK)
    for (long r = 0; r < (long)B * OH; r++) {
        const int b = (int)(r / OH), oy = (int)(r % OH);
        for (int ox = 0; ox < OW; ox++) {
            float *out = y + (r * OW + ox) * C;
            memcpy(out, x + (((long)b * H + oy * P) * W + ox * P) * C, sizeof(float) * (size_t)C);
            for (int py = 0; py < P; py++)
                for (int px = 0; px < P; px++) {
                    const float *in = x + (((long)b * H + oy * P + py) * W + ox * P + px) * C;
#pragma omp simd
                    for (int c = 0; c < C; c++)
                        out[c] = in[c] > out[c] ? in[c] : out[c];
                }
        }
    }
}

/* The gradient goes to the first input of each window equal to the maximum (the one the
 * forward pass kept); recomputing this is cheaper than storing and reading an argmax. */
void maxpool_backward(const float *dy, const float *x, const float *y, float *dx, int B, int H, int W, int C,
                      int P) {
    const int OH = H / P, OW = W / P;
    if (H % P || W % P) // the rows and columns that floor drops get no gradient
        memset(dx, 0, sizeof(float) * (size_t)B * H * W * C);
#pragma omp parallel for schedule(static) if ((long)B * H * W * C >= PARALLEL_MIN_WORK)
    for (long r = 0; r < (long)B * OH; r++) {
        const int b = (int)(r / OH), oy = (int)(r % OH);
        float left[C]; // per channel: the gradient not yet handed to a window position
        for (int ox = 0; ox < OW; ox++) {
            const float *out = y + (r * OW + ox) * C, *g = dy + (r * OW + ox) * C;
            memcpy(left, g, sizeof(float) * (size_t)C);
            for (int py = 0; py < P; py++)
                for (int px = 0; px < P; px++) {
                    const long at = (((long)b * H + oy * P + py) * W + ox * P + px) * C;
                    const float *in = x + at;
                    float *d = dx + at;
#pragma omp simd
                    for (int c = 0; c < C; c++) {
                        const int hit = in[c] == out[c];
                        d[c] = hit ? left[c] : 0.0f;
                        left[c] = hit ? 0.0f : left[c];
                    }
                }
        }
    }
}

// ----------------------------------------------------------------------------
// softmax cross-entropy

float softmax_xent_forward(const float *logits, const uint8_t *labels, float *probs, int B, int O, float d) {
    double loss = 0.0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * O;
        float *p = probs + (long)b * O;
        float m = -FLT_MAX;
        for (int o = 0; o < O; o++)
            m = z[o] > m ? z[o] : m;
        double sum = 0.0;
        for (int o = 0; o < O; o++)
            sum += (p[o] = expf(z[o] - m));
        for (int o = 0; o < O; o++)
            p[o] = (float)(p[o] / sum);
        // -log softmax, computed from the logits so a tiny probability does not give -inf
        loss += log(sum) - (double)(z[labels[b]] - m);
    }
    return (float)(loss / d);
}

void softmax_xent_backward(const float *probs, const uint8_t *labels, float *dlogits, int B, int O, float d) {
    const float inv = 1.0f / d;
    for (int b = 0; b < B; b++) {
        for (int o = 0; o < O; o++)
            dlogits[(long)b * O + o] = probs[(long)b * O + o] * inv;
        dlogits[(long)b * O + labels[b]] -= inv;
    }
}
