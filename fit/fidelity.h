/* fidelity — how well predictions held on measured runs: the figures DESIGN.md asks of a
 * prediction ("a prediction interval is only honest if it is checked"), computed in this
 * one place for `speedup report` and experiments/fidelity.
 *
 * For each configuration: its measured single runs t_1..t_n (n ≥ 1) and its prediction:
 * the time p and the 95% prediction interval [lo, hi] for one run.
 *   error        (p − median(t)) / median(t): the prediction against the typical run
 *   coverage     share of ALL single runs with lo ≤ t_i ≤ hi
 *   half-width   (hi − lo) / (2p), averaged over the configurations
 *   spread       the measured run-to-run spread: the pooled standard deviation of ln t
 *                within configurations, √(Σ_c Σ_i (ln t_ci − mean_c)² / Σ_c (n_c − 1));
 *                0 when no configuration has two runs
 * A calibrated interval has a half-width near 1.96 × spread (plus the model's own error);
 * width_over_spread = half-width / spread says how far from that it is.
 */
#ifndef SPEEDUP_FIDELITY_H
#define SPEEDUP_FIDELITY_H

enum { FIDELITY_MAX_RUNS = 16 };

typedef struct {
    double runs_s[FIDELITY_MAX_RUNS];
    int n_runs;
    double pred_s, pred_lo_s, pred_hi_s;
} fidelity_config;

typedef struct {
    int configs, runs, inside;
    double median_abs_error, worst_abs_error; /* fractions */
    double coverage;                           /* inside / runs */
    double mean_half_width;                    /* fraction of the prediction */
    double spread;                             /* pooled sd of ln t; 0: no repeats */
    double width_over_spread;                  /* NaN when spread is 0 */
} fidelity_summary;

/* How many of the runs times[0..n) lie in [lo, hi] (the ends count as inside). */
int fidelity_inside(const double *times, int n, double lo, double hi);

/* The median of a configuration's runs. */
double fidelity_median_run(const fidelity_config *c);
/* Summarises c[0..n); 0, or -1 (n < 1, a configuration without runs or without a
 * positive prediction, or out of memory) with the reason in err. */
int fidelity_summarise(const fidelity_config *c, int n, fidelity_summary *out, char *err, int errlen);

#endif
