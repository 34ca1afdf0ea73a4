/* latency — small-message latency between MPI ranks: ping-pong and all-reduce.
 *
 * The cluster's links must carry a 4 KB message in tens of microseconds, as a real
 * 1-10 Gbit/s network does, before any trainer is measured on them (issue 8). This
 * probe times, for each message size:
 *   pingpong   rank 0 sends n bytes to rank 1, which sends them back; one-way time
 *              = round trip / 2 (the other ranks wait at a barrier);
 *   exchange   ranks 0 and 1 send each other n bytes at once (MPI_Sendrecv): both
 *              directions of the link busy, as in a 2-rank all-reduce;
 *   allreduce  MPI_Allreduce (sum) of n/4 floats over every rank, timed on rank 0.
 * Each figure is the median (and 10th/90th percentile) over --iters repetitions after
 * --warmup untimed ones, in microseconds (GSL statistics on the sorted samples).
 * With --where, rank 0 first prints each rank's hostname and IPv4 addresses (gathered
 * over MPI, which also proves the ranks can talk): that is how a test sees that every
 * rank runs in its own network namespace.
 *
 * Output on rank 0:
 *   where,RANK,HOSTNAME,ADDR[;ADDR...]          (with --where)
 *   op,bytes,ranks,iters,median_us,p10_us,p90_us
 *   pingpong,4096,2,1000,23.1,20.5,30.2
 * Exit: 0 ok, 1 MPI failure, 2 usage error.
 */
#define _DEFAULT_SOURCE /* getifaddrs, gethostname */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

enum { MAX_SIZES = 32, WHERE_BYTES = 512 };
static const long MAX_MESSAGE_BYTES = 64L << 20;

typedef struct {
  long bytes[MAX_SIZES]; /* message sizes, each a multiple of sizeof(float) */
  int n_sizes;
  int iters;
  int warmup;
  int where;
} options;

// ----------------------------------------------------------------------------
// arguments

static void usage(FILE *f) {
  fprintf(f,
          "usage: mpirun -np K latency [--bytes LIST] [--iters N] [--warmup N] [--where]\n"
          "  --bytes LIST   message sizes in bytes, multiples of 4 (default 8,4096,65536,1048576)\n"
          "  --iters N      timed repetitions per size (default 1000)\n"
          "  --warmup N     untimed repetitions first (default 100)\n"
          "  --where        print each rank's hostname and IPv4 addresses first\n"
          "  -h, --help     this text\n");
}

/* Only rank 0 reports bad arguments, so K ranks do not print K copies. */
static int report_errors = 1;

/* Parses a whole decimal integer in [min, max]; -1 with a message otherwise. */
static int parse_long(const char *flag, const char *text, long min, long max, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max) {
    if (report_errors)
      fprintf(stderr, "latency: %s: expected an integer in %ld..%ld, got '%s'\n", flag, min,
              max, text);
    return -1;
  }
  *out = v;
  return 0;
}

static int parse_sizes(const char *text, options *o) {
  o->n_sizes = 0;
  const char *p = text;
  for (;;) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    char item[32];
    if (len == 0 || len >= sizeof item || o->n_sizes == MAX_SIZES) {
      if (report_errors)
        fprintf(stderr, "latency: --bytes: expected up to %d sizes like 8,4096, got '%s'\n",
                MAX_SIZES, text);
      return -1;
    }
    memcpy(item, p, len);
    item[len] = '\0';
    long v = 0;
    if (parse_long("--bytes", item, (long)sizeof(float), MAX_MESSAGE_BYTES, &v) != 0)
      return -1;
    if (v % (long)sizeof(float) != 0) {
      if (report_errors)
        fprintf(stderr, "latency: --bytes: %ld is not a multiple of %zu (floats)\n", v,
                sizeof(float));
      return -1;
    }
    o->bytes[o->n_sizes++] = v;
    if (!comma) return 0;
    p = comma + 1;
  }
}

