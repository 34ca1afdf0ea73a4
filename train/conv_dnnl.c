/* conv_dnnl — oneDNN's primitives for one conv layer. Each thread owns a lane: its own
 * stream and one-thread primitives, cached by the size of its block of the batch.
 * Activations, bias and the caller's weights stay in our layouts (nhwc, ohwi); oneDNN
 * chooses the weights' layout its kernels want ("any"), and the weights and their gradient
 * are reordered each pass: O·K·K·C floats, microseconds against the pass. */
#include "train/conv_dnnl.h"

#include "train/layers.h"

#include <dnnl.h>
#include <stdio.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#define CONV_DNNL_SLOTS 4 /* block sizes kept: training's (two), its last partial batch, evaluation */

typedef struct {
    int B; /* the key, the images of a block; 0: empty */
    dnnl_primitive_desc_t fwd_pd, bwd_data_pd, bwd_weights_pd;
    dnnl_primitive_t fwd, bwd_data, bwd_weights;
    dnnl_primitive_t w_to_fwd, w_to_bwd_data, dw_to_user; /* NULL when the layouts agree */
    dnnl_memory_t x, y, dy, dx, bias, dbias, w_user, dw_user; /* the caller's buffers */
    dnnl_memory_t w_fwd, w_bwd_data, dw_bwd;                  /* oneDNN's, when it wants its own */
} conv_dnnl_slot;

typedef struct {
    dnnl_stream_t stream;
    conv_dnnl_slot slot[CONV_DNNL_SLOTS];
    int next_victim;
} conv_dnnl_lane;

struct conv_dnnl {
    int H, W, C, K, O, relu;
    int threads;          /* lanes: omp_get_max_threads() when made */
    dnnl_engine_t engine;
    conv_dnnl_lane *lane; /* (threads) */
    char impl[64];
};

// ----------------------------------------------------------------------------
// building a slot

static void slot_clear(conv_dnnl_slot *s) {
    dnnl_primitive_t prims[] = { s->fwd, s->bwd_data, s->bwd_weights, s->w_to_fwd, s->w_to_bwd_data, s->dw_to_user };
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
        if (prims[i])
            dnnl_primitive_destroy(prims[i]);
    dnnl_primitive_desc_t pds[] = { s->fwd_pd, s->bwd_data_pd, s->bwd_weights_pd };
    for (size_t i = 0; i < 3; i++)
        if (pds[i])
            dnnl_primitive_desc_destroy(pds[i]);
    dnnl_memory_t mems[] = { s->x, s->y, s->dy, s->dx, s->bias, s->dbias, s->w_user, s->dw_user,
                             s->w_fwd, s->w_bwd_data, s->dw_bwd };
    for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    memset(s, 0, sizeof *s);
}

static int is_reference(dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        return 1;
    return strncmp(impl, "ref", 3) == 0;
}

/* *own = oneDNN's layout of the weights (want) when it differs from the caller's (user),
 * with the reorder between them in the direction asked; NULL both when they agree. */
static int weights_reorder(conv_dnnl *cv, const dnnl_memory_desc_t *user, const dnnl_memory_desc_t *want,
                           int to_user, dnnl_memory_t *own, dnnl_primitive_t *reorder) {
    *own = NULL, *reorder = NULL;
    if (dnnl_memory_desc_equal(user, want))
        return 0;
    dnnl_primitive_desc_t pd = NULL;
    if (dnnl_memory_create(own, want, cv->engine, DNNL_MEMORY_ALLOCATE) != dnnl_success)
        return -1;
    dnnl_status_t st = to_user ? dnnl_reorder_primitive_desc_create(&pd, want, cv->engine, user, cv->engine, NULL)
                               : dnnl_reorder_primitive_desc_create(&pd, user, cv->engine, want, cv->engine, NULL);
    if (st == dnnl_success)
        st = dnnl_primitive_create(reorder, pd);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return st == dnnl_success ? 0 : -1;
}

