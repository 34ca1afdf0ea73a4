/* efficiency — epochs to reach an accuracy (see efficiency.h). */
#include "model/efficiency.h"

#include "util/errmsg.h"

#include <float.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { DRAWS = 4000 };
static const unsigned long DRAW_SEED = 20181214; /* fixed: the same interval every time */

/* ---------------------------------------------------------------------------------- */
/* The form */

bool efficiency_stale(const job_config *c) {
    return c->sync == JOB_SYNC_HOGWILD || (c->sync == JOB_SYNC_ASYNC && (c->workers > 1 || c->every_n > 1));
}

double efficiency_global_batch(const job_config *c) {
    const double k = c->workers > 1 ? c->workers : 1;
    if (c->sync == JOB_SYNC_BATCH)
        return c->batch_per_worker ? k * (double)c->batch : (double)c->batch;
    if (job_sync_is_async(c->sync)) /* the server applies each worker's gradient of B alone */
        return (double)c->batch;
    return k * (double)c->batch;
}

double efficiency_averaging_period(const job_config *c) {
    if (c->sync == JOB_SYNC_BATCH || job_sync_is_async(c->sync) || c->workers <= 1)
        return 1;
    const double s = (double)job_schedule_of(c).steps_per_epoch;
    if (c->sync == JOB_SYNC_EVERY && c->every_n < s)
        return c->every_n;
    return s;
}

static const char *const PARAM_NAMES[EFFICIENCY_NP] = {
    [EFFICIENCY_PLATEAU] = "plateau", [EFFICIENCY_LOG_X0] = "log_x0", [EFFICIENCY_POWER] = "power",
    [EFFICIENCY_W] = "w",             [EFFICIENCY_GAMMA] = "gamma",   [EFFICIENCY_LOG_HC] = "log_h_c",
    [EFFICIENCY_STALE_COST] = "stale_cost",
};

const char *efficiency_param_name(efficiency_param j) {
    return j >= 0 && j < EFFICIENCY_NP ? PARAM_NAMES[j] : "?";
}

int efficiency_n_params(const efficiency_model *m) {
    return m->legacy_log_h ? EFFICIENCY_LOG_HC : m->pre_stale ? EFFICIENCY_STALE_COST : EFFICIENCY_NP;
}

const char *efficiency_form(bool legacy) {
    return legacy ? "acc(e) = plateau - (plateau - chance)/(1 + (e/(s*exp(log_x0)))^power); "
                    "s = (1 + w*(G/batch - 1))*(1 + gamma*(1 - 1/K)*ln(H)); G global batch, K workers, "
                    "H local steps between averagings (1 for batch sync)"
                  : "acc(e) = plateau - (plateau - chance)/(1 + (e/(s*exp(log_x0)))^power); "
                    "s = (1 + w*(G/batch - 1))*(1 + gamma*(1 - 1/K)*(H - 1)/(H - 1 + exp(log_h_c)))"
                    "*(1 + stale_cost*tau); G global batch, K workers, H local steps between averagings (1 for "
                    "batch sync and async), tau the gradients' mean staleness (0 but for async and hogwild)";
}

/* D(H), the models' drift after H local steps (see the header). */
static double drift_of(const double *theta, bool legacy_log_h, double h) {
    if (legacy_log_h)
        return log(h);
    return (h - 1) / (h - 1 + exp(theta[EFFICIENCY_LOG_HC]));
}

/* s(c) of θ against the reference batch b_ref, the gradients' mean staleness tau. (θ's β
 * is 0 in a file from before it.) */
static double slowdown_of(const double *theta, bool legacy_log_h, double b_ref, const job_config *c,
                          double tau) {
    const double g = efficiency_global_batch(c), h = efficiency_averaging_period(c);
    const double k = c->workers > 1 ? c->workers : 1;
    return (1 + theta[EFFICIENCY_W] * (g / b_ref - 1)) *
           (1 + theta[EFFICIENCY_GAMMA] * (1 - 1 / k) * drift_of(theta, legacy_log_h, h)) *
           (1 + theta[EFFICIENCY_STALE_COST] * tau);
}

double efficiency_slowdown(const efficiency_model *m, const job_config *c, double tau) {
    return slowdown_of(m->theta, m->legacy_log_h, (double)m->batch, c, tau);
}

static double curve(double chance, const double *theta, double x) {
    if (x <= 0)
        return chance;
    const double a = theta[EFFICIENCY_PLATEAU], alpha = theta[EFFICIENCY_POWER] > 1e-6 ? theta[EFFICIENCY_POWER] : 1e-6;
    return a - (a - chance) / (1 + exp(alpha * (log(x) - theta[EFFICIENCY_LOG_X0])));
}

