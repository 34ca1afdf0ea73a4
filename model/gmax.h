/* gmax — G(K) and V(K), the mean and the variance of the maximum of K independent
 * standard normal variables.
 *
 * A barrier waits for the slowest of K workers whose step times are N(μ, (CV·μ)²), so
 * its expected extra wait over the mean is CV·μ·G(K), and the round's length spreads by
 * CV·μ·√V(K) (model/uncertainty.h adds that up over a run). Computed by GSL integration of
 *   G(K) = ∫ x · K·φ(x)·Φ(x)^(K−1) dx,   V(K) = ∫ x² · K·φ(x)·Φ(x)^(K−1) dx − G(K)²
 * over the real line, not approximated by a table. G(1) = 0, G(2) = 1/√π; V(1) = 1,
 * V(2) = 1 − 1/π.
 *
 * Ranks that sleep while they wait (gloo's) and outnumber the cores do not each wait for
 * the slowest: whoever finishes first gives its core to the others. With the cores shared
 * evenly (processor sharing), K ranks whose rounds take D_(1) ≤ … ≤ D_(K) at the shared
 * speed ρ (each then running at 1/ρ of a core) finish the j-th at
 *   Σ_{l ≤ j} h_l·(D_(l) − D_(l−1)),   h_l = max(1/ρ, (K − l + 1)/K),   D_(0) = 0:
 * while n = K − l + 1 ranks still run, each goes n/K of the shared time per unit of its
 * work, but never faster than a core of its own (1/ρ). The last finishes, on average,
 *   μ + CV·μ·G_ρ(K),   G_ρ(K) = Σ_j e_j·(h_j − h_{j+1}),   h_{K+1} = 0,
 * e_j = E[Z_(j)] the expected order statistics of K standard normals, computed by GSL
 * integration of x·K!/((j−1)!(K−j)!)·φ(x)·Φ(x)^(j−1)·(1 − Φ(x))^(K−j). At ρ ≤ 1 every h
 * is 1 and G_ρ(K) = G(K); at K = 3, ρ = 1.5 it is G(3)/3, a third of the wait of ranks
 * that each keep their core. The round's spread there is still taken as CV·μ·√V(K), an
 * overestimate (the shared finish averages over the ranks), and small beside a run's own
 * spread (run_cv).
 */
#ifndef SPEEDUP_GMAX_H
#define SPEEDUP_GMAX_H

/* Returns G(k) for k ≥ 1 (0 for k ≤ 1). Results are memoised for k ≤ 4096, so calling
 * it in a loop costs one integration per distinct k. Not thread-safe on first use of a k. */
double gmax_expected(int k);

/* Returns V(k) for k ≥ 1 (1 for k ≤ 1), memoised like gmax_expected. */
double gmax_variance(int k);

/* Returns e_j = E[Z_(j)], the j-th smallest of k standard normals (1 ≤ j ≤ k; 0 for
 * k ≤ 1 or j out of range). Memoised for k ≤ 4096 (a row of k values per distinct k,
 * computed on its first use: not thread-safe then). */
double gmax_order_expected(int k, int j);

/* Returns G_ρ(k), the expected wait of the last of k ranks that share the cores evenly at
 * oversubscription rho (see the header), in units of CV·μ; G(k) at rho ≤ 1. */
double gmax_shared_expected(int k, double rho);

#endif
