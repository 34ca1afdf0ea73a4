/* cli/cmd_calibrate.c: `speedup calibrate` end to end through the real binary — a good
 * trace directory gives a calibration.json that reads back; bad input gets one clear
 * line, a non-zero exit and no calibration.json. */
#define _POSIX_C_SOURCE 200809L
#include "model/calibration.h"
#include "fit/fit.h"
#include "tests/clirun.h"
#include "tests/synth.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static synth_truth truth_example(void) {
    synth_truth t = { .times = synth_plain_times, .startup_noise_s = 0.01, .comm_noise = 0.03 };
    t.p = (costmodel_params){ .c0_s = 0.003, .c1_s = 0.0005, .sigma = 0.15, .model_bytes = 1819688,
                              .w0_s = 0.4, .w1_s = 0.12, .cv = 0.05, .host_cores = 2 };
    t.p.link[JOB_TOPO_PS] = (costmodel_link){ 3e-4, 1e-8 };
    t.p.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ 1.5e-4, 6e-9 };
    return t;
}

static job_config cfg(int K, int T, const char *sync) {
    job_config c = { .workers = K, .cores = T, .topology = JOB_TOPO_PS, .examples = 512,
                           .batch = 64, .epochs = 1 };
    job_sync_parse(sync, &c.sync, &c.every_n);
    return c;
}

static void put(const char *dir, const char *name, trace *t) {
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
}

static const long sizes[] = { 8, 65536, 1819688 };

/* The plan on 2 cores: 1×1, 1×2, 2×1 in batch and epoch sync, plus commbench. */
static void plan_traces(const char *dir, const char *host_of_last) {
    synth_truth truth = truth_example();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 17);
    const char *syncs[] = { "batch", "epoch" };
    const int shapes[3][2] = { { 1, 1 }, { 1, 2 }, { 2, 1 } };
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) {
            job_config c = cfg(shapes[k][0], shapes[k][1], syncs[s]);
            char name[64];
            snprintf(name, sizeof name, "%dx%d-%s.trace.jsonl", shapes[k][0], shapes[k][1], syncs[s]);
            const char *host = s == 1 && k == 2 && host_of_last ? host_of_last : "h";
            put(dir, name, synth_run(&truth, &c, host, "cnn", rng));
        }
    synth_truth t2 = truth;
    put(dir, "commbench-2.trace.jsonl", synth_commbench(&t2, 2, sizes, 3, 4, "h", rng));
    gsl_rng_free(rng);
}

static void rm_dir(char *dir) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

static bool exists(const char *dir, const char *name) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static clirun_result calibrate(const char *dir, const char *extra) {
    char args[1200];
    snprintf(args, sizeof args, "calibrate --from-traces '%s' --out '%s/calibration.json' %s", dir, dir, extra);
    return clirun(args);
}

Test(cli_calibrate, plan_traces_give_a_calibration_that_reads_back) {
    char *dir = clirun_tmpdir();
    plan_traces(dir, NULL);
    clirun_result r = calibrate(dir, "");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "leave-one-configuration-out error (") != NULL, "%s", r.out);
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    calibration cal;
    cr_assert_eq(calibration_read(path, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(cal.host, "h");
    cr_assert_float_eq(cal.params.c1_s, 0.0005, 0.0001);
    cr_assert_eq(cal.params.host_cores, 2.0);
    cr_assert(cal.stderr_.c1_s > 0);
    clirun_free(&r);
    rm_dir(dir);
}

/* The traces checked into experiments/ come from a trainer without update spans and run
 * every configuration once: they still calibrate, with u = 0, run_cv the stated 5% and a
 * note on each (fails on main: no notes). */
Test(cli_calibrate, the_old_traces_in_experiments_still_calibrate) {
    char *dir = clirun_tmpdir(), args[1200], path[600], err[512];
    snprintf(args, sizeof args, "calibrate --from-traces '%s/experiments/cluster/results/d-quiet/1gbit' --out "
             "'%s/calibration.json'", SPEEDUP_SOURCE_DIR, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "note on update: no update events") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "note on run_cv: no configuration was run more than once") != NULL, "%s", r.out);
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    calibration cal;
    cr_assert_eq(calibration_read(path, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.params.update_s, 0.0);
    cr_assert_eq(cal.params.run_cv, 0.05);
    cr_assert_gt(cal.params.c1_s, 0.0);
    clirun_free(&r);
    rm_dir(dir);
}

