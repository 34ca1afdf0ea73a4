/* table — a calibration from a table of measured throughputs: a user's own cluster, or a
 * published benchmark (`speedup calibrate --from-table FILE.csv`).
 *
 * FILE.csv: '#' comment lines, then the header
 *   workers,machines,local_batch,throughput[,std][,shards]
 * and one row per measurement: K workers (devices or ranks) on M machines, each worker
 * taking local_batch examples a step, `throughput` examples per second in all; `std` its
 * standard deviation (same unit, optional: 0 or empty = not given); `shards` the
 * parameter server's shards in that run (ps only; default 1). A worker's step is
 * t = K·local_batch/throughput: weak scaling, synchronous, one exchange a step.
 *
 * The fit, one level at a time, each through the cost model's own formula
 * (model/costmodel.h's S(K) for the topology and algorithm, linear in each link's α and
 * β), so that the fit and every prediction run one exchange:
 *   one worker   rows with K = 1: the step c0 + c1·b, by least squares when two local
 *                batches or more are given, else c1 = t/b and c0 = 0 (a note: the fixed
 *                part is not separated, so predictions hold at that local batch);
 *   one machine  rows with K ≥ 2, M = 1: the machine's own link (link[topology]) from
 *                what each adds to the step, S(K) = t_K − step: its β from one row (α
 *                stated), both from rows of two or more K;
 *   machines     rows with M ≥ 2: the fabric between them (params.net), what they add
 *                beyond the machine's own exchange: its β (the effective 1/rate) from
 *                one row, α too from two rows or more where it stands two standard
 *                errors clear of 0; never faster than the machine's own link.
 * What the rows cannot determine is taken from opts (a flag) or its stated default, with
 * a note; a stated latency's standard error is TABLE_STATED_LATENCY_SE of itself. The
 * workers are devices (params.worker_device = 1): one worker per slot, host_cores = the
 * most workers a row ran on one machine. Standard errors by the delta
 * method from each row's spread (std/throughput, or opts.row_noise where a row has none):
 * every parameter is a function of the rows' step times, differentiated numerically. The
 * run-to-run spread run_cv is the median of the rows' relative spreads (or row_noise);
 * model_cv what the model misses its own rows by beyond that spread, per row left over
 * beyond the parameters fitted (at least one), 0 where they fit.
 *
 * The calibration's workload is the one-worker rows' local batch (each worker takes it:
 * weak scaling), 100 steps of the largest row, 1 epoch; its range the largest K and M.
 *
 * Errors name the file and the line: a missing column, a number that is not one, a row
 * that contradicts the others (more machines than workers; no K = 1 row).
 */
#ifndef SPEEDUP_TABLE_H
#define SPEEDUP_TABLE_H

#include "model/calibration.h"

enum { TABLE_MAX_ROWS = 4096 };

typedef struct {
    int workers, machines;
    double local_batch;
    double throughput;       /* examples per second, all workers */
    double std;              /* its standard deviation; 0: not given */
    int shards;              /* ps: shards in the run (1 when not given) */
    long line;               /* in the file, for messages */
} table_row;

typedef struct {
    table_row *rows;
    int n;
} table;

/* Reads path into *out (free with table_free). 0, or -1 with "PATH: line L: what" in err. */
int table_read(const char *path, table *out, char *err, int errlen);
void table_free(table *t);

typedef struct {
    double model_bytes;      /* M: bytes exchanged a step (required, > 0) */
    job_topology topology;
    costmodel_allreduce algorithm;   /* how an all-reduce spans machines */
    int ps_separate;         /* ps: shards on machines of their own */
    double intra_latency_s;  /* α of the machine's own link where the rows leave it open */
    double net_latency_s;    /* α of the fabric where the rows leave it open */
    double row_noise;        /* relative spread of a row without std */
    double largest_bytes;    /* ps: the model's largest tensor, whole on one shard; 0: even shards */
    double line_rate_bytes_per_s; /* the fabric's nominal line rate (the busiest link's floor,
                                costmodel_line_floor_time); 0: none stated, no floor */
} table_opts;

/* The relative standard error of a line rate stated by its nominal value: TCP's goodput is
 * 90-95% of a line's rate, and a vendor's figure is rounded. */
#define TABLE_LINE_RATE_SE 0.1

/* The relative standard error of a latency the rows do not determine (stated by a flag or
 * by default): a message's latency ranges over an order of magnitude between fabrics
 * (RDMA a few µs, TCP tens, gRPC a hundred), so a stated one is known only to its own
 * size. It widens an interval where the latency matters: many machines, small models. */
#define TABLE_STATED_LATENCY_SE 1.0

/* The stated defaults: NVLink/PCIe-class 5 µs inside a machine, 25 µs across (an RDMA or
 * TCP fabric's message), 3% run-to-run spread (what published re-runs of one benchmark
 * differ by). */
table_opts table_opts_default(void);

/* A row further than this many of its spreads from the model's step for it makes the
 * verdict poor (3: a row's chance of it, were the model right, is 0.3%). */
#define TABLE_VERDICT_SPREADS 3

/* Fits cal (params, standard errors, workload left unset) from the rows of t, all of
 * them. fit's notes say what was taken from opts and why; its verdict (fit/verdict.h's,
 * judged on the rows) is poor where a row lies beyond TABLE_VERDICT_SPREADS of its spread
 * from the model, naming the rows, good where every row is within and rows are left over
 * beyond the parameters fitted, "not judged" where none is. 0, or -1 with the reason in
 * err. */
int table_fit(const table *t, const table_opts *o, calibration *cal, calibration_fit *fit, char *err, int errlen);

/* The step time one row measured: K·b/throughput. */
double table_row_step_s(const table_row *r);

/* The cost model's step for row r under params p (weak scaling, batch sync, every
 * worker one step and one exchange; r's shards for ps). */
double table_predict_step_s(const costmodel_params *p, const table_row *r, job_topology topology);

#endif
