/* model/calibration.c: reading calibration.json, and refusing bad ones with the reason. */
#define _POSIX_C_SOURCE 200809L
#include "model/calibration.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS_BODY                                                                   \
    "\"c0\": {\"value\": 0.001, \"stderr\": 0.0001, \"unit\": \"s\"},\n"               \
    "\"c1\": {\"value\": 0.002, \"stderr\": 0.0001, \"unit\": \"s/example\"},\n"       \
    "\"sigma\": {\"value\": 0.1, \"unit\": \"1\"},\n"                                   \
    "\"alpha_ps\": {\"value\": 1e-5, \"unit\": \"s\"},\n"                               \
    "\"beta_ps\": {\"value\": 1e-10, \"unit\": \"s/byte\"},\n"                          \
    "\"alpha_allreduce\": {\"value\": 2e-5, \"unit\": \"s\"},\n"                        \
    "\"beta_allreduce\": {\"value\": 2e-10, \"unit\": \"s/byte\"},\n"                   \
    "\"model_bytes\": {\"value\": 1819688, \"unit\": \"byte\"},\n"                      \
    "\"w0\": {\"value\": 0.3, \"unit\": \"s\"},\n"                                      \
    "\"w1\": {\"value\": 0.05, \"unit\": \"s\"},\n"                                     \
    "\"cv\": {\"value\": 0.04, \"unit\": \"1\"},\n"                                     \
    "\"host_cores\": {\"value\": 2, \"unit\": \"core\"}\n"

static const char *good =
    "{\"format\": \"speedup-calibration\", \"version\": 1,\n"
    " \"host\": {\"name\": \"testhost\", \"cores\": 2},\n"
    " \"workload\": {\"examples\": 60000, \"batch\": 32, \"epochs\": 5},\n"
    " \"params\": {\n" PARAMS_BODY "}}\n";

static int read_text(const char *text, calibration *cal, char *err, int errlen) {
    char *dir = clirun_tmpdir();
    char *path = clirun_write_file(dir, "calibration.json", text);
    int rc = calibration_read(path, cal, err, errlen);
    remove(path);
    remove(dir);
    free(path);
    free(dir);
    return rc;
}

Test(calibration, reads_every_parameter_and_the_workload) {
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(good, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.params.c0_s, 0.001);
    cr_assert_eq(cal.params.c1_s, 0.002);
    cr_assert_eq(cal.params.link[JOB_TOPO_ALLREDUCE].beta_s_per_byte, 2e-10);
    cr_assert_eq(cal.params.model_bytes, 1819688.0);
    cr_assert_eq(cal.params.host_cores, 2.0);
    cr_assert_eq(cal.stderr_.c1_s, 0.0001);
    cr_assert(cal.has_workload);
    cr_assert_eq(cal.examples, 60000);
    cr_assert_str_eq(cal.host, "testhost");
}

Test(calibration, truncated_file_names_line_and_column) {
    calibration cal;
    char err[512];
    char text[256];
    snprintf(text, sizeof text, "%.60s", good);
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "calibration.json: line ") != NULL, "%s", err);
}

Test(calibration, missing_parameter_is_named) {
    calibration cal;
    char err[512];
    char *text = strdup(good);
    char *c1 = strstr(text, "\"c1\"");
    memcpy(c1, "\"cX\"", 4);
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "params.c1: missing") != NULL, "%s", err);
    free(text);
}

Test(calibration, negative_or_string_value_is_refused) {
    calibration cal;
    char err[512];
    char *text = strdup(good);
    char *v = strstr(text, "0.002");
    memcpy(v, "-0.02", 5);
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "params.c1.value") != NULL, "%s", err);
    free(text);

    text = strdup(good);
    v = strstr(text, "0.002");
    memcpy(v, "\"abc\"", 5);
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "expected a number") != NULL, "%s", err);
    free(text);
}

Test(calibration, wrong_format_or_version_is_refused) {
    calibration cal;
    char err[512];
    cr_assert_eq(read_text("{\"format\": \"other\", \"version\": 1}", &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "format") != NULL, "%s", err);
    cr_assert_eq(read_text("{\"format\": \"speedup-calibration\", \"version\": 99}", &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "version") != NULL, "%s", err);
    cr_assert_eq(read_text("[1, 2]", &cal, err, sizeof err), -1);
    cr_assert_eq(read_text("", &cal, err, sizeof err), -1);
}