double efficiency_curve(const efficiency_model *m, const double theta[EFFICIENCY_NP], double x) {
    return curve(m->chance, theta, x);
}

double efficiency_accuracy(const efficiency_model *m, const job_config *c, double tau, double epochs) {
    const double s = efficiency_slowdown(m, c, tau);
    return curve(m->chance, m->theta, s > 0 ? epochs / s : 0);
}

/* x with f(x) = target, or +∞ when target ≥ a (never). */
static double curve_inverse(double chance, const double *theta, double target) {
    const double a = theta[EFFICIENCY_PLATEAU], alpha = theta[EFFICIENCY_POWER];
    if (target >= a)
        return INFINITY;
    if (target <= chance)
        return 0;
    return exp(theta[EFFICIENCY_LOG_X0] + log((target - chance) / (a - target)) / alpha);
}

/* ---------------------------------------------------------------------------------- */
/* The fit */

typedef struct {
    const efficiency_run *runs;
    int n_runs;
    long n_points;
    double chance, b_ref;
    double theta[EFFICIENCY_NP];     /* the held parameters' values; the free ones overwritten */
    int free_idx[EFFICIENCY_NP], n_free;
    double wt_test, wt_subset;       /* 1/σ of each group */
    double h_max;                    /* the longest averaging period of a local-SGD run (K > 1) */
    double tau_max;                  /* the largest mean staleness of a run */
} fit_problem;

static void unpack(const fit_problem *pb, const gsl_vector *x, double *theta) {
    memcpy(theta, pb->theta, sizeof pb->theta);
    for (int j = 0; j < pb->n_free; j++)
        theta[pb->free_idx[j]] = gsl_vector_get(x, (size_t)j);
}

static int residuals(const gsl_vector *x, void *data, gsl_vector *f) {
    const fit_problem *pb = data;
    double theta[EFFICIENCY_NP];
    unpack(pb, x, theta);
    size_t i = 0;
    for (int r = 0; r < pb->n_runs; r++) {
        const efficiency_run *run = &pb->runs[r];
        double s = slowdown_of(theta, false, pb->b_ref, &run->config, run->staleness);
        if (!(s > 1e-6))
            s = 1e-6; /* a flat region the trust region steps back from */
        for (long p = 0; p < run->n; p++) {
            const double wt = run->subset && run->subset[p] ? pb->wt_subset : pb->wt_test;
            gsl_vector_set(f, i++, wt * (curve(pb->chance, theta, run->epochs[p] / s) - run->accuracy[p]));
        }
    }
    return GSL_SUCCESS;
}

/* Does run follow the reference curve f itself: one update per gradient of every example
 * seen (H = 1), fresh (τ = 0), of global batch b_ref (any, for b_ref +∞)? */
static bool follows_reference(const efficiency_run *run, double b_ref) {
    const double g = efficiency_global_batch(&run->config);
    return efficiency_averaging_period(&run->config) == 1 && run->staleness == 0 && (isinf(b_ref) || g == b_ref);
}

