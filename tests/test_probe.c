/* test_probe — the host's speed probes (train/probe.h): a reading where they can measure,
 * and 0, said plainly, where they cannot. */
#define _GNU_SOURCE /* sched_setaffinity, CPU_* */
#include "train/probe.h"

#include <criterion/criterion.h>
#include <sched.h>

/* Two processors at hand: the handoff is timed, and a median round of 2 MiB takes more than
 * nothing and far less than a second (tens of microseconds to a few milliseconds on the
 * hosts seen; a second is what no memory system takes). One processor: not measured. */
Test(probe, the_transfer_probe_times_a_handoff_between_two_processors_or_says_it_cannot) {
    cpu_set_t all;
    cr_assert_eq(sched_getaffinity(0, sizeof all, &all), 0);
    const double t = probe_transfer_s();
    if (CPU_COUNT(&all) >= 2)
        cr_assert(t > 0 && t < 1.0, "a 2 MiB handoff between two cores: %g s", t);
    else
        cr_assert_eq(t, 0.0);
}

Test(probe, the_transfer_probe_on_one_processor_is_not_measured) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
    cr_assert_eq(sched_setaffinity(0, sizeof one, &one), 0);
    cr_assert_eq(probe_transfer_s(), 0.0, "one processor: no second core to hand the buffer to");
}

Test(probe, the_compute_probe_times_its_product) {
    const double t = probe_sgemm_s();
    cr_assert(t > 0 && t < 1.0, "a 113 MFLOP product: %g s", t);
}
