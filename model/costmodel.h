/* costmodel — the closed-form runtime model of data-parallel training (DESIGN.md): how long
 * a job_config (core/job.h: K training workers × T cores, sync mode, topology, master,
 * workload D, B, E) takes with the parameters calibration measured (costmodel_params), and
 * where that time goes (costmodel_breakdown).
 *
 * One round = p local steps on every worker, a barrier, one synchronisation:
 *   step(K,T) = (c0 + c1·(σ + (1−σ)/T)·b)·ρ'     b = ⌈B/K⌉ (batch sync), else B
 *   upd(K,T)  = u·(σ + (1−σ)/T)·ρ'                one optimizer update a step, never in S(K)
 *   round     = p·(step + upd) + CV·step·√p·G(K) + X(K)    (G_ρ(K) where waits block)
 *   T(K,T)    = W(K) + E·(rounds per epoch)·round          W(K) = w0 + w1·K + l·D + (d + l·D)·(ρ − 1)
 *   speedup   = T(1,1) / T(K,T)                            (costmodel_baseline)
 *   ρ, ρ'  host contention, 1 where every rank has a core (model/contention.h owns them)
 *   X(K) = S(K), or max(ε·S, S − φ·step) for a batch-sync all-reduce that overlaps backward
 *        at ρ = 1, its step then (1 + χ) as long (costmodel_exposed_sync_time); at ρ > 1 a
 *        batch-sync all-reduce's X(K) is S(K) + Λ·(ρ − 1)
 * The last round of an epoch has s mod p steps and is charged as such. With c0 = u = W =
 * CV = 0, ρ = 1 and batch sync this is the seed's N·(C/K + S) per epoch.
 *
 * Placement (contention_placement_of): one host shares its P cores; on a cluster ranks fill
 * machine 0's slots first (Open MPI's default mapping), ρ is the busiest machine's, and a
 * message across machines costs α + latency and max(β, 1/rate) per byte. A dedicated master
 * whose machine's cores its workers take (contention_master_crowded) pays master_wake_s more
 * a message.
 *
 * Async and hogwild have no rounds (costmodel_async_of): a worker's epoch alone at the
 * master (s·τ_w) and the master's busy time in each direction give
 *   epoch = max(s·max_w τ_w, s·Σ_w I_w, s·Σ_w O_w, hogwild: s·K·u_1/T) + CV·step·√s·G(K)
 * exact for one worker, a bound for more (sim/job.h plays the queue); staleness
 * K·(N + 1)/2 − 1 on average.
 *
 * Why each term and what measured it: docs/model.md; async in full: docs/async.md.
 *
 * Pure functions on plain structs; nothing allocates, nothing prints. Call costmodel_check
 * first: every other function assumes a checked pair. The async terms iterate a fixed point
 * (at most 50 rounds); everything else is O(1).
 */
#ifndef SPEEDUP_COSTMODEL_H
#define SPEEDUP_COSTMODEL_H

#include <stdbool.h>

#include "core/job.h"

/* Cost of one message on a link: alpha + beta·bytes. */
typedef struct {
    double alpha_s;          /* latency per message */
    double beta_s_per_byte;  /* inverse bandwidth */
} costmodel_link;

