/* model/contention.c: one definition of "the ranks share the cores" for the fit and the
 * prediction, ρ worked by hand, and the module switched off. */
#include "model/contention.h"
#include "trace/traceinfo.h"

#include <criterion/criterion.h>
#include <math.h>

static job_config config(int k, job_master master) {
    return (job_config){ .workers = k, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1, .topology = JOB_TOPO_PS,
                         .master = master, .examples = 6000, .batch = 32, .epochs = 1 };
}

/* The fit reads a trace's run (traceinfo_shares_cores) before it knows y; the prediction
 * asks with the fitted y. Each dedicated-master run on 2 cores, whatever y, gets one answer. */
Test(contention, a_dedicated_master_shares_the_cores_alike_in_fit_and_prediction) {
    const struct { int workers; bool shares; } cases[] = { { 1, false }, { 2, true }, { 3, true } };
    const double yields[] = { 0.0, 0.5, 1.0 };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        trace_run run = { .host_cores = 2, .model_bytes = 1000, .config = config(cases[i].workers, JOB_MASTER_DEDICATED) };
        trace *t = trace_new(&run);
        cr_assert_not_null(t);
        cr_assert_eq(traceinfo_shares_cores(&t->run), cases[i].shares, "K = %d", cases[i].workers);
        for (size_t j = 0; j < sizeof yields / sizeof yields[0]; j++) {
            costmodel_params p = { .host_cores = 2, .master_yield = yields[j] };
            cr_assert_eq(contention_shares_cores(&p, &run.config), cases[i].shares, "K = %d, y = %g",
                         cases[i].workers, yields[j]);
        }
        trace_free(t);
    }
}

/* ρ = max(1, (K·T + m)/P) by hand: 2 workers + a master that gives back y = 0.6 of its core
 * on 2 cores: (2 + 0.4)/2 = 1.2; one that gives all of it back: (2 + 0)/2 = 1, although its
 * process still shares (its run's spread is an oversubscribed run's). */
Test(contention, rho_counts_the_part_of_a_core_a_dedicated_master_keeps) {
    job_config c = config(2, JOB_MASTER_DEDICATED);
    costmodel_params p = { .host_cores = 2, .master_yield = 0.6, .run_cv = 0.01, .run_cv_oversub = 0.05 };
    cr_assert_float_eq(contention_rho(&p, &c), 1.2, 1e-12);
    p.master_yield = 1.0;
    cr_assert_float_eq(contention_rho(&p, &c), 1.0, 1e-12);
    cr_assert_float_eq(contention_slowdown_at(&p, &c, 1.0), 1.0, 1e-12);
    cr_assert_float_eq(contention_run_cv(&p, &c), 0.05, 1e-12);
}

/* Switched off, a job of 4 ranks on 2 cores pays nothing of it; a job of one rank per core
 * never did. */
Test(contention, switched_off_nothing_shares_and_nothing_is_paid) {
    job_config c = config(4, JOB_MASTER_DEDICATED);
    costmodel_params p = { .host_cores = 2, .oversub_compute = 0.3, .master_wake_s = 1e-3, .run_cv = 0.01,
                           .run_cv_oversub = 0.05, .model_cv = 0.02, .model_cv_oversub = 0.08, .startup_cpu_s = 1 };
    cr_assert(contention_shares_cores(&p, &c));
    cr_assert_float_eq(contention_rho(&p, &c), 2.5, 1e-12); /* (4 + 1)/2 */
    cr_assert_float_eq(contention_master_wake(&p, &c), 1e-3, 0);
    cr_assert_float_eq(contention_startup_time(&p, &c), 1.5, 1e-12); /* d·(ρ − 1) */
    p.contention_off = 1;
    cr_assert_not(contention_shares_cores(&p, &c));
    cr_assert_float_eq(contention_rho(&p, &c), 1.0, 0);
    cr_assert_float_eq(contention_slowdown_at(&p, &c, 1.0), 1.0, 0);
    cr_assert_float_eq(contention_master_wake(&p, &c), 0.0, 0);
    cr_assert_float_eq(contention_startup_time(&p, &c), 0.0, 0);
    cr_assert_float_eq(contention_run_cv(&p, &c), 0.01, 0);
    cr_assert_float_eq(contention_model_cv(&p, &c), 0.02, 0);
}

/* On a cluster of 2-core machines, 3 workers and a dedicated master fill 4 cores and share
 * none (machine 0: master + 1 worker, machine 1: 2 workers); a fourth worker spreads them 2
 * and 2, and machine 0 then holds 3 processes on 2 cores. */
