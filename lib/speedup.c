/* speedup — libspeedup's stable C API (speedup.h) over the model's own contracts: the
 * parameter registry (model/params.h), calibration.json (model/calibration.h), the rows of
 * `speedup model` (model/predictions.h) and the simulator (sim/job.h). */
#include "lib/speedup.h"

#include "core/job.h"
#include "model/calibration.h"
#include "model/params.h"
#include "model/predictions.h"
#include "model/uncertainty.h"
#include "sim/job.h"
#include "util/errmsg.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct speedup_params {
    costmodel_params params;
    uncertainty unc;                     /* the calibration's standard errors; 0: exact */
    bool uncalibrated[JOB_TOPO_COUNT];   /* the calibration measured no such synchronisation */
    bool alpha_set[JOB_TOPO_COUNT], beta_set[JOB_TOPO_COUNT]; /* given since (speedup_params_set) */
};

/* The smallest sizes a caller may pass: the members of API version 1. */
#define JOB_SIZE_V1 (offsetof(speedup_job, epochs) + sizeof(int))
#define PREDICTION_SIZE_V1 (offsetof(speedup_prediction, wait_s) + sizeof(double))

speedup_params *speedup_params_new(void) {
    speedup_params *h = calloc(1, sizeof *h);
    if (h)
        h->params = costmodel_params_seed_example();
    return h;
}

speedup_params *speedup_params_read(const char *path, char *err, int errlen) {
    if (!path) {
        errmsg_set(err, errlen, "speedup_params_read: no path");
        return NULL;
    }
    calibration *cal = malloc(sizeof *cal);
    speedup_params *h = calloc(1, sizeof *h);
    if (!cal || !h) {
        errmsg_set(err, errlen, "%s: out of memory", path);
    } else if (calibration_read(path, cal, err, errlen) == 0) {
        h->params = cal->params;
        h->unc = uncertainty_of_calibration(cal);
        memcpy(h->uncalibrated, cal->uncalibrated, sizeof h->uncalibrated);
        free(cal);
        return h;
    }
    free(cal);
    free(h);
    return NULL;
}

void speedup_params_free(speedup_params *h) { free(h); }

int speedup_params_count(void) { return PARAM_COUNT; }

const char *speedup_params_name(int i) { return i >= 0 && i < PARAM_COUNT ? param_info((param_id)i)->name : NULL; }

const char *speedup_params_unit(int i) { return i >= 0 && i < PARAM_COUNT ? param_info((param_id)i)->unit : NULL; }

/* A name for a message, NULL included. */
static const char *shown(const char *name) { return name ? name : "(null)"; }

/* The registry's id of name, or -1 with the reason. */
static int param_id_of(const char *name, char *err, int errlen) {
    const int id = name ? param_by_name(name) : -1;
    if (id < 0)
        return errmsg_set(err, errlen, "unknown parameter '%s' (speedup_params_name lists them)", shown(name));
    return id;
}

/* The smallest job that can run: what a parameter's range is checked with. */
static const job_config any_job = { .workers = 1, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                    .topology = JOB_TOPO_PS, .master = JOB_MASTER_WORKER,
                                    .examples = 1, .batch = 1, .epochs = 1 };

int speedup_params_set(speedup_params *h, const char *name, double value, char *err, int errlen) {
    const int id = param_id_of(name, err, errlen);
    if (id < 0)
        return -1;
    if (!h)
        return errmsg_set(err, errlen, "speedup_params_set: no handle");
    costmodel_params p = h->params;
    *param_value(&p, (param_id)id) = value;
    if (costmodel_check(&p, &any_job, err, errlen))
        return -1;
    h->params = p;
    *param_se(&h->unc.se, (param_id)id) = 0;
    if (id == PARAM_C0 || id == PARAM_C1)
        h->unc.cov_c0_c1 = 0;
    h->alpha_set[JOB_TOPO_PS] |= id == PARAM_ALPHA_PS;
    h->beta_set[JOB_TOPO_PS] |= id == PARAM_BETA_PS;
    h->alpha_set[JOB_TOPO_ALLREDUCE] |= id == PARAM_ALPHA_ALLREDUCE;
    h->beta_set[JOB_TOPO_ALLREDUCE] |= id == PARAM_BETA_ALLREDUCE;
    return 0;
}

