/* net — shapes, buffers, initialisation and the passes over the layer list. */
#include "train/net.h"

#include "train/layers.h"
#include "util/host.h"

#include <gsl/gsl_randist.h>
#include <zlib.h>
#include <omp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long shape_size(int h, int w, int c) { return (long)h * w * c; }

/* Layer i's backward computes its input's gradient only if some earlier layer has
 * parameters: the passes, the buffers they write and the FLOPs counted all follow it. */
static int needs_input_gradient(const net *n, int i) {
    for (int j = 0; j < i; j++)
        if (n->layers[j].w_off >= 0)
            return 1;
    return 0;
}

/* Convolutions go through oneDNN where it has a fast implementation; SPEEDUP_CONV=im2col
 * keeps layers.c's im2col + sgemm (experiments/bench-train compares the two). */
static int conv_engine_is_dnnl(void) {
    const char *e = getenv("SPEEDUP_CONV");
    return !(e && strcmp(e, "im2col") == 0);
}

/* Shapes and parameter offsets of every layer; -1 with the reason when they do not fit. */
static int plan(net *n, char *err, int errlen) {
    int h = n->h, w = n->w, c = n->c;
    long off = 0;
    for (int i = 0; i < n->spec.n; i++) {
        net_layer *L = &n->layers[i];
        L->spec = n->spec.layers[i];
        L->h = h, L->w = w, L->c = c;
        L->w_off = L->b_off = -1;
        switch (L->spec.kind) {
        case LAYER_CONV:
            c = L->spec.out;
            L->n_w = (long)c * L->spec.k * L->spec.k * L->c;
            break;
        case LAYER_POOL:
            if (h / L->spec.k < 1 || w / L->spec.k < 1) {
                snprintf(err, (size_t)errlen, "token %d 'pool%d': input is only %dx%d", i + 1, L->spec.k,
                         h, w);
                return -1;
            }
            h /= L->spec.k, w /= L->spec.k;
            break;
        case LAYER_FC:
            L->n_w = (long)L->spec.out * shape_size(h, w, c);
            h = w = 1, c = L->spec.out;
            break;
        case LAYER_RELU:
        case LAYER_DROPOUT:
            break;
        }
        if (L->spec.kind == LAYER_CONV || L->spec.kind == LAYER_FC) {
            L->w_off = off;
            L->b_off = off + L->n_w;
            off += L->n_w + c;
        }
        L->oh = h, L->ow = w, L->oc = c;
    }
    if (n->spec.n == 0 || n->layers[n->spec.n - 1].spec.kind != LAYER_FC ||
        n->layers[n->spec.n - 1].spec.out != n->classes) {
        snprintf(err, (size_t)errlen, "token %d: the last layer must be fc%d (one unit per class)",
                 n->spec.n, n->classes);
        return -1;
    }
    if (off > (1L << 28)) {
        snprintf(err, (size_t)errlen, "%ld parameters: more than %ld", off, 1L << 28);
        return -1;
    }
    n->n_layers = n->spec.n;
    n->n_params = off;
    return 0;
}

static void *alloc_floats(long count, int *failed) {
    void *p = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
    if (!p)
        *failed = 1;
    return p;
}

/* A net with its shapes planned and nothing allocated; NULL with err. */
static net *net_planned(const char *spec_text, int h, int w, int c, int classes, int max_batch, char *err,
                        int errlen) {
    net *n = calloc(1, sizeof *n);
    if (!n) {
        snprintf(err, (size_t)errlen, "out of memory");
        return NULL;
    }
    if (strlen(spec_text) >= sizeof n->spec_text) {
        snprintf(err, (size_t)errlen, "network spec longer than %zu characters", sizeof n->spec_text - 1);
        free(n);
        return NULL;
    }
    snprintf(n->spec_text, sizeof n->spec_text, "%s", spec_text);
    n->h = h, n->w = w, n->c = c, n->classes = classes, n->max_batch = max_batch;
    n->in_mean = 0.0f, n->in_std = 1.0f;
    n->threads = omp_get_max_threads();
    if (h < 1 || w < 1 || c < 1 || classes < 1 || max_batch < 1) {
        snprintf(err, (size_t)errlen, "input %dx%dx%d, %d classes, batch %d: each must be >= 1", h, w, c, classes,
                 max_batch);
        free(n);
        return NULL;
    }
    if (netspec_parse(spec_text, &n->spec, err, errlen) || plan(n, err, errlen)) {
        free(n);
        return NULL;
    }
    return n;
}

/* Floats net_new allocates for n (in double: the factors of a hostile shape overflow a
 * long), as the loop below allocates them. */
