/* probe — a fixed sgemm, timed (probe.h). */
#include "train/probe.h"

#include "trace/trace.h"
#include "util/host.h"

#include <cblas.h>
#include <stdlib.h>

enum { PROBE_N = TRACE_PROBE_N, PROBE_REPS = 21 };

static int by_value(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double probe_sgemm_s(void) {
    const size_t n = PROBE_N, size = n * n;
    float *a = malloc(sizeof *a * size), *b = malloc(sizeof *b * size), *c = malloc(sizeof *c * size);
    double t[PROBE_REPS], median = 0;
    const int threads = openblas_get_num_threads();
    openblas_set_num_threads(1); /* one core's speed, whatever the caller's pool */
    if (a && b && c) {
        for (size_t i = 0; i < size; i++) {
            a[i] = (float)((i * 7) % 13) / 13.0f; /* fixed values: the same work every time */
            b[i] = (float)((i * 5) % 11) / 11.0f;
        }
        for (int r = 0; r < PROBE_REPS; r++) {
            const double t0 = host_monotonic_s();
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, PROBE_N, PROBE_N, PROBE_N, 1.0f, a, PROBE_N, b,
                        PROBE_N, 0.0f, c, PROBE_N);
            t[r] = host_monotonic_s() - t0;
        }
        qsort(t, PROBE_REPS, sizeof *t, by_value);
        median = t[PROBE_REPS / 2];
    }
    openblas_set_num_threads(threads);
    free(a);
    free(b);
    free(c);
    return median;
}
