/* trace/traceinfo.c: the one reading of a trace, on traces built by hand. */
#include "trace/traceinfo.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

static trace *make(int workers, job_master master, job_topology topo, const trace_event *ev, int n) {
    trace_run run = { .host_cores = 2, .model_bytes = 1000 };
    run.config = (job_config){ .workers = workers, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = topo, .master = master, .examples = 64, .batch = 32, .epochs = 1 };
    trace *t = trace_new(&run);
    cr_assert_not_null(t);
    for (int i = 0; i < n; i++)
        cr_assert_eq(trace_add(t, &ev[i]), 0);
    return t;
}

Test(traceinfo, a_zero_example_compute_span_is_no_step) {
    trace_event full = { .ph = TRACE_COMPUTE, .examples = 16 }, empty = { .ph = TRACE_COMPUTE, .examples = 0 },
                comm = { .ph = TRACE_COMM, .examples = 16 };
    cr_assert(traceinfo_is_step(&full));
    cr_assert(!traceinfo_is_step(&empty));
    cr_assert(!traceinfo_is_step(&comm));
}

Test(traceinfo, a_dedicated_master_is_one_rank_more_and_shares_the_cores) {
    trace *t = make(2, JOB_MASTER_DEDICATED, JOB_TOPO_PS, NULL, 0);
    cr_assert_eq(traceinfo_ranks(t), 3);
    cr_assert(traceinfo_shares_cores(&t->run)); /* 2 workers + the master: 3 processes on 2 cores */
    trace_free(t);
    t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, NULL, 0);
    cr_assert_eq(traceinfo_ranks(t), 2);
    cr_assert_not(traceinfo_shares_cores(&t->run));
    trace_free(t);
}

Test(traceinfo, training_time_leaves_out_eval_before_the_last_event) {
    /* Rank 0 ends at 10 s with 2 s of eval inside: 8 s. Rank 1 ends at 9 s with none:
     * 9 s. Rank 1's eval after its last training event (9..12) does not count. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 1 },
        { .rank = 0, .ph = TRACE_EVAL, .t0_s = 4, .t1_s = 6 },
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 6, .t1_s = 10, .examples = 16 },
        { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 1, .t1_s = 9, .examples = 16 },
        { .rank = 1, .ph = TRACE_EVAL, .t0_s = 9, .t1_s = 12 },
    };
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 5);
    cr_assert_float_eq(traceinfo_training_time(t), 9.0, 1e-12);
    trace_free(t);
}

Test(traceinfo, phase_means_divide_by_every_rank_the_run_had) {
    /* Two workers and a dedicated master: 3 ranks, even if the master recorded nothing. */
    trace_event ev[] = {
        { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 3, .examples = 16 },
        { .rank = 2, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 3, .examples = 16 },
        { .rank = 1, .ph = TRACE_UPDATE, .t0_s = 3, .t1_s = 3.6 },
    };
    trace *t = make(2, JOB_MASTER_DEDICATED, JOB_TOPO_PS, ev, 3);
    traceinfo_phases ph = traceinfo_phase_means(t);
    cr_assert_float_eq(ph.compute_s, 2.0, 1e-12);
    cr_assert_float_eq(ph.update_s, 0.2, 1e-12);
    trace_free(t);
}

