/* grid — the configurations a prediction covers (workers × cores × sync × topology) and
 * the parameters they run with, from flags, a calibration file, or the seed's example.
 * Shared by `speedup model` and `speedup simulate`.
 *
 * Parameters come from --calib FILE when given, else the seed's example; then every
 * what-if flag (--c1, --latency, --bandwidth, ...) overrides, whatever the flag order.
 *
 * Their uncertainty (model/uncertainty.h) comes with them: the calibration's standard
 * errors and c0/c1 covariance; none for the seed's example. A what-if flag sets its
 * parameter's standard error to 0 (and the covariance, for --c0 or --c1): it states a
 * value to predict at, not an estimate, so the interval keeps only what is still unknown
 * (the other parameters, the step noise, the run-to-run factor).
 *
 * Async and hogwild (--sync async[:N], hogwild[:N]) run through a parameter server on a
 * dedicated master: they make rows with the ps topology only (none with allreduce, and a
 * usage error when --topology has no ps), whatever --master says.
 *
 * Every configuration must pass costmodel_check: one it refuses (e.g. batch sync split
 * over more workers than the batch has examples) is a usage error naming it. A topology
 * the calibration holds no measurement of (calibrated from a PyTorch job: all-reduce
 * only) is left out of the default --topology, and refused when named, unless
 * --latency and --bandwidth give its link.
 *
 * Time to accuracy: --target-accuracy A needs --calib's accuracy fit (model/efficiency.h,
 * calibration.json's "efficiency"; refused without one, naming what to run). The workload
 * (--examples, --batch, --epochs) then defaults to the fit's, and every configuration
 * must be one the fit can predict (efficiency_check: its schedule, its data, a global
 * batch or local SGD only when the fit saw one): a usage error naming it otherwise.
 */
#ifndef SPEEDUP_GRID_H
#define SPEEDUP_GRID_H

#include "cli/cluster_spec.h"
#include "model/costmodel.h"
#include "model/efficiency.h"
#include "model/params.h"
#include "model/predictions.h"
#include "model/uncertainty.h"

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

enum { GRID_MAX_VALUES = 64, GRID_MAX_CELLS = 1 << 20 };

/* getopt_long codes of the grid's flags; a command's own codes stay below GRID_OPT_FIRST. */
enum {
    GRID_OPT_FIRST = 1000,
    GRID_OPT_CALIB = GRID_OPT_FIRST, GRID_OPT_WORKERS, GRID_OPT_CORES, GRID_OPT_SYNC,
    GRID_OPT_TOPOLOGY, GRID_OPT_MASTER, GRID_OPT_BATCH_PER_WORKER, GRID_OPT_EXAMPLES,
    GRID_OPT_BATCH, GRID_OPT_EPOCHS, GRID_OPT_LATENCY, GRID_OPT_BANDWIDTH, GRID_OPT_STARTUP,
    GRID_OPT_RUN_CV, GRID_OPT_CLUSTER, GRID_OPT_SCALING, GRID_OPT_TARGET_ACCURACY,
    GRID_OPT_ALLREDUCE, GRID_OPT_PS_PLACEMENT, GRID_OPT_STEP_TIME, GRID_OPT_WIDE, GRID_OPT_NET,
    GRID_OPT_NO_CONTENTION,
    GRID_OPT_PARAM,          /* GRID_OPT_PARAM + id: the registry's flag of parameter id */
    GRID_OPT_LAST = GRID_OPT_PARAM + PARAM_COUNT
};

