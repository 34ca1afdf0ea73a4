/* probe_transfer — a fixed buffer handed between two cores, timed (probe.h).
 * pthread_setaffinity_np and the CPU_* macros are GNU extensions: _GNU_SOURCE stays here. */
#define _GNU_SOURCE
#include "train/probe.h"

#include "trace/trace.h"
#include "util/host.h"

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { TRANSFER_BYTES = TRACE_TRANSFER_BYTES, TRANSFER_WARMUP = 2, TRANSFER_REPS = 21 };

typedef struct {
    int cpu[2];             /* the writer's and the reader's processor */
    char *src, *shared, *dst;
    atomic_int full;        /* 1: shared holds a copy the reader has not taken yet */
    atomic_int abandoned;   /* 1: no writer will come (it could not be started) */
    double t_s[TRANSFER_WARMUP + TRANSFER_REPS];
    int pinned[2];          /* each thread's pinning succeeded */
} transfer;

static int pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

/* The writer: copies src into shared, hands it over, waits until it is taken. */
static void *writer(void *arg) {
    transfer *x = arg;
    x->pinned[0] = pin_to(x->cpu[0]);
    for (int r = 0; r < TRANSFER_WARMUP + TRANSFER_REPS; r++) {
        const double t0 = host_monotonic_s();
        memcpy(x->shared, x->src, TRANSFER_BYTES);
        atomic_store_explicit(&x->full, 1, memory_order_release);
        while (atomic_load_explicit(&x->full, memory_order_acquire))
            ;
        x->t_s[r] = host_monotonic_s() - t0;
    }
    return NULL;
}

/* The reader: takes every copy out of shared into its own buffer. */
static void *reader(void *arg) {
    transfer *x = arg;
    x->pinned[1] = pin_to(x->cpu[1]);
    for (int r = 0; r < TRANSFER_WARMUP + TRANSFER_REPS; r++) {
        while (!atomic_load_explicit(&x->full, memory_order_acquire))
            if (atomic_load_explicit(&x->abandoned, memory_order_relaxed))
                return NULL;
        memcpy(x->dst, x->shared, TRANSFER_BYTES);
        atomic_store_explicit(&x->full, 0, memory_order_release);
    }
    return NULL;
}

/* The first two processors this process may run on; 0, or -1 with fewer than two. */
static int two_cpus(int cpu[2]) {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0)
        return -1;
    int n = 0;
    for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
        if (CPU_ISSET(i, &set))
            cpu[n++] = i;
    return n == 2 ? 0 : -1;
}

double probe_transfer_s(void) {
    transfer *x = calloc(1, sizeof *x);
    if (!x || two_cpus(x->cpu) != 0) {
        free(x);
        return 0;
    }
    double median = 0;
    x->src = malloc(TRANSFER_BYTES);
    x->shared = malloc(TRANSFER_BYTES);
    x->dst = malloc(TRANSFER_BYTES);
    if (x->src && x->shared && x->dst) {
        for (size_t i = 0; i < TRANSFER_BYTES; i++)
            x->src[i] = (char)(i * 7); /* every page touched before the timing */
        memset(x->shared, 0, TRANSFER_BYTES);
        memset(x->dst, 0, TRANSFER_BYTES);
        pthread_t w, r;
        if (pthread_create(&r, NULL, reader, x) == 0) {
            if (pthread_create(&w, NULL, writer, x) == 0)
                pthread_join(w, NULL);
            else
                atomic_store(&x->abandoned, 1); /* x->pinned[0] stays 0: not measured */
            pthread_join(r, NULL);
            if (x->pinned[0] && x->pinned[1]) {
                double *t = x->t_s + TRANSFER_WARMUP;
                gsl_sort(t, 1, TRANSFER_REPS);
                median = gsl_stats_median_from_sorted_data(t, 1, TRANSFER_REPS);
            }
        }
    }
    free(x->src);
    free(x->shared);
    free(x->dst);
    free(x);
    return median;
}
