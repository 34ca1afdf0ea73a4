/* replicate — R independent runs of a simulated job (sim/job.h) and of its one-worker,
 * one-core baseline, summarised as means and 95% intervals.
 *
 * Replication r runs the job and the baseline (costmodel_baseline: K = 1, T = 1, the
 * same workload, the same launch and replay) with the seed job_seed(seed, r), and its
 * speedup is baseline time / job time. The interval of a mean over R runs is
 * mean ± t(0.975, R−1)·sd/√R (Student's t from gsl_cdf_tdist_Pinv). With R = 1 there is
 * no spread to estimate and the interval is the single value.
 */
#ifndef SPEEDUP_REPLICATE_H
#define SPEEDUP_REPLICATE_H

#include "sim/job.h"

typedef struct {
    int reps;
    double time_s, time_lo_s, time_hi_s;        /* makespan: mean and 95% interval */
    double speedup, speedup_lo, speedup_hi;      /* baseline / makespan */
    double startup_s, compute_s, comm_s, wait_s; /* per-worker means, averaged over runs */
    double barrier_wait_s;                       /* mean wait at one training barrier */
    double master_peak_bytes;
    uint64_t events;                             /* engine events, job and baseline, all runs */
} replicate_summary;

/* 0, or -1 with the reason in err. reps ≥ 1. */
int replicate_run(const job_spec *spec, int reps, unsigned long seed, replicate_summary *out,
                  char *err, int errlen);

/* Mean and 95% half-width of x[0..n); half-width 0 for n < 2. */
void replicate_interval(const double *x, int n, double *mean, double *half);

#endif
