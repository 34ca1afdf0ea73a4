/* Clusters nobody here built: the exchanges a published cluster runs (hierarchical and
 * flat rings, sharded parameter servers), worked on paper; the table calibration that
 * recovers them; and `--cluster MxG` on the calibrated fabric, through the binary. */
#include "fit/table.h"
#include "model/costmodel.h"
#include "model/uncertainty.h"
#include "sim/job.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_rel(double got, double want, double tol, const char *what) {
    cr_assert(fabs(got - want) <= tol * fabs(want), "%s: got %.12g, want %.12g", what, got, want);
}

/* 2 machines × 4 GPUs: inside, α 10 µs and 1e-10 s/byte; across, 100 µs more and
 * 1e-9 s/byte; 1 MB of gradients. */
static costmodel_params two_by_four(costmodel_allreduce algorithm) {
    costmodel_params p = { .c1_s = 0.001, .model_bytes = 1e6, .host_cores = 4, .machines = 2, .worker_device = 1,
                           .allreduce_algorithm = algorithm };
    p.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ 1e-5, 1e-10 };
    p.link[JOB_TOPO_PS] = (costmodel_link){ 1e-5, 1e-10 };
    p.net = (costmodel_link){ 1e-4, 1e-9 };
    return p;
}

static job_config weak(int workers, job_topology topology) {
    return (job_config){ .workers = workers, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1, .topology = topology,
                         .master = JOB_MASTER_WORKER, .batch_per_worker = true, .examples = workers * 100L,
                         .batch = 100, .epochs = 1 };
}

Test(table, a_hierarchical_ring_on_two_machines_of_four_is_worked_by_hand) {
    /* Inside: 3 steps of 10 µs + 1e-10·(1e6/4) = 35 µs, reduce-scatter and all-gather:
     * 210 µs. Across: 2(M − 1) = 2 steps of (10 + 100) µs + 1e-9·(1e6/2) = 610 µs:
     * 1.22 ms. S = 1.43 ms. */
    const costmodel_params p = two_by_four(COSTMODEL_ALLREDUCE_HIERARCHICAL);
    const job_config c = weak(8, JOB_TOPO_ALLREDUCE);
    char err[256];
    cr_assert_eq(costmodel_check(&p, &c, err, sizeof err), 0, "%s", err);
    assert_rel(costmodel_sync_time(&p, &c), 1.43e-3, 1e-12, "hierarchical S(8)");
    /* The flat ring: 14 steps paced by a network hop, 110 µs + 1e-9·(1e6/8) = 235 µs:
     * 3.29 ms; either: their mean, 2.36 ms. */
    const costmodel_params ring = two_by_four(COSTMODEL_ALLREDUCE_RING);
    assert_rel(costmodel_sync_time(&ring, &c), 3.29e-3, 1e-12, "ring S(8)");
    const costmodel_params either = two_by_four(COSTMODEL_ALLREDUCE_EITHER);
    assert_rel(costmodel_sync_time(&either, &c), 2.36e-3, 1e-12, "either S(8)");
    /* Inside one machine every algorithm is the ring: 6 steps of 35 µs. */
    const job_config four = weak(4, JOB_TOPO_ALLREDUCE);
    assert_rel(costmodel_sync_time(&p, &four), 2.1e-4, 1e-12, "S(4) on one machine");
}

Test(table, either_widens_the_interval_by_the_gap_between_the_two_algorithms) {
    const costmodel_params p = two_by_four(COSTMODEL_ALLREDUCE_EITHER);
    const job_config c = weak(8, JOB_TOPO_ALLREDUCE);
    /* Step 0.1 s; T_ring = 0.10329, T_hier = 0.10143: sd ln T = |ln(T_ring/T_hier)|/2. */
    const uncertainty_interval pi = uncertainty_closed_form(&p, &c, NULL);
    assert_rel(pi.sd_ln_time, 0.5 * log(0.10329 / 0.10143), 1e-9, "sd of ln T");
}

