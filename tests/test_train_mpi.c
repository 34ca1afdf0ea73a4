#define _POSIX_C_SOURCE 200809L
/* Data-parallel `speedup train` on real MPI ranks (mpirun --oversubscribe -np 2 / 3) on
 * small synthetic IDX files: K ranks in batch sync follow one rank's trajectory (to float
 * rounding), ps equals all-reduce, epoch sync on one rank is plain training, a killed rank
 * is named and --resume finishes as if nothing happened, the trace covers every rank, and
 * bad input ends every rank with a clear message (a `timeout` catches any hang). */
#include "model/trace.h"
#include "tests/clirun.h"
#include "train/checkpoint.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define NET "--net conv3x3x4,relu,pool2,fc16,relu,dropout0.25,fc4"
#define COMMON NET " --threads 1 --quiet --lr 0.05"

static char *data_dir(void) {
    char *dir = clirun_tmpdir();
    clirun_write_idx_set(dir, "train", 200, 1);
    clirun_write_idx_set(dir, "t10k", 64, 2);
    return dir;
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = '\0';
    fclose(f);
    return s;
}

/* Runs `speedup train ARGS` on np ranks through mpirun (np 0: no mpirun at all), under a
 * 60 s timeout; returns the exit status and what it printed (caller frees). */
static int run_train(const char *dir, int np, const char *args, char **out, char **err) {
    const char *mpiexec = getenv("MPIEXEC"), *bin = getenv("SPEEDUP_BIN");
    cr_assert(mpiexec && bin, "MPIEXEC and SPEEDUP_BIN come from ctest");
    char cmd[16384], launcher[1024] = "";
    if (np > 0)
        snprintf(launcher, sizeof launcher, "'%s' --oversubscribe --bind-to none -np %d ", mpiexec, np);
    snprintf(cmd, sizeof cmd, "OPENBLAS_NUM_THREADS=1 timeout 60 %s'%s' train --data %s %s >%s/stdout 2>%s/stderr",
             launcher, bin, dir, args, dir, dir);
    int st = system(cmd);
    char path[1024];
    snprintf(path, sizeof path, "%s/stdout", dir);
    char *o = slurp(path);
    snprintf(path, sizeof path, "%s/stderr", dir);
    char *e = slurp(path);
    if (out)
        *out = o;
    else
        free(o);
    if (err)
        *err = e;
    else
        free(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void must_train(const char *dir, int np, const char *args) {
    char *err = NULL;
    int st = run_train(dir, np, args, NULL, &err);
    cr_assert_eq(st, 0, "speedup train %s on %d ranks: exit %d: %s", args, np, st, err);
    free(err);
}

/* Largest |a - b| over the two checkpoints' parameters (and the same shapes). */
static double params_diff(const char *a, const char *b) {
    char err[512];
    checkpoint_state sa, sb;
    net *na = checkpoint_load(a, 1, &sa, err, sizeof err);
    cr_assert_not_null(na, "%s", err);
    net *nb = checkpoint_load(b, 1, &sb, err, sizeof err);
    cr_assert_not_null(nb, "%s", err);
    cr_assert_eq(na->n_params, nb->n_params);
    cr_assert_eq(sa.epochs_done, sb.epochs_done);
    double d = 0.0;
    for (long i = 0; i < na->n_params; i++)
        d = fmax(d, fabs((double)na->params[i] - (double)nb->params[i]));
    // A test must be able to fail: the runs moved the weights by far more than the tolerance.
    net_free(na);
    net_free(nb);
    return d;
}

/* Weights after 2 epochs move by ~0.1-1; summing a split batch's gradients changes only
 * the rounding, which 24 steps of SGD amplify to ~1e-6. */
#define ROUNDING 1e-4

Test(train_mpi, batch_sync_two_ranks_matches_one_rank) {
    char *dir = data_dir(), args[4096], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/one", dir);
    snprintf(b, sizeof b, "%s/two", dir);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --checkpoint %s", a);
    must_train(dir, 0, args);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --sync batch --topology allreduce --checkpoint %s", b);
    must_train(dir, 2, args);
    double d = params_diff(a, b);
    cr_assert(d < ROUNDING, "K=2 differs from K=1 by %g", d);
    free(dir);
}

Test(train_mpi, batch_sync_three_ranks_uneven_split_matches_one_rank) {
    // 200 examples, B = 16: slices of 6, 5, 5 and a last global batch of 8 (3, 3, 2).
    char *dir = data_dir(), args[4096], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/one", dir);
    snprintf(b, sizeof b, "%s/three", dir);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --checkpoint %s", a);
    must_train(dir, 0, args);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --checkpoint %s", b);
    must_train(dir, 3, args);
    double d = params_diff(a, b);
    cr_assert(d < ROUNDING, "K=3 differs from K=1 by %g", d);
    free(dir);
}

Test(train_mpi, ps_and_allreduce_give_the_same_weights_in_batch_sync) {
    char *dir = data_dir(), args[4096], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/ps", dir);
    snprintf(b, sizeof b, "%s/ar", dir);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --topology ps --checkpoint %s", a);
    must_train(dir, 2, args);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --topology allreduce --checkpoint %s", b);
    must_train(dir, 2, args);
    double d = params_diff(a, b);
    cr_assert(d < ROUNDING, "ps differs from allreduce by %g", d);
    free(dir);
}

Test(train_mpi, dedicated_master_with_two_workers_matches_one_rank) {
    char *dir = data_dir(), args[4096], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/one", dir);
    snprintf(b, sizeof b, "%s/ded", dir);
    snprintf(args, sizeof args, COMMON " --epochs 1 --batch 16 --checkpoint %s", a);
    must_train(dir, 0, args);
    snprintf(args, sizeof args, COMMON " --epochs 1 --batch 16 --topology ps --master dedicated --checkpoint %s", b);
    must_train(dir, 3, args);
    double d = params_diff(a, b);
    cr_assert(d < ROUNDING, "dedicated master + 2 workers differs from K=1 by %g", d);
    free(dir);
}

Test(train_mpi, epoch_sync_on_one_rank_is_plain_training) {
    char *dir = data_dir(), args[4096], a[1024], b[1024];
    snprintf(a, sizeof a, "%s/plain", dir);
    snprintf(b, sizeof b, "%s/epoch", dir);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --checkpoint %s", a);
    must_train(dir, 0, args);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --sync epoch --checkpoint %s", b);
    must_train(dir, 1, args);
    cr_assert_eq(params_diff(a, b), 0.0, "one rank of epoch sync must be plain training, bit for bit");
    free(dir);
}

Test(train_mpi, epoch_and_every_n_sync_learn_on_two_ranks) {
    char *dir = data_dir(), args[4096], *out = NULL, *err = NULL;
    const char *modes[] = { "epoch", "every:3" };
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, COMMON " --epochs 4 --batch 8 --sync %s --topology ps", modes[i]);
        int st = run_train(dir, 2, args, &out, &err);
        cr_assert_eq(st, 0, "%s: exit %d: %s", modes[i], st, err);
        const char *p = strstr(out, "\"test_accuracy\":");
        cr_assert_not_null(p, "%s", out);
        double acc = atof(p + 16);
        // 4 classes: chance is 0.25; the quadrant pattern is easy.
        cr_assert(acc > 0.6, "--sync %s: accuracy %g", modes[i], acc);
        free(out);
        free(err);
    }
    free(dir);
}

