/* report_html — out/index.html of `speedup report`: every figure (PNG shown, SVG linked)
 * with its table, the measured configurations against their predictions with the error
 * of each, the calibration, and the host and network the numbers belong to.
 * Written atomically (util/atomicfile.h). */
#ifndef SPEEDUP_REPORT_HTML_H
#define SPEEDUP_REPORT_HTML_H

#include "model/calibration.h"
#include "model/predictions.h"
#include "model/trace.h"

/* One measured configuration and what was predicted for it. */
typedef struct {
    char name[96];              /* e.g. "2x1 every:8 allreduce b32" */
    int held_out;               /* 1: not in the calibration's fit */
    long batch;
    prediction_row measured;    /* time_s = measured training time (see fit_measured_total) */
    double wall_s;              /* the whole `speedup train --workers` run, launch and eval included */
    double model_s;             /* closed form */
    prediction_row sim;         /* `speedup simulate` of the same config: mean time, speedup CI */
} report_measured;

typedef struct {
    const char *host_desc;      /* host, cores, load */
    const char *net_desc;       /* the CNN and the interconnect */
    const char *commands;       /* the commands that made the report, one per line */
    const calibration *cal;
    const prediction_row *pred; int n_pred;
    const report_measured *meas; int n_meas;
    const trace *timeline_measured, *timeline_simulated;
    long examples; int epochs;
    long grid_batch;            /* the grid's global batch: measured rows at it are tabled */
    const char *calibrate_log;  /* calibrate's output, shown verbatim; NULL: none */
} report_html_input;

int report_html_write(const char *path, const report_html_input *in, char *err, int errlen);

#endif