Test(traceinfo, a_ps_sync_span_is_the_largest_rank_part_less_the_masters_update) {
    /* Step 0: the master (rank 0) takes the push 0..1, updates 1..1.5, sends 1.5..2.
     * The worker's one comm span 0..2.1 holds the master's 0.5 s update: its part is 1.6;
     * the master's two spans sum to 1.5. The synchronisation took 1.6 s of link time.
     * Step 1: 0..0.4 + 0.4..0.5 on the master (no update), the worker 0..0.45: 0.5. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1, .epoch = 0, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 1, .t1_s = 1.5, .epoch = 0, .step = 0 },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 1.5, .t1_s = 2, .epoch = 0, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 2.1, .epoch = 0, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 1, .ph = TRACE_UPDATE, .t0_s = 2.1, .t1_s = 2.2, .epoch = 0, .step = 0 }, /* after: not inside */
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 10, .t1_s = 10.4, .epoch = 0, .step = 1, .bytes = 1000, .name = "ps" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 10.4, .t1_s = 10.5, .epoch = 0, .step = 1, .bytes = 1000, .name = "ps" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 10, .t1_s = 10.45, .epoch = 0, .step = 1, .bytes = 1000, .name = "ps" },
    };
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_PS, ev, 8);
    traceinfo_sync *s = NULL;
    long n = traceinfo_syncs(t, &s);
    cr_assert_eq(n, 2);
    cr_assert_eq(s[0].step, 0);
    cr_assert_float_eq(s[0].span_s, 1.6, 1e-9);
    cr_assert_eq(s[0].ranks, 2);
    cr_assert_float_eq(s[1].span_s, 0.5, 1e-9);
    free(s);
    trace_free(t);
}

Test(traceinfo, a_dedicated_masters_own_part_is_no_span_while_a_worker_has_one) {
    /* Step 0: the dedicated master (rank 0) takes the pushes 0..0.5, updates 0.5..0.6 and
     * sends 0.6..3 (its last send returns late: it had to win a core back); the workers'
     * parts end when they have their weights: 0..1.1 and 0..1.6, each less the master's
     * 0.1 s update inside: 1.0 and 1.5. The span is 1.5, not the master's 2.9. Step 1: only
     * the master recorded it (0..0.7): its part is the span. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 0.5, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 0.5, .t1_s = 0.6, .step = 0 },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0.6, .t1_s = 3, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1.1, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 2, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1.6, .step = 0, .bytes = 1000, .name = "ps" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 10, .t1_s = 10.7, .step = 1, .bytes = 1000, .name = "ps" },
    };
    trace *t = make(2, JOB_MASTER_DEDICATED, JOB_TOPO_PS, ev, 6);
    traceinfo_sync *s = NULL;
    cr_assert_eq(traceinfo_syncs(t, &s), 2);
    cr_assert_float_eq(s[0].span_s, 1.5, 1e-9);
    cr_assert_eq(s[0].ranks, 3);
    cr_assert_float_eq(s[1].span_s, 0.7, 1e-9);
    free(s);
    trace_free(t);
}

Test(traceinfo, averaging_belongs_to_the_synchronisation_not_to_the_update) {
    /* Local SGD through a ps master: it scales the summed weights (1..1.2, "average")
     * between the pushes and the pulls. That is synchronisation work: the worker's part
     * keeps it (1.25 s); an SGD update there would have been taken out. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1, .step = 7, .bytes = 1000, .name = "ps" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 1, .t1_s = 1.2, .step = 7, .name = "average" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 1.2, .t1_s = 1.25, .step = 7, .bytes = 1000, .name = "ps" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1.25, .step = 7, .bytes = 1000, .name = "ps" },
    };
    cr_assert(!traceinfo_is_optimizer_update(&ev[1]));
    trace_event sgd = { .ph = TRACE_UPDATE, .name = "sgd" }, unnamed = { .ph = TRACE_UPDATE };
    cr_assert(traceinfo_is_optimizer_update(&sgd));
    cr_assert(traceinfo_is_optimizer_update(&unnamed));
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_PS, ev, 4);
    traceinfo_sync *s = NULL;
    cr_assert_eq(traceinfo_syncs(t, &s), 1);
    cr_assert_float_eq(s[0].span_s, 1.25, 1e-12);
    free(s);
    trace_free(t);
}

Test(traceinfo, syncs_of_different_sizes_or_names_stay_apart) {
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1, .step = 0, .bytes = 8, .name = "pingpong" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 1, .t1_s = 3, .step = 0, .bytes = 8, .name = "allreduce" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 1, .t1_s = 3.5, .step = 0, .bytes = 8, .name = "allreduce" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 4, .t1_s = 8, .step = 0, .bytes = 1024, .name = "allreduce" },
    };
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 4);
    traceinfo_sync *s = NULL;
    cr_assert_eq(traceinfo_syncs(t, &s), 3);
    /* Ordered by name, then bytes. */
    cr_assert_str_eq(s[0].name, "allreduce");
    cr_assert_float_eq(s[0].span_s, 2.5, 1e-12);
    cr_assert_eq(s[1].bytes, 1024);
    cr_assert_float_eq(s[1].span_s, 4.0, 1e-12);
    cr_assert_str_eq(s[2].name, "pingpong");
    free(s);
    trace_free(t);
    t = make(1, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, NULL, 0);
    cr_assert_eq(traceinfo_syncs(t, &s), 0);
    cr_assert_null(s);
    trace_free(t);
}

