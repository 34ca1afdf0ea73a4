#include "sim/eventq.h"

#include <stdlib.h>

/* A heap slot keeps a copy of the node's key next to the pointer, so sifting compares
 * keys in the heap array itself and only writes back to a node when the node moves. */
typedef struct {
    double time_s;
    uint64_t seq;
    eventq_node *node;
} slot;

struct eventq {
    slot *heap;              /* (cap): heap[0] is the earliest */
    long n, cap;
    uint64_t next_seq;
};

static inline int before(const slot *a, const slot *b) {
    return a->time_s < b->time_s || (a->time_s == b->time_s && a->seq < b->seq);
}

static inline void place(eventq *q, long i, slot s) {
    q->heap[i] = s;
    s.node->heap_index = i;
}

/* Moves s up from the hole at i to where it belongs. */
static void sift_up(eventq *q, long i, slot s) {
    while (i > 0) {
        long parent = (i - 1) / 2;
        if (!before(&s, &q->heap[parent]))
            break;
        place(q, i, q->heap[parent]);
        i = parent;
    }
    place(q, i, s);
}

/* Moves s down from the hole at i to where it belongs. */
static void sift_down(eventq *q, long i, slot s) {
    long n = q->n;
    for (;;) {
        long child = 2 * i + 1;
        if (child >= n)
            break;
        if (child + 1 < n && before(&q->heap[child + 1], &q->heap[child]))
            child++;
        if (!before(&q->heap[child], &s))
            break;
        place(q, i, q->heap[child]);
        i = child;
    }
    place(q, i, s);
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
    sift_up(q, q->n++, (slot){ time_s, n->seq, n });
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
        sift_down(q, 0, q->heap[q->n]);
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
    if (i > 0 && before(&last, &q->heap[(i - 1) / 2]))
        sift_up(q, i, last);
    else
        sift_down(q, i, last);
    return 0;
}

long eventq_size(const eventq *q) {
    return q->n;
}
