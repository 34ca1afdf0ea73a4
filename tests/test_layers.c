/* layers: every pass's backward against central finite differences of its forward.
 * The scalar checked is L = Σ r·y for a fixed random r, accumulated in double; so
 * ∂L/∂y = r is what backward receives. Inputs are spread out so that max-pool and ReLU
 * are never within a finite-difference step of a kink. */
#include "train/layers.h"

#include "tests/fixed_rng.h"

#include <criterion/criterion.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static double dot(const float *a, const float *b, long n) {
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}
/* A float-safe bound: finite differences in float lose ~1e-7/eps of relative precision. */
static void expect_close(double analytic, double numeric, const char *what, long i) {
    double tol = 2e-3 + 2e-2 * fabs(numeric);
    cr_expect(fabs(analytic - numeric) <= tol, "%s[%ld]: backward %.6g, finite difference %.6g", what, i,
              analytic, numeric);
}

// ---- convolution

typedef struct { int B, H, W, C, K, O; } conv_shape;

static void check_conv(conv_shape s) {
    const long nx = (long)s.B * s.H * s.W * s.C, nw = (long)s.O * s.K * s.K * s.C, ny = (long)s.B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(s.O), *r = rand_array(ny);
    float *col = malloc(sizeof(float) * (size_t)(s.B * s.H * s.W * s.K * s.K * s.C));
    float *y = malloc(sizeof(float) * (size_t)ny);
    float *dx = malloc(sizeof(float) * (size_t)nx), *dw = malloc(sizeof(float) * (size_t)nw), *db = malloc(sizeof(float) * (size_t)s.O);
    conv_forward(x, w, b, col, y, s.B, s.H, s.W, s.C, s.K, s.O, 0, 4);
    float *ws = malloc(sizeof(float) * (size_t)(conv_workspace_floats(s.K, s.C, s.O, 4) + 1));
    conv_backward(r, x, NULL, w, col, dw, db, dx, ws, 3, 4, s.B, s.H, s.W, s.C, s.K, s.O);
    free(ws);
    const float eps = 1e-2f;
    struct { float *v; float *g; long n; const char *name; } ps[] = { { x, dx, nx, "dx" }, { w, dw, nw, "dw" }, { b, db, s.O, "db" } };
    for (int p = 0; p < 3; p++)
        for (long i = 0; i < ps[p].n; i++) {
            float keep = ps[p].v[i];
            ps[p].v[i] = keep + eps;
            conv_forward(x, w, b, col, y, s.B, s.H, s.W, s.C, s.K, s.O, 0, 4);
            double up = dot(r, y, ny);
            ps[p].v[i] = keep - eps;
            conv_forward(x, w, b, col, y, s.B, s.H, s.W, s.C, s.K, s.O, 0, 4);
            double down = dot(r, y, ny);
            ps[p].v[i] = keep;
            expect_close(ps[p].g[i], (up - down) / (2.0 * eps), ps[p].name, i);
        }
    free(x), free(w), free(b), free(r), free(col), free(y), free(dx), free(dw), free(db);
}

Test(layers, conv_gradients_match_finite_differences) { check_conv((conv_shape){ 2, 5, 4, 3, 3, 4 }); }
Test(layers, conv_gradients_hold_when_kernel_exceeds_image) { check_conv((conv_shape){ 1, 3, 2, 2, 5, 3 }); }

Test(layers, conv_matches_direct_sum) {
    // Against the definition, not the im2col: y = b + Σ w·x over the zero-padded window.
    conv_shape s = { 2, 4, 5, 2, 3, 3 };
    const long nx = (long)s.B * s.H * s.W * s.C, ny = (long)s.B * s.H * s.W * s.O;
    float *x = rand_array(nx), *w = rand_array((long)s.O * 9 * s.C), *b = rand_array(s.O);
    float *col = malloc(sizeof(float) * (size_t)(ny / s.O * 9 * s.C)), *y = malloc(sizeof(float) * (size_t)ny);
    conv_forward(x, w, b, col, y, s.B, s.H, s.W, s.C, s.K, s.O, 0, 4);
    for (int n = 0; n < s.B; n++)
        for (int i = 0; i < s.H; i++)
            for (int j = 0; j < s.W; j++)
                for (int o = 0; o < s.O; o++) {
                    double v = b[o];
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++)
                            for (int c = 0; c < s.C; c++) {
                                int iy = i + ky - 1, ix = j + kx - 1;
                                if (iy >= 0 && iy < s.H && ix >= 0 && ix < s.W)
                                    v += (double)w[((o * 3 + ky) * 3 + kx) * s.C + c] * x[((n * s.H + iy) * s.W + ix) * s.C + c];
                            }
                    float got = y[((n * s.H + i) * s.W + j) * s.O + o];
                    cr_expect(fabs(got - v) < 1e-5, "y[%d,%d,%d,%d] = %g, direct sum %g", n, i, j, o, got, v);
                }
    free(x), free(w), free(b), free(col), free(y);
}

// ---- dense

