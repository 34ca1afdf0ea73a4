/* memory — the per-rank peak model against byte counts worked out by hand, the fit against
 * synthetic peaks whose coefficients are known (generated here by a second, independent
 * implementation of the model's sum), and sizes. */
#include "model/memory.h"
#include "fit/memory_fit.h"
#include "trace/trace.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double MIB = 1048576.0;

/* Fitted terms round, known terms small and distinct, so a wrong term shows. */
static memory_params hand_params(void) {
    return (memory_params){ .known = true, .base_bytes = 10 * MIB, .peer_bytes = 1 * MIB, .thread_bytes = 0.5 * MIB,
                            .allreduce_scratch = 1.0, .fwd_bytes_per_example = 100, .train_bytes_per_example = 50,
                            .workspace_bytes = 1000, .workspace_bytes_per_thread = 200, .example_bytes = 785,
                            .master_example_bytes = 785, .test_examples = 10000 };
}

static job_config config(int k, int t, job_topology topo, job_master master) {
    return (job_config){ .workers = k, .cores = t, .sync = JOB_SYNC_BATCH, .every_n = 1, .topology = topo,
                               .master = master, .examples = 1000, .batch = 32, .epochs = 1 };
}

Test(memory, allreduce_worker_adds_up_the_hand_derived_bytes) {
    /* K = 3 all-reduce, T = 2, M = 3000 bytes, D = 1000 (test set 10000: min(D, 10000) = 1000 held), B = 32:
     * fitted 10 MiB + 2·1 MiB (2 peers) + 0.5 MiB (1 more thread) + 1·3000·2/3 (the ring's two segments of M/3)
     *        = 12.5 MiB + 2000;
     * model  3 copies (weights, gradients, momentum) · 3000 = 9000;
     * acts   b = ⌈32/3⌉ = 11 examples · (100 + 50) + 1000 + 200·1 = 2850;
     * data   (1000 + 1000)·785 + 8·1000 = 1,578,000. */
    const memory_params m = hand_params();
    const job_config c = config(3, 2, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER);
    memory_breakdown b = memory_peak(&m, 3000, &c, JOB_ROLE_WORKER, 0);
    cr_assert_float_eq(b.fitted, 12.5 * MIB + 2000, 1e-6);
    cr_assert_float_eq(b.model, 9000, 1e-9);
    cr_assert_float_eq(b.activations, 2850, 1e-9);
    cr_assert_float_eq(b.data, 1578000, 1e-9);
    cr_assert_float_eq(b.trace, 0, 1e-12);
    cr_assert_float_eq(b.total, 12.5 * MIB + 2000 + 9000 + 2850 + 1578000, 1e-6);
}

Test(memory, dedicated_master_holds_four_models_and_only_the_forward_activations) {
    /* K = 2 ps, dedicated master (3 ranks), T = 1, M = 3000, b = 16:
     * fitted 10 MiB + 2 MiB (2 peers), no thread term, no all-reduce scratch;
     * model  4 · 3000 (weights, gradients it zeroes, momentum, the receive buffer);
     * acts   16 · 100 (it only evaluates) + 1000; data as every rank: 1,578,000. */
    const memory_params m = hand_params();
    const job_config c = config(2, 1, JOB_TOPO_PS, JOB_MASTER_DEDICATED);
    cr_assert_eq(job_ranks(&c), 3);
    cr_assert_eq(job_role_of(&c, 0), JOB_ROLE_MASTER);
    cr_assert_eq(job_role_of(&c, 2), JOB_ROLE_WORKER);
    memory_breakdown b = memory_peak(&m, 3000, &c, JOB_ROLE_MASTER, 0);
    cr_assert_float_eq(b.total, 12 * MIB + 12000 + 2600 + 1578000, 1e-6);
    /* A ps worker in batch sync never updates: weights and gradients only; it trains. */
    memory_breakdown w = memory_peak(&m, 3000, &c, JOB_ROLE_WORKER, 0);
    cr_assert_float_eq(w.total, 12 * MIB + 6000 + 16 * 150 + 1000 + 1578000, 1e-6);
}