/* What calibration measures. All non-negative. */
typedef struct {
    double c0_s;             /* fixed cost of one local step, one core */
    double c1_s;             /* cost per example of one local step, one core */
    double sigma;            /* serial fraction inside a worker, in [0,1] */
    costmodel_link link[JOB_TOPO_COUNT]; /* fitted per topology */
    double model_bytes;      /* M: bytes of the weights sent per synchronisation */
    double w0_s, w1_s;       /* start-up W(K) = w0 + w1·K */
    double cv;               /* coefficient of variation of one step's time */
    double rank_cv;          /* ς: spread (log-sd) of a rank's own speed against the others' in
                                one run, kept for the whole run (its core, its machine): a
                                round waits for the slowest rank's n steps, whose persistent
                                part does not average out as n grows; 0 = ranks alike */
    double host_cores;       /* P: physical cores available in all; 0 = unlimited */
    double update_s;         /* u: one optimizer update of the whole model, one core */
    double run_cv;           /* spread (log-normal σ) of a whole run's speed factor: run-to-run
                                noise of the host, one draw per run; 0 = none (interval only) */
    double run_cv_oversub;   /* run_cv of the runs whose ranks outnumber the cores (ρ > 1): where
                                the scheduler puts them, and when it moves them, differs from run
                                to run; 0 = run_cv (contention_run_cv) */
    double model_cv;         /* the model's own error on configurations it was not fitted on (the
                                log-sd of the validation's errors, run noise taken off): one draw
                                per prediction, with run_cv; 0 = none (interval only); where
                                model_cv_oversub is set, of the configurations whose ranks
                                each have a core */
    double model_cv_oversub; /* model_cv of the configurations whose ranks outnumber the cores
                                (ρ > 1): their misses stay out of every other interval; 0 =
                                model_cv (contention_model_cv) */
    /* When ranks outnumber cores (ρ > 1), what the compute-only ρ misses: */
    double startup_cpu_s;    /* d: CPU-bound part of one rank's start-up (loading the data),
                                slowed like compute: W gains d·(ρ − 1) */
    double startup_per_example_s; /* l: the data load's cost per example a rank loads (the
                                first D of the training file and min(D, test_examples) of
                                the test file: n(D)): the load is d + l·n(D), and W gains
                                l·n(D) + (d + l·n(D))·(ρ − 1); 0 = a load that does not grow */
    double test_examples;    /* the test file's size, from the run headers: a rank loads
                                min(D, it) test examples beside its D training ones; 0 = none
                                counted (n(D) = D) */
    double oversub_compute;  /* κ: what time-sharing a core costs beyond ρ in rounds of one
                                step, per unit of ρ − 1 (switches, caches refilled after another
                                rank's slice): steps and updates at ρ > 1 are slowed by
                                ρ_eff + v·κ·(ρ − 1), v fading over τ_κ (kappa_fade_s) */
    double oversub_wait_s;   /* Λ: what an all-reduce's round of one step waits beyond its
                                idle-host time where its ranks share the cores, a round
                                (model/contention.h); 0 = none (files before it) */
    double oversub_wait_share; /* λ: the part of that wait that grows with the step: the
                                round waits Λ + λ·step₁·(ρ − 1); 0 = none (files before it,
                                and plans whose shared one-step runs cannot tell it) */
    double balance_s;        /* τ: how long the scheduler takes to even the ranks out over the
                                cores within a round (costmodel_slowdown); 0 = at once */
    double kappa_fade_s;     /* τ_κ: the round over which κ fades, v = min(1, τ_κ/L) for a round
                                of L idle seconds (sharing's extra cost is paid per round, not per
                                step); 0 = κ fades with the packing, over τ (files before it) */
    double master_yield;     /* y in [0, 1]: the share of its core a dedicated master's polling
                                gives back to the workers (Open MPI yields when oversubscribed):
                                m = 1 − y in ρ; 0 = a whole core busy */
    double master_yield_loss;/* L in [0, 1]: how much of y a synchronous master that polls longer
                                than τ between exchanges gives up (the scheduler makes it up to a
                                task that yielded): m = 1 − y + (1 − w)·L, w the round's packing
                                weight (costmodel_slowdown), at most 1; 0 = y in every round */
    double master_wake_s;    /* how much longer a message to or from a dedicated parameter server
                                takes when the workers' threads fill its machine's cores
                                (contention_master_crowded): the master, napping between requests
                                or preempted in its send, has to win a core back from a worker
                                (docs/model.md); 0 = no longer than α + β·M */
    /* Where the ranks run (contention_placement_of): */
    int machines;            /* M: machines of host_cores cores each; 0 or 1 = one host */
    int contention_off;      /* what-if only (--no-contention), never calibrated: 1 = no rank
                                shares a core, ρ = ρ' = 1 (model/contention.h) */
    costmodel_link net;      /* the network between machines (M ≥ 2): latency, 1/rate */
    double overlap;          /* φ in [0, 1]: the share of a step during which its own
                                gradients' all-reduce may already run (batch sync); 0 =
                                compute, then communicate */
    double overlap_slowdown; /* χ ≥ 0: how much longer a step is while its all-reduce runs
                                beside it (the exchange's threads take the cores' time):
                                step·(1 + χ) where φ > 0 overlaps; 0 = as long as alone */
    double overlap_exposed;  /* ε in [0, 1]: the share of S(K) exposed however long the
                                window (the last bucket is ready only when backward ends):
                                X ≥ ε·S; 0 = all of it may hide */
    double waits_block;      /* 1: a rank that waits for the others blocks (sleeps on a
                                socket or a future: gloo, DDP's reducer), so a core it leaves
                                idle pulls a waiting rank over and the cores are shared evenly
                                (no packing: w = 0); 0: it busy-polls (Open MPI, the C
                                trainer) and the packing holds (contention_packing_weight),
                                but for async and hogwild, which nap at the epoch's barrier */
    /* Clusters nobody here built (a table of throughputs, GPUs as workers: fit/table.h): */
    double worker_device;    /* 1: a worker is a device (a GPU) with its own step time: one
                                worker per slot, host_cores slots a machine, T = 1, σ and ρ
                                do not apply; 0: T cores of a host */
    double allreduce_algorithm; /* costmodel_allreduce: how an all-reduce that spans machines
                                runs (ring, hierarchical, either when not known) */
    double ps_shards;        /* S ≥ 1: a parameter server of S shards, each machine's workers
                                aggregating first (costmodel_ps_phase_time); 0: one master,
                                rank 0, that takes every worker's message one at a time */
    double ps_separate;      /* 1: the shards run on machines of their own (BytePS); 0: on the
                                workers' machines (TensorFlow's parameter servers) */
    double ps_largest_bytes; /* L: the largest tensor, whole on one shard (TensorFlow places
                                whole variables): the busiest shard holds max(L, M/S) of the
                                model; 0: the bytes split evenly over the shards */
    double net_line_beta_s_per_byte; /* 1/rate of the fabric's line (its nominal rate): the
                                busiest machine's link moves no more a second, however much of
                                the exchange hides under the steps (costmodel_line_floor_time);
                                0: no floor (the effective rate net.beta alone) */
    /* The all-reduce's price by the memory the step before it moved (costmodel_allreduce_beta): */
    double beta_hot_allreduce_s_per_byte; /* β_hot: its price per byte after a step that moved
                                nothing (the commbench's calls back to back); 0 = one price,
                                beta_allreduce, whatever the step */
    double traffic_ref_bytes; /* M_ref: the bytes the steps moved on a rank where beta_allreduce
                                was measured (the plan's runs) */
    double traffic_bytes_per_example, traffic_bytes_per_step; /* the network's layers: a step
                                of b examples moves b·these + that on a rank (core/network.h) */
} costmodel_params;

