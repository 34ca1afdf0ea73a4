/* net: the whole network's gradient against finite differences of its loss, and the
 * SGD update against PyTorch's formula written out by hand. */
#include "train/net.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(net, gradient_matches_finite_differences) {
    char err[256];
    // Tiny, but with every layer kind (dropout 0: a deterministic forward).
    net *n = net_new("conv3x3x3,relu,pool2,conv3x3x4,relu,fc6,relu,dropout0,fc3", 6, 6, 1, 3, 4, err, sizeof err);
    cr_assert(n, "%s", err);
    net_init(n, 7);
    for (long i = 0; i < n->n_params; i++) // non-zero biases too
        n->params[i] += 0.05f * (float)((i * 37) % 11 - 5) / 5.0f;
    const uint8_t labels[4] = { 0, 2, 1, 2 };
    float *x = net_input(n);
    for (int i = 0; i < 4 * 36; i++)
        x[i] = (float)((i * 53) % 29) / 14.0f - 1.0f;
    net_forward(n, 4, labels, 1, 0.0f);
    net_backward(n, 4, labels, 0.0f);
    float *g = malloc(sizeof(float) * (size_t)n->n_params);
    for (long i = 0; i < n->n_params; i++)
        g[i] = n->grads[i];
    // Finite differences in float through ReLU and max-pool kinks: a loose bound, and a
    // check of the large majority rather than every parameter.
    const float eps = 3e-3f;
    long bad = 0;
    for (long i = 0; i < n->n_params; i++) {
        float keep = n->params[i];
        n->params[i] = keep + eps;
        double up = net_forward(n, 4, labels, 1, 0.0f);
        n->params[i] = keep - eps;
        double down = net_forward(n, 4, labels, 1, 0.0f);
        n->params[i] = keep;
        double num = (up - down) / (2.0 * eps);
        if (fabs(num - g[i]) > 2e-3 + 5e-2 * fabs(num))
            bad++;
    }
    cr_expect(bad <= n->n_params / 50, "%ld of %ld gradients differ from finite differences", bad, n->n_params);
    free(g);
    net_free(n);
}

Test(net, update_follows_sgd_with_momentum_and_weight_decay) {
    char err[256];
    net *n = net_new("fc2", 1, 1, 3, 2, 1, err, sizeof err);
    cr_assert(n, "%s", err);
    for (long i = 0; i < n->n_params; i++) {
        n->params[i] = 0.5f + (float)i, n->grads[i] = 0.25f * (float)i - 1.0f, n->momentum[i] = 0.1f * (float)i;
    }
    const float lr = 0.1f, mu = 0.9f, wd = 0.01f;
    float p0[8], g0[8], v0[8];
    for (long i = 0; i < n->n_params; i++)
        p0[i] = n->params[i], g0[i] = n->grads[i], v0[i] = n->momentum[i];
    net_update(n, lr, mu, wd);
    for (long i = 0; i < n->n_params; i++) {
        double v = mu * v0[i] + g0[i] + wd * p0[i];
        double p = p0[i] - lr * v;
        cr_expect(fabs(n->momentum[i] - v) < 1e-6 && fabs(n->params[i] - p) < 1e-6, "param %ld: %g, expected %g", i,
                  n->params[i], p);
    }
    net_free(n);
}

Test(net, parameters_form_one_block_in_layer_order) {
    char err[256];
    net *n = net_new(NETSPEC_DEFAULT, 28, 28, 1, 10, 2, err, sizeof err);
    cr_assert(n, "%s", err);
    // 5·5·1·32+32 + 5·5·32·64+64 + 7·7·64·128+128 + 128·10+10
    cr_expect_eq(n->n_params, 832 + 51264 + 401536 + 1290);
    cr_expect_eq(n->layers[0].w_off, 0);
    cr_expect_eq(n->layers[9].b_off + 10, n->n_params);
    net_free(n);
}

Test(net, shapes_that_do_not_fit_are_refused) {
    char err[256];
    cr_expect_null(net_new("pool8,pool8,fc10", 28, 28, 1, 10, 2, err, sizeof err));
    cr_expect(strstr(err, "token 2 'pool8'"), "%s", err);
    cr_expect_null(net_new("conv3x3x4,fc5", 28, 28, 1, 10, 2, err, sizeof err));
    cr_expect(strstr(err, "fc10"), "%s", err);
}

/* conv3x3x2,relu,pool2,dropout0.5,fc3 on 4x4x1, 3 classes. By hand, in floats per example:
 *   forward: input 16, conv 4·4·2 = 32, pool 2·2·2 = 8, fc 3, probabilities 3     = 62
 *   training: the dropout mask 8; backward writes softmax's 3 into buffer 0, fc's dx (8)
 *             into buffer 1, pool's dx (32) into buffer 0, and stops at the conv (no
 *             earlier parameters): 8 + max(3, 32) + 8                               = 48
 *   im2col: 4·4·3·3·1 = 144 floats an image, ⌊262144/144⌋ = 1820 images a chunk = 262080;
 *   a further thread: that chunk and its partial dw, db (2·3·3·1 + 2 = 20)     = 262100 */
Test(net, memory_counts_the_buffers_the_passes_write) {
    char err[256];
    net *n = net_new("conv3x3x2,relu,pool2,dropout0.5,fc3", 4, 4, 1, 3, 5, err, sizeof err);
    cr_assert(n, "%s", err);
    net_memory m = net_memory_of(n);
    cr_expect_eq(m.fwd_bytes_per_example, 4 * 62);
    cr_expect_eq(m.train_bytes_per_example, 4 * 48);
    cr_expect_eq(m.workspace_bytes, 4 * 262080);
    cr_expect_eq(m.workspace_bytes_per_thread, 4 * 262100);
    net_free(n);
    // The default network: 47972 floats forward, 31488 in training (the 128-unit mask, 6272
    // and 25088 of the two gradient buffers).
    n = net_new(NETSPEC_DEFAULT, 28, 28, 1, 10, 32, err, sizeof err);
    cr_assert(n, "%s", err);
    m = net_memory_of(n);
    cr_expect_eq(m.fwd_bytes_per_example, 4 * (784 + 25088 + 6272 + 12544 + 3136 + 128 + 10 + 10));
    cr_expect_eq(m.train_bytes_per_example, 4 * (128 + 6272 + 25088));
    net_free(n);
}