/* The three passes' descriptors for a batch of B; the forward fuses the ReLU. */
static int slot_primitive_descs(conv_dnnl *cv, conv_dnnl_slot *s, const dnnl_memory_desc_t *src,
                                const dnnl_memory_desc_t *dst, const dnnl_memory_desc_t *bias) {
    const int pad = cv->K / 2;
    dnnl_dims_t w_dims = { cv->O, cv->C, cv->K, cv->K }, strides = { 1, 1 }, padding = { pad, pad };
    dnnl_memory_desc_t w_any;
    dnnl_convolution_desc_t fwd, bwd_data, bwd_weights;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_post_ops_t ops = NULL;
    if (dnnl_memory_desc_init_by_tag(&w_any, 4, w_dims, dnnl_f32, dnnl_format_tag_any) != dnnl_success ||
        dnnl_convolution_forward_desc_init(&fwd, dnnl_forward_training, dnnl_convolution_direct, src, &w_any, bias,
                                           dst, strides, padding, padding) != dnnl_success ||
        dnnl_convolution_backward_data_desc_init(&bwd_data, dnnl_convolution_direct, src, &w_any, dst, strides,
                                                 padding, padding) != dnnl_success ||
        dnnl_convolution_backward_weights_desc_init(&bwd_weights, dnnl_convolution_direct, src, &w_any, bias, dst,
                                                    strides, padding, padding) != dnnl_success)
        return -1;
    int rc = -1;
    if (dnnl_primitive_attr_create(&attr) != dnnl_success || dnnl_post_ops_create(&ops) != dnnl_success)
        goto done;
    if (cv->relu && dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f) != dnnl_success)
        goto done;
    if (dnnl_primitive_attr_set_post_ops(attr, ops) != dnnl_success ||
        dnnl_primitive_desc_create(&s->fwd_pd, &fwd, attr, cv->engine, NULL) != dnnl_success ||
        dnnl_primitive_desc_create(&s->bwd_data_pd, &bwd_data, NULL, cv->engine, s->fwd_pd) != dnnl_success ||
        dnnl_primitive_desc_create(&s->bwd_weights_pd, &bwd_weights, NULL, cv->engine, s->fwd_pd) != dnnl_success)
        goto done;
    rc = 0;
done:
    if (ops)
        dnnl_post_ops_destroy(ops);
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    return rc;
}

/* Builds slot s for a block of B images, its primitives for one thread (the caller has set
 * omp_set_num_threads(1), which oneDNN reads); 0, or -1 (s cleared) when oneDNN fails or
 * offers only its reference implementation. */