Test(layers, dense_gradients_match_finite_differences) {
    const int B = 3, In = 5, O = 4;
    float *x = rand_array(B * In), *w = rand_array(O * In), *b = rand_array(O), *r = rand_array(B * O);
    float y[12], dx[15], dw[20], db[4];
    dense_forward(x, w, b, y, B, In, O);
    dense_backward(r, x, w, dw, db, dx, B, In, O);
    const float eps = 1e-2f;
    struct { float *v; float *g; long n; const char *name; } ps[] = { { x, dx, B * In, "dx" }, { w, dw, O * In, "dw" }, { b, db, O, "db" } };
    for (int p = 0; p < 3; p++)
        for (long i = 0; i < ps[p].n; i++) {
            float keep = ps[p].v[i];
            ps[p].v[i] = keep + eps;
            dense_forward(x, w, b, y, B, In, O);
            double up = dot(r, y, B * O);
            ps[p].v[i] = keep - eps;
            dense_forward(x, w, b, y, B, In, O);
            double down = dot(r, y, B * O);
            ps[p].v[i] = keep;
            expect_close(ps[p].g[i], (up - down) / (2.0 * eps), ps[p].name, i);
        }
    free(x), free(w), free(b), free(r);
}

// ---- relu, dropout

/* Values in ±[0.1, 1]: a step of 1e-2 never crosses zero. */
static float *away_from_zero(long n) {
    float *a = rand_array(n);
    for (long i = 0; i < n; i++)
        a[i] = a[i] >= 0 ? 0.1f + 0.9f * a[i] : -0.1f + 0.9f * a[i];
    return a;
}

Test(layers, relu_gradient_matches_finite_differences) {
    const long n = 40;
    float *x = away_from_zero(n), *r = rand_array(n), y[40], dy[40];
    memcpy(y, x, sizeof y);
    relu_forward(y, n);
    memcpy(dy, r, sizeof dy);
    relu_backward(y, dy, n);
    const float eps = 1e-2f;
    for (long i = 0; i < n; i++) {
        float keep = x[i];
        memcpy(y, x, sizeof y), y[i] = keep + eps, relu_forward(y, n);
        double up = dot(r, y, n);
        memcpy(y, x, sizeof y), y[i] = keep - eps, relu_forward(y, n);
        double down = dot(r, y, n);
        expect_close(dy[i], (up - down) / (2.0 * eps), "dx", i);
    }
    free(x), free(r);
}

Test(layers, dropout_gradient_matches_finite_differences) {
    const long n = 30;
    float *x = rand_array(n), *r = rand_array(n), mask[30], y[30], dy[30];
    for (long i = 0; i < n; i++)
        mask[i] = i % 3 == 0 ? 0.0f : 2.0f; // p = 0.5: kept values scaled by 1/(1-p)
    memcpy(dy, r, sizeof dy);
    dropout_apply(dy, mask, n);
    const float eps = 1e-2f;
    for (long i = 0; i < n; i++) {
        float keep = x[i];
        memcpy(y, x, sizeof y), y[i] = keep + eps, dropout_apply(y, mask, n);
        double up = dot(r, y, n);
        memcpy(y, x, sizeof y), y[i] = keep - eps, dropout_apply(y, mask, n);
        double down = dot(r, y, n);
        expect_close(dy[i], (up - down) / (2.0 * eps), "dx", i);
    }
    free(x), free(r);
}

// ---- max-pool

static void check_pool(int B, int H, int W, int C, int P) {
    const long nx = (long)B * H * W * C, ny = (long)B * (H / P) * (W / P) * C;
    // Distinct values 0.05 apart, shuffled: no ties, no max changes under a 1e-2 step.
    float *x = malloc(sizeof(float) * (size_t)nx);
    for (long i = 0; i < nx; i++)
        x[i] = 0.05f * (float)((i * 7919) % nx);
    float *r = rand_array(ny), *y = malloc(sizeof(float) * (size_t)ny), *dx = malloc(sizeof(float) * (size_t)nx);
    maxpool_forward(x, y, B, H, W, C, P);
    maxpool_backward(r, x, y, dx, B, H, W, C, P);
    const float eps = 1e-2f;
    for (long i = 0; i < nx; i++) {
        float keep = x[i];
        x[i] = keep + eps, maxpool_forward(x, y, B, H, W, C, P);
        double up = dot(r, y, ny);
        x[i] = keep - eps, maxpool_forward(x, y, B, H, W, C, P);
        double down = dot(r, y, ny);
        x[i] = keep;
        expect_close(dx[i], (up - down) / (2.0 * eps), "dx", i);
    }
    free(x), free(r), free(y), free(dx);
}

Test(layers, maxpool_gradient_matches_finite_differences) { check_pool(2, 4, 6, 3, 2); }
Test(layers, maxpool_gradient_holds_with_odd_sizes) { check_pool(1, 5, 7, 2, 2); }

// ---- softmax cross-entropy

