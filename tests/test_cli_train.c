#define _POSIX_C_SOURCE 200809L
/* speedup train / eval end to end on small synthetic IDX files: it learns, repeats itself
 * bit for bit, resumes exactly, writes a trace, and refuses bad input clearly. */
#include "trace/trace.h"
#include "trace/traceinfo.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NET "--net conv3x3x4,relu,pool2,fc16,relu,dropout0.25,fc4"

static char *data_dir(void) {
    char *dir = clirun_tmpdir();
    clirun_write_idx_set(dir, "train", 256, 1);
    clirun_write_idx_set(dir, "t10k", 64, 2);
    return dir;
}

static json_t *run_json(const char *args) {
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "speedup %s: exit %d: %s", args, r.status, r.err);
    json_error_t e;
    json_t *j = json_loads(r.out, 0, &e);
    cr_assert(j, "not JSON: %s", r.out);
    clirun_free(&r);
    return j;
}

Test(cli_train, learns_a_separable_task) {
    char *dir = data_dir(), args[1024];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 16 --lr 0.05 --quiet", dir);
    json_t *j = run_json(args);
    double acc = json_real_value(json_object_get(j, "test_accuracy"));
    cr_expect(acc >= 0.9, "test accuracy %g", acc);
    json_t *loss = json_object_get(j, "train_loss");
    cr_expect(json_real_value(json_array_get(loss, 2)) < json_real_value(json_array_get(loss, 0)), "loss did not fall");
    cr_expect(json_real_value(json_object_get(j, "peak_rss_mib")) > 0);
    json_decref(j);
    free(dir);
}

Test(cli_train, same_seed_one_thread_gives_identical_losses) {
    char *dir = data_dir(), args[1024];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 8 --threads 1 --seed 5 --quiet", dir);
    json_t *a = run_json(args), *b = run_json(args);
    cr_expect(json_equal(json_object_get(a, "train_loss"), json_object_get(b, "train_loss")), "losses differ");
    cr_expect_str_eq(json_string_value(json_object_get(a, "params_crc32")), json_string_value(json_object_get(b, "params_crc32")));
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 8 --threads 1 --seed 6 --quiet", dir);
    json_t *c = run_json(args);
    cr_expect_str_neq(json_string_value(json_object_get(a, "params_crc32")), json_string_value(json_object_get(c, "params_crc32")),
                      "another seed gave the same weights");
    json_decref(a), json_decref(b), json_decref(c);
    free(dir);
}

Test(cli_train, resume_matches_uninterrupted_run) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 8 --threads 1 --quiet", dir);
    json_t *full = run_json(args);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --stop-after 1 --batch 8 --threads 1 --quiet --checkpoint %s/c",
             dir, dir);
    json_t *part = run_json(args);
    cr_expect_eq(json_array_size(json_object_get(part, "train_loss")), 1);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 8 --threads 1 --quiet --resume %s/c", dir, dir);
    json_t *rest = run_json(args);
    cr_expect_eq(json_integer_value(json_object_get(rest, "first_epoch")), 1);
    cr_expect_str_eq(json_string_value(json_object_get(rest, "params_crc32")), json_string_value(json_object_get(full, "params_crc32")));
    cr_expect(json_equal(json_array_get(json_object_get(rest, "train_loss"), 1), json_array_get(json_object_get(full, "train_loss"), 2)));
    json_decref(full), json_decref(part), json_decref(rest);
    free(dir);
}

Test(cli_train, eval_of_checkpoint_repeats_final_accuracy) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 16 --quiet --checkpoint %s/c", dir, dir);
    json_t *t = run_json(args);
    snprintf(args, sizeof args, "eval --data %s --checkpoint %s/c", dir, dir);
    json_t *e = run_json(args);
    cr_expect(json_real_value(json_object_get(t, "test_accuracy")) == json_real_value(json_object_get(e, "test_accuracy")),
              "train says %g, eval says %g", json_real_value(json_object_get(t, "test_accuracy")),
              json_real_value(json_object_get(e, "test_accuracy")));
    cr_expect_eq(json_integer_value(json_object_get(e, "epochs_done")), 2);
    cr_expect_str_eq(json_string_value(json_object_get(e, "params_crc32")),
                     json_string_value(json_object_get(t, "params_crc32")), "eval's weights are not train's last");
    json_decref(t), json_decref(e);
    free(dir);
}

