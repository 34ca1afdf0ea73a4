/* cli/cmd_model.c: `speedup model` end to end through the real binary. */
#define _DEFAULT_SOURCE /* M_PI */
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(cli_model, prints_a_table_for_the_seed_example) {
    clirun_result r = clirun("model --wide"); /* --wide: a line a row, none wrapped */
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "speedup") != NULL);
    cr_assert(strstr(r.out, "95% PI (one run)") != NULL, "%s", r.out);
    /* header line + column line + 5 workers × 3 cores × 2 sync modes × 2 topologies (ps and
     * allreduce, as advise) + what the PI is + where the memory figures come from */
    cr_assert_eq(count_lines(r.out), 2 + 60 + 2, "%s", r.out);
    clirun_free(&r);
}

Test(cli_model, csv_has_the_predictions_header_and_one_row_per_config) {
    clirun_result r = clirun("model --csv --workers 1,2,4,8 --cores 1,2,4 --sync batch,epoch,every:4 --topology ps,allreduce");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *header = "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,"
                         "update_s,time_lo,time_hi,mean_lo,mean_hi,rss_worker_mib,rss_master_mib,fits,"
                         "staleness_median,staleness_p90\n";
    cr_assert(strncmp(r.out, header, strlen(header)) == 0, "%s", r.out);
    cr_assert_eq(count_lines(r.out), 1 + 4 * 3 * 3 * 2);
    cr_assert(strstr(r.out, "\n1,1,batch,ps,") != NULL);
    cr_assert(strstr(r.out, "\n8,4,every:4,allreduce,") != NULL);
    clirun_free(&r);
}

Test(cli_model, one_worker_one_core_prints_speedup_one) {
    clirun_result r = clirun("model --topology ps --csv --workers 1 --cores 1 --sync batch");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "\n1,1,batch,ps,") != NULL);
    double time_s, speedup;
    cr_assert_eq(sscanf(strchr(r.out, '\n') + 1, "1,1,batch,ps,%lf,%lf", &time_s, &speedup), 2);
    cr_assert_eq(speedup, 1.0);
    clirun_free(&r);
}

Test(cli_model, out_file_is_written_whole) {
    char *dir = clirun_tmpdir();
    char args[512];
    snprintf(args, sizeof args, "model --topology ps --out %s/p.csv --workers 2", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    char path[512];
    snprintf(path, sizeof path, "%s/p.csv", dir);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    char line[256];
    int lines = 0;
    while (fgets(line, sizeof line, f))
        lines++;
    fclose(f);
    cr_assert_eq(lines, 1 + 3 * 2);
    remove(path);
    remove(dir);
    free(dir);
    clirun_free(&r);
}

Test(cli_model, flags_override_the_parameters) {
    /* No latency, infinite-ish bandwidth, no start-up or spread: speedup is exactly K. */
    clirun_result r = clirun("model --topology ps --csv --workers 4 --cores 1 --sync batch --latency 0 --bandwidth 1e300 "
                             "--startup 0,0 --cv 0 --c0 0 --examples 6400 --batch 32");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    double time_s, speedup;
    cr_assert_eq(sscanf(strchr(r.out, '\n') + 1, "4,1,batch,ps,%lf,%lf", &time_s, &speedup), 2, "%s", r.out);
    cr_assert_float_eq(speedup, 4.0, 1e-9);
    clirun_free(&r);
}

Test(cli_model, zero_workers_is_a_usage_error) { clirun_assert_refused("model --workers 0", 2, "'0'"); }
Test(cli_model, negative_flag_is_a_usage_error) { clirun_assert_refused("model --c1 -3", 2, "'-3'"); }
Test(cli_model, non_numeric_flag_is_a_usage_error) { clirun_assert_refused("model --latency abc", 2, "'abc'"); }
Test(cli_model, unknown_sync_mode_is_a_usage_error) { clirun_assert_refused("model --sync batch,weekly", 2, "'weekly'"); }
Test(cli_model, every_zero_is_a_usage_error) { clirun_assert_refused("model --sync every:0", 2, "'every:0'"); }
Test(cli_model, unknown_topology_is_a_usage_error) { clirun_assert_refused("model --topology ring", 2, "'ring'"); }
Test(cli_model, unknown_flag_is_a_usage_error) { clirun_assert_refused("model --frobnicate", 2, "--frobnicate"); }
Test(cli_model, trailing_garbage_in_a_list_is_a_usage_error) { clirun_assert_refused("model --workers 1,2x", 2, "'2x'"); }
Test(cli_model, unknown_command_is_a_usage_error) { clirun_assert_refused("modle", 2, "'modle'"); }
Test(cli_model, missing_calibration_file_is_a_failure) { clirun_assert_refused("model --calib /nonexistent.json", 1, "/nonexistent.json"); }

Test(cli_model, malformed_calibration_is_a_failure_naming_the_line) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "bad.json", "{\"format\": \"speedup-calibration\",\n \"version\": 1,\n \"params\": {,}}\n");
    char args[512];
    snprintf(args, sizeof args, "model --topology ps --calib %s", path);
    clirun_assert_refused(args, 1, "line 3");
    remove(path);
    remove(dir);
    free(path);
    free(dir);
}

