/* model/costmodel.c against the seed's formula and the model's own limits. */
#define _DEFAULT_SOURCE /* M_PI */
#include "model/costmodel.h"
#include "model/contention.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

static void assert_rel(double got, double want, double tol) {
    double rel = fabs(got - want) / fmax(fabs(want), 1e-300);
    cr_assert(rel <= tol, "got %.17g, want %.17g (relative error %.3g > %.3g)", got, want, rel, tol);
}

/* Batch sync, no fixed step cost, no start-up, no spread: the seed's setting. */
static costmodel_params seed_params(double c1, double alpha, double beta, double m) {
    costmodel_params p = { .c1_s = c1, .sigma = 0.0, .model_bytes = m };
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        p.link[t] = (costmodel_link){ alpha, beta };
    return p;
}

static job_config config(int k, job_sync sync, job_topology topo) {
    return (job_config){ .workers = k, .cores = 1, .sync = sync, .every_n = 1,
                               .topology = topo, .examples = 6000, .batch = 32, .epochs = 5 };
}

Test(costmodel, seed_formula_holds_for_batch_sync) {
    /* K divides B = 32, so every slice is B/K: the seed's C/K exactly. */
    costmodel_params p = seed_params(0.9, 0.01, 1e-8, 1.8e6);
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        for (int k = 1; k <= 32; k *= 2) {
            job_config c = config(k, JOB_SYNC_BATCH, (job_topology)t);
            double n = ceil(6000.0 / 32.0), cc = p.c1_s * 32.0, s = costmodel_sync_time(&p, &c);
            assert_rel(costmodel_total_time(&p, &c), 5.0 * n * (cc / k + s), 1e-12);
            assert_rel(costmodel_speedup(&p, &c), cc / (cc / k + s), 1e-12);
        }
}

Test(costmodel, batch_sync_waits_for_the_largest_slice) {
    /* B = 32 over K = 3: slices of 11, 11, 10 examples; the barrier waits for 11. With
     * c0 = 0.5 s and c1 = 0.1 s/example a step is 0.5 + 1.1 = 1.6 s (B/K would give
     * 0.5 + 1.0667). */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.c0_s = 0.5;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(job_schedule_of(&c).local_batch, 11.0);
    assert_rel(costmodel_step_time(&p, &c), 1.6, 1e-12);
}

Test(costmodel, more_workers_than_the_split_batch_is_refused) {
    costmodel_params p = costmodel_params_seed_example();
    job_config c = config(64, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE); /* B = 32 */
    char err[256] = "";
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "64 workers") && strstr(err, "got 32"), "%s", err);
    c.batch_per_worker = true; /* every worker its own 32: fine */
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0, "%s", err);
    c = config(32, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0, "%s", err);
}

