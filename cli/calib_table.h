/* calib_table — `speedup calibrate --from-table FILE.csv`: a calibration from a table of
 * measured throughputs (fit/table.h), for a cluster nobody here built: a user's own, or a
 * published benchmark's. Its flags are pasted into calibrate's getopt table; --model-bytes
 * is the import flags' (cli/import_flags.h).
 *
 *   calib_table_flags f;
 *   calib_table_init(&f);
 *   ... getopt_long: calib_table_handle(&f, code, optarg) ...
 *   if (f.path) return calib_table_run(&f, model_bytes, out_path, strict);
 */
#ifndef SPEEDUP_CALIB_TABLE_H
#define SPEEDUP_CALIB_TABLE_H

#include "fit/table.h"

#include <getopt.h>
#include <stdbool.h>

enum {
    CALIB_TABLE_OPT_FIRST = 3000,
    CALIB_TABLE_OPT_FROM = CALIB_TABLE_OPT_FIRST, CALIB_TABLE_OPT_TOPOLOGY, CALIB_TABLE_OPT_ALLREDUCE,
    CALIB_TABLE_OPT_PLACEMENT, CALIB_TABLE_OPT_LATENCY, CALIB_TABLE_OPT_INTRA_LATENCY, CALIB_TABLE_OPT_ROW_NOISE,
    CALIB_TABLE_OPT_LARGEST, CALIB_TABLE_OPT_LINE_RATE, CALIB_TABLE_OPT_LAST
};

#define CALIB_TABLE_LONG_OPTIONS                                                     \
    { "from-table", required_argument, 0, CALIB_TABLE_OPT_FROM },                    \
    { "topology", required_argument, 0, CALIB_TABLE_OPT_TOPOLOGY },                  \
    { "allreduce", required_argument, 0, CALIB_TABLE_OPT_ALLREDUCE },                \
    { "ps-placement", required_argument, 0, CALIB_TABLE_OPT_PLACEMENT },             \
    { "latency", required_argument, 0, CALIB_TABLE_OPT_LATENCY },                    \
    { "intra-latency", required_argument, 0, CALIB_TABLE_OPT_INTRA_LATENCY },        \
    { "row-noise", required_argument, 0, CALIB_TABLE_OPT_ROW_NOISE },                \
    { "largest-tensor", required_argument, 0, CALIB_TABLE_OPT_LARGEST },             \
    { "line-rate", required_argument, 0, CALIB_TABLE_OPT_LINE_RATE }

#define CALIB_TABLE_USAGE                                                                    \
    "From a table of measured throughputs (a cluster of yours, a published benchmark):\n"  \
    "FILE.csv has the header workers,machines,local_batch,throughput[,std][,shards]\n"      \
    "(throughput: examples per second, all workers; std: its spread; shards: the ps\n"      \
    "shards of that run). Workers are devices (GPUs): one per slot of a machine. Fits the\n" \
    "step from the one-worker rows, the machine's own link from the rows inside one\n"      \
    "machine, the fabric between machines from the multi-machine rows, each with a\n"       \
    "standard error from the rows' spread; what the rows cannot tell is stated (below),\n"  \
    "with a note. `model`, `simulate`, `advise` and `report --calib` then predict\n"        \
    "--cluster MxG (G workers a machine, the calibrated fabric) or MxG@RATE.\n"             \
    "  --from-table FILE.csv  the table                                         [none]\n"  \
    "  --model-bytes SIZE     bytes exchanged a step: 102MB, 97.5MiB   [required]\n"         \
    "  --topology T           allreduce | ps (sharded parameter servers)   [allreduce]\n"  \
    "  --allreduce A          how it spans machines: ring | hierarchical | either\n"        \
    "                         (not known: the mean of the two, interval spanning both)\n"  \
    "                                                                      [either]\n"      \
    "  --ps-placement P       ps shards on the workers' machines (colocated) or on\n"       \
    "                         machines of their own (separate)          [colocated]\n"      \
    "  --latency S            the fabric's latency where the rows leave it open [25us]\n"  \
    "  --intra-latency S      a machine's own link's latency, likewise          [5us]\n"    \
    "  --row-noise F          relative spread of a row without std              [0.03]\n"  \
    "  --largest-tensor SIZE  ps: the model's largest tensor (8.2MB), whole on one\n"       \
    "                         shard; its machine takes it from every other  [even shards]\n"\
    "  --line-rate RATE       the fabric's nominal rate (1.25gbit): no machine's link\n"   \
    "                         moves more, however much of a ps exchange hides [none]\n"

typedef struct {
    const char *path;        /* --from-table; NULL: not this mode */
    table_opts opts;
    bool given;              /* a flag of this mode only was given (not --from-table, --latency) */
    bool latency_given;      /* --latency: the fabric's here, a link's for --from-traces */
} calib_table_flags;

void calib_table_init(calib_table_flags *f);
/* 0 handled, 1 not one of these, -1 a bad value (printed). */
int calib_table_handle(calib_table_flags *f, int code, const char *arg);
/* Fits and writes out_path; prints the fit, each row against it and the rows' verdict.
 * 0, or 1 (printed): an error, or with strict a poor verdict (the file written all the
 * same, as --from-traces does). */
int calib_table_run(const calib_table_flags *f, double model_bytes, const char *out_path, bool strict);

#endif