static void refused(const char *dir, const char *extra, int status, const char *expect) {
    clirun_result r = calibrate(dir, extra);
    cr_assert_eq(r.status, status, "status %d, stderr: %s", r.status, r.err);
    cr_assert(strncmp(r.err, "speedup: ", 9) == 0, "%s", r.err);
    cr_assert(strstr(r.err, expect) != NULL, "stderr '%s' lacks '%s'", r.err, expect);
    cr_assert(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "more than one line: %s", r.err);
    cr_assert(!exists(dir, "calibration.json"), "calibration.json written despite: %s", r.err);
    clirun_free(&r);
}

Test(cli_calibrate, empty_directory_is_refused) {
    char *dir = clirun_tmpdir();
    refused(dir, "", 1, "no *.trace.jsonl files");
    rm_dir(dir);
}

Test(cli_calibrate, missing_directory_is_refused) {
    char *dir = clirun_tmpdir();
    clirun_result r = clirun("calibrate --from-traces /nonexistent/traces --out /nonexistent/c.json");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "/nonexistent/traces: cannot open directory") != NULL, "%s", r.err);
    clirun_free(&r);
    rm_dir(dir);
}

Test(cli_calibrate, a_trace_from_another_host_is_refused) {
    char *dir = clirun_tmpdir();
    plan_traces(dir, "elsewhere");
    refused(dir, "", 1, "run.host is 'elsewhere'");
    refused(dir, "", 1, "traces from different hosts cannot be fitted together");
    rm_dir(dir);
}

Test(cli_calibrate, a_single_configuration_is_refused_with_what_is_missing) {
    char *dir = clirun_tmpdir();
    synth_truth truth = truth_example();
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 1);
    job_config c = cfg(1, 1, "batch");
    put(dir, "a.trace.jsonl", synth_run(&truth, &c, "h", "cnn", rng));
    gsl_rng_free(rng);
    refused(dir, "", 1, "a single configuration (K=1, T=1, batch sync, ps, 1 run): under-determined fit: c0, c1: ");
    rm_dir(dir);
}

Test(cli_calibrate, a_corrupt_trace_is_named_with_its_line) {
    char *dir = clirun_tmpdir();
    plan_traces(dir, NULL);
    free(clirun_write_file(dir, "bad.trace.jsonl",
                           "{\"run\": {\"format\": \"speedup-trace\", \"version\": 1, \"workers\": 1, \"cores\": 1, "
                           "\"examples\": 10, \"batch\": 2, \"epochs\": 1, \"sync\": \"batch\", \"topology\": \"ps\"}}\n"
                           "{\"rank\": 0, \"ph\": \"compute\", \"t0\": 2, \"t1\": 1}\n"));
    refused(dir, "", 1, "bad.trace.jsonl: line 2: expected \"t0\" and \"t1\"");
    rm_dir(dir);
}

Test(cli_calibrate, a_truncated_trace_is_refused) {
    char *dir = clirun_tmpdir();
    plan_traces(dir, NULL);
    free(clirun_write_file(dir, "cut.trace.jsonl", "{\"run\": {\"format\": \"speedup-tr"));
    refused(dir, "", 1, "cut.trace.jsonl: line 1");
    rm_dir(dir);
}

Test(cli_calibrate, both_sources_is_a_usage_error) {
    clirun_result r = clirun("calibrate --from-traces x --ernest y.csv");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "give one") != NULL, "%s", r.err);
    clirun_free(&r);
}

Test(cli_calibrate, help_lists_every_flag_with_its_default) {
    clirun_result r = clirun("calibrate --help");
    cr_assert_eq(r.status, 0);
    const char *flags[] = { "--from-traces", "--out", "[calibration.json]", "--ernest", "--predict-machines",
                            "[4,8,16,32,64]", "--fraction", "[1]", "--budget", "[120]", "--limit",
                            "[from --budget: 2 pilots]", "--net", "every\nconfiguration three times, interleaved" };
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_assert(strstr(r.out, flags[i]) != NULL, "--help lacks %s", flags[i]);
    clirun_free(&r);
}

/* ---------------------------------------------------------------------------------- */
/* --ernest */

/* Good rows until line 7, whose time is not a number. */
static const char *ernest_csv =
    "#Cores,Input Fraction, Time (s)\n"
    "1,0.5,17.0\n"
    "2,0.5,9.704518\n"
    "4,0.5,6.059035\n"
    "8,0.5,4.938553\n"
    "16,1.0,6.893070\n"
    "32,1.0,6.310-0\n";

