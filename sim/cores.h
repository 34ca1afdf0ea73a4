/* cores — one machine's P processors as a resource the simulator schedules (DESIGN.md:
 * "cores are a resource it schedules"): ranks compute while they hold a processor, so
 * host contention comes out of the simulation instead of the closed form's ρ'
 * (model/contention.h), and `simulate` against `model` checks ρ'.
 *
 *   cores *c = cores_new(3, 2);                    // R ranks, P processors
 *   cores_set(c, &(cores_policy){ .kappa = 0.1, .tau_s = 0.13 });
 *   cores_begin(c, 0, 0.010, now);                 // rank 0 computes 10 ms of idle-core work
 *   double t = cores_next(c);                      // when the next rank is done (or a move)
 *   int done[3], n = cores_advance(c, t, done);    // the ranks done at t, in rank order
 *
 * What it plays (measured: experiments/placement/README.md):
 *   placement  polling ranks (a rank that waits busy-polls, Open MPI's): rank r computes on
 *              processor ((r + k) mod R) mod P, k the number of rotations so far, one every
 *              τ (tau_s) of the clock: the kernel keeps a pairing about τ, then moves it on,
 *              which cycles through every pairing (nothing moves when P divides R). A rank
 *              that waits keeps its processor from the others and takes nothing from a rank
 *              computing beside it. A dedicated master is no rotating rank: it computes
 *              (sends) on the processor with the fewest of them (cores_set_rotating).
 *              Napping ranks (waits block, gloo's), or τ = 0: a
 *              processor a waiting rank leaves is taken at once, so the computing ranks
 *              spread evenly over all P.
 *   sharing    a processor whose load is n computing ranks plus the background b (a
 *              dedicated master's polling, m/P on each) runs each of them at
 *              1/(n + b + κ·(n + b − 1)) of an idle core when n + b > 1, else at full
 *              speed; spread evenly, n = (computing ranks)/P.
 * Work is in idle-core seconds; a rank's rate changes only when a rank begins or ends, or
 * at a rotation, so between those events every rank's progress is linear and exact.
 *
 * Memory: O(R), allocated by cores_new. Nothing prints.
 */
#ifndef SPEEDUP_CORES_H
#define SPEEDUP_CORES_H

#include <stdbool.h>

typedef struct {
    double kappa;        /* κ: a shared processor's cost per extra unit of load */
    double tau_s;        /* τ: how long a pairing of polling ranks lasts; 0: spread at once */
    bool napping;        /* waiting ranks sleep: the computing ranks spread evenly */
    double background;   /* b: load on every processor that is no rank's (≥ 0) */
} cores_policy;

typedef struct cores cores;

cores *cores_new(int ranks, int processors);   /* NULL out of memory */
void cores_free(cores *c);                      /* NULL is a no-op */
void cores_set(cores *c, const cores_policy *policy);
/* Only entities 0..n−1 rotate (default: all); each other entity (a dedicated master that
 * sends the pulls from its own core) computes on the processor holding the fewest of
 * them, the first such from k mod P on. */
void cores_set_rotating(cores *c, int n);
/* Nothing computes, the clock at 0, no rotation yet (a new replication). */
void cores_reset(cores *c);

/* Rank begins work_s of idle-core work at now (≥ the last time given; it was not computing). */
void cores_begin(cores *c, int rank, double work_s, double now_s);
/* When the next rank ends its work or the ranks move; INFINITY when none computes. */
double cores_next(const cores *c);
/* Advances the clock to t (≤ cores_next): writes the ranks whose work ends at t to done, in
 * rank order, and returns their count; they compute no more. */
int cores_advance(cores *c, double t_s, int *done);

#endif