Test(calibration, missing_file_is_an_error_naming_it) {
    calibration cal;
    char err[512];
    cr_assert_eq(calibration_read("/nonexistent/calibration.json", &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/calibration.json") != NULL, "%s", err);
}

/* ---------------------------------------------------------------------------------- */
/* calibration_write */

static calibration example_calibration(void) {
    calibration cal;
    memset(&cal, 0, sizeof cal);
    cal.params = costmodel_params_seed_example();
    cal.params.c0_s = 0.0;           /* an NNLS parameter at its bound */
    cal.params.host_cores = 2;
    cal.params.link[JOB_TOPO_ALLREDUCE] = (costmodel_link){ 3e-5, 7e-10 };
    cal.params.startup_cpu_s = 0.02;
    cal.params.startup_per_example_s = 4e-6;
    cal.params.master_wake_s = 1.2e-3;
    cal.stderr_ = (calibration_stderr){ .c0_s = 0, .c1_s = 0.01, .sigma = 0.02, .alpha_ps = 1e-3,
                                        .beta_ps = 1e-10, .alpha_allreduce = 2e-6, .beta_allreduce = 3e-11,
                                        .model_bytes = 0, .w0_s = 0.5, .w1_s = 0.25, .cv = 0.004, .host_cores = 0,
                                        .master_wake_s = 5e-5 };
    cal.has_workload = true;
    cal.examples = 6000;
    cal.batch = 32;
    cal.epochs = 5;
    snprintf(cal.host, sizeof cal.host, "node-%s", "a");
    return cal;
}

Test(calibration, write_then_read_round_trips_every_parameter) {
    calibration cal = example_calibration(), back;
    calibration_run run = { .trace = "r1.trace.jsonl", .config = costmodel_config_seed_example(),
                            .measured_s = 12.5, .loo_model_s = 12.0, .loo_ernest_s = NAN,
                            .loo_note = "ernest: too few runs" };
    calibration_fit fit = { .runs = &run, .n_runs = 1, .n_regressions = 1, .loo_configs = 1, .loo_model_n = 1,
                            .loo_model_median = 0.04, .loo_model_worst = 0.04,
                            .loo_ernest_median = NAN, .loo_ernest_worst = NAN };
    snprintf(fit.regressions[0].name, sizeof fit.regressions[0].name, "compute");
    fit.regressions[0].points = 100;
    fit.regressions[0].dof = 98;
    fit.regressions[0].rms_s = 0.001;
    char *dir = clirun_tmpdir();
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &cal, &fit, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(&back.params, &cal.params, sizeof cal.params), 0, "parameters differ after the round trip");
    cr_assert_eq(back.stderr_.c1_s, cal.stderr_.c1_s);
    cr_assert_eq(back.stderr_.beta_allreduce, cal.stderr_.beta_allreduce);
    cr_assert_eq(back.stderr_.w1_s, cal.stderr_.w1_s);
    cr_assert_eq(back.params.startup_per_example_s, 4e-6);
    cr_assert_eq(back.params.master_wake_s, 1.2e-3);
    cr_assert_eq(back.stderr_.master_wake_s, 5e-5);
    cr_assert_str_eq(back.host, "node-a");
    cr_assert(back.has_workload);
    cr_assert_eq(back.examples, 6000);
    cr_assert_eq(back.batch, 32);
    cr_assert_eq(back.epochs, 5);
    FILE *f = fopen(path, "r");
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert(strstr(text, "\"note\": \"at the bound 0") != NULL, "%s", text);
    cr_assert(strstr(text, "\"unit\": \"s/example\"") != NULL);
    cr_assert(strstr(text, "\"loo_ernest_s\": null") != NULL);
    cr_assert(strstr(text, "\"method\": \"leave-one-configuration-out\"") != NULL);
    cr_assert(strstr(text, "\"configurations\": 1") != NULL);
    cr_assert(strstr(text, "\"trace\": \"r1.trace.jsonl\"") != NULL);
    remove(path);
    remove(dir);
    free(dir);
}

Test(calibration, write_refuses_a_nan_parameter_and_leaves_no_file) {
    calibration cal = example_calibration();
    cal.params.c1_s = NAN;
    char *dir = clirun_tmpdir();
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "not written: c1 must be a finite number") != NULL, "%s", err);
    FILE *f = fopen(path, "r");
    cr_assert_null(f);
    remove(dir);
    free(dir);
}

