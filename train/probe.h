/* probe — how fast this host runs a fixed piece of work right now: the host's speed beside
 * every run, so that a run's time can be told apart from the host's phase (a slow
 * hypervisor period, another tenant).
 *
 * probe_sgemm_s: a 384 × 384 × 384 single-precision matrix product on one thread
 * (OpenBLAS, 113 MFLOP), timed 21 times; the median, in seconds (about 1–3 ms each on the
 * hosts seen here: tens of ms in all). The same work on every host and every run, so its
 * ratio between two runs is their hosts' speed ratio for dense compute. Allocates and
 * frees its matrices; 0 when they cannot be had.
 */
#ifndef SPEEDUP_PROBE_H
#define SPEEDUP_PROBE_H

double probe_sgemm_s(void);

#endif
