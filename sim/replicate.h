/* replicate — R independent runs of a simulated job (sim/job.h) and of its one-worker,
 * one-core baseline, summarised as means, the 95% prediction interval of ONE run, and the
 * 95% interval of the mean (DESIGN.md, "Uncertainty: what the 95% interval means").
 *
 * Replication r is what one user's pair of runs could be (model/uncertainty.h):
 *   1. the parameters θ_r, drawn from the estimate (uncertainty_draw: c0/c1 jointly
 *      normal, the others independent, each truncated to its range), shared by the job
 *      and its baseline: there is one truth, whatever it is;
 *   2. the job on θ_r and the baseline (costmodel_baseline: K = 1, T = 1, the same
 *      workload, launch and replay) on θ_r, each simulated with the step noise of
 *      job_seed(seed, r);
 *   3. a run factor for each of the two runs, log-normal with median 1 and log-sd run_cv
 *      (uncertainty_run_factor), on that run's whole time and every phase of it.
 * θ_r and the two factors come from their own MT19937 stream, seeded with
 * job_seed(job_seed(seed, r), 0), so the step noise of a run is the same with and without
 * them. time_r = f_job·makespan, speedup_r = f_base·baseline / time_r; a job that is its own
 * baseline (one worker, one core) is one run, and its speedup is 1 in every replication.
 *
 * Intervals over the R replications x_1..x_R (times, speedups):
 *   prediction interval of one run (time_lo/hi, speedup_lo/hi): on the log scale,
 *       exp(m ± t(0.975, R−1)·s·√(1 + 1/R)),   m, s = mean and sd of ln x_r,
 *     the standard interval for one new draw from the distribution the replications
 *     sample (Student's t: the sd is estimated). Log scale because the run factor is
 *     log-normal and the rest multiplies a time (the interval stays positive and is
 *     asymmetric like the runs). Not the 2.5%/97.5% quantiles: their endpoints need
 *     hundreds of replications to settle, and `speedup simulate` keeps R small enough to
 *     stay quick; with normal ln x the t interval covers 95% at any R ≥ 2.
 *   interval of the mean (time_mean_lo/hi, speedup_mean_lo/hi): x̄ ± t(0.975, R−1)·sd/√R,
 *     Monte-Carlo error only, √(R+1) times narrower: never "the" interval.
 * With no spread (or R = 1: none can be estimated) every interval is the mean.
 *
 * The points (time_s, speedup, the breakdown, and the interval of their mean) come from
 * central runs: replication r's job and baseline simulated once more with the same step
 * noise on the estimate itself (θ = the calibration's values, no run factor: the host at
 * its median speed), the mean over r. Not the drawn runs' mean: a parameter at its bound
 * (c0 = 0 after a non-negative fit) draws only upward, so their mean adds half a normal
 * of its standard error to every step, and a log-normal factor of median 1 has a mean
 * above 1; both belong in the interval, not in the point. With nothing drawn the central
 * run is the drawn one without its factor.
 */
#ifndef SPEEDUP_REPLICATE_H
#define SPEEDUP_REPLICATE_H

#include "model/uncertainty.h"
#include "sim/job.h"

typedef struct {
    int reps;
    double time_s, time_lo_s, time_hi_s;         /* makespan: central mean, 95% PI of one run */
    double time_mean_lo_s, time_mean_hi_s;       /* 95% interval of the mean makespan */
    double speedup, speedup_lo, speedup_hi;      /* baseline / makespan: central mean, 95% PI of one run */
    double speedup_mean_lo, speedup_mean_hi;     /* 95% interval of the mean speedup */
    double startup_s, compute_s, update_s, comm_s, wait_s; /* per-worker means, over the central runs */
    double barrier_wait_s;                       /* mean wait at one training barrier */
    double master_peak_bytes;
    double staleness_median, staleness_p90, staleness_mean; /* async, hogwild: means over the runs
                                                    of each run's (sim/job.h); 0 otherwise */
    uint64_t events;                             /* engine events, job and baseline, all runs */
} replicate_summary;

/* 0, or -1 with the reason in err. reps ≥ 1. unc NULL: the parameters are known (then
 * with run_cv = 0 the prediction interval is the within-run noise only). */
int replicate_run(const job_spec *spec, const uncertainty *unc, int reps, unsigned long seed,
                  replicate_summary *out, char *err, int errlen);

/* Mean and 95% half-width of the mean of x[0..n); half-width 0 for n < 2. */
void replicate_interval(const double *x, int n, double *mean, double *half);

/* 95% prediction interval of one more draw like x[0..n), on the log scale (above); x > 0
 * (a value ≤ 0 gives NaN). lo = hi = the mean for n < 2 or no spread. 0, or -1 out of
 * memory. */
int replicate_prediction_interval(const double *x, int n, double *lo, double *hi);

#endif