Test(costmodel, dedicated_master_polls_a_core_of_its_own) {
    /* 2 workers + a dedicated master on 2 cores: 3 busy cores, ρ = 3/2 (measured -19 %
     * when the model said ρ = 1). */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    job_config c = config(2, JOB_SYNC_EPOCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    assert_rel(contention_rho(&p, &c), 1.5, 1e-12);
    assert_rel(costmodel_step_time(&p, &c), 0.1 * 32 * 1.5, 1e-12);
    c.master = JOB_MASTER_WORKER;
    assert_rel(contention_rho(&p, &c), 1.0, 1e-12);
}

Test(costmodel, update_runs_once_per_step_outside_comm) {
    /* u = 0.01 s, one core, batch sync, K = 2 all-reduce, D = 6000, B = 32, E = 5:
     * 5 · 188 steps · 0.01 s = 9.4 s of update, and S(K) does not change with u. */
    costmodel_params p = seed_params(0.1, 0.001, 1e-9, 1e6);
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    double s_before = costmodel_sync_time(&p, &c), t_before = costmodel_total_time(&p, &c);
    p.update_s = 0.01;
    costmodel_breakdown b = costmodel_breakdown_of(&p, &c);
    assert_rel(b.update_s, 9.4, 1e-12);
    assert_rel(costmodel_sync_time(&p, &c), s_before, 1e-12);
    assert_rel(b.total_s, t_before + 9.4, 1e-12);
}

Test(costmodel, oversubscription_slows_start_up_and_every_step) {
    /* 3 workers x 1 core on 2 cores: ρ = 1.5. d = 0.4 s adds 0.4·0.5 = 0.2 s to the
     * start-up 1 + 0.1·3 = 1.3 s. A round of one step (batch) waits for the core that holds
     * 2 of the 3 ranks, and κ = 0.2 adds 0.2·0.5: ρ' = 2 + 0.1 = 2.1, a step of ⌈32/3⌉ = 11
     * examples 0.1·11·2.1 = 2.31 s, the exchange untouched (S = 0 here). At 2 workers (ρ = 1)
     * neither is felt; one worker has no synchronisation at all. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.w0_s = 1.0;
    p.w1_s = 0.1;
    p.startup_cpu_s = 0.4;
    p.oversub_compute = 0.2;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_startup_time(&p, &c), 1.5, 1e-12);
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
    assert_rel(costmodel_step_time(&p, &c), 2.31, 1e-12);
    cr_assert_eq(costmodel_sync_time(&p, &c), 0.0);
    costmodel_breakdown b = costmodel_breakdown_of(&p, &c);
    assert_rel(b.compute_s, 5.0 * 188 * 2.31, 1e-12); /* 5 epochs x ceil(6000/32) steps */
    /* K = 4: ρ = 2, two ranks on every core, nothing to pack: 2 + 0.2·1, b = 8. */
    c.workers = 4;
    assert_rel(costmodel_step_time(&p, &c), 0.1 * 8 * 2.2, 1e-12);
    c.workers = 2;
    assert_rel(costmodel_startup_time(&p, &c), 1.2, 1e-12);
    assert_rel(costmodel_step_time(&p, &c), 0.1 * 16, 1e-12);
    c = config(1, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    c.cores = 4; /* ρ = 2, but nothing to synchronise */
    cr_assert_eq(costmodel_sync_time(&p, &c), 0.0);
    assert_rel(costmodel_startup_time(&p, &c), 1.1 + 0.4, 1e-12);
}

Test(costmodel, the_data_load_grows_with_the_examples_and_shares_the_cores) {
    /* d = 0.05 s, l = 10 µs an example, D = 6000: a load of 0.11 s. At ρ = 1 (2 workers on 2
     * cores) w0 holds d, so W = 1 + 0.1·2 + 0.06 = 1.26 s; at ρ = 1.5 (3 workers) the whole
     * load shares the cores too: 1 + 0.3 + 0.06 + 0.11·0.5 = 1.415 s. Twice the examples add
     * 0.06 s at ρ = 1 and 0.06·1.5 = 0.09 s at ρ = 1.5. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.w0_s = 1.0;
    p.w1_s = 0.1;
    p.startup_cpu_s = 0.05;
    p.startup_per_example_s = 1e-5;
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_data_load_time(&p, &c), 0.11, 1e-12);
    assert_rel(costmodel_startup_time(&p, &c), 1.26, 1e-12);
    c.workers = 3;
    assert_rel(costmodel_startup_time(&p, &c), 1.415, 1e-12);
    c.examples = 12000;
    assert_rel(costmodel_startup_time(&p, &c), 1.505, 1e-12);
    c.workers = 2;
    assert_rel(costmodel_startup_time(&p, &c), 1.32, 1e-12);
    char err[128];
    p.startup_per_example_s = -1e-6;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "startup_per_example must be a finite number >= 0") != NULL, "%s", err);
}

Test(costmodel, a_rank_loads_its_training_examples_and_the_test_set_up_to_as_many) {
    /* The trainer loads D training examples and min(D, 10000) test ones. l = 26.5 ms over
     * 4736 examples (D = 2368: 2368 + 2368), d = 0: at D = 60000 a rank loads 70000, so the
     * load is 26.5 ms x 70000 / 4736 = 391.68... ms; at D = 2368 it is 26.5 ms itself. With
     * no test set known (0) n(D) = D: 60000 x 26.5 / 4736 ms. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.startup_per_example_s = 0.0265 / 4736;
    p.test_examples = 10000;
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    c.examples = 2368;
    cr_assert_eq(costmodel_loaded_examples(&p, &c), 4736.0);
    assert_rel(costmodel_data_load_time(&p, &c), 0.0265, 1e-12);
    c.examples = 60000;
    cr_assert_eq(costmodel_loaded_examples(&p, &c), 70000.0);
    assert_rel(costmodel_data_load_time(&p, &c), 0.0265 * 70000 / 4736, 1e-12);
    p.test_examples = 0;
    cr_assert_eq(costmodel_loaded_examples(&p, &c), 60000.0);
    assert_rel(costmodel_data_load_time(&p, &c), 0.0265 * 60000 / 4736, 1e-12);
}

Test(costmodel, the_fixed_cost_of_a_step_is_slowed_like_the_rest) {
    /* c0 = 0.05 s, c1 = 0.1 s/example, B = 32. K = 4 on 2 cores: b = 8, ρ = 2 with two ranks
     * on each core, nothing to pack: the step's CPU work (0.05 + 0.8 s) takes twice as long,
     * 1.7 s (a c0 left out of the slowdown gave 0.05 + 1.6 = 1.65). K = 2, b = 16: 1.65 s. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.c0_s = 0.05;
    p.host_cores = 2;
    job_config c = config(4, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_step_time(&p, &c), 1.7, 1e-12);
    assert_rel(costmodel_step_time_at(&p, &c, 4), (0.05 + 0.4) * 2, 1e-12);
    c.workers = 2;
    assert_rel(costmodel_step_time(&p, &c), 1.65, 1e-12);
}

Test(costmodel, ranks_that_block_while_waiting_share_the_cores_evenly) {
    /* 3 workers on 2 cores, batch sync, b = ⌈32/3⌉ = 11, c1 = 0.1: ranks that busy-poll keep
     * their cores, so one core holds two and a round of one step waits for it, ρ' = 2, a step
     * of 2.2 s; ranks that block leave a core idle while they wait and the scheduler pulls
     * a rank over: ρ' = ρ = 1.5, 1.65 s. κ = 0.2 costs 0.2·0.5 either way: 2.31 and 1.76 s. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_step_time(&p, &c), 2.2, 1e-12);
    p.waits_block = 1;
    cr_assert_eq(contention_packing_weight(&p, &c), 0.0);
    assert_rel(costmodel_step_time(&p, &c), 1.65, 1e-12);
    p.oversub_compute = 0.2;
    assert_rel(costmodel_step_time(&p, &c), 1.76, 1e-12);
    p.waits_block = 0;
    assert_rel(costmodel_step_time(&p, &c), 2.31, 1e-12);
    char err[256];
    p.waits_block = 0.5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "waits_block") != NULL, "%s", err);
}

Test(costmodel, ranks_that_block_hand_their_cores_to_the_stragglers) {
    /* As above, blocking: a step of 1.65 s, CV = 0.1, D = 6000 of B = 32: 188 rounds of one
     * step, 5 epochs. Ranks that keep their cores wait CV·step·G(3) a round, G(3) =
     * 3/(2√π); ranks that share them, CV·step·G(3)/3 (model/gmax.h: h = 1, 2/3, 2/3). */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.cv = 0.1;
    p.waits_block = 1;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    const double rounds = 5.0 * 188, g3 = 1.5 / sqrt(M_PI);
    assert_rel(contention_shared_rho(&p, &c), 1.5, 1e-12);
    assert_rel(costmodel_breakdown_of(&p, &c).wait_s, rounds * 0.1 * 1.65 * g3 / 3, 1e-9);
    /* On 3 cores nothing is shared: G(3) again. */
    p.host_cores = 3;
    assert_rel(contention_shared_rho(&p, &c), 1.0, 1e-12);
    assert_rel(costmodel_breakdown_of(&p, &c).wait_s, rounds * 0.1 * 1.1 * g3, 1e-9);
    /* Polling ranks on 2 cores keep theirs: G(3) of the packed step, 2.2 s. */
    p.host_cores = 2;
    p.waits_block = 0;
    assert_rel(contention_shared_rho(&p, &c), 1.0, 1e-12);
    assert_rel(costmodel_breakdown_of(&p, &c).wait_s, rounds * 0.1 * 2.2 * g3, 1e-9);
}

/* c1 = 0.1 s/example on 2 cores, κ = 0.2, τ = 19.2 s: the rounds-and-κ tests below. */
static costmodel_params kappa_tau_params(void) {
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.oversub_compute = 0.2;
    p.balance_s = 19.2;
    return p;
}

Test(costmodel, longer_rounds_share_the_cores_as_the_scheduler_balances) {
    /* 3 workers on 2 cores, local batch 32: an idle step is 0.1·32 = 3.2 s. τ = 19.2 s:
     * every:4 (rounds of 4 steps) is packed w = v = 1 − 3·3.2/19.2 = 0.5 of the way, and
     * κ = 0.2 is felt as much: ρ' = 1.5 + 0.5·0.5 + 0.5·0.2·0.5 = 1.8; epoch sync (63 steps
     * a round) is past τ, shared evenly at no extra cost: 1.5. τ = 0 shares every round
     * longer than a step: every:4 at 1.5 too; a round of one step is packed, κ and all,
     * whatever τ: 2 + 0.1. A dedicated master's 2 workers on 2 cores leave no core with two
     * of them: ρ = 1.5 (y = 0), and a parameter server's one-step rounds pay no κ: ρ' = 1.5
     * in one-step rounds as in an epoch's. */
    costmodel_params p = kappa_tau_params();
    job_config c = config(3, JOB_SYNC_EVERY, JOB_TOPO_ALLREDUCE);
    c.every_n = 4;
    assert_rel(contention_round_weight(&p, &c), 0.5, 1e-12);
    assert_rel(costmodel_slowdown(&p, &c), 1.8, 1e-12);
    assert_rel(costmodel_step_time(&p, &c), 3.2 * 1.8, 1e-12);
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(costmodel_slowdown(&p, &c), 1.5, 1e-12);
    p.balance_s = 0;
    c.sync = JOB_SYNC_EVERY;
    assert_rel(costmodel_slowdown(&p, &c), 1.5, 1e-12);
    c.sync = JOB_SYNC_BATCH;
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
    c = config(2, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    assert_rel(costmodel_slowdown(&p, &c), 1.5, 1e-12);
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(costmodel_slowdown(&p, &c), 1.5, 1e-12);
}

Test(costmodel, a_parameter_servers_one_step_rounds_pay_the_packing_but_not_kappa) {
    /* 3 workers on 2 cores, κ = 0.2, τ = 19.2 s, idle step 3.2 s (as above). One-step
     * rounds stay packed either way (w = 1: two ranks on one core, ρ' ≥ 2); the ring's rank
     * that ends its part first starts its next step on a core its partner still needs, so
     * an all-reduce pays κ too: 2 + 0.2·0.5 = 2.1; a parameter server's pulls go one by
     * one and its packed ranks compute at 2×: 2.0. Rounds of four steps pay κ in both
     * (v = 0.5, w = 0.5: 1.5 + 0.25 + 0.05 = 1.8). */
    costmodel_params p = kappa_tau_params();
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
    c.topology = JOB_TOPO_PS;
    cr_assert_eq(contention_round_weight(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 2.0, 1e-12);
    c.sync = JOB_SYNC_EVERY;
    c.every_n = 4;
    assert_rel(costmodel_slowdown(&p, &c), 1.8, 1e-12);
}

Test(costmodel, an_all_reduces_one_step_rounds_on_shared_cores_pay_lambda_an_exchange_not_kappa) {
    /* As above (κ = 0.2, τ = 19.2 s, 2 cores), α = 10 ms a ring step, with Λ = 0.5 s: a
     * one-step all-reduce round computes at the packing's 2 (no κ) and its exchange takes
     * 2(K − 1)·α + Λ: 3 workers (ρ = 1.5) 0.04 + 0.5 = 0.54 s, 4 (ρ = 2) 0.06 + 0.5 = 0.56
     * s, every one of the ⌈6000/32⌉ = 188 rounds of 5 epochs. A parameter server's
     * one-step rounds and rounds of four steps pay no Λ (2.0 and 1.8, as above); 2 workers
     * on 2 cores share nothing. Λ = 0 (a file before it): κ, 2.1, as above. */
    costmodel_params p = kappa_tau_params();
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        p.link[t].alpha_s = 0.01;
    p.oversub_wait_s = 0.5;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(contention_round_weight(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 2.0, 1e-12);
    assert_rel(contention_exchange_time(&p, &c), 0.5, 1e-12);
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.54, 1e-12);
    assert_rel(costmodel_breakdown_of(&p, &c).comm_s, 5 * 188 * 0.54, 1e-12);
    /* λ = 0.1 of the idle step on top, 11 examples (⌈32/3⌉) at 0.1 s, per unit of ρ − 1:
     * 0.5 + 0.1·1.1·0.5 = 0.555 s; alone, 0.055 s */
    p.oversub_wait_share = 0.1;
    assert_rel(contention_exchange_time(&p, &c), 0.555, 1e-12);
    p.oversub_wait_s = 0;
    assert_rel(contention_exchange_time(&p, &c), 0.055, 1e-12);
    cr_assert_eq(contention_round_weight(&p, &c), 0.0);
    p.oversub_wait_s = 0.5;
    p.oversub_wait_share = 0;
    c.workers = 4;
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.56, 1e-12);
    c.workers = 2;
    cr_assert_eq(contention_exchange_time(&p, &c), 0.0);
    c = config(3, JOB_SYNC_BATCH, JOB_TOPO_PS);
    cr_assert_eq(contention_exchange_time(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 2.0, 1e-12);
    c = config(3, JOB_SYNC_EVERY, JOB_TOPO_ALLREDUCE);
    c.every_n = 4;
    cr_assert_eq(contention_exchange_time(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 1.8, 1e-12);
    p.oversub_wait_s = 0;
    c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.04, 1e-12);
}

Test(costmodel, kappa_fades_over_its_own_round_once_the_packing_has_gone) {
    /* As above (idle step 3.2 s, τ = 19.2 s, κ = 0.2, 3 workers on 2 cores) with τ_κ =
     * 96 s: κ is paid once a round, spread as min(1, 96/L) over a round of L idle seconds.
     * every:4: L = 3·3.2 = 9.6 s, v = 1 while the packing is still w = 0.5: ρ' = 1.5 +
     * 0.5·0.5 + 1·0.2·0.5 = 1.85. epoch (63 steps): L = 62·3.2 = 198.4 s, past τ (w = 0),
     * v = 96/198.4: ρ' = 1.5 + 0.2·0.5·96/198.4 = 1.548387…; every:16 (L = 48 s): v = 1,
     * ρ' = 1.6. A round of one step is unchanged: 2 + 0.1. */
    costmodel_params p = kappa_tau_params();
    p.kappa_fade_s = 96;
    job_config c = config(3, JOB_SYNC_EVERY, JOB_TOPO_ALLREDUCE);
    c.every_n = 4;
    cr_assert_eq(contention_round_weight(&p, &c), 1.0);
    assert_rel(contention_packing_weight(&p, &c), 0.5, 1e-12);
    assert_rel(costmodel_slowdown(&p, &c), 1.85, 1e-12);
    c.every_n = 16;
    assert_rel(costmodel_slowdown(&p, &c), 1.6, 1e-12);
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(contention_round_weight(&p, &c), 96.0 / 198.4, 1e-12);
    assert_rel(costmodel_slowdown(&p, &c), 1.5 + 0.1 * 96.0 / 198.4, 1e-12);
    c.sync = JOB_SYNC_BATCH;
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
}

Test(costmodel, ranks_that_block_still_pay_kappa_in_short_rounds_only) {
    /* 3 blocking workers on 2 cores (gloo): never packed (w = 0), but a one-step round
     * still pays κ = 0.2 in full, ρ' = 1.5 + 0.2·0.5 = 1.6, and every:4 half of it at
     * τ = 19.2 s (v = 0.5 as above): 1.55. */
    costmodel_params p = kappa_tau_params();
    p.waits_block = 1;
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_slowdown(&p, &c), 1.6, 1e-12);
    c.sync = JOB_SYNC_EVERY;
    c.every_n = 4;
    cr_assert_eq(contention_packing_weight(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 1.55, 1e-12);
}

Test(costmodel, async_workers_pay_kappa_at_every_step_and_never_stay_packed) {
    /* 3 async workers and a server that gives its whole core back (y = 1) on 2 cores: ρ =
     * 1.5. Each worker waits on the server after every step, so κ = 0.2 is paid as in a
     * round of one step (v = 1), while the first worker done naps at the epoch's barrier
     * and leaves its core to the other two (w = 0): ρ' = 1.5 + 0.2·0.5 = 1.6. The same with
     * τ = 1000 s, where a synchronous round as long as the epoch (⌈6000/(3·32)⌉ = 63 steps
     * of 3.2 s) would stay 1 − 62·3.2/1000 = 0.80 packed. */
    costmodel_params p = kappa_tau_params();
    p.master_yield = 1.0;
    job_config c = config(3, JOB_SYNC_ASYNC, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    c.every_n = 1;
    cr_assert_eq(contention_packing_weight(&p, &c), 0.0);
    cr_assert_eq(contention_round_weight(&p, &c), 1.0);
    assert_rel(costmodel_slowdown(&p, &c), 1.6, 1e-12);
    p.balance_s = 1000;
    cr_assert_eq(contention_packing_weight(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 1.6, 1e-12);
    c.sync = JOB_SYNC_HOGWILD;
    cr_assert_eq(contention_packing_weight(&p, &c), 0.0);
    assert_rel(costmodel_slowdown(&p, &c), 1.6, 1e-12);
}

Test(costmodel, a_dedicated_master_polling_past_tau_takes_more_of_its_core) {
    /* 2 workers and a dedicated master on 2 cores, y = 0.5 of its core given back in
     * one-step rounds, L = 0.3 of it given up past τ: batch sync m = 0.5, ρ = 1.25; every:4
     * (w = 1 − 3·3.2/19.2 = 0.5 with an idle step of 0.1·32 = 3.2 s) m = 0.5 + 0.5·0.3 =
     * 0.65, ρ = 1.325; epoch sync (past τ) m = 0.8, ρ = 1.4. An async server works rather
     * than polls: its m stays 0.5 in every mode. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.master_yield = 0.5;
    p.master_yield_loss = 0.3;
    p.balance_s = 19.2;
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    assert_rel(contention_rho(&p, &c), 1.25, 1e-12);
    c.sync = JOB_SYNC_EVERY;
    c.every_n = 4;
    assert_rel(contention_rho(&p, &c), 1.325, 1e-12);
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(contention_rho(&p, &c), 1.4, 1e-12);
    assert_rel(costmodel_step_time(&p, &c), 3.2 * 1.4, 1e-12);
    c.sync = JOB_SYNC_ASYNC;
    c.every_n = 1;
    assert_rel(contention_rho(&p, &c), 1.25, 1e-12);
}

Test(costmodel, a_dedicated_master_napping_past_tau_takes_less_of_its_core_and_never_below_none) {
    /* As above with L = -0.3 (more of its core given back past τ): every:4 m = 0.5 −
     * 0.5·0.3 = 0.35, ρ = 1.175; epoch sync m = 0.2, ρ = 1.1. L = -0.8: the epoch's m =
     * 0.5 − 0.8 would be below nothing, so 0 and ρ = 1. Below −1 or above 1, L is named out of
     * its range. */
    costmodel_params p = seed_params(0.1, 0, 0, 0);
    p.host_cores = 2;
    p.master_yield = 0.5;
    p.master_yield_loss = -0.3;
    p.balance_s = 19.2;
    job_config c = config(2, JOB_SYNC_EVERY, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    c.every_n = 4;
    char err[128] = "";
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0, "%s", err);
    assert_rel(contention_rho(&p, &c), 1.175, 1e-12);
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(contention_rho(&p, &c), 1.1, 1e-12);
    p.master_yield_loss = -0.8;
    cr_assert_eq(contention_master_cores(&p, &c), 0.0);
    assert_rel(contention_rho(&p, &c), 1.0, 1e-12);
    p.master_yield_loss = -1.5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "master_yield_loss must be in [-1, 1] (got -1.5)") != NULL, "%s", err);
    p.master_yield_loss = 1.5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "master_yield_loss must be in [-1, 1] (got 1.5)") != NULL, "%s", err);
}

Test(costmodel, one_worker_one_core_has_speedup_one) {
    costmodel_params p = costmodel_params_seed_example();
    job_sync modes[] = { JOB_SYNC_BATCH, JOB_SYNC_EPOCH, JOB_SYNC_EVERY };
    for (int m = 0; m < 3; m++)
        for (int t = 0; t < JOB_TOPO_COUNT; t++) {
            job_config c = config(1, modes[m], (job_topology)t);
            c.every_n = 4;
            cr_assert_eq(costmodel_sync_time(&p, &c), 0.0);
            cr_assert_eq(costmodel_speedup(&p, &c), 1.0);
        }
}

Test(costmodel, speedup_is_k_without_communication) {
    costmodel_params p = seed_params(0.5, 0.0, 0.0, 1.8e6);
    for (int k = 1; k <= 1024; k *= 2) {
        /* 32768 examples split evenly: every worker count divides the work exactly. */
        job_config c = config(k, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
        c.examples = 32768;
        c.batch = 1024;
        cr_assert_eq(costmodel_speedup(&p, &c), (double)k, "K = %d: speedup %.17g", k, costmodel_speedup(&p, &c));
    }
}

Test(costmodel, speedup_falls_as_latency_or_model_bytes_grow) {
    for (int t = 0; t < JOB_TOPO_COUNT; t++) {
        job_config c = config(8, JOB_SYNC_BATCH, (job_topology)t);
        double last = INFINITY;
        for (double alpha = 1e-4; alpha < 1; alpha *= 4) {
            costmodel_params p = seed_params(0.01, alpha, 1e-9, 1e6);
            double s = costmodel_speedup(&p, &c);
            cr_assert_lt(s, last, "alpha %g: speedup %g did not fall below %g", alpha, s, last);
            last = s;
        }
        last = INFINITY;
        for (double m = 1e3; m < 1e9; m *= 8) {
            costmodel_params p = seed_params(0.01, 1e-4, 1e-9, m);
            double s = costmodel_speedup(&p, &c);
            cr_assert_lt(s, last, "M %g: speedup %g did not fall below %g", m, s, last);
            last = s;
        }
    }
}

Test(costmodel, epoch_sync_beats_batch_sync_when_communication_costs) {
    costmodel_params p = costmodel_params_seed_example();
    for (int t = 0; t < JOB_TOPO_COUNT; t++)
        for (int k = 2; k <= 64; k *= 2) {
            job_config batch = config(k, JOB_SYNC_BATCH, (job_topology)t);
            job_config epoch = config(k, JOB_SYNC_EPOCH, (job_topology)t);
            cr_assert_gt(costmodel_sync_time(&p, &batch), 0.0);
            cr_assert_gt(costmodel_speedup(&p, &epoch), costmodel_speedup(&p, &batch), "K = %d", k);
        }
}

Test(costmodel, sync_time_grows_with_workers) {
    costmodel_params p = seed_params(0.1, 1e-3, 1e-8, 1e6);
    for (int t = 0; t < JOB_TOPO_COUNT; t++) {
        double last = 0.0;
        for (int k = 2; k <= 256; k *= 2) {
            job_config c = config(k, JOB_SYNC_BATCH, (job_topology)t);
            double s = costmodel_sync_time(&p, &c);
            cr_assert_gt(s, last);
            last = s;
        }
    }
}

Test(costmodel, ring_allreduce_matches_its_formula) {
    costmodel_params p = seed_params(0.1, 2e-3, 4e-9, 2e6);
    job_config c = config(5, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_sync_time(&p, &c), 2 * 4 * 2e-3 + 2.0 * 4.0 / 5.0 * 4e-9 * 2e6, 1e-15);
}

/* The all-reduce's price by what its step moved (costmodel_allreduce_beta), by hand: β = 4
 * ns/B measured after steps of M_ref = 20 MB, β_hot = 1 ns/B; a step of b examples moves
 * b·1 MB + 4 MB. At B = 32 over 2 ranks (b = 16: 20 MB) the price is β; at B = 16 (b = 8:
 * 12 MB) 1 + 3·12/20 = 2.8 ns/B, so S = 2·(2 ms + 2.8e-9·2e6/2); at B = 64 (36 MB) β
 * again. A parameter server's messages keep their own price; a β_hot not below β, or no
 * traffic known, is one price. */
Test(costmodel, an_all_reduce_after_a_smaller_step_costs_less_a_byte_by_hand) {
    costmodel_params p = seed_params(0.1, 2e-3, 4e-9, 2e6);
    p.beta_hot_allreduce_s_per_byte = 1e-9;
    p.traffic_ref_bytes = 20e6;
    p.traffic_bytes_per_example = 1e6;
    p.traffic_bytes_per_step = 4e6;
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_allreduce_beta(&p, &c), 4e-9, 1e-15);
    assert_rel(costmodel_sync_time(&p, &c), 2 * (2e-3 + 4e-9 * 1e6), 1e-15);
    c.batch = 16;
    assert_rel(costmodel_allreduce_beta(&p, &c), 2.8e-9, 1e-15);
    assert_rel(costmodel_sync_time(&p, &c), 2 * (2e-3 + 2.8e-9 * 1e6), 1e-15);
    c.batch = 64;
    assert_rel(costmodel_allreduce_beta(&p, &c), 4e-9, 1e-15);
    job_config ps = config(2, JOB_SYNC_BATCH, JOB_TOPO_PS);
    ps.batch = 16;
    assert_rel(costmodel_sync_time(&p, &ps), 2 * (2e-3 + 4e-9 * 2e6), 1e-15);
    c.batch = 16;
    p.beta_hot_allreduce_s_per_byte = 5e-9;
    assert_rel(costmodel_allreduce_beta(&p, &c), 4e-9, 1e-15);
    p.beta_hot_allreduce_s_per_byte = 1e-9;
    p.traffic_bytes_per_example = p.traffic_bytes_per_step = 0;
    assert_rel(costmodel_allreduce_beta(&p, &c), 4e-9, 1e-15);
}

Test(costmodel, parameter_server_serialises_every_worker) {
    costmodel_params p = seed_params(0.1, 2e-3, 4e-9, 2e6);
    job_config c = config(5, JOB_SYNC_BATCH, JOB_TOPO_PS);
    double msg = 2e-3 + 4e-9 * 2e6;
    assert_rel(costmodel_sync_time(&p, &c), 2 * 4 * msg, 1e-15);
    c.master = JOB_MASTER_DEDICATED;
    assert_rel(costmodel_sync_time(&p, &c), 2 * 5 * msg, 1e-15);
}

Test(costmodel, breakdown_adds_up_to_total) {
    costmodel_params p = costmodel_params_seed_example();
    p.c0_s = 0.2;
    p.host_cores = 8;
    job_sync modes[] = { JOB_SYNC_BATCH, JOB_SYNC_EPOCH, JOB_SYNC_EVERY };
    for (int m = 0; m < 3; m++)
        for (int k = 1; k <= 16; k *= 2) {
            job_config c = config(k, modes[m], JOB_TOPO_PS);
            c.cores = 2;
            c.every_n = 7;
            costmodel_breakdown b = costmodel_breakdown_of(&p, &c);
            assert_rel(b.startup_s + b.compute_s + b.comm_s + b.wait_s, b.total_s, 1e-14);
            assert_rel(b.startup_s, p.w0_s + p.w1_s * k, 1e-15);
        }
}

Test(costmodel, every_n_charges_a_short_last_round_its_own_steps) {
    costmodel_params p = seed_params(0.01, 0.0, 0.0, 0.0);
    p.cv = 0.2;
    /* 100 examples, batch 10, one worker: s = 10 steps; every:4 gives rounds of 4, 4, 2. */
    job_config c = { .workers = 3, .cores = 1, .sync = JOB_SYNC_EVERY, .every_n = 4,
                           .topology = JOB_TOPO_ALLREDUCE, .examples = 300, .batch = 10, .epochs = 1 };
    job_schedule s = job_schedule_of(&c);
    cr_assert_eq(s.steps_per_epoch, 10);
    cr_assert_eq(s.rounds_per_epoch, 3);
    double step = costmodel_step_time(&p, &c);
    double g3 = costmodel_breakdown_of(&p, &c).wait_s / (p.cv * step * (2 * sqrt(4.0) + sqrt(2.0)));
    /* G(3) = 3/(2√π) exactly. */
    assert_rel(g3, 3.0 / (2.0 * sqrt(M_PI)), 1e-9);
}

/* A rank's own speed (ς) does not average out over a round: by hand, 2 workers on 2 cores,
 * 100 examples each in steps of 10 (local SGD does not split the batch: step = 0.01·10 =
 * 0.1 s), every:4 (rounds of 4, 4, 2 steps), CV = 0.1, ς = 0.05, G(2) = 1/√π. A round of p
 * steps waits √(p·CV² + p²·ς²)·step·G(2): p = 4: √(0.04 + 0.04) = 0.2828427; p = 2:
 * √(0.02 + 0.01) = 0.1732051; the epoch 2·0.2828427 + 0.1732051 = 0.7388905 steps of 0.1 s
 * over √π.
 * Without ς: 0.1·(2·2 + √2) = 0.5414214. With 3 workers on the 2 cores, ς does not
 * apply: the scheduler evens the ranks out. */
Test(costmodel, a_ranks_own_speed_is_waited_for_in_every_round_where_it_keeps_a_core) {
    costmodel_params p = seed_params(0.01, 0.0, 0.0, 0.0);
    p.cv = 0.1;
    p.rank_cv = 0.05;
    p.host_cores = 2;
    job_config c = { .workers = 2, .cores = 1, .sync = JOB_SYNC_EVERY, .every_n = 4,
                           .topology = JOB_TOPO_ALLREDUCE, .examples = 200, .batch = 10, .epochs = 1 };
    cr_assert_eq(job_schedule_of(&c).steps_per_epoch, 10);
    assert_rel(costmodel_step_time(&p, &c), 0.1, 1e-12);
    assert_rel(costmodel_rank_cv(&p, &c), 0.05, 0);
    assert_rel(costmodel_breakdown_of(&p, &c).wait_s, 0.7388905 * 0.1 / sqrt(M_PI), 1e-6);
    p.rank_cv = 0;
    assert_rel(costmodel_breakdown_of(&p, &c).wait_s, 0.5414214 * 0.1 / sqrt(M_PI), 1e-6);
    p.rank_cv = 0.05;
    c.workers = 3;
    cr_assert_eq(costmodel_rank_cv(&p, &c), 0.0);
    c.workers = 1;
    cr_assert_eq(costmodel_rank_cv(&p, &c), 0.0, "one rank waits for nobody");
}

Test(costmodel, cores_scale_by_amdahl_and_oversubscription_slows) {
    costmodel_params p = seed_params(1.0, 0.0, 0.0, 0.0);
    p.sigma = 0.25;
    job_config c = config(1, JOB_SYNC_EPOCH, JOB_TOPO_PS);
    c.cores = 4;
    assert_rel(costmodel_step_time(&p, &c), 32.0 * (0.25 + 0.75 / 4), 1e-15);
    p.host_cores = 2; /* 4 threads asked of 2 cores: Amdahl's on the 2 it has (8 s serial, 24 core-s on 2) */
    assert_rel(costmodel_step_time(&p, &c), 8.0 + 24.0 / 2, 1e-15);
}

/* Two workers of 2 threads on 2 cores, their threads waiting passively (the launcher's
 * OMP_WAIT_POLICY): while one team runs its serial part on one core, the other team's
 * threads take the other, so the host does the two steps' 2 x 32 core-seconds in 32 s, not
 * the 2 x 20 s that two teams each slowed by rho = 4 threads / 2 cores would take. */
Test(costmodel, two_teams_on_shared_cores_share_the_work_not_the_threads) {
    costmodel_params p = seed_params(1.0, 0.0, 0.0, 0.0);
    p.sigma = 0.25;
    p.host_cores = 2;
    job_config c = config(2, JOB_SYNC_EPOCH, JOB_TOPO_PS);
    c.cores = 2; /* epoch sync: each worker's step is its own 32 examples, 32 core-seconds */
    assert_rel(costmodel_step_time(&p, &c), 2.0 * 32.0 / 2.0, 1e-12);
}

Test(costmodel, check_rejects_out_of_range_values) {
    costmodel_params p = costmodel_params_seed_example();
    job_config c = costmodel_config_seed_example();
    char err[256];
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0);
    c.workers = 0;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "workers") != NULL, "%s", err);
    c = costmodel_config_seed_example();
    p.c1_s = -1;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "c1") != NULL, "%s", err);
    p = costmodel_params_seed_example();
    p.link[JOB_TOPO_PS].alpha_s = NAN;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "alpha") != NULL, "%s", err);
}

