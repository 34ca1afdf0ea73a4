/* traceinfo — what a trace (trace/trace.h) means, decided in this one place for every
 * reader: the fit (fit/fit.c), the measurements CSV (`speedup trace`, `speedup report`),
 * the figures (plots/) and the simulator's replay (sim/job.c).
 *
 *   ranks           K training workers, plus one for a dedicated master (more if named)
 *   step            a compute event with examples > 0; one with 0 (an empty slice, a
 *                   dedicated master's turn) is time spent but no step: no fit, no replay
 *   optimizer update  an update event named "sgd" or unnamed ("average" is local SGD's,
 *                   part of its synchronisation)
 *   foreground      a rank's own timeline: every event but background ones (comm, or a
 *                   hogwild master's updates, that ran beside it on another thread)
 *   training time   the latest end of any rank's foreground non-eval events, less the eval
 *                   time that rank spent before it
 *   synchronisation every rank's comm events of one (name, bytes, epoch, step); a rank's
 *                   part is its comm spans less another rank's update inside them (or the
 *                   union of its background spans); the span is the largest part (the
 *                   smallest where every part is background: no barrier precedes such an
 *                   exchange, and the first rank's part waits for the last one's
 *                   gradients), a dedicated master's left out while a worker has one
 *   overlap         the share of a step during which its own gradients' background
 *                   exchange already ran; its exposed part, the foreground comm after it
 *   shares, crowded master  contention_shares_cores, contention_master_crowded of the
 *                   run's config
 *   accuracy curve  rank 0's eval events with an accuracy, in time order, each at its
 *                   training time and examples seen (a resumed run's earlier epochs count)
 *   async requests  "push" and "pull" comm of an async or hogwild run: no synchronisation
 *   staleness       median, 90th percentile (GSL's interpolation) and mean over the
 *                   master's applied gradients
 * Each definition in full, with why: docs/traces.md ("What a trace means").
 *
 * Pure functions of a trace; nothing prints. The functions that return arrays malloc them
 * (the caller frees) and return -1 when out of memory (traceinfo_accuracy_curve: with err).
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
    double span_s;           /* the largest rank part, or the smallest (see above) */
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
/* Do the run's processes outnumber its host's cores (contention_shares_cores: the fit and
 * the prediction ask the same question)? */
bool traceinfo_shares_cores(const trace_run *r);
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