/* How an all-reduce that spans machines runs (params.allreduce_algorithm):
 *   ring          one ring over every worker, 2(K−1) steps of M/K bytes, each paced by the
 *                 ring's slowest hop (a network hop where it spans machines): NCCL's ring;
 *   hierarchical  reduce-scatter inside each machine (G−1 steps of M/G over the machine's
 *                 own link), an all-reduce among the M machines (2(M−1) steps; the G rings
 *                 share the machine's network link, so a step moves M/M per link), then an
 *                 all-gather inside (G−1 steps): Horovod's hierarchical all-reduce, NCCL
 *                 across nodes of one link each;
 *   either        not known (a published table that does not say): half of each, so
 *                 S = (S_ring + S_hier)/2, and the interval spans the two (uncertainty.h). */
typedef enum { COSTMODEL_ALLREDUCE_RING, COSTMODEL_ALLREDUCE_HIERARCHICAL, COSTMODEL_ALLREDUCE_EITHER } costmodel_allreduce;
const char *costmodel_allreduce_name(costmodel_allreduce a);  /* "ring", "hierarchical", "either" */
int costmodel_allreduce_parse(const char *s, costmodel_allreduce *out);

/* One stage of an exchange: `steps` steps of step_s each, one after another. */
typedef struct {
    long steps;
    double step_s;
} costmodel_stage;
enum { COSTMODEL_MAX_STAGES = 6 };

/* Where the time of T(K,T) goes; the five add up to total_s. */
typedef struct {
    double total_s;
    double startup_s;        /* W(K) */
    double compute_s;        /* E·s·step */
    double update_s;         /* E·s·upd */
    double comm_s;           /* E·rounds·X(K): the exposed communication */
    double wait_s;           /* E·Σ CV·step·√p·G(K): waiting at barriers for the slowest */
} costmodel_breakdown;

/* Returns 0 when p and c are in range, else -1 with a one-line reason in err naming the
 * bad value. Every other function assumes a checked pair. */
int costmodel_check(const costmodel_params *p, const job_config *c, char *err, int errlen);

/* Does the config's exchange cross the network (a cluster, ranks on two machines or more)? */
bool costmodel_spans_machines(const costmodel_params *p, const job_config *c);

