/* traceinfo — what a trace (trace/trace.h) means, decided in this one place for every
 * reader: the fit (fit/fit.c), the measurements CSV (`speedup trace`, `speedup report`),
 * the figures (plots/) and the simulator's replay (sim/job.c).
 *
 *   ranks          the run's ranks: K training workers, plus one for a dedicated master
 *                  (more if the events name more).
 *   step           a compute event with examples > 0: one local training step of that many
 *                  examples. A compute event with 0 examples (an empty slice, a dedicated
 *                  master's turn) is time the rank spent, but no step: it enters no compute
 *                  fit, no step-time spread and no replay pool.
 *   optimizer update  an update event that is the SGD step (name "sgd", or no name):
 *                  u of the model. An update named "average" (local SGD's scaling of the
 *                  summed weights to their mean) belongs to its synchronisation.
 *   foreground     a rank's own timeline: every event but background communication
 *                  (trace/trace.h: comm that ran beside it on another thread). Training
 *                  time, phase means and steps are the foreground's; background comm time
 *                  is what was hidden (or exposed) beside it.
 *   training time  the latest end of any rank's foreground non-eval events, less the eval
 *                  time that rank spent before it (evaluation is not training; the model
 *                  has none).
 *   phase means    each phase's foreground total over every rank, divided by the ranks.
 *   synchronisation  every rank's comm events with the same (name, bytes, epoch, step)
 *                  are one synchronisation. A rank's part of it is the sum of its comm
 *                  spans of that key (a ps master records the pushes and the pulls as two)
 *                  less the time another rank spent in an optimizer update (of the same
 *                  epoch and step) inside them: a ps worker waits for the master's update
 *                  between its push and its pull, and that is the update's time, not the
 *                  link's. When the rank has background comm of that key, its part is the
 *                  union of those spans instead — the whole exchange, the hidden part
 *                  included (DDP's buckets may run at once on two threads: their union, not
 *                  their sum, is the time it was in flight), and its foreground comm of the
 *                  key (the exposed tail) is inside it. The synchronisation's span is the
 *                  largest part over its ranks: it is over when the last rank has its data
 *                  (with eager sends a ps master's own sends return before the workers have
 *                  the weights).
 *   overlap        for a step (a foreground compute event) of a rank that has background
 *                  comm of the same epoch and step exchanging gradients (named "allreduce",
 *                  "ps" or nothing: not a one-off like DDP's bucket-order "broadcast"), the
 *                  share of the step during which that communication already ran: (step end
 *                  − the earliest start of that comm) / step span, 0 when the comm started
 *                  after the step ended, 1 at most. The window DDP's bucketed all-reduce has
 *                  to hide behind backward. The step's exposed part: the rank's
 *                  foreground comm of that epoch and step exchanging gradients, summed —
 *                  what of the exchange the rank still waited for once the step ended.
 *   ρ              costmodel_rho of the run's config on its host's cores.
 *   crowded master costmodel_master_crowded of the run's config on its host's cores: a
 *                  dedicated parameter server whose workers' threads take every core.
 *   accuracy curve rank 0's eval events that carry an accuracy (trace/trace.h), in time
 *                  order: one point each. Its training time is the event's start less
 *                  every eval span of rank 0 that ended before it (evaluations and
 *                  checkpoints are not training: the same rule as the training time);
 *                  the start-up is in it. Its examples seen are every rank's step examples
 *                  of the global steps before the event's step, plus E0·D when the trace
 *                  begins at epoch E0 (a resumed run: every epoch before it trained D);
 *                  its epochs completed are ⌊examples seen / D⌋.
 *   async requests  in an async or hogwild run (train/asyncps.h) the comm events named
 *                  "push" and "pull" are one worker's request to the master, not a
 *                  synchronisation: traceinfo_syncs leaves them out. The master's update
 *                  events with a staleness are the gradients it applied; a hogwild
 *                  master's ("background": true, on its updater threads) overlap its
 *                  timeline and, like background comm, are not in its foreground.
 *   staleness      of an async run: over the master's applied gradients, the median, the
 *                  90th percentile (GSL's linear interpolation of the sorted values) and
 *                  the mean of their staleness (trace/trace.h).
 *
 * Pure functions; nothing prints. Allocating ones return -1 when out of memory.
 */