Test(memory, roles_and_model_copies_follow_the_trainer) {
    job_config ps1 = config(1, 1, JOB_TOPO_PS, JOB_MASTER_WORKER);
    job_config ps2 = config(2, 1, JOB_TOPO_PS, JOB_MASTER_WORKER);
    job_config ar2 = config(2, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER);
    cr_assert_eq(job_role_of(&ps1, 0), JOB_ROLE_WORKER, "one rank alone is a worker: no exchange, no buffer");
    cr_assert_eq(memory_model_copies(&ps1, JOB_ROLE_WORKER), 3);
    cr_assert_eq(job_role_of(&ps2, 0), JOB_ROLE_MASTER_WORKER);
    cr_assert_eq(memory_model_copies(&ps2, JOB_ROLE_MASTER_WORKER), 4);
    cr_assert_eq(memory_model_copies(&ps2, JOB_ROLE_WORKER), 2);
    cr_assert_eq(job_role_of(&ar2, 0), JOB_ROLE_WORKER);
    cr_assert_eq(memory_model_copies(&ar2, JOB_ROLE_WORKER), 3);
    /* Local SGD: every worker updates its own momentum; a dedicated master only averages. */
    job_config ep = config(2, 1, JOB_TOPO_PS, JOB_MASTER_DEDICATED);
    ep.sync = JOB_SYNC_EPOCH;
    cr_assert_eq(memory_model_copies(&ep, JOB_ROLE_WORKER), 3);
    cr_assert_eq(memory_model_copies(&ep, JOB_ROLE_MASTER), 2);
    cr_assert_str_eq(job_role_name(JOB_ROLE_MASTER_WORKER), "master+worker");
}

Test(memory, trace_events_count_the_trainers_marks) {
    /* K = 2 all-reduce, batch sync, D = 10, B = 4: s = ⌈10/4⌉ = 3 steps per epoch, E = 2.
     * Every step: compute, wait, comm, update = 4; every epoch: eval (+ checkpoint); start-up 3.
     * 3 + 2·(3·4 + 1) = 29, with checkpoints 31. */
    job_config c = config(2, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER);
    c.examples = 10, c.batch = 4, c.epochs = 2;
    cr_assert_eq(memory_trace_events(&c, JOB_ROLE_WORKER, false), 29);
    cr_assert_eq(memory_trace_events(&c, JOB_ROLE_WORKER, true), 31);
    /* The ps master: compute, wait, pushes, update, pulls = 5 a step: 3 + 2·16 = 35. */
    c.topology = JOB_TOPO_PS;
    cr_assert_eq(memory_trace_events(&c, JOB_ROLE_MASTER_WORKER, false), 35);
    cr_assert_eq(memory_trace_events(&c, JOB_ROLE_WORKER, false), 3 + 2 * (3 * 3 + 1));
    /* Every:2 local SGD on all-reduce: each rank's shard of 5 examples is ⌈5/4⌉ = 2 steps of
     * compute + sgd, then ⌈2/2⌉ = 1 averaging of wait, comm, average: 3 + 2·(4 + 3 + 1) = 19. */
    c.topology = JOB_TOPO_ALLREDUCE;
    c.sync = JOB_SYNC_EVERY;
    c.every_n = 2;
    cr_assert_eq(memory_trace_events(&c, JOB_ROLE_WORKER, false), 19);
}

