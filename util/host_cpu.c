/* host_cpu — the processor this thread runs on (host.h). Apart from host.c because
 * sched_getcpu is a GNU extension: _GNU_SOURCE stays in this one file. */
#define _GNU_SOURCE
#include "util/host.h"

#include <sched.h>

int host_current_cpu(void) {
    const int cpu = sched_getcpu();
    return cpu >= 0 ? cpu : -1;
}