int speedup_params_get(const speedup_params *h, const char *name, double *value, char *err, int errlen) {
    const int id = param_id_of(name, err, errlen);
    if (id < 0)
        return -1;
    if (!h || !value)
        return errmsg_set(err, errlen, "speedup_params_get: no handle or no place for the value");
    *value = param_get(&h->params, (param_id)id);
    return 0;
}

/* The job_config of job, checked for h: 0, or -1 with the reason. */
static int config_of(const speedup_params *h, const speedup_job *job, job_config *c, char *err, int errlen) {
    if (!h || !job)
        return errmsg_set(err, errlen, "no parameters or no job");
    if (job->size < JOB_SIZE_V1)
        return errmsg_set(err, errlen, "speedup_job.size is %zu, less than any speedup_job's: initialise the job "
                          "with SPEEDUP_JOB_INIT", job->size);
    *c = (job_config){ .workers = job->workers, .cores = job->cores, .batch_per_worker = job->batch_per_worker != 0,
                       .examples = job->examples, .batch = job->batch, .epochs = job->epochs };
    if (!job->sync || job_sync_parse(job->sync, &c->sync, &c->every_n))
        return errmsg_set(err, errlen, "sync '%s': expected batch, epoch, every:N, async[:N] or hogwild[:N]",
                          shown(job->sync));
    if (!job->topology || job_topology_parse(job->topology, &c->topology))
        return errmsg_set(err, errlen, "topology '%s': expected ps or allreduce", shown(job->topology));
    if (!job->master || job_master_parse(job->master, &c->master))
        return errmsg_set(err, errlen, "master '%s': expected worker or dedicated", shown(job->master));
    const job_topology t = c->topology;
    if (h->uncalibrated[t] && !(h->alpha_set[t] && h->beta_set[t]))
        return errmsg_set(err, errlen, "the calibration measured no %s synchronisation, so %s is not calibrated: set "
                          "alpha_%s and beta_%s first", job_topology_name(t), job_topology_name(t),
                          job_topology_name(t), job_topology_name(t));
    return costmodel_check(&h->params, c, err, errlen);
}

int speedup_predict(const speedup_params *h, const speedup_job *job, speedup_prediction *out, char *err,
                    int errlen) {
    job_config c;
    if (config_of(h, job, &c, err, errlen))
        return -1;
    if (!out || out->size < PREDICTION_SIZE_V1)
        return errmsg_set(err, errlen, "no speedup_prediction, or its size is less than any one's: initialise it "
                          "with SPEEDUP_PREDICTION_INIT");
    const prediction_row r = predictions_from_model_interval(&h->params, &c, &h->unc);
    const speedup_prediction full = {
        .size = out->size, .time_s = r.time_s, .speedup = r.speedup, .time_lo_s = r.time_lo, .time_hi_s = r.time_hi,
        .speedup_lo = r.ci_lo, .speedup_hi = r.ci_hi, .startup_s = r.startup_s, .compute_s = r.compute_s,
        .update_s = r.update_s, .comm_s = r.comm_s, .wait_s = r.wait_s,
    };
    memcpy(out, &full, out->size < sizeof full ? out->size : sizeof full);
    return 0;
}

int speedup_simulate(const speedup_params *h, const speedup_job *job, unsigned long seed, double *time_s,
                     char *err, int errlen) {
    job_config c;
    if (config_of(h, job, &c, err, errlen))
        return -1;
    if (!time_s)
        return errmsg_set(err, errlen, "speedup_simulate: no place for the time");
    const job_spec spec = { .params = h->params, .config = c, .launch = JOB_LAUNCH_PARALLEL, .replay = NULL };
    struct job *sim = job_new(&spec, err, errlen); /* `job` is the parameter here */
    job_result r;
    const int rc = sim ? job_run(sim, seed, &r, err, errlen) : -1;
    job_free(sim);
    if (rc == 0)
        *time_s = r.makespan_s;
    return rc;
}