/* A file of the required parameters and `extra` ("name": {...}) is refused with `needle`. */
static void assert_refused_with(const char *extra, const char *needle) {
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"speedup-calibration\", \"version\": 1, \"host\": {\"name\": \"h\", \"cores\": 2},\n"
             " \"params\": {\n" PARAMS_BODY ", %s}}\n", extra);
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1, "accepted: %s", extra);
    cr_assert(strstr(err, needle), "%s", err);
}

Test(calibration, master_yield_above_one_is_refused_by_the_reader) {
    // Found by tests/fuzz (corpus/calibration/crash-master-yield-above-one.json): the reader
    // took 5.4, and every prediction then failed costmodel_check naming the configuration
    // instead of the file.
    assert_refused_with("\"master_yield\": {\"value\": 5.4, \"unit\": \"1\"}",
                        "params.master_yield.value: expected a fraction in [0, 1], got 5.4");
}

Test(calibration, a_negative_master_wake_is_refused_by_the_reader) {
    assert_refused_with("\"master_wake\": {\"value\": -0.001, \"unit\": \"s\"}", "params.master_wake.value");
}

Test(calibration, waits_block_other_than_0_or_1_is_refused_by_the_reader) {
    assert_refused_with("\"waits_block\": {\"value\": 0.5, \"unit\": \"1\"}",
                        "params.waits_block.value: expected 0 (waits poll) or 1 (waits block), got 0.5");
}

Test(calibration, host_cores_beyond_an_int_are_refused_by_the_reader) {
    // Found by tests/fuzz (corpus/calibration/crash-host-cores-1e20.json): the reader took
    // 1.1e20 cores and calibration_write's (int) cast of it was undefined behaviour.
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"speedup-calibration\", \"version\": 1, \"host\": {\"name\": \"h\", \"cores\": 2},\n"
             " \"params\": {\n" PARAMS_BODY "}}\n");
    // The same file with host cores replaced (the key once: duplicates are refused).
    char *cores = strstr(text, "\"host_cores\": {\"value\": 2, ");
    cr_assert_not_null(cores);
    const char *big = "\"host_cores\": {\"value\": 1.1e20, \"unit\": \"core\"}}}\n";
    memcpy(cores, big, strlen(big) + 1);
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(text, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "params.host_cores.value: expected at most 1048576 cores, got 1.1e+20"), "%s", err);
}

Test(calibration, a_long_multibyte_host_name_is_cut_whole_and_writes_back) {
    // 100 two-byte characters: 200 bytes do not fit host[128]; a byte-wise cut leaves half a
    // character, and json_pack then refused to write the calibration back.
    char name[256] = "";
    for (int i = 0; i < 100; i++)
        strcat(name, "\xc3\xa9");
    char text[4096];
    snprintf(text, sizeof text,
             "{\"format\": \"speedup-calibration\", \"version\": 1, \"host\": {\"name\": \"%s\", \"cores\": 2},\n"
             " \"params\": {\n" PARAMS_BODY "}}\n", name);
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(text, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(strlen(cal.host), 126, "63 whole characters");
    char *dir = clirun_tmpdir(), path[600];
    snprintf(path, sizeof path, "%s/back.json", dir);
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    remove(path);
    remove(dir);
    free(dir);
}

Test(calibration, overlap_and_uncalibrated_topologies_round_trip_and_old_files_have_neither) {
    calibration cal = example_calibration(), back;
    cal.params.overlap = 0.42;
    cal.stderr_.overlap = 0.03;
    cal.params.overlap_slowdown = 0.4;
    cal.stderr_.overlap_slowdown = 0.01;
    cal.params.overlap_exposed = 0.35;
    cal.stderr_.overlap_exposed = 0.02;
    cal.params.waits_block = 1;
    cal.uncalibrated[JOB_TOPO_PS] = true;
    char *dir = clirun_tmpdir();
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.params.overlap, 0.42);
    cr_assert_eq(back.stderr_.overlap, 0.03);
    cr_assert_eq(back.params.overlap_slowdown, 0.4);
    cr_assert_eq(back.stderr_.overlap_slowdown, 0.01);
    cr_assert_eq(back.params.overlap_exposed, 0.35);
    cr_assert_eq(back.stderr_.overlap_exposed, 0.02);
    cr_assert_eq(back.params.waits_block, 1.0);
    cr_assert(back.uncalibrated[JOB_TOPO_PS]);
    cr_assert(!back.uncalibrated[JOB_TOPO_ALLREDUCE]);
    cal.params.overlap = 0;
    cal.uncalibrated[JOB_TOPO_PS] = false;
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    FILE *f = fopen(path, "r");
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert(strstr(text, "uncalibrated_topologies") == NULL, "none: no field");
    /* A file from before either existed. */
    char *old = clirun_write_file(dir, "old.json", good);
    cr_assert_eq(calibration_read(old, &back, err, sizeof err), 0, "%s", err);
    cr_assert_eq(back.params.overlap, 0.0);
    cr_assert_eq(back.params.overlap_slowdown, 0.0);
    cr_assert_eq(back.params.overlap_exposed, 0.0);
    cr_assert_eq(back.params.waits_block, 0.0, "a file from before waits_block: ranks poll, as the trainer's");
    cr_assert_eq(back.params.master_wake_s, 0.0, "a file from before master_wake: messages cost alpha + beta*bytes");
    cr_assert(!back.uncalibrated[JOB_TOPO_PS] && !back.uncalibrated[JOB_TOPO_ALLREDUCE]);
    char *bad = clirun_write_file(dir, "bad.json",
                                  "{\"format\": \"speedup-calibration\", \"version\": 1,\n"
                                  " \"uncalibrated_topologies\": [\"ring\"],\n \"params\": {\n" PARAMS_BODY "}}\n");
    cr_assert_eq(calibration_read(bad, &back, err, sizeof err), -1);
    cr_assert(strstr(err, "uncalibrated_topologies[0]: expected ps or allreduce") != NULL, "%s", err);
    remove(path);
    remove(old);
    remove(bad);
    remove(dir);
    free(old);
    free(bad);
    free(dir);
}