Test(traceinfo, background_comm_is_beside_the_timeline_and_a_sync_is_its_union) {
    /* Rank 0: compute 0..1, background all-reduces 0.6..0.9 and 0.8..1.2 (two buckets on
     * two threads, overlapping), the exposed tail 1.0..1.3 in its own timeline. Rank 1:
     * compute 0..1.1, background 0.7..1.25, tail 1.1..1.3. Phase means: compute
     * (1 + 1.1)/2 = 1.05, comm (0.3 + 0.2)/2 = 0.25; the background counts in neither, nor
     * in the training time (1.3). The sync: rank 0's union 0.6..1.2 = 0.6 (not the sum
     * 0.7, nor its tail 0.3), rank 1's 0.55; an exchange beside the steps waits on the
     * first rank for the last one's gradients, so the span is the last one's: 0.55. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 1, .examples = 8 },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0.6, .t1_s = 0.9, .name = "allreduce", .background = true },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0.8, .t1_s = 1.2, .name = "allreduce", .background = true },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 1.0, .t1_s = 1.3, .name = "allreduce" },
        { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 1.1, .examples = 8 },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0.7, .t1_s = 1.25, .name = "allreduce", .background = true },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 1.1, .t1_s = 1.3, .name = "allreduce" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0.2, .t1_s = 2.0, .name = "broadcast", .background = true },
    };
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 8);
    traceinfo_phases ph = traceinfo_phase_means(t);
    cr_assert_float_eq(ph.compute_s, 1.05, 1e-12);
    cr_assert_float_eq(ph.comm_s, 0.25, 1e-12);
    cr_assert_float_eq(traceinfo_training_time(t), 1.3, 1e-12);
    traceinfo_sync *sy;
    long n = traceinfo_syncs(t, &sy);
    cr_assert_eq(n, 2);
    cr_assert_str_eq(sy[0].name, "allreduce");
    cr_assert_float_eq(sy[0].span_s, 0.55, 1e-12);
    cr_assert_eq(sy[0].ranks, 2);
    cr_assert_str_eq(sy[1].name, "broadcast");
    free(sy);
    /* Overlap: rank 0's all-reduce began at 0.6 of its 1 s step: 0.4; rank 1's at 0.7 of
     * 1.1 s: 0.4/1.1. The broadcast that began at 0.2 is no exchange of the step's
     * gradients and does not count. Exposed: what each rank still waited for in the
     * foreground after its step, 0.3 s (1.0 to 1.3) and 0.2 s (1.1 to 1.3). */
    traceinfo_overlap *ov;
    cr_assert_eq(traceinfo_overlaps(t, &ov), 2);
    cr_assert_float_eq(ov[0].share, 0.4, 1e-12);
    cr_assert_float_eq(ov[1].share, 0.4 / 1.1, 1e-12);
    cr_assert_float_eq(ov[0].exposed_s, 0.3, 1e-12);
    cr_assert_float_eq(ov[1].exposed_s, 0.2, 1e-12);
    cr_assert_float_eq(ov[1].step_s, 1.1, 1e-12);
    cr_assert_eq(ov[1].examples, 8);
    free(ov);
    trace_free(t);
}