static double buffer_floats(const net *n) {
    const double B = n->max_batch;
    double total = 3.0 * (double)n->n_params + B * (double)shape_size(n->h, n->w, n->c) + B * n->classes;
    double largest = (double)shape_size(n->h, n->w, n->c);
    for (int i = 0; i < n->n_layers; i++) {
        const net_layer *L = &n->layers[i];
        const double out_size = (double)L->oh * L->ow * L->oc;
        largest = out_size > largest ? out_size : largest;
        if (L->spec.kind != LAYER_RELU)
            total += B * out_size; // dropout: its mask
        if (L->spec.kind == LAYER_CONV) // both fit a long for any shape plan() accepts
            total += (double)conv_col_floats(n->max_batch, L->h, L->w, L->c, L->spec.k, n->threads) +
                     (double)conv_workspace_floats(L->spec.k, L->c, L->oc, n->threads);
    }
    return total + 2.0 * B * largest;
}

net *net_plan(const char *spec_text, int h, int w, int c, int classes, char *err, int errlen) {
    return net_planned(spec_text, h, w, c, classes, 1, err, errlen);
}

net *net_new(const char *spec_text, int h, int w, int c, int classes, int max_batch, char *err, int errlen) {
    net *n = net_planned(spec_text, h, w, c, classes, max_batch, err, errlen);
    if (!n)
        return NULL;
    const double floats = buffer_floats(n);
    if (floats > (double)NET_MAX_BUFFER_FLOATS) {
        snprintf(err, (size_t)errlen, "'%s' on %dx%dx%d inputs at batch %d needs %.3g GiB of buffers: more than %ld GiB",
                 spec_text, h, w, c, max_batch, floats * sizeof(float) / 1073741824.0,
                 (long)(NET_MAX_BUFFER_FLOATS * sizeof(float) >> 30));
        free(n);
        return NULL;
    }
    const long B = max_batch;
    int failed = 0;
    n->params = alloc_floats(n->n_params, &failed);
    n->grads = alloc_floats(n->n_params, &failed);
    n->momentum = alloc_floats(n->n_params, &failed);
    n->input = alloc_floats(B * shape_size(h, w, c), &failed);
    n->probs = alloc_floats(B * classes, &failed);
    long largest = shape_size(h, w, c);
    float *prev = n->input;
    for (int i = 0; i < n->n_layers; i++) {
        net_layer *L = &n->layers[i];
        long out_size = shape_size(L->oh, L->ow, L->oc);
        largest = out_size > largest ? out_size : largest;
        L->in = prev;
        switch (L->spec.kind) {
        case LAYER_RELU:
            L->out = prev;
            L->relu_fused = i > 0 && n->layers[i - 1].spec.kind == LAYER_CONV;
            break;
        case LAYER_DROPOUT:
            L->out = prev;
            L->mask = alloc_floats(B * out_size, &failed);
            break;
        case LAYER_CONV:
            L->col = alloc_floats(conv_col_floats(max_batch, L->h, L->w, L->c, L->spec.k, n->threads), &failed);
            L->ws = alloc_floats(conv_workspace_floats(L->spec.k, L->c, L->oc, n->threads), &failed);
            L->relu_fused = i + 1 < n->n_layers && n->spec.layers[i + 1].kind == LAYER_RELU;
            if (conv_engine_is_dnnl())
                L->dnnl = conv_dnnl_new(L->h, L->w, L->c, L->spec.k, L->oc, L->relu_fused, max_batch);
            L->out = alloc_floats(B * out_size, &failed);
            break;
        case LAYER_POOL:
            L->out = alloc_floats(B * out_size, &failed);
            break;
        case LAYER_FC:
            L->out = alloc_floats(B * out_size, &failed);
            break;
        }
        prev = L->out;
    }
    n->dbuf[0] = alloc_floats(B * largest, &failed);
    n->dbuf[1] = alloc_floats(B * largest, &failed);
    n->dropout_rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (failed || !n->dropout_rng) {
        snprintf(err, (size_t)errlen, "out of memory for the network's buffers (batch %d)", max_batch);
        net_free(n);
        return NULL;
    }
    return n;
}

void net_free(net *n) {
    if (!n)
        return;
    for (int i = 0; i < n->n_layers; i++) {
        net_layer *L = &n->layers[i];
        free(L->col);
        free(L->ws);
        conv_dnnl_free(L->dnnl);
        free(L->mask);
        if (L->spec.kind != LAYER_RELU && L->spec.kind != LAYER_DROPOUT)
            free(L->out);
    }
    free(n->params);
    free(n->grads);
    free(n->momentum);
    free(n->input);
    free(n->probs);
    free(n->dbuf[0]);
    free(n->dbuf[1]);
    gsl_rng_free(n->dropout_rng);
    free(n);
}

