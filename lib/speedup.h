/* speedup — libspeedup's stable C API: a training job's predicted time and speedup with
 * their 95% prediction intervals (the closed form of `speedup model`), and one simulated
 * run (`speedup simulate`'s simulator), from the seed's example parameters or a
 * calibration.json.
 *
 * Installed as include/speedup/speedup.h; with pkg-config's or CMake's flags a program
 * writes `#include <speedup.h>` and links -lspeedup (speedup::speedup).
 *
 * What stays stable from release to release:
 *   - The parameters are behind an opaque handle (speedup_params) and reached by name,
 *     the names of calibration.json's "params" ("c0", "c1", "sigma", "alpha_ps", ...;
 *     speedup_params_count and speedup_params_name list them, and their units). A
 *     parameter a later release adds is one more name, not a change of any layout.
 *   - A job and a prediction are plain structs whose first member is their size: set it
 *     with SPEEDUP_JOB_INIT and SPEEDUP_PREDICTION_INIT (the sizeof your program was
 *     compiled with). A later release may append members; it reads and writes only those
 *     your size covers and takes the rest at their defaults.
 *   - The sync modes, topologies and master roles are the names the command line takes.
 * The headers under model/, sim/, core/ and trace/ are the library's own contracts: they
 * may change with any 0.x release.
 *
 * Errors: a function that can fail returns 0, or -1 (NULL for a handle) with a one-line
 * reason in err (errlen bytes, NUL-terminated; err may be NULL). Nothing prints, nothing
 * exits. A handle may be read (get, predict, simulate) from several threads at once; a
 * handle being changed (set) by one thread must not be used by another meanwhile.
 */
#ifndef SPEEDUP_SPEEDUP_H
#define SPEEDUP_SPEEDUP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this API: raised when a function or a struct member is added. */
#define SPEEDUP_API_VERSION 1

/* The parameters of the cost model and what is known of their error. */
typedef struct speedup_params speedup_params;

/* The seed's example (model/costmodel.h: a 1.8 MB CNN on Fashion-MNIST, one core ≈ 8 h,
 * a 1 Gbit/s network, Spark-like start-up), taken as exact. NULL: out of memory. */
speedup_params *speedup_params_new(void);

/* A calibration.json (`speedup calibrate`): its parameters and their standard errors,
 * which widen the intervals. NULL with "PATH: ..." in err. */
speedup_params *speedup_params_read(const char *path, char *err, int errlen);

void speedup_params_free(speedup_params *h);          /* NULL is a no-op */

/* How many parameters there are, and the name (NULL out of range) and unit ("s",
 * "s/byte", "1", ...; NULL out of range) of parameter i, 0 ≤ i < count. */
int speedup_params_count(void);
const char *speedup_params_name(int i);
const char *speedup_params_unit(int i);

/* Sets the parameter named name to value, taken as exact (its standard error 0, as the
 * command line's what-if flags take theirs). -1 with the reason for an unknown name or a
 * value out of the parameter's range (finite, ≥ 0; a fraction in [0, 1]); h unchanged. */
int speedup_params_set(speedup_params *h, const char *name, double value, char *err, int errlen);

/* The value of the parameter named name into *value. -1 for an unknown name. */
int speedup_params_get(const speedup_params *h, const char *name, double *value, char *err, int errlen);

/* A training job: K workers × T cores on D examples in batches of B for E epochs. */
typedef struct {
    size_t size;             /* sizeof(speedup_job): SPEEDUP_JOB_INIT sets it */
    int workers;             /* K ≥ 1 training workers (a dedicated master is not one) */
    int cores;               /* T ≥ 1 per worker */
    const char *sync;        /* "batch", "epoch", "every:N", "async[:N]" or "hogwild[:N]" */
    const char *topology;    /* "ps" or "allreduce" */
    const char *master;      /* a parameter server's rank 0: "worker" (trains too) or
                                "dedicated" (only serves: one rank more) */
    int batch_per_worker;    /* batch sync: 0 = B split over the workers, 1 = B each */
    long examples;           /* D */
    long batch;              /* B, the global batch */
    int epochs;              /* E */
} speedup_job;

/* One worker of one core, batch sync through a parameter server whose master trains; no
 * data yet (examples, batch and epochs must be set). */
#define SPEEDUP_JOB_INIT                                                                                  \
    { .size = sizeof(speedup_job), .workers = 1, .cores = 1, .sync = "batch", .topology = "ps",           \
      .master = "worker", .batch_per_worker = 0, .examples = 0, .batch = 0, .epochs = 0 }

/* The closed form's prediction of one job. */
typedef struct {
    size_t size;             /* sizeof(speedup_prediction): SPEEDUP_PREDICTION_INIT sets it */
    double time_s;           /* T(K,T): the training time, start-up included */
    double speedup;          /* T(1,1)/T(K,T): against the same job on one worker of one core */
    double time_lo_s, time_hi_s;   /* 95% prediction interval of one run's time */
    double speedup_lo, speedup_hi; /* and of its speedup */
    double startup_s, compute_s, update_s, comm_s, wait_s; /* where time_s goes (they add up to it) */
} speedup_prediction;

#define SPEEDUP_PREDICTION_INIT { .size = sizeof(speedup_prediction) }

/* Predicts job under h into *out (members up to out->size). -1 with the reason for a job
 * that cannot run (a bad name, K > B in batch sync, ...), or one through a topology h's
 * calibration measured no synchronisation of (until its alpha_ and beta_ are set). */
int speedup_predict(const speedup_params *h, const speedup_job *job, speedup_prediction *out, char *err,
                    int errlen);

/* One run of job simulated under h (every step's time drawn with h's cv, from an RNG
 * seeded with seed; workers launched in parallel): its training time in *time_s. With cv
 * = 0 it is the closed form's time_s (async and hogwild with two workers or more: at least
 * that, more where their requests collide at the master). -1 with the reason as
 * speedup_predict. */
int speedup_simulate(const speedup_params *h, const speedup_job *job, unsigned long seed, double *time_s,
                     char *err, int errlen);

#ifdef __cplusplus
}
#endif

#endif
