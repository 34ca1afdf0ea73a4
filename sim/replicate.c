#include "sim/replicate.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

void replicate_interval(const double *x, int n, double *mean, double *half) {
    *mean = gsl_stats_mean(x, 1, (size_t)n);
    *half = 0;
    if (n >= 2)
        *half = gsl_cdf_tdist_Pinv(0.975, n - 1.0) * gsl_stats_sd_m(x, 1, (size_t)n, *mean) / sqrt((double)n);
}

int replicate_run(const job_spec *spec, int reps, unsigned long seed, replicate_summary *out,
                  char *err, int errlen) {
    if (reps < 1) {
        snprintf(err, (size_t)errlen, "replications must be >= 1 (got %d)", reps);
        return -1;
    }
    job_spec base_spec = *spec;
    base_spec.config = costmodel_baseline(&spec->config);
    job *j = job_new(spec, err, errlen);
    job *b = j ? job_new(&base_spec, err, errlen) : NULL;
    double *times = malloc(sizeof *times * (size_t)reps);
    double *speedups = malloc(sizeof *speedups * (size_t)reps);
    int rc = -1;
    if (!j || !b)
        goto done;
    if (!times || !speedups) {
        snprintf(err, (size_t)errlen, "out of memory");
        goto done;
    }
    replicate_summary s = { .reps = reps };
    for (int r = 0; r < reps; r++) {
        job_result jr, br;
        unsigned long rs = job_seed(seed, r);
        if (job_run(j, rs, &jr, err, errlen) || job_run(b, rs, &br, err, errlen))
            goto done;
        times[r] = jr.makespan_s;
        speedups[r] = br.makespan_s / jr.makespan_s;
        s.startup_s += jr.startup_s / reps;
        s.compute_s += jr.compute_s / reps;
        s.comm_s += jr.comm_s / reps;
        s.wait_s += jr.wait_s / reps;
        s.barrier_wait_s += jr.barrier_wait_s / reps;
        s.master_peak_bytes = jr.master_peak_bytes;
        s.events += jr.events + br.events;
    }
    double half;
    replicate_interval(times, reps, &s.time_s, &half);
    s.time_lo_s = s.time_s - half;
    s.time_hi_s = s.time_s + half;
    replicate_interval(speedups, reps, &s.speedup, &half);
    s.speedup_lo = s.speedup - half;
    s.speedup_hi = s.speedup + half;
    *out = s;
    rc = 0;
done:
    free(times);
    free(speedups);
    job_free(b);
    job_free(j);
    return rc;
}
