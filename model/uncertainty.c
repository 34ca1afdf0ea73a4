/* uncertainty — prediction intervals of one run and parameter draws (see uncertainty.h). */
#include "model/uncertainty.h"
#include "model/contention.h"

#include "model/gmax.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stddef.h>

/* ---------------------------------------------------------------------------------- */
/* The drawn parameters: the registry's rows with drawn = 1 (model/params.h), c0 and c1
 * first (drawn jointly), the rest in the registry's order. */

enum { MAX_REJECTIONS = 1000 };

static bool is_drawn(int i) { return param_info((param_id)i)->drawn; }

static double *value_of(costmodel_params *p, int i) { return param_value(p, (param_id)i); }

/* The standard error of drawn parameter i; 0 when not reported or not positive. */
static double se_of(const uncertainty *u, int i) {
    if (!u || !is_drawn(i))
        return 0.0;
    double se = param_se_get(&u->se, (param_id)i);
    return isfinite(se) && se > 0 ? se : 0.0;
}

uncertainty uncertainty_of_calibration(const calibration *cal) {
    return (uncertainty){ .se = cal->stderr_, .cov_c0_c1 = isfinite(cal->cov_c0_c1) ? cal->cov_c0_c1 : 0.0 };
}

bool uncertainty_has_params(const uncertainty *u) {
    for (int i = 0; i < PARAM_COUNT; i++)
        if (se_of(u, i) > 0)
            return true;
    return false;
}

/* The c0/c1 correlation the covariance implies, within [−1, 1] (a what-if that fixed one
 * of them leaves no correlation; an inconsistent file is held to a valid one). */
static double c0_c1_correlation(const uncertainty *u) {
    double s0 = se_of(u, PARAM_C0), s1 = se_of(u, PARAM_C1);
    if (s0 == 0 || s1 == 0 || !isfinite(u->cov_c0_c1))
        return 0.0;
    return fmax(-1.0, fmin(1.0, u->cov_c0_c1 / (s0 * s1)));
}

/* ---------------------------------------------------------------------------------- */
/* The closed form: delta method on the log scale */

/* Within-run step noise of ln T: (CV·step)²·E·s·V(K) / T². */
static double noise_var_ln(const costmodel_params *p, const job_config *c) {
    double total = costmodel_total_time(p, c);
    if (total <= 0)
        return 0.0;
    double sd_step = p->cv * costmodel_step_time(p, c);
    double steps = (double)c->epochs * job_schedule_of(c).steps_per_epoch;
    return sd_step * sd_step * steps * gmax_variance(c->workers) / (total * total);
}

/* g_i = ∂ln T/∂θ_i by central differences, for every θ_i with se > 0 (0 elsewhere). */
static void log_time_gradient(const costmodel_params *p, const job_config *c, const uncertainty *u,
                              double g[PARAM_COUNT]) {
    for (int i = 0; i < PARAM_COUNT; i++) {
        g[i] = 0.0;
        double se = se_of(u, i);
        if (se == 0)
            continue;
        costmodel_params up = *p, down = *p;
        double theta = *value_of(&up, i), h = 1e-4 * (fabs(theta) + se);
        /* Outside the valid range is fine here: T is linear in every θ_i. */
        *value_of(&up, i) = theta + h;
        *value_of(&down, i) = theta - h;
        double t_up = costmodel_total_time(&up, c), t_down = costmodel_total_time(&down, c);
        if (t_up > 0 && t_down > 0)
            g[i] = (log(t_up) - log(t_down)) / (2 * h);
    }
}

/* gᵀ Σ g: the independent terms and the c0/c1 covariance. */
static double param_var(const double g[PARAM_COUNT], const uncertainty *u) {
    double v = 0;
    for (int i = 0; i < PARAM_COUNT; i++) {
        double se = se_of(u, i);
        v += g[i] * g[i] * se * se;
    }
    double cov = c0_c1_correlation(u) * se_of(u, PARAM_C0) * se_of(u, PARAM_C1);
    return v + 2 * g[PARAM_C0] * g[PARAM_C1] * cov;
}

/* An all-reduce whose algorithm is not known (either): the run is the ring's or the
 * hierarchical's, each as likely, so ln T has the variance of a fair coin between the two,
 * (ln T_ring − ln T_hier)²/4, beyond the rest. */
