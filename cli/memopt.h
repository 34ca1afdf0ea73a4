/* memopt — memory for `speedup model | simulate | advise`: the --memory-limit flag, where
 * the memory parameters come from, and each row's predicted peak per rank.
 *
 * Parameters (model/memory.h): the "memory" of the --calib file when it has one; else,
 * without --calib, the seed-like example's stated assumptions (Keras on Elephas on Spark,
 * memory_params_seed_example); a calibration written before memory was measured leaves
 * memory unknown (the columns stay empty, and --memory-limit is refused for it). The
 * prediction is for a run without --trace, at the grid's workload and model bytes.
 *
 *     memopt mo;
 *     memopt_init(&mo);
 *     ... in the getopt loop: memopt_handle_option(&mo, code, optarg) (0 taken, 1 not
 *         ours, -1 bad value, printed) ...
 *     if (memopt_finish(&mo, g.calib_path, g.net_spec)) return the status;
 *     memopt_fill(&mo, g.params.model_bytes, &config, &row);   for every row
 *     memopt_print_note(&mo, rows, n, stdout);                  under the table
 */
#ifndef SPEEDUP_MEMOPT_H
#define SPEEDUP_MEMOPT_H

#include "model/costmodel.h"
#include "model/memory.h"
#include "model/predictions.h"

#include <getopt.h>
#include <stdio.h>

/* getopt_long code of --memory-limit: below the grid's codes, above a command's own. */
enum { MEMOPT_OPT_LIMIT = 900 };

#define MEMOPT_LONG_OPTIONS { "memory-limit", required_argument, 0, MEMOPT_OPT_LIMIT }

#define MEMOPT_USAGE                                                                         \
    "Memory (peak resident set per rank: rss_worker_mib, rss_master_mib, fits in the CSV):\n" \
    "  --memory-limit SIZE  mark configurations whose worker or rank 0 (the ps master)\n"     \
    "                       would exceed SIZE: 4GiB, 512MiB, 2G (K, M, G, T and KiB..TiB\n"   \
    "                       are powers of 1024; kB, MB, GB, TB of 1000; no unit: bytes)\n"    \
    "                       [none]; parameters: --calib's \"memory\", else the seed-like\n"   \
    "                       example's (Keras on Elephas on Spark, stated assumptions)\n"

typedef struct {
    double limit_bytes;           /* 0: no limit */
    memory_params m;              /* m.known false: memory unknown */
    char source[320];             /* where m came from, for the note */
} memopt;

void memopt_init(memopt *o);
/* 0 taken, 1 not --memory-limit, -1 a bad size (printed: the caller exits 2). */
int memopt_handle_option(memopt *o, int code, const char *arg);
/* After parsing: the parameters from calib_path (NULL: the seed-like example); with
 * net_spec (--net, NULL: none), its buffers replace the calibrated network's known terms.
 * 0, 1 for a file that cannot be read, 2 for --memory-limit with a calibration that has no
 * memory or a network that cannot be priced (printed). */
int memopt_finish(memopt *o, const char *calib_path, const char *net_spec);
/* The row's memory columns for config c at model_bytes (nothing when memory is unknown). */
void memopt_fill(const memopt *o, double model_bytes, const job_config *c, prediction_row *r);
/* One line under a table: where the memory figures come from, and which rows are over the
 * limit. */
void memopt_print_note(const memopt *o, const prediction_row *rows, int n, FILE *out);

#endif