Test(table, the_simulator_plays_the_hierarchical_stages_the_closed_form_sums) {
    job_spec spec = { .params = two_by_four(COSTMODEL_ALLREDUCE_HIERARCHICAL), .config = weak(8, JOB_TOPO_ALLREDUCE) };
    spec.config.examples = 8 * 100 * 20; /* 20 steps */
    char err[256] = "";
    job *j = job_new(&spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    job_result r;
    cr_assert_eq(job_run(j, 1, &r, err, sizeof err), 0, "%s", err);
    /* CV = 0: 20 rounds of a 0.1 s step and 1.43 ms of exchange. */
    assert_rel(r.makespan_s, 20 * (0.1 + 1.43e-3), 1e-9, "simulated time");
    job_free(j);
}

Test(table, a_sharded_parameter_server_is_worked_by_hand) {
    /* 4 machines × 2 workers, 4 shards on the workers' machines: inside, 1 step of
     * 10 µs + 1e-10·(1e6/2) = 60 µs each way. A phase: each machine sends 3/4 of 1 MB to
     * the other 3 shards and takes 3 quarters in, 3 messages of 110 µs and 7.5e5 bytes at
     * 1e-9: 1.08 ms. S = 2·(60 µs + 1.08 ms) = 2.28 ms. */
    costmodel_params p = two_by_four(COSTMODEL_ALLREDUCE_RING);
    p.machines = 4, p.host_cores = 2, p.ps_shards = 4;
    const job_config c = weak(8, JOB_TOPO_PS);
    assert_rel(costmodel_sync_time(&p, &c), 2.28e-3, 1e-12, "4 shards, colocated");
    /* 2 shards: a machine with one takes 3 halves in: 3 messages, 1.5e6 bytes: 1.83 ms a
     * phase, S = 3.78 ms. */
    p.ps_shards = 2;
    assert_rel(costmodel_sync_time(&p, &c), 2 * (6e-5 + 3 * 1.1e-4 + 1.5e-3), 1e-12, "2 shards, colocated");
    /* 4 shards on machines of their own: a worker machine sends 1 MB in 4 messages, a
     * server takes 4 quarters: 4·110 µs + 1e-3 s = 1.44 ms a phase. */
    p.ps_shards = 4, p.ps_separate = 1;
    assert_rel(costmodel_sync_time(&p, &c), 2 * (6e-5 + 1.44e-3), 1e-12, "4 shards, separate");
}

/* 4 machines of one worker, 4 shards on them, across 110 µs and 1e-9 s/byte a message;
 * 1 MB of gradients of which one tensor is 0.3 MB. */
static costmodel_params four_shards_with_a_largest_tensor(void) {
    costmodel_params p = two_by_four(COSTMODEL_ALLREDUCE_RING);
    p.machines = 4, p.host_cores = 1, p.ps_shards = 4, p.ps_largest_bytes = 3e5;
    return p;
}

Test(table, a_largest_tensor_paces_the_shard_that_holds_it_worked_by_hand) {
    costmodel_params p = four_shards_with_a_largest_tensor();
    const job_config c = weak(4, JOB_TOPO_PS);
    /* Its shard holds 0.3 MB, the other three 0.7/3 MB each. A phase: that machine takes
     * 0.3 MB from each of the 3 others, 3·110 µs + 9e5·1e-9 = 1.23 ms (a machine sends
     * 1 MB − 0.7/3 MB in 3 messages: 1.0967 ms, less). S = 2·1.23 ms. */
    assert_rel(costmodel_sync_time(&p, &c), 2 * 1.23e-3, 1e-12, "largest tensor 0.3 MB");
    /* Even shards: 3 messages of 0.25 MB, 3·110 µs + 7.5e-4 = 1.08 ms a phase. */
    p.ps_largest_bytes = 0;
    assert_rel(costmodel_sync_time(&p, &c), 2 * 1.08e-3, 1e-12, "even shards");
}

Test(table, the_line_rate_floors_a_round_its_steps_cannot_hide) {
    costmodel_params p = four_shards_with_a_largest_tensor();
    p.net_line_beta_s_per_byte = 1e-7; /* a 10 MB/s line */
    job_spec spec = { .params = p, .config = weak(4, JOB_TOPO_PS) };
    /* Into the machine with the 0.3 MB shard a round: 3·0.3 MB of pushes and its own pulls
     * of the other 0.7 MB, 1.6 MB at 1e-7 s/byte = 0.16 s. The step (0.001 s·100) hides
     * 0.1 s of it: 0.06 s exposed, more than S = 2.46 ms. A round takes 0.16 s. */
    assert_rel(costmodel_line_floor_time(&p, &spec.config), 0.16, 1e-12, "floor");
    assert_rel(costmodel_round_time(&p, &spec.config), 0.16, 1e-12, "round at the floor");
    spec.config.examples = 4 * 100 * 20; /* 20 steps, CV = 0: the simulator plays the same */
    char err[256] = "";
    job *j = job_new(&spec, err, sizeof err);
    cr_assert_not_null(j, "%s", err);
    job_result r;
    cr_assert_eq(job_run(j, 1, &r, err, sizeof err), 0, "%s", err);
    assert_rel(r.makespan_s, 20 * 0.16, 1e-9, "simulated time");
    job_free(j);
    /* A line ten times faster: 16 ms, under the step: S alone is exposed. */
    p.net_line_beta_s_per_byte = 1e-8;
    assert_rel(costmodel_round_time(&p, &spec.config), 0.1 + 2 * 1.23e-3, 1e-12, "floor under the step");
}

/* Three rows that the model of two_by_four (hierarchical) with α stated (5 µs inside,
 * 25 µs across) explains exactly: K = 1 at 0.2 s; K = 4 on one machine, 6 steps of
 * 5 µs + 1e-11·2.5e7 = 255 µs, 1.53 ms more; K = 8 on two, that inside and 2 steps of
 * 30 µs + 1e-10·5e7 = 5.03 ms across: 11.59 ms more. */
static const char *const consistent_table = "# three consistent rows\n"
                                            "workers,machines,local_batch,throughput\n"
                                            "1,1,100,500\n"
                                            "4,1,100,1984.8161564035\n"
                                            "8,2,100,3780.8970178175\n";

/* TEXT as a table file read into *t (table_free it), fitted as a hierarchical all-reduce
 * of 1e8 bytes with the stated defaults. */
static calibration fit_hierarchical(const char *text, table *t, calibration_fit *fit) {
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "t.csv", text);
    char err[512];
    cr_assert_eq(table_read(path, t, err, sizeof err), 0, "%s", err);
    table_opts o = table_opts_default();
    o.model_bytes = 1e8;
    o.algorithm = COSTMODEL_ALLREDUCE_HIERARCHICAL;
    calibration cal;
    cr_assert_eq(table_fit(t, &o, &cal, fit, err, sizeof err), 0, "%s", err);
    free(path);
    free(dir);
    return cal;
}

