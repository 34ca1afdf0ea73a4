#define _POSIX_C_SOURCE 200809L
/* psx: the parameter server's exchange (comm/psx.h) on real ranks, through psx_probe under
 * `mpirun --oversubscribe`: the master holds the exact sum of every push, in rank order,
 * when its turn comes (once, on rank 0 only), and every worker pulls what the master made
 * in that turn, its own push untouched. The oracle is arithmetic the probe states, not psx. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Runs the probe on np ranks with arguments args; every rank must say ok. */
static void probe_with(int np, const char *args) {
    const char *mpiexec = getenv("MPIEXEC"), *bin = getenv("PSX_PROBE");
    cr_assert(mpiexec && bin, "MPIEXEC and PSX_PROBE come from ctest");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "timeout 60 '%s' --oversubscribe --bind-to none -np %d '%s' %s 2>&1", mpiexec, np,
             bin, args);
    FILE *f = popen(cmd, "r");
    cr_assert_not_null(f);
    char line[512], all[8192] = "";
    int ok = 0;
    while (fgets(line, sizeof line, f)) {
        ok += strstr(line, " ok\n") != NULL && strncmp(line, "rank ", 5) == 0;
        strncat(all, line, sizeof all - strlen(all) - 1);
    }
    int st = pclose(f);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "np %d, %s: exit %d:\n%s", np, args, st, all);
    cr_assert_eq(ok, np, "np %d, %s: %d of %d ranks ok:\n%s", np, args, ok, np, all);
}

/* The exchange on np ranks with blocks of n floats. */
static void probe(int np, long n) {
    char args[32];
    snprintf(args, sizeof args, "%ld", n);
    probe_with(np, args);
}

Test(psx, three_ranks_sum_in_rank_order_and_pull_the_masters_block) { probe(3, 1000); }

/* 1.2 MB per block: past Open MPI's eager limit, so the sends wait for the receives. */
Test(psx, two_ranks_exchange_a_model_sized_block) { probe(2, 300000); }

Test(psx, four_ranks_exchange) { probe(4, 4099); }

/* An async epoch's barrier (train/asyncps.c): the ranks done first wait for the last
 * without burning the core it needs (rank 0 comes 0.3 s late; see psx_probe). */
Test(psx, ranks_at_a_napping_barrier_wait_for_the_last_and_leave_the_cores_free) { probe_with(3, "barrier 300"); }