Test(costmodel, check_rejects_sync_topology_and_master_values_outside_their_enums) {
    // A config read from a file or a checkpoint could hold any int: each is named.
    const costmodel_params p = costmodel_params_seed_example();
    char err[256];
    job_config c = costmodel_config_seed_example();
    c.sync = (job_sync)7;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown sync mode (got 7)") != NULL, "%s", err);
    c = costmodel_config_seed_example();
    c.topology = (job_topology)5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown topology (got 5)") != NULL, "%s", err);
    c = costmodel_config_seed_example();
    c.master = (job_master)2;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown master (got 2)") != NULL, "%s", err);
}

Test(costmodel, sync_names_round_trip) {
    const char *names[] = { "batch", "epoch", "every:8", "async", "hogwild", "async:4", "hogwild:2" };
    for (int i = 0; i < 7; i++) {
        job_sync s;
        int n;
        char buf[24];
        cr_assert_eq(job_sync_parse(names[i], &s, &n), 0);
        job_sync_format(s, n, buf, sizeof buf);
        cr_assert_str_eq(buf, names[i]);
    }
    const char *bad[] = { "every:0", "every:", "every:x", "every:3x", "Batch", "", "async:0", "async:", "asyncx",
                          "hogwild:-1" };
    for (int i = 0; i < 10; i++) {
        job_sync s;
        int n;
        cr_assert_eq(job_sync_parse(bad[i], &s, &n), -1, "'%s' accepted", bad[i]);
    }
}

