/* gmax — G(K) and V(K), the mean and the variance of the maximum of K independent
 * standard normal variables.
 *
 * A barrier waits for the slowest of K workers whose step times are N(μ, (CV·μ)²), so
 * its expected extra wait over the mean is CV·μ·G(K), and the round's length spreads by
 * CV·μ·√V(K) (model/uncertainty.h adds that up over a run). Computed by GSL integration of
 *   G(K) = ∫ x · K·φ(x)·Φ(x)^(K−1) dx,   V(K) = ∫ x² · K·φ(x)·Φ(x)^(K−1) dx − G(K)²
 * over the real line, not approximated by a table. G(1) = 0, G(2) = 1/√π; V(1) = 1,
 * V(2) = 1 − 1/π.
 */
#ifndef SPEEDUP_GMAX_H
#define SPEEDUP_GMAX_H

/* Returns G(k) for k ≥ 1 (0 for k ≤ 1). Results are memoised for k ≤ 4096, so calling
 * it in a loop costs one integration per distinct k. Not thread-safe on first use of a k. */
double gmax_expected(int k);

/* Returns V(k) for k ≥ 1 (1 for k ≤ 1), memoised like gmax_expected. */
double gmax_variance(int k);

#endif
