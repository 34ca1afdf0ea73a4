/* eventq — the simulator's pending events: a min-heap (8-ary) keyed by
 * (virtual time, insertion sequence).
 *
 * Equal times leave in the order they were pushed (the sequence number breaks the tie), so
 * a simulation repeats exactly (SimGrid's EngineImpl does the same). Every node records its
 * own position in the heap, so a pushed node can be removed in O(log n) without a search
 * (libuv src/heap-inl.h, ROSS core/queue/heap.c).
 *
 * The queue does not own nodes: the caller embeds an eventq_node in its own event struct
 * (first member, so a node pointer converts back) and keeps it alive while it is queued.
 * Costs: push O(log n), pop O(log n), remove O(log n), peek O(1); the heap array grows by
 * doubling and never shrinks, so a simulation that keeps n events pending allocates O(n)
 * once and nothing per event.
 */
#ifndef SPEEDUP_EVENTQ_H
#define SPEEDUP_EVENTQ_H

#include <stdint.h>

typedef struct eventq_node {
    double time_s;           /* the key: virtual time */
    uint64_t seq;            /* the tie-break: insertion order, set by eventq_push */
    long heap_index;         /* position in the heap; -1 while not queued */
} eventq_node;

typedef struct eventq eventq;

/* An empty queue with room for capacity nodes before it first grows. NULL: out of memory. */
eventq *eventq_new(long capacity);
void eventq_free(eventq *q);                          /* NULL is a no-op */

/* Queues n at time_s. 0, or -1 when the heap could not grow (n is then not queued).
 * n must not be queued already. */
int eventq_push(eventq *q, eventq_node *n, double time_s);
/* The earliest node (ties: the first pushed), or NULL when empty; peek leaves it queued. */
eventq_node *eventq_peek(const eventq *q);
eventq_node *eventq_pop(eventq *q);
/* Takes a queued node out wherever it sits (cancellation). 0, or -1 if n is not queued. */
int eventq_remove(eventq *q, eventq_node *n);
long eventq_size(const eventq *q);

static inline void eventq_node_init(eventq_node *n) { n->heap_index = -1; }
static inline int eventq_node_queued(const eventq_node *n) { return n->heap_index >= 0; }

#endif