Test(cli_train, trace_records_startup_steps_and_eval) {
    char *dir = data_dir(), args[2048], path[1024], err[512];
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 32 --quiet --trace %s", dir, path);
    json_decref(run_json(args));
    trace *t = trace_read(path, err, sizeof err);
    cr_assert(t, "%s", err);
    long compute = 0, examples = 0, eval = 0, startup = 0;
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        cr_expect(e->t1_s >= e->t0_s);
        if (e->ph == TRACE_COMPUTE)
            compute++, examples += e->examples;
        eval += e->ph == TRACE_EVAL;
        startup += e->ph == TRACE_STARTUP && (!strcmp(e->name, "data_load") || !strcmp(e->name, "model_build"));
    }
    cr_expect_eq(compute, 2 * 256 / 32);
    cr_expect_eq(examples, 2 * 256);
    cr_expect_eq(eval, 2);
    cr_expect_eq(startup, 2);
    cr_expect_eq(t->run.config.batch, 32);
    trace_free(t);
    free(dir);
}

// ---- accuracy: every epoch's test accuracy, the subset every N steps, stopping at a target

static double num(json_t *o, const char *key) { return json_number_value(json_object_get(o, key)); }

/* 256 examples, B = 16: 16 steps an epoch. The test set (64) after steps 16 and 32, the
 * subset (20 of the 64) after steps 4, 8, ..., 32; the trace's curve (trace/traceinfo.h,
 * computed from the events) says what the trainer's summary says. */
Test(cli_train, accuracy_is_recorded_every_epoch_and_every_n_steps_and_reads_back) {
    char *dir = data_dir(), args[2048], path[1024], err[512];
    snprintf(path, sizeof path, "%s/acc.trace.jsonl", dir);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 16 --quiet --eval-every 4 --eval-subset 20 --trace %s",
             dir, path);
    json_t *j = run_json(args);
    json_t *curve = json_object_get(j, "accuracy_curve"), *subset = json_object_get(j, "subset_curve");
    cr_assert_eq(json_array_size(curve), 2);
    cr_assert_eq(json_array_size(subset), 8);
    for (int i = 0; i < 2; i++) {
        json_t *p = json_array_get(curve, (size_t)i);
        cr_expect_eq(num(p, "epoch"), i + 1);
        cr_expect_eq(num(p, "step"), 16 * (i + 1));
        cr_expect_eq(num(p, "examples_seen"), 256 * (i + 1));
        cr_expect_eq(num(p, "evaluated"), 64);
        const double right = num(p, "accuracy") * 64; /* a count of examples */
        cr_expect(fabs(right - round(right)) < 1e-6, "accuracy %g is not k/64", num(p, "accuracy"));
        cr_expect(json_equal(json_object_get(p, "train_loss"), json_array_get(json_object_get(j, "train_loss"), (size_t)i)),
                  "the test point's loss is the epoch's");
    }
    cr_expect_eq(num(json_array_get(curve, 1), "accuracy"), num(j, "test_accuracy"));
    for (int i = 0; i < 8; i++) {
        json_t *p = json_array_get(subset, (size_t)i);
        cr_expect_eq(num(p, "step"), 4 * (i + 1));
        cr_expect_eq(num(p, "examples_seen"), 64 * (i + 1));
        cr_expect_eq(num(p, "evaluated"), 20);
        const double right = num(p, "accuracy") * 20;
        cr_expect(fabs(right - round(right)) < 1e-6, "subset accuracy %g is not k/20", num(p, "accuracy"));
    }
    trace *t = trace_read(path, err, sizeof err);
    cr_assert(t, "%s", err);
    traceinfo_accuracy_point *pts = NULL;
    long n = 0;
    cr_assert_eq(traceinfo_accuracy_curve(t, &pts, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, 10);
    int tests = 0, subsets = 0;
    double last_s = -1;
    for (long i = 0; i < n; i++) {
        json_t *p = pts[i].subset ? json_array_get(subset, (size_t)subsets++) : json_array_get(curve, (size_t)tests++);
        cr_expect_eq(pts[i].step, (long)num(p, "step"), "point %ld", i);
        cr_expect_eq(pts[i].epoch, (int)num(p, "epoch"), "point %ld", i);
        cr_expect_eq(pts[i].examples_seen, num(p, "examples_seen"), "point %ld", i);
        cr_expect(fabs(pts[i].accuracy - num(p, "accuracy")) < 1e-9, "point %ld", i);
        cr_expect(fabs(pts[i].train_loss - num(p, "train_loss")) < 1e-9, "point %ld", i);
        /* The trainer's clock and the trace's events (nanoseconds), added up apart. */
        cr_expect(fabs(pts[i].train_time_s - num(p, "train_time_s")) < 1e-6, "point %ld: %g in the trace, %g in the summary",
                  i, pts[i].train_time_s, num(p, "train_time_s"));
        cr_expect(pts[i].train_time_s >= last_s - 1e-9, "point %ld: time runs backwards", i);
        last_s = pts[i].train_time_s;
    }
    cr_expect_eq(tests, 2);
    cr_expect(pts[3].step == 16 && pts[3].subset && pts[4].step == 16 && !pts[4].subset,
              "after step 16: the subset, then the test set");
    cr_expect(fabs(pts[4].train_time_s - pts[3].train_time_s) < 1e-6, "no training between them");
    /* Training time leaves every evaluation out: the last point is at most the trace's
     * training time, and the eval spans before it are not in it. */
    cr_expect(pts[n - 1].train_time_s <= traceinfo_training_time(t) + 1e-9);
    free(pts);
    trace_free(t);
    json_decref(j);
    free(dir);
}

