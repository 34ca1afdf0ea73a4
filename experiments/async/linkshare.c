/* linkshare — how a parameter server's one link carries two model-sized transfers at once.
 *
 * The asynchronous master sends a pull to one worker while another worker's push comes in,
 * and two pulls (or two pushes) may be in flight at once. What the simulator should assume
 * for those is a property of the network, so this probe measures it on three ranks, one a
 * host (rank 0 the master), for an n-byte message:
 *   alone     rank 1 sends n bytes to rank 0: one transfer on the link, the unit below;
 *   duplex    rank 0 sends n bytes to rank 1 while rank 2 sends n bytes to rank 0: the
 *             master's link busy both ways; when both have arrived, ÷ alone (1: the two
 *             directions are independent, full duplex; 2: one at a time);
 *   fanout    rank 0 sends n bytes to rank 1 and, `--offset` of alone later, to rank 2:
 *             the two pulls share the master's egress; when the first and the second
 *             arrive, ÷ alone (shared evenly: 2 − offset and 2; one after the other, in
 *             order: 1 and 2).
 * Every repetition starts after a barrier; arrival times are each receiver's clock at its
 * receive's end less rank 0's at the start. The clock is CLOCK_MONOTONIC, one for every
 * process of the machine (the hosts are network namespaces of one kernel), not MPI_Wtime:
 * Open MPI 4.1 counts that from each process's MPI_Init, milliseconds apart. Rank 0 prints, for each op, the median and the 10th and 90th
 * percentiles over --reps repetitions after --warmup untimed ones:
 *   op,bytes,offset,reps,median,p10,p90
 *   duplex,1819688,0,15,1.04,1.02,1.10
 * (alone in seconds, the others ÷ alone's median). Exit: 0 ok, 2 usage error.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <getopt.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

enum { MAX_REPS = 10000, TAG = 7 };

typedef struct {
    long bytes;
    int reps, warmup;
    double offset; /* fanout: the second send's delay, in units of alone's median */
} options;

static int parse(int argc, char **argv, options *o) {
    static const struct option longs[] = {
        { "bytes", required_argument, 0, 'b' }, { "reps", required_argument, 0, 'r' },
        { "warmup", required_argument, 0, 'w' }, { "offset", required_argument, 0, 'o' },
        { 0, 0, 0, 0 },
    };
    int c;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case 'b': o->bytes = strtol(optarg, &end, 10); break;
        case 'r': o->reps = (int)strtol(optarg, &end, 10); break;
        case 'w': o->warmup = (int)strtol(optarg, &end, 10); break;
        case 'o': o->offset = strtod(optarg, &end); break;
        default: return -1;
        }
        if (!end || *end != '\0')
            return -1;
    }
    if (optind != argc || o->bytes < 1 || o->bytes > (1L << 30) || o->reps < 1 || o->reps > MAX_REPS ||
        o->warmup < 0 || !(o->offset >= 0 && o->offset <= 10))
        return -1;
    return 0;
}

/* Seconds on the machine's one monotonic clock. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The time since t0 at which this rank's receive of n bytes from `from` ended. */
static double receive_at(char *buf, long n, int from, double t0) {
    MPI_Recv(buf, (int)n, MPI_BYTE, from, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return now_s() - t0;
}

/* Rank 0 learns when ranks 1 and 2 received (0 for a rank that received nothing). */
static void gather_arrivals(double mine, double *at1, double *at2) {
    double all[3] = { 0 };
    MPI_Gather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    *at1 = all[1];
    *at2 = all[2];
}

static double alone_once(int rank, char *buf, long n) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s(), took = 0;
    if (rank == 1)
        MPI_Send(buf, (int)n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    if (rank == 0)
        took = receive_at(buf, n, 1, t0);
    return took;
}

/* Both transfers done, as seen by rank 0 (its own receive and rank 1's). */
static double duplex_once(int rank, char *buf, char *other, long n) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double mine = 0, at1, at2;
    if (rank == 0) {
        MPI_Request send;
        MPI_Isend(buf, (int)n, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &send);
        mine = receive_at(other, n, 2, t0);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        mine = receive_at(buf, n, 0, t0);
    } else if (rank == 2) {
        MPI_Send(buf, (int)n, MPI_BYTE, 0, TAG, MPI_COMM_WORLD);
    }
    gather_arrivals(mine, &at1, &at2);
    return at1 > mine ? at1 : mine; /* rank 0: rank 1's arrival and its own */
}

