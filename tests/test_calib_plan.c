/* cli/calib_plan.c: the live plan runs every configuration three times, interleaved, and
 * names each trace by its repeat. */
#include "cli/calib_accuracy.h"
#include "cli/calib_plan.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

/* The 2-core plan of calib_plan.h, written out by hand, in the order it runs. */
static const calib_plan_entry two_cores[] = {
    { 1, 1, "batch", "allreduce", 32, 0, NULL }, { 1, 2, "batch", "allreduce", 32, 0, NULL },
    { 2, 1, "batch", "allreduce", 32, 0, NULL }, { 2, 1, "epoch", "allreduce", 32, 0, NULL },
    { 1, 1, "batch", "allreduce", 16, 0, NULL }, { 1, 1, "batch", "allreduce", 64, 0, NULL },
    { 1, 2, "batch", "allreduce", 64, 0, NULL }, { 2, 1, "batch", "ps", 32, 0, NULL },
    { 3, 1, "batch", "allreduce", 48, 0, NULL }, /* one rank more than cores: oversubscribed, */
    { 3, 1, "every:4", "allreduce", 32, 0, NULL }, /* in rounds of one step, of four */
    { 3, 1, "epoch", "allreduce", 64, 0, NULL },   /* and of an epoch */
    { 4, 1, "batch", "allreduce", 64, 0, NULL },   /* two ranks on every core, */
    { 4, 1, "batch", "allreduce", 16, 0, NULL },   /* both at a quarter of the step */
    { 3, 1, "batch", "allreduce", 12, 0, NULL },
    { 2, 1, "batch", "ps", 32, 0, "dedicated" }, /* and a polling master beside 2 workers, */
    { 2, 1, "epoch", "ps", 32, 0, "dedicated" }, /* exchanging every step and every epoch */
};

Test(calib_plan, every_configuration_runs_three_times_interleaved) {
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    cr_assert_eq(calib_plan_runs(2, runs), 48);
    for (int i = 0; i < 48; i++) {
        const calib_plan_entry *r = &runs[i], *want = &two_cores[i % 16];
        cr_assert(r->workers == want->workers && r->cores == want->cores && r->batch == want->batch &&
                  strcmp(r->sync, want->sync) == 0 && strcmp(r->topology, want->topology) == 0 &&
                  (r->master == NULL) == (want->master == NULL),
                  "run %d: %dx%d %s %s b%ld, want %dx%d %s %s b%ld", i, r->workers, r->cores, r->sync, r->topology,
                  r->batch, want->workers, want->cores, want->sync, want->topology, want->batch);
        cr_assert_eq(r->repeat, 1 + i / 16, "run %d is repeat %d", i, r->repeat);
    }
}

Test(calib_plan, trace_names_carry_the_repeat) {
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    int n = calib_plan_runs(2, runs);
    char a[128], b[128];
    calib_plan_trace_name(&runs[0], a, sizeof a);
    calib_plan_trace_name(&runs[16], b, sizeof b);
    cr_assert_str_eq(a, "train-1x1-batch-allreduce-b32-r1.trace.jsonl");
    cr_assert_str_eq(b, "train-1x1-batch-allreduce-b32-r2.trace.jsonl");
    calib_plan_trace_name(&runs[41], a, sizeof a);
    cr_assert_str_eq(a, "train-3x1-every-4-allreduce-b32-r3.trace.jsonl");
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) {
            calib_plan_trace_name(&runs[i], a, sizeof a);
            calib_plan_trace_name(&runs[j], b, sizeof b);
            cr_assert_str_neq(a, b, "runs %d and %d would write one trace", j, i);
        }
}

/* 20 examples per second of budget, in whole batches of 64 (37 at 120 s). */
Test(calib_plan, examples_per_run_follow_the_budget_in_whole_batches_of_64) {
    cr_assert_eq(calib_plan_limit(120), 2368);
    cr_assert_eq(calib_plan_limit(60), 1152);     /* 18 batches of 64 */
    cr_assert_eq(calib_plan_limit(1), 128);
}

/* Sized by what the pilot runs measured: a 1x1 run (its share of a core's time per
 * example 1) and a 2x1 run on 2 cores (1 / (0.85 · 2) = 0.588), 0.5 s to start each run
 * and the commbench (1.5 s), 1 ms an example: 30 s leave 28.5 s for 1.588 ms a plan's
 * example, 17 945 examples, 280 whole batches of 64: 17 920, and 1.5 + 17.92 · 1.588 =
 * 29.96 s. A budget too small for 128 examples says what the plan will take instead. */
