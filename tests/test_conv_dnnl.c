/* conv_dnnl: oneDNN's passes against the definition (a direct sum, written here), against
 * central finite differences of its own forward, and against layers.c's im2col path. */
#include "train/conv_dnnl.h"
#include "train/layers.h"

#include "tests/fixed_rng.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int B, H, W, C, K, O; } shape;

/* The other threads' partial dw and db (conv_dnnl_backward's ws). */
static float *ws_for(const conv_dnnl *cv, shape s) {
    return malloc(sizeof(float) * (size_t)(conv_workspace_floats(s.K, s.C, s.O, conv_dnnl_threads(cv)) + 1));
}

static conv_dnnl *make(shape s, int relu) {
    conv_dnnl *cv = conv_dnnl_new(s.H, s.W, s.C, s.K, s.O, relu, s.B);
    if (!cv)
        cr_skip_test("oneDNN has no optimised convolution for %dx%dx%d -> %d on this CPU", s.H, s.W, s.C, s.O);
    cr_log_info("oneDNN implementation: %s", conv_dnnl_impl(cv));
    return cv;
}

/* y = relu?(b + Σ w·x) over the zero-padded window, in double. */
static double direct(shape s, const float *x, const float *w, const float *b, int n, int i, int j, int o, int relu) {
    const int pad = s.K / 2;
    double v = b[o];
    for (int ky = 0; ky < s.K; ky++)
        for (int kx = 0; kx < s.K; kx++)
            for (int c = 0; c < s.C; c++) {
                const int iy = i + ky - pad, ix = j + kx - pad;
                if (iy >= 0 && iy < s.H && ix >= 0 && ix < s.W)
                    v += (double)w[((o * s.K + ky) * s.K + kx) * s.C + c] * x[((n * s.H + iy) * s.W + ix) * s.C + c];
            }
    return relu && v < 0 ? 0 : v;
}

static void check_forward(shape s, int relu) {
    const long nx = (long)s.B * s.H * s.W * s.C, ny = (long)s.B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array((long)s.O * s.K * s.K * s.C), *b = rand_array(s.O);
    float *y = malloc(sizeof(float) * (size_t)ny);
    conv_dnnl *cv = make(s, relu);
    cr_assert_eq(conv_dnnl_forward(cv, x, w, b, y, s.B), 0);
    for (int n = 0; n < s.B; n++)
        for (int i = 0; i < s.H; i++)
            for (int j = 0; j < s.W; j++)
                for (int o = 0; o < s.O; o++) {
                    const double v = direct(s, x, w, b, n, i, j, o, relu);
                    const float got = y[((n * s.H + i) * s.W + j) * s.O + o];
                    cr_expect(fabs(got - v) < 1e-4 * (1 + fabs(v)), "y[%d,%d,%d,%d] = %g, direct sum %g", n, i, j, o,
                              got, v);
                }
    conv_dnnl_free(cv);
    free(x), free(w), free(b), free(y);
}

Test(conv_dnnl, forward_matches_direct_sum) { check_forward((shape){ 3, 6, 5, 8, 3, 16 }, 0); }
Test(conv_dnnl, forward_with_relu_matches_direct_sum) { check_forward((shape){ 2, 7, 7, 16, 5, 32 }, 1); }
Test(conv_dnnl, forward_of_one_input_channel_matches_direct_sum) { check_forward((shape){ 4, 8, 8, 1, 5, 32 }, 1); }