/* One message of the model's M bytes to or from the master: over shared memory, or across
 * the network when remote; contention_master_wake more. */
double costmodel_message_time(const costmodel_params *p, const job_config *c, bool remote);

/* The all-reduce's price per byte over the host's own link after a step of c's local batch
 * b: a step moves M = b·traffic_bytes_per_example + traffic_bytes_per_step on a rank, and
 * what it moved decides where the exchange finds the gradients and MPI's buffers (in cache
 * or not: experiments/networks/cold), so
 *   β(M) = β_hot + (β − β_hot)·min(1, M/M_ref),
 * β = beta_allreduce, measured after the plan's steps of M_ref. β itself where β_hot is 0
 * or not below β, M_ref is 0 or the network's traffic is not known. */
double costmodel_allreduce_beta(const costmodel_params *p, const job_config *c);

/* One of the 2(K−1) steps of a ring all-reduce (M/K bytes over the ring's slowest hop). */
double costmodel_ring_step_time(const costmodel_params *p, const job_config *c);

/* The all-reduce as the stages it runs (see costmodel_allreduce): one stage for a ring,
 * three for a hierarchical one that spans machines (inside, across, inside), the ring's
 * and the hierarchical's at half their time each for `either`. Returns the count. The
 * closed form sums them; the simulator plays them step by step. */
int costmodel_allreduce_stages(const costmodel_params *p, const job_config *c, costmodel_stage out[COSTMODEL_MAX_STAGES]);

/* A sharded parameter server (ps_shards ≥ 1) on M machines of G workers: each machine
 * first reduces its workers' gradients over its own link (G−1 steps of M/G), then one
 * copy per machine is pushed, each shard receiving its 1/S of it; after the update the
 * pulls mirror the pushes and each machine broadcasts the result inside (G−1 steps).
 * A phase (all pushes, or all pulls) waits for the busiest network link: colocated, a
 * machine holding s shards sends (S − s)/S·M and receives (M − 1)·s/S·M, one message per
 * shard and peer, so ⌈S/M⌉ shards on one machine pace it; separate, a worker machine
 * sends M in S messages and a server receives M·M/S in M messages. Each message costs
 * the crossing's latency, its bytes the crossing's per-byte cost (the busiest link takes
 * its messages one at a time). With a largest tensor L (ps_largest_bytes), whole on one
 * shard, that shard holds V = max(L, M/S) and the others (M − V)/(S − 1) each, so the
 * machine holding it receives (M − 1)·(its shards' bytes): the imbalance that paces a
 * large cluster whose shards outnumber the model's big tensors. One phase's time; the
 * intra-machine stages are in costmodel_ps_local_time. */
double costmodel_ps_phase_time(const costmodel_params *p, const job_config *c);
double costmodel_ps_local_time(const costmodel_params *p, const job_config *c);

/* The floor the fabric's line puts under a sharded parameter server's round: the bytes the
 * busiest machine's link takes in one direction over a round (its shards' pushes from the
 * other machines and its own pulls of the rest; separate: a server's pushes, or a worker
 * machine's pulls) at the line's nominal rate (net_line_beta). The pushes and pulls of
 * different tensors pipeline under the steps, so only what the line cannot move during
 * the round's steps is exposed: costmodel_line_floor_excess = max(0, floor − n·(step +
 * update)), and the round's exposed exchange is at least that. 0 without a line rate, for
 * all-reduce, async and on one machine. */
double costmodel_line_floor_time(const costmodel_params *p, const job_config *c);
double costmodel_line_floor_excess(const costmodel_params *p, const job_config *c);

/* (c0 + c1·(σ + (1−σ)/T)·b)·ρ': one local step of the config's slice b (the update
 * excluded), and of a slice of `examples` (a replayed step's own). */
double costmodel_step_time(const costmodel_params *p, const job_config *c);
double costmodel_step_time_at(const costmodel_params *p, const job_config *c, double examples);

/* u·(σ + (1−σ)/T)·ρ': one optimizer update, slowed as a step is (ρ', not ρ). */
double costmodel_update_time(const costmodel_params *p, const job_config *c);

/* Does a rank's own speed (ς) apply to c: K ≥ 2 ranks that each keep a core? Where they
 * share cores the scheduler moves them, and evens their speeds out. */
bool costmodel_rank_cv_applies(const costmodel_params *p, const job_config *c);
/* ς where it applies to c, else 0. */
double costmodel_rank_cv(const costmodel_params *p, const job_config *c);