void net_init(net *n, unsigned long seed) {
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, seed);
    memset(n->params, 0, sizeof(float) * (size_t)n->n_params);
    memset(n->momentum, 0, sizeof(float) * (size_t)n->n_params);
    for (int i = 0; i < n->n_layers; i++) {
        const net_layer *L = &n->layers[i];
        if (L->w_off < 0)
            continue;
        long fan_in = L->spec.kind == LAYER_CONV ? (long)L->spec.k * L->spec.k * L->c
                                                 : shape_size(L->h, L->w, L->c);
        double sd = sqrt(2.0 / (double)fan_in);
        for (long j = 0; j < L->n_w; j++)
            n->params[L->w_off + j] = (float)gsl_ran_gaussian_ziggurat(rng, sd);
    }
    gsl_rng_free(rng);
    net_seed_dropout(n, seed ^ 0x5eedUL);
}

void net_seed_dropout(net *n, unsigned long seed) {
    n->dropout_seed = seed;
    n->dropout_pos = 0;
}

void net_dropout_at(net *n, long position) { n->dropout_pos = position; }

float *net_input(net *n) { return n->input; }

/* A net's layers index its layer costs and times. */
_Static_assert(NETWORK_MAX_LAYERS >= NETSPEC_MAX_LAYERS, "a network's layers fit network_cost");

/* The kind a layer's time counts in: a relu after a conv is fused into it. */
static network_kind kind_of(const net *n, int i) {
    switch (n->layers[i].spec.kind) {
    case LAYER_CONV: return NETWORK_CONV;
    case LAYER_FC: return NETWORK_FC;
    case LAYER_POOL: return NETWORK_POOL;
    case LAYER_RELU: return i > 0 && n->layers[i - 1].spec.kind == LAYER_CONV ? NETWORK_CONV : NETWORK_ELEMENTWISE;
    case LAYER_DROPOUT: return NETWORK_ELEMENTWISE;
    }
    return NETWORK_ELEMENTWISE;
}

float net_forward(net *n, int count, const uint8_t *labels, int training, float divisor) {
    const int B = count;
    for (int i = 0; i < n->n_layers; i++) {
        net_layer *L = &n->layers[i];
        const float *W = L->w_off >= 0 ? n->params + L->w_off : NULL;
        const float *b = L->b_off >= 0 ? n->params + L->b_off : NULL;
        const long out_n = (long)B * L->oh * L->ow * L->oc;
        const double t0 = training ? host_monotonic_s() : 0.0;
        switch (L->spec.kind) {
        case LAYER_CONV:
            if (!L->dnnl || conv_dnnl_forward(L->dnnl, L->in, W, b, L->out, B) != 0)
                conv_forward(L->in, W, b, L->col, L->out, B, L->h, L->w, L->c, L->spec.k, L->oc, L->relu_fused,
                             n->threads);
            break;
        case LAYER_RELU:
            if (!L->relu_fused)
                relu_forward(L->out, out_n);
            break;
        case LAYER_POOL:
            maxpool_forward(L->in, L->out, B, L->h, L->w, L->c, L->spec.k);
            break;
        case LAYER_FC:
            dense_forward(L->in, W, b, L->out, B, (int)shape_size(L->h, L->w, L->c), L->oc);
            break;
        case LAYER_DROPOUT:
            if (!training || L->spec.p == 0.0f)
                break;
            // Each example's mask comes from its own stream, keyed by (seed, its position in
            // the epoch, layer): the same for any thread count and for any split of a batch
            // over MPI ranks.
            {
                const float keep = 1.0f / (1.0f - L->spec.p);
                const long per = out_n / (B > 0 ? B : 1);
                for (int b = 0; b < B; b++) {
                    unsigned long key = n->dropout_seed ^ ((unsigned long)(n->dropout_pos + b) * 0x9E3779B97F4A7C15UL);
                    gsl_rng_set(n->dropout_rng, key + (unsigned long)i * 0x632BE59BD9B4E019UL);
                    for (long j = 0; j < per; j++)
                        L->mask[b * per + j] = gsl_rng_uniform(n->dropout_rng) < L->spec.p ? 0.0f : keep;
                }
            }
            dropout_apply(L->out, L->mask, out_n);
            break;
        }
        if (training)
            n->layer_s[i] += host_monotonic_s() - t0;
    }
    if (training)
        n->dropout_pos += B; // consecutive steps without net_dropout_at get fresh masks
    const float *logits = n->layers[n->n_layers - 1].out;
    return softmax_xent_forward(logits, labels, n->probs, B, n->classes, divisor > 0 ? divisor : (float)B);
}