Test(train_mpi, killed_rank_is_named_and_resume_matches_uninterrupted) {
    char *dir = data_dir(), args[4096], a[1024], b[1024], *err = NULL;
    snprintf(a, sizeof a, "%s/full", dir);
    snprintf(b, sizeof b, "%s/crash", dir);
    snprintf(args, sizeof args, COMMON " --epochs 3 --batch 16 --checkpoint %s", a);
    must_train(dir, 2, args);
    // 13 steps per epoch: step 20 is in the middle of the second epoch. --workers 2
    // launches mpirun itself (its MPIEXEC) and reads the failure from it.
    snprintf(args, sizeof args, COMMON " --workers 2 --oversubscribe --epochs 3 --batch 16 --checkpoint %s "
             "--fail-rank 1 --fail-at-step 20", b);
    int st = run_train(dir, 0, args, NULL, &err);
    cr_assert_neq(st, 0);
    cr_assert_neq(st, 124, "a rank hung after its peer died");
    cr_assert_not_null(strstr(err, "speedup: rank 1 died"), "%s", err);
    cr_assert_not_null(strstr(err, "after epoch 1"), "%s", err);
    free(err);
    snprintf(args, sizeof args, COMMON " --workers 2 --oversubscribe --epochs 3 --batch 16 --checkpoint %s "
             "--resume %s", b, b);
    must_train(dir, 0, args);
    double d = params_diff(a, b);
    cr_assert(d < 1e-6, "resumed run differs from the uninterrupted one by %g", d);
    free(dir);
}