Test(costmodel, sync_names_give_the_pull_period) {
    job_sync s;
    int n = 0;
    cr_assert_eq(job_sync_parse("async", &s, &n), 0);
    cr_assert_eq(s, JOB_SYNC_ASYNC);
    cr_assert_eq(n, 1, "async pulls every step");
    cr_assert_eq(job_sync_parse("hogwild:6", &s, &n), 0);
    cr_assert_eq(s, JOB_SYNC_HOGWILD);
    cr_assert_eq(n, 6);
    char buf[24];
    job_sync_format(JOB_SYNC_ASYNC, 1, buf, sizeof buf);
    cr_assert_str_eq(buf, "async", "a pull period of 1 is not written");
}

Test(costmodel, async_needs_a_dedicated_parameter_server) {
    const costmodel_params p = costmodel_params_seed_example();
    char err[256];
    job_config c = costmodel_config_seed_example();
    c.sync = JOB_SYNC_ASYNC;
    c.every_n = 1;
    c.master = JOB_MASTER_WORKER;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "async sync runs through a parameter server on a dedicated master") != NULL, "%s", err);
    c.master = JOB_MASTER_DEDICATED;
    c.topology = JOB_TOPO_ALLREDUCE;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    c.topology = JOB_TOPO_PS;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0, "%s", err);
    c.every_n = 0;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "pull period") != NULL, "%s", err);
}