/* The checks and the reference batch: 0, or -1 with why. */
static int fit_prepare(const efficiency_run *runs, int n_runs, fit_problem *pb, char *why, int whylen) {
    if (n_runs < 1)
        return errmsg_set(why, whylen, "no run with accuracy points");
    pb->b_ref = INFINITY;
    pb->n_points = 0;
    pb->tau_max = 0;
    for (int r = 0; r < n_runs; r++) {
        const efficiency_run *run = &runs[r];
        const job_config *c = &run->config, *c0 = &runs[0].config;
        if (c->epochs != c0->epochs)
            return errmsg_set(why, whylen, "runs of different schedules: %d epochs in %s, %d in %s (the learning "
                              "rate's cosine spans --epochs: fit each schedule apart)", c0->epochs, runs[0].name,
                              c->epochs, run->name);
        if (c->examples != c0->examples)
            return errmsg_set(why, whylen, "runs on different data: %ld examples in %s, %ld in %s", c0->examples,
                              runs[0].name, c->examples, run->name);
        if (c->batch < 1 || c->workers < 1 || c->epochs < 1 || c->examples < 1)
            return errmsg_set(why, whylen, "%s: workers, batch, epochs and examples must be >= 1", run->name);
        if (!(isfinite(run->staleness) && run->staleness >= 0))
            return errmsg_set(why, whylen, "%s: mean staleness %g: expected a number >= 0", run->name, run->staleness);
        pb->tau_max = fmax(pb->tau_max, run->staleness);
        for (long p = 0; p < run->n; p++)
            if (!isfinite(run->epochs[p]) || run->epochs[p] < 0 || !isfinite(run->accuracy[p]) ||
                run->accuracy[p] < 0 || run->accuracy[p] > 1)
                return errmsg_set(why, whylen, "%s: accuracy point %ld: expected epochs >= 0 and an accuracy in "
                                  "[0, 1], got %g at %g epochs", run->name, p + 1, run->accuracy[p], run->epochs[p]);
        pb->n_points += run->n;
        if (follows_reference(run, INFINITY) && efficiency_global_batch(c) < pb->b_ref)
            pb->b_ref = efficiency_global_batch(c);
    }
    if (!isfinite(pb->b_ref))
        return errmsg_set(why, whylen, "no reference run (one worker, or batch sync): without one the curve's "
                          "time scale and the configurations' slowdown cannot be told apart");
    /* The curve's three shape parameters need the reference measured at three progresses. */
    double seen[3];
    int distinct = 0;
    for (int r = 0; r < n_runs && distinct < 3; r++) {
        if (!follows_reference(&runs[r], pb->b_ref))
            continue;
        for (long p = 0; p < runs[r].n && distinct < 3; p++) {
            bool is_new = true;
            for (int k = 0; k < distinct; k++)
                is_new &= fabs(seen[k] - runs[r].epochs[p]) > 1e-9;
            if (is_new)
                seen[distinct++] = runs[r].epochs[p];
        }
    }
    if (distinct < 3)
        return errmsg_set(why, whylen, "the reference runs (batch %g, one worker or batch sync) were measured at %d "
                          "progress%s: the curve's shape needs three or more (more epochs, or --eval-every)", pb->b_ref,
                          distinct, distinct == 1 ? "" : "es");
    return 0;
}

/* Which of w, γ, ln H_c, β the runs can tell (see the header), and the starting point. */
static void fit_start(fit_problem *pb) {
    bool vary_g = false;
    double top = 0, x_half = INFINITY, x_min = INFINITY, h_lo = INFINITY, h_hi = 0;
    for (int r = 0; r < pb->n_runs; r++) {
        const efficiency_run *run = &pb->runs[r];
        const double g = efficiency_global_batch(&run->config), h = efficiency_averaging_period(&run->config);
        vary_g |= fabs(g / pb->b_ref - 1) > 1e-12;
        if (run->config.workers > 1 && h > 1) {
            h_lo = fmin(h_lo, h);
            h_hi = fmax(h_hi, h);
        }
        for (long p = 0; p < run->n; p++)
            top = run->accuracy[p] > top ? run->accuracy[p] : top;
    }
    for (int r = 0; r < pb->n_runs; r++) {
        const efficiency_run *run = &pb->runs[r];
        if (!follows_reference(run, pb->b_ref))
            continue;
        for (long p = 0; p < run->n; p++) {
            if (run->epochs[p] > 0 && run->epochs[p] < x_min)
                x_min = run->epochs[p];
            if (run->accuracy[p] >= 0.5 * (pb->chance + top) && run->epochs[p] > 0 && run->epochs[p] < x_half)
                x_half = run->epochs[p];
        }
    }
    /* Every reference point already past half-way: x0 lies before the first of them. */
    if (!isfinite(x_half) || x_half <= x_min)
        x_half = isfinite(x_min) ? 0.5 * x_min : 1;
    pb->theta[EFFICIENCY_PLATEAU] = top + 0.5 * (1 - top);
    pb->theta[EFFICIENCY_LOG_X0] = log(x_half);
    pb->theta[EFFICIENCY_POWER] = 1;
    pb->theta[EFFICIENCY_W] = vary_g ? 0.5 : 0;
    /* Local SGD at some period: γ; at two or more: ln H_c too, whose start the profile
     * (fit_setup) chooses. */
    const bool vary_h = h_hi > 1, two_h = h_hi > h_lo;
    pb->theta[EFFICIENCY_GAMMA] = vary_h ? 0.1 : 0; /* off 0, where ln H_c has no slope */
    pb->theta[EFFICIENCY_LOG_HC] = 0;
    pb->h_max = h_hi;
    /* Stale gradients in some run: β, from 0 (what staleness costs is the fit's to say). */
    const bool stale = pb->tau_max > 0;
    pb->theta[EFFICIENCY_STALE_COST] = 0;
    pb->n_free = 0;
    for (int j = 0; j < EFFICIENCY_NP; j++)
        if ((j != EFFICIENCY_W || vary_g) && (j != EFFICIENCY_GAMMA || vary_h) && (j != EFFICIENCY_LOG_HC || two_h) &&
            (j != EFFICIENCY_STALE_COST || stale))
            pb->free_idx[pb->n_free++] = j;
}

