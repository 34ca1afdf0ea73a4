/* host — facts about the machine this process runs on, read in one place.
 *
 * host_online_cores: the cores the kernel has online now (sysconf(_SC_NPROCESSORS_ONLN)),
 * at least 1. Every default that means "this host's cores" (the plan's splits, a trace
 * header's host_cores, commbench's placement, an imported trace's host) reads it here.
 */
#ifndef SPEEDUP_HOST_H
#define SPEEDUP_HOST_H

int host_online_cores(void);

#endif