Test(cli_calibrate, ernest_malformed_csv_names_the_line) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "train.csv", ernest_csv);
    char args[600];
    snprintf(args, sizeof args, "calibrate --ernest '%s'", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "train.csv: line 7: expected field 3 (time_s): a number, got '6.310-0'") != NULL, "%s",
              r.err);
    clirun_free(&r);
    free(path);
    rm_dir(dir);
}

Test(cli_calibrate, ernest_fits_and_predicts) {
    char text[1024];
    snprintf(text, sizeof text, "#Cores,Input Fraction, Time (s)\n");
    for (int m = 1; m <= 32; m *= 2)
        for (int k = 1; k <= 2; k++) {
            double f = 0.5 * k, t = 2.0 + 30.0 * f / m + 0.05 * m + 0.8 * log(m);
            snprintf(text + strlen(text), sizeof text - strlen(text), "%d,%g,%.9f\n", m, f, t);
        }
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "train.csv", text);
    char args[600];
    snprintf(args, sizeof args, "calibrate --ernest '%s' --predict-machines 64,128 --fraction 0.5", path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    double t64;
    const char *row = strstr(r.out, "\n64,0.5,");
    cr_assert_not_null(row, "%s", r.out);
    cr_assert_eq(sscanf(row, "\n64,0.5,%lf", &t64), 1);
    cr_assert_float_eq(t64, 2.0 + 30.0 * 0.5 / 64 + 0.05 * 64 + 0.8 * log(64), 1e-4);
    cr_assert(strstr(r.out, "\n128,0.5,") != NULL);
    clirun_free(&r);
    free(path);
    rm_dir(dir);
}

Test(cli_calibrate, ernest_bad_flags_are_usage_errors) {
    clirun_result r = clirun("calibrate --ernest x.csv --predict-machines 4,zero");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--predict-machines") != NULL, "%s", r.err);
    clirun_free(&r);
    r = clirun("calibrate --ernest x.csv --from-traces d");
    cr_assert_eq(r.status, 2);
    clirun_free(&r);
}

/* ---------------------------------------------------------------------------------- */
/* PyTorch profiler traces in the directory */

static void copy_fixture(const char *dir, const char *name) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s/tests/data/%s' '%s/'", SPEEDUP_SOURCE_DIR, name, dir);
    cr_assert_eq(system(cmd), 0);
}

Test(cli_calibrate, pytorch_rank_files_in_the_directory_are_one_run_and_need_the_batch) {
    char *dir = clirun_tmpdir();
    copy_fixture(dir, "pytorch-ddp-k2.rank0.json");
    copy_fixture(dir, "pytorch-ddp-k2.rank1.json");
    refused(dir, "", 1, "pytorch-ddp-k2.rank0.json: a profiler trace or timeline does not record its batch: give --batch");
    /* Read, as one run of two ranks: what is missing is the rest of a calibration. */
    refused(dir, "--batch 16 --model-bytes 1819688", 1,
            "a single configuration (K=2, T=1, batch sync, allreduce, 1 run): under-determined fit: c0, c1: every "
            "compute step at T=1 has local batch b=8");
    /* calibration.json beside the traces is not one of them. */
    free(clirun_write_file(dir, "old-calibration.json", "{\n  \"format\": \"speedup-calibration\",\n  \"version\": 1\n}\n"));
    refused(dir, "--batch 16 --model-bytes 1819688", 1, "a single configuration (K=2, T=1");
    clirun_result r = calibrate(dir, "--batch 16 --phase-map /nonexistent.map");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "/nonexistent.map: cannot open") != NULL, "%s", r.err);
    clirun_free(&r);
    rm_dir(dir);
}

Test(cli_calibrate, the_built_in_phase_map_is_printed_in_its_file_format) {
    clirun_result r = clirun("calibrate --print-phase-map");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *line = strstr(r.out, "autograd::engine::evaluate_function: * ");
    cr_assert(line && strncmp(strchr(line, '\n') - 8, " compute", 8) == 0, "%s", r.out);
    cr_assert(strstr(r.out, "Optimizer.step#*") != NULL);
    clirun_free(&r);
}

