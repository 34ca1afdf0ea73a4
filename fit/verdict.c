/* verdict — a calibration's verdict (verdict.h). */
#include "fit/verdict.h"

#include "fit/fit_parts.h"
#include "fit/rounds.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double verdict_threshold(const calibration *cal) { return fmax(2 * cal->params.run_cv, 0.05); }

/* Appends one reason, "; "-separated. */
static void add(calibration_fit *fit, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(calibration_fit *fit, const char *fmt, ...) {
    size_t used = strlen(fit->verdict);
    if (used && used + 2 < sizeof fit->verdict)
        strcat(fit->verdict, "; "), used += 2;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fit->verdict + used, sizeof fit->verdict - used, fmt, ap);
    va_end(ap);
}

/* A parameter at a bound with no interval. */
static bool at_bound(const calibration *cal, param_id id, double bound) {
    return param_get(&cal->params, id) == bound && !(param_se_get(&cal->stderr_, id) > 0);
}

void verdict_judge(const calibration *cal, calibration_fit *fit) {
    fit->verdict[0] = '\0';
    fit->has_verdict = true;
    const double limit = verdict_threshold(cal);
    if (fit->loo_model_n >= 2 && fit->loo_model_median > limit)
        add(fit, "the model misses the configurations it was not fitted on by %.1f%% (median), more than the "
            "host's run-to-run spread explains (%.1f%%): run the plan again on an idle machine, or with a larger "
            "--budget", 100 * fit->loo_model_median, 100 * limit);
    if (fit->loo_model_n >= 2 && fit->loo_ernest_n >= 2 && fit->loo_ernest_median < fit->loo_model_median)
        add(fit, "Ernest's regression predicts the left-out configurations better (%.1f%% against %.1f%%): a term "
            "of the model does not fit this host", 100 * fit->loo_ernest_median, 100 * fit->loo_model_median);
    if (cal->params.c1_s > 0 && cal->stderr_.c1_s > VERDICT_DRIFT_LIMIT * cal->params.c1_s)
        add(fit, "c1 is uncertain by %.1f%% (its standard error), more than a steady host's runs leave (%.0f%%): the "
            "host changed speed during the plan, and every prediction carries that phase; calibrate again when it "
            "is quiet", 100 * cal->stderr_.c1_s / cal->params.c1_s, 100 * VERDICT_DRIFT_LIMIT);
    if (at_bound(cal, PARAM_C1, 0))
        add(fit, "c1 is at its bound 0: add runs at other local batches (--batch)");
    if (!cal->sigma_unmeasured && (at_bound(cal, PARAM_SIGMA, 0) || at_bound(cal, PARAM_SIGMA, 1)))
        add(fit, "sigma is at its bound %g: add runs at 2 and 4 threads per worker on an idle machine",
            cal->params.sigma);
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        if (!cal->uncalibrated[t] && at_bound(cal, t == JOB_TOPO_PS ? PARAM_BETA_PS : PARAM_BETA_ALLREDUCE, 0))
            add(fit, "beta_%s is at its bound 0: add a trace of `mpirun -np 2 speedup commbench`",
                job_topology_name((job_topology)t));
    fit->verdict_poor = fit->verdict[0] != '\0';
    if (fit->verdict_poor)
        return;
    if (fit->loo_model_n < 2)
        snprintf(fit->verdict, sizeof fit->verdict, "not judged: %d configuration(s) predicted with themselves left "
                 "out; two or more are needed", fit->loo_model_n);
    else
        snprintf(fit->verdict, sizeof fit->verdict, "good: the left-out configurations are predicted within %.1f%% "
                 "(median), under what the run-to-run spread explains (%.1f%%), and no parameter sits at a bound",
                 100 * fit->loo_model_median, 100 * limit);
}

/* One configuration the left-out fit predicted, and by how much it missed. */
typedef struct {
    job_config config;
    double error_sum;             /* Σ |left-out prediction − measured| / measured over its runs */
    int runs, last_round;
} missed_config;

static int by_error(const void *x, const void *y) {
    const missed_config *a = x, *b = y;
    const double ea = a->error_sum / a->runs, eb = b->error_sum / b->runs;
    return (ea < eb) - (ea > eb);
}

int verdict_remeasure(const calibration *cal, const calibration_fit *fit, job_config *out, int *last_round, int max) {
    enum { MAX_CONFIGS = 256 };
    missed_config m[MAX_CONFIGS];
    int n = 0;
    if (!fit->verdict_poor)
        return 0;
    for (int i = 0; i < fit->n_runs; i++) {
        const calibration_run *run = &fit->runs[i];
        if (!isfinite(run->loo_model_s) || !(run->measured_s > 0) || run->config.epochs != 1)
            continue;
        int j = 0;
        while (j < n && !fit_same_config(&m[j].config, &run->config))
            j++;
        if (j == n) {
            if (n == MAX_CONFIGS)
                continue;
            m[n++] = (missed_config){ .config = run->config };
        }
        m[j].error_sum += fabs(run->loo_model_s - run->measured_s) / run->measured_s;
        m[j].runs++;
        const int round = fit_round_of(run->trace);
        if (round > m[j].last_round)
            m[j].last_round = round;
    }
    qsort(m, (size_t)n, sizeof *m, by_error);
    const double threshold = verdict_threshold(cal);
    int k = 0;
    while (k < n && k < max && m[k].error_sum / m[k].runs > threshold)
        k++;
    if (k == 0)
        k = n < 2 ? n : 2 < max ? 2 : max;
    for (int i = 0; i < k; i++) {
        out[i] = m[i].config;
        last_round[i] = m[i].last_round;
    }
    return k;
}