Test(memory, the_seed_master_collects_one_model_per_worker_and_holds_the_whole_data) {
    const memory_params m = memory_params_seed_example();
    job_config c = config(4, 1, JOB_TOPO_PS, JOB_MASTER_WORKER);
    c.examples = 6000;
    const double M = 1819688;
    memory_breakdown master = memory_peak(&m, M, &c, JOB_ROLE_MASTER_WORKER, 0);
    memory_breakdown worker = memory_peak(&m, M, &c, JOB_ROLE_WORKER, 0);
    cr_assert_float_eq(master.model, 4 * M + 4 * M, 1e-3, "its 4 blocks and the 4 workers' updates");
    /* Data: the master (6000 + 1000)·3·3176 + 8·6000; a worker its quarter at 3176. */
    cr_assert_float_eq(master.data, 7000.0 * 3 * 3176 + 48000, 1e-3);
    cr_assert_float_eq(worker.data, (7000.0 * 3176 + 48000) / 4, 1e-3);
    cr_assert_gt(master.total, worker.total + 768 * MIB);
}

Test(memory, sizes_parse_binary_and_decimal_units_and_refuse_the_rest) {
    double b;
    cr_assert_eq(memory_parse_size("4GiB", &b), 0);
    cr_assert_float_eq(b, 4294967296.0, 0);
    cr_assert_eq(memory_parse_size("512MiB", &b), 0);
    cr_assert_float_eq(b, 536870912.0, 0);
    cr_assert_eq(memory_parse_size("2G", &b), 0);
    cr_assert_float_eq(b, 2147483648.0, 0);
    cr_assert_eq(memory_parse_size("1.5GB", &b), 0);
    cr_assert_float_eq(b, 1.5e9, 0);
    cr_assert_eq(memory_parse_size("100", &b), 0);
    cr_assert_float_eq(b, 100, 0);
    const char *bad[] = { "", "GiB", "4Gb", "4 GiB", "-1G", "4XB", "nanG", "1e400" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(memory_parse_size(bad[i], &b), -1, "'%s' was accepted", bad[i]);
}

/* ---- the fit: synthetic traces whose peaks a second implementation of the sum made */

/* The truth of the synthetic host and network. */
static const double BASE = 17.5 * 1048576, PEER = 300000, THREAD = 400000, SCRATCH = 0.9;
static const long F = 191888, G = 125952, WK = 1646400, WT = 1854784, E = 785, M = 1819688;

/* One rank's peak as the trainer holds it, written out again here: copies of M by role and
 * sync, activations, workspaces, data, the rank's own recorded events (n·sizeof). */
static double truth_peak(const job_config *c, int rank, long events) {
    const bool dedicated = c->topology == JOB_TOPO_PS && c->master == JOB_MASTER_DEDICATED;
    const int ranks = c->workers + dedicated;
    const bool ps_master = c->topology == JOB_TOPO_PS && rank == 0 && ranks >= 2;
    const long b = c->sync == JOB_SYNC_BATCH ? (c->batch + c->workers - 1) / c->workers : c->batch;
    int copies = ps_master ? 4 : (c->topology == JOB_TOPO_PS && ranks >= 2) ? 2 : 3;
    double bytes = BASE + PEER * (ranks - 1) + copies * (double)M + WK;
    if (!(dedicated && rank == 0))
        bytes += THREAD * (c->cores - 1) + b * (double)(F + G) + WT * (c->cores - 1);
    else
        bytes += b * (double)F;
    if (c->topology == JOB_TOPO_ALLREDUCE && c->workers >= 2)
        bytes += SCRATCH * M * (c->workers == 2 ? 0.5 : 2.0 / c->workers);
    const long test = c->examples < 300 ? c->examples : 300;
    return bytes + (c->examples + test) * (double)E + 8.0 * c->examples + events * (double)sizeof(trace_event);
}

static trace *synthetic(int k, int t, job_topology topo, job_master master, long batch) {
    trace_run run = { .host_cores = 2, .model_bytes = M };
    run.config = (job_config){ .workers = k, .cores = t, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = topo, .master = master, .examples = 512, .batch = batch, .epochs = 1 };
    run.memory = (trace_memory){ .has = true, .fwd_bytes_per_example = F, .train_bytes_per_example = G,
                                 .workspace_bytes = WK, .workspace_bytes_per_thread = WT, .example_bytes = E,
                                 .test_examples = 300, .test_set_examples = 300 };
    trace *tr = trace_new(&run);
    const int ranks = k + (master == JOB_MASTER_DEDICATED);
    tr->run.memory.n_ranks = ranks;
    for (int r = 0; r < ranks; r++) {
        const long events = 10 + 7 * r; /* any count: the fit must take each rank's own */
        for (long i = 0; i < events; i++) {
            trace_event e = { .rank = r, .ph = TRACE_COMPUTE, .t0_s = (double)i, .t1_s = (double)i + 1 };
            cr_assert_eq(trace_add(tr, &e), 0);
        }
        /* getrusage's KiB: the rounding is the only noise. */
        tr->run.memory.peak_rss_kib[r] = lround(truth_peak(&run.config, r, events) / 1024.0);
    }
    return tr;
}

Test(memory, fit_recovers_known_coefficients_from_synthetic_peaks) {
    trace *tr[] = {
        synthetic(1, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 16),
        synthetic(1, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 64),
        synthetic(1, 2, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 32),
        synthetic(2, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 32),
        synthetic(3, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 48),
        synthetic(2, 1, JOB_TOPO_PS, JOB_MASTER_WORKER, 32),
        synthetic(2, 1, JOB_TOPO_PS, JOB_MASTER_DEDICATED, 32),
    };
    const int n = (int)(sizeof tr / sizeof tr[0]);
    memory_params m;
    char why[256];
    cr_assert_eq(memory_fit(tr, n, &m, why, sizeof why), 0, "%s", why);
    cr_assert_str_eq(why, "", "every term is fittable here");
    cr_assert(m.known);
    cr_assert_eq(m.points, 1 + 1 + 1 + 2 + 3 + 2 + 3);
    /* KiB rounding: ±512 bytes a point. */
    cr_assert(fabs(m.base_bytes - BASE) < 2048, "base %g, want %g", m.base_bytes, BASE);
    cr_assert(fabs(m.peer_bytes - PEER) < 2048, "peer %g, want %g", m.peer_bytes, PEER);
    cr_assert(fabs(m.thread_bytes - THREAD) < 2048, "thread %g, want %g", m.thread_bytes, THREAD);
    cr_assert(fabs(m.allreduce_scratch - SCRATCH) < 0.01, "scratch %g, want %g", m.allreduce_scratch, SCRATCH);
    cr_assert_lt(m.worst_rel_error, 1e-4);
    cr_assert_float_eq(m.test_examples, 300, 0);
    cr_assert_float_eq(m.fwd_bytes_per_example, F, 0);
    for (int i = 0; i < n; i++)
        trace_free(tr[i]);
}

Test(memory, fit_names_the_terms_no_run_varies_and_skips_traces_without_memory) {
    trace *tr[] = {
        synthetic(1, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 16),
        synthetic(1, 1, JOB_TOPO_ALLREDUCE, JOB_MASTER_WORKER, 64),
        synthetic(2, 1, JOB_TOPO_PS, JOB_MASTER_WORKER, 32),
        trace_new(NULL), /* a commbench's: no memory */
    };
    memory_params m;
    char why[256];
    cr_assert_eq(memory_fit(tr, 4, &m, why, sizeof why), 0, "%s", why);
    cr_assert_not_null(strstr(why, "thread not fitted (no run at T > 1)"), "%s", why);
    cr_assert_not_null(strstr(why, "allreduce_scratch not fitted"), "%s", why);
    cr_assert_float_eq(m.thread_bytes, 0, 0);
    cr_assert(fabs(m.base_bytes - BASE) < 2048, "base %g", m.base_bytes);
    memory_params none;
    none.known = false;
    cr_assert_eq(memory_fit(tr + 3, 1, &none, why, sizeof why), 1, "no memory anywhere: nothing fitted");
    cr_assert(!none.known);
    for (int i = 0; i < 4; i++)
        trace_free(tr[i]);
}
