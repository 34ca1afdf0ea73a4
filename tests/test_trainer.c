#define _DEFAULT_SOURCE // M_PI_4
/* trainer: the learning-rate schedules against their closed forms; the step schedule
 * (slices, steps per epoch, refusals) against cases worked by hand, against the cost
 * model's job_schedule_of and costmodel_check over a grid, and against what slicing
 * must do (cover every example once per epoch). */
#include "train/trainer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

Test(trainer, cosine_schedule_runs_from_lr_to_zero) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.warmup_epochs = 0;
    cr_expect(fabs(trainer_lr(&c, 0, 100, 0) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 50, 100, 2) - 0.05) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 25, 100, 1) - 0.1 * 0.5 * (1 + cos(M_PI_4))) < 1e-12);
    cr_expect(trainer_lr(&c, 100, 100, 4) < 1e-12);
}

Test(trainer, step_schedule_divides_by_ten_at_half_and_three_quarters) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.schedule = SCHEDULE_STEP, c.epochs = 8, c.warmup_epochs = 0;
    const double want[8] = { 0.1, 0.1, 0.1, 0.1, 0.01, 0.01, 0.001, 0.001 };
    for (int e = 0; e < 8; e++)
        cr_expect(fabs(trainer_lr(&c, e * 10, 80, e) - want[e]) < 1e-12, "epoch %d: %g", e, trainer_lr(&c, e * 10, 80, e));
}

Test(trainer, warmup_ramps_linearly_then_follows_the_schedule) {
    trainer_config c;
    trainer_config_default(&c);
    c.lr = 0.1, c.schedule = SCHEDULE_STEP, c.epochs = 4, c.warmup_epochs = 1;
    // 100 steps over 4 epochs: the first 25 ramp 0.1·(t+1)/25, then the step schedule.
    cr_expect(fabs(trainer_lr(&c, 0, 100, 0) - 0.1 / 25) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 12, 100, 0) - 0.1 * 13 / 25) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 24, 100, 0) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 25, 100, 1) - 0.1) < 1e-12);
    cr_expect(fabs(trainer_lr(&c, 60, 100, 2) - 0.01) < 1e-12);
    c.schedule = SCHEDULE_COSINE;
    cr_expect(fabs(trainer_lr(&c, 12, 100, 0) - 0.1 * 0.5 * (1 + cos(M_PI * 12 / 100)) * 13 / 25) < 1e-12);
}

// ---- the schedule: the trainer's slices against the cost model's b and s

/* Worked by hand. Batch sync, D = 1000, B = 32, K = 3: ⌈1000/32⌉ = 32 steps (31 of 32
 * examples, the last of 8); a full step's slices [32·i/3, 32·(i+1)/3) are 10, 11, 11
 * (positions 0-9, 10-20, 21-31), the largest 11 = ⌈32/3⌉; the last step's 8 split 2, 3, 3. */
Test(trainer, batch_sync_slices_worked_by_hand) {
    trainer_config c;
    trainer_config_default(&c);
    c.batch = 32;
    cr_expect_eq(trainer_steps_per_epoch(&c, 3, 1000), 32);
    const long lo[3] = { 0, 10, 21 }, hi[3] = { 10, 21, 32 }, last_lo[3] = { 992, 994, 997 };
    for (int r = 0; r < 3; r++) {
        trainer_range s = trainer_slice(&c, r, 3, 1000, 0);
        cr_expect(s.lo == lo[r] && s.hi == hi[r] && s.divisor == 32, "rank %d: [%ld, %ld) / %ld", r, s.lo, s.hi,
                  s.divisor);
        s = trainer_slice(&c, r, 3, 1000, 31);
        cr_expect(s.lo == last_lo[r] && s.hi == (r < 2 ? last_lo[r + 1] : 1000) && s.divisor == 8,
                  "last step, rank %d: [%ld, %ld) / %ld", r, s.lo, s.hi, s.divisor);
    }
    // D = 7, B = 3, K = 2: steps of 3, 3, 1; the last one's slices [6, 6) and [6, 7).
    c.batch = 3;
    cr_expect_eq(trainer_steps_per_epoch(&c, 2, 7), 3);
    trainer_range s0 = trainer_slice(&c, 0, 2, 7, 2), s1 = trainer_slice(&c, 1, 2, 7, 2);
    cr_expect(s0.lo == 6 && s0.hi == 6 && s1.lo == 6 && s1.hi == 7);
    // A dedicated master (training rank -1) trains nothing.
    trainer_range m = trainer_slice(&c, -1, 2, 7, 0);
    cr_expect_eq(m.lo, m.hi);
}

/* Local SGD, D = 1003, B = 16, K = 6, epoch sync: shards of 167 (five) and 168, ⌈168/16⌉ =
 * 11 steps = ⌈1003/(6·16)⌉; the last shard's last step has 168 − 160 = 8 examples. */
Test(trainer, local_sgd_slices_worked_by_hand) {
    trainer_config c;
    trainer_config_default(&c);
    c.batch = 16, c.sync = JOB_SYNC_EPOCH;
    cr_expect_eq(trainer_steps_per_epoch(&c, 6, 1003), 11);
    trainer_range s = trainer_slice(&c, 5, 6, 1003, 10);
    cr_expect(s.lo == 995 && s.hi == 1003 && s.divisor == 8, "[%ld, %ld) / %ld", s.lo, s.hi, s.divisor);
    s = trainer_slice(&c, 0, 6, 1003, 10); // rank 0's 167 are done after step 10's 7
    cr_expect(s.lo == 160 && s.hi == 167, "[%ld, %ld)", s.lo, s.hi);
}