Test(cli_model, help_and_version_exit_zero) {
    const char *args[] = { "--help", "model --help", "--version" };
    for (int i = 0; i < 3; i++) {
        clirun_result r = clirun(args[i]);
        cr_assert_eq(r.status, 0, "%s: %s", args[i], r.err);
        cr_assert_gt(strlen(r.out), 10);
        clirun_free(&r);
    }
}

/* ---------------------------------------------------------------------------------- */
/* The prediction interval of one run */

static const double z975 = 1.959963984540054; /* Φ⁻¹(0.975) */

Test(cli_model, run_to_run_spread_gives_exp_of_1_96_run_cv) {
    /* No step spread, no calibration: one run's time is T·exp(±1.96·0.05), a speedup (two
     * runs) S·exp(±1.96·0.05·√2); the mean's interval is the point. */
    int n;
    prediction_row *rows = clirun_predictions("model --topology ps --workers 1,4 --cores 1 --sync batch --run-cv 0.05 --cv 0", &n);
    cr_assert_eq(n, 2);
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        cr_assert_float_eq(r->time_lo, r->time_s * exp(-z975 * 0.05), 1e-8 * r->time_s);
        cr_assert_float_eq(r->time_hi, r->time_s * exp(z975 * 0.05), 1e-8 * r->time_s);
        cr_assert_float_eq(r->ci_lo, r->speedup * exp(-z975 * 0.05 * sqrt(2.0)), 1e-8 * r->speedup);
        cr_assert_float_eq(r->ci_hi, r->speedup * exp(z975 * 0.05 * sqrt(2.0)), 1e-8 * r->speedup);
        cr_assert_eq(r->mean_lo, r->speedup);
        cr_assert_eq(r->mean_hi, r->speedup);
    }
    free(rows);
}

