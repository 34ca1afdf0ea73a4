/* sim/engine.c: the clock, handlers in time order, resources served one at a time. */
#include "sim/engine.h"

#include <criterion/criterion.h>
#include <math.h>

typedef struct {
    engine *e;
    int who[64];
    double at[64];
    int n;
} log_t;

static void record(void *ctx, int who) {
    log_t *l = ctx;
    l->who[l->n] = who;
    l->at[l->n++] = engine_now(l->e);
}

Test(engine, handlers_run_in_time_order_with_the_clock_at_their_time) {
    log_t l = { .e = engine_new(4) };
    int k = engine_kind(l.e, record, &l);
    engine_at(l.e, 3.0, k, 3);
    engine_at(l.e, 1.0, k, 1);
    engine_at(l.e, 2.0, k, 2);
    engine_at(l.e, 1.0, k, 10);    /* same time as who 1, scheduled later: runs after it */
    cr_assert_eq(engine_run(l.e), 0);
    int want_who[] = { 1, 10, 2, 3 };
    double want_at[] = { 1, 1, 2, 3 };
    cr_assert_eq(l.n, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(l.who[i], want_who[i]);
        cr_assert_eq(l.at[i], want_at[i]);
    }
    cr_assert_eq(engine_events(l.e), 4);
    engine_free(l.e);
}

Test(engine, cancelled_events_do_not_run) {
    log_t l = { .e = engine_new(4) };
    int k = engine_kind(l.e, record, &l);
    engine_event *a = engine_at(l.e, 1.0, k, 1);
    engine_at(l.e, 2.0, k, 2);
    cr_assert_eq(engine_cancel(l.e, a), 0);
    cr_assert_eq(engine_run(l.e), 0);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.who[0], 2);
    engine_free(l.e);
}

Test(engine, a_resource_serves_requests_one_at_a_time_in_arrival_order) {
    /* alpha = 0.5 s, beta = 0.01 s/byte: 100 bytes take 1.5 s, 50 bytes 1 s. */
    log_t l = { .e = engine_new(4) };
    int k = engine_kind(l.e, record, &l);
    int link = engine_resource(l.e, 0.5, 0.01);
    cr_assert_eq(engine_request(l.e, link, 100, k, 1), 0);
    cr_assert_eq(engine_request(l.e, link, 50, k, 2), 0);
    cr_assert_eq(engine_request(l.e, link, 100, k, 3), 0);
    cr_assert_eq(engine_run(l.e), 0);
    double want_at[] = { 1.5, 2.5, 4.0 };
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(l.who[i], i + 1);
        cr_assert_float_eq(l.at[i], want_at[i], 1e-12);
    }
    cr_assert_float_eq(engine_resource_busy_s(l.e, link), 4.0, 1e-12);
    cr_assert_eq(engine_resource_peak_queue(l.e, link), 2);
    engine_free(l.e);
}

Test(engine, many_queued_requests_grow_the_queue_and_keep_their_order) {
    log_t l = { .e = engine_new(4) };
    int k = engine_kind(l.e, record, &l);
    int link = engine_resource(l.e, 1.0, 0.0);
    for (int i = 0; i < 64; i++)
        engine_request(l.e, link, 0, k, i);
    cr_assert_eq(engine_run(l.e), 0);
    for (int i = 0; i < 64; i++) {
        cr_assert_eq(l.who[i], i);
        cr_assert_float_eq(l.at[i], i + 1.0, 1e-12);
    }
    engine_free(l.e);
}

Test(engine, reset_empties_the_queue_and_rewinds_the_clock) {
    log_t l = { .e = engine_new(4) };
    int k = engine_kind(l.e, record, &l);
    engine_at(l.e, 5.0, k, 1);
    engine_reset(l.e);
    cr_assert_eq(engine_pending(l.e), 0);
    cr_assert_eq(engine_now(l.e), 0.0);
    engine_after(l.e, 1.0, k, 2);
    cr_assert_eq(engine_run(l.e), 0);
    cr_assert_eq(l.n, 1);
    cr_assert_eq(l.at[0], 1.0);
    engine_free(l.e);
}

Test(engine, free_null_is_a_no_op) {
    engine_free(NULL);
}
