#include "sim/engine.h"

#include "sim/eventq.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------------------- */
/* Events and their pool */

struct engine_event {
    eventq_node node;        /* first: a node pointer is an event pointer */
    int kind;
    int who;
    engine_event *next_free;
};

enum { CHUNK_EVENTS = 256 };

typedef struct {
    engine_handler fn;
    void *ctx;
} handler;

/* A FIFO of requests, a ring buffer whose size is a power of two (indices wrap with a
 * mask, not a division: this is on every message's path) and doubles when full. */
typedef struct {
    double service_s;
    int kind, who;
} request;

typedef struct {
    double alpha_s, beta_s_per_byte;
    request *ring;           /* (cap) */
    long head, n, cap;       /* n waiting, excluding the one in service */
    request serving;
    int busy;
    double busy_s;
    long peak_queue;
} resource;

struct engine {
    eventq *q;
    double now_s;
    uint64_t events;
    long peak_pending;
    int stopped, failed;

    engine_event **chunks;   /* (n_chunks) blocks of CHUNK_EVENTS; never move */
    long n_chunks;
    engine_event *free_list;

    handler *handlers;       /* (n_handlers); kind 0 is the resources' own completion */
    int n_handlers;
    resource *resources;     /* (n_resources) */
    int n_resources;
};

static int grow_pool(engine *e) {
    engine_event **chunks = realloc(e->chunks, sizeof *chunks * (size_t)(e->n_chunks + 1));
    if (!chunks)
        return -1;
    e->chunks = chunks;
    engine_event *block = malloc(sizeof *block * CHUNK_EVENTS);
    if (!block)
        return -1;
    chunks[e->n_chunks++] = block;
    for (int i = CHUNK_EVENTS - 1; i >= 0; i--) {
        eventq_node_init(&block[i].node);
        block[i].next_free = e->free_list;
        e->free_list = &block[i];
    }
    return 0;
}

static inline engine_event *take_event(engine *e) {
    if (!e->free_list && grow_pool(e)) {
        e->failed = 1;
        return NULL;
    }
    engine_event *ev = e->free_list;
    e->free_list = ev->next_free;
    return ev;
}

static inline void give_event(engine *e, engine_event *ev) {
    ev->next_free = e->free_list;
    e->free_list = ev;
}

/* ---------------------------------------------------------------------------------- */
/* Life cycle */

static void on_resource_done(void *ctx, int id);

engine *engine_new(long capacity) {
    engine *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->q = eventq_new(capacity);
    if (!e->q || engine_kind(e, on_resource_done, e) != 0) {
        engine_free(e);
        return NULL;
    }
    for (long have = 0; have < capacity; have += CHUNK_EVENTS)
        if (grow_pool(e)) {
            engine_free(e);
            return NULL;
        }
    return e;
}

void engine_free(engine *e) {
    if (!e)
        return;
    eventq_free(e->q);
    for (long i = 0; i < e->n_chunks; i++)
        free(e->chunks[i]);
    free(e->chunks);
    free(e->handlers);
    for (int i = 0; i < e->n_resources; i++)
        free(e->resources[i].ring);
    free(e->resources);
    free(e);
}

void engine_reset(engine *e) {
    eventq_node *n;
    while ((n = eventq_pop(e->q)) != NULL)
        give_event(e, (engine_event *)n);
    for (int i = 0; i < e->n_resources; i++) {
        resource *r = &e->resources[i];
        r->head = r->n = 0;
        r->busy = 0;
        r->busy_s = 0;
        r->peak_queue = 0;
    }
    e->now_s = 0;
    e->events = 0;
    e->peak_pending = 0;
    e->stopped = e->failed = 0;
}

int engine_kind(engine *e, engine_handler fn, void *ctx) {
    handler *h = realloc(e->handlers, sizeof *h * (size_t)(e->n_handlers + 1));
    if (!h)
        return -1;
    e->handlers = h;
    h[e->n_handlers] = (handler){ fn, ctx };
    return e->n_handlers++;
}

/* ---------------------------------------------------------------------------------- */
/* Scheduling and running */