Test(calibration, memory_round_trips_and_a_file_without_it_leaves_memory_unknown) {
    calibration cal = example_calibration(), back;
    cal.memory = memory_params_seed_example(); /* every field set, the stated ones too */
    cal.memory.se_base_bytes = 61234.5;
    cal.memory.points = 34;
    cal.memory.rms_bytes = 161226.75;
    cal.memory.worst_rel_error = 0.0118;
    char *dir = clirun_tmpdir(), path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    const memory_params *a = &cal.memory, *b = &back.memory;
    cr_assert(b->known && b->sharded_data == a->sharded_data && b->points == a->points);
    const double want[] = { a->base_bytes, a->peer_bytes, a->thread_bytes, a->allreduce_scratch, a->se_base_bytes,
                            a->fwd_bytes_per_example, a->train_bytes_per_example, a->workspace_bytes,
                            a->workspace_bytes_per_thread, a->example_bytes, a->test_examples, a->master_extra_bytes,
                            a->master_models_per_worker, a->master_example_bytes, a->rms_bytes, a->worst_rel_error };
    const double got[] = { b->base_bytes, b->peer_bytes, b->thread_bytes, b->allreduce_scratch, b->se_base_bytes,
                           b->fwd_bytes_per_example, b->train_bytes_per_example, b->workspace_bytes,
                           b->workspace_bytes_per_thread, b->example_bytes, b->test_examples, b->master_extra_bytes,
                           b->master_models_per_worker, b->master_example_bytes, b->rms_bytes, b->worst_rel_error };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        cr_assert_eq(got[i], want[i], "memory field %zu: %.17g after the round trip, %.17g before", i, got[i], want[i]);
    remove(path);
    remove(dir);
    free(dir);
    calibration old;
    cr_assert_eq(read_text(good, &old, err, sizeof err), 0, "%s", err);
    cr_assert(!old.memory.known, "a calibration from before memory was measured");
}

Test(calibration, negative_memory_term_is_named) {
    static const char *bad =
        "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY "},\n"
        " \"memory\": {\"base\": {\"value\": -5}}}\n";
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(bad, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "memory.base.value: expected a finite number >= 0") != NULL, "%s", err);
}

Test(calibration, a_signed_correction_reads_within_its_range_and_is_named_outside_it) {
    static const char *ok = "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY
                            ",\"master_yield_loss\": {\"value\": -0.4}}}\n";
    static const char *bad = "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY
                             ",\"master_yield_loss\": {\"value\": -1.5}}}\n";
    static const char *above = "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY
                               ",\"master_yield_loss\": {\"value\": 1.5}}}\n";
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(ok, &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.params.master_yield_loss, -0.4);
    cr_assert_eq(read_text(bad, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "params.master_yield_loss.value: expected a finite number >= -1, got -1.5") != NULL, "%s", err);
    cr_assert_eq(read_text(above, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "params.master_yield_loss.value: expected a number in [-1, 1], got 1.5") != NULL, "%s", err);
}