Test(table, three_consistent_rows_give_the_step_and_both_links_exactly) {
    table t;
    calibration_fit fit;
    const calibration cal = fit_hierarchical(consistent_table, &t, &fit);
    cr_assert_eq(t.n, 3);
    assert_rel(cal.params.c1_s, 0.002, 1e-9, "c1");
    cr_assert_eq(cal.params.c0_s, 0);
    assert_rel(cal.params.link[JOB_TOPO_ALLREDUCE].beta_s_per_byte, 1e-11, 1e-6, "beta inside");
    assert_rel(cal.params.net.beta_s_per_byte, 1e-10, 1e-6, "beta across");
    assert_rel(cal.params.net.alpha_s, 25e-6, 1e-12, "alpha across (stated)");
    cr_assert_eq(cal.params.host_cores, 4);
    cr_assert_eq(cal.range_workers, 8);
    cr_assert(cal.stderr_.net_beta > 0, "the fabric's rate has a standard error from the rows' 3%% spread");
    for (int i = 0; i < t.n; i++)
        assert_rel(table_predict_step_s(&cal.params, &t.rows[i], JOB_TOPO_ALLREDUCE), table_row_step_s(&t.rows[i]),
                   1e-9, "a row against the fit");
    table_free(&t);
}

/* The rows' verdict: three rows fit three parameters (c1, β inside, β across) exactly and
 * leave nothing to test the model with; a repeat of the one-worker row and a K = 2 row of
 * the same model (inside one machine: 2 steps of 5 µs + 1e-11·5e7 = 1.01 ms, step
 * 0.20101 s, 200/0.20101 = 994.9753744 examples/s) leave one row over, and every row
 * within its spread. */
Test(table, rows_that_fit_their_parameters_exactly_are_not_judged_and_rows_left_over_are) {
    table t;
    calibration_fit fit;
    fit_hierarchical(consistent_table, &t, &fit);
    table_free(&t);
    cr_assert(fit.has_verdict && !fit.verdict_poor, "%s", fit.verdict);
    cr_assert(strstr(fit.verdict, "not judged: 3 rows fit 3 parameters exactly"), "%s", fit.verdict);
    fit_hierarchical("workers,machines,local_batch,throughput\n"
                     "1,1,100,500\n1,1,100,500\n2,1,100,994.9753743595\n"
                     "4,1,100,1984.8161564035\n8,2,100,3780.8970178175\n",
                     &t, &fit);
    table_free(&t);
    cr_assert(!fit.verdict_poor, "%s", fit.verdict);
    cr_assert(strstr(fit.verdict, "good: every row within 3 of its spreads of the model (5 rows, 4 parameters"),
              "%s", fit.verdict);
}

