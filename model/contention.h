/* contention — what sharing a host's cores costs a job: where its ranks run, ρ, and ρ'
 * (DESIGN.md's "ρ, ρ'" row). The one owner of host contention: the closed form
 * (model/costmodel.h), the simulator (sim/cores.h), the prediction interval and the fit
 * (fit/, which classifies a trace's run by contention_shares_cores) all ask it.
 *
 *   shares    the busiest machine's processes outnumber its P cores: K·T threads of its
 *             workers, and a dedicated master's process on machine 0 counted whole. A
 *             property of the configuration and the host, never of a fitted value, so the
 *             fit and the prediction agree on every run. Where it is false, ρ = ρ' = 1 and
 *             nothing below is paid, in time or in interval.
 *   ρ         max(1, (n + m)/P) of the busiest machine, n the cores its workers keep busy (T
 *             each; a team of T > 1 threads, waiting passively, 1/(σ + (1 − σ)/T) on average:
 *             its serial part leaves the others' threads its cores), m the part of a core a
 *             dedicated master keeps: m = 1 − y (+ (1 − w)·L over long rounds, L of either
 *             sign), in [0, 1]
 *   ρ'        ρ + w·(⌈n/P⌉ − ρ)⁺ + v·κ·(ρ − 1): the ranks packed ⌈n/P⌉ to a core while a
 *             round is shorter than τ (w), and κ per unit of ρ − 1 for switching cores (v);
 *             w fades from 1 (one-step rounds) to 0 as a round's idle steps pass τ, 0 where
 *             waits block or teams of threads share the cores; v = min(1, τ_κ/L) for a
 *             round of L idle seconds, κ paid once a round; v = 0 for synchronous rounds of
 *             one step (they compute at the packing's ρ'; a file with neither Λ nor λ: 1 for an
 *             all-reduce's) and for synchronous teams; async: ρ' at least the master's
 *             core's load; a team of T > 1 threads that fills its machine's cores beside a
 *             dedicated master: ρ' at least 1/(1 − m·q), q the parallel part of its step
 *             (its threads wait for whichever one the master took a core from)
 *   Λ + λ·step₁·(ρ − 1)  what a synchronous all-reduce of one-step rounds takes beyond
 *             its idle-host time, a round (ρ in ranks, a team's polling rank one core: its
 *             other threads sleep): the ring's ranks wait for partners that have no core,
 *             a wait per exchange wherever a core holds two (Λ) and a share of the idle
 *             step as ρ grows (λ), in a mix that differs from host to host; the plan's
 *             one-step runs at two steps' lengths and two ρ tell them apart (docs/model.md,
 *             "Λ"). κ is the whole cost as a share of those runs' longer steps, which
 *             rounds of several steps pay; a parameter server's one-step rounds pay
 *             neither (its pulls go one by one)
 *
 * Parameters it owns (model/params.h): oversub_compute κ, oversub_wait Λ,
 * oversub_wait_share λ, balance τ, kappa_fade τ_κ, master_yield y, master_yield_loss L,
 * master_wake, startup_cpu d (with startup_per_example l: the data load slowed at ρ > 1),
 * waits_block, run_cv_oversub and model_cv_oversub. Their fit: fit/fit_oversub.c and
 * fit/fit_run.c; why each term: docs/model.md ("Host contention").
 *
 * Switched off (params.contention_off, the what-if flag --no-contention): nothing shares,
 * ρ = ρ' = 1, no master wake, the plain run_cv and model_cv. A job whose ranks each have a
 * core predicts byte for byte the same either way (tested through the CLI).
 *
 * Pure functions on plain structs; nothing allocates, nothing prints.
 */
#ifndef SPEEDUP_CONTENTION_H
#define SPEEDUP_CONTENTION_H

#include "model/costmodel.h"

#include <stdbool.h>

/* Where K workers (and a dedicated master) run: one host shares its P cores; on a cluster
 * ranks fill machine 0's slots first (Open MPI's default mapping), a dedicated master
 * taking one core of machine 0, and where they do not fit they spread evenly. */
typedef struct {
    int machines_used;       /* machines with at least one rank */
    int workers_on_master;   /* training workers on machine 0, the master's (rank 0 among them
                                unless it is dedicated); workers 0..this−1 are local to it */
    int workers_busiest;     /* training workers on the most loaded machine */
    double rho;              /* ρ of that machine: max(1, (its workers·T + m)/P) */
} contention_placement;

contention_placement contention_placement_of(const costmodel_params *p, const job_config *c);

