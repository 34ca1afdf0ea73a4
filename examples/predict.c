/* predict — libspeedup from a program of your own: one configuration through the
 * closed-form cost model and through the discrete-event simulator.
 *
 * The configuration is the seed's study (Fashion-MNIST cut to 6000 images, batch 32,
 * 5 epochs, seed-like costs: model/costmodel.h) on 4 workers x 1 core, synchronising
 * every batch through a parameter server. Then the simulator with no step spread (cv = 0):
 * every span at its mean, so its makespan is the closed form's total at cv = 0 (sim/job.h).
 *
 * Build against an installed speedup:
 *   cc predict.c $(pkg-config --cflags --libs speedup) -o predict
 *   or CMake: find_package(speedup) and link speedup::speedup (examples/CMakeLists.txt).
 * Prints one line per prediction; exit 0, or 1 with the reason on stderr.
 */
#include <model/costmodel.h> // costmodel_params, job_config, costmodel_total_time, ...
#include <sim/job.h>         // job_new, job_run, job_free

#include <stdio.h>

int main(void) {
    costmodel_params params = costmodel_params_seed_example();
    job_config config = costmodel_config_seed_example();
    config.workers = 4;
    config.cores = 1;
    config.sync = JOB_SYNC_BATCH;
    config.topology = JOB_TOPO_PS;

    char err[512];
    if (costmodel_check(&params, &config, err, sizeof err)) {
        fprintf(stderr, "predict: %s\n", err);
        return 1;
    }
    costmodel_breakdown b = costmodel_breakdown_of(&params, &config);
    printf("model: K=%d T=%d batch ps: time_s=%.6f speedup=%.6f (startup %.1f s, compute %.1f s, "
           "comm %.1f s, wait %.1f s)\n",
           config.workers, config.cores, b.total_s, costmodel_speedup(&params, &config), b.startup_s,
           b.compute_s, b.comm_s, b.wait_s);

    /* The simulator with every step at its mean (cv = 0) against the closed form at cv = 0. */
    params.cv = 0;
    job_spec spec = { .params = params, .config = config, .launch = JOB_LAUNCH_PARALLEL, .replay = NULL };
    job *j = job_new(&spec, err, sizeof err);
    job_result r;
    if (!j || job_run(j, 1, &r, err, sizeof err)) {
        fprintf(stderr, "predict: simulation: %s\n", err);
        job_free(j);
        return 1;
    }
    printf("sim:   cv=0: time_s=%.6f (closed form at cv=0: %.6f; %llu events)\n", r.makespan_s,
           costmodel_total_time(&params, &config), (unsigned long long)r.events);
    job_free(j);
    return 0;
}