void net_backward(net *n, int count, const uint8_t *labels, float divisor) {
    const int B = count;
    int cur = 0; // dbuf[cur] holds ∂loss/∂(output of layer i)
    softmax_xent_backward(n->probs, labels, n->dbuf[cur], B, n->classes, divisor > 0 ? divisor : (float)B);
    for (int i = n->n_layers - 1; i >= 0; i--) {
        net_layer *L = &n->layers[i];
        const float *W = L->w_off >= 0 ? n->params + L->w_off : NULL;
        float *dW = L->w_off >= 0 ? n->grads + L->w_off : NULL;
        float *db = L->b_off >= 0 ? n->grads + L->b_off : NULL;
        const long out_n = (long)B * L->oh * L->ow * L->oc;
        float *dy = n->dbuf[cur];
        const int need_dx = needs_input_gradient(n, i);
        float *dx = need_dx ? n->dbuf[1 - cur] : NULL;
        const double t0 = host_monotonic_s();
        switch (L->spec.kind) {
        case LAYER_CONV:
            if (!L->dnnl ||
                conv_dnnl_backward(L->dnnl, dy, L->in, L->relu_fused ? L->out : NULL, W, dW, db, dx, L->ws, B) != 0)
                conv_backward(dy, L->in, L->relu_fused ? L->out : NULL, W, L->col, dW, db, dx, L->ws,
                              n->threads - 1, n->threads, B, L->h, L->w, L->c, L->spec.k, L->oc);
            cur = 1 - cur;
            break;
        case LAYER_FC:
            dense_backward(dy, L->in, W, dW, db, dx, B, (int)shape_size(L->h, L->w, L->c), L->oc);
            cur = 1 - cur;
            break;
        case LAYER_POOL:
            if (need_dx)
                maxpool_backward(dy, L->in, L->out, dx, B, L->h, L->w, L->c, L->spec.k);
            cur = 1 - cur;
            break;
        case LAYER_RELU:
            if (!L->relu_fused) // else conv_backward masks dy
                relu_backward(L->out, dy, out_n); // in place: out is the post-ReLU activation
            break;
        case LAYER_DROPOUT:
            if (L->spec.p > 0.0f)
                dropout_apply(dy, L->mask, out_n);
            break;
        }
        n->layer_s[i] += host_monotonic_s() - t0;
        if (!need_dx)
            break;
    }
}

void net_sgd(float *p, float *v, const float *g, long n, float lr, float momentum, float weight_decay) {
    // PyTorch's SGD: v = μ·v + (g + λ·p); p -= lr·v
#pragma omp simd
    for (long i = 0; i < n; i++) {
        v[i] = momentum * v[i] + g[i] + weight_decay * p[i];
        p[i] -= lr * v[i];
    }
}

void net_update(net *n, float lr, float momentum, float weight_decay) {
    const long N = n->n_params;
    // Each thread its contiguous share: every element sees net_sgd's arithmetic, so the
    // weights do not depend on the thread count.
#pragma omp parallel if (N >= 100000)
    {
#ifdef _OPENMP
        const long t = omp_get_thread_num(), nt = omp_get_num_threads();
#else
        const long t = 0, nt = 1;
#endif
        const long lo = N * t / nt, hi = N * (t + 1) / nt;
        net_sgd(n->params + lo, n->momentum + lo, n->grads + lo, hi - lo, lr, momentum, weight_decay);
    }
}

int net_count_correct(const net *n, int count, const uint8_t *labels) {
    int correct = 0;
    for (int b = 0; b < count; b++) {
        const float *p = n->probs + (long)b * n->classes;
        int best = 0;
        for (int o = 1; o < n->classes; o++)
            if (p[o] > p[best])
                best = o;
        correct += best == labels[b];
    }
    return correct;
}