static double dot(const float *a, const float *b, long n) {
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

Test(conv_dnnl, gradients_match_finite_differences) {
    // L = Σ r·y, so backward receives dy = r; every 7th element is probed (float FD is slow).
    const shape s = { 2, 5, 4, 8, 3, 16 };
    const long nx = (long)s.B * s.H * s.W * s.C, nw = (long)s.O * s.K * s.K * s.C, ny = (long)s.B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(s.O), *r = rand_array(ny);
    float *dy = malloc(sizeof(float) * (size_t)ny), *y = malloc(sizeof(float) * (size_t)ny);
    float *dx = malloc(sizeof(float) * (size_t)nx), *dw = malloc(sizeof(float) * (size_t)nw), *db = malloc(sizeof(float) * (size_t)s.O);
    conv_dnnl *cv = make(s, 0);
    float *ws = ws_for(cv, s);
    memcpy(dy, r, sizeof(float) * (size_t)ny);
    cr_assert_eq(conv_dnnl_backward(cv, dy, x, NULL, w, dw, db, dx, ws, s.B), 0);
    const float eps = 1e-2f;
    struct { float *v, *g; long n; const char *name; } ps[] = { { x, dx, nx, "dx" }, { w, dw, nw, "dw" }, { b, db, s.O, "db" } };
    for (int p = 0; p < 3; p++)
        for (long i = 0; i < ps[p].n; i += p == 2 ? 1 : 7) {
            const float keep = ps[p].v[i];
            ps[p].v[i] = keep + eps;
            conv_dnnl_forward(cv, x, w, b, y, s.B);
            const double up = dot(r, y, ny);
            ps[p].v[i] = keep - eps;
            conv_dnnl_forward(cv, x, w, b, y, s.B);
            const double down = dot(r, y, ny);
            ps[p].v[i] = keep;
            const double numeric = (up - down) / (2.0 * eps);
            cr_expect(fabs(ps[p].g[i] - numeric) <= 2e-3 + 2e-2 * fabs(numeric), "%s[%ld]: backward %.6g, finite difference %.6g",
                      ps[p].name, i, ps[p].g[i], numeric);
        }
    conv_dnnl_free(cv);
    free(x), free(w), free(b), free(r), free(dy), free(y), free(dx), free(dw), free(db), free(ws);
}

/* Both passes with the ReLU fused, oneDNN (its threads splitting the batch) against
 * layers.c on one thread, at batch B. */
static void expect_same_as_im2col(conv_dnnl *cv, shape s, int B) {
    float *ws = ws_for(cv, s);
    const long nx = (long)B * s.H * s.W * s.C, nw = (long)s.O * s.K * s.K * s.C, ny = (long)B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(s.O), *dy0 = rand_array(ny);
    float *col = malloc(sizeof(float) * (size_t)conv_col_floats(B, s.H, s.W, s.C, s.K, 1));
    float *out[2][5]; // y, dy (masked), dw, db, dx
    const long n[5] = { ny, ny, nw, s.O, nx };
    for (int e = 0; e < 2; e++) {
        for (int i = 0; i < 5; i++)
            out[e][i] = malloc(sizeof(float) * (size_t)n[i]);
        memcpy(out[e][1], dy0, sizeof(float) * (size_t)ny);
        if (e == 0) {
            cr_assert_eq(conv_dnnl_forward(cv, x, w, b, out[e][0], B), 0);
            cr_assert_eq(conv_dnnl_backward(cv, out[e][1], x, out[e][0], w, out[e][2], out[e][3], out[e][4], ws, B), 0);
        } else {
            conv_forward(x, w, b, col, out[e][0], B, s.H, s.W, s.C, s.K, s.O, 1, 1);
            conv_backward(out[e][1], x, out[e][0], w, col, out[e][2], out[e][3], out[e][4], NULL, 0, 1, B, s.H, s.W,
                          s.C, s.K, s.O);
        }
    }
    static const char *names[5] = { "y", "dy", "dw", "db", "dx" };
    for (int i = 0; i < 5; i++)
        for (long j = 0; j < n[i]; j++)
            cr_expect(fabsf(out[0][i][j] - out[1][i][j]) <= 1e-4f * (1.0f + fabsf(out[1][i][j])),
                      "B=%d %s[%ld]: oneDNN %g, im2col %g", B, names[i], j, out[0][i][j], out[1][i][j]);
    for (int e = 0; e < 2; e++)
        for (int i = 0; i < 5; i++)
            free(out[e][i]);
    free(x), free(w), free(b), free(dy0), free(col), free(ws);
}

/* One conv_dnnl made at `threads`, every batch of the list through it against im2col. */
static void expect_batches_same_as_im2col(int threads, const int *batches, size_t n) {
    omp_set_num_threads(threads);
    const shape s = { 8, 6, 6, 16, 5, 32 };
    conv_dnnl *cv = make(s, 1);
    cr_assert_eq(conv_dnnl_threads(cv), threads);
    for (size_t i = 0; i < n; i++)
        expect_same_as_im2col(cv, s, batches[i]);
    conv_dnnl_free(cv);
}

Test(conv_dnnl, relu_passes_match_im2col_at_every_batch_size) {
    // Six batch sizes through a cache of four: the evicted ones are rebuilt.
    const int batches[] = { 8, 3, 1, 5, 7, 2, 8, 3 };
    expect_batches_same_as_im2col(1, batches, sizeof batches / sizeof batches[0]);
}

Test(conv_dnnl, two_threads_split_the_batch_and_match_im2col) {
    // Blocks of 4 and 4, 1 and 2, and one image alone (one thread); the partial dw summed.
    const int batches[] = { 8, 3, 1, 8 };
    expect_batches_same_as_im2col(2, batches, sizeof batches / sizeof batches[0]);
}

Test(conv_dnnl, two_threads_give_the_same_bits_twice) {
    omp_set_num_threads(2);
    const shape s = { 16, 14, 14, 32, 5, 64 };
    const long nx = (long)s.B * s.H * s.W * s.C, nw = (long)s.O * s.K * s.K * s.C, ny = (long)s.B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(s.O), *dy0 = rand_array(ny);
    float *y = malloc(sizeof(float) * (size_t)ny), *dy = malloc(sizeof(float) * (size_t)ny);
    float *dw[2], *dx[2], db[2][64];
    conv_dnnl *cv = make(s, 1);
    float *ws = ws_for(cv, s);
    for (int run = 0; run < 2; run++) {
        dw[run] = malloc(sizeof(float) * (size_t)nw), dx[run] = malloc(sizeof(float) * (size_t)nx);
        memcpy(dy, dy0, sizeof(float) * (size_t)ny);
        cr_assert_eq(conv_dnnl_forward(cv, x, w, b, y, s.B), 0);
        cr_assert_eq(conv_dnnl_backward(cv, dy, x, y, w, dw[run], db[run], dx[run], ws, s.B), 0);
    }
    cr_expect(memcmp(dw[0], dw[1], sizeof(float) * (size_t)nw) == 0, "dw differs between two runs");
    cr_expect(memcmp(dx[0], dx[1], sizeof(float) * (size_t)nx) == 0, "dx differs between two runs");
    cr_expect(memcmp(db[0], db[1], sizeof db[0]) == 0, "db differs between two runs");
    conv_dnnl_free(cv);
    for (int run = 0; run < 2; run++)
        free(dw[run]), free(dx[run]);
    free(x), free(w), free(b), free(dy0), free(y), free(dy), free(ws);
}