/* One least-squares pass from pb->theta: θ̂ into pb->theta, (JᵀJ)⁻¹ into cov (n_free²),
 * the residuals (weighted as pb says) into res. A GSL status. */
static int fit_pass(fit_problem *pb, gsl_matrix *cov, double *res) {
    const size_t n = (size_t)pb->n_points, p = (size_t)pb->n_free;
    gsl_multifit_nlinear_fdf fdf = { .f = residuals, .df = NULL, .fvv = NULL, .n = n, .p = p, .params = pb };
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, p);
    gsl_vector *x0 = gsl_vector_alloc(p);
    int status = GSL_ENOMEM, info = 0;
    if (w && x0) {
        for (size_t j = 0; j < p; j++)
            gsl_vector_set(x0, j, pb->theta[pb->free_idx[j]]);
        status = gsl_multifit_nlinear_init(x0, &fdf, w);
        if (status == GSL_SUCCESS)
            status = gsl_multifit_nlinear_driver(500, 1e-9, 1e-9, 1e-12, NULL, NULL, &info, w);
        /* No step reduces the cost from the start: it is a minimum already (the second
         * pass, when reweighting the groups does not move it). */
        if (status == GSL_EMAXITER && info == GSL_ENOPROG) /* the driver says so only on its first step */
            status = GSL_SUCCESS;
        if (status == GSL_SUCCESS) {
            unpack(pb, gsl_multifit_nlinear_position(w), pb->theta);
            status = gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 1e-12, cov);
            const gsl_vector *f = gsl_multifit_nlinear_residual(w);
            for (size_t i = 0; i < n; i++)
                res[i] = gsl_vector_get(f, i);
        }
    }
    gsl_vector_free(x0);
    gsl_multifit_nlinear_free(w);
    return status;
}

/* Each group's σ from unweighted residuals res: its rms, scaled by N/(N − p) (the dof the
 * whole fit used), so that σ² is unbiased when the groups share one noise. */
static void group_sigmas(const fit_problem *pb, const double *res, double *sd_test, double *sd_subset) {
    double ss[2] = { 0, 0 };
    long cnt[2] = { 0, 0 };
    size_t i = 0;
    for (int r = 0; r < pb->n_runs; r++)
        for (long p = 0; p < pb->runs[r].n; p++, i++) {
            const int g = pb->runs[r].subset && pb->runs[r].subset[p] ? 1 : 0;
            ss[g] += res[i] * res[i];
            cnt[g]++;
        }
    const double scale = (double)pb->n_points / (double)(pb->n_points - pb->n_free);
    double sd[2];
    for (int g = 0; g < 2; g++)
        sd[g] = cnt[g] > 0 ? sqrt(scale * ss[g] / (double)cnt[g]) : NAN;
    *sd_test = isfinite(sd[0]) ? sd[0] : sd[1];
    *sd_subset = isfinite(sd[1]) ? sd[1] : sd[0];
}

static int fit_run_passes(fit_problem *pb, efficiency_model *out, char *why, int whylen) {
    const size_t p = (size_t)pb->n_free;
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    double *res = malloc(sizeof *res * (size_t)pb->n_points);
    int status = cov && res ? GSL_SUCCESS : GSL_ENOMEM;
    pb->wt_test = pb->wt_subset = 1;
    if (status == GSL_SUCCESS)
        status = fit_pass(pb, cov, res);
    if (status == GSL_SUCCESS) {
        group_sigmas(pb, res, &out->sd_test, &out->sd_subset);
        /* A noiseless curve (a test's) leaves σ 0: any positive weight fits it as well. */
        const double floor_sd = 1e-9;
        pb->wt_test = 1 / fmax(out->sd_test, floor_sd);
        pb->wt_subset = 1 / fmax(out->sd_subset, floor_sd);
        status = fit_pass(pb, cov, res);
    }
    if (status == GSL_SUCCESS) {
        double chi2 = 0;
        for (long i = 0; i < pb->n_points; i++)
            chi2 += res[i] * res[i];
        const double s2 = chi2 / (double)(pb->n_points - pb->n_free);
        memset(out->cov, 0, sizeof out->cov);
        for (size_t a = 0; a < p; a++)
            for (size_t b = 0; b < p; b++)
                out->cov[pb->free_idx[a]][pb->free_idx[b]] = gsl_matrix_get(cov, a, b) * s2;
        memcpy(out->theta, pb->theta, sizeof out->theta);
    }
    gsl_matrix_free(cov);
    free(res);
    if (status != GSL_SUCCESS)
        return errmsg_set(why, whylen, "the accuracy curve's least-squares fit failed: %s", gsl_strerror(status));
    return 0;
}