Test(traceinfo, an_all_reduce_that_starts_after_its_step_overlaps_nothing) {
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 2, .examples = 8, .step = 0 },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 2.5, .t1_s = 3, .step = 0, .name = "allreduce", .background = true },
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 3, .t1_s = 5, .examples = 8, .step = 1 },
    };
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 3);
    traceinfo_overlap *ov;
    cr_assert_eq(traceinfo_overlaps(t, &ov), 1, "step 1 has no background comm: no measurement");
    cr_assert_eq(ov[0].share, 0.0);
    cr_assert_eq(ov[0].exposed_s, 0.0, "nothing in the foreground waited for it");
    free(ov);
    trace_free(t);
}

/* Two ranks, D = 40, a global batch of 10 split 5 + 5: 4 steps per epoch, 2 epochs. Rank 0
 * (the times below) trains 1 s per step after a 1 s start-up, evaluates the subset after
 * steps 2 and 6 (0.5 s each), the test set after each epoch (1.5 s, then 1.25 s) and saves
 * a checkpoint after epoch 1 (0.25 s). Rank 1 knows the accuracies too, at other times. */
static const trace_event curve_events[] = {
    { .rank = 0, .ph = TRACE_EVAL, .t0_s = 5.5, .t1_s = 7, .epoch = 0, .step = 4, .examples = 40, .name = "test",
      .has_accuracy = true, .accuracy = 0.5, .loss = 1.5 },
    { .rank = 0, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 1, .epoch = -1, .step = -1, .name = "data_load" },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 1, .t1_s = 2, .epoch = 0, .step = 0, .examples = 5 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 2, .t1_s = 3, .epoch = 0, .step = 1, .examples = 5 },
    { .rank = 0, .ph = TRACE_EVAL, .t0_s = 3, .t1_s = 3.5, .epoch = 0, .step = 2, .examples = 20, .name = "subset",
      .has_accuracy = true, .accuracy = 0.3, .loss = 2.0 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 3.5, .t1_s = 4.5, .epoch = 0, .step = 2, .examples = 5 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 4.5, .t1_s = 5.5, .epoch = 0, .step = 3, .examples = 5 },
    { .rank = 0, .ph = TRACE_EVAL, .t0_s = 7, .t1_s = 7.25, .epoch = 0, .step = -1, .name = "checkpoint" },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 7.25, .t1_s = 8.25, .epoch = 1, .step = 4, .examples = 5 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 8.25, .t1_s = 9.25, .epoch = 1, .step = 5, .examples = 5 },
    { .rank = 0, .ph = TRACE_EVAL, .t0_s = 9.25, .t1_s = 9.75, .epoch = 1, .step = 6, .examples = 20, .name = "subset",
      .has_accuracy = true, .accuracy = 0.6, .loss = 1.2 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 9.75, .t1_s = 10.75, .epoch = 1, .step = 6, .examples = 5 },
    { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 10.75, .t1_s = 11.75, .epoch = 1, .step = 7, .examples = 5 },
    { .rank = 0, .ph = TRACE_EVAL, .t0_s = 11.75, .t1_s = 13, .epoch = 1, .step = 8, .examples = 40, .name = "test",
      .has_accuracy = true, .accuracy = 0.7, .loss = 1.0 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 1, .t1_s = 2.5, .epoch = 0, .step = 0, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 2.5, .t1_s = 3, .epoch = 0, .step = 1, .examples = 5 },
    { .rank = 1, .ph = TRACE_EVAL, .t0_s = 0.5, .t1_s = 4, .epoch = 0, .step = 2, .examples = 20, .name = "subset",
      .has_accuracy = true, .accuracy = 0.99, .loss = 0.1 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 4, .t1_s = 5, .epoch = 0, .step = 2, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 5, .t1_s = 5.5, .epoch = 0, .step = 3, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 7.25, .t1_s = 8.25, .epoch = 1, .step = 4, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 8.25, .t1_s = 9.25, .epoch = 1, .step = 5, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 9.75, .t1_s = 10.75, .epoch = 1, .step = 6, .examples = 5 },
    { .rank = 1, .ph = TRACE_COMPUTE, .t0_s = 10.75, .t1_s = 11.75, .epoch = 1, .step = 7, .examples = 5 },
};

