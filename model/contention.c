#include "model/contention.h"

#include <math.h>

double contention_round_idle_s(const costmodel_params *p, const job_config *c) {
    return (double)(job_schedule_of(c).steps_per_round - 1) * costmodel_idle_step_time(p, c);
}

/* How far c's round is from one step against τ: 1 for one step, falling to 0 as its idle
 * steps pass τ. */
static double round_fade(const costmodel_params *p, const job_config *c) {
    if (job_schedule_of(c).steps_per_round <= 1)
        return 1.0;
    if (!(p->balance_s > 0))
        return 0.0;
    return fmax(0.0, 1.0 - contention_round_idle_s(p, c) / p->balance_s);
}

/* Does c's round pay its exchange's wait (Λ, λ) and so no κ: a synchronous all-reduce's
 * round of one step, where the calibration has either? */
static bool pays_wait(const costmodel_params *p, const job_config *c) {
    return (p->oversub_wait_s > 0 || p->oversub_wait_share > 0) && c->topology == JOB_TOPO_ALLREDUCE &&
           !job_sync_is_async(c->sync) && job_schedule_of(c).steps_per_round <= 1;
}

/* κ's round: the steps a rank computes between two waits. An async worker waits on the
 * server after every step (its push, its pull), so it switches as often as in a round
 * of one step. A synchronous round of one step computes at the packing's ρ' and no more:
 * an all-reduce's ring pays its wait per exchange (Λ, λ: contention_exchange_time), a
 * parameter server's pulls go one by one (experiments/fidelity/README.md, 2026-12-06 and
 * 2026-12-07); a file with neither Λ nor λ has the all-reduce's rounds pay κ, as before them.
 * Sharing's extra cost is paid where a round starts (the ranks' caches and places on the
 * cores set anew), so over a round of L idle seconds it is spread as min(1, τ_κ/L); a
 * file without τ_κ fades κ with the packing, over τ. A synchronous team of threads
 * (contention_team_shares_cores) pays none: its threads wait, and are placed anew, at
 * the end of every parallel region, in rounds of any length (experiments/contention,
 * "Teams"). */
double contention_round_weight(const costmodel_params *p, const job_config *c) {
    if (job_sync_is_async(c->sync))
        return 1.0;
    if (contention_team_shares_cores(p, c))
        return 0.0;
    if (job_schedule_of(c).steps_per_round <= 1)
        return c->topology == JOB_TOPO_PS || pays_wait(p, c) ? 0.0 : 1.0;
    if (!(p->kappa_fade_s > 0))
        return round_fade(p, c);
    const double idle_s = contention_round_idle_s(p, c);
    return idle_s > p->kappa_fade_s ? p->kappa_fade_s / idle_s : 1.0;
}

/* ρ of a machine whose processes keep `cores_used` cores busy: 1 where they fit. */
static double rho_of_use(const costmodel_params *p, double cores_used) {
    return (p->host_cores > 0 && cores_used > p->host_cores) ? cores_used / p->host_cores : 1.0;
}

/* ρ in ranks, one core each: while an exchange waits, a team's other threads sleep and
 * only its rank polls (for ranks of one thread, ρ itself). Asked where the ranks share. */
static double ranks_rho(const costmodel_params *p, const job_config *c) {
    return rho_of_use(p, contention_placement_of(p, c).workers_on_master + contention_master_cores(p, c));
}

double contention_exchange_time(const costmodel_params *p, const job_config *c) {
    if (!pays_wait(p, c) || c->workers < 2 || !contention_shares_cores(p, c))
        return 0.0;
    return p->oversub_wait_s + p->oversub_wait_share * costmodel_idle_step_time(p, c) * (ranks_rho(p, c) - 1.0);
}

/* The packing's round ends where every rank waits for the slowest. Async and hogwild
 * workers nap at the epoch's barrier (psx_barrier_napping): the first one done leaves its
 * core idle and the scheduler pulls a packed one over, so nothing stays packed. */
double contention_packing_weight(const costmodel_params *p, const job_config *c) {
    if (p->waits_block > 0 || job_sync_is_async(c->sync) || contention_team_shares_cores(p, c))
        return 0.0;
    return round_fade(p, c);
}

/* The part of a core a dedicated master's polling keeps (m) in [0, 1]: 0 when rank 0
 * trains; more or less over rounds past τ, as L's sign says (an async server works rather
 * than polls). */
