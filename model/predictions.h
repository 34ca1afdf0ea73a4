/* predictions — the predictions / measurements CSV of DESIGN.md, and the same rows as an
 * aligned text table for a terminal.
 *
 *   workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s
 *
 * ci_lo/ci_hi bound the speedup (95%); a closed-form prediction has ci_lo = ci_hi = speedup.
 */
#ifndef SPEEDUP_PREDICTIONS_H
#define SPEEDUP_PREDICTIONS_H

#include "model/costmodel.h"

#include <stdio.h>

#define PREDICTIONS_CSV_HEADER \
    "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s"

typedef struct {
    int workers, cores;
    char sync[24];           /* "batch", "epoch", "every:N" */
    costmodel_topology topology;
    double time_s, speedup, ci_lo, ci_hi;
    double compute_s, comm_s, wait_s, startup_s;
} prediction_row;

/* A row from the closed-form model for one config. */
prediction_row predictions_from_model(const costmodel_params *p, const costmodel_config *c);

void predictions_write_csv(FILE *out, const prediction_row *rows, int n);
/* Reads a predictions or measurements CSV (header line required). Returns 0 with *rows
 * malloc'd (caller frees) and *n set, or -1 with "PATH: line L: what was expected". */
int predictions_read_csv(const char *path, prediction_row **rows, int *n, char *err, int errlen);
/* The CSV into path, atomically: 0, or -1 with the reason in err. */
int predictions_save_csv(const char *path, const prediction_row *rows, int n, char *err, int errlen);
void predictions_write_table(FILE *out, const prediction_row *rows, int n);

#endif
