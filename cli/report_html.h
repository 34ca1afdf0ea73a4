/* report_html — out/index.html of `speedup report`: every figure (PNG shown, SVG linked)
 * with its table, the measured configurations against their predictions with the error
 * of each, the calibration, and the host and network the numbers belong to.
 * Written atomically (util/atomicfile.h). */
#ifndef SPEEDUP_REPORT_HTML_H
#define SPEEDUP_REPORT_HTML_H

#include "model/calibration.h"
#include "fit/fidelity.h"
#include "model/predictions.h"
#include "trace/trace.h"

#include <stdbool.h>

/* One measured configuration, its runs and what was predicted for it. */
typedef struct {
    char name[96];              /* e.g. "2x1 every:8 allreduce b32" */
    int held_out;               /* 1: not in the calibration's fit */
    long batch;
    prediction_row measured;    /* the median run: time_s = the median of the runs' training times
                                   (trace/traceinfo.h), speedup and phases of the run nearest it */
    double runs_s[FIDELITY_MAX_RUNS]; /* every run's training time */
    int n_runs;
    double wall_s;              /* mean whole `speedup train --workers` run (launch, eval); 0: plan run */
    double model_s;             /* closed form */
    prediction_row sim;         /* `speedup simulate`: mean time, 95% prediction interval of one run */
} report_measured;

/* A cluster what-if: `speedup simulate --cluster` of workers 1, 2, 4, … one core each;
 * its figure is figures/cluster-N/speedup.png (N = its index + 1). */
enum { REPORT_MAX_CLUSTERS = 4 };
typedef struct {
    char desc[200];             /* "16 machines x 2 cores, 1 Gbit/s, 50 us" */
    int machines, per_machine;  /* M, and cores (or devices) a machine */
    prediction_row *rows;
    int n_rows;
} report_cluster;

typedef struct {
    const char *host_desc;      /* host, cores, load */
    const char *net_desc;       /* the neural network the runs trained */
    const char *link_desc;      /* the interconnect between their ranks */
    const char *commands;       /* the commands that made the report, one per line */
    const calibration *cal;
    const prediction_row *pred; int n_pred;
    const report_measured *meas; int n_meas;
    const fidelity_summary *fidelity; /* the held-out configurations; NULL: none */
    const trace *timeline_measured, *timeline_simulated;
    long examples; int epochs;
    long grid_batch;            /* the grid's global batch: measured rows at it are tabled */
    const char *calibrate_log;  /* calibrate's output, shown verbatim; NULL: none */
    const report_cluster *clusters; int n_clusters; /* the what-ifs, shown first */
    long what_if_examples; int what_if_epochs;      /* their workload */
    const char *const *memory_traces; int n_memory_traces; /* the memory section's runs
                                   (cli/report_memory.h); none: no section */
    bool accuracy_figure;       /* figures/accuracy.png was drawn (the traces hold accuracy
                                   curves): its section, with cal's accuracy fit */
} report_html_input;

int report_html_write(const char *path, const report_html_input *in, char *err, int errlen);

/* `speedup report --calib FILE`: the what-ifs of a calibration made elsewhere. */
typedef struct {
    const calibration *cal;
    const char *calib_path;
    const char *net;            /* --net: the network predicted, when not the calibration's */
    const char *net_unlike;     /* --net: the sentence naming its layers unlike the calibrated
                                   ones (model/netcost.h); "" or NULL: none */
    const char *commands;
    const report_cluster *clusters; int n_clusters;
    long examples; int epochs;  /* the what-if's workload */
    long batch;                 /* its batch: per worker (devices) or split over them */
} report_whatif_input;

/* The page opens with the answer for each cluster: its fastest choice, the training time
 * with its 95% interval and the machine-hours it takes, one worker's time beside it, and
 * what epoch or every:N sync does to accuracy when that is the fastest choice. */
int report_html_write_whatif(const char *path, const report_whatif_input *in, char *err, int errlen);


#endif
