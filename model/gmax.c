#include "model/gmax.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <math.h>

enum { MEMO_MAX = 4096, WORKSPACE_INTERVALS = 1000 };

/* The density of the maximum of k standard normals, times x^power (power 1 or 2). */
typedef struct {
    double k;
    int power;
} moment;

static double integrand(double x, void *arg) {
    const moment *m = arg;
    double cdf = gsl_cdf_ugaussian_P(x);
    /* Φ^(k−1) underflows to 0 far in the left tail: the integrand really is 0 there. */
    double density = m->k * gsl_ran_ugaussian_pdf(x) * pow(cdf, m->k - 1.0);
    return (m->power == 2 ? x * x : x) * density;
}

/* E[max^power] of k standard normals. */
static double integrate(int k, int power) {
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(WORKSPACE_INTERVALS);
    moment m = { .k = k, .power = power };
    double result = NAN, abserr = 0;
    gsl_function f = { .function = integrand, .params = &m };
    if (w) {
        /* The mass sits in [−10, 10 + √(2 ln k)]; integrating a finite range with QAGS
         * is more accurate than QAGI's variable transform for large k. */
        double hi = 10.0 + sqrt(2.0 * log(m.k));
        int rc = gsl_integration_qags(&f, -10.0, hi, 1e-14, 1e-12, WORKSPACE_INTERVALS, w,
                                      &result, &abserr);
        if (rc != GSL_SUCCESS && rc != GSL_EROUND)
            result = NAN;
        gsl_integration_workspace_free(w);
    }
    gsl_set_error_handler(old);
    return result;
}

double gmax_expected(int k) {
    static double memo[MEMO_MAX + 1];
    static unsigned char known[MEMO_MAX + 1];
    if (k <= 1)
        return 0.0;
    if (k > MEMO_MAX)
        return integrate(k, 1);
    if (!known[k]) {
        memo[k] = integrate(k, 1);
        known[k] = 1;
    }
    return memo[k];
}

double gmax_variance(int k) {
    static double memo[MEMO_MAX + 1];
    static unsigned char known[MEMO_MAX + 1];
    if (k <= 1)
        return 1.0;
    if (k <= MEMO_MAX && known[k])
        return memo[k];
    double g = gmax_expected(k), v = integrate(k, 2) - g * g;
    if (k <= MEMO_MAX) {
        memo[k] = v;
        known[k] = 1;
    }
    return v;
}