Test(calib_plan, examples_per_run_are_sized_to_the_budget_from_what_a_run_and_an_example_cost) {
    const calib_plan_entry runs[] = { { 1, 1, "batch", "allreduce", 32, 1, NULL },
                                      { 2, 1, "batch", "allreduce", 32, 1, NULL } };
    double plan_s;
    cr_assert_eq(calib_plan_limit_for(runs, 2, 2, 30, 0.5, 1e-3, &plan_s), 17920);
    cr_assert_float_eq(plan_s, 1.5 + 17.920 * (1 + 1 / 1.7), 1e-9);
    cr_assert_eq(calib_plan_limit_for(runs, 2, 2, 1, 0.5, 1e-3, &plan_s), 128);
    cr_assert_float_eq(plan_s, 1.5 + 0.128 * (1 + 1 / 1.7), 1e-9);
    /* A dedicated master is a core more; one core a host makes every run one core's. */
    const calib_plan_entry master[] = { { 1, 1, "batch", "ps", 32, 1, "dedicated" } };
    cr_assert_eq(calib_plan_limit_for(master, 1, 2, 10.6 + 1.0, 0.5, 1e-3, &plan_s), 17984); /* 10.6 s at 1/1.7 ms */
    cr_assert_eq(calib_plan_limit_for(runs, 2, 1, 2.0 + 1.5, 0.5, 1e-3, &plan_s), 960); /* 2 s at 2 ms */
}

Test(calib_plan, four_cores_add_the_splits_of_four) {
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    int n = calib_plan_runs(4, runs);
    /* 1x1; 1x2, 2x1 (batch, epoch); 1x4, 2x2 (2), 4x1 (2); b16, b64, 1x4 b64, ps, 5x1
     * batch, every:4 and epoch (b64), 8x1 at b128 and b32, 5x1 at b20, 4x1 batch and epoch
     * ps dedicated: 21. */
    cr_assert_eq(n, 63);
    cr_assert_eq(runs[12].workers, 2);
    cr_assert_str_eq(runs[12].topology, "ps");
    cr_assert_eq(runs[13].workers, 5);
    cr_assert_str_eq(runs[14].sync, "every:4");
    cr_assert_str_eq(runs[15].sync, "epoch");
    cr_assert_eq(runs[15].batch, 64);
    cr_assert_eq(runs[16].workers, 8);
    cr_assert_eq(runs[16].batch, 128);
    cr_assert_eq(runs[17].workers, 8);
    cr_assert_eq(runs[17].batch, 32);
    cr_assert_eq(runs[18].workers, 5);
    cr_assert_eq(runs[18].batch, 20);
    cr_assert_eq(runs[21].repeat, 2);
    cr_assert_eq(runs[42].repeat, 3);
}

Test(calib_plan, eight_cores_fit_in_the_plan) {
    /* 1 + 3 + 5 + 7 splits of 1, 2, 4, 8 cores (epoch too at K >= 2); b16, b64, 1x8 b64,
     * ps, 9x1 batch, every:4 and epoch, 16x1 at b256 and b64, 9x1 at b36, 8x1 batch and
     * epoch ps dedicated: 28 configurations, 84 runs (more than the 64 an earlier array
     * held). */
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    cr_assert_eq(calib_plan_runs(8, runs), 84);
    cr_assert_eq(runs[20].workers, 9);
}

/* On 16 cores the splits stop at 8, but the runs that share cores are 16's: 17 ranks, 32
 * ranks, and 16 workers beside a dedicated master. Capped at 8 they shared no core, and
 * their κ and τ came out 0 for nothing. */
Test(calib_plan, sixteen_cores_oversubscribe_all_sixteen) {
    calib_plan_entry runs[CALIB_PLAN_MAX_RUNS];
    cr_assert_eq(calib_plan_runs(16, runs), 84);
    int largest_split = 0, one_more = 0, two_each = 0, beside_master = 0;
    for (int i = 0; i < 28; i++) {
        const int ranks = runs[i].workers * runs[i].cores;
        if (!runs[i].master && ranks <= 8 && ranks > largest_split)
            largest_split = ranks;
        one_more += runs[i].workers == 17;
        two_each += runs[i].workers == 32 && (runs[i].batch == 512 || runs[i].batch == 128);
        beside_master += runs[i].workers == 16 && runs[i].master != NULL;
    }
    cr_assert_eq(largest_split, 8);
    cr_assert_eq(one_more, 4, "17x1 batch at b48 and b68 (4 a rank), every:4 and epoch");
    cr_assert_eq(two_each, 2, "32x1 at 16 and 4 examples a rank");
    cr_assert_eq(beside_master, 2, "16x1 batch and epoch ps, dedicated");
}