Test(contention, on_a_cluster_ranks_share_only_past_the_machines_slots) {
    costmodel_params p = { .host_cores = 2, .machines = 2, .master_yield = 0.5 };
    job_config c = config(3, JOB_MASTER_DEDICATED);
    cr_assert_not(contention_shares_cores(&p, &c));
    cr_assert_float_eq(contention_rho(&p, &c), 1.0, 0);
    c.workers = 4;
    cr_assert(contention_shares_cores(&p, &c));
    cr_assert_float_eq(contention_rho(&p, &c), 1.25, 1e-12); /* (2 + 0.5)/2 */
}

/* A team of threads shares the cores only where there is a team (T > 1) and the host's
 * threads outnumber its cores: on 2 cores, 2 workers x 2 threads (4 threads) and 1 x 2
 * beside a dedicated master (3 processes) do; 1 x 2 alone (2 threads) does not, nor do 3 x 1
 * (no team: a rank of one thread waits for no sibling). On two machines of 4 cores, 2 x 2
 * and a master put 3 threads on machine 0: none shares. */
Test(contention, a_team_of_threads_shares_the_cores_only_where_threads_outnumber_them) {
    const struct { int workers, threads; job_master master; bool shares; } cases[] = {
        { 2, 2, JOB_MASTER_WORKER, true },     { 1, 2, JOB_MASTER_DEDICATED, true },
        { 1, 2, JOB_MASTER_WORKER, false },    { 3, 1, JOB_MASTER_WORKER, false },
        { 3, 1, JOB_MASTER_DEDICATED, false },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        job_config c = config(cases[i].workers, cases[i].master);
        c.cores = cases[i].threads;
        costmodel_params p = { .host_cores = 2, .master_yield = 0.9 };
        cr_expect_eq(contention_team_shares_cores(&p, &c), cases[i].shares, "%d x %d, master %d", cases[i].workers,
                     cases[i].threads, (int)cases[i].master);
    }
    costmodel_params cluster = { .host_cores = 4, .machines = 2 };
    job_config c = config(2, JOB_MASTER_DEDICATED);
    c.cores = 2;
    cr_expect_not(contention_team_shares_cores(&cluster, &c));
}

/* κ's share v of a round: a synchronous team of threads on shared cores pays none in a
 * round of any length (its threads are placed anew at every region's end); ranks of one
 * thread in the same epoch round pay min(1, τ_κ/L), here 1 (τ_κ = 1000 s); an async
 * worker pays it whole either way. */
Test(contention, a_synchronous_team_pays_no_kappa_in_long_rounds) {
    costmodel_params p = { .host_cores = 2, .c1_s = 1e-3, .kappa_fade_s = 1000, .balance_s = 0.1 };
    job_config c = config(4, JOB_MASTER_WORKER);
    c.sync = JOB_SYNC_EPOCH;
    c.topology = JOB_TOPO_ALLREDUCE;
    cr_expect_float_eq(contention_round_weight(&p, &c), 1.0, 1e-12, "4 x 1: ranks of one thread");
    c.workers = 2;
    c.cores = 2;
    cr_expect_float_eq(contention_round_weight(&p, &c), 0.0, 0, "2 x 2: a team");
    c.sync = JOB_SYNC_ASYNC;
    c.topology = JOB_TOPO_PS;
    c.master = JOB_MASTER_DEDICATED;
    cr_expect_float_eq(contention_round_weight(&p, &c), 1.0, 0, "2 x 2 async");
}

/* A team that fills the cores beside a dedicated master pays the master's part of a core
 * whole while it computes in parallel: 1 × 2 on 2 cores, σ = 0.1, y = 0.8 (m = 0.2): a
 * step on two threads is σ + (1 − σ)/2 = 0.55 of one, 0.45 of it in parallel (q = 9/11),
 * so 1/(1 − 0.2·9/11) = 55/46 = 1.195652…, where ρ says only (1/0.55 + 0.2)/2 = 1.00909.
 * Two ranks of one thread beside the same master pay ρ, (2 + 0.2)/2 = 1.1; the same team
 * on 4 cores has one to spare for the master and pays nothing. */
Test(contention, a_team_that_fills_the_cores_waits_whole_for_a_dedicated_masters_part) {
    costmodel_params p = { .host_cores = 2, .sigma = 0.1, .master_yield = 0.8, .waits_block = 1 };
    job_config c = config(1, JOB_MASTER_DEDICATED);
    c.cores = 2;
    cr_assert_float_eq(contention_rho(&p, &c), (1 / 0.55 + 0.2) / 2, 1e-12);
    cr_assert_float_eq(contention_slowdown_at(&p, &c, 1.0), 55.0 / 46.0, 1e-12);
    job_config ranks = config(2, JOB_MASTER_DEDICATED);
    cr_assert_float_eq(contention_slowdown_at(&p, &ranks, 1.0), 1.1, 1e-12);
    p.host_cores = 4;
    cr_assert_float_eq(contention_slowdown_at(&p, &c, 1.0), 1.0, 0);
}