/* ---------------------------------------------------------------------------------- */
/* Placement on a cluster */

static costmodel_params cluster_params(int machines, double cores_per_machine) {
    costmodel_params p = seed_params(0.1, 1e-5, 1e-10, 1e6);
    p.machines = machines;
    p.host_cores = cores_per_machine;
    p.net = (costmodel_link){ .alpha_s = 5e-5, .beta_s_per_byte = 8e-9 }; /* 50 µs, 1 Gbit/s */
    return p;
}

Test(costmodel, cluster_fills_the_masters_machine_first) {
    /* 4 machines of 2 cores, K = 6 of one core: machines 0, 1, 2 hold 2 each, ρ = 1. */
    costmodel_params p = cluster_params(4, 2);
    job_config c = config(6, JOB_SYNC_BATCH, JOB_TOPO_PS);
    contention_placement pl = contention_placement_of(&p, &c);
    cr_assert_eq(pl.machines_used, 3);
    cr_assert_eq(pl.workers_on_master, 2);
    cr_assert_eq(pl.workers_busiest, 2);
    cr_assert_eq(pl.rho, 1.0);
    /* The master (rank 0, training) serves worker 1 by shared memory, 1e-5 + 1e-10·1e6 =
     * 1.1e-4 s a message, and workers 2..5 over the network, (1e-5 + 5e-5) + 8e-9·1e6 =
     * 8.06e-3 s: S = 2·(1.1e-4 + 4·8.06e-3) = 0.0647. */
    assert_rel(costmodel_sync_time(&p, &c), 0.0647, 1e-12);
}