/* Two GPUs that each step faster than one alone: K = 1 takes 32/100 = 0.32 s a step, K = 2
 * 2·32/250 = 0.256 s. No exchange is negative, so the model's nearest is the one worker's
 * step plus the stated latency's ring, 0.32 s + 2·5 µs = 0.32001 s: +25.0%, ln(0.32001/0.256)
 * / 0.03 = 7.44 spreads. The verdict is poor and names the row's line; --strict exits 1 and
 * writes the file all the same, with the verdict in it. */
Test(table, a_row_that_scales_better_than_one_worker_makes_the_verdict_poor) {
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "t.csv", "workers,machines,local_batch,throughput\n"
                                                                         "1,1,32,100\n2,1,32,250\n"),
         cmd[1024];
    snprintf(cmd, sizeof cmd, "calibrate --from-table %s --model-bytes 100MB --topology allreduce --strict --out "
             "%s/cal.json", path, dir);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 1, "%s", r.out);
    cr_assert(strstr(r.out, "verdict: poor: 1 row the model cannot reach within 3 of their spreads: line 3 (K = 2 "
                            "on 1 machine) measured 0.256 s a step, the model's nearest 0.32 s (+25.0%, 7.4 of its "
                            "spreads): shorter than one worker's step at its local batch (0.32 s)"),
              "%s", r.out);
    cr_assert(strstr(r.err, "the verdict is poor"), "%s", r.err);
    clirun_free(&r);
    char json[1024];
    snprintf(json, sizeof json, "%s/cal.json", dir);
    FILE *f = fopen(json, "r");
    cr_assert_not_null(f, "--strict writes the file all the same");
    char text[1 << 16];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    fclose(f);
    cr_assert(strstr(text, "\"quality\": \"poor\""), "%s", text);
    /* The miss goes into every interval: model_cv = ln(0.32001/0.256) = 0.2231748 (the two
     * rows fit c1 and β inside, none left over, so the one row's miss counts whole). */
    calibration cal;
    char err[512];
    cr_assert_eq(calibration_read(json, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(cal.params.model_cv, log(0.32001 / 0.256), 1e-6);
    free(path);
    free(dir);
}

/* consistent_table's model with a fabric latency of 1 ms, at two machine counts: K = 8 on
 * 2 machines, 1.53 ms inside and 2 steps of 5 µs + 1 ms + 1e-10·5e7 = 12.01 ms across
 * (step 0.21354 s); K = 16 on 4, 6 steps of 5 µs + 1 ms + 1e-10·2.5e7 = 21.03 ms (0.22256
 * s). Two rows fit any (α, β) exactly: whether α is known is how well they are measured. */
static const char *const two_counts_rows[] = { "1,1,100,500", "4,1,100,1984.8161564035", "8,2,100,3746.3707033811",
                                               "16,4,100,7189.0726096334" };

/* Those rows, each with std = rel × its throughput (rel 0: none given), fitted;
 * *alpha_stated: a note says net_alpha is stated. */
static calibration fit_two_counts(double rel, bool *alpha_stated) {
    char text[512];
    int len = snprintf(text, sizeof text, "workers,machines,local_batch,throughput,std\n");
    for (int i = 0; i < 4; i++) {
        const double throughput = atof(strrchr(two_counts_rows[i], ',') + 1);
        len += snprintf(text + len, sizeof text - (size_t)len, "%s,%.6g\n", two_counts_rows[i], rel * throughput);
    }
    table t;
    calibration_fit fit;
    const calibration cal = fit_hierarchical(text, &t, &fit);
    table_free(&t);
    *alpha_stated = false;
    for (int i = 0; i < fit.n_notes; i++)
        *alpha_stated |= strcmp(fit.notes[i].param, "net_alpha") == 0 && strstr(fit.notes[i].text, "stated") != NULL;
    return cal;
}

Test(table, a_fabric_latency_the_rows_do_not_determine_is_stated_not_fitted) {
    /* At the stated 3% a row (6.4 ms of a step) the 1 ms is well inside its standard
     * error: α stays the stated 25 µs and β is the weighted least squares of the rest, by
     * hand: y = 12.01 − 2·30 µs and 21.03 − 6·30 µs (ms) on x = 1e8 and 1.5e8 bytes,
     * weights 1/(0.03·step)²: 1.3265093e-10 s/byte. */
    bool stated;
    calibration cal = fit_two_counts(0, &stated);
    assert_rel(cal.params.net.alpha_s, 25e-6, 1e-12, "alpha across (stated)");
    assert_rel(cal.params.net.beta_s_per_byte, 1.3265093412897e-10, 1e-6, "beta across");
    cr_assert(stated, "a note says the latency is stated");
    /* Stated, it is known to its own size (fabrics differ tenfold): drawn at ±25 µs. */
    assert_rel(cal.stderr_.net_alpha, 25e-6, 1e-12, "a stated latency's standard error");
    /* Measured to 0.01% a row, the same rows determine it: 1 ms and 1e-10 s/byte, with
     * the fit's own standard error, well under half of it. */
    cal = fit_two_counts(1e-4, &stated);
    assert_rel(cal.params.net.alpha_s, 1e-3, 1e-5, "alpha across (fitted)");
    assert_rel(cal.params.net.beta_s_per_byte, 1e-10, 1e-5, "beta across (fitted)");
    cr_assert(!stated, "no note: the latency is fitted");
    cr_assert(cal.stderr_.net_alpha > 0 && cal.stderr_.net_alpha < 0.5e-3, "se %g", cal.stderr_.net_alpha);
}

Test(table, bad_tables_are_refused_with_the_file_and_line) {
    static const struct { const char *text, *needle; } bad[] = {
        { "workers,machines,throughput\n1,1,5\n", "no column 'local_batch'" },
        { "workers,machines,local_batch,throughput\n1,1,32,fast\n", "line 2: throughput: expected a number" },
        { "workers,machines,local_batch,throughput\n2,3,32,100\n", "line 2: 3 machines for 2 workers" },
        { "workers,machines,local_batch,throughput\n1.5,1,32,100\n", "line 2: workers: expected a whole number" },
        { "workers,machines,local_batch,throughput\n1,1,32\n", "line 2: 3 fields, the header has 4" },
        { "# nothing\n", "no header line" },
    };
    char *dir = clirun_tmpdir();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *path = clirun_write_file(dir, "bad.csv", bad[i].text);
        table t;
        char err[512] = "";
        cr_assert_eq(table_read(path, &t, err, sizeof err), -1, "%s", bad[i].text);
        cr_assert(strstr(err, bad[i].needle) && strstr(err, path), "%s: %s", bad[i].needle, err);
        free(path);
    }
    free(dir);
}

