/* gmax — G(K), the expected maximum of K independent standard normal variables.
 *
 * A barrier waits for the slowest of K workers whose step times are N(μ, (CV·μ)²), so
 * its expected extra wait over the mean is CV·μ·G(K). Computed by GSL integration of
 *   G(K) = ∫ x · K·φ(x)·Φ(x)^(K−1) dx   over the real line,
 * not approximated by a table. G(1) = 0, G(2) = 1/√π.
 */
#ifndef SPEEDUP_GMAX_H
#define SPEEDUP_GMAX_H

/* Returns G(k) for k ≥ 1 (0 for k ≤ 1). Results are memoised for k ≤ 4096, so calling
 * it in a loop costs one integration per distinct k. Not thread-safe on first use of a k. */
double gmax_expected(int k);

#endif
