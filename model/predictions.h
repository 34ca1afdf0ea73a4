/* predictions — the predictions / measurements CSV of DESIGN.md, and the same rows as an
 * aligned text table for a terminal.
 *
 *   workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,
 *   update_s,time_lo,time_hi,mean_lo,mean_hi,rss_worker_mib,rss_master_mib,fits,
 *   staleness_median,staleness_p90
 *
 * One row per configuration, predicted (model/costmodel.h, sim/) or measured (traces).
 * ci_lo/ci_hi and time_lo/time_hi: the 95% prediction interval of ONE run's speedup and
 * time (model/uncertainty.h); mean_lo/mean_hi: the Monte-Carlo interval of the simulator's
 * mean speedup; a measured row has every interval equal to its value. rss_*_mib and fits:
 * peak memory of a worker and of rank 0 against --memory-limit (model/memory.h), empty when
 * unknown. staleness_*: async and hogwild only, else empty. With a target accuracy every
 * row has nine columns more (PREDICTIONS_CSV_TTA_COLUMNS, model/efficiency.h), empty where
 * not reached: never NaN or infinite. Older files (12, 17, 20 and 29 columns) are still
 * read. Every column in full: docs/files.md ("Every column in full").
 *
 * predictions_read_csv mallocs the rows (the caller frees); predictions_save_csv writes
 * through a temporary file and a rename. Errors: -1 with one line in err ("PATH: line L:
 * what was expected"); only the write_* functions print, to the FILE they are given.
 */
#ifndef SPEEDUP_PREDICTIONS_H
#define SPEEDUP_PREDICTIONS_H

#include "model/costmodel.h"
#include "model/efficiency.h"
#include "model/uncertainty.h"

#include <stdbool.h>
#include <stdio.h>

#define PREDICTIONS_CSV_HEADER_V1 \
    "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s"
#define PREDICTIONS_CSV_HEADER_V2 PREDICTIONS_CSV_HEADER_V1 ",update_s,time_lo,time_hi,mean_lo,mean_hi"
#define PREDICTIONS_CSV_HEADER_V3 PREDICTIONS_CSV_HEADER_V2 ",rss_worker_mib,rss_master_mib,fits"
#define PREDICTIONS_CSV_HEADER PREDICTIONS_CSV_HEADER_V3 ",staleness_median,staleness_p90"
#define PREDICTIONS_CSV_TTA_COLUMNS \
    ",target_accuracy,reach,epochs_to_target,epochs_lo,epochs_hi,tta_s,tta_lo,tta_hi,accuracy_at_end"
#define PREDICTIONS_CSV_HEADER_V3_TTA PREDICTIONS_CSV_HEADER_V3 PREDICTIONS_CSV_TTA_COLUMNS
#define PREDICTIONS_CSV_HEADER_TTA PREDICTIONS_CSV_HEADER PREDICTIONS_CSV_TTA_COLUMNS

typedef struct {
    int workers, cores;
    char sync[24];           /* "batch", "epoch", "every:N", "async[:N]", "hogwild[:N]" */
    job_topology topology;
    double time_s, speedup, ci_lo, ci_hi;
    double compute_s, comm_s, wait_s, startup_s, update_s;
    double time_lo, time_hi;  /* one run's time: 95% prediction interval */
    double mean_lo, mean_hi;  /* the mean speedup: 95% Monte-Carlo interval */
    bool has_memory;          /* the three below are known (else written empty) */
    double rss_worker_mib, rss_master_mib; /* peak resident set: a worker, rank 0 */
    bool fits;                /* both within the memory limit (true without one) */
    bool has_staleness;       /* async, hogwild: the two below are known (else written empty) */
    double staleness_median, staleness_p90;
    double staleness_mean;    /* what the efficiency fit's τ is (not in the CSV); 0 but for async */
    bool has_tta;             /* tta below was predicted (a target accuracy was given) */
    efficiency_prediction tta; /* epochs and time to the target (has_time set) */
} prediction_row;

/* A row whose every interval is its value (a measurement, a prediction without spread). */
void predictions_set_point(prediction_row *r);

/* A row from the closed-form model for one config: the point, every interval its value. */
prediction_row predictions_from_model(const costmodel_params *p, const job_config *c);
/* The same row with the closed form's 95% prediction intervals of one run (time_lo/hi,
 * ci_lo/hi: model/uncertainty.h; u NULL: parameters known). mean_lo/mean_hi stay the
 * point: a formula has no Monte-Carlo error. */
prediction_row predictions_from_model_interval(const costmodel_params *p, const job_config *c,
                                               const uncertainty *u);

/* The fastest row of batch sync among rows[0..n): what a choice that averages models is
 * set beside; NULL when there is none. */
const prediction_row *predictions_fastest_batch_sync(const prediction_row *rows, int n);
/* Does row r train on stale gradients (async, hogwild) rather than average models? */
bool predictions_row_is_async(const prediction_row *r);

/* The test accuracy the accuracy fit m predicts for row r after the workload's epochs (r's
 * workers, cores, sync and topology; D, B, E and batch_per_worker from workload; async
 * with a dedicated master and r's mean staleness): a value in (0, 1), or NaN with why
 * when m cannot predict it (efficiency_check_at: another D or E than it was fitted for, a
 * term it did not fit). */
double predictions_accuracy_after(const efficiency_model *m, const prediction_row *r, const job_config *workload,
                                  char *why, int whylen);

/* The CSV: the header and columns of PREDICTIONS_CSV_HEADER, or of _TTA when some row
 * has a target accuracy. */
void predictions_write_csv(FILE *out, const prediction_row *rows, int n);
/* Reads a predictions or measurements CSV (header line required). Returns 0 with *rows
 * malloc'd (caller frees) and *n set, or -1 with "PATH: line L: what was expected". */
int predictions_read_csv(const char *path, prediction_row **rows, int *n, char *err, int errlen);
/* The CSV into path, atomically: 0, or -1 with the reason in err. */
int predictions_save_csv(const char *path, const prediction_row *rows, int n, char *err, int errlen);
/* Aligned columns: the time with its 95% prediction interval of one run ("95% PI (one
 * run)", "-" when it is the point), the speedup, and where the time goes; when some row
 * knows its memory, the peaks per rank in MiB and "OVER" beside a row that does not fit. */
void predictions_write_table(FILE *out, const prediction_row *rows, int n, bool wide);
/* wide false: 80 columns (workers, cores, sync, topology, time and its interval as h:mm:ss
 * beyond a minute, speedup to 3 digits, the term that takes most of the time, OVER where
 * memory does not fit); true: every column in seconds, as before. */
/* "19.5 s" under a minute (3 significant digits), else "h:mm:ss". */
void predictions_duration(double seconds, char *out, int size);
/* The rows' time to their target accuracy, aligned: epochs and time with their 95% PI of
 * one run, or why it is not reached (efficiency_describe_miss; epochs: the schedule's). */
void predictions_write_tta_table(FILE *out, const prediction_row *rows, int n, int epochs);

#endif