/* Is θ_j free in pb? */
static bool is_free(const fit_problem *pb, int j) {
    for (int k = 0; k < pb->n_free; k++)
        if (pb->free_idx[k] == j)
            return true;
    return false;
}

enum { PROFILE_POINTS = 15 };

/* The start for ln H_c, free in pb: the best of PROFILE_POINTS values spread evenly over
 * [0, ln H_max], each with the other free parameters fitted (one unweighted pass) while
 * it is held. Why: from any one start, trust-region steps in ln H_c and γ together can run
 * off past ln H_c = 0 into a worse fit, or not settle in 500 iterations (what full
 * Fashion-MNIST did: docs/time-to-accuracy.md); the profile finds the basin, the free fit
 * then settles in it. pb->theta is left at the best point's fit
 * (unchanged if none of them fitted). 0, or -1 out of memory. */
static int profile_log_hc(fit_problem *pb) {
    fit_problem q = *pb;
    q.n_free = 0;
    for (int k = 0; k < pb->n_free; k++)
        if (pb->free_idx[k] != EFFICIENCY_LOG_HC)
            q.free_idx[q.n_free++] = pb->free_idx[k];
    q.wt_test = q.wt_subset = 1;
    gsl_matrix *cov = gsl_matrix_alloc((size_t)q.n_free, (size_t)q.n_free);
    double *res = malloc(sizeof *res * (size_t)pb->n_points), best = INFINITY, best_theta[EFFICIENCY_NP];
    if (!cov || !res) {
        gsl_matrix_free(cov);
        free(res);
        return -1;
    }
    for (int i = 0; i < PROFILE_POINTS; i++) {
        memcpy(q.theta, pb->theta, sizeof q.theta);
        q.theta[EFFICIENCY_LOG_HC] = log(pb->h_max) * i / (PROFILE_POINTS - 1);
        if (fit_pass(&q, cov, res) != GSL_SUCCESS)
            continue;
        double ss = 0;
        for (long j = 0; j < pb->n_points; j++)
            ss += res[j] * res[j];
        if (ss < best) {
            best = ss;
            memcpy(best_theta, q.theta, sizeof best_theta);
        }
    }
    if (isfinite(best))
        memcpy(pb->theta, best_theta, sizeof best_theta);
    gsl_matrix_free(cov);
    free(res);
    return 0;
}

/* The start and the free parameters: fit_start's, less those out->at_bound holds (at
 * held[]), and ln H_c's start from its profile when it is free. 0, or -1 with why. */
static int fit_setup(fit_problem *pb, const efficiency_model *out, const double *held, char *why, int whylen) {
    fit_start(pb);
    int k = 0;
    for (int j = 0; j < pb->n_free; j++)
        if (!out->at_bound[pb->free_idx[j]])
            pb->free_idx[k++] = pb->free_idx[j];
    pb->n_free = k;
    for (int j = 0; j < EFFICIENCY_NP; j++)
        if (out->at_bound[j])
            pb->theta[j] = held[j];
    if (pb->n_points < pb->n_free + 2)
        return errmsg_set(why, whylen, "%ld accuracy points for %d parameters: need %d or more", pb->n_points,
                          pb->n_free, pb->n_free + 2);
    if (is_free(pb, EFFICIENCY_LOG_HC) && profile_log_hc(pb))
        return errmsg_set(why, whylen, "out of memory");
    return 0;
}

/* Fits, then holds a parameter past its bound there and refits the rest, until none is:
 *  - w < 0, a larger batch that needs fewer epochs at the same rate: not the form's (nor
 *    McCandlish's: E >= E_min): held at 0;
 *  - H_c outside [1, H_max], the longest period measured: below 1 every period is as
 *    drifted as the longest, above H_max none is drifted yet, and the runs cannot tell
 *    where in that direction it lies (γ follows it off to ±∞): held at the bound it
 *    crossed; and where the free fit does not settle, held at its profile's best.
 * Each is held once at most. 0, or -1 with why. */