// ---- bad input: one line naming the file and byte (or the token), non-zero exit

static void expect_failure(const char *args, int status, const char *want) {
    clirun_result r = clirun(args);
    cr_expect_eq(r.status, status, "speedup %s: exit %d (stderr %s)", args, r.status, r.err);
    cr_expect(strstr(r.err, want), "speedup %s: stderr '%s' lacks '%s'", args, r.err, want);
    cr_expect(strncmp(r.err, "speedup: ", 9) == 0 && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
              "not one 'speedup: ' line: '%s'", r.err);
    clirun_free(&r);
}

/* Replaces dir/name with the given bytes. */
static void overwrite(const char *dir, const char *name, const void *bytes, size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fwrite(bytes, 1, n, f);
    fclose(f);
}

Test(cli_train, truncated_images_name_file_and_byte) {
    char *dir = data_dir(), args[1024], path[1024];
    snprintf(path, sizeof path, "%s/train-images-idx3-ubyte", dir);
    truncate(path, 16 + 100 * 64 + 5);
    snprintf(args, sizeof args, "train --data %s " NET " --quiet", dir);
    expect_failure(args, 1, "train-images-idx3-ubyte: byte 6421: file ends, expected");
    free(dir);
}

Test(cli_train, wrong_magic_names_file) {
    char *dir = data_dir(), args[1024];
    overwrite(dir, "t10k-labels-idx1-ubyte", "PK\x03\x04garbage", 11);
    snprintf(args, sizeof args, "train --data %s " NET " --quiet", dir);
    expect_failure(args, 1, "t10k-labels-idx1-ubyte: byte 0: expected IDX magic");
    free(dir);
}

Test(cli_train, label_count_mismatch_is_refused) {
    char *dir = data_dir(), args[1024];
    overwrite(dir, "train-labels-idx1-ubyte", "\0\0\x08\x01\0\0\0\x03\x00\x01\x02", 11);
    snprintf(args, sizeof args, "train --data %s " NET " --quiet", dir);
    expect_failure(args, 1, "3 labels, but");
    free(dir);
}

Test(cli_train, absurd_dimensions_are_refused) {
    char *dir = data_dir(), args[1024];
    overwrite(dir, "train-images-idx3-ubyte", "\0\0\x08\x03\0\0\x01\0\x7f\xff\xff\xff\0\0\0\x08", 16);
    snprintf(args, sizeof args, "train --data %s " NET " --quiet", dir);
    expect_failure(args, 1, "train-images-idx3-ubyte: byte 8: expected dimension 1 in");
    free(dir);
}

Test(cli_train, missing_data_names_file) {
    expect_failure("train --data /nonexistent/dir --quiet", 1, "/nonexistent/dir/train-images-idx3-ubyte.gz");
}

