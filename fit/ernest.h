/* ernest — Ernest's performance model (Venkataraman et al., NSDI 2016) on Ernest's own
 * training-data files, so Ernest users can bring their measurements.
 *
 * The model is exactly Ernest's (amplab/ernest, predictor.py, Predictor._get_features
 * and Predictor.fit): with mc = machines and scale = input fraction the features are, in
 * this order,
 *     [1.0, scale / mc, mc, log(mc)]          log = natural logarithm (np.log)
 * and θ = scipy.optimize.nnls(features, times), so
 *     time = θ0 + θ1·fraction/machines + θ2·machines + θ3·ln(machines),  θ ≥ 0.
 * Ernest's examples count cores as "machines" (examples/rcv1-parsed.csv: "#Cores,Input
 * Fraction, Time (s)").
 *
 * The CSV: lines starting with '#' are comments (Ernest skips rows whose first character
 * is '#'); blank lines are skipped; every other line is machines,input_fraction,time_s
 * with machines an integer ≥ 1, fraction a finite number > 0 and time a finite number
 * ≥ 0. ernest_read_csv reports the first bad line as "PATH: line L: what was expected".
 */
#ifndef SPEEDUP_ERNEST_H
#define SPEEDUP_ERNEST_H

#include <stdbool.h>

enum { ERNEST_N_THETA = 4 };

typedef struct {
    double machines;
    double fraction;
    double time_s;
} ernest_point;

typedef struct {
    ernest_point *points;    /* owned */
    long n, cap;
} ernest_data;

typedef struct {
    double theta[ERNEST_N_THETA];
    double se[ERNEST_N_THETA];       /* 0 where at_bound: see fit/nnls.h */
    bool at_bound[ERNEST_N_THETA];
    double rss;                      /* s² */
    long n;
    int dof;
} ernest_model;

ernest_data *ernest_read_csv(const char *path, char *err, int errlen);
void ernest_data_free(ernest_data *d);           /* NULL is a no-op */

/* Ernest's feature row of one point. */
void ernest_features(double machines, double fraction, double out[ERNEST_N_THETA]);

/* NNLS fit of Ernest's model to n points; needs n ≥ 5 (a residual variance for the
 * standard errors) and machines ≥ 1. Returns 0, or -1 with the reason in err. */
int ernest_fit(const ernest_point *points, long n, ernest_model *out, char *err, int errlen);

double ernest_predict(const ernest_model *m, double machines, double fraction);

#endif