/* A fitted efficiency model with every field distinct, so that a swapped one shows. */
static efficiency_model example_efficiency(void) {
    efficiency_model m = { .known = true, .examples = 60000, .batch = 32, .epochs = 10, .chance = 0.1,
                           .theta = { 0.923, -1.25, 0.81, 0.37, 0.052, 4.7, 0.061 }, .sd_test = 0.0031,
                           .sd_subset = 0.0094, .points = 123, .runs = 5, .dof = 118, .staleness_max = 2.75 };
    for (int a = 0; a < EFFICIENCY_NP; a++) {
        m.fitted[a] = a != EFFICIENCY_GAMMA;
        for (int b = 0; b < EFFICIENCY_NP; b++)
            m.cov[a][b] = a == EFFICIENCY_GAMMA || b == EFFICIENCY_GAMMA ? 0 : (a == b ? 1e-4 * (a + 1) : 1e-6 * (a + b));
    }
    return m;
}

Test(calibration, efficiency_round_trips_and_a_file_without_it_has_none) {
    calibration cal = example_calibration(), back;
    cal.efficiency = example_efficiency();
    char *dir = clirun_tmpdir(), path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    const efficiency_model *a = &cal.efficiency, *b = &back.efficiency;
    cr_assert(b->known);
    cr_assert(b->examples == a->examples && b->batch == a->batch && b->epochs == a->epochs);
    cr_assert(b->points == a->points && b->runs == a->runs && b->dof == a->dof);
    cr_assert_eq(b->staleness_max, a->staleness_max);
    cr_assert_eq(b->chance, a->chance);
    cr_assert_eq(b->sd_test, a->sd_test);
    cr_assert_eq(b->sd_subset, a->sd_subset);
    for (int i = 0; i < EFFICIENCY_NP; i++) {
        cr_assert_eq(b->theta[i], a->theta[i], "theta[%d]", i);
        cr_assert_eq(b->fitted[i], a->fitted[i], "fitted[%d]", i);
        for (int j = 0; j < EFFICIENCY_NP; j++)
            cr_assert_eq(b->cov[i][j], a->cov[i][j], "cov[%d][%d]", i, j);
    }
    remove(path);
    remove(dir);
    free(dir);
    calibration old;
    cr_assert_eq(read_text(good, &old, err, sizeof err), 0, "%s", err);
    cr_assert(!old.efficiency.known, "a calibration from before accuracy was fitted");
}

#define EFFICIENCY_HEAD                                                                              \
    "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY "},\n"      \
    " \"efficiency\": {\"workload\": {\"examples\": 6000, \"batch\": 32, \"epochs\": 10}, \"chance\": 0.1,\n" \
    "  \"noise\": {\"sd_test\": 0.003, \"sd_subset\": 0.01},\n"
#define EFFICIENCY_COV                                                                         \
    "  \"cov\": [[1e-4,0,0,0,0],[0,1e-4,0,0,0],[0,0,1e-4,0,0],[0,0,0,1e-4,0],[0,0,0,0,1e-4]]"

/* A calibration whose efficiency object has these params and this cov. */
static char *efficiency_file(const char *params, const char *cov) {
    static char buf[4096];
    snprintf(buf, sizeof buf, EFFICIENCY_HEAD "  \"params\": {%s},\n%s}}\n", params, cov);
    return buf;
}

