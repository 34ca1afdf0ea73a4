/* params — the one registry of the cost model's calibrated parameters.
 *
 * Every parameter of model/costmodel.h's costmodel_params that a calibration carries is
 * one row below; everything that lists them is generated from it: the range check
 * (costmodel_check), calibration.json's reader and writer and its standard errors
 * (calibration_stderr, model/calibration.h), the parameters the prediction interval draws
 * (model/uncertainty.c), the fit's printout (`speedup calibrate`) and the what-if flags
 * that set one parameter (cli/grid.h). Adding a parameter is adding a row.
 *
 * COSTMODEL_PARAMS(P, PF) calls P for a row without a what-if flag and PF for one with
 * (PF(..., flag, kind) has two more columns), in calibration.json's order:
 *   id      PARAM_<id>: the parameter's index
 *   name    its key in calibration.json's "params" (and in messages)
 *   field   its member of costmodel_params
 *   se      its member of calibration_stderr
 *   unit    as written beside its value
 *   lo, hi  valid range [lo, hi]: lo 0 but for a signed correction; hi 1: a fraction
 *   drawn   1: drawn in the prediction interval from its standard error
 *   req     1: required in every calibration.json; 0: later, read as 0 when absent;
 *           -1: as 0, and written only when not 0 (a cluster's terms: files of one host
 *           stay as they were)
 *   print   its place in `speedup calibrate`'s list (0: printed apart or not at all)
 *   says    what `speedup calibrate` prints after the unit
 *   flag    the what-if flag that sets it (--flag), taken as exact
 *   kind    how the flag's value is read: PARAM_SECONDS (a time with its unit),
 *           PARAM_FRACTION ([0, 1]), PARAM_RATIO (a number in [0, 100]), PARAM_CORES,
 *           PARAM_BYTES (a size with its unit), PARAM_INTEGER (a whole number >= 1)
 */
#ifndef SPEEDUP_PARAMS_H
#define SPEEDUP_PARAMS_H

#include "model/costmodel.h"

#include <math.h>