#ifndef SPEEDUP_TRACEINFO_H
#define SPEEDUP_TRACEINFO_H

#include "trace/trace.h"

#include <stdbool.h>

typedef struct {
    double startup_s, compute_s, update_s, comm_s, wait_s, eval_s;
} traceinfo_phases;

/* One rank's time by phase: its foreground spans (background comm and updates run beside
 * its own timeline and are apart), their first start and last end. */
typedef struct {
    double phase_s[TRACE_PHASE_COUNT];
    double sum_s;            /* Σ phase_s */
    double background_s;     /* spans beside the rank's own timeline */
    double first_s, last_s;  /* its foreground events' first start and last end */
    long events;             /* foreground events; 0: the rank recorded none */
} traceinfo_rank_totals;

typedef struct {
    char name[32];           /* the comm event's name ("ps", "allreduce", "pingpong", ...) */
    int epoch;
    long step, bytes;
    double span_s;           /* the largest rank part (see above) */
    int ranks;               /* how many ranks recorded it */
} traceinfo_sync;

/* An async run's requests and staleness (see above); zeros when the run is not async. */
typedef struct {
    long updates;            /* the master's applied gradients (update events with a staleness) */
    long pushes, pulls;      /* the workers' requests (their comm "push", "pull") */
    double staleness_median, staleness_p90, staleness_mean;
    double push_s, update_s, pull_s; /* the master's median span of each: receiving a gradient,
                                        applying it, sending the weights */
} traceinfo_async;

int traceinfo_ranks(const trace *t);
bool traceinfo_is_step(const trace_event *e);
bool traceinfo_is_background(const trace_event *e);
bool traceinfo_is_optimizer_update(const trace_event *e);
/* A comm event of an async or hogwild run that is a worker's request ("push", "pull"). */
bool traceinfo_is_async_request(const trace *t, const trace_event *e);
/* The async summary of t: 0, or -1 out of memory. */
int traceinfo_async_of(const trace *t, traceinfo_async *out);
double traceinfo_rho(const trace_run *r);
bool traceinfo_master_crowded(const trace_run *r);
double traceinfo_training_time(const trace *t);
/* Where start-up ends and training begins: the end of the run's last start-up span; -1
 * when it has none. */
double traceinfo_startup_end(const trace *t);
traceinfo_phases traceinfo_phase_means(const trace *t);
/* Every rank's totals, ranks 0 .. traceinfo_ranks(t) − 1: *out malloc'd (free it), the rank
 * count returned; -1 out of memory. The one per-rank account (`speedup trace --summary`,
 * the report's timeline table). */
int traceinfo_rank_totals_of(const trace *t, traceinfo_rank_totals **out);
/* Every synchronisation of t, ordered by (name, bytes, epoch, step): *out malloc'd (free
 * it), the count returned; 0 with *out NULL when there are none; -1 out of memory. */
long traceinfo_syncs(const trace *t, traceinfo_sync **out);
/* One step that has background comm exchanging its gradients (see "overlap" above). */
typedef struct {
    double share;            /* the overlap: the share of the step its exchange already ran beside */
    double step_s;           /* the step's span */
    long examples;           /* its examples */
    double exposed_s;        /* the rank's foreground comm of the same exchange (epoch, step):
                                what was left of it once the step had ended */
} traceinfo_overlap;

/* Every step that has background comm (see above): *out malloc'd (free it), the count
 * returned; 0 with *out NULL when there are none; -1 out of memory. */
long traceinfo_overlaps(const trace *t, traceinfo_overlap **out);

/* One point of the run's accuracy curve (see above). */
typedef struct {
    double train_time_s;   /* training time when measured: rank 0's common-clock time minus every eval span before it */
    int epoch;             /* epochs completed when measured */
    long step;             /* global steps done */
    double examples_seen;  /* training examples processed by all ranks so far */
    double epochs_seen;    /* examples_seen / D */
    double accuracy;       /* 0..1 */
    double train_loss;
    bool subset;           /* --eval-every's fixed subset, not the whole test set */
} traceinfo_accuracy_point;
/* The run's accuracy curve in time order (rank 0's eval events that carry an accuracy); *n = 0 when none. Caller frees *out. 0, or -1 with err. */
int traceinfo_accuracy_curve(const trace *t, traceinfo_accuracy_point **out, long *n, char *err, int errlen);

#endif
