/* cli/cmd_plot.c and plots/: real gnuplot output from real inputs, and clear errors. */
#define _POSIX_C_SOURCE 200809L
#include "trace/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void run_ok(const char *fmt, const char *a, const char *b) {
    char args[2048];
    snprintf(args, sizeof args, fmt, a, b, a, b);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    clirun_free(&r);
}

Test(plot, predictions_and_measurements_give_three_figures) {
    char *dir = clirun_tmpdir();
    run_ok("model --workers 1,2,4 --cores 1,2 --sync batch,epoch --out %s/pred.csv", dir, "");
    run_ok("model --workers 1,2 --cores 1,2 --sync batch,epoch --latency 0.2 --out %s/meas.csv", dir, "");
    run_ok("plot --predictions %s/pred.csv --measurements %s/meas.csv --out %s/fig", dir, dir);
    char fig[512];
    snprintf(fig, sizeof fig, "%s/fig", dir);
    clirun_assert_png(fig, "speedup", 1000, 640);
    clirun_assert_png(fig, "splits", 1000, 640);
    clirun_assert_png(fig, "breakdown", 1000, 640);
    free(dir);
}

Test(plot, predictions_alone_give_the_speedup_figure) {
    char *dir = clirun_tmpdir();
    run_ok("model --workers 1,2,4 --cores 1,2 --sync batch,epoch --out %s/pred.csv", dir, "");
    run_ok("plot --predictions %s/pred.csv --only speedup --out-dir %s/fig", dir, dir);
    char fig[512];
    snprintf(fig, sizeof fig, "%s/fig", dir);
    clirun_assert_png(fig, "speedup", 1000, 640);
    /* --out DIR, its older name, is the same directory. */
    run_ok("plot --predictions %s/pred.csv --only speedup --out %s/old", dir, dir);
    snprintf(fig, sizeof fig, "%s/old", dir);
    clirun_assert_png(fig, "speedup", 1000, 640);
    free(dir);
}

static void write_trace(const char *path, int workers, int cores, long batch, double step_s, job_topology topo) {
    trace_run run = { .host_cores = 2, .model_bytes = 400000 };
    snprintf(run.host, sizeof run.host, "plot-test-host");
    snprintf(run.net, sizeof run.net, "fc10");
    run.config = (job_config){ .workers = workers, .cores = cores, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = topo, .examples = 640, .batch = batch, .epochs = 1 };
    trace *t = trace_new(&run);
    for (int r = 0; r < workers; r++) {
        double now = 0.1;
        trace_event st = { .rank = r, .ph = TRACE_STARTUP, .t0_s = 0, .t1_s = 0.1, .epoch = -1, .step = -1 };
        trace_add(t, &st);
        for (int s = 0; s < 10; s++) {
            double d = step_s * (1.0 + 0.05 * ((s * 7 + r) % 5));
            trace_event c = { .rank = r, .ph = TRACE_COMPUTE, .t0_s = now, .t1_s = now + d, .epoch = 0, .step = s,
                              .examples = batch / workers };
            trace_event m = { .rank = r, .ph = TRACE_COMM, .t0_s = now + d, .t1_s = now + d + 0.002, .epoch = 0,
                              .step = s, .bytes = 400000 };
            trace_add(t, &c);
            if (workers > 1)
                trace_add(t, &m);
            now += d + 0.002;
        }
    }
    char err[512];
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
}

Test(plot, traces_give_a_timeline_and_a_calibration_figure) {
    char *dir = clirun_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/traces", dir);
    cr_assert_eq(mkdir(path, 0777), 0);
    const struct { int k, t; long b; double s; } runs[] = { { 1, 1, 32, 0.032 }, { 1, 1, 64, 0.060 }, { 2, 1, 64, 0.033 }, { 1, 2, 32, 0.018 } };
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/traces/run%d.trace.jsonl", dir, i);
        write_trace(path, runs[i].k, runs[i].t, runs[i].b, runs[i].s, i % 2 ? JOB_TOPO_ALLREDUCE : JOB_TOPO_PS);
    }
    char *calib = clirun_write_file(dir, "calibration.json",
        "{\"format\": \"speedup-calibration\", \"version\": 1, \"host\": {\"name\": \"plot-test-host\"},\n"
        " \"params\": {\"c0\": {\"value\": 0.002}, \"c1\": {\"value\": 0.0009}, \"sigma\": {\"value\": 0.1},\n"
        " \"alpha_ps\": {\"value\": 1e-4}, \"beta_ps\": {\"value\": 2e-9}, \"alpha_allreduce\": {\"value\": 1e-4},\n"
        " \"beta_allreduce\": {\"value\": 2e-9}, \"model_bytes\": {\"value\": 400000}, \"w0\": {\"value\": 0.1},\n"
        " \"w1\": {\"value\": 0}, \"cv\": {\"value\": 0.05}, \"host_cores\": {\"value\": 2}}}\n");
    char args[2048];
    snprintf(args, sizeof args, "plot --trace %s/traces/run2.trace.jsonl --sim-trace %s/traces/run2.trace.jsonl "
             "--calib %s --traces %s/traces --out %s/fig", dir, dir, calib, dir, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    char fig[512];
    snprintf(fig, sizeof fig, "%s/fig", dir);
    clirun_assert_png(fig, "timeline", 1000, 640);
    clirun_assert_png(fig, "calibration", 1000, 640);
    free(calib);
    free(dir);
}