/* A job's two traces, K = 1 and K = 2 at one global batch (64, split), are enough: the fit
 * takes the latency it cannot separate from --latency, sigma stays unmeasured, and the
 * prediction at K = 3 is the hand-computed one. The truth, written here: a step of b
 * examples takes 0.01 + 0.001·b s; one all-reduce of 1 MB among K, 2(K − 1) messages of
 * 100 µs + 1e-9 s/byte · 1e6/K bytes; start-up 0.5 s; no noise. */
static synth_times two_trace_truth(const costmodel_params *p, const job_config *c) {
    (void)p;
    const double k = c->workers, b = ceil(64.0 / k);
    return (synth_times){ .step_s = 0.01 + 0.001 * b, .sync_s = k > 1 ? 2 * (k - 1) * (100e-6 + 1e-9 * 1e6 / k) : 0,
                          .startup_s = 0.5 };
}

Test(cli_calibrate, two_traces_and_a_latency_give_the_hand_computed_prediction) {
    char *dir = clirun_tmpdir();
    synth_truth truth = { .p = { .model_bytes = 1e6, .host_cores = 4 }, .times = two_trace_truth };
    gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(rng, 9);
    job_config one = cfg(1, 1, "batch"), two = cfg(2, 1, "batch");
    one.topology = two.topology = JOB_TOPO_ALLREDUCE;
    one.batch = two.batch = 64, one.examples = two.examples = 6400;
    put(dir, "k1.trace.jsonl", synth_run(&truth, &one, "h", "cnn", rng));
    put(dir, "k2.trace.jsonl", synth_run(&truth, &two, "h", "cnn", rng));
    gsl_rng_free(rng);
    clirun_result r = calibrate(dir, "--latency 100us");
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "note on alpha_allreduce: stated (100 us, --latency)"), "%s", r.out);
    cr_assert(strstr(r.out, "note on sigma: not measured"), "%s", r.out);
    clirun_free(&r);
    char args[1200];
    /* K = 3: b = 22, a step 0.032 s; 4 messages of 100 µs + 1e-3/3 s; 100 steps; W = 0.5 s. */
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --workers 3 --cores 1 --sync batch --topology "
             "allreduce --examples 6400 --batch 64 --epochs 1 --csv", dir);
    r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    double t;
    cr_assert_eq(sscanf(strchr(r.out, '\n') + 1, "3,1,batch,allreduce,%lf", &t), 1, "%s", r.out);
    const double want = 0.5 + 100 * (0.032 + 4 * (100e-6 + 1e-3 / 3));
    cr_assert(fabs(t - want) <= 1e-3 * want, "K = 3: %g s, by hand %g s", t, want);
    clirun_free(&r);
    /* More than one core per worker needs sigma, which these traces do not measure. */
    snprintf(args, sizeof args, "model --calib '%s/calibration.json' --workers 2 --cores 2", dir);
    clirun_assert_refused(args, 2, "sigma");
    rm_dir(dir);
}

/* --without: the golden traces fitted with master_wake held at 0 write it as 0 and print
 * the families; a term a prediction cannot do without is refused naming the ones that
 * can be held out, and --without without traces to fit is refused. */
Test(cli_calibrate, without_holds_a_term_at_zero_and_names_the_terms_it_can_hold) {
    char *dir = clirun_tmpdir(), args[1200], path[600], err[512];
    snprintf(args, sizeof args, "calibrate --from-traces '%s/tests/data/golden/traces' --without master_wake --out "
             "'%s/calibration.json'", SPEEDUP_SOURCE_DIR, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "stderr: %s", r.err);
    cr_assert(strstr(r.out, "leave-one-family-out") && strstr(r.out, "\n  dedicated "), "%s", r.out);
    clirun_free(&r);
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    calibration cal;
    cr_assert_eq(calibration_read(path, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.params.master_wake_s, 0.0);
    cr_assert_gt(cal.params.c1_s, 0.0);
    snprintf(args, sizeof args, "calibrate --from-traces '%s/tests/data/golden/traces' --without c1 --out "
             "'%s/c.json'", SPEEDUP_SOURCE_DIR, dir);
    clirun_assert_refused(args, 2, "--without: 'c1' is not a term the fit can hold at 0 (one of: c0,sigma,");
    clirun_assert_refused("calibrate --without master_wake --budget 10", 2, "it goes with --from-traces DIR");
    clirun_assert_refused("calibrate --from-traces . --without ,", 2, "--without: expected TERM[,TERM...]");
    rm_dir(dir);
}
