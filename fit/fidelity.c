/* fidelity — error, coverage and width of predictions on measured runs (fidelity.h). */
#include "fit/fidelity.h"

#include "util/errmsg.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>

int fidelity_inside(const double *times, int n, double lo, double hi) {
    int inside = 0;
    for (int i = 0; i < n; i++)
        inside += times[i] >= lo && times[i] <= hi;
    return inside;
}

double fidelity_median_run(const fidelity_config *c) {
    double v[FIDELITY_MAX_RUNS];
    for (int i = 0; i < c->n_runs; i++)
        v[i] = c->runs_s[i];
    gsl_sort(v, 1, (size_t)c->n_runs);
    return gsl_stats_median_from_sorted_data(v, 1, (size_t)c->n_runs);
}

int fidelity_summarise(const fidelity_config *c, int n, fidelity_summary *out, char *err, int errlen) {
    *out = (fidelity_summary){ .configs = n };
    if (n < 1)
        return errmsg_set(err, errlen, "fidelity: no configurations");
    double *abs_err = malloc(sizeof *abs_err * (size_t)n);
    if (!abs_err)
        return errmsg_set(err, errlen, "out of memory");
    double ss = 0, half = 0;
    long dof = 0;
    for (int k = 0; k < n; k++) {
        const fidelity_config *x = &c[k];
        if (x->n_runs < 1 || x->n_runs > FIDELITY_MAX_RUNS || !(x->pred_s > 0)) {
            free(abs_err);
            return errmsg_set(err, errlen, "fidelity: configuration %d has %d runs and prediction %g s", k + 1,
                              x->n_runs, x->pred_s);
        }
        double med = fidelity_median_run(x), logs[FIDELITY_MAX_RUNS];
        abs_err[k] = fabs(x->pred_s - med) / med;
        half += (x->pred_hi_s - x->pred_lo_s) / (2.0 * x->pred_s);
        out->inside += fidelity_inside(x->runs_s, x->n_runs, x->pred_lo_s, x->pred_hi_s);
        for (int i = 0; i < x->n_runs; i++)
            logs[i] = log(x->runs_s[i]);
        out->runs += x->n_runs;
        if (x->n_runs >= 2) {
            ss += (x->n_runs - 1) * gsl_stats_variance(logs, 1, (size_t)x->n_runs);
            dof += x->n_runs - 1;
        }
    }
    gsl_sort(abs_err, 1, (size_t)n);
    out->median_abs_error = gsl_stats_median_from_sorted_data(abs_err, 1, (size_t)n);
    out->worst_abs_error = abs_err[n - 1];
    free(abs_err);
    out->coverage = (double)out->inside / out->runs;
    out->mean_half_width = half / n;
    out->spread = dof ? sqrt(ss / (double)dof) : 0.0;
    out->width_over_spread = out->spread > 0 ? out->mean_half_width / out->spread : NAN;
    return 0;
}