Test(costmodel, dedicated_master_takes_a_slot_of_machine_zero) {
    /* 4 machines of 2 cores, a dedicated master and K = 3: machine 0 holds the master and
     * worker 0, machine 1 workers 1 and 2. One local message pair, two remote:
     * S = 2·(1.1e-4 + 2·8.06e-3) = 0.03246. */
    costmodel_params p = cluster_params(4, 2);
    job_config c = config(3, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    contention_placement pl = contention_placement_of(&p, &c);
    cr_assert_eq(pl.machines_used, 2);
    cr_assert_eq(pl.workers_on_master, 1);
    assert_rel(costmodel_sync_time(&p, &c), 0.03246, 1e-12);
}

/* A dedicated master whose workers take every core of its machine pays master_wake a
 * message; one with a core to spare, or a master that trains, does not. Messages of
 * 1e-5 + 1e-10·1e6 = 1.1e-4 s by shared memory, wake 4e-4 s. */
Test(costmodel, a_master_crowded_by_its_workers_pays_its_wake_on_every_message) {
    costmodel_params p = cluster_params(0, 2);
    p.master_wake_s = 4e-4;
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    /* One host, 2 workers of one core on 2 cores: crowded, S = 2·2·(1.1e-4 + 4e-4) = 2.04e-3. */
    cr_assert(contention_master_crowded(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 2.04e-3, 1e-12);
    /* One worker leaves a core to the master: S = 2·1.1e-4. */
    c.workers = 1;
    cr_assert(!contention_master_crowded(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 2.2e-4, 1e-12);
    /* A master that trains is not napping for requests: K = 2, one other worker, 2·1.1e-4. */
    c.workers = 2;
    c.master = JOB_MASTER_WORKER;
    cr_assert(!contention_master_crowded(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 2.2e-4, 1e-12);
    /* 2 machines of 2 cores: K = 3 dedicated fit the slots (machine 0: the master and one
     * worker), not crowded: S = 2·(1.1e-4 + 2·((1e-5 + 5e-5) + 8e-9·1e6)) = 0.03246. K = 5
     * outnumber the slots and are spread, 3 of them on machine 0: crowded, every message
     * 4e-4 more: S = 2·(3·5.1e-4 + 2·8.46e-3) = 0.03690. */
    p = cluster_params(2, 2);
    p.master_wake_s = 4e-4;
    c = config(3, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.master = JOB_MASTER_DEDICATED;
    cr_assert(!contention_master_crowded(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 0.03246, 1e-12);
    c.workers = 5;
    cr_assert(contention_master_crowded(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 0.0369, 1e-12);
}

Test(costmodel, ring_that_spans_machines_is_paced_by_the_network) {
    costmodel_params p = cluster_params(2, 2);
    /* K = 2 fits machine 0: shared memory, 2·1·(1e-5 + 1e-10·1e6/2) = 1.2e-4. */
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_ALLREDUCE);
    cr_assert(!costmodel_spans_machines(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 1.2e-4, 1e-12);
    /* K = 4 spans both: 2·3 steps of (1e-5 + 5e-5) + 8e-9·1e6/4 = 2.06e-3: 0.01236. */
    c.workers = 4;
    cr_assert(costmodel_spans_machines(&p, &c));
    assert_rel(costmodel_sync_time(&p, &c), 0.01236, 1e-12);
}

Test(costmodel, cluster_with_more_workers_than_slots_spreads_them_evenly) {
    /* 2 machines of 2 cores, K = 6 of one core: 3 on each, ρ = 3/2 on both. */
    costmodel_params p = cluster_params(2, 2);
    job_config c = config(6, JOB_SYNC_EPOCH, JOB_TOPO_ALLREDUCE);
    contention_placement pl = contention_placement_of(&p, &c);
    cr_assert_eq(pl.machines_used, 2);
    cr_assert_eq(pl.workers_busiest, 3);
    cr_assert_eq(pl.rho, 1.5);
}

Test(costmodel, one_host_shares_its_cores_among_all_ranks) {
    /* machines = 0 (the calibration's host): ρ = K·T/P as before, nothing crosses a network. */
    costmodel_params p = cluster_params(0, 2);
    job_config c = config(6, JOB_SYNC_EPOCH, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(contention_rho(&p, &c), 3.0);
    cr_assert(!costmodel_spans_machines(&p, &c));
}

Test(costmodel, worker_larger_than_a_machine_is_refused) {
    costmodel_params p = cluster_params(4, 2);
    job_config c = config(2, JOB_SYNC_BATCH, JOB_TOPO_PS);
    c.cores = 4;
    char err[256] = "";
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "4 cores") && strstr(err, "machine of 2"), "%s", err);
}

Test(costmodel, overlap_hides_a_batch_all_reduce_behind_its_own_step) {
    /* c0 = 0.01 s, c1 = 0.001 s/example, B = 40 over K = 4: b = 10, step = 0.02 s. Ring of
     * M = 1e6 bytes, α = 1 ms, β = 1e-8 s/byte: S(4) = 2·3·(0.001 + 1e-8·1e6/4) = 0.021 s.
     * φ = 0.5 hides 0.01 s of it: X = 0.011 s; φ = 1: 0.001 s; φ = 0.25: 0.016 s. D = 400:
     * 10 steps, T = 10·(0.02 + 0.011) = 0.31 s, comm 0.11 s. */
    costmodel_params p = seed_params(0.001, 1e-3, 1e-8, 1e6);
    p.c0_s = 0.01;
    job_config c = { .workers = 4, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                           .topology = JOB_TOPO_ALLREDUCE, .examples = 400, .batch = 40, .epochs = 1 };
    assert_rel(costmodel_sync_time(&p, &c), 0.021, 1e-12);
    const double phi[] = { 0.5, 1.0, 0.25 }, exposed[] = { 0.011, 0.001, 0.016 };
    for (int i = 0; i < 3; i++) {
        p.overlap = phi[i];
        assert_rel(costmodel_exposed_sync_time(&p, &c), exposed[i], 1e-12);
        assert_rel(costmodel_sync_time(&p, &c), 0.021, 1e-12); /* the exchange itself is as long */
    }
    p.overlap = 0.5;
    costmodel_breakdown b = costmodel_breakdown_of(&p, &c);
    assert_rel(b.total_s, 0.31, 1e-12);
    assert_rel(b.comm_s, 0.11, 1e-12);
    /* A smaller model, 1e5 bytes: S = 6·(0.001 + 2.5e-4) = 0.0075 s < the 0.01 s window. */
    p.model_bytes = 1e5;
    cr_assert_eq(costmodel_exposed_sync_time(&p, &c), 0.0);
    /* Nothing to hide behind: a parameter server (its update sits between push and pull),
     * local SGD (weights after the round). */
    p.model_bytes = 1e6;
    c.topology = JOB_TOPO_PS;
    assert_rel(costmodel_exposed_sync_time(&p, &c), costmodel_sync_time(&p, &c), 0);
    c.topology = JOB_TOPO_ALLREDUCE;
    c.sync = JOB_SYNC_EPOCH;
    assert_rel(costmodel_exposed_sync_time(&p, &c), costmodel_sync_time(&p, &c), 0);
    char err[128];
    p.overlap = 1.5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "overlap must be in [0, 1]") != NULL, "%s", err);
}

Test(costmodel, an_overlapped_step_is_slowed_by_its_exchange_and_a_share_of_it_stays_exposed) {
    /* As above: step alone 0.02 s (b = 10), S(4) = 0.021 s, D = 400: 10 steps. χ = 0.5:
     * the step beside its all-reduce is 0.03 s. φ = 0.5 would hide 0.015 s of S, leaving
     * 0.006 s; ε = 0.4 keeps 0.0084 s exposed whatever the window: X = 0.0084 s, and
     * T = 10·(0.03 + 0.0084) = 0.384 s. ε = 0.2 (0.0042 s) is below what the window
     * leaves: X = 0.006 s. */
    costmodel_params p = seed_params(0.001, 1e-3, 1e-8, 1e6);
    p.c0_s = 0.01;
    p.overlap = 0.5;
    p.overlap_slowdown = 0.5;
    p.overlap_exposed = 0.4;
    job_config c = { .workers = 4, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                           .topology = JOB_TOPO_ALLREDUCE, .examples = 400, .batch = 40, .epochs = 1 };
    assert_rel(costmodel_step_time(&p, &c), 0.03, 1e-12);
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.0084, 1e-12);
    assert_rel(costmodel_breakdown_of(&p, &c).total_s, 0.384, 1e-12);
    p.overlap_exposed = 0.2;
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.006, 1e-12);
    /* Nothing beside the step: one worker (0.01 + 0.001·40 = 0.05 s), a parameter server,
     * local SGD, or no overlap at all (φ = 0: compute, then the whole S). */
    job_config one = c;
    one.workers = 1;
    assert_rel(costmodel_step_time(&p, &one), 0.05, 1e-12);
    job_config ps = c, epoch = c;
    ps.topology = JOB_TOPO_PS;
    epoch.sync = JOB_SYNC_EPOCH;
    assert_rel(costmodel_step_time(&p, &ps), 0.02, 1e-12);
    assert_rel(costmodel_step_time(&p, &epoch), 0.05, 1e-12); /* local SGD: b = B = 40 */
    /* Four ranks on 2 cores (ρ = 2, waits that block: no packing): the exchange's threads
     * find no core until the steps end, so nothing hides. The step is 0.02·2·1.5 = 0.06 s
     * (χ still: the other ranks run beside it) and all of S = 0.021 s is waited for:
     * T = 10·0.081 = 0.81 s. */
    costmodel_params busy = p;
    busy.host_cores = 2;
    busy.waits_block = 1;
    cr_assert(!costmodel_overlapped(&busy, &c));
    assert_rel(costmodel_step_time(&busy, &c), 0.06, 1e-12);
    assert_rel(costmodel_exposed_sync_time(&busy, &c), 0.021, 1e-12);
    assert_rel(costmodel_breakdown_of(&busy, &c).total_s, 0.81, 1e-12);
    busy.host_cores = 4; /* one core a rank: it overlaps again */
    cr_assert(costmodel_overlapped(&busy, &c));
    assert_rel(costmodel_exposed_sync_time(&busy, &c), 0.006, 1e-12);
    p.overlap = 0;
    assert_rel(costmodel_step_time(&p, &c), 0.02, 1e-12);
    assert_rel(costmodel_exposed_sync_time(&p, &c), 0.021, 1e-12);
    char err[128];
    p.overlap_exposed = 1.5;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "overlap_exposed must be in [0, 1]") != NULL, "%s", err);
    p.overlap_exposed = 0;
    p.overlap_slowdown = -0.1;
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "overlap_slowdown must be a finite number >= 0") != NULL, "%s", err);
}

