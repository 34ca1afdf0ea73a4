/* speedup report end to end, tiny (64 examples per run, grid to 4 workers, 2 replications):
 * every figure is a real PNG of the size the scripts set, index.html shows and links each
 * one, the held-out runs are measured. Fourteen short mpirun jobs: ~40 s in the release
 * build, too slow under ASan, so registered for the release build only. */
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void assert_png(const char *dir, const char *name, uint32_t width, uint32_t height) {
    char path[1200];
    snprintf(path, sizeof path, "%s/figures/%s.png", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    unsigned char head[24];
    size_t n = fread(head, 1, sizeof head, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_eq(n, sizeof head, "%s: too short", path);
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    cr_assert(memcmp(head, sig, 8) == 0, "%s: not a PNG", path);
    cr_assert(memcmp(head + 12, "IHDR", 4) == 0, "%s: no IHDR", path);
    uint32_t w = (uint32_t)head[16] << 24 | (uint32_t)head[17] << 16 | (uint32_t)head[18] << 8 | head[19];
    uint32_t h = (uint32_t)head[20] << 24 | (uint32_t)head[21] << 16 | (uint32_t)head[22] << 8 | head[23];
    cr_assert_eq(w, width, "%s: width %u", path, w);
    cr_assert_eq(h, height, "%s: height %u", path, h);
    cr_assert_gt(size, 5000, "%s: only %ld bytes, nothing drawn?", path, size);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

Test(cli_report, tiny_report_draws_every_figure_and_links_it, .timeout = 240) {
    char *dir = clirun_tmpdir(), args[1024];
    snprintf(args, sizeof args, "report --out %s/out --budget 1 --limit 64 --max-workers 4 --reps 2", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.out, "index.html") != NULL, "says where the report is: %s", r.out);
    char out[512], path[1200];
    snprintf(out, sizeof out, "%s/out", dir);
    static const char *const figs[] = { "speedup", "splits", "breakdown", "timeline", "calibration" };
    snprintf(path, sizeof path, "%s/index.html", out);
    const char *html = slurp(path);
    for (int i = 0; i < 5; i++) {
        assert_png(out, figs[i], 1000, 640);
        char ref[128];
        snprintf(ref, sizeof ref, "src=\"figures/%s.png\"", figs[i]);
        cr_assert(strstr(html, ref) != NULL, "index.html does not show %s", figs[i]);
        snprintf(ref, sizeof ref, "href=\"figures/%s.svg\"", figs[i]);
        cr_assert(strstr(html, ref) != NULL, "index.html does not link %s.svg", figs[i]);
    }
    cr_assert(strstr(html, "held out") != NULL, "no held-out configuration in index.html");
    /* The measurements are real runs: one row per measured configuration at batch 32. */
    snprintf(path, sizeof path, "%s/measurements.csv", out);
    const char *csv = slurp(path);
    cr_assert(strstr(csv, "\n2,1,every:8,allreduce,") != NULL, "no measured every:8 row: %s", csv);
    clirun_free(&r);
    free(dir);
}

