/* fixed_rng — the tests' fixed numbers: an LCG, because a test needs the same numbers
 * every run, not good ones. One stream per test binary. */
#ifndef SPEEDUP_TESTS_FIXED_RNG_H
#define SPEEDUP_TESTS_FIXED_RNG_H

#include <stdlib.h>

static unsigned fixed_rng_state = 12345;

/* Uniform in [-1, 1). */
static inline float urand(void) {
    fixed_rng_state = fixed_rng_state * 1664525u + 1013904223u;
    return (float)((fixed_rng_state >> 8) & 0xffffff) / 16777216.0f * 2.0f - 1.0f;
}

/* n floats of urand(), malloc'd. */
static inline float *rand_array(long n) {
    float *a = malloc(sizeof(float) * (size_t)n);
    for (long i = 0; i < n; i++)
        a[i] = urand();
    return a;
}

#endif