Test(cli_model, calibration_standard_errors_reach_the_interval_and_a_what_if_drops_them) {
    char *dir = clirun_tmpdir();
    /* c1 = 0.002 ± 0.0002 is all that costs: a K = 1 run has sd(ln T) = 0.1. */
    char *cal = clirun_write_c1_calibration(dir), args[1024];
    int n;
    snprintf(args, sizeof args, "model --topology ps --calib %s --workers 1 --cores 1 --sync batch", cal);
    prediction_row *rows = clirun_predictions(args, &n);
    cr_assert_eq(n, 1);
    cr_assert_float_eq(rows[0].time_hi, rows[0].time_s * exp(z975 * 0.1), 1e-6 * rows[0].time_s, "%.9g vs %.9g",
                       rows[0].time_hi, rows[0].time_s);
    cr_assert_float_eq(rows[0].time_lo, rows[0].time_s * exp(-z975 * 0.1), 1e-6 * rows[0].time_s);
    /* The same c1 under both runs of a speedup cancels. */
    cr_assert_float_eq(rows[0].ci_lo, 1.0, 1e-8);
    cr_assert_float_eq(rows[0].ci_hi, 1.0, 1e-8);
    free(rows);
    /* --c1 states the value: it is no longer uncertain, nothing else spreads. */
    snprintf(args, sizeof args, "model --topology ps --calib %s --workers 1 --cores 1 --sync batch --c1 0.002", cal);
    clirun_assert_point_interval(args);
    remove(cal);
    remove(dir);
    free(cal);
    free(dir);
}

/* A cell the model refuses is skipped with a line naming it, as advise skips one; a grid
 * of such cells only is a usage error. */
Test(cli_model, batch_split_over_more_workers_than_examples_is_skipped_naming_the_config) {
    clirun_result s = clirun("model --workers 2,8 --cores 1 --sync batch --topology ps --batch 4 --csv");
    cr_assert_eq(s.status, 0, "%s", s.err);
    cr_assert(strstr(s.err, "speedup: skipped 8 workers x 1 core, batch sync, ps: batch sync splits"), "%s", s.err);
    cr_assert(strstr(s.out, "\n2,1,batch,ps,") && !strstr(s.out, "\n8,1,"), "%s", s.out);
    clirun_free(&s);
    clirun_assert_refused("model --workers 8 --cores 1 --sync batch --topology ps --batch 4", 2,
                          "8 workers x 1 core, batch sync, ps");
    /* Each worker with a batch of its own is fine. */
    clirun_result r = clirun("model --topology ps --workers 2,8 --cores 1 --sync batch --batch 4 --batch-per-worker");
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
}

Test(cli_model, cluster_spec_is_parsed_strictly) {
    static const char *const bad[] = { "16@1gbit", "16x@1gbit", "0x4@1gbit", "4x4", "4x4@", "4x4@fast",
                                       "4x4@1gbit,soon" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "model --topology ps --cluster %s", bad[i]);
        clirun_result r = clirun(cmd);
        cr_assert_eq(r.status, 2, "%s: %s", bad[i], r.out);
        cr_assert(strstr(r.err, "--cluster") != NULL, "%s: %s", bad[i], r.err);
        clirun_free(&r);
    }
}

Test(cli_model, cluster_grid_runs_to_its_cores_and_never_below_one_example_per_worker) {
    /* 8 machines of 2 cores: workers 1, 2, 4, 8, 16; at B = 8 batch sync stops at 8. */
    clirun_result r = clirun("model --topology ps --cluster 8x2@1gbit --cores 1 --sync epoch --csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\n16,1,epoch") && !strstr(r.out, "\n32,1,"), "%s", r.out);
    clirun_free(&r);
    r = clirun("model --topology ps --cluster 8x2@1gbit --cores 1 --sync batch --batch 8 --csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\n8,1,batch") && !strstr(r.out, "\n16,1,"), "%s", r.out);
    clirun_free(&r);
    r = clirun("model --topology ps --cluster 8x2@1gbit --cores 1 --sync batch --batch 8 --scaling weak --csv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\n16,1,batch"), "%s", r.out);
    clirun_free(&r);
}