Test(traceinfo, the_accuracy_curve_is_rank_0s_points_in_time_order_without_the_eval_time) {
    trace *t = make(2, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, curve_events,
                    (int)(sizeof curve_events / sizeof curve_events[0]));
    t->run.config.examples = 40;
    t->run.config.batch = 10;
    traceinfo_accuracy_point *p = NULL;
    long n = -1;
    char err[256] = "";
    cr_assert_eq(traceinfo_accuracy_curve(t, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 4);
    /* By hand: time = the eval's start less rank 0's eval spans that ended before it;
     * examples = 10 per global step before the point's step. */
    const struct { double time_s; int epoch; long step; double examples, epochs, acc, loss; bool subset; } want[] = {
        { 3.0, 0, 2, 20, 0.5, 0.3, 2.0, true },                    /* nothing evaluated before */
        { 5.5 - 0.5, 1, 4, 40, 1.0, 0.5, 1.5, false },             /* less the subset's 0.5 s */
        { 9.25 - 0.5 - 1.5 - 0.25, 1, 6, 60, 1.5, 0.6, 1.2, true }, /* the checkpoint too */
        { 11.75 - 2.25 - 0.5, 2, 8, 80, 2.0, 0.7, 1.0, false },
    };
    for (int i = 0; i < 4; i++) {
        cr_assert_float_eq(p[i].train_time_s, want[i].time_s, 1e-12, "point %d: %g", i, p[i].train_time_s);
        cr_assert_eq(p[i].epoch, want[i].epoch, "point %d", i);
        cr_assert_eq(p[i].step, want[i].step, "point %d", i);
        cr_assert_float_eq(p[i].examples_seen, want[i].examples, 1e-12, "point %d", i);
        cr_assert_float_eq(p[i].epochs_seen, want[i].epochs, 1e-12, "point %d", i);
        cr_assert_eq(p[i].accuracy, want[i].acc, "point %d", i);
        cr_assert_eq(p[i].train_loss, want[i].loss, "point %d", i);
        cr_assert_eq(p[i].subset, want[i].subset, "point %d", i);
    }
    free(p);
    trace_free(t);
}

Test(traceinfo, a_resumed_trace_counts_the_epochs_before_it_and_no_points_is_an_empty_curve) {
    /* Resumed after 3 epochs of D = 40: the trace begins at epoch 3, global step 12. */
    trace_event ev[] = {
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 1, .t1_s = 2, .epoch = 3, .step = 12, .examples = 30 },
        { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 2, .t1_s = 3, .epoch = 3, .step = 13, .examples = 10 },
        { .rank = 0, .ph = TRACE_EVAL, .t0_s = 3, .t1_s = 4, .epoch = 3, .step = 14, .examples = 40, .name = "test",
          .has_accuracy = true, .accuracy = 0.75, .loss = 0.5 },
    };
    trace *t = make(1, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 3);
    t->run.config.examples = 40;
    traceinfo_accuracy_point *p = NULL;
    long n = -1;
    char err[256] = "";
    cr_assert_eq(traceinfo_accuracy_curve(t, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 1);
    cr_assert_float_eq(p[0].examples_seen, 160.0, 1e-12); /* 3 x 40 before, 40 here */
    cr_assert_eq(p[0].epoch, 4);
    cr_assert_float_eq(p[0].train_time_s, 3.0, 1e-12);
    free(p);
    trace_free(t);
    t = make(1, JOB_MASTER_WORKER, JOB_TOPO_ALLREDUCE, ev, 2);
    p = (traceinfo_accuracy_point *)&n; /* must be reset */
    cr_assert_eq(traceinfo_accuracy_curve(t, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 0);
    cr_assert_null(p);
    trace_free(t);
}

/* An async run: the workers' "push" and "pull" are requests, not synchronisations; the
 * master's applied gradients carry the staleness, summarised by hand below. */
Test(traceinfo, async_requests_are_no_synchronisation_and_staleness_is_summarised) {
    const trace_event ev[] = {
        /* rank 1: pull, push; rank 2: pull, push, push (steps 0, 1) */
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1, .step = 0, .bytes = 1000, .name = "pull" },
        { .rank = 1, .ph = TRACE_COMM, .t0_s = 2, .t1_s = 3, .step = 0, .bytes = 1000, .name = "push" },
        { .rank = 2, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 1, .step = 0, .bytes = 1000, .name = "pull" },
        { .rank = 2, .ph = TRACE_COMM, .t0_s = 2, .t1_s = 3, .step = 0, .bytes = 1000, .name = "push" },
        { .rank = 2, .ph = TRACE_COMM, .t0_s = 4, .t1_s = 5, .step = 1, .bytes = 1000, .name = "push" },
        /* the master: receives of 0.2, 0.4, 0.6 s, updates of 0.1, 0.3, 0.5 s with
         * staleness 0, 1, 5; pulls of 0.7 and 0.9 s */
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 0, .t1_s = 0.7, .name = "pull" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 1, .t1_s = 1.9, .name = "pull" },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 2, .t1_s = 2.2, .name = "push" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 2.2, .t1_s = 2.3, .name = "sgd", .has_staleness = true },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 3, .t1_s = 3.4, .name = "push" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 3.4, .t1_s = 3.7, .name = "sgd", .has_staleness = true,
          .staleness = 1 },
        { .rank = 0, .ph = TRACE_COMM, .t0_s = 4, .t1_s = 4.6, .name = "push" },
        { .rank = 0, .ph = TRACE_UPDATE, .t0_s = 4.6, .t1_s = 5.1, .name = "sgd", .has_staleness = true,
          .staleness = 5, .background = true },
    };
    trace *t = make(2, JOB_MASTER_DEDICATED, JOB_TOPO_PS, ev, (int)(sizeof ev / sizeof ev[0]));
    t->run.config.sync = JOB_SYNC_ASYNC;
    traceinfo_sync *sy = NULL;
    cr_assert_eq(traceinfo_syncs(t, &sy), 0, "a request is no synchronisation");
    free(sy);
    traceinfo_async a;
    cr_assert_eq(traceinfo_async_of(t, &a), 0);
    cr_assert_eq(a.updates, 3);
    cr_assert_eq(a.pushes, 3);
    cr_assert_eq(a.pulls, 2);
    cr_assert_float_eq(a.staleness_median, 1.0, 1e-12);
    /* 90th percentile of 0, 1, 5: position 0.9·2 = 1.8, 1 + 0.8·(5 − 1) = 4.2 */
    cr_assert_float_eq(a.staleness_p90, 4.2, 1e-12);
    cr_assert_float_eq(a.staleness_mean, 2.0, 1e-12);
    cr_assert_float_eq(a.push_s, 0.4, 1e-12);
    cr_assert_float_eq(a.update_s, 0.3, 1e-12);
    cr_assert_float_eq(a.pull_s, 0.8, 1e-12);
    cr_assert(traceinfo_is_background(&t->events[12]), "a hogwild updater's update is beside the timeline");
    /* The same events in a batch-sync run are synchronisations, and nothing is async. */
    t->run.config.sync = JOB_SYNC_BATCH;
    cr_assert_gt(traceinfo_syncs(t, &sy), 0);
    free(sy);
    cr_assert_eq(traceinfo_async_of(t, &a), 0);
    cr_assert_eq(a.updates, 0);
    trace_free(t);
}
