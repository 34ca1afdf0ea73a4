#include "model/gmax.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <math.h>

enum { MEMO_MAX = 4096, WORKSPACE_INTERVALS = 1000 };

static double integrand(double x, void *arg) {
    double k = *(double *)arg;
    double cdf = gsl_cdf_ugaussian_P(x);
    /* Φ^(k−1) underflows to 0 far in the left tail: the integrand really is 0 there. */
    return x * k * gsl_ran_ugaussian_pdf(x) * pow(cdf, k - 1.0);
}

static double integrate(int k) {
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(WORKSPACE_INTERVALS);
    double kk = k, result = NAN, abserr = 0;
    gsl_function f = { .function = integrand, .params = &kk };
    if (w) {
        /* The mass sits in [−10, 10 + √(2 ln k)]; integrating a finite range with QAGS
         * is more accurate than QAGI's variable transform for large k. */
        double hi = 10.0 + sqrt(2.0 * log(kk));
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
        return integrate(k);
    if (!known[k]) {
        memo[k] = integrate(k);
        known[k] = 1;
    }
    return memo[k];
}
