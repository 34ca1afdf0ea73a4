/* host — this machine's facts (host.h). */
#include "util/host.h"

#include <unistd.h>

int host_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n >= 1 && n <= 1048576 ? (int)n : 1;
}
