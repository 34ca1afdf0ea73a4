/* probe — how fast this host runs a fixed piece of work right now: the host's speed beside
 * every run, so that a run's time can be told apart from the host's phase (a slow
 * hypervisor period, another tenant).
 *
 * probe_sgemm_s: a 384 × 384 × 384 single-precision matrix product on one thread
 * (OpenBLAS, 113 MFLOP), timed 21 times; the median, in seconds (about 1–3 ms each on the
 * hosts seen here: tens of ms in all). The same work on every host and every run, so its
 * ratio between two runs is their hosts' speed ratio for dense compute. Allocates and
 * frees its matrices; 0 when they cannot be had.
 *
 * probe_transfer_s: a fixed 2 MiB buffer handed from one core to another (a thread pinned
 * to each of the first two processors this process may use: the writer copies it into a
 * shared buffer, the reader copies it out, a flag passes it back and forth), timed 21
 * times after 2 untimed; the median round, in seconds. It is what two ranks' exchange on
 * one host costs at that moment, which on a virtual machine can move severalfold from one
 * second to the next (experiments/drift) where the one-core sgemm does not move. 0 with
 * fewer than two processors, when a thread cannot be pinned, or without memory.
 */
#ifndef SPEEDUP_PROBE_H
#define SPEEDUP_PROBE_H

double probe_sgemm_s(void);
double probe_transfer_s(void);

#endif