Test(calibration, bad_efficiency_values_are_refused_naming_the_field) {
    static const char *ok_params = "\"plateau\": {\"value\": 0.92}, \"log_x0\": {\"value\": -0.7}, "
                                   "\"power\": {\"value\": 1.2}, \"w\": {\"value\": 0.3}, \"gamma\": {\"value\": -0.01}";
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(efficiency_file(ok_params, EFFICIENCY_COV), &cal, err, sizeof err), 0, "%s", err);
    cr_assert(cal.efficiency.known && cal.efficiency.fitted[EFFICIENCY_GAMMA]);
    cr_assert_eq(cal.efficiency.theta[EFFICIENCY_GAMMA], -0.01);
    const struct { const char *params, *cov, *expect; } bad[] = {
        { "\"plateau\": {\"value\": 0.92}, \"log_x0\": {\"value\": -0.7}, \"power\": {\"value\": -1}, "
          "\"w\": {\"value\": 0.3}, \"gamma\": {\"value\": 0}", EFFICIENCY_COV,
          "efficiency.params.power.value: expected a finite number > 0, got -1" },
        { "\"plateau\": {\"value\": 1.2}, \"log_x0\": {\"value\": -0.7}, \"power\": {\"value\": 1}, "
          "\"w\": {\"value\": 0.3}, \"gamma\": {\"value\": 0}", EFFICIENCY_COV,
          "efficiency.params.plateau.value: expected an accuracy in (chance, 1], got 1.2" },
        { "\"plateau\": {\"value\": 0.9}, \"log_x0\": {\"value\": -0.7}, \"power\": {\"value\": 1}, "
          "\"w\": {\"value\": -0.3}, \"gamma\": {\"value\": 0}", EFFICIENCY_COV,
          "efficiency.params.w.value: expected a finite number >= 0, got -0.3" },
        { "\"plateau\": {\"value\": 0.9}, \"log_x0\": {\"value\": -0.7}, \"power\": {\"value\": 1}, "
          "\"w\": {\"value\": 0.3}", EFFICIENCY_COV, "efficiency.params.gamma: missing" },
        { ok_params, "  \"cov\": [[1e-4,0,0,0,0],[0,1e-4,0,0,0],[0,0,1e-4,0,0],[0,0,0,1e-4,0]]",
          "efficiency.cov: expected 5 rows of 5 numbers" },
        { ok_params, "  \"cov\": [[1e-4,2e-5,0,0,0],[0,1e-4,0,0,0],[0,0,1e-4,0,0],[0,0,0,1e-4,0],[0,0,0,0,1e-4]]",
          "efficiency.cov[1][0]: expected the symmetric entry's 2e-05, got 0" },
        { ok_params, "  \"cov\": [[1e-4,0,0,0,0],[0,1e-4,0,0,0],[0,0,-1e-4,0,0],[0,0,0,1e-4,0],[0,0,0,0,1e-4]]",
          "efficiency.cov[2][2]: a variance, expected >= 0, got -0.0001" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(read_text(efficiency_file(bad[i].params, bad[i].cov), &cal, err, sizeof err), -1, "case %zu", i);
        cr_assert(strstr(err, bad[i].expect) != NULL, "case %zu: %s", i, err);
    }
    static const char *no_workload =
        "{\"format\": \"speedup-calibration\", \"version\": 1, \"params\": {\n" PARAMS_BODY "},\n"
        " \"efficiency\": {\"chance\": 0.1, \"noise\": {\"sd_test\": 0, \"sd_subset\": 0}}}\n";
    cr_assert_eq(read_text(no_workload, &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "efficiency.workload: missing or not an object") != NULL, "%s", err);
}

/* A file from before β (six parameters, 6 × 6 cov) reads with β = 0, not fitted, so that
 * its predictions do not change and stale configurations are refused; one with
 * stale_cost needs its 7 × 7 cov and, fitted, the stalest run's staleness (fit.staleness_max). */
