/* replicate — R replications of a job and its baseline (see replicate.h). */
#include "sim/replicate.h"

#include "util/errmsg.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* ---------------------------------------------------------------------------------- */
/* Intervals */

void replicate_interval(const double *x, int n, double *mean, double *half) {
    *mean = gsl_stats_mean(x, 1, (size_t)n);
    *half = 0;
    if (n >= 2)
        *half = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * gsl_stats_sd_m(x, 1, (size_t)n, *mean) / sqrt((double)n);
}

int replicate_prediction_interval(const double *x, int n, double *lo, double *hi) {
    double mean = gsl_stats_mean(x, 1, (size_t)n);
    *lo = *hi = mean;
    if (n < 2)
        return 0;
    double *ln = malloc(sizeof *ln * (size_t)n);
    if (!ln)
        return -1;
    for (int i = 0; i < n; i++)
        ln[i] = x[i] > 0 ? log(x[i]) : NAN;
    double m = gsl_stats_mean(ln, 1, (size_t)n), sd = gsl_stats_sd_m(ln, 1, (size_t)n, m);
    free(ln);
    /* No spread: the value itself, not exp(ln(value)) an ulp away from it. */
    if (sd > 0 || isnan(sd)) {
        double half = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * sd * sqrt(1.0 + 1.0 / n);
        *lo = exp(m - half);
        *hi = exp(m + half);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Replications */

/* The job and its baseline on parameters theta; made anew when fresh (the parameters
 * changed), else reused. 0, or -1 with err. */
static int make_pair(const job_spec *spec, const costmodel_params *theta, bool fresh, job **j, job **b, char *err,
                     int errlen) {
    if (*j && !fresh)
        return 0;
    job_free(*j);
    job_free(*b);
    *b = NULL;
    job_spec js = *spec;
    js.params = *theta;
    job_spec bs = js;
    bs.config = costmodel_baseline(&spec->config);
    *j = job_new(&js, err, errlen);
    *b = *j ? job_new(&bs, err, errlen) : NULL;
    return *b ? 0 : -1;
}

/* The summary: the points (and the interval of their mean) from the central runs, the
 * prediction interval of one run from the drawn ones. */
static int summarise(replicate_summary *s, const double *central_times, const double *central_speedups,
                     const double *times, const double *speedups, int reps) {
    double half;
    replicate_interval(central_times, reps, &s->time_s, &half);
    s->time_mean_lo_s = s->time_s - half;
    s->time_mean_hi_s = s->time_s + half;
    replicate_interval(central_speedups, reps, &s->speedup, &half);
    s->speedup_mean_lo = s->speedup - half;
    s->speedup_mean_hi = s->speedup + half;
    return replicate_prediction_interval(times, reps, &s->time_lo_s, &s->time_hi_s) ||
           replicate_prediction_interval(speedups, reps, &s->speedup_lo, &s->speedup_hi);
}

/* Where the time goes in one central run, a reps-th of the summary's means. */
static void add_breakdown(replicate_summary *s, const job_result *jr, int reps) {
    const double w = 1.0 / reps;
    s->startup_s += w * jr->startup_s;
    s->compute_s += w * jr->compute_s;
    s->update_s += w * jr->update_s;
    s->comm_s += w * jr->comm_s;
    s->wait_s += w * jr->wait_s;
    s->barrier_wait_s += w * jr->barrier_wait_s;
    s->master_peak_bytes = jr->master_peak_bytes;
    s->staleness_median += w * jr->staleness_median;
    s->staleness_p90 += w * jr->staleness_p90;
    s->staleness_mean += w * jr->staleness_mean;
}

/* Is c the run its baseline is (one worker, one core, the same sync and master)? */
static bool is_own_baseline(const job_config *c, const job_config *base) {
    return base->workers == c->workers && base->cores == c->cores && base->master == c->master &&
           base->sync == c->sync && base->every_n == c->every_n;
}

int replicate_run(const job_spec *spec, const uncertainty *unc, int reps, unsigned long seed,
                  replicate_summary *out, char *err, int errlen) {
    if (reps < 1)
        return errmsg_set(err, errlen, "replications must be >= 1 (got %d)", reps);
    /* θ_r differs from run to run: drawn parameters, or one of two all-reduce algorithms. */
    const bool draws_theta = uncertainty_has_params(unc) ||
                             spec->params.allreduce_algorithm == COSTMODEL_ALLREDUCE_EITHER;
    job *j = NULL, *b = NULL, *jc = NULL, *bc = NULL;
    double *times = malloc(sizeof *times * (size_t)reps);
    double *speedups = malloc(sizeof *speedups * (size_t)reps);
    double *central_times = malloc(sizeof *central_times * (size_t)reps);
    double *central_speedups = malloc(sizeof *central_speedups * (size_t)reps);
    gsl_rng *draw = job_rng_new();
    int rc = -1;
    if (!times || !speedups || !central_times || !central_speedups || !draw) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    replicate_summary s = { .reps = reps };
    const job_config one = costmodel_baseline(&spec->config);
    const bool own = is_own_baseline(&spec->config, &one);
    if (draws_theta && make_pair(spec, &spec->params, true, &jc, &bc, err, errlen))
        goto done;
    for (int r = 0; r < reps; r++) {
        unsigned long rs = job_seed(seed, r);
        gsl_rng_set(draw, job_seed(rs, 0));
        costmodel_params theta;
        uncertainty_draw(unc, &spec->params, draw, &theta);
        double f_job = uncertainty_run_factor(&theta, &spec->config, draw);
        double f_base = uncertainty_run_factor(&theta, &one, draw);
        job_result jr, br, cr, cb;
        if (make_pair(spec, &theta, draws_theta, &j, &b, err, errlen) || job_run(j, rs, &jr, err, errlen) ||
            job_run(b, rs, &br, err, errlen))
            goto done;
        /* The central run: the same step noise on the estimate itself (the drawn run when
         * nothing is drawn), the host at its median speed. */
        if (!draws_theta) {
            cr = jr;
            cb = br;
        } else if (job_run(jc, rs, &cr, err, errlen) || job_run(bc, rs, &cb, err, errlen)) {
            goto done;
        }
        times[r] = f_job * jr.makespan_s;
        /* A job that is its own baseline is one run, not two: its speedup is 1. */
        speedups[r] = own ? 1.0 : f_base * br.makespan_s / times[r];
        central_times[r] = cr.makespan_s;
        central_speedups[r] = own ? 1.0 : cb.makespan_s / cr.makespan_s;
        add_breakdown(&s, &cr, reps);
        s.events += jr.events + br.events + (draws_theta ? cr.events + cb.events : 0);
    }
    if (summarise(&s, central_times, central_speedups, times, speedups, reps)) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    *out = s;
    rc = 0;
done:
    gsl_rng_free(draw);
    free(times);
    free(speedups);
    free(central_times);
    free(central_speedups);
    job_free(b);
    job_free(j);
    job_free(bc);
    job_free(jc);
    return rc;
}