Test(cli_train, bad_spec_points_at_token) {
    expect_failure("train --net conv5x5x32,relu,pool2,fc12x,fc10 --quiet", 2, "--net: token 4 'fc12x' (character 23)");
}

Test(cli_train, spec_with_wrong_class_count_is_refused) {
    char *dir = data_dir(), args[1024];
    snprintf(args, sizeof args, "train --data %s --net conv3x3x4,fc2 --quiet", dir);
    expect_failure(args, 1, "the last layer must be fc4");
    free(dir);
}

Test(cli_train, zero_threads_is_a_usage_error) {
    expect_failure("train --threads 0", 2, "--threads: expected");
}

Test(cli_train, corrupt_checkpoint_is_refused_by_eval_and_resume) {
    char *dir = data_dir(), args[1024];
    overwrite(dir, "bad.ckpt", "SPDCKPT\0\x01\0\0\0junkjunkjunk", 20);
    snprintf(args, sizeof args, "eval --data %s --checkpoint %s/bad.ckpt", dir, dir);
    expect_failure(args, 1, "bad.ckpt: byte 16: checksum mismatch");
    snprintf(args, sizeof args, "train --data %s " NET " --quiet --resume %s/bad.ckpt", dir, dir);
    expect_failure(args, 1, "bad.ckpt: byte 16: checksum mismatch");
    free(dir);
}

Test(cli_train, help_lists_every_flag_with_default) {
    clirun_result r = clirun("train --help");
    cr_expect_eq(r.status, 0);
    const char *flags[] = { "--data", "--limit", "--epochs", "--batch", "--lr", "--momentum", "--weight-decay",
                            "--schedule", "--net", "--seed", "--threads", "--checkpoint", "--resume", "--trace",
                            "--quiet", "--stop-after" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_expect(strstr(r.out, flags[i]), "--help lacks %s", flags[i]);
    clirun_free(&r);
}

Test(cli_train, reads_debian_fashion_mnist_by_default) {
    json_t *j = run_json("train --limit 64 --net conv3x3x2,relu,pool4,fc10 --epochs 1 --quiet");
    cr_expect_eq(json_integer_value(json_object_get(j, "train_examples")), 64);
    cr_expect_eq(json_integer_value(json_object_get(j, "test_examples")), 64);
    json_decref(j);
}

/* A one-epoch checkpoint of a 3-epoch run at batch 8, seed 1, the test net: the path. */
static void checkpoint_after_one_epoch(const char *dir, char *path, size_t cap) {
    snprintf(path, cap, "%s/c", dir);
    char args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --stop-after 1 --batch 8 --threads 1 --quiet "
             "--checkpoint %s", dir, path);
    json_decref(run_json(args));
}

Test(cli_train, resume_with_another_batch_or_seed_is_refused_naming_both_values) {
    char *dir = data_dir(), ckpt[1024], args[2048];
    checkpoint_after_one_epoch(dir, ckpt, sizeof ckpt);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 16 --seed 4 --quiet --resume %s", dir, ckpt);
    expect_failure(args, 1, "the checkpoint is of another run: --seed 1 in the checkpoint, 4 here; --batch 8 in the "
                            "checkpoint, 16 here");
    free(dir);
}

Test(cli_train, resume_with_another_net_limit_or_schedule_is_refused) {
    char *dir = data_dir(), ckpt[1024], args[2048];
    checkpoint_after_one_epoch(dir, ckpt, sizeof ckpt);
    snprintf(args, sizeof args, "train --data %s --net conv3x3x8,relu,pool2,fc16,relu,dropout0.25,fc4 --epochs 3 "
             "--batch 8 --quiet --resume %s", dir, ckpt);
    expect_failure(args, 1, "--net conv3x3x4,relu,pool2,fc16,relu,dropout0.25,fc4 in the checkpoint, "
                            "conv3x3x8,relu,pool2,fc16,relu,dropout0.25,fc4 here");
    snprintf(args, sizeof args, "train --data %s " NET " --limit 200 --epochs 3 --batch 8 --schedule step --quiet "
             "--resume %s", dir, ckpt);
    expect_failure(args, 1, "training examples (--data, --limit) 256 in the checkpoint, 200 here; --schedule cosine "
                            "in the checkpoint, step here");
    // The same layers spelled otherwise are the same network.
    snprintf(args, sizeof args, "train --data %s --net conv3x3x4,relu,pool2,fc16,relu,dropout0.250,fc4 --epochs 3 "
             "--batch 8 --threads 1 --quiet --resume %s", dir, ckpt);
    json_decref(run_json(args));
    free(dir);
}