Test(calibration, efficiency_without_stale_cost_reads_with_beta_zero) {
    static const char *six = "\"plateau\": {\"value\": 0.92}, \"log_x0\": {\"value\": -0.7}, "
                             "\"power\": {\"value\": 1.2}, \"w\": {\"value\": 0.3}, \"gamma\": {\"value\": 0.05}, "
                             "\"log_h_c\": {\"value\": 4.5}";
    char seven[700];
    snprintf(seven, sizeof seven, "%s, \"stale_cost\": {\"value\": 0.07}", six);
    static const char *cov6 = "  \"cov\": [[1e-4,0,0,0,0,0],[0,1e-4,0,0,0,0],[0,0,1e-4,0,0,0],[0,0,0,1e-4,0,0],"
                              "[0,0,0,0,1e-4,0],[0,0,0,0,0,1e-2]]";
    static const char *cov7 = "  \"cov\": [[1e-4,0,0,0,0,0,0],[0,1e-4,0,0,0,0,0],[0,0,1e-4,0,0,0,0],"
                              "[0,0,0,1e-4,0,0,0],[0,0,0,0,1e-4,0,0],[0,0,0,0,0,1e-2,0],[0,0,0,0,0,0,4e-4]]";
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(efficiency_file(six, cov6), &cal, err, sizeof err), 0, "%s", err);
    cr_assert(cal.efficiency.pre_stale && !cal.efficiency.legacy_log_h);
    cr_assert(!cal.efficiency.fitted[EFFICIENCY_STALE_COST]);
    cr_assert_eq(cal.efficiency.theta[EFFICIENCY_STALE_COST], 0);
    cr_assert_eq(efficiency_n_params(&cal.efficiency), 6);
    /* a fitted stale_cost needs the stalest run it was fitted on */
    cr_assert_eq(read_text(efficiency_file(seven, cov7), &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "efficiency.fit.staleness_max: missing, and stale_cost is fitted") != NULL, "%s", err);
    char cov7_fit[600];
    snprintf(cov7_fit, sizeof cov7_fit, "%s,\n  \"fit\": {\"staleness_max\": 2.5}", cov7);
    cr_assert_eq(read_text(efficiency_file(seven, cov7_fit), &cal, err, sizeof err), 0, "%s", err);
    cr_assert_eq(cal.efficiency.staleness_max, 2.5);
    cr_assert(!cal.efficiency.pre_stale && cal.efficiency.fitted[EFFICIENCY_STALE_COST]);
    cr_assert_eq(cal.efficiency.theta[EFFICIENCY_STALE_COST], 0.07);
    cr_assert_eq(cal.efficiency.cov[EFFICIENCY_STALE_COST][EFFICIENCY_STALE_COST], 4e-4);
    cr_assert_eq(read_text(efficiency_file(seven, cov6), &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "efficiency.cov: expected 7 rows of 7 numbers") != NULL, "%s", err);
}

/* A file from before H_c (five parameters, 5 × 5 cov) is the ln H form; one with log_h_c
 * is the drift form and needs its 6 × 6 cov; a legacy model is written back as one. */
Test(calibration, efficiency_without_log_h_c_is_read_as_the_ln_h_form) {
    static const char *five = "\"plateau\": {\"value\": 0.92}, \"log_x0\": {\"value\": -0.7}, "
                              "\"power\": {\"value\": 1.2}, \"w\": {\"value\": 0.3}, \"gamma\": {\"value\": 0.05}";
    char six[600];
    snprintf(six, sizeof six, "%s, \"log_h_c\": {\"value\": 4.5}", five);
    static const char *cov6 = "  \"cov\": [[1e-4,0,0,0,0,0],[0,1e-4,0,0,0,0],[0,0,1e-4,0,0,0],[0,0,0,1e-4,0,0],"
                              "[0,0,0,0,1e-4,0],[0,0,0,0,0,1e-2]]";
    calibration cal;
    char err[512] = "";
    cr_assert_eq(read_text(efficiency_file(five, EFFICIENCY_COV), &cal, err, sizeof err), 0, "%s", err);
    cr_assert(cal.efficiency.legacy_log_h);
    cr_assert(!cal.efficiency.fitted[EFFICIENCY_LOG_HC]);
    cr_assert_eq(read_text(efficiency_file(six, cov6), &cal, err, sizeof err), 0, "%s", err);
    cr_assert(!cal.efficiency.legacy_log_h);
    cr_assert_eq(cal.efficiency.theta[EFFICIENCY_LOG_HC], 4.5);
    cr_assert_eq(cal.efficiency.cov[EFFICIENCY_LOG_HC][EFFICIENCY_LOG_HC], 1e-2);
    cr_assert_eq(read_text(efficiency_file(six, EFFICIENCY_COV), &cal, err, sizeof err), -1);
    cr_assert(strstr(err, "efficiency.cov: expected 6 rows of 6 numbers") != NULL, "%s", err);
    /* written back: still five parameters, still the ln H form */
    calibration legacy = example_calibration(), back;
    legacy.efficiency = example_efficiency();
    legacy.efficiency.legacy_log_h = true;
    char *dir = clirun_tmpdir(), path[512];
    snprintf(path, sizeof path, "%s/calibration.json", dir);
    cr_assert_eq(calibration_write(path, &legacy, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    cr_assert(back.efficiency.legacy_log_h);
    for (int i = 0; i < EFFICIENCY_LOG_HC; i++)
        cr_assert_eq(back.efficiency.theta[i], legacy.efficiency.theta[i], "theta[%d]", i);
    remove(path);
    remove(dir);
    free(dir);
}