/* ---------------------------------------------------------------------------------- */
/* Async and hogwild: the throughput bound */

/* Steps of 1 s (c0 = 1), messages of 0.1 s (α; no bandwidth term), an update of 0.05 s, on
 * one host with cores to spare; D = 32·10·K examples of B = 32: s = 10 steps a worker. */
static job_config async_config(int k, job_sync sync, int n) {
    return (job_config){ .workers = k, .cores = 1, .sync = sync, .every_n = n, .topology = JOB_TOPO_PS,
                               .master = JOB_MASTER_DEDICATED, .examples = 32L * 10 * k,
                               .batch = 32, .epochs = 1 };
}

static costmodel_params async_params(void) {
    costmodel_params p = { .c0_s = 1.0, .update_s = 0.05 };
    p.link[JOB_TOPO_PS] = (costmodel_link){ .alpha_s = 0.1 };
    return p;
}

Test(costmodel, async_bound_is_the_workers_pace_or_the_masters_service_rate_by_hand) {
    const costmodel_params p = async_params();
    /* K = 4, N = 1, s = 10 steps, P = 10 pulls: a worker alone takes
     * 10·(1 + 0.1) + 10·(0.1 + 0.05) = 12.5 s an epoch, τ = 1.25 s a step; the master takes
     * its pushes in for 10·(0.1 + 0.05) = 1.5 s of each worker's epoch and sends its pulls
     * out for 10·0.1 = 1 s, at the same time: max(4·1.5, 4·1)/10 = 0.6 s per step of all
     * four. The workers set the pace, X = 4/1.25 = 3.2 steps a second, an epoch 12.5 s. */
    job_config c = async_config(4, JOB_SYNC_ASYNC, 1);
    costmodel_async a = costmodel_async_of(&p, &c);
    cr_assert_float_eq(a.worker_cycle_s, 1.25, 1e-12);
    cr_assert_float_eq(a.master_s, 0.6, 1e-12);
    cr_assert(!a.master_bound);
    cr_assert_float_eq(a.steps_per_s, 3.2, 1e-12);
    cr_assert_float_eq(a.epoch_s, 12.5, 1e-12);
    cr_assert_float_eq(costmodel_total_time(&p, &c), 12.5, 1e-12);
    cr_assert_float_eq(a.staleness, 3.0, 1e-12, "K - 1 pulling every step");
    cr_assert_float_eq(a.staleness_p90, 3.0, 1e-12);
    /* K = 10 on the same shards' length: the pushes in, 10·0.15 = 1.5 s per step of all
     * ten, exceed τ = 1.25: X = 10/1.5 steps a second, the master's rate; an epoch 15 s.
     * (K = 8 would still be the workers' pace: 1.2 s; a master that took one request at a
     * time, pushes and pulls, would bind from K = 5: 5·0.25.) */
    c = async_config(10, JOB_SYNC_ASYNC, 1);
    a = costmodel_async_of(&p, &c);
    cr_assert(a.master_bound);
    cr_assert_float_eq(a.master_s, 1.5, 1e-12);
    cr_assert_float_eq(a.steps_per_s, 10 / 1.5, 1e-12);
    cr_assert_float_eq(a.epoch_s, 15.0, 1e-12);
    cr_assert_float_eq(a.staleness, 9.0, 1e-12);
    c.workers = 8;
    c.examples = 32L * 10 * 8;
    cr_assert(!costmodel_async_of(&p, &c).master_bound);
    c = async_config(10, JOB_SYNC_ASYNC, 1);
    const costmodel_breakdown b = costmodel_breakdown_of(&p, &c);
    /* compute 10 s; comm (10 + 10)·0.1 = 2 s; the rest is waiting for the master */
    cr_assert_float_eq(b.compute_s, 10.0, 1e-12);
    cr_assert_float_eq(b.comm_s, 2.0, 1e-12);
    cr_assert_float_eq(b.wait_s, 3.0, 1e-12);
    cr_assert_float_eq(b.update_s, 0.0, 1e-12);
}

Test(costmodel, async_pulling_every_n_steps_by_hand) {
    const costmodel_params p = async_params();
    /* K = 4, N = 3, s = 10: pulls at steps 0, 3, 6, 9: P = 4. Alone: 10·1.1 + 4·0.15 =
     * 11.6 s; the master's pushes in 10·0.15 = 1.5 s a worker, its pulls out 4·0.1 = 0.4 s:
     * 4·1.5/10 per step of all. Staleness K·(N + 1)/2 − 1 = 7, its 90th percentile
     * K·⌈2.7⌉ − 1 = 11. */
    job_config c = async_config(4, JOB_SYNC_ASYNC, 3);
    const costmodel_async a = costmodel_async_of(&p, &c);
    cr_assert_float_eq(a.epoch_s, 11.6, 1e-12);
    cr_assert_float_eq(a.master_s, 4 * 1.5 / 10, 1e-12);
    cr_assert_float_eq(a.staleness, 7.0, 1e-12);
    cr_assert_float_eq(a.staleness_p90, 11.0, 1e-12);
}