static double algorithm_var_ln(const costmodel_params *p, const job_config *c) {
    if (p->allreduce_algorithm != COSTMODEL_ALLREDUCE_EITHER || c->topology != JOB_TOPO_ALLREDUCE)
        return 0.0;
    costmodel_params ring = *p, hier = *p;
    ring.allreduce_algorithm = COSTMODEL_ALLREDUCE_RING;
    hier.allreduce_algorithm = COSTMODEL_ALLREDUCE_HIERARCHICAL;
    const double a = costmodel_total_time(&ring, c), b = costmodel_total_time(&hier, c);
    return a > 0 && b > 0 ? 0.25 * (log(a) - log(b)) * (log(a) - log(b)) : 0.0;
}

uncertainty_interval uncertainty_closed_form(const costmodel_params *p, const job_config *c,
                                             const uncertainty *u) {
    job_config one = costmodel_baseline(c);
    double g[PARAM_COUNT], g1[PARAM_COUNT], d[PARAM_COUNT];
    log_time_gradient(p, c, u, g);
    log_time_gradient(p, &one, u, g1);
    for (int i = 0; i < PARAM_COUNT; i++)
        d[i] = g1[i] - g[i];
    /* A run's factor and the model's own error on an unseen configuration: both whole-run,
     * log-normal, independent. */
    double rc = contention_run_cv(p, c), r1 = contention_run_cv(p, &one);
    double mc = contention_model_cv(p, c), m1 = contention_model_cv(p, &one);
    double run2 = rc * rc + mc * mc;
    double var_t = run2 + noise_var_ln(p, c) + param_var(g, u) + algorithm_var_ln(p, c);
    double var_s = run2 + r1 * r1 + m1 * m1 + noise_var_ln(p, &one) + noise_var_ln(p, c) + param_var(d, u) +
                   algorithm_var_ln(p, c);
    uncertainty_interval r = { .sd_ln_time = sqrt(fmax(var_t, 0)), .sd_ln_speedup = sqrt(fmax(var_s, 0)) };
    double z = gsl_cdf_ugaussian_Pinv(0.975);
    double t = costmodel_total_time(p, c), s = costmodel_speedup(p, c);
    r.time_lo_s = t * exp(-z * r.sd_ln_time);
    r.time_hi_s = t * exp(z * r.sd_ln_time);
    r.speedup_lo = s * exp(-z * r.sd_ln_speedup);
    r.speedup_hi = s * exp(z * r.sd_ln_speedup);
    return r;
}

/* ---------------------------------------------------------------------------------- */
/* Draws */

/* c0 and c1 jointly: the bivariate normal conditioned on both ≥ 0. */
static void draw_c0_c1(const uncertainty *u, costmodel_params *out, gsl_rng *rng) {
    double s0 = se_of(u, PARAM_C0), s1 = se_of(u, PARAM_C1), rho = c0_c1_correlation(u);
    if (s0 == 0 && s1 == 0)
        return;
    double m0 = out->c0_s, m1 = out->c1_s, x = 0, y = 0;
    for (int tries = 0; tries < MAX_REJECTIONS; tries++) {
        gsl_ran_bivariate_gaussian(rng, s0, s1, rho, &x, &y);
        if (m0 + x >= 0 && m1 + y >= 0)
            break;
    }
    out->c0_s = fmax(0.0, m0 + x);
    out->c1_s = fmax(0.0, m1 + y);
}

void uncertainty_draw(const uncertainty *u, const costmodel_params *est, gsl_rng *rng, costmodel_params *out) {
    *out = *est;
    if (est->allreduce_algorithm == COSTMODEL_ALLREDUCE_EITHER) /* one run is one of the two */
        out->allreduce_algorithm = gsl_rng_uniform(rng) < 0.5 ? COSTMODEL_ALLREDUCE_RING
                                                              : COSTMODEL_ALLREDUCE_HIERARCHICAL;
    if (!uncertainty_has_params(u))
        return;
    draw_c0_c1(u, out, rng);
    for (int i = 0; i < PARAM_COUNT; i++) {
        double se = i == PARAM_C0 || i == PARAM_C1 ? 0.0 : se_of(u, i);
        if (se == 0)
            continue;
        double *v = value_of(out, i), mean = *v, x = mean;
        for (int tries = 0; tries < MAX_REJECTIONS; tries++) {
            x = mean + gsl_ran_gaussian(rng, se);
            if (param_in_range(param_info((param_id)i), x))
                break;
        }
        *v = fmin(param_info((param_id)i)->hi, fmax(param_info((param_id)i)->lo, x));
    }
}

double uncertainty_run_factor(const costmodel_params *p, const job_config *c, gsl_rng *rng) {
    const double rc = contention_run_cv(p, c), mc = contention_model_cv(p, c), sd = sqrt(rc * rc + mc * mc);
    return sd > 0 ? gsl_ran_lognormal(rng, 0.0, sd) : 1.0;
}