Test(table, a_table_without_one_worker_is_refused_by_the_fit) {
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "t.csv", "workers,machines,local_batch,throughput\n"
                                                                         "8,1,100,3000\n");
    table t;
    char err[512];
    cr_assert_eq(table_read(path, &t, err, sizeof err), 0, "%s", err);
    table_opts o = table_opts_default();
    o.model_bytes = 1e8;
    calibration cal;
    calibration_fit fit;
    cr_assert_eq(table_fit(&t, &o, &cal, &fit, err, sizeof err), -1);
    cr_assert(strstr(err, "no row with one worker"), "%s", err);
    table_free(&t);
    free(path);
    free(dir);
}

/* `model --cluster 8x4` on a table calibration predicts with the fabric it measured: the
 * same time as naming that fabric's rate and latency, which the file states. */
Test(table, cluster_without_a_rate_uses_the_calibrated_fabric) {
    char *dir = clirun_tmpdir(), *path = clirun_write_file(dir, "t.csv", consistent_table);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "calibrate --from-table %s --model-bytes 100MB --allreduce hierarchical --out %s/cal.json",
             path, dir);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "the fabric's effective rate: 80 Gbit/s"), "%s", r.out); /* 1/1e-10 bytes/s */
    clirun_free(&r);
    const char *grid = "--workers 32 --cores 1 --sync batch --topology allreduce --scaling weak --batch 100 "
                       "--examples 32000 --epochs 1 --csv";
    snprintf(cmd, sizeof cmd, "model --calib %s/cal.json --cluster 8x4 %s", dir, grid);
    clirun_result a = clirun(cmd);
    snprintf(cmd, sizeof cmd, "model --calib %s/cal.json --cluster 8x4@80gbit,25us %s", dir, grid);
    clirun_result b = clirun(cmd);
    cr_assert_eq(a.status, 0, "%s", a.err);
    cr_assert_eq(b.status, 0, "%s", b.err);
    /* 10 steps of 0.2 s, each with 1.53 ms inside and 2·7 steps of 30 µs + 1e-10·1.25e7 s
     * across (hierarchical on 8 machines: 14·1.28 ms = 17.92 ms). */
    double ta, tb;
    cr_assert_eq(sscanf(strchr(a.out, '\n') + 1, "32,1,batch,allreduce,%lf", &ta), 1, "%s", a.out);
    cr_assert_eq(sscanf(strchr(b.out, '\n') + 1, "32,1,batch,allreduce,%lf", &tb), 1, "%s", b.out);
    assert_rel(ta, 10 * (0.2 + 1.53e-3 + 14 * (30e-6 + 1.25e-3)), 1e-6, "8x4 on the calibrated fabric");
    assert_rel(tb, ta, 1e-9, "the same fabric named");
    clirun_free(&a);
    clirun_free(&b);
    /* Without a fabric to take it from (the seed-like example), a rate is needed. */
    clirun_assert_refused("model --cluster 8x4 --workers 8", 2, "no rate");
    free(path);
    free(dir);
}