/* S(K): one synchronisation of M bytes among K workers; S(1) = 0 unless the master is
 * dedicated (then even one worker pushes to and pulls from it). */
double costmodel_sync_time(const costmodel_params *p, const job_config *c);

/* Does the config synchronise at all (K ≥ 2, or a dedicated master)? */
bool costmodel_has_sync(const job_config *c);

/* ρ' of the header: how much slower a step and an update run than on an idle core of
 * the same host (contention_slowdown_at); 1 when ranks do not outnumber the cores. Async
 * and hogwild count each worker in ρ by the share of its cycle it computes, so theirs can
 * be 1 where contention_rho is not (docs/async.md). */
double costmodel_slowdown(const costmodel_params *p, const job_config *c);

/* What of a step `cores` threads take against one (Amdahl: σ + (1 − σ)/cores). */
double costmodel_amdahl(const costmodel_params *p, double cores);

/* step₁ of the header: one local step and its update on an idle core (ρ' = 1). */
double costmodel_idle_step_time(const costmodel_params *p, const job_config *c);

/* n(D), the examples one rank loads, by the calibration's test_examples:
 * job_loaded_examples (core/job.h). */
double costmodel_loaded_examples(const costmodel_params *p, const job_config *c);

/* One rank's data load at ρ = 1: d + l·n(D). */
double costmodel_data_load_time(const costmodel_params *p, const job_config *c);

/* W(K) = w0 + w1·K + l·n(D) + (d + l·n(D))·(ρ − 1). */
double costmodel_startup_time(const costmodel_params *p, const job_config *c);

/* Does φ apply to c: batch sync through an all-reduce (see the header comment)? */
bool costmodel_overlaps(const job_config *c);

/* Does c's exchange hide behind its steps: φ > 0, K ≥ 2, costmodel_overlaps, and no more
 * ranks than cores (ρ = 1; see the header)? */
bool costmodel_overlapped(const costmodel_params *p, const job_config *c);

/* X(K): what a round waits for of its synchronisation, max(ε·S(K), S(K) − φ·step) when
 * costmodel_overlapped, else S(K) (costmodel_sync_time, at least the line's floor) and
 * contention_exchange_time's Λ·(ρ − 1). */
double costmodel_exposed_sync_time(const costmodel_params *p, const job_config *c);

/* Async and hogwild: the terms of the header's closed form for c (sync async or hogwild). */
typedef struct {
    double worker_cycle_s;   /* max_w τ_w: a worker's step with its requests, alone at the
                                master (its epoch over s) */
    double master_s;         /* the master's busy seconds for one step of every worker, in
                                its busier direction (max(Σ_w I_w, Σ_w O_w); hogwild: or
                                K·u_1/T, its updaters') */
    double steps_per_s;      /* X: the bound on the workers' steps per second, all workers */
    bool master_bound;       /* the master's service rate sets X (not the workers' pace) */
    double epoch_s;          /* one epoch: s·max(τ, master_s) + the barrier's straggler wait */
    double staleness;        /* K·(N + 1)/2 − 1 (hogwild: K·(N + 1)/2, less 1 where a crowded
                                master's wake outlasts u_1): the mean (and median) staleness of
                                a gradient */
    double staleness_p90;    /* K·⌈0.9·N⌉ − 1 (hogwild: K·⌈0.9·N⌉, less 1 likewise): its 90th
                                percentile */
} costmodel_async;
costmodel_async costmodel_async_of(const costmodel_params *p, const job_config *c);

/* Time of one full round of p steps, straggler wait and X(K) (async: one epoch). */
double costmodel_round_time(const costmodel_params *p, const job_config *c);

costmodel_breakdown costmodel_breakdown_of(const costmodel_params *p, const job_config *c);
double costmodel_total_time(const costmodel_params *p, const job_config *c);

/* The same job on one worker with one core: T(1,1). */
job_config costmodel_baseline(const job_config *c);
double costmodel_speedup(const costmodel_params *p, const job_config *c);

/* The seed-like example: Fashion-MNIST cut to 10% (6000 images), batch 32, 5 epochs,
 * one core ≈ 8 h, a 1.8 MB CNN over a 1 Gbit/s network, Spark-like start-up. */
costmodel_params costmodel_params_seed_example(void);
job_config costmodel_config_seed_example(void);

#endif