Test(cli_model, overlap_hides_the_all_reduce_behind_the_step_and_only_there) {
    /* The seed's example: c1 = 0.956 s/example, B = 32 over K = 2: a step of 16·0.956 =
     * 15.296 s; S(2) = 2·(0.05 + 8e-9·1819688/2) = 0.114557504 s. With --overlap 1 the step
     * hides it all: comm 0. Without, 5 epochs of ⌈6000/32⌉ = 188 exchanges: 107.684054 s. */
    int n;
    prediction_row *rows = clirun_predictions("model --workers 2 --cores 1 --sync batch --topology allreduce,ps "
                                              "--overlap 1 --cv 0 --run-cv 0", &n);
    cr_assert_eq(n, 2);
    cr_assert_eq(rows[0].topology, JOB_TOPO_ALLREDUCE);
    cr_assert_eq(rows[0].comm_s, 0.0);
    cr_assert_gt(rows[1].comm_s, 0.0, "a parameter server has nothing to hide behind");
    free(rows);
    rows = clirun_predictions("model --workers 2 --cores 1 --sync batch --topology allreduce --overlap 0 --cv 0 "
                              "--run-cv 0", &n);
    cr_assert_float_eq(rows[0].comm_s, 5 * 188 * 0.114557504, 1e-5);
    free(rows);
    clirun_assert_refused("model --overlap 1.5", 2, "--overlap");
}

Test(cli_model, the_overlap_s_slowdown_and_exposed_share_are_what_if_flags) {
    /* As above: step 15.296 s, S(2) = 0.114557504 s, 940 exchanges. --overlap 1 would hide
     * all of it; --overlap-exposed 0.25 keeps a quarter exposed: comm 940·0.028639376 s;
     * --overlap-slowdown 0.5 makes each step 1.5·15.296 = 22.944 s: compute 940·22.944 s. */
    int n;
    prediction_row *rows = clirun_predictions("model --workers 2 --cores 1 --sync batch --topology allreduce "
                                              "--overlap 1 --overlap-exposed 0.25 --overlap-slowdown 0.5 --cv 0 "
                                              "--run-cv 0", &n);
    cr_assert_eq(n, 1);
    cr_assert_float_eq(rows[0].comm_s, 940 * 0.028639376, 1e-5);
    cr_assert_float_eq(rows[0].compute_s, 940 * 22.944, 1e-3);
    free(rows);
    clirun_assert_refused("model --overlap-exposed 1.5", 2, "--overlap-exposed");
    clirun_assert_refused("model --overlap-slowdown -1", 2, "--overlap-slowdown");
}

Test(cli_model, rank_cv_is_a_what_if_flag_the_slowest_rank_sets_a_rounds_pace) {
    /* The seed's example at K = 2 on 2 cores, epoch sync, no step spread: each worker takes
     * 3000 examples in ⌈3000/32⌉ = 94 steps of 32·0.956 = 30.592 s. --rank-cv 0.05 makes
     * each epoch wait for the slower rank, 94·0.05·30.592·G(2) with G(2) = 1/√π: over 5
     * epochs 405.60266 s. 3 workers on the 2 cores share them: ς does not apply. */
    int n;
    prediction_row *rows = clirun_predictions("model --workers 2 --cores 1 --sync epoch --topology allreduce --cv 0 "
                                              "--run-cv 0 --host-cores 2 --rank-cv 0.05", &n);
    cr_assert_eq(n, 1);
    cr_assert_float_eq(rows[0].wait_s, 5 * 94 * 0.05 * 30.592 / sqrt(M_PI), 1e-4, "wait %.9g", rows[0].wait_s);
    free(rows);
    rows = clirun_predictions("model --workers 2 --cores 1 --sync epoch --topology allreduce --cv 0 --run-cv 0 "
                              "--host-cores 2 --rank-cv 0", &n);
    cr_assert_float_eq(rows[0].wait_s, 0.0, 1e-12);
    free(rows);
    prediction_row *a = clirun_predictions("model --workers 3 --cores 1 --sync epoch --topology allreduce --cv 0 "
                                           "--run-cv 0 --host-cores 2 --rank-cv 0.05", &n);
    prediction_row *b = clirun_predictions("model --workers 3 --cores 1 --sync epoch --topology allreduce --cv 0 "
                                           "--run-cv 0 --host-cores 2 --rank-cv 0", &n);
    cr_assert_eq(a[0].time_s, b[0].time_s, "ranks that share the cores: %g and %g", a[0].time_s, b[0].time_s);
    free(a);
    free(b);
    clirun_assert_refused("model --rank-cv -0.1", 2, "--rank-cv");
}