double contention_master_cores(const costmodel_params *p, const job_config *c) {
    if (c->master != JOB_MASTER_DEDICATED)
        return 0.0;
    double m = 1.0 - p->master_yield;
    if (!job_sync_is_async(c->sync))
        m += (1.0 - contention_packing_weight(p, c)) * p->master_yield_loss;
    return fmin(1.0, fmax(0.0, m));
}

/* The cores a worker keeps busy over its step where the host's threads outnumber its
 * cores: a rank of one thread its core; a team of T threads, which waits passively there
 * (contention_team_shares_cores), one core in its serial part σ and T in the rest, so
 * 1/(σ + (1 − σ)/T) on average: the scheduler gives what one team leaves idle to another. */
static double worker_cores(const costmodel_params *p, const job_config *c) {
    return c->cores > 1 ? 1.0 / costmodel_amdahl(p, c->cores) : (double)c->cores;
}

/* A team of more threads than a machine has cores computes no faster than on those cores
 * (Amdahl at P against Amdahl at T), whatever else shares them. */
static double team_floor(const costmodel_params *p, const job_config *c) {
    if (!(p->host_cores > 0) || c->cores <= p->host_cores)
        return 1.0;
    return costmodel_amdahl(p, p->host_cores) / costmodel_amdahl(p, c->cores);
}

/* ρ of a machine with `workers` workers, each computing `duty` of the time (1, or an
 * async worker's share: costmodel_slowdown's). */
static double rho_of(const costmodel_params *p, const job_config *c, int workers, double master, double duty) {
    return fmax(rho_of_use(p, (double)workers * worker_cores(p, c) * duty + master), team_floor(p, c));
}

/* A cluster's slots as mpirun fills them: a worker takes T cores, a dedicated master one
 * core of machine 0. Returns the workers the machines hold without sharing a core. */
static long cluster_slots(const costmodel_params *p, const job_config *c, int *slots0, int *slots) {
    const int dedicated = c->master == JOB_MASTER_DEDICATED;
    *slots = (int)(p->host_cores / c->cores);
    *slots0 = (int)((p->host_cores - dedicated) / c->cores);
    return *slots0 + (long)(p->machines - 1) * *slots;
}

/* The placement with the workers computing `duty` of the time. */
static contention_placement placement_at(const costmodel_params *p, const job_config *c, double duty) {
    int k = c->workers;
    contention_placement pl = { .machines_used = 1, .workers_on_master = k, .workers_busiest = k, .rho = 1.0 };
    if (p->machines < 2) {
        if (contention_shares_cores(p, c))
            pl.rho = rho_of(p, c, k, contention_master_cores(p, c), duty);
        return pl;
    }
    int m = p->machines, slots0, slots;
    if (k <= cluster_slots(p, c, &slots0, &slots)) {
        pl.workers_on_master = k < slots0 ? k : slots0;
        int rest = k - pl.workers_on_master, on_next = rest < slots ? rest : slots;
        pl.machines_used = 1 + (rest + slots - 1) / slots;
        pl.workers_busiest = pl.workers_on_master > on_next ? pl.workers_on_master : on_next;
        return pl;
    }
    /* More workers than slots: spread evenly, machine 0 (with the master) among the fullest. */
    pl.machines_used = m;
    pl.workers_on_master = pl.workers_busiest = (k + m - 1) / m;
    if (contention_shares_cores(p, c))
        pl.rho = rho_of(p, c, pl.workers_on_master, contention_master_cores(p, c), duty);
    return pl;
}

contention_placement contention_placement_of(const costmodel_params *p, const job_config *c) {
    return placement_at(p, c, 1.0);
}

/* Do the processes of machine 0 holding `workers` workers, and the dedicated master, outnumber
 * its cores? */
static bool outnumber(const costmodel_params *p, const job_config *c, int workers) {
    return (double)workers * c->cores + (c->master == JOB_MASTER_DEDICATED) > p->host_cores;
}

bool contention_shares_cores(const costmodel_params *p, const job_config *c) {
    if (p->contention_off || !(p->host_cores > 0))
        return false;
    const int k = c->workers, m = p->machines;
    if (m < 2)
        return outnumber(p, c, k);
    int slots0, slots;
    return k > cluster_slots(p, c, &slots0, &slots) && outnumber(p, c, (k + m - 1) / m);
}

bool contention_team_shares_cores(const costmodel_params *p, const job_config *c) {
    return c->cores > 1 && contention_shares_cores(p, c);
}

