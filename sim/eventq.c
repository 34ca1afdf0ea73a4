#include "sim/eventq.h"

#include <stdlib.h>

/* The heap is 8-ary: a third of a binary heap's depth, so a pop moves about log8(n)
 * slots, and a node's eight children are 128 contiguous bytes. A slot keeps the node's
 * time next to the pointer, so sifting compares times in the heap array itself; the least
 * child is found by a tournament of selects, not a chain of branches (with random times a
 * branch on a comparison is mispredicted half the time). Each step was kept for what it
 * gained on the 1024-worker benchmark: experiments/bench-sim/README.md. */
enum { ARITY = 8 };

typedef struct {
    double time_s;
    eventq_node *node;
} slot;

struct eventq {
    slot *heap;              /* (cap): heap[0] is the earliest */
    long n, cap;
    uint64_t next_seq;
};

static inline int before(const slot *a, const slot *b) {
    int lt = a->time_s < b->time_s;
    /* Equal times are rare with random spans and always there without: either way the
     * branch predicts well, and only then is the node's sequence number read. */
    if (__builtin_expect(a->time_s == b->time_s, 0))
        lt = a->node->seq < b->node->seq;
    return lt;
}

static inline void place(eventq *q, long i, slot s) {
    q->heap[i] = s;
    s.node->heap_index = i;
}

/* Moves s up from the hole at i to where it belongs. */
static void sift_up(eventq *q, long i, slot s) {
    while (i > 0) {
        long parent = (i - 1) / ARITY;
        if (!before(&s, &q->heap[parent]))
            break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, s);
}

/* The smallest of i's children, or -1 when i is a leaf. */
static inline long least_child(const eventq *q, long i) {
    long first = ARITY * i + 1;
    if (first + ARITY <= q->n) {
        const slot *h = q->heap;
        long a = first + before(&h[first + 1], &h[first]);
        long b = first + 2 + before(&h[first + 3], &h[first + 2]);
        long c = first + 4 + before(&h[first + 5], &h[first + 4]);
        long d = first + 6 + before(&h[first + 7], &h[first + 6]);
        a = before(&h[b], &h[a]) ? b : a;
        c = before(&h[d], &h[c]) ? d : c;
        return before(&h[c], &h[a]) ? c : a;
    }
    if (first >= q->n)
        return -1;
    long best = first;
    for (long c = first + 1; c < q->n; c++)
        if (before(&q->heap[c], &q->heap[best]))
            best = c;
    return best;
}

/* Moves s down from the hole at i to where it belongs. */
static void sift_down(eventq *q, long i, slot s) {
    long child;
    while ((child = least_child(q, i)) >= 0 && before(&q->heap[child], &s)) {
        place(q, i, q->heap[child]);
        i = child;
    }
    place(q, i, s);
}

/* Pop's refill (Floyd): the slot that fills the root's hole comes from the bottom and
 * almost always belongs near the bottom, so walk the hole down to a leaf promoting the
 * least child without comparing against it, then let it rise the little it must. */
static void refill_root(eventq *q, slot s) {
    long i = 0, child;
    while ((child = least_child(q, i)) >= 0) {
        place(q, i, q->heap[child]);
        i = child;
    }
    sift_up(q, i, s);
}

eventq *eventq_new(long capacity) {
    eventq *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->cap = capacity > 16 ? capacity : 16;
    q->heap = malloc(sizeof *q->heap * (size_t)q->cap);
    if (!q->heap) {
        free(q);
        return NULL;
    }
    return q;
}

void eventq_free(eventq *q) {
    if (!q)
        return;
    free(q->heap);
    free(q);
}

int eventq_push(eventq *q, eventq_node *n, double time_s) {
    if (q->n == q->cap) {
        slot *grown = realloc(q->heap, sizeof *grown * (size_t)q->cap * 2);
        if (!grown)
            return -1;
        q->heap = grown;
        q->cap *= 2;
    }
    n->time_s = time_s;
    n->seq = q->next_seq++;
    sift_up(q, q->n++, (slot){ time_s, n });
    return 0;
}

eventq_node *eventq_peek(const eventq *q) {
    return q->n ? q->heap[0].node : NULL;
}

eventq_node *eventq_pop(eventq *q) {
    if (q->n == 0)
        return NULL;
    eventq_node *top = q->heap[0].node;
    top->heap_index = -1;
    if (--q->n > 0)
        refill_root(q, q->heap[q->n]);
    return top;
}

int eventq_remove(eventq *q, eventq_node *n) {
    long i = n->heap_index;
    if (i < 0 || i >= q->n || q->heap[i].node != n)
        return -1;
    n->heap_index = -1;
    if (--q->n == i)
        return 0;
    /* The last slot fills the hole; it may belong above or below it. */
    slot last = q->heap[q->n];
    if (i > 0 && before(&last, &q->heap[(i - 1) / ARITY]))
        sift_up(q, i, last);
    else
        sift_down(q, i, last);
    return 0;
}

long eventq_size(const eventq *q) {
    return q->n;
}