Test(cli_model, a_topology_the_calibration_never_measured_is_refused_unless_its_link_is_given) {
    char *dir = clirun_tmpdir();
    char *cal = clirun_write_file(dir, "cal.json",
        "{\"format\": \"speedup-calibration\", \"version\": 1,\n"
        " \"host\": {\"name\": \"t\", \"cores\": 2}, \"uncalibrated_topologies\": [\"ps\"],\n"
        " \"params\": {\"c0\": {\"value\": 0}, \"c1\": {\"value\": 0.002},\n"
        "  \"sigma\": {\"value\": 0.1}, \"alpha_ps\": {\"value\": 0}, \"beta_ps\": {\"value\": 0},\n"
        "  \"alpha_allreduce\": {\"value\": 1e-4}, \"beta_allreduce\": {\"value\": 1e-9},\n"
        "  \"model_bytes\": {\"value\": 1000}, \"w0\": {\"value\": 0}, \"w1\": {\"value\": 0},\n"
        "  \"cv\": {\"value\": 0}, \"host_cores\": {\"value\": 2}}}\n");
    char args[1024];
    snprintf(args, sizeof args, "model --calib %s --topology ps,allreduce --workers 2", cal);
    clirun_assert_refused(args, 2, "the traces held no ps synchronisation, so ps is not calibrated");
    /* By default the grid's topology is the one measured. */
    int n;
    snprintf(args, sizeof args, "model --calib %s --workers 2 --cores 1 --sync batch", cal);
    prediction_row *rows = clirun_predictions(args, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(rows[0].topology, JOB_TOPO_ALLREDUCE);
    free(rows);
    /* A stated link is a what-if: fine. */
    snprintf(args, sizeof args, "model --calib %s --topology ps --workers 2 --cores 1 --sync batch --latency 1ms "
             "--bandwidth 1gbit", cal);
    rows = clirun_predictions(args, &n);
    cr_assert_eq(n, 1);
    free(rows);
    remove(cal);
    remove(dir);
    free(cal);
    free(dir);
}

/* ---------------------------------------------------------------------------------- */
/* Memory per rank and --memory-limit */

/* The seed-like example's master (model/memory.c's stated assumptions), K = 4, B = 32,
 * M = 1,819,688 bytes, worked out by hand in MiB:
 *   768 (an executor) + 768 (the driver beside it)
 *   + (4 blocks + 4 workers' updates)·M = 14,557,504 B = 13.883
 *   + b = 8 examples · (191,888 + 125,952) + 1,646,400 = 4,189,120 B = 3.995
 *   + data: (D + 1000 test)·3 copies·3176 + 8·D:
 *       D = 60000: 581,688,000 B = 554.741;  D = 6000: 66,744,000 B = 63.652
 * = 2108.62 MiB with the whole data set (over 2 GiB), 1617.53 MiB with the seed's 10 %. */
static void seed_master(long examples, double want_mib, int want_fits) {
    char args[256];
    snprintf(args, sizeof args, "model --topology ps --csv --memory-limit 2GiB --workers 4 --cores 1 --sync batch --examples %ld",
             examples);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    double worker, master;
    int fits;
    const char *row = strchr(r.out, '\n') + 1;
    /* the memory columns: the last three before the two staleness columns */
    const char *p = row + strlen(row);
    for (int commas = 0; p > row && commas < 5; p--)
        commas += p[-1] == ',';
    cr_assert_eq(sscanf(p + 1, "%lf,%lf,%d", &worker, &master, &fits), 3, "%s", row);
    cr_assert(fabs(master - want_mib) < 0.01, "D = %ld: rank 0 %.3f MiB, by hand %.2f", examples, master, want_mib);
    cr_assert_eq(fits, want_fits, "D = %ld", examples);
    cr_assert_lt(worker, 1024, "a worker holds a quarter of the data and no updates");
    clirun_free(&r);
}

Test(cli_model, the_seed_master_does_not_fit_2gib_with_the_whole_data_set_and_fits_with_a_tenth) {
    seed_master(60000, 2108.62, 0);
    seed_master(6000, 1617.53, 1);
}

Test(cli_model, a_table_marks_the_configurations_over_the_limit) {
    clirun_result r = clirun("model --topology ps --memory-limit 2G --workers 1,4 --cores 1 --sync batch --examples 60000 --wide");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_not_null(strstr(r.out, "rank0_MiB"), "%s", r.out);
    /* K = 1 is one Keras process (no driver): 969.7 MiB; K = 4's master is over. */
    const char *k1 = strstr(r.out, "\n      1 "), *k4 = strstr(r.out, "\n      4 ");
    cr_assert(k1 && k4 && k1 < k4, "%s", r.out);
    const char *first_over = strstr(r.out, "OVER");
    cr_assert(first_over && first_over > k4 && first_over < strchr(k4 + 1, '\n'), "only K = 4 is over: %s", r.out);
    cr_assert_not_null(strstr(r.out, "limit 2048 MiB: 1 of 2 configurations do not fit"), "%s", r.out);
    clirun_free(&r);
}

Test(cli_model, memory_limit_with_an_unknown_unit_is_a_usage_error) {
    clirun_assert_refused("model --memory-limit 4Gb", 2, "'4Gb'");
    clirun_assert_refused("model --memory-limit lots", 2, "--memory-limit");
    clirun_assert_refused("model --memory-limit 0", 2, "--memory-limit");
}

Test(cli_model, memory_limit_needs_a_calibration_that_measured_memory) {
    char *dir = clirun_tmpdir(), *cal = clirun_write_c1_calibration(dir), args[512];
    snprintf(args, sizeof args, "model --topology ps --calib %s --memory-limit 4GiB", cal);
    clirun_assert_refused(args, 2, "has no \"memory\"");
    /* Without a limit it predicts, its memory columns empty. */
    snprintf(args, sizeof args, "model --topology ps --calib %s --csv --workers 2 --cores 1 --sync batch", cal);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_not_null(strstr(r.out, ",,,\n"), "%s", r.out);
    clirun_free(&r);
    remove(cal);
    remove(dir);
    free(cal);
    free(dir);
}

/* Async rows: the ps topology only, a dedicated master, and the closed form's staleness
 * (K·(N + 1)/2 − 1, K·⌈0.9·N⌉ − 1: K = 4, N = 1: 3 and 3; N = 3: 7 and 11); other rows
 * leave the staleness columns empty. */
Test(cli_model, async_rows_run_through_ps_and_carry_the_staleness) {
    clirun_result r = clirun("model --csv --workers 4 --cores 1 --sync batch,async,async:3 --topology ps,allreduce");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert_eq(count_lines(r.out), 1 + 2 + 1 + 1, "batch twice, each async once: %s", r.out);
    cr_assert(strstr(r.out, "async,allreduce") == NULL, "%s", r.out);
    cr_assert(strstr(r.out, ",3,3\n") != NULL, "async: %s", r.out);
    cr_assert(strstr(r.out, ",7,11\n") != NULL, "async:3: %s", r.out);
    const char *batch = strstr(r.out, "\n4,1,batch,ps,");
    cr_assert_not_null(batch);
    const char *end = strchr(batch + 1, '\n');
    cr_assert(end && end[-1] == ',' && end[-2] == ',', "batch leaves the staleness empty: %.*s", (int)(end - batch),
              batch);
    clirun_free(&r);
}

Test(cli_model, async_without_ps_in_the_topologies_is_a_usage_error) {
    clirun_assert_refused("model --sync async --topology allreduce", 2,
                          "--sync async runs through a parameter server: add ps to --topology");
    clirun_assert_refused("model --sync async:0", 2, "--sync: unknown sync mode 'async:0'");
}

/* The default table fits 80 columns, times beyond a minute as h:mm:ss; --wide has every
 * column in seconds. */
Test(cli_model, the_default_table_fits_80_columns_and_wide_has_every_column) {
    clirun_result r = clirun("model --workers 1,2,4,8,16 --cores 1,2,4 --sync batch,epoch,every:8 --topology ps,allreduce");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    const char *table = strstr(r.out, "\nworkers"), *end = strstr(r.out, "\n95% PI");
    cr_assert(table && end, "%s", r.out);
    for (const char *line = table + 1; line < end; line = strchr(line, '\n') + 1)
        cr_assert_leq(strchr(line, '\n') - line, 80, "a line of %ld columns: %.*s", (long)(strchr(line, '\n') - line),
                      (int)(strchr(line, '\n') - line), line);
    /* The seed's one worker on one core: 5 × 188 steps of 30.6 s ≈ 8 h, as h:mm:ss. */
    cr_assert(strstr(table, "\n      1     1 batch    ps         7:5") || strstr(table, "\n      1     1 batch    ps         8:0"),
              "%s", table);
    clirun_free(&r);
    r = clirun("model --topology ps --workers 1 --cores 1 --sync batch --wide");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "compute_s") && strstr(r.out, "startup_s"), "%s", r.out);
    clirun_free(&r);
}

