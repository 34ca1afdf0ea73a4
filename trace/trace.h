/* trace — the record of where every second of a training run went (DESIGN.md), shared by
 * the trainer (writes), the calibration (fits), the simulator (replays) and the plots.
 *
 * A *.trace.jsonl file: the first line describes the run (trace_run),
 *   {"run": {"format": "speedup-trace", "version": 1, "host": "...", "host_cores": P,
 *            "net": "...", "model_bytes": M, "workers": K, "cores": T, "sync": "...",
 *            "topology": "...", "master": "...", "examples": D, "batch": B, "epochs": E,
 *            ..., "waits": "poll|block", "memory": {...}}}        (waits, memory optional)
 * then one event per line (trace_event), any rank, seconds from the run's common start:
 *   {"rank": r, "ph": "startup|compute|update|comm|wait|eval", "t0": s, "t1": s,
 *    "epoch": e, "step": i, "bytes": n, "examples": b, "name": "..."}
 * with, optionally: "accuracy" and "loss" together on an eval event (the model's test
 * accuracy, the training loss since the previous point: the time to accuracy);
 * "background": true on comm or update that ran beside the rank's own timeline on another
 * thread (a rank's foreground events tile its time, its background ones overlap them);
 * "staleness" on an async master's update of a pushed gradient; "cpu": [at t0, at t1], the
 * processor a compute event began and ended on. Every key and when it is
 * written: docs/files.md ("The trace format in full"). What the events mean (steps,
 * training time, a synchronisation's span, the overlap, the curve) is trace/traceinfo.h's.
 *
 * A trace owns its events (trace_new, trace_add, trace_free; freeing NULL is a no-op).
 * trace_write goes through a temporary file and a rename; trace_read reports the first bad
 * line as "PATH: line L: what was expected". Nothing prints.
 */
#ifndef SPEEDUP_TRACE_H
#define SPEEDUP_TRACE_H

#include "core/network.h"
#include "model/costmodel.h"

#include <stdbool.h>

#define TRACE_FORMAT "speedup-trace"
#define TRACE_VERSION 1

/* update: the optimizer step (SGD with momentum) on the rank that holds the weights —
 * every rank after its own step or the all-reduce, the master for a parameter server. It
 * is its own phase so that it is neither compute (c0, c1) nor communication (S). */
typedef enum { TRACE_STARTUP, TRACE_COMPUTE, TRACE_COMM, TRACE_WAIT, TRACE_EVAL, TRACE_UPDATE, TRACE_PHASE_COUNT } trace_phase;

typedef struct {
    int rank;
    trace_phase ph;
    double t0_s, t1_s;
    int epoch;               /* -1 when not inside an epoch (start-up) */
    long step;               /* -1 when not a step */
    long bytes;              /* comm: bytes moved; 0 otherwise */
    long examples;           /* compute: examples in the step (0: an empty slice); 0 otherwise */
    char name[32];           /* sub-phase, "" when none */
    bool background;         /* comm (or a hogwild update) beside the rank's timeline (see above) */
    bool has_accuracy;       /* eval: accuracy and loss below were measured (see above) */
    double accuracy;         /* eval: fraction of `examples` classified correctly, 0..1 */
    double loss;             /* eval: mean training loss since the previous point of this name */
    bool has_staleness;      /* an async master's update of a pushed gradient: */
    bool has_cpu;            /* a compute event where the trainer recorded: */
    short cpu_begin, cpu_end; /*  the processor it ran on at its start and its end (in what
                                  was padding: the trainer's memory per event, which
                                  fit/memory_fit.c counts, stays as it was) */
    long staleness;          /* updates applied since its weights were pulled (see above) */
} trace_event;

enum { TRACE_MAX_RANKS = 1024 }; /* ranks whose peak memory a header lists */

/* What the ranks' memory held: the network's buffers and the data (model/memory.h's known
 * terms) and each rank's measured peak resident set. */
typedef struct {
    bool has;                        /* the header has a "memory" object */
    long fwd_bytes_per_example;      /* train/net.h's net_memory */
    long train_bytes_per_example;
    long workspace_bytes, workspace_bytes_per_thread;
    long example_bytes;              /* one example held in memory: image and label */
    long test_examples;              /* the test examples every rank holds beside the training set */
    long test_set_examples;          /* the test set's size (--limit cuts it to test_examples) */
    int n_ranks;                     /* entries of peak_rss_kib (0: not measured) */
    long peak_rss_kib[TRACE_MAX_RANKS]; /* each rank's peak resident set (getrusage), KiB */
} trace_memory;

/* The probe's work: a 384 x 384 x 384 single-precision product, 2·384³ FLOPs. */
#define TRACE_PROBE_N 384
#define TRACE_PROBE_FLOPS (2.0 * TRACE_PROBE_N * TRACE_PROBE_N * TRACE_PROBE_N)

/* The transfer probe's work: a buffer of this many bytes handed from one core to another. */
#define TRACE_TRANSFER_BYTES (2L << 20)

/* The host's speed beside the run ("host_speed", rank 0's view): a fixed compute probe
 * and a fixed transfer between two cores (train/probe.h) just before the run and just
 * after it, and the hypervisor's steal time over it (util/host.h), so that a run slowed by
 * the host's phase can be told from one slowed by its configuration. The transfer's keys
 * are optional (traces before it, a host of one processor): 0 when not measured. */
typedef struct {
    bool has;                        /* the header has a "host_speed" object */
    double probe_before_s, probe_after_s; /* the probe's median time, before and after */
    double transfer_before_s, transfer_after_s; /* the transfer probe's median round; 0: none */
    double steal_s;                  /* steal time over the run, all CPUs together */
    double cpu_s;                    /* all CPU time over the run (the steal's share's base) */
} trace_host_speed;

/* Rank 0's training passes layer by layer ("layers"; core/network.h): each layer's kind
 * and work and the time its passes took over the run (a fused relu in its conv's), over
 * how many steps and examples: what the per-kind rates are fitted from. */
typedef struct {
    bool has;
    network_cost cost;               /* every layer's kind and work; the parameters */
    double time_s[NETWORK_MAX_LAYERS]; /* each layer's time over the run */
    int input[4];                    /* the network's input h, w, c and its classes */
    long steps;                      /* rank 0's steps with examples */
    double examples;                 /* their examples */
} trace_layers;

typedef struct {
    char host[128];
    int host_cores;
    char git[64];
    char net[256];           /* network spec, e.g. "conv5x5x32,relu,pool2,..." */
    long model_bytes;
    job_config config; /* workers, cores, sync, every_n, topology, master, D, B, E */
    bool waits_block;        /* "waits": "block": a rank waiting for the others sleeps
                                (costmodel_params.waits_block); "poll" (the default) */
    long seed;
    trace_memory memory;
    trace_host_speed speed;
    trace_layers layers;
} trace_run;

typedef struct {
    trace_run run;
    trace_event *events;     /* owned */
    long n_events, cap_events;
} trace;

const char *trace_phase_name(trace_phase ph);
int trace_phase_parse(const char *s, trace_phase *out);

trace *trace_new(const trace_run *run);
void trace_free(trace *t);                      /* NULL is a no-op */
int trace_add(trace *t, const trace_event *e);  /* 0, or -1 out of memory */

/* Writes the whole trace to path through a temporary file and a rename. */
int trace_write(const trace *t, const char *path, char *err, int errlen);
/* Reads a trace; NULL with "PATH: line L: ..." in err on any malformed line. */
trace *trace_read(const char *path, char *err, int errlen);

#endif