/* Batch sync, step s: the slices of ranks 0..K-1 follow each other and cover exactly the
 * step's examples [s·G, min(D, (s+1)·G)), each with that count as divisor; a full step's
 * largest slice is the model's local batch. */
static void check_batch_step(const trainer_config *c, int K, long D, long s, long G, double local_batch) {
    const long first = s * G, end = first + G < D ? first + G : D;
    long at = first, largest = 0;
    for (int r = 0; r < K; r++) {
        trainer_range sl = trainer_slice(c, r, K, D, s);
        cr_assert(sl.lo == at && sl.hi >= sl.lo, "D %ld B %d K %d step %ld rank %d: [%ld, %ld), expected from %ld", D,
                  c->batch, K, s, r, sl.lo, sl.hi, at);
        cr_assert_eq(sl.divisor, end - first, "D %ld B %d K %d step %ld rank %d", D, c->batch, K, s, r);
        largest = sl.hi - sl.lo > largest ? sl.hi - sl.lo : largest;
        at = sl.hi;
    }
    cr_assert_eq(at, end, "D %ld B %d K %d step %ld: slices end at %ld, the step at %ld", D, c->batch, K, s, at, end);
    if (end - first == G)
        cr_assert_eq((double)largest, local_batch, "D %ld B %d K %d: largest slice %ld, model b %g", D, c->batch, K,
                     largest, local_batch);
}

/* Local SGD: rank r's steps follow each other through its shard, at most B at a time, and
 * the shards follow each other through [0, D) with sizes differing by one at most. */
static void check_local_shards(const trainer_config *c, int K, long D, long steps) {
    long at = 0, smallest = D, largest = 0;
    for (int r = 0; r < K; r++) {
        const long begin = at;
        for (long s = 0; s < steps; s++) {
            trainer_range sl = trainer_slice(c, r, K, D, s);
            cr_assert(sl.lo == at && sl.hi >= sl.lo && sl.hi - sl.lo <= c->batch,
                      "D %ld B %d K %d rank %d step %ld: [%ld, %ld) from %ld", D, c->batch, K, r, s, sl.lo, sl.hi, at);
            at = sl.hi;
        }
        smallest = at - begin < smallest ? at - begin : smallest;
        largest = at - begin > largest ? at - begin : largest;
    }
    cr_assert_eq(at, D, "D %ld B %d K %d: the shards cover %ld", D, c->batch, K, at);
    cr_assert(largest - smallest <= 1, "D %ld B %d K %d: shards of %ld..%ld", D, c->batch, K, smallest, largest);
}

Test(trainer, schedule_is_the_cost_models_over_a_grid) {
    const long Ds[] = { 1, 7, 100, 1000, 1003 };
    const int Bs[] = { 1, 3, 16, 32, 48 };
    const job_sync syncs[] = { JOB_SYNC_BATCH, JOB_SYNC_EVERY, JOB_SYNC_EPOCH };
    char err[256];
    long checked = 0;
    for (size_t d = 0; d < sizeof Ds / sizeof *Ds; d++)
        for (size_t b = 0; b < sizeof Bs / sizeof *Bs; b++)
            for (size_t y = 0; y < sizeof syncs / sizeof *syncs; y++)
                for (int bpw = 0; bpw < 2; bpw++)
                    for (int k = 1; k <= 8; k++) {
                        const long D = Ds[d];
                        const int B = Bs[b], K = k <= 6 ? k : B + (k - 7); // 1..6, B, B + 1
                        trainer_config c;
                        trainer_config_default(&c);
                        c.batch = B, c.sync = syncs[y], c.every_n = 4, c.batch_per_worker = bpw;
                        // The model's config, built here rather than by trainer_model_config.
                        const job_config m = { .workers = K, .cores = 1, .sync = syncs[y], .every_n = 4,
                                                     .topology = JOB_TOPO_ALLREDUCE,
                                                     .master = JOB_MASTER_WORKER, .batch_per_worker = bpw,
                                                     .examples = D, .batch = B, .epochs = 1 };
                        const int split = syncs[y] == JOB_SYNC_BATCH && !bpw;
                        const int model_ok = job_check(&m, err, sizeof err) == 0;
                        const int trainer_ok = trainer_check_schedule(&c, K, D, err, sizeof err) == 0;
                        cr_assert_eq(model_ok, !(split && K > B), "D %ld B %d K %d split %d: model", D, B, K, split);
                        cr_assert_eq(trainer_ok, !(split && K > B) && D >= K, "D %ld B %d K %d split %d: trainer: %s",
                                     D, B, K, split, trainer_ok ? "accepted" : err);
                        if (!trainer_ok)
                            continue;
                        const job_schedule sch = job_schedule_of(&m);
                        const long steps = trainer_steps_per_epoch(&c, K, D);
                        cr_assert_eq(steps, sch.steps_per_epoch, "D %ld B %d K %d sync %d bpw %d", D, B, K, y, bpw);
                        if (syncs[y] == JOB_SYNC_BATCH) {
                            for (long s = 0; s < steps; s++)
                                check_batch_step(&c, K, D, s, bpw ? (long)K * B : B, sch.local_batch);
                            cr_assert_eq(trainer_slice(&c, K - 1, K, D, steps - 1).hi, D, "the epoch covers D");
                        } else {
                            check_local_shards(&c, K, D, steps);
                        }
                        checked++;
                    }
    cr_expect_gt(checked, 500, "only %ld configurations were checked", checked);
}