net_memory net_memory_of(const net *n) {
    long fwd = shape_size(n->h, n->w, n->c) + n->classes, masks = 0, col = 0, per_thread = 0;
    for (int i = 0; i < n->n_layers; i++) {
        const net_layer *L = &n->layers[i];
        const long out_size = shape_size(L->oh, L->ow, L->oc);
        if (L->spec.kind == LAYER_CONV) {
            const long chunk = conv_col_floats(1 << 30, L->h, L->w, L->c, L->spec.k, 1);
            col += chunk;
            per_thread += chunk + conv_workspace_floats(L->spec.k, L->c, L->oc, 2);
        }
        if (L->spec.kind == LAYER_CONV || L->spec.kind == LAYER_POOL || L->spec.kind == LAYER_FC)
            fwd += out_size;
        if (L->spec.kind == LAYER_DROPOUT)
            masks += out_size;
    }
    // net_backward's walk: softmax's gradient into dbuf[0], then each conv, fc and pool
    // writes its dx into the other buffer while an earlier layer has parameters.
    long written[2] = { n->classes, 0 };
    int cur = 0;
    for (int i = n->n_layers - 1; i >= 0; i--) {
        const net_layer *L = &n->layers[i];
        const int need_dx = needs_input_gradient(n, i);
        if (L->spec.kind == LAYER_CONV || L->spec.kind == LAYER_FC || L->spec.kind == LAYER_POOL) {
            const long in_size = shape_size(L->h, L->w, L->c);
            if (need_dx && in_size > written[1 - cur])
                written[1 - cur] = in_size;
            cur = 1 - cur;
        }
        if (!need_dx)
            break;
    }
    const long f = (long)sizeof(float);
    return (net_memory){ .fwd_bytes_per_example = f * fwd,
                         .train_bytes_per_example = f * (masks + written[0] + written[1]),
                         .workspace_bytes = f * col, .workspace_bytes_per_thread = f * per_thread };
}

/* The (output position, kernel tap) pairs along one side of n positions whose input is
 * inside the image ("same" padding k/2): a direct convolution skips the others. */
static double valid_taps(int n, int k) {
    const int pad = k / 2;
    double taps = 0;
    for (int o = 0; o < n; o++)
        for (int t = 0; t < k; t++)
            taps += o + t - pad >= 0 && o + t - pad < n;
    return taps;
}

/* A layer's work (core/network.h): conv and fc by their FLOPs, activations by the bytes
 * they move (oneDNN's direct convolution builds no im2col buffer), weights once a step; a
 * relu fused into its conv is part of the conv.
 * The FLOPs are those done: a conv's multiply-adds over the image, not its zero padding
 * (oneDNN skips it), and no input gradient where no earlier layer has parameters. */
static network_layer layer_cost(const net *n, int i) {
    const net_layer *L = &n->layers[i];
    const double in = (double)L->h * L->w * L->c, out = (double)L->oh * L->ow * L->oc, f = sizeof(float);
    const double passes = needs_input_gradient(n, i) ? 3.0 : 2.0; /* forward, the weights' gradient, the input's */
    /* conv, fc and pool read their input and write their output in each of three passes */
    network_layer c = { .kind = kind_of(n, i), .bytes = f * 3 * (in + out) };
    const int windowed = L->spec.kind == LAYER_CONV || L->spec.kind == LAYER_POOL;
    c.shape = (network_shape){ .channels_in = L->spec.kind == LAYER_FC ? L->h * L->w * L->c : L->c,
                               .channels_out = L->oc, .kernel = windowed ? L->spec.k : 1,
                               .positions = (long)L->oh * L->ow };
    switch (L->spec.kind) {
    case LAYER_CONV: {
        const double macs = valid_taps(L->h, L->spec.k) * valid_taps(L->w, L->spec.k) * L->c * L->oc;
        c.flops = 2.0 * passes * macs;
        c.step_bytes = f * passes * (double)L->n_w;
        break;
    }
    case LAYER_FC:
        c.flops = 2.0 * passes * (double)L->n_w;
        c.step_bytes = f * passes * (double)L->n_w;
        break;
    case LAYER_RELU: c.bytes = c.kind == NETWORK_CONV ? 0.0 : f * 5 * out; break;
    case LAYER_DROPOUT: c.bytes = L->spec.p > 0 ? f * 6 * out : 0.0; break;
    case LAYER_POOL: break;
    }
    return c;
}

network_cost net_cost_of(const net *n) {
    network_cost c = { .n = n->n_layers, .params = n->n_params };
    for (int i = 0; i < n->n_layers; i++)
        c.layer[i] = layer_cost(n, i);
    return c;
}

double net_forward_flops(const net *n) {
    double f = 0.0;
    for (int i = 0; i < n->n_layers; i++) {
        const net_layer *L = &n->layers[i];
        if (L->spec.kind == LAYER_CONV)
            f += 2.0 * L->h * L->w * (double)L->n_w;
        else if (L->spec.kind == LAYER_FC)
            f += 2.0 * (double)L->n_w;
    }
    return f;
}

unsigned long net_params_crc32(const net *n) {
    uLong crc = crc32(0L, Z_NULL, 0);
    const Bytef *p = (const Bytef *)n->params;
    const size_t bytes = sizeof(float) * (size_t)n->n_params; // < 2^30: one call
    return crc32(crc, p, (uInt)bytes);
}