/* The contention module switched off (--no-contention) changes nothing where every rank
 * has a core: a cluster what-if of one rank per core, byte for byte, with a calibration
 * whose contention terms are fitted; on its own 2-core host, 4 ranks run faster without it. */
static char *model_out(const char *args, bool off) {
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "model --calib %s/tests/data/golden/calibration.json --csv %s%s", SPEEDUP_SOURCE_DIR,
             args, off ? " --no-contention" : "");
    clirun_result r = clirun(cmd);
    cr_assert_eq(r.status, 0, "%s\nstderr: %s", cmd, r.err);
    free(r.err);
    return r.out;
}

Test(cli_model, no_contention_changes_nothing_where_every_rank_has_a_core) {
    const char *grids[] = {
        "--cluster 4x2@1gbit,50us --workers 1,2,4,8 --cores 1 --sync batch,every:4,epoch --topology ps,allreduce",
        "--cluster 4x2@1gbit,50us --workers 1,2,4 --cores 2 --sync batch,epoch --topology ps,allreduce",
        "--cluster 4x2@100mbit --workers 1,3,7 --cores 1 --sync batch,async --topology ps --master dedicated",
        "--workers 1,2 --cores 1 --sync batch,every:4 --topology ps,allreduce",
    };
    for (size_t i = 0; i < sizeof grids / sizeof grids[0]; i++) {
        char *on = model_out(grids[i], false), *off = model_out(grids[i], true);
        cr_assert_str_eq(on, off, "%s", grids[i]);
        free(on);
        free(off);
    }
    char *on = model_out("--workers 4 --cores 1 --sync batch --topology allreduce", false);
    char *off = model_out("--workers 4 --cores 1 --sync batch --topology allreduce", true);
    double t_on, t_off;
    cr_assert_eq(sscanf(strchr(on, '\n') + 1, "4,1,batch,allreduce,%lf", &t_on), 1, "%s", on);
    cr_assert_eq(sscanf(strchr(off, '\n') + 1, "4,1,batch,allreduce,%lf", &t_off), 1, "%s", off);
    cr_assert_gt(t_on, 1.5 * t_off, "4 ranks on 2 cores: %g s with contention, %g s without", t_on, t_off);
    free(on);
    free(off);
}