/* The first and the second arrival of two sends from rank 0, the second delay_s later. */
static void fanout_once(int rank, char *buf, long n, double delay_s, double *first, double *second) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_s();
    MPI_Bcast(&t0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double mine = 0, at1, at2;
    if (rank == 0) {
        MPI_Request sends[2];
        int done = 0;
        MPI_Isend(buf, (int)n, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &sends[0]);
        while (now_s() - t0 < delay_s) /* keep the first send progressing meanwhile */
            MPI_Test(&sends[0], &done, MPI_STATUS_IGNORE);
        MPI_Isend(buf, (int)n, MPI_BYTE, 2, TAG, MPI_COMM_WORLD, &sends[1]);
        MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
    } else {
        mine = receive_at(buf, n, 0, t0);
    }
    gather_arrivals(mine, &at1, &at2);
    *first = at1 < at2 ? at1 : at2;
    *second = at1 < at2 ? at2 : at1;
}

static void print_row(const char *op, const options *o, double *v, double unit) {
    for (int i = 0; i < o->reps; i++)
        v[i] /= unit;
    gsl_sort(v, 1, (size_t)o->reps);
    printf("%s,%ld,%g,%d,%.4g,%.4g,%.4g\n", op, o->bytes, o->offset, o->reps,
           gsl_stats_median_from_sorted_data(v, 1, (size_t)o->reps), gsl_stats_quantile_from_sorted_data(v, 1, (size_t)o->reps, 0.1),
           gsl_stats_quantile_from_sorted_data(v, 1, (size_t)o->reps, 0.9));
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    options o = { .bytes = 1819688, .reps = 15, .warmup = 2, .offset = 0 };
    if (parse(argc, argv, &o) || size != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: mpirun -np 3 linkshare [--bytes N] [--reps N] [--warmup N] [--offset F]\n"
                            "(exactly 3 ranks, one a host: rank 0 is the master)\n");
        MPI_Finalize();
        return 2;
    }
    char *buf = calloc((size_t)o.bytes, 1), *other = calloc((size_t)o.bytes, 1);
    double *alone = malloc(sizeof *alone * (size_t)o.reps), *duplex = malloc(sizeof *duplex * (size_t)o.reps);
    double *first = malloc(sizeof *first * (size_t)o.reps), *second = malloc(sizeof *second * (size_t)o.reps);
    if (!buf || !other || !alone || !duplex || !first || !second)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = -o.warmup; i < o.reps; i++) {
        double t = alone_once(rank, buf, o.bytes);
        if (i >= 0)
            alone[i] = t;
    }
    double unit = 0;
    if (rank == 0) {
        double *sorted = malloc(sizeof *sorted * (size_t)o.reps);
        if (!sorted)
            MPI_Abort(MPI_COMM_WORLD, 1);
        memcpy(sorted, alone, sizeof *sorted * (size_t)o.reps);
        gsl_sort(sorted, 1, (size_t)o.reps);
        unit = gsl_stats_median_from_sorted_data(sorted, 1, (size_t)o.reps);
        free(sorted);
    }
    MPI_Bcast(&unit, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    for (int i = -o.warmup; i < o.reps; i++) {
        double d = duplex_once(rank, buf, other, o.bytes), f, s;
        fanout_once(rank, buf, o.bytes, o.offset * unit, &f, &s);
        if (i >= 0) {
            duplex[i] = d;
            first[i] = f;
            second[i] = s;
        }
    }
    if (rank == 0) {
        printf("op,bytes,offset,reps,median,p10,p90\n");
        print_row("alone", &o, alone, 1.0);
        print_row("duplex", &o, duplex, unit);
        print_row("fanout_first", &o, first, unit);
        print_row("fanout_second", &o, second, unit);
    }
    free(buf);
    free(other);
    free(alone);
    free(duplex);
    free(first);
    free(second);
    MPI_Finalize();
    return 0;
}