Test(train_mpi, one_trace_covers_every_rank_with_wait_and_comm_per_step) {
    char *dir = data_dir(), args[4096], path[1024], *out = NULL, terr[512];
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    snprintf(args, sizeof args, COMMON " --epochs 2 --batch 16 --topology ps --trace %s", path);
    int st = run_train(dir, 3, args, &out, NULL);
    cr_assert_eq(st, 0, "%s", out);
    cr_assert_not_null(strstr(out, "\"peak_rss_mib_per_rank\":["), "%s", out);
    trace *t = trace_read(path, terr, sizeof terr);
    cr_assert_not_null(t, "%s", terr);
    cr_assert_eq(t->run.config.workers, 3);
    cr_assert_eq(t->run.config.topology, COSTMODEL_TOPO_PS);
    cr_assert_eq(t->run.model_bytes, 4L * (4 * 9 + 4 + 64 * 16 + 16 + 16 * 4 + 4));
    for (int r = 0; r < 3; r++) {
        double first = 1e30, last = -1e30, sum = 0.0;
        int init = 0, load = 0, build = 0, comm = 0, wait = 0, compute = 0, eval = 0;
        for (long i = 0; i < t->n_events; i++) {
            const trace_event *e = &t->events[i];
            if (e->rank != r)
                continue;
            first = fmin(first, e->t0_s);
            last = fmax(last, e->t1_s);
            sum += e->t1_s - e->t0_s;
            cr_assert(e->t0_s >= 0.0 && e->t1_s >= e->t0_s, "rank %d: event at %g..%g", r, e->t0_s, e->t1_s);
            init += e->ph == TRACE_STARTUP && !strcmp(e->name, "mpi_init");
            load += e->ph == TRACE_STARTUP && !strcmp(e->name, "data_load");
            build += e->ph == TRACE_STARTUP && !strcmp(e->name, "model_build");
            compute += e->ph == TRACE_COMPUTE;
            wait += e->ph == TRACE_WAIT;
            eval += e->ph == TRACE_EVAL;
            if (e->ph == TRACE_COMM) {
                comm++;
                cr_assert_eq(e->bytes, t->run.model_bytes);
                cr_assert_str_eq(e->name, "ps");
            }
        }
        cr_assert_eq(init + load + build, 3, "rank %d: start-up phases", r);
        // 200 examples, B = 16: 13 steps per epoch, each one compute, one wait, one comm.
        cr_assert_eq(compute, 26, "rank %d", r);
        cr_assert_eq(wait, 26, "rank %d", r);
        cr_assert_eq(comm, 26, "rank %d", r);
        cr_assert_eq(eval, 2, "rank %d", r);
        cr_assert(sum >= 0.98 * (last - first), "rank %d: phases cover %g of %g s", r, sum, last - first);
    }
    trace_free(t);
    free(out);
    free(dir);
}

/* Bad input on 2 ranks: exit status want, err contains what, and no rank hangs. */
static void refuses(int np, const char *extra, int want, const char *what) {
    char *dir = data_dir(), args[4096], *err = NULL;
    snprintf(args, sizeof args, COMMON " --epochs 1 --batch 16 %s", extra);
    int st = run_train(dir, np, args, NULL, &err);
    cr_assert_neq(st, 124, "%s: a rank hung", extra);
    cr_assert_eq(st, want, "%s: exit %d: %s", extra, st, err);
    cr_assert_not_null(strstr(err, what), "%s: expected '%s' in: %s", extra, what, err);
    free(err);
    free(dir);
}

Test(train_mpi, unknown_sync_mode_is_a_usage_error) { refuses(2, "--sync sometimes", 2, "--sync: expected"); }
Test(train_mpi, every_zero_is_a_usage_error) { refuses(2, "--sync every:0", 2, "--sync: expected"); }
Test(train_mpi, unknown_topology_is_a_usage_error) { refuses(2, "--topology ring", 2, "--topology: expected"); }
Test(train_mpi, dedicated_master_needs_ps) {
    refuses(2, "--master dedicated --topology allreduce", 2, "needs --topology ps");
}
Test(train_mpi, more_ranks_than_examples_fails_on_every_rank) {
    refuses(3, "--limit 2", 1, "2 training examples for 3 training ranks");
}

Test(train_mpi, corrupt_checkpoint_on_resume_fails_on_every_rank) {
    char *dir = data_dir(), path[1024], extra[1200];
    snprintf(path, sizeof path, "%s/ck", dir);
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    fputs("SPDCKPT\0 this is not a checkpoint", f);
    fclose(f);
    snprintf(extra, sizeof extra, "--resume %s", path);
    refuses(2, extra, 1, path);
    free(dir);
}

// ---- K > B refused

#define K_OVER_B "batch sync splits the global batch over the workers: 3 workers need a batch of 3 or more (got 2)"

Test(train_mpi, batch_sync_with_more_workers_than_the_batch_is_refused_on_every_rank) {
    refuses(3, "--batch 2", 1, K_OVER_B "; use a larger batch or --batch-per-worker");
    refuses(4, "--batch 2 --topology ps --master dedicated", 1, K_OVER_B);
}

Test(train_mpi, more_workers_than_the_batch_run_with_batch_per_worker_or_local_sgd) {
    char *dir = data_dir();
    must_train(dir, 3, COMMON " --epochs 1 --batch 2 --limit 48 --batch-per-worker");
    must_train(dir, 3, COMMON " --epochs 1 --batch 2 --limit 48 --sync epoch");
    free(dir);
}
