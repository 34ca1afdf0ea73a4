/* sim/cores.c: the core scheduler worked by hand (experiments/placement/README.md's cases). */
#include "sim/cores.h"

#include <criterion/criterion.h>
#include <math.h>

/* Runs c until nothing computes; each rank's end time into end_s. */
static void run_to_the_end(cores *c, double *end_s) {
    int done[16];
    for (double t = cores_next(c); isfinite(t); t = cores_next(c)) {
        int n = cores_advance(c, t, done);
        for (int i = 0; i < n; i++)
            end_s[done[i]] = t;
    }
}

static cores *three_on_two(cores_policy policy) {
    cores *c = cores_new(3, 2);
    cr_assert_not_null(c);
    cores_set(c, &policy);
    return c;
}

/* Polling ranks stay where they are (τ longer than the work): ranks 0 and 2 share
 * processor 0, rank 1 has processor 1 and leaves it idle when it ends. */
Test(cores, polling_ranks_keep_their_processor) {
    cores *c = three_on_two((cores_policy){ .tau_s = 1.0 });
    for (int r = 0; r < 3; r++)
        cores_begin(c, r, 0.010, 0.0);
    double end[3] = { 0 };
    run_to_the_end(c, end);
    cr_assert_float_eq(end[1], 0.010, 1e-15);
    cr_assert_float_eq(end[0], 0.020, 1e-15);
    cr_assert_float_eq(end[2], 0.020, 1e-15);
    cores_free(c);
}

/* Rank 2 begins 4 ms late: rank 0 runs alone 4 ms, then at half speed (6 ms of work left:
 * 12 ms), ending at 16 ms; rank 2 then has 4 ms left alone: 20 ms. */
Test(cores, a_late_rank_shares_only_what_is_left) {
    cores *c = three_on_two((cores_policy){ .tau_s = 1.0 });
    cores_begin(c, 0, 0.010, 0.0);
    cores_begin(c, 1, 0.010, 0.0);
    int done[3];
    cr_assert_eq(cores_advance(c, 0.004, done), 0);
    cores_begin(c, 2, 0.010, 0.004);
    double end[3] = { 0 };
    run_to_the_end(c, end);
    cr_assert_float_eq(end[1], 0.010, 1e-15);
    cr_assert_float_eq(end[0], 0.016, 1e-15);
    cr_assert_float_eq(end[2], 0.020, 1e-15);
    cores_free(c);
}

/* Napping ranks: the three spread over both processors at 2/3 of a core each; rank 2 (5
 * ms of work) ends at 7.5 ms, then the other two have a processor each for the 5 ms they
 * have left: 12.5 ms. */
Test(cores, napping_ranks_spread_evenly_and_hand_over_a_processor) {
    cores *c = three_on_two((cores_policy){ .tau_s = 1.0, .napping = true });
    cores_begin(c, 0, 0.010, 0.0);
    cores_begin(c, 1, 0.010, 0.0);
    cores_begin(c, 2, 0.005, 0.0);
    double end[3] = { 0 };
    run_to_the_end(c, end);
    cr_assert_float_eq(end[2], 0.0075, 1e-15);
    cr_assert_float_eq(end[0], 0.0125, 1e-15);
    cr_assert_float_eq(end[1], 0.0125, 1e-15);
    cores_free(c);
}

/* Moves every 5 ms cycle the pairing: 0–5 ms ranks 0, 2 paired; 5–10 ms ranks 1, 2; then
 * ranks 0, 1 — each rank alone a third of the time, and all three end at 15 ms, as even
 * sharing would (3 × 10 ms over 2 processors). */
Test(cores, rotations_cycle_the_pairings) {
    cores *c = three_on_two((cores_policy){ .tau_s = 0.005 });
    for (int r = 0; r < 3; r++)
        cores_begin(c, r, 0.010, 0.0);
    double end[3] = { 0 };
    run_to_the_end(c, end);
    for (int r = 0; r < 3; r++)
        cr_assert_float_eq(end[r], 0.015, 1e-15, "rank %d ended at %g", r, end[r]);
    cores_free(c);
}

/* κ = 0.5: two ranks on one processor each run at 1/(2 + 0.5); a background of 0.5 (a
 * master's polling) slows a lone rank to 1/(1.5 + 0.5·0.5). */
Test(cores, sharing_costs_kappa_per_unit_of_load_beyond_one) {
    cores *c = cores_new(2, 1);
    cores_set(c, &(cores_policy){ .kappa = 0.5, .tau_s = 1.0 });
    cores_begin(c, 0, 0.010, 0.0);
    cores_begin(c, 1, 0.010, 0.0);
    double end[2] = { 0 };
    run_to_the_end(c, end);
    cr_assert_float_eq(end[0], 0.025, 1e-15);
    cr_assert_float_eq(end[1], 0.025, 1e-15);
    cores_reset(c);
    cores_set(c, &(cores_policy){ .kappa = 0.5, .tau_s = 1.0, .background = 0.5 });
    cores_begin(c, 0, 0.010, 0.0);
    run_to_the_end(c, end);
    cr_assert_float_eq(end[0], 0.0175, 1e-15);
    cores_free(c);
}

/* An entity outside the rotation (a dedicated master sending a pull) takes the processor
 * with the fewest rotating ranks: with ranks 0 and 2 on processor 0 and rank 1 on 1, it
 * shares processor 1 with rank 1 (both at half speed: its 1 ms ends at 2 ms, rank 1's 10 ms
 * at 11 ms) and leaves ranks 0 and 2 to themselves (20 ms). */
Test(cores, an_entity_outside_the_rotation_takes_the_least_loaded_processor) {
    cores *c = cores_new(4, 2);
    cores_set(c, &(cores_policy){ .tau_s = 1.0 });
    cores_set_rotating(c, 3);
    for (int r = 0; r < 3; r++)
        cores_begin(c, r, 0.010, 0.0);
    cores_begin(c, 3, 0.001, 0.0);
    double end[4] = { 0 };
    run_to_the_end(c, end);
    cr_assert_float_eq(end[3], 0.002, 1e-15);
    cr_assert_float_eq(end[1], 0.011, 1e-15);
    cr_assert_float_eq(end[0], 0.020, 1e-15);
    cr_assert_float_eq(end[2], 0.020, 1e-15);
    cores_free(c);
}
