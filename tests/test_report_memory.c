/* cli/report_memory.c: the report's memory section, each rank of a measured run against
 * the model, worked out by hand. */
#define _POSIX_C_SOURCE 200809L
#include "cli/report_memory.h"
#include "trace/trace.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *section(const memory_params *m, const char *trace_path, const prediction_row *pred, int n_pred) {
    char *buf = NULL, err[512] = "";
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = report_memory_html(f, m, &trace_path, trace_path ? 1 : 0, pred, n_pred, err, sizeof err);
    fclose(f);
    cr_assert_eq(rc, 0, "%s", err);
    return buf;
}

Test(report_memory, each_rank_is_measured_against_its_role_and_the_grid_is_listed) {
    /* K = 2 ps, dedicated master (3 ranks), D = 100, B = 10, M = 1000 bytes; the model: a
     * 20 MiB base and nothing else fitted, no activations, 1-byte examples, no test set.
     * Master: 20 MiB + 4·1000 + (100 + 0)·1 + 8·100 + 2 events = 20 MiB + 4900 + 2·sizeof(event)
     * = 20.005 MiB; measured 22 MiB: −9.1 %. A worker: 20 MiB + 2·1000 + 900 (+ no events) = 20.003;
     * measured 20 MiB: +0.0 %. */
    trace_run run = { .model_bytes = 1000 };
    run.config = (job_config){ .workers = 2, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                     .topology = JOB_TOPO_PS, .master = JOB_MASTER_DEDICATED,
                                     .examples = 100, .batch = 10, .epochs = 1 };
    run.memory = (trace_memory){ .has = true, .example_bytes = 1, .n_ranks = 3, .peak_rss_kib = { 22528, 20480, 20480 } };
    trace *t = trace_new(&run);
    for (int i = 0; i < 2; i++) {
        trace_event e = { .rank = 0, .ph = TRACE_COMM, .t0_s = i, .t1_s = i + 1 };
        cr_assert_eq(trace_add(t, &e), 0);
    }
    char *dir = clirun_tmpdir(), path[512], err[512];
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    memory_params m = { .known = true, .base_bytes = 20 * 1048576.0, .example_bytes = 1 };
    prediction_row grid = { .workers = 4, .cores = 1, .sync = "batch", .topology = JOB_TOPO_PS,
                            .has_memory = true, .rss_worker_mib = 30.5, .rss_master_mib = 4200, .fits = false };
    char *html = section(&m, path, &grid, 1);
    cr_assert_not_null(strstr(html, "<td>2&times;1 batch ps dedicated b10</td><td>0</td><td>master</td>"
                                    "<td>22.0</td><td>20.0</td><td>-9.1%</td>"), "%s", html);
    cr_assert_not_null(strstr(html, "<td>1</td><td>worker</td><td>20.0</td><td>20.0</td><td>+0.0%</td>"), "%s", html);
    cr_assert_not_null(strstr(html, "3 ranks: worst |error| 9.1%"), "%s", html);
    cr_assert_not_null(strstr(html, "<td>30.5</td><td>4200.0</td><td class=\"bad\">no</td>"), "%s", html);
    free(html);
    /* A calibration without memory says so. */
    memory_params none = { .known = false };
    html = section(&none, path, NULL, 0);
    cr_assert_not_null(strstr(html, "has no memory parameters"), "%s", html);
    free(html);
    remove(path);
    remove(dir);
    free(dir);
}