Test(cli_train, evaluating_every_n_steps_changes_no_weight) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 16 --threads 1 --quiet", dir);
    json_t *plain = run_json(args);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 16 --threads 1 --quiet --eval-every 3", dir);
    json_t *evaluated = run_json(args);
    cr_expect_str_eq(json_string_value(json_object_get(evaluated, "params_crc32")),
                     json_string_value(json_object_get(plain, "params_crc32")));
    cr_expect_eq(json_array_size(json_object_get(evaluated, "subset_curve")), 10); /* steps 3, 6, ..., 30 */
    cr_expect_eq(json_array_size(json_object_get(plain, "subset_curve")), 0);
    cr_expect(json_is_null(json_object_get(plain, "stop_at_accuracy")));
    json_decref(plain), json_decref(evaluated);
    free(dir);
}

/* 4 classes: after one epoch far more than 5% of 64 are right. The schedule spans --epochs
 * 3, so stopping is --stop-after 1 with the same weights. */
Test(cli_train, stop_at_accuracy_stops_after_the_first_epoch_that_reaches_it) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 16 --threads 1 --quiet --stop-at-accuracy 0.05", dir);
    json_t *stopped = run_json(args);
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 3 --batch 16 --threads 1 --quiet --stop-after 1", dir);
    json_t *first = run_json(args);
    cr_expect_eq(json_array_size(json_object_get(stopped, "accuracy_curve")), 1);
    json_t *stop = json_object_get(stopped, "stop_at_accuracy");
    cr_expect(json_is_true(json_object_get(stop, "reached")));
    cr_expect_eq(json_integer_value(json_object_get(stop, "epoch")), 1);
    cr_expect_eq(num(stop, "target"), 0.05);
    cr_expect_eq(num(stop, "train_time_s"), num(json_array_get(json_object_get(stopped, "accuracy_curve"), 0), "train_time_s"));
    cr_expect_str_eq(json_string_value(json_object_get(stopped, "params_crc32")),
                     json_string_value(json_object_get(first, "params_crc32")), "another trajectory than --epochs 3's");
    json_decref(stopped), json_decref(first);
    free(dir);
}

/* --lr 0: the weights never move and a 4-class guess is far from 100%. */
Test(cli_train, a_target_never_reached_says_so_after_every_epoch) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s " NET " --epochs 2 --batch 16 --lr 0 --quiet --stop-at-accuracy 1", dir);
    json_t *j = run_json(args);
    cr_expect_eq(json_array_size(json_object_get(j, "accuracy_curve")), 2);
    json_t *stop = json_object_get(j, "stop_at_accuracy");
    cr_expect(json_is_false(json_object_get(stop, "reached")));
    cr_expect(json_is_null(json_object_get(stop, "epoch")));
    cr_expect(json_is_null(json_object_get(stop, "train_time_s")));
    json_decref(j);
    free(dir);
}

Test(cli_train, evaluating_a_model_the_workers_do_not_share_is_a_usage_error) {
    char *dir = data_dir(), args[2048];
    snprintf(args, sizeof args, "train --data %s --sync epoch --eval-every 4", dir);
    expect_failure(args, 2, "--eval-every with --sync epoch");
    snprintf(args, sizeof args, "train --data %s --sync every:3 --eval-every 4", dir);
    expect_failure(args, 2, "--eval-every 4 with --sync every:3: evaluate the averaged model, every multiple of 3 steps (e.g. --eval-every 6)");
    snprintf(args, sizeof args, "train --data %s --eval-subset 100", dir);
    expect_failure(args, 2, "--eval-subset goes with --eval-every");
    free(dir);
}

Test(cli_train, a_target_accuracy_outside_0_1_is_a_usage_error) {
    expect_failure("train --stop-at-accuracy 0", 2, "--stop-at-accuracy: expected a fraction in (0, 1], got '0'");
    expect_failure("train --stop-at-accuracy 90", 2, "--stop-at-accuracy: expected a fraction in (0, 1], got '90'");
    expect_failure("train --eval-every -1", 2, "--eval-every");
}
