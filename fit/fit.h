/* fit — the parameters of model/costmodel.h from traces (trace/trace.h), each with a
 * standard error, plus the Ernest-style fit and a leave-one-configuration-out validation
 * of both.
 *
 * What a trace means is trace/traceinfo.h's, and only its: which compute events are steps
 * (examples > 0: a dedicated master's turn or an empty slice is no step and enters no
 * fit), ρ of a run, a synchronisation's span, a run's training time.
 *
 * What is fitted from what (every regression uses GSL; NNLS = fit/nnls.h; robust =
 * fit/robustfit.h, the bisquare fit, so that a preempted span has no pull, with relative
 * noise, so that a long span does not pass for a precise one: each row divided by the
 * median of the rows with its features, then again by its value fitted so):
 *
 *   c0, c1   robust fit of step_s = c0 + c1·b over every step of runs with T = 1 and ρ = 1
 *            (traceinfo_rho), b = the step's examples; their covariance is cov_c0_c1.
 *            Needs two or more distinct b. The steps of a run whose exchange ran beside
 *            them (traceinfo_overlaps: DDP) are left out — they share the cores with the
 *            exchange's threads, which overlap_slowdown measures apart — unless the other
 *            runs have a single b, when they enter (note on c0; overlap_slowdown is 0).
 *   sigma    steps of runs with T > 1 and ρ = 1: with c0, c1 fixed,
 *            step_s − c0 − c1·b/T = σ·c1·b·(1 − 1/T), a robust line through the origin.
 *            Its standard error adds the propagated uncertainty of c0, c1 (their
 *            covariance, numerical gradient). Clamped to [0, 1]; a clamped σ gets a
 *            zero-width standard error.
 *   alpha_X, beta_X   per topology X, robust fit without intercept over the
 *            synchronisations (traceinfo_syncs: a (name, bytes, epoch, step), its span the
 *            largest rank part). Each covers one whole synchronisation of "bytes" bytes
 *            (the run's model_bytes when absent) among the run's K workers, so its
 *            duration is S(K) of model/costmodel.c:
 *              allreduce:  (2(K−1))·α + (2(K−1)/K·bytes)·β        events with K ≥ 2
 *              ps:         (2R)·α + (2R·bytes)·β,  R = K−1 (master trains), K (dedicated)
 *              pingpong:   2·α + (2·bytes)·β    (one round trip: a ps exchange with R = 1)
 *            Message times have heavy tails (on a busy 2-core host the slowest of 20
 *            repetitions was up to 100× the median): the robust fit gives those weight 0.
 *            Needs 3 or more distinct (pattern, K, bytes) groups that are not all
 *            proportional (two K or two message sizes): two would fit any line.
 *            The pattern is the event's "name" when it is "allreduce", "ps" or "pingpong"
 *            (the communication benchmark writes these), the run's topology when it has
 *            none; a synchronisation named otherwise (an imported "broadcast": DDP's
 *            one-off bucket order) is none of S(K) and is left out. A topology that no
 *            trace synchronises through and no training run uses (a PyTorch job: ps) is
 *            left uncalibrated — 0, with a note, cal.uncalibrated set — when the other
 *            one fits; when neither can, both say what is missing.
 *   master_wake  over the synchronisations of the batch-sync runs whose dedicated ps
 *            master shares its host with workers that take every core
 *            (traceinfo_master_crowded): robust location of span/(2K) − (α_ps + β_ps·bytes),
 *            what each of the 2K messages took beyond the link (the master has to win a
 *            core back); held at 0 when below. No such run: 0 with a note.
 *   overlap  φ: the median over the steps of the runs with K ≥ 2 and ρ = 1 of
 *            traceinfo_overlaps (the share of the step during which its own exchange
 *            already ran beside it, on another thread); standard error √(π/2)·sd/√n.
 *            No background communication in any trace: 0 with a note (and so are the
 *            two below).
 *   overlap_slowdown  χ: over the same steps, Σ min(step, 3·alone) / Σ alone − 1, alone =
 *            c0 + c1·(σ + (1−σ)/T)·b (the level matched to the mean step as c0, c1
 *            are); standard error that of the mean ratio step/alone. At least 0.
 *   overlap_exposed  ε: over the same steps, the mean of min(1, exposed / S(K)), exposed
 *            the rank's foreground comm of that exchange (traceinfo_overlaps), S(K) of
 *            the run's config at the fitted all-reduce link; standard error sd/√n.
 *   update   u: robust location (the bisquare fit of a constant) of the update events of
 *            runs with T = 1 and ρ = 1, each one update of the whole model on one core.
 *            Traces without update events (a trainer that did not record the update
 *            apart) give u = 0 with a note: their update is inside compute and comm, as
 *            before. Update events only at T > 1 or ρ > 1 leave u unfittable.
 *   w0, w1   NNLS of W = w0 + w1·K, one point per training run: W = the latest end of
 *            any rank's startup events. Needs runs at two or more K, three or more runs.
 *            No training run with start-up events at all (a profiler trace starts with
 *            training, and so does its measured time): w0 = w1 = 0 with a note.
 *   cv       within-run spread: pooled relative spread of step times: in each run, steps
 *            grouped by examples; cv² = Σ (n_g − 1)·(s_g/m_g)² / Σ (n_g − 1);
 *            standard error cv·√((1 + 2cv²) / (2·dof)) (sample CV of normal data).
 *   run_cv   the run-to-run spread (log-normal σ of a whole run's speed factor), from the
 *            configurations that occur more than once among the training runs (same
 *            workers, cores, sync, every_n, topology, master, batch_per_worker, examples,
 *            batch, epochs): s² = Σ_g Σ_i (ln t_i − mean_g ln t)² / Σ_g (n_g − 1), t the
 *            training time; standard error s/√(2·dof). No repeats: 0, with a note (the
 *            spread is unknown; a prediction interval then holds only within-run noise).
 *   model_bytes, host_cores   from the training runs' headers (exact: stderr 0).
 *
 * Ernest-style comparison: NNLS of each run's training time on Ernest's features
 * (fit/ernest.h) with machines = K·T and fraction = work = E·D, reported in DESIGN.md's
 * form T = θ0 + θ1·work/K + θ2·log2 K + θ3·K (θ2 = Ernest's ln-coefficient · ln 2).
 * Needs five or more training runs; without them the comparison is left out.
 *
 * A run's measured time is its training time (traceinfo_training_time): start-up and
 * training, the evaluation left out (the model has none).
 *
 * Leave-one-configuration-out: for every configuration of the training runs (see run_cv),
 * refit without every run of it (commbench traces are always kept: leaving one of two
 * identical runs out would test nothing), predict each of its runs' total time with
 * costmodel_total_time and the Ernest fit, report |predicted − measured| / measured per
 * run, median and worst. A configuration whose removal leaves a parameter unfittable
 * has its runs reported with the reason and not counted.
 *
 * Refused, with a message that says what is missing: no traces; traces from different
 * hosts (run.host) or, among training runs, different networks (run.net); no training
 * runs; data that cannot determine a parameter (each such parameter named with why, and
 * "a single configuration" said when all training runs share one). Never a NaN fit.
 *
 * Communication-benchmark traces (`speedup commbench`) have run.net = FIT_COMMBENCH_NET;
 * they feed only alpha, beta.
 */
#ifndef SPEEDUP_FIT_H
#define SPEEDUP_FIT_H

#include "model/calibration.h"
#include "trace/trace.h"

#define FIT_COMMBENCH_NET "commbench"

typedef struct {
    calibration cal;              /* parameters, standard errors, host, workload */
    calibration_fit fit;          /* runs, regressions, Ernest, validation; fit.runs → runs */
    calibration_run *runs;        /* owned */
} fit_result;

/* Fits traces[0..n) (paths[i] names traces[i] in messages and in the runs list).
 * Returns 0 and fills *out (release with fit_result_release), or -1 with one line in err. */
int fit_traces(trace *const *traces, const char *const *paths, int n, fit_result *out, char *err, int errlen);
void fit_result_release(fit_result *r);

#endif
