/* import_flags — the flags that say what a PyTorch profiler trace or a Horovod timeline
 * does not (trace/chrome_import.h): shared by `speedup calibrate --from-traces` and
 * `speedup trace`. Traces in the project's own format ignore them.
 *
 *   import_flags f;
 *   import_flags_init(&f);
 *   ... getopt_long with IMPORT_FLAGS_LONG_OPTIONS: import_flags_handle(&f, code, optarg) ...
 *   if (import_flags_finish(&f)) return 1;   // reads --phase-map
 *   tracefile_open(paths, n, &f.opts, ...);
 *   import_flags_release(&f);
 *
 * Defaults: the trace was recorded on this host (its name and online cores), 1 core per
 * worker, K from the trace, the default phase map (trace/phasemap.c).
 */
#ifndef SPEEDUP_IMPORT_FLAGS_H
#define SPEEDUP_IMPORT_FLAGS_H

#include "trace/chrome_import.h"

#include <getopt.h>

/* getopt_long codes; a command's own codes stay below IMPORT_OPT_FIRST. */
enum {
    IMPORT_OPT_FIRST = 2000,
    IMPORT_OPT_PHASE_MAP = IMPORT_OPT_FIRST, IMPORT_OPT_WORKERS, IMPORT_OPT_CORES, IMPORT_OPT_BATCH,
    IMPORT_OPT_BATCH_PER_WORKER, IMPORT_OPT_MODEL_BYTES, IMPORT_OPT_HOST_CORES, IMPORT_OPT_HOST, IMPORT_OPT_NET,
    IMPORT_OPT_PRINT_MAP,
    IMPORT_OPT_LAST
};

#define IMPORT_FLAGS_LONG_OPTIONS                                                    \
    { "phase-map", required_argument, 0, IMPORT_OPT_PHASE_MAP },                     \
    { "workers", required_argument, 0, IMPORT_OPT_WORKERS },                         \
    { "cores", required_argument, 0, IMPORT_OPT_CORES },                             \
    { "batch", required_argument, 0, IMPORT_OPT_BATCH },                             \
    { "batch-per-worker", no_argument, 0, IMPORT_OPT_BATCH_PER_WORKER },             \
    { "model-bytes", required_argument, 0, IMPORT_OPT_MODEL_BYTES },                 \
    { "host-cores", required_argument, 0, IMPORT_OPT_HOST_CORES },                   \
    { "host", required_argument, 0, IMPORT_OPT_HOST },                               \
    { "net", required_argument, 0, IMPORT_OPT_NET },                                 \
    { "print-phase-map", no_argument, 0, IMPORT_OPT_PRINT_MAP }

#define IMPORT_FLAGS_USAGE                                                                   \
    "A PyTorch profiler trace (Chrome JSON, one file per rank: RUN.rank0.json ...) or a\n"  \
    "Horovod timeline does not record these; they apply to such files only:\n"              \
    "  --batch B            global batch, split over the workers (needed to fit or\n"       \
    "                       measure: each step's examples)\n"                               \
    "  --batch-per-worker   every worker takes B (weak scaling)\n"                          \
    "  --workers K          workers             [distributedInfo, the rank files, Horovod]\n" \
    "  --cores T            threads per worker (torch.set_num_threads)             [1]\n"  \
    "  --model-bytes SIZE   bytes all-reduced per step (100MB, 1.8MiB, bytes)\n"            \
    "                       [Horovod: its tensors; else 0]\n"                              \
    "  --host-cores P       cores of the host that ran it       [this host's online]\n"     \
    "  --host NAME          the host that ran it                        [this host]\n"      \
    "  --net NAME           the network's name (traces of one network fit together) [\"\"]\n" \
    "  --phase-map FILE     PATTERN PHASE lines read before the built-in map (first\n"     \
    "                       match wins; PHASE: compute update comm wait startup eval\n"     \
    "                       step -); see docs/imports.md\n"                                      \
    "  --print-phase-map    print the built-in map and exit\n"

typedef struct {
    chrome_import_opts opts;
    const char *map_path;    /* --phase-map */
    phasemap *map;           /* owned: the default, with --phase-map's rules first */
    char host[128];
    bool print_map;
} import_flags;

void import_flags_init(import_flags *f);
/* One getopt_long code: 0 done, 1 not an import flag, -1 bad value (printed). */
int import_flags_handle(import_flags *f, int code, const char *arg);
/* Builds the phase map (prints it and returns 3 for --print-phase-map): 0, or 1 for a
 * bad --phase-map file (printed). */
int import_flags_finish(import_flags *f);
void import_flags_release(import_flags *f);

#endif
