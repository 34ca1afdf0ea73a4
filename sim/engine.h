/* engine — a discrete-event engine: a virtual clock, events that call handlers, and
 * resources that serve requests one at a time from a FIFO queue.
 *
 * The clock jumps from one event to the next (it never ticks). Events at equal times run
 * in the order they were scheduled (sim/eventq.h), so a run repeats bit for bit.
 *
 *   engine *e = engine_new(64);
 *   int done = engine_kind(e, on_done, model);     // a handler: on_done(model, who)
 *   engine_after(e, 1.5, done, 3);                 // on_done(model, 3) at now + 1.5 s
 *   int link = engine_resource(e, alpha_s, beta_s_per_byte);
 *   engine_request(e, link, bytes, done, 7);       // queued; on_done(model, 7) when sent
 *   engine_run(e);                                 // until nothing is pending
 *
 * A resource is a link (or any server) with latency alpha and bandwidth 1/beta: a request
 * of n bytes occupies it for alpha + beta·n seconds; requests wait their turn in arrival
 * order. Its completion is one event; the handler of the finished request runs in it,
 * after the next request (if any) has started.
 *
 * Memory: events come from a pool that grows in chunks and is recycled through a free list,
 * so the engine allocates O(max events pending at once), never per event. A handle returned
 * by engine_at/engine_after is valid until its event runs or is cancelled.
 * The engine never prints; an allocation failure inside a handler makes engine_run
 * return -1.
 */
#ifndef SPEEDUP_ENGINE_H
#define SPEEDUP_ENGINE_H

#include <stdint.h>

typedef struct engine engine;
typedef struct engine_event engine_event;
/* Runs at the event's time; who is the value given when it was scheduled. */
typedef void (*engine_handler)(void *ctx, int who);

engine *engine_new(long capacity);              /* room for capacity pending events */
void engine_free(engine *e);                    /* NULL is a no-op */
/* Empties the queue and every resource, sets the clock to 0; keeps handlers, resources
 * and memory, so replications reuse one engine. */
void engine_reset(engine *e);

/* Registers a handler; returns its kind (≥ 0) or -1 out of memory. */
int engine_kind(engine *e, engine_handler fn, void *ctx);

engine_event *engine_at(engine *e, double t_s, int kind, int who);   /* NULL: no memory */
engine_event *engine_after(engine *e, double delay_s, int kind, int who);
/* 0, or -1 when ev is not pending. */
int engine_cancel(engine *e, engine_event *ev);

/* Runs events in time order until none is pending or engine_stop; 0, or -1 when an
 * allocation failed on the way (the run is then incomplete). */
int engine_run(engine *e);
void engine_stop(engine *e);

double engine_now(const engine *e);
uint64_t engine_events(const engine *e);        /* events run since engine_new/reset */
long engine_pending(const engine *e);
long engine_peak_pending(const engine *e);      /* most events pending at once since reset */

/* A server with latency alpha_s per request and beta_s_per_byte; returns its id or -1. */
int engine_resource(engine *e, double alpha_s, double beta_s_per_byte);
/* Queues a request of bytes; kind's handler runs with who when it has been served.
 * 0, or -1 out of memory. */
int engine_request(engine *e, int resource, double bytes, int kind, int who);
/* The same for a request whose service time is given (seconds), not its size. */
int engine_request_for(engine *e, int resource, double service_s, int kind, int who);
double engine_resource_busy_s(const engine *e, int resource);   /* time spent serving */
long engine_resource_peak_queue(const engine *e, int resource); /* most requests waiting */

#endif