/* clang-format off */
#define COSTMODEL_PARAMS(P, PF)                                                                                    \
  PF(C0, "c0", c0_s, c0_s, "s", 0, INFINITY, 1, 1, 1, "s", "c0", PARAM_SECONDS)                                    \
  PF(C1, "c1", c1_s, c1_s, "s/example", 0, INFINITY, 1, 1, 2, "s/example", "c1", PARAM_SECONDS)                    \
  PF(SIGMA, "sigma", sigma, sigma, "1", 0, 1.0, 1, 1, 3, "", "sigma", PARAM_FRACTION)                              \
  P(ALPHA_PS, "alpha_ps", link[JOB_TOPO_PS].alpha_s, alpha_ps, "s", 0, INFINITY, 1, 1, 4, "s")                     \
  P(BETA_PS, "beta_ps", link[JOB_TOPO_PS].beta_s_per_byte, beta_ps, "s/byte", 0, INFINITY, 1, 1, 5, "s/byte")      \
  P(ALPHA_ALLREDUCE, "alpha_allreduce", link[JOB_TOPO_ALLREDUCE].alpha_s, alpha_allreduce, "s", 0, INFINITY, 1, 1, \
    6, "s")                                                                                                        \
  P(BETA_ALLREDUCE, "beta_allreduce", link[JOB_TOPO_ALLREDUCE].beta_s_per_byte, beta_allreduce, "s/byte", 0,       \
    INFINITY, 1, 1, 7, "s/byte")                                                                                   \
  PF(MODEL_BYTES, "model_bytes", model_bytes, model_bytes, "byte", 0, INFINITY, 0, 1, 0, "",                       \
     "model-bytes", PARAM_BYTES)                                                                                   \
  P(W0, "w0", w0_s, w0_s, "s", 0, INFINITY, 1, 1, 8, "s")                                                          \
  P(W1, "w1", w1_s, w1_s, "s/worker", 0, INFINITY, 1, 1, 9, "s/worker")                                            \
  PF(CV, "cv", cv, cv, "1", 0, INFINITY, 1, 1, 12, "(within a run)", "cv", PARAM_RATIO)                            \
  PF(RANK_CV, "rank_cv", rank_cv, rank_cv, "1", 0, INFINITY, 1, 0, 28,                                             \
     "(a rank's own speed against the others', kept for a run)", "rank-cv", PARAM_RATIO)                           \
  P(RUN_CV, "run_cv", run_cv, run_cv, "1", 0, INFINITY, 0, 0, 13, "(between runs)")                                \
  P(RUN_CV_OVERSUB, "run_cv_oversub", run_cv_oversub, run_cv_oversub, "1", 0, INFINITY, 0, 0, 14,                  \
    "(between runs, more ranks than cores)")                                                                       \
  PF(HOST_CORES, "host_cores", host_cores, host_cores, "core", 0, JOB_MAX_HOST_CORES, 0, 1, 0, "",                 \
     "host-cores", PARAM_CORES)                                                                                    \
  PF(UPDATE, "update", update_s, update_s, "s", 0, INFINITY, 1, 0, 21, "s", "update", PARAM_SECONDS)               \
  P(STARTUP_CPU, "startup_cpu", startup_cpu_s, startup_cpu_s, "s", 0, INFINITY, 1, 0, 10,                          \
    "s (the data load, at no examples)")                                                                           \
  P(STARTUP_PER_EXAMPLE, "startup_per_example", startup_per_example_s, startup_per_example_s, "s/example", 0,      \
    INFINITY, 1, 0, 11, "s/example (the data load's growth with the examples loaded)")                             \
  P(TEST_EXAMPLES, "test_examples", test_examples, test_examples, "example", 0, INFINITY, 0, -1, 0, "")            \
  P(OVERSUB_COMPUTE, "oversub_compute", oversub_compute, oversub_compute, "1", 0, INFINITY, 1, 0, 15,              \
    "(sharing a core, a share of the step over rounds of several steps, per unit of rho - 1)")                     \
  P(OVERSUB_WAIT, "oversub_wait", oversub_wait_s, oversub_wait_s, "s", 0, INFINITY, 1, -1, 15,                     \
    "s (an all-reduce's one-step round on shared cores waits this, a round)")                                      \
  P(OVERSUB_WAIT_SHARE, "oversub_wait_share", oversub_wait_share, oversub_wait_share, "1", 0, INFINITY, 1, -1, 15, \
    "(and this share of an idle step more, per unit of rho - 1)")                                                  \
  P(BALANCE, "balance", balance_s, balance_s, "s", 0, INFINITY, 1, 0, 16, "s (the scheduler evens out the cores)") \
  P(KAPPA_FADE, "kappa_fade", kappa_fade_s, kappa_fade_s, "s", 0, INFINITY, 1, -1, 17,                             \
    "s (sharing a core's extra cost, kappa, spread over a round this long)")                                       \
  P(MODEL_CV, "model_cv", model_cv, model_cv, "1", 0, INFINITY, 0, 0, 0, "")                                       \
  P(MODEL_CV_OVERSUB, "model_cv_oversub", model_cv_oversub, model_cv_oversub, "1", 0, INFINITY, 0, -1, 0, "")      \
  P(MASTER_YIELD, "master_yield", master_yield, master_yield, "1", 0, 1.0, 1, 0, 18,                               \
    "(of its core a dedicated master gives back)")                                                                 \
  P(MASTER_YIELD_LOSS, "master_yield_loss", master_yield_loss, master_yield_loss, "1", -1.0, 1.0, 1, 0, 19,        \
    "(of that yield given up over rounds longer than balance; < 0: more given back)")                              \
  P(MASTER_WAKE, "master_wake", master_wake_s, master_wake_s, "s", 0, INFINITY, 1, 0, 20,                          \
    "s (a message to a dedicated master on a full host waits this much more)")                                     \
  PF(OVERLAP, "overlap", overlap, overlap, "1", 0, 1.0, 1, 0, 22, "(share of a step beside its all-reduce)",       \
     "overlap", PARAM_FRACTION)                                                                                    \
  PF(OVERLAP_SLOWDOWN, "overlap_slowdown", overlap_slowdown, overlap_slowdown, "1", 0, INFINITY, 1, 0, 23,         \
     "(a step with its all-reduce beside it is 1 + this times as long)", "overlap-slowdown", PARAM_RATIO)          \
  PF(OVERLAP_EXPOSED, "overlap_exposed", overlap_exposed, overlap_exposed, "1", 0, 1.0, 1, 0, 24,                  \
     "(of the all-reduce exposed however long the step)", "overlap-exposed", PARAM_FRACTION)                       \
  P(WAITS_BLOCK, "waits_block", waits_block, waits_block, "1", 0, 1.0, 0, 0, 0, "")                                \
  P(NET_ALPHA, "net_alpha", net.alpha_s, net_alpha, "s", 0, INFINITY, 1, -1, 25,                                   \
    "s (a message across machines, beyond alpha)")                                                                 \
  P(NET_BETA, "net_beta", net.beta_s_per_byte, net_beta, "s/byte", 0, INFINITY, 1, -1, 26,                         \
    "s/byte (across machines: the fabric's effective 1/rate)")                                                     \
  P(WORKER_DEVICE, "worker_device", worker_device, worker_device, "1", 0, 1.0, 0, -1, 0, "")                       \
  P(ALLREDUCE_ALGORITHM, "allreduce_algorithm", allreduce_algorithm, allreduce_algorithm, "1", 0, 2.0, 0, -1, 0,   \
    "")                                                                                                            \
  PF(PS_SHARDS, "ps_shards", ps_shards, ps_shards, "shard", 0, 1e6, 0, -1, 0, "", "ps-shards", PARAM_INTEGER)      \
  P(PS_SEPARATE, "ps_separate", ps_separate, ps_separate, "1", 0, 1.0, 0, -1, 0, "")                               \
  PF(PS_LARGEST, "ps_largest_bytes", ps_largest_bytes, ps_largest_bytes, "byte", 0, INFINITY, 0, -1, 0, "",        \
     "largest-tensor", PARAM_BYTES)                                                                                \
  P(NET_LINE_BETA, "net_line_beta", net_line_beta_s_per_byte, net_line_beta, "s/byte", 0, INFINITY, 1, -1, 27,     \
    "s/byte (across machines: the line's nominal 1/rate, the busiest link's floor)")                               \
  P(BETA_HOT_ALLREDUCE, "beta_hot_allreduce", beta_hot_allreduce_s_per_byte, beta_hot_allreduce, "s/byte", 0,      \
    INFINITY, 0, -1, 7, "s/byte (after a step that moved nothing: the commbench's)")                               \
  P(TRAFFIC_REF, "traffic_ref", traffic_ref_bytes, traffic_ref, "byte", 0, INFINITY, 0, -1, 7,                     \
    "byte (what a step moved on a rank where beta_allreduce was measured)")                                        \
  P(TRAFFIC_PER_EXAMPLE, "traffic_per_example", traffic_bytes_per_example, traffic_per_example, "byte", 0,         \
    INFINITY, 0, -1, 0, "")                                                                                        \
  P(TRAFFIC_PER_STEP, "traffic_per_step", traffic_bytes_per_step, traffic_per_step, "byte", 0, INFINITY, 0, -1, 0,  \
    "")
