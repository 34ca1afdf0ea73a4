/* host — this machine's facts (host.h). */
#define _POSIX_C_SOURCE 200809L
#include "util/host.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

int host_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 && n <= 1048576 ? (int)n : 1;
}

double host_monotonic_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int host_cpu_times(double *steal_s, double *total_s) {
    *steal_s = *total_s = 0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[10] = { 0 };
    const int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7], &v[8], &v[9]);
    fclose(f);
    const long hz = sysconf(_SC_CLK_TCK);
    if (n < 8 || hz <= 0)
        return -1;
    double total = 0;
    for (int i = 0; i < n && i < 8; i++) /* guest times (9, 10) are inside user already */
        total += (double)v[i];
    *steal_s = (double)v[7] / (double)hz;
    *total_s = total / (double)hz;
    return 0;
}
