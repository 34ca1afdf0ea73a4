/* bench/commbench.c through `mpirun --oversubscribe -np 2 speedup commbench`: real MPI
 * ranks, a trace with every pattern at every size, and α, β fitted from it. */
#define _POSIX_C_SOURCE 200809L
#include "fit/fit.h"
#include "tests/clirun.h"
#include "tests/synth.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const long sizes[] = { 8, 65536, 1819688 };

/* Runs the benchmark on 2 ranks; returns the trace it wrote (and its path in path). */
static trace *run_commbench(char *path, size_t pathlen, char *dir) {
    const char *mpiexec = getenv("MPIEXEC");
    const char *bin = getenv("SPEEDUP_BIN");
    cr_assert(mpiexec && bin, "MPIEXEC and SPEEDUP_BIN come from ctest");
    snprintf(path, pathlen, "%s/bench.trace.jsonl", dir);
    char cmd[2048];
    // Seven repeats, not three: the robust fit of beta must outvote a small message that
    // waited a time slice of the other test ctest runs beside this one.
    snprintf(cmd, sizeof cmd, "timeout 120 '%s' --oversubscribe --bind-to none -np 2 '%s' commbench --sizes "
             "8,65536,1819688 --repeats 7 --warmup 1 --trace '%s' >%s/out 2>&1", mpiexec, bin, path, dir);
    int st = system(cmd);
    char show[512], rm[512];
    snprintf(show, sizeof show, "cat '%s/out' >&2", dir);
    snprintf(rm, sizeof rm, "rm -f '%s/out'", dir);
    if (st != 0)
        cr_assert_eq(system(show), 0);
    cr_assert_eq(system(rm), 0);
    cr_assert_eq(st, 0, "mpirun ... speedup commbench failed (its output is above)");
    char err[512];
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    return t;
}

Test(commbench, records_every_pattern_at_every_size_on_both_ranks) {
    char *dir = clirun_tmpdir(), path[512];
    trace *t = run_commbench(path, sizeof path, dir);
    cr_assert_str_eq(t->run.net, FIT_COMMBENCH_NET);
    cr_assert_eq(t->run.config.workers, 2);
    cr_assert_eq(t->run.model_bytes, 1819688);
    const char *names[] = { "pingpong", "allreduce", "ps" };
    for (int r = 0; r < 2; r++)
        for (int p = 0; p < 3; p++)
            for (int s = 0; s < 3; s++) {
                int n = 0;
                for (long i = 0; i < t->n_events; i++) {
                    const trace_event *e = &t->events[i];
                    if (e->rank == r && e->bytes == sizes[s] && strcmp(e->name, names[p]) == 0) {
                        cr_assert_eq(e->ph, TRACE_COMM);
                        cr_assert_gt(e->t1_s, e->t0_s);
                        n++;
                    }
                }
                cr_assert_eq(n, 7, "rank %d, %s, %ld bytes: %d events, expected 7 (--repeats)", r, names[p],
                             sizes[s], n);
            }
    trace_free(t);
    remove(path);
    remove(dir);
    free(dir);
}

/* Bigger messages take longer: the fit finds a positive β for both topologies, and every
 * fitted value is finite, from the real benchmark plus synthetic training runs on the
 * same host (the fit needs training runs for the other parameters). */
Test(commbench, its_trace_pins_alpha_and_beta) {
    char *dir = clirun_tmpdir(), path[512];
    trace *bench = run_commbench(path, sizeof path, dir);
    synth_truth truth = { .times = synth_plain_times, .startup_noise_s = 0.01, .comm_noise = 0.03 };
    truth.p = (costmodel_params){ .c0_s = 0.003, .c1_s = 0.0005, .sigma = 0.15, .model_bytes = 1819688,
                                  .w0_s = 0.4, .w1_s = 0.12, .cv = 0.05, .host_cores = 2 };
    truth.p.link[0] = truth.p.link[1] = (costmodel_link){ 1e-5, 1e-9 };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 5);
    trace *tr[5] = { bench };
    const char *paths[5] = { path, "a", "b", "c", "d" };
    const int shapes[4][2] = { { 1, 1 }, { 2, 1 }, { 1, 2 }, { 2, 1 } };
    for (int i = 0; i < 4; i++) {
        job_config c = { .workers = shapes[i][0], .cores = shapes[i][1], .examples = 256, .batch = 32,
                               .epochs = 1, .topology = JOB_TOPO_PS };
        job_sync_parse(i == 3 ? "epoch" : "batch", &c.sync, &c.every_n);
        tr[i + 1] = synth_run(&truth, &c, bench->run.host, "cnn", rng);
    }
    fit_result r;
    char err[1024] = "";
    cr_assert_eq(fit_traces(tr, paths, 5, &r, err, sizeof err), 0, "%s", err);
    for (int topo = 0; topo < JOB_TOPO_COUNT; topo++) {
        const costmodel_link *l = &r.cal.params.link[topo];
        cr_assert(isfinite(l->alpha_s) && isfinite(l->beta_s_per_byte));
        cr_assert_gt(l->beta_s_per_byte, 0.0, "%s: beta 0", job_topology_name(topo));
        /* Shared memory moves far more than 10 MB/s and less than 1 TB/s. */
        cr_assert(l->beta_s_per_byte < 1e-7 && l->beta_s_per_byte > 1e-12, "beta %g", l->beta_s_per_byte);
    }
    fit_result_release(&r);
    for (int i = 0; i < 5; i++)
        trace_free(tr[i]);
    gsl_rng_free(rng);
    remove(path);
    remove(dir);
    free(dir);
}

/* --reps, commbench's older name of --repeats, still runs the same number of repetitions
 * and says once (rank 0 only) that it is the older name. */
Test(commbench, reads_its_older_reps_flag_with_a_note) {
    const char *mpiexec = getenv("MPIEXEC");
    const char *bin = getenv("SPEEDUP_BIN");
    cr_assert(mpiexec && bin, "MPIEXEC and SPEEDUP_BIN come from ctest");
    char *dir = clirun_tmpdir(), cmd[2048], path[600], errpath[600];
    snprintf(path, sizeof path, "%s/bench.trace.jsonl", dir);
    snprintf(errpath, sizeof errpath, "%s/err", dir);
    snprintf(cmd, sizeof cmd, "'%s' --oversubscribe -np 2 '%s' commbench --sizes 8 --reps 2 --warmup 0 --trace '%s' "
             ">/dev/null 2>'%s'", mpiexec, bin, path, errpath);
    cr_assert_eq(system(cmd), 0);
    FILE *f = fopen(errpath, "r");
    cr_assert_not_null(f);
    char line[512];
    int notes = 0;
    while (fgets(line, sizeof line, f))
        notes += strstr(line, "--reps is the older name of --repeats") != NULL;
    fclose(f);
    cr_assert_eq(notes, 1, "one note, from rank 0");
    char err[512];
    trace *t = trace_read(path, err, sizeof err);
    cr_assert_not_null(t, "%s", err);
    int n = 0;
    for (long i = 0; i < t->n_events; i++)
        n += t->events[i].rank == 0 && strcmp(t->events[i].name, "pingpong") == 0;
    cr_assert_eq(n, 2, "--reps 2: two timed ping-pongs on rank 0, got %d", n);
    trace_free(t);
    free(dir);
}