Test(plot, missing_gnuplot_is_a_clear_error_and_writes_nothing) {
    char *dir = clirun_tmpdir();
    run_ok("model --workers 1,2 --out %s/pred.csv", dir, "");
    char args[1024];
    snprintf(args, sizeof args, "plot --predictions %s/pred.csv --out %s/fig", dir, dir);
    char with_env[1200];
    snprintf(with_env, sizeof with_env, "%s", args);
    setenv("SPEEDUP_GNUPLOT", "/nonexistent/gnuplot", 1);
    clirun_assert_refused(with_env, 1, "not found on PATH");
    unsetenv("SPEEDUP_GNUPLOT");
    char png[600];
    snprintf(png, sizeof png, "%s/fig/speedup.png", dir);
    cr_assert_null(fopen(png, "r"), "a figure was written without gnuplot");
    free(dir);
}

/* `plot --predictions` of a CSV holding text is refused with needle. */
static void assert_predictions_refused(const char *text, const char *needle) {
    char *dir = clirun_tmpdir();
    char *csv = clirun_write_file(dir, "bad.csv", text);
    char args[1024];
    snprintf(args, sizeof args, "plot --predictions %s --out %s/fig", csv, dir);
    clirun_assert_refused(args, 1, needle);
    free(csv);
    free(dir);
}

Test(plot, malformed_predictions_name_the_line) {
    assert_predictions_refused("workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s\n"
                               "1,1,batch,ps,10,1,1,1,10,0,0,0\n"
                               "2,1,batch,ps,6,1.6,1.6\n",
                               "bad.csv: line 3");
}

Test(plot, wrong_header_is_refused) {
    char *dir = clirun_tmpdir();
    char *csv = clirun_write_file(dir, "bad.csv", "a,b,c\n1,2,3\n");
    char args[1024];
    snprintf(args, sizeof args, "plot --predictions %s --out %s/fig", csv, dir);
    clirun_assert_refused(args, 1, "line 1: expected the header");
    free(csv);
    free(dir);
}

Test(plot, usage_errors_exit_two) {
    clirun_assert_refused("plot --predictions x.csv", 2, "--out-dir DIR is required");
    clirun_assert_refused("plot --out /tmp/x", 2, "nothing to plot");
    clirun_assert_refused("plot --out /tmp/x --predictions p.csv --only speedup,pie", 2, "'pie'");
    clirun_assert_refused("plot --out /tmp/x --calib c.json", 2, "--calib and --traces go together");
}

Test(plot, a_staleness_that_is_not_a_number_names_the_line) {
    assert_predictions_refused(
        "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,update_s,"
        "time_lo,time_hi,mean_lo,mean_hi,rss_worker_mib,rss_master_mib,fits,staleness_median,staleness_p90\n"
        "1,1,batch,ps,10,1,1,1,10,0,0,0,0,10,10,1,1,,,,,\n"
        "2,1,async,ps,6,1.6,1.6,1.6,5,1,0,0,0,6,6,1.6,1.6,,,,1,1.5\n"
        "4,1,async,ps,4,2.5,2.5,2.5,3,1,0,0,0,4,4,2.5,2.5,,,,three,4\n",
        "bad.csv: line 4");
}

Test(plot, a_memory_column_that_is_not_a_size_or_fits_that_is_not_0_or_1_names_the_line) {
    /* Unknown memory (empty) and a known one read; fits = 2 does not. */
    assert_predictions_refused(
        "workers,cores,sync,topology,time_s,speedup,ci_lo,ci_hi,compute_s,comm_s,wait_s,startup_s,update_s,"
        "time_lo,time_hi,mean_lo,mean_hi,rss_worker_mib,rss_master_mib,fits\n"
        "1,1,batch,ps,10,1,1,1,10,0,0,0,0,10,10,1,1,,,\n"
        "2,1,batch,ps,6,1.6,1.6,1.6,5,1,0,0,0,6,6,1.6,1.6,30.5,32,1\n"
        "4,1,batch,ps,4,2.5,2.5,2.5,3,1,0,0,0,4,4,2.5,2.5,28,31,2\n",
        "bad.csv: line 4");
}
