#include "model/gmax.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>

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

/* The density of the j-th smallest of k standard normals, times x. */
typedef struct {
    int k, j;
    double log_coefficient; /* ln(k!/((j−1)!(k−j)!)) */
} order;

static double order_integrand(double x, void *arg) {
    const order *o = arg;
    /* In logs: Φ^(j−1)·(1 − Φ)^(k−j) over- or underflows in the tails for large k. */
    double lower = gsl_cdf_ugaussian_P(x), upper = gsl_cdf_ugaussian_Q(x);
    if (lower <= 0 || upper <= 0)
        return 0.0;
    double log_density = o->log_coefficient + log(gsl_ran_ugaussian_pdf(x)) + (o->j - 1) * log(lower) +
                         (o->k - o->j) * log(upper);
    return x * exp(log_density);
}

/* ∫ f over the range where the k normals' extremes sit: [−10 − √(2 ln k), 10 + √(2 ln k)];
 * a finite range with QAGS is more accurate than QAGI's variable transform for large k. */
static double integrate_range(gsl_function *f, double k) {
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    gsl_integration_workspace *w = gsl_integration_workspace_alloc(WORKSPACE_INTERVALS);
    double result = NAN, abserr = 0, reach = 10.0 + sqrt(2.0 * log(k));
    if (w) {
        int rc = gsl_integration_qags(f, -reach, reach, 1e-14, 1e-12, WORKSPACE_INTERVALS, w, &result, &abserr);
        if (rc != GSL_SUCCESS && rc != GSL_EROUND)
            result = NAN;
        gsl_integration_workspace_free(w);
    }
    gsl_set_error_handler(old);
    return result;
}

/* E[max^power] of k standard normals. */
static double integrate(int k, int power) {
    moment m = { .k = k, .power = power };
    gsl_function f = { .function = integrand, .params = &m };
    return integrate_range(&f, m.k);
}

static double integrate_order(int k, int j) {
    order o = { .k = k, .j = j };
    o.log_coefficient = log((double)k) + gsl_sf_lnchoose((unsigned)(k - 1), (unsigned)(j - 1));
    gsl_function f = { .function = order_integrand, .params = &o };
    return integrate_range(&f, k);
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

double gmax_order_expected(int k, int j) {
    static double *memo[MEMO_MAX + 1];
    if (k <= 1 || j < 1 || j > k)
        return 0.0;
    if (k > MEMO_MAX)
        return integrate_order(k, j);
    if (!memo[k]) {
        double *row = malloc(sizeof *row * (size_t)k);
        if (!row)
            return integrate_order(k, j);
        /* The k values are symmetric about 0: e_j = −e_(k+1−j). */
        for (int i = 1; i <= k; i++)
            row[i - 1] = i <= (k + 1) / 2 ? integrate_order(k, i) : -row[k - i];
        if (k % 2 == 1)
            row[k / 2] = 0.0;
        memo[k] = row;
    }
    return memo[k][j - 1];
}

/* h_l of the header: the shared time per unit of work while K − l + 1 ranks still run. */
static double shared_rate(int k, double rho, int l) {
    return l > k ? 0.0 : fmax(1.0 / rho, (double)(k - l + 1) / k);
}

double gmax_shared_expected(int k, double rho) {
    if (!(rho > 1.0))
        return gmax_expected(k);
    double g = 0.0;
    for (int j = 1; j <= k; j++)
        g += gmax_order_expected(k, j) * (shared_rate(k, rho, j) - shared_rate(k, rho, j + 1));
    return g;
}
