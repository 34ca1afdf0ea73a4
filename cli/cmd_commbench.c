/* speedup commbench — time ping-pong, all-reduce and parameter-server exchanges at
 * several message sizes on real MPI ranks (bench/commbench.h) and write the trace that
 * `speedup calibrate --from-traces` fits α and β from. Run under mpirun; only rank 0
 * speaks and writes. */
#define _POSIX_C_SOURCE 200809L
#include "bench/commbench.h"
#include "cli/args.h"
#include "cli/commands.h"

#include <fcntl.h>
#include <getopt.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "git_revision.h" /* SPEEDUP_GIT: generated at build time (cmake/git_revision.cmake) */

static void usage(FILE *out) {
    fprintf(out,
            "usage: mpirun -np K speedup commbench --trace FILE [--sizes LIST] [--repeats N] [--warmup N]\n"
            "\n"
            "Times, for every message size, a ping-pong between ranks 0 and 1, an MPI_Allreduce\n"
            "over all K ranks and a parameter-server exchange (K-1 pushes to rank 0, one at a\n"
            "time, then K-1 pulls), and writes them as comm events of a trace for\n"
            "`speedup calibrate --from-traces` (alpha, beta per topology). K >= 2.\n"
            "\n"
            "  --trace FILE   where rank 0 writes the trace (required; *.trace.jsonl)\n"
            "  --sizes LIST   message sizes in bytes        [8,1024,16384,131072,524288,1819688]\n"
            "  --repeats N    timed repetitions per size and pattern               [20]\n"
            "                 (--reps N, its older name, still works: elsewhere --reps\n"
            "                 counts simulated replications)\n"
            "  --warmup N     untimed repetitions first                            [2]\n"
            "  --help         this text\n");
}

enum { OPT_TRACE = 1, OPT_SIZES, OPT_REPEATS, OPT_REPS, OPT_WARMUP, OPT_HELP };

/* 0 run, 1 done (help), 2 usage error (printed). */
static int parse(int argc, char **argv, commbench_options *o, const char **trace_path, int rank) {
    static const struct option options[] = {
        { "trace", required_argument, 0, OPT_TRACE },
        { "sizes", required_argument, 0, OPT_SIZES },
        { "repeats", required_argument, 0, OPT_REPEATS },
        { "reps", required_argument, 0, OPT_REPS },
        { "warmup", required_argument, 0, OPT_WARMUP },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    int code, sizes[COMMBENCH_MAX_SIZES], n;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_TRACE: *trace_path = optarg; break;
        case OPT_SIZES:
            if (args_int_list("--sizes", optarg, 1, 1 << 30, sizes, COMMBENCH_MAX_SIZES, &n))
                return 2;
            o->n_sizes = n;
            for (int i = 0; i < n; i++)
                o->sizes_bytes[i] = sizes[i];
            break;
        case OPT_REPS:
            if (rank == 0)
                fprintf(stderr, "speedup: note: commbench --reps is the older name of --repeats (measured "
                                "repetitions); --reps means simulated replications in simulate and report\n");
            /* fall through */
        case OPT_REPEATS:
            if (args_int(code == OPT_REPS ? "--reps" : "--repeats", optarg, 1, 1000000, &o->reps))
                return 2;
            break;
        case OPT_WARMUP:
            if (args_int("--warmup", optarg, 0, 1000000, &o->warmup))
                return 2;
            break;
        case OPT_HELP:
            if (rank == 0)
                usage(stdout);
            return 1;
        default:
            return args_unknown_flag("commbench", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return args_unexpected("commbench", argv[optind]);
    if (!*trace_path) {
        args_error("commbench: --trace FILE is required (where the measurements go)");
        return 2;
    }
    return 0;
}

/* Median of rank 0's spans of one pattern at one size. */
static double median_of(const trace *t, const char *name, long bytes) {
    double *d = malloc(sizeof *d * (size_t)(t->n_events + 1));
    size_t n = 0;
    for (long i = 0; d && i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        if (e->rank == 0 && e->bytes == bytes && strcmp(e->name, name) == 0)
            d[n++] = e->t1_s - e->t0_s;
    }
    double m = 0;
    if (n > 0) {
        gsl_sort(d, 1, n);
        m = gsl_stats_median_from_sorted_data(d, 1, n);
    }
    free(d);
    return m;
}

int cmd_commbench(int argc, char **argv) {
    MPI_Init(NULL, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    commbench_options o = commbench_defaults();
    o.git = SPEEDUP_GIT;
    const char *trace_path = NULL;
    /* Every rank parses the same argv and reaches the same verdict; only rank 0 says it. */
    int saved = -1;
    if (rank != 0) {
        fflush(stderr);
        saved = dup(STDERR_FILENO);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDERR_FILENO);
            close(devnull);
        }
    }
    int rc = parse(argc, argv, &o, &trace_path, rank);
    if (saved >= 0) {
        fflush(stderr);
        dup2(saved, STDERR_FILENO);
        close(saved);
    }
    if (rc) {
        MPI_Finalize();
        return rc == 1 ? 0 : 2;
    }

    trace *t = NULL;
    char err[512];
    if (commbench_run(MPI_COMM_WORLD, &o, &t, err, sizeof err)) {
        if (rank == 0)
            args_error("%s", err);
        MPI_Finalize();
        return size < 2 ? 2 : 1;
    }
    rc = 0;
    if (rank == 0) {
        printf("commbench: %d ranks on %s, %d sizes x %d repetitions; medians of rank 0's spans (s)\n", size,
               t->run.host, o.n_sizes, o.reps);
        printf("%12s %12s %12s %12s\n", "bytes", "pingpong", "allreduce", "ps");
        for (int i = 0; i < o.n_sizes; i++) {
            long bytes = 4 * ((o.sizes_bytes[i] + 3) / 4);
            printf("%12ld %12.4g %12.4g %12.4g\n", bytes, median_of(t, "pingpong", bytes),
                   median_of(t, "allreduce", bytes), median_of(t, "ps", bytes));
        }
        if (trace_write(t, trace_path, err, sizeof err)) {
            args_error("%s", err);
            rc = 1;
        } else {
            printf("wrote %s\n", trace_path);
        }
    }
    trace_free(t);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