static int fit_with_bounds(fit_problem *pb, efficiency_model *out, char *why, int whylen) {
    double held[EFFICIENCY_NP] = { 0 };
    for (;;) {
        if (fit_setup(pb, out, held, why, whylen))
            return -1;
        const bool free_hc = is_free(pb, EFFICIENCY_LOG_HC);
        const double hc_start = pb->theta[EFFICIENCY_LOG_HC], hc_hi = log(pb->h_max);
        if (fit_run_passes(pb, out, why, whylen)) {
            if (!free_hc)
                return -1;
            held[EFFICIENCY_LOG_HC] = hc_start;
            out->at_bound[EFFICIENCY_LOG_HC] = true;
            why[0] = '\0'; /* not a failure: the refit below says how it went */
            continue;
        }
        const double *t = out->theta;
        bool again = false;
        if (!out->at_bound[EFFICIENCY_W] && t[EFFICIENCY_W] < 0) {
            held[EFFICIENCY_W] = 0;
            again = out->at_bound[EFFICIENCY_W] = true;
        }
        if (free_hc && (t[EFFICIENCY_LOG_HC] < 0 || t[EFFICIENCY_LOG_HC] > hc_hi)) {
            held[EFFICIENCY_LOG_HC] = t[EFFICIENCY_LOG_HC] < 0 ? 0 : hc_hi;
            again = out->at_bound[EFFICIENCY_LOG_HC] = true;
        }
        if (!again)
            return 0;
    }
}