Test(costmodel, hogwild_pulls_without_waiting_and_its_updaters_can_bind_by_hand) {
    costmodel_params p = async_params();
    /* K = 4, N = 1, s = 10, T = 1: alone 10·1.1 + 10·0.1 + 0.05 (the last update) = 12.05 s;
     * the master 10·0.1 = 1 s a worker each way (4/10 per step of all); the updater
     * 4·0.05 = 0.2. Staleness K = 4: the push before a pull lands after it. */
    job_config c = async_config(4, JOB_SYNC_HOGWILD, 1);
    costmodel_async a = costmodel_async_of(&p, &c);
    cr_assert_float_eq(a.epoch_s, 12.05, 1e-12);
    cr_assert_float_eq(a.master_s, 0.4, 1e-12);
    cr_assert_float_eq(a.staleness, 4.0, 1e-12);
    /* An update of 1 s on one updater: 4 gradients a step of all need 4 s: the updater
     * binds (40 s an epoch); two updaters halve it. */
    p.update_s = 1.0;
    a = costmodel_async_of(&p, &c);
    cr_assert(a.master_bound);
    cr_assert_float_eq(a.epoch_s, 40.0, 1e-12);
    c.cores = 2;
    a = costmodel_async_of(&p, &c);
    cr_assert_float_eq(a.master_s, 2.0, 1e-12);
}

/* async_params on a host of `cores` cores, with a master that gives its whole core back
 * (y = 1): ρ counts the workers alone. */
static costmodel_params async_params_on(double cores) {
    costmodel_params p = async_params();
    p.host_cores = cores;
    p.master_yield = 1;
    return p;
}

/* A crowded master wins its core back before it reads the weights: where its wake
 * outlasts one update, hogwild's own push is in the next pull, staleness K − 1 as async.
 * K = 2 workers on 2 cores (a master that gives its core back, y = 1: ρ = 1), u = 0.05 s,
 * N = 1: wake 0.1 s, staleness 1; wake 0.01 s, the update still runs: 2; the same K on
 * 4 cores, no wake at all: 2. */
Test(costmodel, a_crowded_masters_wake_lets_hogwilds_own_update_into_the_next_pull) {
    costmodel_params p = async_params_on(2);
    p.master_wake_s = 0.1;
    job_config c = async_config(2, JOB_SYNC_HOGWILD, 1);
    cr_assert_float_eq(costmodel_async_of(&p, &c).staleness, 1.0, 1e-12);
    p.master_wake_s = 0.01;
    cr_assert_float_eq(costmodel_async_of(&p, &c).staleness, 2.0, 1e-12);
    /* A wake as long as the update: the update ends first (the simulator runs it first, as
     * it was scheduled first). */
    p.master_wake_s = 0.05;
    cr_assert_float_eq(costmodel_async_of(&p, &c).staleness, 1.0, 1e-12);
    p.master_wake_s = 0.1;
    p.host_cores = 4;
    cr_assert_float_eq(costmodel_async_of(&p, &c).staleness, 2.0, 1e-12);
}

/* An async worker that waits for the master leaves its core to the others: ρ counts the
 * workers by the share of their cycle they compute. 3 workers of one core on 2, a master
 * that gives its core back (y = 1), steps of c0 = 1 s on an idle core, κ = 0, τ = 0 (no
 * packing), messages of 0.1 s, no update, a pull every step: the cycle is step + 0.2 s
 * and the share d = step/(step + 0.2), step = ρ = 3d/2: 3d/2 + 0.2 = 3/2, d = 13/15 and
 * ρ' = 1.3, where counting every worker whole gives 1.5. The threads' ρ stays 1.5. */
Test(costmodel, async_workers_waiting_for_the_master_leave_their_cores_to_the_others) {
    costmodel_params p = async_params_on(2);
    p.update_s = 0;
    job_config c = async_config(3, JOB_SYNC_HOGWILD, 1);
    assert_rel(costmodel_slowdown(&p, &c), 1.3, 1e-9);
    assert_rel(costmodel_step_time(&p, &c), 1.3, 1e-9);
    assert_rel(contention_rho(&p, &c), 1.5, 1e-12);
    /* Async waits for its update before a pull: u = 0.2 s on one core (u_T = 0.2·ρ'),
     * a pull every N = 2 of its 10 steps: waits 0.1 + (0.1 + 0.2·ρ)/2 = 0.15 + 0.1·ρ a
     * step, d = ρ/(1.1·ρ + 0.15) with ρ = 3d/2: 1.65·d + 0.15 = 1.5, d = 9/11, ρ' = 27/22. */
    p.update_s = 0.2;
    c = async_config(3, JOB_SYNC_ASYNC, 2);
    assert_rel(costmodel_slowdown(&p, &c), 27.0 / 22.0, 1e-9);
    /* Synchronous workers wait at barriers polling: counted whole (epoch sync: no packing). */
    c.sync = JOB_SYNC_EPOCH;
    c.master = JOB_MASTER_WORKER;
    assert_rel(costmodel_slowdown(&p, &c), 1.5, 1e-12);
}

/* Nothing re-places an async job's ranks within an epoch: where the workers fill the
 * master's cores alike, the master's part of a core (m = 1 − y = 0.1) sits beside some of
 * them all epoch, and the barrier waits for those. 2 cores, steps of 1 s, messages and
 * updates free (each worker computes all the time, d = 1), κ = 0: K = 2, ρ = (2 + 0.1)/2
 * = 1.05 but the master's core holds 1 + 0.1: 1.1; K = 4, 2 + 0.1 = 2.1 against ρ = 2.05;
 * K = 3 fills the cores unevenly and the master takes the core with one: ρ = 1.55; K = 1
 * leaves it a core: 1. Ranks that block move: ρ, 1.05 at K = 2. */
Test(costmodel, an_async_master_slows_the_workers_that_share_its_core) {
    costmodel_params p = async_params_on(2);
    p.master_yield = 0.9;
    p.update_s = 0;
    p.link[JOB_TOPO_PS].alpha_s = 0;
    job_config c = async_config(2, JOB_SYNC_HOGWILD, 1);
    assert_rel(costmodel_slowdown(&p, &c), 1.1, 1e-12);
    c = async_config(4, JOB_SYNC_HOGWILD, 1);
    assert_rel(costmodel_slowdown(&p, &c), 2.1, 1e-12);
    c = async_config(3, JOB_SYNC_ASYNC, 1);
    assert_rel(costmodel_slowdown(&p, &c), 1.55, 1e-12);
    c = async_config(1, JOB_SYNC_ASYNC, 1);
    assert_rel(costmodel_slowdown(&p, &c), 1.0, 1e-12);
    c = async_config(2, JOB_SYNC_HOGWILD, 1);
    p.waits_block = 1;
    assert_rel(costmodel_slowdown(&p, &c), 1.05, 1e-12);
    /* A worker that waits 0.2 s a cycle on messages of 0.1 s computes d = ρ'/(ρ' + 0.2) of
     * it: d + 0.1 = ρ' has its root at 0.92 < 1, so the master fits in the waits: 1. */
    p.waits_block = 0;
    p.link[JOB_TOPO_PS].alpha_s = 0.1;
    assert_rel(costmodel_slowdown(&p, &c), 1.0, 1e-12);
}

Test(costmodel, async_speedup_is_against_plain_training_on_one_core) {
    const costmodel_params p = async_params();
    job_config c = async_config(4, JOB_SYNC_ASYNC, 1);
    const job_config one = costmodel_baseline(&c);
    cr_assert_eq(one.workers, 1);
    cr_assert_eq(one.master, JOB_MASTER_WORKER);
    cr_assert(!job_sync_is_async(one.sync), "the baseline has no server");
    /* One worker, 40 steps of 1 s, each followed by its update of 0.05 s: 42 s. */
    cr_assert_float_eq(costmodel_total_time(&p, &one), 40 * 1.05, 1e-12);
    cr_assert_float_eq(costmodel_speedup(&p, &c), 42.0 / 12.5, 1e-12);
}
