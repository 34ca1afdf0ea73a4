/* speedup_bench_sim — throughput of the simulator's hot path, for experiments/bench-sim.
 *
 *   speedup_bench_sim job  WORKERS ITERATIONS CV TOPOLOGY   one batch-sync job
 *   speedup_bench_sim heap WORKERS EVENTS                   the bare event queue (the peer)
 *
 * job: a WORKERS-worker batch-sync job of ITERATIONS global steps (one epoch of
 * ITERATIONS·B examples, B = WORKERS so the local batch is 1), seed-like costs; prints
 * events, seconds, events/s and the process's peak RSS.
 * heap: WORKERS nodes pending, each popped and pushed back at a later random time, EVENTS
 * times: the cost of the queue alone, an upper bound for the whole simulator.
 */
#define _POSIX_C_SOURCE 200809L
#include "sim/eventq.h"
#include "sim/job.h"

#include <gsl/gsl_rng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* CPU time of this process: on a shared machine, wall time also counts the time other
 * processes held the core; the events/s of "one core" is events per CPU second. */
static double seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static int bench_job(int workers, long iterations, double cv, const char *topology) {
    job_spec spec = { .params = costmodel_params_seed_example(), .config = costmodel_config_seed_example() };
    spec.params.cv = cv;
    spec.config.workers = workers;
    spec.config.batch = workers;
    spec.config.examples = iterations * workers;
    spec.config.epochs = 1;
    if (job_topology_parse(topology, &spec.config.topology)) {
        fprintf(stderr, "speedup_bench_sim: unknown topology '%s'\n", topology);
        return 2;
    }
    char err[256];
    job *j = job_new(&spec, err, sizeof err);
    if (!j) {
        fprintf(stderr, "speedup_bench_sim: %s\n", err);
        return 1;
    }
    job_result r;
    double t0 = seconds();
    int rc = job_run(j, 1, &r, err, sizeof err);
    double dt = seconds() - t0;
    job_free(j);
    if (rc) {
        fprintf(stderr, "speedup_bench_sim: %s\n", err);
        return 1;
    }
    printf("job workers=%d iterations=%ld cv=%g topology=%s events=%llu seconds=%.3f events_per_s=%.4g "
           "makespan_s=%.6g peak_rss_kib=%ld\n",
           workers, iterations, cv, topology, (unsigned long long)r.events, dt, r.events / dt, r.makespan_s,
           peak_rss_kib());
    return 0;
}

static int bench_heap(int workers, long events) {
    eventq *q = eventq_new(workers);
    eventq_node *nodes = malloc(sizeof *nodes * (size_t)workers);
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    if (!q || !nodes || !rng) {
        fprintf(stderr, "speedup_bench_sim: out of memory\n");
        return 1;
    }
    for (int i = 0; i < workers; i++) {
        eventq_node_init(&nodes[i]);
        eventq_push(q, &nodes[i], gsl_rng_uniform(rng));
    }
    double t0 = seconds();
    for (long i = 0; i < events; i++) {
        eventq_node *n = eventq_pop(q);
        eventq_push(q, n, n->time_s + gsl_rng_uniform(rng));
    }
    double dt = seconds() - t0;
    printf("heap workers=%d events=%ld seconds=%.3f events_per_s=%.4g\n", workers, events, dt, events / dt);
    gsl_rng_free(rng);
    free(nodes);
    eventq_free(q);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 6 && strcmp(argv[1], "job") == 0)
        return bench_job(atoi(argv[2]), atol(argv[3]), atof(argv[4]), argv[5]);
    if (argc == 4 && strcmp(argv[1], "heap") == 0)
        return bench_heap(atoi(argv[2]), atol(argv[3]));
    fprintf(stderr, "usage: speedup_bench_sim job WORKERS ITERATIONS CV TOPOLOGY | heap WORKERS EVENTS\n");
    return 2;
}