int efficiency_fit(const efficiency_run *runs, int n_runs, double chance, efficiency_model *out, char *why,
                   int whylen) {
    memset(out, 0, sizeof *out);
    gsl_set_error_handler_off();
    fit_problem pb = { .runs = runs, .n_runs = n_runs, .chance = chance };
    if (!(chance >= 0 && chance < 1))
        return errmsg_set(why, whylen, "chance accuracy %g: expected a number in [0, 1)", chance);
    if (fit_prepare(runs, n_runs, &pb, why, whylen) || fit_with_bounds(&pb, out, why, whylen))
        return -1;
    const double a = out->theta[EFFICIENCY_PLATEAU];
    if (!(a > chance && a <= 1) || !(out->theta[EFFICIENCY_POWER] > 0) || out->theta[EFFICIENCY_W] < 0)
        return errmsg_set(why, whylen, "the accuracy curve's fit ended outside its range (plateau %g, power %g, w "
                          "%g): the points do not rise and level off like a learning curve", a,
                          out->theta[EFFICIENCY_POWER], out->theta[EFFICIENCY_W]);
    for (int j = 0; j < pb.n_free; j++)
        out->fitted[pb.free_idx[j]] = true;
    out->known = true;
    out->examples = runs[0].config.examples;
    out->epochs = runs[0].config.epochs;
    out->batch = (long)pb.b_ref;
    out->chance = chance;
    out->points = pb.n_points;
    out->staleness_max = pb.tau_max;
    out->runs = n_runs;
    out->dof = (int)(pb.n_points - pb.n_free);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Predicting */

int efficiency_check(const efficiency_model *m, const job_config *c, char *why, int whylen) {
    if (!m->known)
        return errmsg_set(why, whylen, "no efficiency fit");
    if (c->epochs != m->epochs)
        return errmsg_set(why, whylen, "the efficiency fit is for a %d-epoch schedule (the learning rate's cosine "
                          "spans --epochs), not %d: predict with --epochs %d, or fit traces of %d-epoch runs",
                          m->epochs, c->epochs, m->epochs, c->epochs);
    if (c->examples != m->examples)
        return errmsg_set(why, whylen, "the efficiency fit was measured on %ld examples, not %ld (an epoch of "
                          "other data is other progress): predict with --examples %ld, or fit traces of such runs",
                          m->examples, c->examples, m->examples);
    if (efficiency_stale(c) && !m->fitted[EFFICIENCY_STALE_COST])
        return errmsg_set(why, whylen, "stale gradients (async or hogwild with more than one worker or a pull "
                          "period): the efficiency fit had no such run, so what staleness costs in epochs "
                          "(stale_cost) was not fitted; fit traces of async accuracy runs (experiments/"
                          "time-to-accuracy)");
    const double g = efficiency_global_batch(c), h = efficiency_averaging_period(c);
    if (!m->fitted[EFFICIENCY_W] && !m->at_bound[EFFICIENCY_W] && fabs(g / (double)m->batch - 1) > 1e-12)
        return errmsg_set(why, whylen, "a global batch of %g: the efficiency fit's runs all had %ld, so what a "
                          "larger batch costs in epochs (w) was not fitted", g, m->batch);
    if (!m->fitted[EFFICIENCY_GAMMA] && c->workers > 1 && h > 1)
        return errmsg_set(why, whylen, "local SGD (%d workers averaging every %g steps): the efficiency fit had no "
                          "such run, so its penalty (gamma) was not fitted", c->workers, h);
    if (!(efficiency_slowdown(m, c, 0) > 0))
        return errmsg_set(why, whylen, "the fitted slowdown of this configuration is %g, not positive: outside "
                          "what the fit can say", efficiency_slowdown(m, c, 0));
    return 0;
}

int efficiency_check_at(const efficiency_model *m, const job_config *c, double tau, char *why, int whylen) {
    if (efficiency_check(m, c, why, whylen))
        return -1;
    if (!(isfinite(tau) && tau >= 0))
        return errmsg_set(why, whylen, "mean staleness %g: expected a number >= 0", tau);
    if (tau > m->staleness_max + EFFICIENCY_STALENESS_SLACK)
        return errmsg_set(why, whylen, "a mean staleness of %.2f updates is beyond the %.2f of the stalest run "
                          "the efficiency fit had (what staleness costs is fitted to first order, and a staler "
                          "server can diverge): fit traces of async accuracy runs at least this stale", tau,
                          m->staleness_max);
    if (!(efficiency_slowdown(m, c, tau) > 0))
        return errmsg_set(why, whylen, "the fitted slowdown of this configuration at a mean staleness of %g is %g, "
                          "not positive: outside what the fit can say", tau, efficiency_slowdown(m, c, tau));
    return 0;
}

/* A draw of θ from N(θ̂, cov) through the lower factor L (p free of them): kept in range. */
static void draw_theta(const efficiency_model *m, const gsl_matrix *L, const int *idx, int p, gsl_rng *rng,
                       double *theta) {
    double z[EFFICIENCY_NP];
    memcpy(theta, m->theta, sizeof m->theta);
    for (int j = 0; j < p; j++)
        z[j] = gsl_ran_gaussian_ziggurat(rng, 1.0);
    for (int a = 0; a < p; a++)
        for (int b = 0; b <= a; b++)
            theta[idx[a]] += gsl_matrix_get(L, (size_t)a, (size_t)b) * z[b];
    if (theta[EFFICIENCY_W] < 0)
        theta[EFFICIENCY_W] = 0;
    if (theta[EFFICIENCY_POWER] < 1e-3)
        theta[EFFICIENCY_POWER] = 1e-3;
}

/* L with L·Lᵀ = the fitted parameters' covariance (diagonal when it is not positive
 * definite: correlations dropped, variances kept). NULL out of memory. */
static gsl_matrix *cov_factor(const efficiency_model *m, int *idx, int *p) {
    *p = 0;
    for (int j = 0; j < EFFICIENCY_NP; j++)
        if (m->fitted[j])
            idx[(*p)++] = j;
    gsl_matrix *L = gsl_matrix_calloc((size_t)(*p ? *p : 1), (size_t)(*p ? *p : 1));
    if (!L || *p == 0)
        return L;
    for (int a = 0; a < *p; a++)
        for (int b = 0; b < *p; b++)
            gsl_matrix_set(L, (size_t)a, (size_t)b, m->cov[idx[a]][idx[b]]);
    if (gsl_linalg_cholesky_decomp1(L) != GSL_SUCCESS) {
        gsl_matrix_set_zero(L);
        for (int a = 0; a < *p; a++)
            gsl_matrix_set(L, (size_t)a, (size_t)a, sqrt(fmax(m->cov[idx[a]][idx[a]], 0)));
    }
    for (int a = 0; a < *p; a++) /* the factor is the lower triangle */
        for (int b = a + 1; b < *p; b++)
            gsl_matrix_set(L, (size_t)a, (size_t)b, 0);
    return L;
}

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The nearest-rank quantile q of sorted v (n): +∞ where the not-reached draws lie. */
static double quantile(const double *v, int n, double q) {
    int i = (int)ceil(q * n) - 1;
    return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

/* The 95% PI of one run by draws (see the header): epochs into ep[DRAWS], times into tm. */
static int predict_draws(const efficiency_model *m, const job_config *c, double tau, double target,
                         const efficiency_timing *timing, double *ep, double *tm) {
    int idx[EFFICIENCY_NP], p;
    gsl_matrix *L = cov_factor(m, idx, &p);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!L || !rng) {
        gsl_matrix_free(L);
        gsl_rng_free(rng);
        return -1;
    }
    gsl_rng_set(rng, DRAW_SEED);
    for (int d = 0; d < DRAWS; d++) {
        double theta[EFFICIENCY_NP];
        draw_theta(m, L, idx, p, rng, theta);
        const double eps = gsl_ran_gaussian_ziggurat(rng, m->sd_test);
        const double zt = gsl_ran_gaussian_ziggurat(rng, 1.0);
        const double s = slowdown_of(theta, m->legacy_log_h, (double)m->batch, c, tau);
        double e = s > 0 ? s * curve_inverse(m->chance, theta, target - eps) : INFINITY;
        if (!(e <= m->epochs))
            e = INFINITY;
        ep[d] = e;
        tm[d] = timing && isfinite(e) ? (timing->startup_s + e * timing->epoch_s) * exp(timing->sd_ln * zt) : e;
    }
    gsl_matrix_free(L);
    gsl_rng_free(rng);
    qsort(ep, DRAWS, sizeof *ep, by_value);
    qsort(tm, DRAWS, sizeof *tm, by_value);
    return 0;
}

int efficiency_predict(const efficiency_model *m, const job_config *c, double tau, double target,
                       const efficiency_timing *timing, efficiency_prediction *out, char *why, int whylen) {
    memset(out, 0, sizeof *out);
    gsl_set_error_handler_off();
    if (!(target > 0 && target < 1))
        return errmsg_set(why, whylen, "target accuracy %g: expected a fraction in (0, 1), e.g. 0.90", target);
    if (efficiency_check_at(m, c, tau, why, whylen))
        return -1;
    out->target = target;
    out->slowdown = efficiency_slowdown(m, c, tau);
    out->plateau = m->theta[EFFICIENCY_PLATEAU];
    out->accuracy_at_end = efficiency_accuracy(m, c, tau, m->epochs);
    const double x = curve_inverse(m->chance, m->theta, target);
    out->reach = !isfinite(x) ? EFFICIENCY_ABOVE_PLATEAU
                 : out->slowdown * x > m->epochs ? EFFICIENCY_BEYOND_SCHEDULE : EFFICIENCY_REACHED;
    out->epochs = isfinite(x) ? out->slowdown * x : 0;
    double *ep = malloc(2 * DRAWS * sizeof *ep);
    if (!ep || predict_draws(m, c, tau, target, timing, ep, ep + DRAWS)) {
        free(ep);
        return errmsg_set(why, whylen, "out of memory");
    }
    const double lo = quantile(ep, DRAWS, 0.025), hi = quantile(ep, DRAWS, 0.975);
    out->lo_reached = isfinite(lo);
    out->hi_reached = isfinite(hi);
    out->epochs_lo = out->lo_reached ? lo : 0;
    out->epochs_hi = out->hi_reached ? hi : 0;
    if (timing) {
        const double tlo = quantile(ep + DRAWS, DRAWS, 0.025), thi = quantile(ep + DRAWS, DRAWS, 0.975);
        out->has_time = true;
        out->time_s = out->reach == EFFICIENCY_REACHED ? timing->startup_s + out->epochs * timing->epoch_s : 0;
        out->time_lo_s = isfinite(tlo) ? tlo : 0;
        out->time_hi_s = isfinite(thi) ? thi : 0;
    }
    free(ep);
    return 0;
}

int efficiency_describe_miss(const efficiency_prediction *p, int epochs, char *buf, int len) {
    if (p->reach == EFFICIENCY_ABOVE_PLATEAU)
        return snprintf(buf, (size_t)len, "not reached: %.1f%% is above the fitted plateau %.1f%%", 100 * p->target,
                        100 * p->plateau);
    if (p->reach == EFFICIENCY_BEYOND_SCHEDULE)
        return snprintf(buf, (size_t)len, "not reached within the %d-epoch schedule: %.1f%% at its end (the curve "
                        "would need %.1f epochs)", epochs, 100 * p->accuracy_at_end, p->epochs);
    return snprintf(buf, (size_t)len, "reached after %.2f epochs", p->epochs);
}

void efficiency_noise_scale(const efficiency_model *m, double *b_noise, double *se, bool *infinite) {
    const double w = m->theta[EFFICIENCY_W];
    *infinite = !(w > 0);
    *b_noise = *infinite ? 0 : (double)m->batch * (1 - w) / w;
    *se = *infinite ? 0 : (double)m->batch / (w * w) * sqrt(fmax(m->cov[EFFICIENCY_W][EFFICIENCY_W], 0));
}