/* m: the part of a core a dedicated master keeps, 1 − y (+ (1 − w)·L over rounds longer
 * than τ), in [0, 1]; 0 when rank 0 trains. */
double contention_master_cores(const costmodel_params *p, const job_config *c);

/* Do the busiest machine's processes outnumber its cores (see the header)? */
bool contention_shares_cores(const costmodel_params *p, const job_config *c);

/* Does a worker's team of threads (T > 1) share the cores with other threads (the
 * processes outnumber them, as above)? Its parallel regions then wait for threads that have
 * no core; where the team's threads wait passively (a thread done with its share sleeps),
 * that costs what ρ' says. A thread that spins instead (OpenMP's default active wait, for a
 * while) keeps the core its descheduled sibling needs, and every region lasts about a
 * scheduler slice: the launcher (`speedup train --workers`) has such ranks wait passively,
 * and no term of this module prices a spinning team (docs/model.md, "Workers of several
 * threads on shared cores"). */
bool contention_team_shares_cores(const costmodel_params *p, const job_config *c);

/* ρ of the busiest machine; 1 where nothing shares (and where P is 0: unlimited). */
double contention_rho(const costmodel_params *p, const job_config *c);

/* ρ' at which c's steps and updates run, its workers computing `duty` of the time (1, or
 * an async worker's share of its cycle: costmodel_slowdown passes it). */
double contention_slowdown_at(const costmodel_params *p, const job_config *c, double duty);

/* Λ + λ·step₁·(ρ − 1), step₁ costmodel_idle_step_time: what c's exchange takes a round
 * beyond costmodel_sync_time's idle-host time (see the header); 0 where nothing shares or
 * the rounds are not a synchronous all-reduce's of one step. The closed form adds it to
 * the round's exchange, the simulator plays it as the exchange's last stage. */
double contention_exchange_time(const costmodel_params *p, const job_config *c);

/* The ρ at which the ranks share the cores evenly, a finished rank's core going to the
 * others: ρ where waits block on one host, else 1 (polling ranks keep their cores; on a
 * cluster the barrier spans machines, and G(K) is kept). The round's straggler wait uses
 * G_ρ(K) of model/gmax.h at it, and the simulator plays the same sharing. */
double contention_shared_rho(const costmodel_params *p, const job_config *c);

/* L: the idle seconds of c's round but its last step, (p − 1)·step₁ (step₁ a step and its
 * update on an idle core): what τ and τ_κ are set against. */
double contention_round_idle_s(const costmodel_params *p, const job_config *c);

/* v: the share of κ a step of c's rounds pays: 0 for synchronous rounds of one step (an
 * all-reduce's pay Λ and λ instead; 1 where both are 0: see the header), 1 for async and
 * hogwild, whose workers wait on the server after every step; over a round of L idle
 * seconds (its idle steps but one) min(1, τ_κ/L), κ paid once a round; where τ_κ is 0
 * (calibrations before it), 1 − L/τ down to 0, as the packing. */
double contention_round_weight(const costmodel_params *p, const job_config *c);

/* w: how far c's rounds stay packed, 1 for rounds of one step, falling to 0 as a round's
 * idle steps pass τ; 0 when waiting ranks block (waits_block), and for async and hogwild,
 * whose workers nap at the epoch's barrier. */
double contention_packing_weight(const costmodel_params *p, const job_config *c);

/* Do `threads` fill `cores` cores alike, as many on each and at least one (P divides n)?
 * Where a dedicated master's workers do, its part of a core sits beside a full core's
 * worth of them: the synchronous master's yield is read from such runs (fit/), and an
 * async master's core paces the epoch (costmodel_slowdown). */
bool contention_fills_cores_alike(double threads, double cores);

/* Is the config's master a dedicated parameter server on a machine whose cores its
 * workers' threads all take (workers on the master's machine · T ≥ its cores)? */
bool contention_master_crowded(const costmodel_params *p, const job_config *c);

/* The wake a message to or from the master pays: master_wake_s where it is crowded, else
 * 0. The one place that decides it (the simulator's read of a pull's weights too). */
double contention_master_wake(const costmodel_params *p, const job_config *c);

/* What sharing adds to one rank's start-up: its data load (d + l·D) times ρ − 1. */
double contention_startup_time(const costmodel_params *p, const job_config *c);

/* The run-to-run spread of c's runs: run_cv_oversub where its ranks share the cores and it
 * is known (> 0), else run_cv; model_cv likewise. */
double contention_run_cv(const costmodel_params *p, const job_config *c);
double contention_model_cv(const costmodel_params *p, const job_config *c);

#endif