/* The what-if flags of one parameter each, from the registry (model/params.h). */
#define GRID_NO_OPTION_(...)
#define GRID_PARAM_OPTION_(id, name, field, se, unit, lo, hi, drawn, req, print, says, flag, kind) \
    { flag, required_argument, 0, GRID_OPT_PARAM + PARAM_##id },

/* Paste into a command's struct option array. */
#define GRID_LONG_OPTIONS                                                            \
    COSTMODEL_PARAMS(GRID_NO_OPTION_, GRID_PARAM_OPTION_)                            \
    { "calib", required_argument, 0, GRID_OPT_CALIB },                               \
    { "allreduce", required_argument, 0, GRID_OPT_ALLREDUCE },                       \
    { "ps-placement", required_argument, 0, GRID_OPT_PS_PLACEMENT },                 \
    { "step-time", required_argument, 0, GRID_OPT_STEP_TIME },                       \
    { "wide", no_argument, 0, GRID_OPT_WIDE },                                       \
    { "no-contention", no_argument, 0, GRID_OPT_NO_CONTENTION },                     \
    { "net", required_argument, 0, GRID_OPT_NET },                               \
    { "workers", required_argument, 0, GRID_OPT_WORKERS },                           \
    { "cores", required_argument, 0, GRID_OPT_CORES },                               \
    { "sync", required_argument, 0, GRID_OPT_SYNC },                                 \
    { "topology", required_argument, 0, GRID_OPT_TOPOLOGY },                         \
    { "master", required_argument, 0, GRID_OPT_MASTER },                             \
    { "batch-per-worker", no_argument, 0, GRID_OPT_BATCH_PER_WORKER },               \
    { "examples", required_argument, 0, GRID_OPT_EXAMPLES },                         \
    { "batch", required_argument, 0, GRID_OPT_BATCH },                               \
    { "epochs", required_argument, 0, GRID_OPT_EPOCHS },                             \
    { "latency", required_argument, 0, GRID_OPT_LATENCY },                           \
    { "alpha", required_argument, 0, GRID_OPT_LATENCY },                             \
    { "bandwidth", required_argument, 0, GRID_OPT_BANDWIDTH },                       \
    { "startup", required_argument, 0, GRID_OPT_STARTUP },                           \
    { "run-cv", required_argument, 0, GRID_OPT_RUN_CV },                             \
    { "cluster", required_argument, 0, GRID_OPT_CLUSTER },                           \
    { "scaling", required_argument, 0, GRID_OPT_SCALING },                           \
    { "target-accuracy", required_argument, 0, GRID_OPT_TARGET_ACCURACY }

/* For a command's --help. */
/* The grid's flags for a command's --help (grid_print_usage prints both parts). */
#define GRID_USAGE_CONFIGS                                                                  \
    "Configurations (each a comma-separated list; every combination is a row):\n"          \
    "  --workers LIST       K, workers                                  [1,2,4,8,16]\n"     \
    "  --cores LIST         T, cores per worker                         [1,2,4]\n"          \
    "  --sync LIST          batch | epoch | every:N | async[:N] |        [batch,epoch]\n"   \
    "                       hogwild[:N] (Elephas' asynchronous modes: a dedicated\n"   \
    "                       ps master applies pushes as they come; N: pull period)\n" \
    "  --topology LIST      ps (parameter server on rank 0) | allreduce [ps,allreduce]\n"  \
    "  --master MODE        ps master: worker (trains too) | dedicated   [worker]\n"        \
    "  --scaling MODE       strong: the global batch B is split over the K    [strong]\n"   \
    "                       workers (B/K each); weak: each worker takes B\n"                \
    "                       (Elephas' default; also --batch-per-worker)\n"                  \
    "Where the workers run (default: all on one host of --host-cores cores):\n"            \
    "  --cluster SPEC       MxP[@RATE[,LATENCY]]: M machines of P cores (or P GPUs, with\n" \
    "                       a calibration of devices) on a network, e.g. 16x4@10gbit,50us\n" \
    "                       (latency default 50us; a nominal rate is drawn with a 50%\n"  \
    "                       standard error); 8x4: the fabric --calib measured. Workers\n" \
    "                       fill machine 0 first, then 1, ... (Open MPI's default\n"      \
    "                       mapping); ranks on one machine share its cores and link, the\n" \
    "                       others cross the network. [--workers: powers of 2 to M*P]\n" \
    "  --allreduce A        how an all-reduce spans machines: ring | hierarchical |\n"    \
    "                       either (not known: their mean, the interval spanning both)\n" \
    "                                                              [the calibration's]\n" \
    "  --ps-shards S        ps as S shards, each machine's workers aggregating first\n"   \
    "                       (TensorFlow, BytePS); 0: one master rank  [the calibration's]\n" \
    "  --ps-placement P     the shards on the workers' machines (colocated) or on\n"      \
    "                       machines of their own (separate)     [the calibration's]\n"   \
    "  --largest-tensor SIZE ps: the model's largest tensor (8.2MB), whole on one\n"      \
    "                       shard, whose machine takes it from every other\n"            \
    "                                                  [the calibration's, else even]\n"  \
    "  --net SPEC           another network than the one --calib measured (train's\n"    \
    "                       --net syntax): its compute priced by layer kind with the\n"   \
    "                       calibration's rates, its bytes from its parameters, its\n"  \
    "                       memory from its layers' buffers, and the interval\n"         \
    "                       widened by the transfer's error\n"                           \
    "  --wide               the table's every column in seconds (default: 80 columns,\n"  \
    "                       times as h:mm:ss); --csv is the same either way\n"          \
    "  --step-time S        a worker that is a device (a GPU): one step of it at the\n"  \
    "                       batch predicted takes S (0.32, 320ms); --cores must be 1\n"   \
    "  --no-contention      as if every rank had a core of its own: nothing of host\n"   \
    "                       contention is paid (model/contention.h), in time or interval\n" \
    ""
#define GRID_USAGE_PARAMS                                                                   \
    "Workload (default: the calibration's, else the seed's 6000 images):\n"                 \
    "  --examples D  --batch B  --epochs E                               [6000, 32, 5]\n"   \
    "Parameters (default: --calib FILE, else the seed-like example; flags override):\n"    \
    "  --calib FILE         calibration.json from `speedup calibrate`\n"                    \
    "  --c0 S               fixed seconds per local step, one core\n"                        \
    "  --c1 S               seconds per example per local step, one core\n"                  \
    "  --sigma F            serial fraction inside a worker, 0..1\n"                         \
    "  --latency S          alpha, per message: 0.05, 50ms, 20us (also --alpha)\n"          \
    "  --bandwidth RATE     1/beta: 1gbit, 100mbit, 100Mb (bits/s), 125MB (bytes/s); Mbps\n"   \
    "                       and mb are refused as ambiguous\n"                                  \
    "  --model-bytes SIZE   bytes synchronised per round: 1819688, 100MB, 1.8MiB\n"         \
    "  --startup W0[,W1]    start-up seconds W(K) = W0 + W1*K\n"                             \
    "  --cv F               coefficient of variation of step time\n"                        \
    "  --host-cores P       physical cores in all (0 = unlimited)\n"                         \
    "  --update S           seconds of one optimizer update, one core\n"                     \
    "  --run-cv F           run-to-run spread of the host: log-sd of a run's speed factor\n" \
    "  --rank-cv F          a rank's own speed against the others' in a run (log-sd),\n"   \
    "                       kept for the run: the slowest rank sets every round's pace\n"   \
    "                       where ranks each keep a core (0: ranks alike)\n"                 \
    "  --overlap F          share of a step its batch-sync all-reduce may run beside,\n"    \
    "                       0..1 (DDP's buckets during backward; 0: none)\n"                \
    "  --overlap-slowdown F how much longer a step is with its all-reduce beside it\n"      \
    "                       (1 + F times; 0: the exchange takes no core from it)\n"       \
    "  --overlap-exposed F  share of the all-reduce exposed however long the step, 0..1\n"  \
    "  (a flag's value is taken as exact: its standard error from --calib is dropped)\n" \
    "Time to accuracy (needs --calib with an accuracy fit: speedup calibrate\n"            \
    "--accuracy-plan SECONDS, or --from-traces on runs that recorded accuracy):\n"          \
    "  --target-accuracy A  also predict, per configuration, the epochs and training\n"    \
    "                       time to reach test accuracy A (0..1, e.g. 0.90) with their\n"  \
    "                       95% PI, or that it is not reached; the workload defaults\n"   \
    "                       to the fit's (examples, batch, epochs)          [none]\n"

void grid_print_usage(FILE *out);

typedef struct {
    int workers[GRID_MAX_VALUES], n_workers;
    int cores[GRID_MAX_VALUES], n_cores;
    job_sync sync[GRID_MAX_VALUES];
    int every_n[GRID_MAX_VALUES], n_sync;
    job_topology topology[GRID_MAX_VALUES];
    int n_topology;
    job_config base;        /* workload, master, batch_per_worker */
    costmodel_params params;
    uncertainty unc;              /* of params: the calibration's, less the overridden */
    const char *calib_path;       /* NULL: the seed's example */
    cluster_spec cluster;         /* --cluster, when has_cluster */
    bool has_cluster, workers_given, cores_given, topology_given;
    bool wide;                    /* --wide: the table's every column, in seconds */
    bool no_contention;           /* --no-contention: params.contention_off */
    int n_cells;                  /* configurations kept (grid_finish): grid_size */
    const char *workload_from;    /* where D, B, E came from, for the setting's line */
    const char *net_spec;         /* --net: another network than the calibration's; NULL: its own */
    calibration_network network;  /* --calib's network and layer rates (model/netcost.h) */
    netcost_unlike net_unlike;    /* --net: its layers unlike the measured ones (model/netcost.h) */
    char host[128];               /* where the parameters were measured */
    /* What-if overrides, NaN / -1 when not given. */
    double param[PARAM_COUNT];   /* what-if values by registry id; NAN: not given */
    double latency, bandwidth, w0, w1, run_cv;
    double allreduce, ps_separate;   /* --allreduce, --ps-placement; NAN: not given */
    double step_time;                /* --step-time: one step of a device worker; NAN: not given */
    bool uncalibrated[JOB_TOPO_COUNT]; /* the calibration measured no such synchronisation */
    bool sigma_unmeasured;        /* the calibration measured no run at T > 1 */
    int range_workers, range_machines; /* the most the calibration measured; 0: not stated */
    long examples, batch;
    int epochs;
    double target_accuracy;       /* --target-accuracy, NaN when not given */
    efficiency_model efficiency;  /* --calib's accuracy fit (known false: none) */
} grid;

void grid_init(grid *g);
/* Handles one getopt_long code: 0 done, 1 not a grid flag, -1 bad value (printed). */
int grid_handle_option(grid *g, int code, const char *arg);
/* After parsing: loads the calibration, applies the overrides, checks every config.
 * 0, 1 for a bad file, 2 for a bad combination of flags or a refused config (printed,
 * naming it). */
int grid_finish(grid *g);

/* --net spec on n's input: its layers' cost (with their shapes), and those unlike n's
 * measured ones at a batch of `batch`. 0, or -1 with the reason (spec does not plan) in err. */
int grid_net_cost(const calibration_network *n, const char *spec, double batch, network_cost *target,
                  netcost_unlike *unlike, char *err, int errlen);
int grid_size(const grid *g);
/* One line under a table: what its "95% PI (one run)" is made of. */
void grid_print_interval_note(const grid *g, FILE *out);
/* One line under a table some of whose rows use more workers or machines than the
 * calibration measured (its range, where it states one: a table's), naming their worker
 * counts; nothing otherwise. */
void grid_print_range_note(const grid *g, const prediction_row *rows, int n, FILE *out);
/* What every prediction of g assumes, one line: the parameters' source, the workload,
 * the scaling mode and where the workers run. */
void grid_print_setting(const grid *g, FILE *out);
/* "K workers x T cores, SYNC sync, TOPOLOGY" into out (snprintf's return). */
int grid_describe(const job_config *c, char *out, int outlen);
/* The i-th configuration, i in [0, grid_size). Order: sync, topology, workers, cores
 * (the (sync, topology) pairs that run: not async with allreduce). */
job_config grid_config(const grid *g, int i);
/* With --target-accuracy: row r (predicted for config c, its time and interval set) gains
 * the epochs and time to reach it (has_tta, tta), the time per epoch being r's
 * (time − start-up)/E and its log-sd from r's 95% PI. Without: nothing. 0, or 1 after an
 * error line. */
int grid_fill_tta(const grid *g, const job_config *c, prediction_row *r);

#endif