double contention_rho(const costmodel_params *p, const job_config *c) {
    return contention_placement_of(p, c).rho;
}

/* The busiest machine's training threads per core, rounded up to whole threads. */
static double packed_threads(const costmodel_params *p, const job_config *c, const contention_placement *pl) {
    return ceil((double)pl->workers_busiest * c->cores / p->host_cores);
}

bool contention_fills_cores_alike(double threads, double cores) {
    return cores > 0 && threads >= cores && fmod(threads, cores) == 0;
}

/* The load of an async master's core where waiting ranks poll: nothing re-places the ranks
 * within an epoch, so where the workers' threads fill the master's machine's P cores
 * alike (P divides them) the master's part of a core sits beside n/P of them all epoch,
 * and the barrier waits for those (their share d of a core each); 0 elsewhere (the
 * master takes a core with fewer). No κ: a floor under ρ' that binds near ρ = 1 (K = 2
 * on 2 cores), where the κ term, ∝ ρ − 1, is small. */
static double async_master_core_load(const costmodel_params *p, const job_config *c,
                                     const contention_placement *pl, double duty) {
    const double on_master = (double)pl->workers_on_master * c->cores;
    if (!job_sync_is_async(c->sync) || p->waits_block > 0 || !contention_fills_cores_alike(on_master, p->host_cores))
        return 0.0;
    return on_master / p->host_cores * duty + contention_master_cores(p, c);
}

/* A team of T > 1 threads that fills its machine's cores beside a dedicated master: its
 * threads meet at the end of every parallel region, so the core time the master takes from
 * any one of them the others wait for, and the team loses the master's part of a core m
 * whole while it computes in parallel, where ranks of one thread each lose m/P (ρ). Its
 * serial part σ leaves cores idle, which the master takes for free: over a step the team
 * runs 1/(1 − m·q), q = ((1 − σ)/T)/(σ + (1 − σ)/T) the parallel part of its time (held
 * at 10× where a drawn m near a whole core and a σ near 0 would stop the team outright). */
static double team_master_stall(const costmodel_params *p, const job_config *c, const contention_placement *pl) {
    if (c->cores < 2 || c->master != JOB_MASTER_DEDICATED || (double)pl->workers_on_master * c->cores < p->host_cores)
        return 1.0;
    const double a = costmodel_amdahl(p, c->cores), parallel = (a - p->sigma) / a;
    return 1.0 / (1.0 - fmin(0.9, contention_master_cores(p, c) * parallel));
}

double contention_slowdown_at(const costmodel_params *p, const job_config *c, double duty) {
    if (!contention_shares_cores(p, c))
        return 1.0;
    const contention_placement pl = placement_at(p, c, duty);
    const double floor = fmax(async_master_core_load(p, c, &pl, duty), team_master_stall(p, c, &pl));
    if (pl.rho <= 1.0)
        return fmax(1.0, floor);
    const double w = contention_packing_weight(p, c), v = contention_round_weight(p, c);
    const double shared = pl.rho + w * fmax(0.0, packed_threads(p, c, &pl) - pl.rho) +
                          v * p->oversub_compute * (pl.rho - 1.0);
    return fmax(shared, floor);
}

double contention_shared_rho(const costmodel_params *p, const job_config *c) {
    if (!(p->waits_block > 0) || p->machines >= 2)
        return 1.0;
    return contention_rho(p, c);
}

bool contention_master_crowded(const costmodel_params *p, const job_config *c) {
    if (p->contention_off || c->topology != JOB_TOPO_PS || c->master != JOB_MASTER_DEDICATED || !(p->host_cores > 0))
        return false;
    return (double)contention_placement_of(p, c).workers_on_master * c->cores >= p->host_cores;
}

double contention_master_wake(const costmodel_params *p, const job_config *c) {
    return contention_master_crowded(p, c) ? p->master_wake_s : 0.0;
}

double contention_startup_time(const costmodel_params *p, const job_config *c) {
    return costmodel_data_load_time(p, c) * (contention_rho(p, c) - 1.0);
}

double contention_run_cv(const costmodel_params *p, const job_config *c) {
    return p->run_cv_oversub > 0 && contention_shares_cores(p, c) ? p->run_cv_oversub : p->run_cv;
}

double contention_model_cv(const costmodel_params *p, const job_config *c) {
    return p->model_cv_oversub > 0 && contention_shares_cores(p, c) ? p->model_cv_oversub : p->model_cv;
}