Test(layers, softmax_xent_gradient_matches_finite_differences) {
    const int B = 3, O = 5;
    float *z = rand_array(B * O), p[15], dz[15];
    const uint8_t labels[3] = { 4, 0, 2 };
    for (int i = 0; i < B * O; i++)
        z[i] *= 3.0f;
    softmax_xent_forward(z, labels, p, B, O, (float)B);
    softmax_xent_backward(p, labels, dz, B, O, (float)B);
    const float eps = 1e-2f;
    for (int i = 0; i < B * O; i++) {
        float keep = z[i];
        z[i] = keep + eps;
        double up = softmax_xent_forward(z, labels, p, B, O, (float)B);
        z[i] = keep - eps;
        double down = softmax_xent_forward(z, labels, p, B, O, (float)B);
        z[i] = keep;
        expect_close(dz[i], (up - down) / (2.0 * eps), "dlogits", i);
    }
    free(z);
}

Test(layers, softmax_xent_of_uniform_logits_is_log_classes) {
    float z[10] = { 0 }, p[10];
    const uint8_t label = 3;
    float loss = softmax_xent_forward(z, &label, p, 1, 10, 1.0f);
    cr_expect(fabs(loss - log(10.0)) < 1e-6, "loss %g, expected ln 10", loss);
}

// ---- threads: blocks of images and the reduction of partial dw give the one-thread result

Test(layers, conv_and_dense_on_two_threads_match_one_thread) {
    // Large enough to pass PARALLEL_MIN_WORK, so the threaded paths really run.
    // 16·16·5·5·16 floats of im2col per image: two images per chunk, so one thread does two chunks.
    const int B = 4, H = 16, W = 16, C = 16, K = 5, O = 8, In = H * W * O, U = 64;
    const long nx = (long)B * H * W * C, ny = (long)B * H * W * O, nw = (long)O * K * K * C;
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(O), *dy0 = rand_array(ny);
    float *fw = rand_array((long)U * In), *fb = rand_array(U), *fdy = rand_array((long)B * U);
    float *ws = malloc(sizeof(float) * (size_t)conv_workspace_floats(K, C, O, 2));
    float *col = malloc(sizeof(float) * (size_t)(B * H * W * K * K * C));
    // conv y, dw, db, dx; dense y, dw, db, dx
    const long n[8] = { ny, nw, O, nx, (long)B * U, (long)U * In, U, (long)B * In };
    float *out[2][8], *dy = malloc(sizeof(float) * (size_t)ny);
    for (int run = 0; run < 2; run++) {
        omp_set_num_threads(run + 1);
        float **o = out[run];
        for (int i = 0; i < 8; i++)
            o[i] = malloc(sizeof(float) * (size_t)n[i]);
        memcpy(dy, dy0, sizeof(float) * (size_t)ny);
        conv_forward(x, w, b, col, o[0], B, H, W, C, K, O, 1, 2);
        conv_backward(dy, x, o[0], w, col, o[1], o[2], o[3], ws, 1, 2, B, H, W, C, K, O);
        dense_forward(o[0], fw, fb, o[4], B, In, U);
        dense_backward(fdy, o[0], fw, o[5], o[6], o[7], B, In, U);
    }
    for (int i = 0; i < 8; i++)
        for (long j = 0; j < n[i]; j++)
            cr_expect(fabsf(out[0][i][j] - out[1][i][j]) <= 1e-4f * (1.0f + fabsf(out[0][i][j])),
                      "output %d[%ld]: one thread %g, two %g", i, j, out[0][i][j], out[1][i][j]);
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < 8; i++)
            free(out[r][i]);
    free(dy);
    free(x), free(w), free(b), free(dy0), free(fw), free(fb), free(fdy), free(ws), free(col);
}

Test(layers, conv_workspace_holds_a_batch_smaller_than_one_chunk_per_thread) {
    // 8·8·5·5·4 floats of im2col per image: 40 images per chunk, so a batch of 4 on two
    // threads puts thread 1's chunk at image 40, past the 4 images of the whole batch.
    // conv_col_floats must cover it: the floats after the workspace stay untouched.
    const int B = 4, H = 8, W = 8, C = 4, K = 5, O = 16, GUARD = 4096;
    const long nx = (long)B * H * W * C, ny = (long)B * H * W * O, nw = (long)O * K * K * C;
    const long ncol = conv_col_floats(B, H, W, C, K, 2);
    float *x = rand_array(nx), *w = rand_array(nw), *b = rand_array(O), *y = malloc(sizeof(float) * (size_t)ny);
    float *col = malloc(sizeof(float) * (size_t)(ncol + GUARD));
    for (long i = 0; i < ncol + GUARD; i++)
        col[i] = 12345.0f;
    omp_set_num_threads(2);
    conv_forward(x, w, b, col, y, B, H, W, C, K, O, 0, 2);
    for (long i = ncol; i < ncol + GUARD; i++)
        cr_assert_eq(col[i], 12345.0f, "im2col wrote past its workspace of %ld floats, at %ld", ncol, i);
    free(x), free(w), free(b), free(y), free(col);
}