/* consistent_table calibrated by the binary into DIR/cal.json: DIR (free it, and *path). */
static char *calibrated_consistent_table(char **path) {
    char *dir = clirun_tmpdir(), cmd[1024];
    *path = clirun_write_file(dir, "t.csv", consistent_table);
    snprintf(cmd, sizeof cmd, "calibrate --from-table %s --model-bytes 100MB --out %s/cal.json", *path, dir);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    return dir;
}

Test(table, rows_beyond_the_calibrated_range_are_named_under_the_table) {
    /* consistent_table measured at most 8 workers on 2 machines: on 8x4, K = 16 and 32
     * (4 and 8 machines) go beyond it, K = 4 and 8 do not. */
    char *path, *dir = calibrated_consistent_table(&path), cmd[1024];
    const char *grid = "--sync batch --topology allreduce --scaling weak --batch 100 --examples 32000 --epochs 1";
    snprintf(cmd, sizeof cmd, "model --calib %s/cal.json --cluster 8x4 --workers 4,8,16,32 %s", dir, grid);
    clirun_result beyond = clirun(cmd);
    cr_assert_eq(beyond.status, 0, "%s", beyond.err);
    cr_assert(clirun_says(beyond.out, "extrapolated: 2 rows (K = 16, 32) beyond the calibration, which measured at "
                                      "most 8 workers on 2 machines"), "%s", beyond.out);
    snprintf(cmd, sizeof cmd, "model --calib %s/cal.json --cluster 8x4 --workers 4,8 %s", dir, grid);
    clirun_result inside = clirun(cmd);
    cr_assert_eq(inside.status, 0, "%s", inside.err);
    cr_assert(!strstr(inside.out, "extrapolated"), "%s", inside.out);
    clirun_free(&beyond);
    clirun_free(&inside);
    free(path);
    free(dir);
}

/* `report --calib FILE --cluster 8x4` draws the what-if of a table calibration and
 * measures nothing on this host: no traces, no runs, the answer first. */
Test(table, report_of_a_table_calibration_measures_nothing) {
    char *path, *dir = calibrated_consistent_table(&path), cmd[1024];
    snprintf(cmd, sizeof cmd, "report --calib %s/cal.json --cluster 8x4 --what-if 32000,1 --reps 3 --out %s/out", dir,
             dir);
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    char page[1024];
    snprintf(page, sizeof page, "%s/out/index.html", dir);
    FILE *f = fopen(page, "r");
    cr_assert_not_null(f, "%s", page);
    static char html[1 << 20];
    size_t n = fread(html, 1, sizeof html - 1, f);
    html[n] = '\0';
    fclose(f);
    const char *answer = strstr(html, "<p class=\"answer\"><b>On 8 machines x 4 GPUs, the calibrated fabric");
    cr_assert_not_null(answer, "%s", html);
    cr_assert(answer < strstr(html, "<h3"), "the answer comes before the figures");
    cr_assert(strstr(answer, "Extrapolated: the calibration measured at most 8 workers on 2 machines."), "%s",
              answer);
    snprintf(page, sizeof page, "%s/out/traces", dir);
    FILE *none = fopen(page, "r");
    cr_assert_null(none, "report --calib made %s: it measured", page);
    free(path);
    free(dir);
}
