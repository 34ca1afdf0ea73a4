/* psx_probe — comm/psx.h's exchange on real MPI ranks, for test_psx (run under mpirun).
 *
 *   psx_probe N     every rank pushes a block of N floats it can name, rank 0 checks the
 *                   sum in its turn and makes the pull block from it, every other rank
 *                   checks what it pulled; each rank prints "rank R ok" or "rank R FAIL: ..."
 *                   and exits 0 or 1.
 * The values are small integers, so every sum is exact whatever the order, except element 0:
 * rank 0 pushes 1e8, the last rank −1e8 and the others 1, so the sum in rank order is
 * ((1e8 + 1) + …) − 1e8 = 0 in float (1e8 + 1 rounds to 1e8), and an order that subtracts
 * before adding a 1 would leave 1 or more.
 *
 *   psx_probe barrier MS   rank 0 sleeps MS ms, then every rank enters psx_barrier_napping;
 *                   each rank checks that it left no earlier than rank 0 came (one
 *                   host's CLOCK_MONOTONIC, rank 0's reading broadcast after) and, other
 *                   than rank 0, that it used under a quarter of its wait's wall time as
 *                   CPU; it prints ok or FAIL as above. A polling barrier burns all of it
 *                   while the cores are free (0.299 s of 0.301 s); on a loaded machine
 *                   Open MPI's oversubscribed polling yields and may come in under.
 */
#define _POSIX_C_SOURCE 200809L
#include "comm/psx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    float *push, *pull;
    long n;
    int size, calls;
    char why[160];
} probe;

static float pushed(int rank, int size, long i) {
    if (i == 0)
        return rank == 0 ? 1e8f : rank == size - 1 ? -1e8f : 1.0f;
    return (float)((rank + 1) * (i % 13 + 1));
}

static float summed(int size, long i) { return i == 0 ? 0.0f : (float)(size * (size + 1) / 2 * (i % 13 + 1)); }

/* Rank 0's turn: every push is in (the whole sum, in rank order), no pull has gone yet. */
static void between(void *ctx) {
    probe *p = ctx;
    p->calls++;
    for (long i = 0; i < p->n && !p->why[0]; i++)
        if (p->push[i] != summed(p->size, i))
            snprintf(p->why, sizeof p->why, "between: element %ld is %g, expected %g", i, (double)p->push[i],
                     (double)summed(p->size, i));
    for (long i = 0; i < p->n; i++)
        p->pull[i] = p->push[i] + 0.5f;
}

static double seconds_of(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The barrier mode (see the top). */
static int barrier_probe(int rank, long ms) {
    char why[160] = "";
    MPI_Barrier(MPI_COMM_WORLD); // start together
    const double wall0 = seconds_of(CLOCK_MONOTONIC), cpu0 = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
    double came = 0;
    if (rank == 0) {
        const struct timespec late = { ms / 1000, (ms % 1000) * 1000000L };
        nanosleep(&late, NULL);
        came = seconds_of(CLOCK_MONOTONIC);
    }
    psx_barrier_napping(MPI_COMM_WORLD);
    const double left = seconds_of(CLOCK_MONOTONIC), cpu = seconds_of(CLOCK_PROCESS_CPUTIME_ID) - cpu0;
    const double wall = left - wall0;
    MPI_Bcast(&came, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (left < came)
        snprintf(why, sizeof why, "left the barrier %.3f s before rank 0 came", came - left);
    else if (rank != 0 && cpu > 0.25 * wall)
        snprintf(why, sizeof why, "used %.3f s of CPU in a %.3f s wait", cpu, wall);
    printf("rank %d %s%s\n", rank, why[0] ? "FAIL: " : "ok", why);
    MPI_Finalize();
    return why[0] ? 1 : 0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "barrier") == 0)
        return barrier_probe(rank, argc > 2 ? atol(argv[2]) : 300);
    probe p = { .n = argc > 1 ? atol(argv[1]) : 1000, .size = size };
    p.push = malloc(sizeof(float) * (size_t)p.n);
    p.pull = malloc(sizeof(float) * (size_t)p.n);
    // Exactly the size psx.h asks for: an overrun shows under ASan.
    float *recv = rank == 0 ? malloc(sizeof(float) * (size_t)psx_recv_floats(p.n)) : NULL;
    for (long i = 0; i < p.n; i++) {
        p.push[i] = pushed(rank, size, i);
        p.pull[i] = -1.0f;
    }
    psx_exchange(MPI_COMM_WORLD, p.push, p.pull, p.n, recv, between, &p);
    if (rank == 0 && p.calls != 1 && !p.why[0])
        snprintf(p.why, sizeof p.why, "between ran %d times", p.calls);
    if (rank != 0 && p.calls != 0)
        snprintf(p.why, sizeof p.why, "between ran on rank %d", rank);
    for (long i = 0; i < p.n && !p.why[0]; i++) {
        if (rank != 0 && p.push[i] != pushed(rank, size, i))
            snprintf(p.why, sizeof p.why, "push element %ld changed to %g", i, (double)p.push[i]);
        else if (p.pull[i] != summed(size, i) + 0.5f)
            snprintf(p.why, sizeof p.why, "pull element %ld is %g, expected %g", i, (double)p.pull[i],
                     (double)(summed(size, i) + 0.5f));
    }
    printf("rank %d %s%s\n", rank, p.why[0] ? "FAIL: " : "ok", p.why);
    free(p.push);
    free(p.pull);
    free(recv);
    MPI_Finalize();
    return p.why[0] ? 1 : 0;
}
