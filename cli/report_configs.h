/* report_configs — the configurations `speedup report` measures: the calibration plan's
 * own runs (in the fit: read from their traces) and the held-out ones (measured by the
 * report, never fitted), built in for this host's cores or read from a file.
 *
 * A held-out file (`speedup report --held-out FILE`, experiments/fidelity/configs):
 * one configuration per line, '#' starts a comment, blank lines are skipped:
 *   WORKERS CORES SYNC TOPOLOGY BATCH MASTER EPOCHS [weak]
 *   2 1 every:8 allreduce 32 worker 1
 *   2 1 batch ps 32 dedicated 1
 *   2 1 batch allreduce 16 worker 1 weak     (weak scaling: every worker takes BATCH a
 *                                             step, `train --batch-per-worker`; batch sync)
 * WORKERS counts training workers (a dedicated master is one rank more); the
 * configuration must be one the model accepts (costmodel_check). Errors name the file,
 * the line and what was expected.
 */
#ifndef SPEEDUP_REPORT_CONFIGS_H
#define SPEEDUP_REPORT_CONFIGS_H

#include "model/costmodel.h"

#include <stdbool.h>

enum { REPORT_MAX_CONFIGS = 32 };

typedef struct {
    int workers, cores;
    char sync[24];               /* "batch", "epoch", "every:N" */
    char topology[16];           /* "ps", "allreduce" */
    job_master master;
    long batch;
    int epochs;
    int held_out;                /* 1: measured by the report, not in the fit */
    bool batch_per_worker;       /* weak scaling: every worker takes the whole batch */
} report_config;

/* The plan's runs at the grid's batch B (in the fit) followed by the built-in held-out
 * set for a host of `cores` cores; returns the count. */
int report_configs_builtin(long batch, long cores, report_config *out);

/* The plan's in-fit runs, then the held-out configurations of path; the count, or -1 with
 * "PATH: line L: ..." in err. */
int report_configs_read(const char *path, long batch, long cores, report_config *out, int max, char *err,
                        int errlen);

/* "2x1 every:8 allreduce b32" (+ " dedicated", + " E2" when epochs > 1, + " weak"). */
void report_config_name(const report_config *k, char *out, int size);

#endif