/* ---- the accuracy plan (cli/calib_accuracy.h) */

Test(calib_accuracy, examples_per_run_follow_the_budget_in_whole_batches_of_64) {
    /* 1800 s · 400/s over 6 runs · 10 epochs · 1.15 = 10434.8 → 163 batches of 64 = 10432 */
    cr_assert_eq(calib_accuracy_limit(1800, 10), 10432);
    /* twice the epochs, half the examples: 5217.4 → 81 · 64 = 5184 */
    cr_assert_eq(calib_accuracy_limit(1800, 20), 5184);
    cr_assert_eq(calib_accuracy_limit(10, 10), 640);        /* the floor: 20 steps of 32 an epoch */
    cr_assert_eq(calib_accuracy_limit(1e6, 10), 60000);     /* the whole training set at most */
}

Test(calib_accuracy, ten_subset_points_per_reference_epoch) {
    const calib_accuracy_run ref = { 1, "batch", false }, bpw = { 2, "batch", true }, e8 = { 2, "every:8", false },
                             e8k4 = { 4, "every:8", false }, ep = { 2, "epoch", false },
                             as = { 4, "async", false };
    cr_assert_eq(calib_accuracy_eval_every(&ref, 12480), 39);  /* 1248 examples: 39 steps of 32 */
    cr_assert_eq(calib_accuracy_eval_every(&bpw, 12480), 20);  /* 19.5 steps of 64, rounded */
    cr_assert_eq(calib_accuracy_eval_every(&e8, 12480), 16);   /* 19.5 steps of 2·32 → the nearest multiple of 8 */
    cr_assert_eq(calib_accuracy_eval_every(&e8k4, 12480), 8);  /* 9.75 steps of 4·32 → 8 */
    cr_assert_eq(calib_accuracy_eval_every(&ep, 12480), 0);    /* none: the workers share a model at epoch ends */
    cr_assert_eq(calib_accuracy_eval_every(&as, 12480), 0);    /* none: the model is the server's */
    cr_assert_eq(calib_accuracy_eval_every(&ref, 640), 2);
    cr_assert_eq(calib_accuracy_eval_every(&e8k4, 640), 8);    /* 0.5 steps → at least 8 */
    cr_assert_eq(calib_accuracy_eval_every(&ref, 100), 1);
}

Test(calib_accuracy, the_runs_tell_every_parameter_apart_and_name_their_traces) {
    /* a reference (H = 1, G = B), a larger global batch without local steps (w), local SGD at
     * two periods (gamma) and at a second K, and stale gradients (beta) */
    bool reference = false, batch_only = false, every8 = false, epoch = false, other_k = false, stale = false;
    char names[CALIB_ACCURACY_RUNS][128];
    for (int i = 0; i < CALIB_ACCURACY_RUNS; i++) {
        const calib_accuracy_run *r = &calib_accuracy_runs[i];
        reference |= r->workers == 1 && strcmp(r->sync, "batch") == 0;
        batch_only |= r->workers > 1 && strcmp(r->sync, "batch") == 0 && r->batch_per_worker;
        every8 |= r->workers == 2 && strcmp(r->sync, "every:8") == 0;
        epoch |= r->workers == 2 && strcmp(r->sync, "epoch") == 0;
        other_k |= r->workers == 4;
        stale |= r->workers > 1 && strcmp(r->sync, "async") == 0;
        calib_accuracy_trace_name(r, names[i], sizeof names[i]);
        for (int j = 0; j < i; j++)
            cr_assert_str_neq(names[i], names[j]);
    }
    cr_assert(reference && batch_only && every8 && epoch && other_k && stale);
    cr_assert_str_eq(names[5], "acc-4x1-async-b32.trace.jsonl");
    cr_assert_str_eq(names[1], "acc-2x1-batch-bpw-b32.trace.jsonl");
    cr_assert_str_eq(names[2], "acc-2x1-every8-b32.trace.jsonl");
}
