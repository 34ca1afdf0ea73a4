/* predict — libspeedup from a program of your own, through its stable API (speedup.h):
 * one configuration through the closed-form cost model, with the 95% prediction interval
 * of one run, and through the discrete-event simulator.
 *
 * The configuration is the seed's study (Fashion-MNIST cut to 6000 images, batch 32,
 * 5 epochs) on 4 workers x 1 core, synchronising every batch through a parameter server,
 * with the seed-like costs of speedup_params_new, or a calibration.json's when one is
 * given (`predict calibration.json`). Then the simulator with no step spread (cv = 0):
 * every span at its mean, so its time is the closed form's at cv = 0.
 *
 * Build against an installed speedup:
 *   cc predict.c $(pkg-config --cflags --libs speedup) -o predict
 *   or CMake: find_package(speedup) and link speedup::speedup (examples/CMakeLists.txt).
 * Prints one line per prediction; exit 0, or 1 with the reason on stderr.
 */
#include <speedup.h> // speedup_params_new, speedup_predict, speedup_simulate, ...

#include <stdio.h>

int main(int argc, char **argv) {
    char err[512] = "out of memory";
    speedup_params *params = argc > 1 ? speedup_params_read(argv[1], err, sizeof err) : speedup_params_new();
    if (!params) {
        fprintf(stderr, "predict: %s\n", err);
        return 1;
    }
    speedup_job job = SPEEDUP_JOB_INIT;
    job.workers = 4;
    job.cores = 1;
    job.sync = "batch";
    job.topology = "ps";
    job.examples = 6000;
    job.batch = 32;
    job.epochs = 5;

    speedup_prediction p = SPEEDUP_PREDICTION_INIT;
    if (speedup_predict(params, &job, &p, err, sizeof err)) {
        fprintf(stderr, "predict: %s\n", err);
        speedup_params_free(params);
        return 1;
    }
    printf("model: K=%d T=%d %s %s: time_s=%.6f speedup=%.6f (95%% PI of one run %.1f-%.1f s; startup %.1f s, "
           "compute %.1f s, comm %.1f s, wait %.1f s)\n",
           job.workers, job.cores, job.sync, job.topology, p.time_s, p.speedup, p.time_lo_s, p.time_hi_s, p.startup_s,
           p.compute_s, p.comm_s, p.wait_s);

    /* The simulator with every step at its mean (cv = 0) against the closed form at cv = 0. */
    double simulated_s = 0;
    if (speedup_params_set(params, "cv", 0, err, sizeof err) || speedup_predict(params, &job, &p, err, sizeof err) ||
        speedup_simulate(params, &job, 1, &simulated_s, err, sizeof err)) {
        fprintf(stderr, "predict: simulation: %s\n", err);
        speedup_params_free(params);
        return 1;
    }
    printf("sim:   cv=0: time_s=%.6f (closed form at cv=0: %.6f)\n", simulated_s, p.time_s);
    speedup_params_free(params);
    return 0;
}
