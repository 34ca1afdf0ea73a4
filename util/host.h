/* host — facts about the machine this process runs on, read in one place.
 *
 * host_cpu_times: the steal time the kernel counts (a virtual machine's other tenants).
 * host_monotonic_s: the clock every span is timed with.
 * host_online_cores: the cores the kernel has online now (sysconf(_SC_NPROCESSORS_ONLN)),
 * at least 1. Every default that means "this host's cores" (the plan's splits, a trace
 * header's host_cores, commbench's placement, an imported trace's host) reads it here.
 */
#ifndef SPEEDUP_HOST_H
#define SPEEDUP_HOST_H

int host_online_cores(void);

/* Seconds on a clock that only goes forward (CLOCK_MONOTONIC): for spans, not dates. */
double host_monotonic_s(void);

/* The host's CPU time so far, all CPUs together, from /proc/stat's first line: *steal_s the
 * time the hypervisor ran something else while a virtual CPU wanted to run (its 8th
 * field), *total_s every field's sum. 0, or -1 when /proc/stat cannot be read (then both
 * are 0). The difference of two readings is what happened between them. */
int host_cpu_times(double *steal_s, double *total_s);

/* The processor the calling thread runs on now (sched_getcpu), -1 when it cannot be told:
 * where a rank's steps ran, for the scheduler's placement (experiments/placement). */
int host_current_cpu(void);

#endif
