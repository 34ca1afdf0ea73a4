/* sim/eventq.c: the earliest first, ties in insertion order, removal from anywhere. */
#include "sim/eventq.h"

#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

static int by_time_then_seq(const void *a, const void *b) {
    const eventq_node *x = a, *y = b;
    if (x->time_s != y->time_s)
        return x->time_s < y->time_s ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Pops everything and checks it against a sorted copy of the keys (qsort as reference). */
static void assert_pops_sorted(eventq *q, eventq_node *nodes, long n) {
    eventq_node *ref = malloc(sizeof *ref * (size_t)n);
    long m = 0;
    for (long i = 0; i < n; i++)
        if (eventq_node_queued(&nodes[i]))
            ref[m++] = nodes[i];
    qsort(ref, (size_t)m, sizeof *ref, by_time_then_seq);
    cr_assert_eq(eventq_size(q), m);
    for (long i = 0; i < m; i++) {
        eventq_node *got = eventq_pop(q);
        cr_assert_not_null(got);
        cr_assert_eq(got->time_s, ref[i].time_s, "pop %ld: time %g, expected %g", i, got->time_s, ref[i].time_s);
        cr_assert_eq(got->seq, ref[i].seq, "pop %ld: seq %llu, expected %llu", i,
                     (unsigned long long)got->seq, (unsigned long long)ref[i].seq);
        cr_assert_eq(got->heap_index, -1);
    }
    cr_assert_null(eventq_pop(q));
    free(ref);
}

Test(eventq, pops_in_time_order) {
    enum { N = 5000 };
    eventq *q = eventq_new(4);    /* small on purpose: it must grow */
    eventq_node *nodes = malloc(sizeof *nodes * N);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (long i = 0; i < N; i++) {
        eventq_node_init(&nodes[i]);
        cr_assert_eq(eventq_push(q, &nodes[i], gsl_rng_uniform(rng) * 100), 0);
    }
    assert_pops_sorted(q, nodes, N);
    gsl_rng_free(rng);
    free(nodes);
    eventq_free(q);
}

Test(eventq, equal_times_leave_in_insertion_order) {
    enum { N = 300 };
    eventq *q = eventq_new(16);
    eventq_node nodes[N];
    /* Three distinct times, interleaved: within each time, pushes must pop in order. */
    for (int i = 0; i < N; i++) {
        eventq_node_init(&nodes[i]);
        eventq_push(q, &nodes[i], (double)(i % 3));
    }
    for (int t = 0; t < 3; t++)
        for (int i = t; i < N; i += 3) {
            eventq_node *got = eventq_pop(q);
            cr_assert_eq(got, &nodes[i], "time %d: expected node %d, got node %ld", t, i, (long)(got - nodes));
        }
    cr_assert_null(eventq_pop(q));
    eventq_free(q);
}

Test(eventq, peek_does_not_remove) {
    eventq *q = eventq_new(0);
    eventq_node a, b;
    eventq_node_init(&a);
    eventq_node_init(&b);
    cr_assert_null(eventq_peek(q));
    eventq_push(q, &a, 2.0);
    eventq_push(q, &b, 1.0);
    cr_assert_eq(eventq_peek(q), &b);
    cr_assert_eq(eventq_size(q), 2);
    cr_assert_eq(eventq_pop(q), &b);
    cr_assert_eq(eventq_pop(q), &a);
    eventq_free(q);
}

Test(eventq, remove_cancels_a_node_anywhere_and_keeps_the_order) {
    enum { N = 2000 };
    eventq *q = eventq_new(N);
    eventq_node *nodes = malloc(sizeof *nodes * N);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 7);
    for (long i = 0; i < N; i++) {
        eventq_node_init(&nodes[i]);
        /* Coarse times, so many ties too. */
        eventq_push(q, &nodes[i], (double)gsl_rng_uniform_int(rng, 50));
    }
    /* Cancel a third, chosen at random, including the current root. */
    cr_assert_eq(eventq_remove(q, eventq_peek(q)), 0);
    for (long i = 0; i < N; i += 3)
        if (eventq_node_queued(&nodes[i]))
            cr_assert_eq(eventq_remove(q, &nodes[i]), 0);
    assert_pops_sorted(q, nodes, N);
    gsl_rng_free(rng);
    free(nodes);
    eventq_free(q);
}

Test(eventq, removing_a_node_not_queued_fails) {
    eventq *q = eventq_new(4);
    eventq_node a, b;
    eventq_node_init(&a);
    eventq_node_init(&b);
    cr_assert_eq(eventq_remove(q, &a), -1);
    eventq_push(q, &a, 1.0);
    eventq_push(q, &b, 1.0);
    cr_assert_eq(eventq_remove(q, &a), 0);
    cr_assert_eq(eventq_remove(q, &a), -1, "removed twice");
    cr_assert_eq(eventq_pop(q), &b);
    eventq_free(q);
}

Test(eventq, interleaved_push_and_pop_stay_ordered) {
    /* The simulator's pattern: pop the earliest, push it back later. */
    enum { N = 1024, ROUNDS = 20000 };
    eventq *q = eventq_new(N);
    eventq_node *nodes = malloc(sizeof *nodes * N);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    for (long i = 0; i < N; i++) {
        eventq_node_init(&nodes[i]);
        eventq_push(q, &nodes[i], gsl_rng_uniform(rng));
    }
    double last = -1;
    uint64_t last_seq = 0;
    for (long r = 0; r < ROUNDS; r++) {
        eventq_node *n = eventq_pop(q);
        cr_assert(n->time_s > last || (n->time_s == last && n->seq > last_seq), "out of order at %ld", r);
        last = n->time_s;
        last_seq = n->seq;
        eventq_push(q, n, n->time_s + (r % 7 == 0 ? 0.0 : gsl_rng_uniform(rng)));
    }
    gsl_rng_free(rng);
    free(nodes);
    eventq_free(q);
}

Test(eventq, free_null_is_a_no_op) {
    eventq_free(NULL);
}