static int slot_build(conv_dnnl *cv, conv_dnnl_slot *s, int B) {
    dnnl_dims_t x_dims = { B, cv->C, cv->H, cv->W }, y_dims = { B, cv->O, cv->H, cv->W }, b_dims = { cv->O };
    dnnl_dims_t w_dims = { cv->O, cv->C, cv->K, cv->K };
    dnnl_memory_desc_t src, dst, bias, w_user;
    memset(s, 0, sizeof *s);
    if (dnnl_memory_desc_init_by_tag(&src, 4, x_dims, dnnl_f32, dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&dst, 4, y_dims, dnnl_f32, dnnl_nhwc) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&bias, 1, b_dims, dnnl_f32, dnnl_a) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&w_user, 4, w_dims, dnnl_f32, dnnl_ohwi) != dnnl_success ||
        slot_primitive_descs(cv, s, &src, &dst, &bias) != 0)
        goto fail;
    if (is_reference(s->fwd_pd) || is_reference(s->bwd_data_pd) || is_reference(s->bwd_weights_pd))
        goto fail;
    const dnnl_memory_desc_t *w_fwd = dnnl_primitive_desc_query_md(s->fwd_pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *w_bwd = dnnl_primitive_desc_query_md(s->bwd_data_pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *dw = dnnl_primitive_desc_query_md(s->bwd_weights_pd, dnnl_query_diff_weights_md, 0);
    if (weights_reorder(cv, &w_user, w_fwd, 0, &s->w_fwd, &s->w_to_fwd) != 0 ||
        weights_reorder(cv, &w_user, w_bwd, 0, &s->w_bwd_data, &s->w_to_bwd_data) != 0 ||
        weights_reorder(cv, &w_user, dw, 1, &s->dw_bwd, &s->dw_to_user) != 0)
        goto fail;
    struct { dnnl_memory_t *m; const dnnl_memory_desc_t *md; } users[] = {
        { &s->x, &src }, { &s->dx, &src }, { &s->y, &dst }, { &s->dy, &dst },
        { &s->bias, &bias }, { &s->dbias, &bias }, { &s->w_user, &w_user }, { &s->dw_user, &w_user },
    };
    for (size_t i = 0; i < sizeof users / sizeof users[0]; i++)
        if (dnnl_memory_create(users[i].m, users[i].md, cv->engine, DNNL_MEMORY_NONE) != dnnl_success)
            goto fail;
    if (dnnl_primitive_create(&s->fwd, s->fwd_pd) != dnnl_success ||
        dnnl_primitive_create(&s->bwd_data, s->bwd_data_pd) != dnnl_success ||
        dnnl_primitive_create(&s->bwd_weights, s->bwd_weights_pd) != dnnl_success)
        goto fail;
    s->B = B;
    return 0;
fail:
    slot_clear(s);
    return -1;
}

/* Lane t's slot for a block of B images, built when missing; NULL on failure. */
static conv_dnnl_slot *slot_for(conv_dnnl *cv, int t, int B) {
    conv_dnnl_lane *l = &cv->lane[t];
    for (int i = 0; i < CONV_DNNL_SLOTS; i++)
        if (l->slot[i].B == B)
            return &l->slot[i];
    conv_dnnl_slot *s = &l->slot[l->next_victim];
    l->next_victim = (l->next_victim + 1) % CONV_DNNL_SLOTS;
    if (s->B)
        slot_clear(s);
    return slot_build(cv, s, B) == 0 ? s : NULL;
}

// ----------------------------------------------------------------------------
// the contract

conv_dnnl *conv_dnnl_new(int H, int W, int C, int K, int O, int relu, int probe_batch) {
    conv_dnnl *cv = calloc(1, sizeof *cv);
    if (!cv)
        return NULL;
    const int threads = omp_get_max_threads() > 0 ? omp_get_max_threads() : 1;
    *cv = (conv_dnnl){ .H = H, .W = W, .C = C, .K = K, .O = O, .relu = relu, .threads = threads };
    cv->lane = calloc((size_t)threads, sizeof *cv->lane);
    int ok = cv->lane && K % 2 == 1 && dnnl_engine_create(&cv->engine, dnnl_cpu, 0) == dnnl_success;
    for (int t = 0; ok && t < threads; t++)
        ok = dnnl_stream_create(&cv->lane[t].stream, cv->engine, dnnl_stream_default_flags) == dnnl_success;
    /* Probe lane 0 at its block of a probe batch, with one thread, as a pass builds it. */
    const int block = probe_batch / threads > 0 ? probe_batch / threads : 1;
    omp_set_num_threads(1);
    conv_dnnl_slot *s = ok ? slot_for(cv, 0, block) : NULL;
    omp_set_num_threads(threads);
    const char *impl = NULL;
    if (!s || dnnl_primitive_desc_query(s->fwd_pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success) {
        conv_dnnl_free(cv);
        return NULL;
    }
    snprintf(cv->impl, sizeof cv->impl, "%s", impl ? impl : "?");
    return cv;
}

void conv_dnnl_free(conv_dnnl *cv) {
    if (!cv)
        return;
    for (int t = 0; cv->lane && t < cv->threads; t++) {
        for (int i = 0; i < CONV_DNNL_SLOTS; i++)
            slot_clear(&cv->lane[t].slot[i]);
        if (cv->lane[t].stream)
            dnnl_stream_destroy(cv->lane[t].stream);
    }
    free(cv->lane);
    if (cv->engine)
        dnnl_engine_destroy(cv->engine);
    free(cv);
}

const char *conv_dnnl_impl(const conv_dnnl *cv) { return cv->impl; }

int conv_dnnl_threads(const conv_dnnl *cv) { return cv->threads; }

static int run(dnnl_stream_t stream, dnnl_primitive_t p, int n, const dnnl_exec_arg_t *args) {
    return dnnl_primitive_execute(p, stream, n, args) == dnnl_success && dnnl_stream_wait(stream) == dnnl_success
               ? 0
               : -1;
}

/* Points the caller's memories at this call's buffers (oneDNN does not write to inputs). */
static int bind(dnnl_memory_t m, const float *p) {
    return p && dnnl_memory_set_data_handle(m, (void *)(size_t)p) != dnnl_success ? -1 : 0;
}

/* from, reordered into `to` when there is a reorder (then `to`, else from); NULL on failure. */
static dnnl_memory_t reordered(dnnl_stream_t stream, dnnl_primitive_t reorder, dnnl_memory_t from, dnnl_memory_t to) {
    if (!reorder)
        return from;
    dnnl_exec_arg_t args[] = { { DNNL_ARG_FROM, from }, { DNNL_ARG_TO, to } };
    return run(stream, reorder, 2, args) ? NULL : to;
}

/* The blocks: thread t of nt takes images [*b0, *b1), contiguous, sizes within one. */
static void block_of(int B, int t, int nt, long *b0, long *b1) {
    *b0 = (long)B * t / nt;
    *b1 = (long)B * (t + 1) / nt;
}

static int forward_block(conv_dnnl *cv, int t, const float *x, const float *w, const float *bias, float *y, int B) {
    conv_dnnl_slot *s = slot_for(cv, t, B);
    if (!s || bind(s->x, x) || bind(s->w_user, w) || bind(s->bias, bias) || bind(s->y, y))
        return -1;
    const dnnl_stream_t st = cv->lane[t].stream;
    dnnl_memory_t w_mem = reordered(st, s->w_to_fwd, s->w_user, s->w_fwd);
    if (!w_mem)
        return -1;
    dnnl_exec_arg_t args[] = { { DNNL_ARG_SRC, s->x }, { DNNL_ARG_WEIGHTS, w_mem }, { DNNL_ARG_BIAS, s->bias },
                               { DNNL_ARG_DST, s->y } };
    return run(st, s->fwd, 4, args);
}

/* Threads at most, and no more than images: a thread of an empty block would build for 0. */
static int threads_for_batch(const conv_dnnl *cv, int B) { return B < cv->threads ? (B > 0 ? B : 1) : cv->threads; }

int conv_dnnl_forward(conv_dnnl *cv, const float *x, const float *w, const float *bias, float *y, int B) {
    const long in = (long)cv->H * cv->W * cv->C, out = (long)cv->H * cv->W * cv->O;
    int failed = 0;
#pragma omp parallel num_threads(threads_for_batch(cv, B)) reduction(| : failed)
    {
        const int t = omp_get_thread_num();
        long b0, b1;
        block_of(B, t, omp_get_num_threads(), &b0, &b1);
        omp_set_num_threads(1); /* oneDNN inside this thread: one thread (this region's ICV only) */
        failed |= forward_block(cv, t, x + b0 * in, w, bias, y + b0 * out, (int)(b1 - b0));
    }
    return failed ? -1 : 0;
}

/* Lane t's block: the weights' gradient into dw and db, the input's into dx (when not NULL). */
static int backward_block(conv_dnnl *cv, int t, float *dy, const float *x, const float *y, const float *w,
                          float *dw, float *db, float *dx, int B) {
    conv_dnnl_slot *s = slot_for(cv, t, B);
    if (!s || bind(s->x, x) || bind(s->dy, dy) || bind(s->w_user, w) || bind(s->dw_user, dw) ||
        bind(s->dbias, db) || bind(s->dx, dx))
        return -1;
    const dnnl_stream_t st = cv->lane[t].stream;
    if (y) {
        const long n = (long)B * cv->H * cv->W * cv->O;
#pragma omp simd
        for (long i = 0; i < n; i++)
            dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    }
    dnnl_exec_arg_t wargs[] = { { DNNL_ARG_SRC, s->x }, { DNNL_ARG_DIFF_DST, s->dy },
                                { DNNL_ARG_DIFF_WEIGHTS, s->dw_to_user ? s->dw_bwd : s->dw_user },
                                { DNNL_ARG_DIFF_BIAS, s->dbias } };
    if (run(st, s->bwd_weights, 4, wargs) || !reordered(st, s->dw_to_user, s->dw_bwd, s->dw_user))
        return -1;
    if (!dx)
        return 0;
    dnnl_memory_t w_mem = reordered(st, s->w_to_bwd_data, s->w_user, s->w_bwd_data);
    if (!w_mem)
        return -1;
    dnnl_exec_arg_t dargs[] = { { DNNL_ARG_DIFF_DST, s->dy }, { DNNL_ARG_WEIGHTS, w_mem },
                                { DNNL_ARG_DIFF_SRC, s->dx } };
    return run(st, s->bwd_data, 3, dargs);
}

int conv_dnnl_backward(conv_dnnl *cv, float *dy, const float *x, const float *y, const float *w, float *dw,
                       float *db, float *dx, float *ws, int B) {
    const long in = (long)cv->H * cv->W * cv->C, out = (long)cv->H * cv->W * cv->O;
    const long n_w = (long)cv->O * cv->K * cv->K * cv->C;
    int failed = 0;
#pragma omp parallel num_threads(threads_for_batch(cv, B)) reduction(| : failed)
    {
        const int t = omp_get_thread_num(), T = omp_get_num_threads();
        long b0, b1;
        block_of(B, t, T, &b0, &b1);
        omp_set_num_threads(1);
        float *my_dw = t == 0 ? dw : ws + (long)(t - 1) * (n_w + cv->O);
        float *my_db = t == 0 ? db : my_dw + n_w;
        failed |= backward_block(cv, t, dy + b0 * out, x + b0 * in, y ? y + b0 * out : NULL, w, my_dw, my_db,
                                 dx ? dx + b0 * in : NULL, (int)(b1 - b0));
        if (T > 1) { /* the other threads' shares, summed in thread order: deterministic */
#pragma omp barrier
            conv_sum_partials(dw, db, ws, n_w, cv->O, t, T);
        }
    }
    return failed ? -1 : 0;
}