/* 0: run; 1: --help shown; 2: usage error (message printed). */
static int parse_options(int argc, char **argv, options *o, int rank) {
  static const struct option longopts[] = {
      {"bytes", required_argument, NULL, 'b'}, {"iters", required_argument, NULL, 'i'},
      {"warmup", required_argument, NULL, 'w'}, {"where", no_argument, NULL, 'W'},
      {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
  *o = (options){.bytes = {8, 4096, 65536, 1048576}, .n_sizes = 4, .iters = 1000, .warmup = 100};
  report_errors = rank == 0;
  opterr = report_errors;
  int c;
  long v = 0;
  while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
    switch (c) {
    case 'b':
      if (parse_sizes(optarg, o) != 0) return 2;
      break;
    case 'i':
      if (parse_long("--iters", optarg, 1, 10000000, &v) != 0) return 2;
      o->iters = (int)v;
      break;
    case 'w':
      if (parse_long("--warmup", optarg, 0, 10000000, &v) != 0) return 2;
      o->warmup = (int)v;
      break;
    case 'W': o->where = 1; break;
    case 'h':
      if (rank == 0) usage(stdout);
      return 1;
    default:
      if (rank == 0) fprintf(stderr, "try: latency --help\n");
      return 2;
    }
  }
  if (optind < argc) {
    if (report_errors) fprintf(stderr, "latency: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  return 0;
}

// ----------------------------------------------------------------------------
// where each rank runs

/* "hostname,addr;addr" of this process's IPv4 addresses other than loopback. */
static void where_am_i(char out[WHERE_BYTES]) {
  char host[256] = "?";
  if (gethostname(host, sizeof host) != 0) strcpy(host, "?");
  host[sizeof host - 1] = '\0';
  int n = snprintf(out, WHERE_BYTES, "%s,", host);
  struct ifaddrs *ifs = NULL;
  int first = 1;
  if (getifaddrs(&ifs) == 0) {
    for (struct ifaddrs *i = ifs; i && n < WHERE_BYTES; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
      const struct sockaddr_in *a = (const struct sockaddr_in *)(const void *)i->ifa_addr;
      if (ntohl(a->sin_addr.s_addr) >> 24 == 127) continue;
      char text[INET_ADDRSTRLEN];
      if (!inet_ntop(AF_INET, &a->sin_addr, text, sizeof text)) continue;
      n += snprintf(out + n, (size_t)(WHERE_BYTES - n), "%s%s", first ? "" : ";", text);
      first = 0;
    }
    freeifaddrs(ifs);
  }
  if (first && n < WHERE_BYTES) snprintf(out + n, (size_t)(WHERE_BYTES - n), "none");
}

// ----------------------------------------------------------------------------
// timing

typedef struct {
  double median_us, p10_us, p90_us;
} summary;

static summary summarise(double *samples_s, int n) {
  gsl_sort(samples_s, 1, (size_t)n);
  return (summary){
      .median_us = 1e6 * gsl_stats_median_from_sorted_data(samples_s, 1, (size_t)n),
      .p10_us = 1e6 * gsl_stats_quantile_from_sorted_data(samples_s, 1, (size_t)n, 0.10),
      .p90_us = 1e6 * gsl_stats_quantile_from_sorted_data(samples_s, 1, (size_t)n, 0.90)};
}

/* Ping-pong of `bytes` between ranks 0 and 1; samples_s[i] = one-way time (rank 0). */
static int time_pingpong(float *buf, long bytes, const options *o, int rank, double *samples_s) {
  int count = (int)(bytes / (long)sizeof(float));
  for (int i = -o->warmup; i < o->iters; i++) {
    double t0 = MPI_Wtime();
    int rc = MPI_SUCCESS;
    if (rank == 0) {
      rc = MPI_Send(buf, count, MPI_FLOAT, 1, 0, MPI_COMM_WORLD);
      if (rc == MPI_SUCCESS)
        rc = MPI_Recv(buf, count, MPI_FLOAT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      rc = MPI_Recv(buf, count, MPI_FLOAT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rc == MPI_SUCCESS) rc = MPI_Send(buf, count, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
    }
    if (rc != MPI_SUCCESS) return rc;
    if (i >= 0) samples_s[i] = (MPI_Wtime() - t0) / 2;
  }
  return MPI_Barrier(MPI_COMM_WORLD);
}

/* Simultaneous exchange of `bytes` between ranks 0 and 1; samples_s[i] on rank 0. */
static int time_exchange(float *in, float *out, long bytes, const options *o, int rank,
                         double *samples_s) {
  int count = (int)(bytes / (long)sizeof(float));
  for (int i = -o->warmup; i < o->iters; i++) {
    double t0 = MPI_Wtime();
    if (rank <= 1) {
      int rc = MPI_Sendrecv(in, count, MPI_FLOAT, 1 - rank, 1, out, count, MPI_FLOAT, 1 - rank,
                            1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) return rc;
    }
    if (i >= 0) samples_s[i] = MPI_Wtime() - t0;
  }
  return MPI_Barrier(MPI_COMM_WORLD);
}

static int time_allreduce(float *in, float *out, long bytes, const options *o,
                          double *samples_s) {
  int count = (int)(bytes / (long)sizeof(float));
  for (int i = -o->warmup; i < o->iters; i++) {
    double t0 = MPI_Wtime();
    int rc = MPI_Allreduce(in, out, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) return rc;
    if (i >= 0) samples_s[i] = MPI_Wtime() - t0;
  }
  return MPI_SUCCESS;
}

// ----------------------------------------------------------------------------
// main

static int report_mpi_error(const char *what, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fprintf(stderr, "latency: %s: %s\n", what, text);
  return 1;
}

static int run(const options *o, int rank, int ranks) {
  if (o->where) {
    char mine[WHERE_BYTES] = {0};
    where_am_i(mine);
    char *all = rank == 0 ? calloc((size_t)ranks, WHERE_BYTES) : NULL;
    if (rank == 0 && !all) {
      fprintf(stderr, "latency: out of memory\n");
      return 1;
    }
    int rc = MPI_Gather(mine, WHERE_BYTES, MPI_CHAR, all, WHERE_BYTES, MPI_CHAR, 0,
                        MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
      free(all);
      return report_mpi_error("gathering where ranks run", rc);
    }
    for (int r = 0; rank == 0 && r < ranks; r++) printf("where,%d,%s\n", r, all + r * WHERE_BYTES);
    free(all);
  }

  long max_bytes = 0;
  for (int s = 0; s < o->n_sizes; s++)
    if (o->bytes[s] > max_bytes) max_bytes = o->bytes[s];
  float *in = calloc((size_t)max_bytes, 1);
  float *out = calloc((size_t)max_bytes, 1);
  double *samples_s = calloc((size_t)o->iters, sizeof *samples_s);
  if (!in || !out || !samples_s) {
    free(in);
    free(out);
    free(samples_s);
    fprintf(stderr, "latency: out of memory for %ld-byte buffers\n", max_bytes);
    return 1;
  }
  if (rank == 0) printf("op,bytes,ranks,iters,median_us,p10_us,p90_us\n");
  int status = 0;
  for (int s = 0; s < o->n_sizes && status == 0; s++) {
    if (ranks >= 2) {
      int rc = time_pingpong(in, o->bytes[s], o, rank, samples_s);
      if (rc != MPI_SUCCESS) {
        status = report_mpi_error("ping-pong", rc);
        break;
      }
      if (rank == 0) {
        summary m = summarise(samples_s, o->iters);
        printf("pingpong,%ld,%d,%d,%.1f,%.1f,%.1f\n", o->bytes[s], ranks, o->iters, m.median_us,
               m.p10_us, m.p90_us);
      }
      rc = time_exchange(in, out, o->bytes[s], o, rank, samples_s);
      if (rc != MPI_SUCCESS) {
        status = report_mpi_error("exchange", rc);
        break;
      }
      if (rank == 0) {
        summary m = summarise(samples_s, o->iters);
        printf("exchange,%ld,%d,%d,%.1f,%.1f,%.1f\n", o->bytes[s], ranks, o->iters, m.median_us,
               m.p10_us, m.p90_us);
      }
    }
    int rc = time_allreduce(in, out, o->bytes[s], o, samples_s);
    if (rc != MPI_SUCCESS) {
      status = report_mpi_error("all-reduce", rc);
      break;
    }
    if (rank == 0) {
      summary m = summarise(samples_s, o->iters);
      printf("allreduce,%ld,%d,%d,%.1f,%.1f,%.1f\n", o->bytes[s], ranks, o->iters, m.median_us,
             m.p10_us, m.p90_us);
      fflush(stdout);
    }
  }
  free(in);
  free(out);
  free(samples_s);
  return status;
}

int main(int argc, char **argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    fprintf(stderr, "latency: MPI_Init failed\n");
    return 1;
  }
  /* Errors come back as codes, reported once, instead of aborting inside MPI. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  options o;
  int parsed = parse_options(argc, argv, &o, rank);
  int status = parsed == 1 ? 0 : parsed;
  if (parsed == 0) status = run(&o, rank, ranks);
  if (status == 1) MPI_Abort(MPI_COMM_WORLD, 1); /* peers may be blocked in a call */
  MPI_Finalize();
  return status;
}
