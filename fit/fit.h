/* fit — the parameters of model/costmodel.h from traces (trace/trace.h), each with a
 * standard error, plus the Ernest-style fit and a leave-one-configuration-out validation
 * of both: what `speedup calibrate --from-traces` runs.
 *
 *   fit_result r;
 *   if (fit_traces(traces, paths, n, &r, err, sizeof err)) ...   // one line in err
 *   ... r.cal (parameters, standard errors), r.fit (regressions, runs, validation) ...
 *   fit_result_release(&r);
 *
 * In: traces of one host, the training runs' of one neural network (run.net, model_bytes).
 * What a trace means (which compute events are steps, ρ, a synchronisation's span, a run's
 * training time) is trace/traceinfo.h's, and only its. Communication-benchmark traces
 * (run.net = FIT_COMMBENCH_NET) feed only α, β.
 *
 * What is fitted from what (robust = fit/robustfit.h's bisquare with relative noise):
 *   c0, c1            robust step = c0 + c1·b, steps at T = 1, ρ = 1, scaled to the mean step;
 *                     where the runs time their layers, split at the steps' mean b as the
 *                     layers split a step (model/netcost.h's netcost_split)
 *   sigma             robust line through 0, steps at T > 1, ρ = 1 (c0, c1 fixed)
 *   alpha_X, beta_X   robust, per topology, on each synchronisation's span as S(K)
 *   master_wake       a crowded dedicated master's excess per message over α + β·M; no such
 *                     run: α + β·M once more, with a note
 *   overlap φ, χ, ε   steps of runs with K ≥ 2, ρ = 1 whose exchange ran beside them
 *   update u          robust location of the SGD update events at T = 1, ρ = 1
 *   w0, w1            NNLS (fit/nnls.h) of the start-up's end against K
 *   cv, run_cv        pooled step spread within runs; ln-time spread of repeated configs
 *   startup_cpu, startup_per_example   NNLS of the data_load start-up spans on (1, n), n the
 *                     examples a rank loaded (training and test); at one n, proportional
 *   model_bytes, host_cores, waits_block, test_examples   the run headers
 *   oversub_compute, balance, master_yield(_loss)   runs whose ranks outnumber the cores
 *   model_cv          the validation's errors less what an interval already carries
 *   memory            fit/memory_fit.h
 * Validation: each configuration of the training runs is left out (all its repeats
 * together; commbench traces kept), refitted and predicted by the model and by Ernest
 * (fit/ernest.h, five or more runs); median and worst relative error of the training time.
 *
 * Refused, naming what is missing: no traces, different hosts, training runs of different
 * networks or model bytes, no training run, data that cannot determine a parameter. Never
 * a NaN fit. What someone else's job cannot have (start-up spans, a topology it never
 * used, update events) is 0 with a note. Every regression's formula, threshold and standard error:
 * docs/calibration.md ("Every regression in full").
 *
 * fit_traces allocates r.runs; fit_result_release frees it. Nothing prints.
 */
#ifndef SPEEDUP_FIT_H
#define SPEEDUP_FIT_H

#include "model/calibration.h"
#include "trace/trace.h"

#include <stdbool.h>
#include <stdint.h>

#define FIT_COMMBENCH_NET "commbench"

typedef struct {
    calibration cal;              /* parameters, standard errors, host, workload */
    calibration_fit fit;          /* runs, regressions, Ernest, validation; fit.runs → runs */
    calibration_run *runs;        /* owned */
} fit_result;

/* What the traces of a small job (one K = 1 and one K = 2 run: a PyTorch job's two
 * profiler traces) cannot tell, stated: the latency of a message where the exchanges come
 * in fewer than three (workers, bytes) shapes, and optionally the bandwidth. A stated
 * value is used with a note and a standard error of its own size (the interval widens
 * by it); a fitted one never is. */
typedef struct {
    double latency_s;             /* α where the spans cannot separate it; NAN: FIT_DEFAULT_LATENCY_S */
    double bandwidth_bytes_per_s; /* 1/β likewise (exact as stated); NAN: fitted from the spans */
    uint64_t without;             /* bit PARAM_<id> (model/params.h): that term held at 0 in the fit
                                     and in every refit of the validation (an ablation:
                                     fit_without_allowed); 0: none */
} fit_options;

/* Can the term named id be held out (fit_options.without)? Not what every prediction needs
 * (c1, the model's bytes, the host's cores) nor what only describes the interval. */
bool fit_without_allowed(int id);
#define FIT_DEFAULT_LATENCY_S 50e-6 /* one message over TCP (loopback or a switched Ethernet) */
/* Sharing a core where no run shares one (fit/fit_oversub.c: traces without the plan's
 * oversubscribed runs, a family held out): κ taken as 0 (a core's share, no more) with a
 * standard error spanning what plans measured (0.05-0.72 on the 2-core EPYC VMs,
 * 2026-12-06/07), and, where waiting ranks poll, τ taken as what they measured (0.08-0.14
 * s), ± itself: the ranks stay packed over rounds shorter than it, as the run headers'
 * polling says they do, instead of being spread at once. */
#define FIT_DEFAULT_KAPPA_SE 0.5
#define FIT_DEFAULT_BALANCE_S 0.1
/* How far apart the one-step all-reduce runs on shared cores must be in idle step × (ρ − 1)
 * (largest / smallest) for their exchange's wait to be split into a cost per exchange (Λ)
 * and a share of the step (λ): the plan's runs differ 4× in step and 2× in ρ − 1
 * (docs/model.md "Λ"); runs alike in both tell only their sum. κ is read from the runs
 * whose idle step is within it of the longest. */
#define FIT_EXCHANGE_STEP_SPAN 1.5
/* The run-to-run spread where no configuration was run twice: what repeats of one
 * configuration spread by on the shared machines measured here (2.8-6.4%: experiments/drift,
 * experiments/fidelity, experiments/pytorch-ddp), so that an interval is not narrower for
 * knowing less. */
#define FIT_DEFAULT_RUN_CV 0.05
fit_options fit_options_default(void);

/* Fits traces[0..n) (paths[i] names traces[i] in messages and in the runs list).
 * Returns 0 and fills *out (release with fit_result_release), or -1 with one line in err.
 * fit_traces is fit_traces_with the default options. */
int fit_traces(trace *const *traces, const char *const *paths, int n, fit_result *out, char *err, int errlen);
int fit_traces_with(trace *const *traces, const char *const *paths, int n, const fit_options *o, fit_result *out,
                    char *err, int errlen);
void fit_result_release(fit_result *r);

#endif
