#include "fit/families.h"

static const char *const names[FIT_FAMILY_COUNT] = {
    "dedicated", "shared-step", "shared-long", "threads", "batch", "weak", "ps", "averaging",
};

static const char *const says[FIT_FAMILY_COUNT] = {
    "a dedicated ps master beside its workers",
    "ranks share cores, one-step rounds (batch sync)",
    "ranks share cores, rounds of several steps (every:N, epoch)",
    "workers of more than one core, each with its own",
    "a global batch other than the plan's own",
    "every worker takes the whole batch (weak scaling)",
    "a ps master that trains too, every rank with a core",
    "local SGD or model averaging (every:N, epoch), every rank with a core",
};

const char *fit_family_name(fit_family f) { return f >= 0 && f < FIT_FAMILY_COUNT ? names[f] : "?"; }

const char *fit_family_says(fit_family f) { return f >= 0 && f < FIT_FAMILY_COUNT ? says[f] : "?"; }

bool fit_family_has(fit_family f, const job_config *c, double host_cores, long main_batch) {
    const bool dedicated = job_dedicated_master(c);
    const bool shared = host_cores > 0 && (double)c->workers * c->cores > host_cores;
    const bool one_step = job_schedule_of(c).steps_per_round == 1;
    const bool averaging = c->sync == JOB_SYNC_EPOCH || c->sync == JOB_SYNC_EVERY;
    switch (f) {
    case FIT_FAMILY_DEDICATED: return dedicated;
    case FIT_FAMILY_SHARED_STEP: return !dedicated && shared && one_step;
    case FIT_FAMILY_SHARED_LONG: return !dedicated && shared && !one_step;
    case FIT_FAMILY_THREADS: return c->cores > 1 && !shared;
    case FIT_FAMILY_BATCH: return main_batch > 0 && c->batch != main_batch;
    case FIT_FAMILY_WEAK: return c->batch_per_worker;
    case FIT_FAMILY_PS: return c->topology == JOB_TOPO_PS && !dedicated && !shared;
    case FIT_FAMILY_AVERAGING: return averaging && !dedicated && !shared;
    default: return false;
    }
}