/* clang-format on */

/* How a what-if flag's value is read (cli/grid.c). */
typedef enum { PARAM_SECONDS, PARAM_FRACTION, PARAM_RATIO, PARAM_CORES, PARAM_BYTES, PARAM_INTEGER } param_kind;

#define PARAM_ENUM_(id, ...) PARAM_##id,
typedef enum { COSTMODEL_PARAMS(PARAM_ENUM_, PARAM_ENUM_) PARAM_COUNT } param_id;
#undef PARAM_ENUM_

/* A parameter's standard error, by the same names (members of the se column). */
#define PARAM_SE_(id, name, field, se, ...) double se;
typedef struct { COSTMODEL_PARAMS(PARAM_SE_, PARAM_SE_) } calibration_stderr;
#undef PARAM_SE_

/* One row of the registry, for code that walks it (param_info). */
typedef struct {
    const char *name, *unit, *says;
    double lo, hi;
    int drawn, required, print;
    const char *flag;        /* NULL: no what-if flag of its own */
    param_kind kind;
} param_row;

/* The registry's row of parameter id (0 ≤ id < PARAM_COUNT). */
const param_row *param_info(param_id id);
/* Is v a finite value in the row's range [lo, hi]? */
bool param_in_range(const param_row *r, double v);
/* Parameter id's value in p, its standard error in e. */
double *param_value(costmodel_params *p, param_id id);
double param_get(const costmodel_params *p, param_id id);
double *param_se(calibration_stderr *e, param_id id);
double param_se_get(const calibration_stderr *e, param_id id);
/* The id of the parameter named name (calibration.json's key), or -1. */
int param_by_name(const char *name);

#endif