engine_event *engine_at(engine *e, double t_s, int kind, int who) {
    engine_event *ev = take_event(e);
    if (!ev)
        return NULL;
    ev->kind = kind;
    ev->who = who;
    if (eventq_push(e->q, &ev->node, t_s)) {
        give_event(e, ev);
        e->failed = 1;
        return NULL;
    }
    long pending = eventq_size(e->q);
    if (pending > e->peak_pending)
        e->peak_pending = pending;
    return ev;
}

engine_event *engine_after(engine *e, double delay_s, int kind, int who) {
    return engine_at(e, e->now_s + delay_s, kind, who);
}

int engine_cancel(engine *e, engine_event *ev) {
    if (!ev || eventq_remove(e->q, &ev->node))
        return -1;
    give_event(e, ev);
    return 0;
}

int engine_run(engine *e) {
    e->stopped = 0;
    eventq_node *n;
    while (!e->stopped && !e->failed && (n = eventq_pop(e->q)) != NULL) {
        engine_event *ev = (engine_event *)n;
        e->now_s = n->time_s;
        e->events++;
        int kind = ev->kind, who = ev->who;
        /* Recycled before the handler runs, so the handler's own schedule reuses it. */
        give_event(e, ev);
        const handler *h = &e->handlers[kind];
        h->fn(h->ctx, who);
    }
    return e->failed ? -1 : 0;
}

void engine_stop(engine *e) { e->stopped = 1; }
double engine_now(const engine *e) { return e->now_s; }
uint64_t engine_events(const engine *e) { return e->events; }
long engine_pending(const engine *e) { return eventq_size(e->q); }
long engine_peak_pending(const engine *e) { return e->peak_pending; }

/* ---------------------------------------------------------------------------------- */
/* Resources */

int engine_resource(engine *e, double alpha_s, double beta_s_per_byte) {
    resource *r = realloc(e->resources, sizeof *r * (size_t)(e->n_resources + 1));
    if (!r)
        return -1;
    e->resources = r;
    r[e->n_resources] = (resource){ .alpha_s = alpha_s, .beta_s_per_byte = beta_s_per_byte };
    return e->n_resources++;
}

static void serve(engine *e, int id, request req) {
    resource *r = &e->resources[id];
    r->serving = req;
    r->busy = 1;
    r->busy_s += req.service_s;
    if (!engine_after(e, req.service_s, 0, id))
        r->busy = 0;
}

int engine_request(engine *e, int id, double bytes, int kind, int who) {
    const resource *r = &e->resources[id];
    return engine_request_for(e, id, r->alpha_s + r->beta_s_per_byte * bytes, kind, who);
}

int engine_request_for(engine *e, int id, double service_s, int kind, int who) {
    resource *r = &e->resources[id];
    request req = { service_s, kind, who };
    if (!r->busy) {
        serve(e, id, req);
        return e->failed ? -1 : 0;
    }
    if (r->n == r->cap) {
        long cap = r->cap ? 2 * r->cap : 16;
        request *ring = malloc(sizeof *ring * (size_t)cap);
        if (!ring) {
            e->failed = 1;
            return -1;
        }
        for (long i = 0; i < r->n; i++)
            ring[i] = r->ring[(r->head + i) & (r->cap - 1)];
        free(r->ring);
        r->ring = ring;
        r->head = 0;
        r->cap = cap;
    }
    r->ring[(r->head + r->n) & (r->cap - 1)] = req;
    if (++r->n > r->peak_queue)
        r->peak_queue = r->n;
    return 0;
}

static void on_resource_done(void *ctx, int id) {
    engine *e = ctx;
    resource *r = &e->resources[id];
    request done = r->serving;
    r->busy = 0;
    if (r->n > 0) {
        request next = r->ring[r->head];
        r->head = (r->head + 1) & (r->cap - 1);
        r->n--;
        serve(e, id, next);
    }
    const handler *h = &e->handlers[done.kind];
    h->fn(h->ctx, done.who);
}

double engine_resource_busy_s(const engine *e, int id) { return e->resources[id].busy_s; }
long engine_resource_peak_queue(const engine *e, int id) { return e->resources[id].peak_queue; }
