/* speedup report end to end, tiny (64 examples per run, grid to 4 workers, 2 replications):
 * every figure is a real PNG of the size the scripts set, index.html shows and links each
 * one, the held-out runs are measured. Fourteen short mpirun jobs: ~40 s in the release
 * build, too slow under ASan, so registered for the release build only. */
#define _POSIX_C_SOURCE 200809L
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* REPORT_E2E_OUT (set by ctest): where the report stays for the tests that need one (the
 * browser's, tests/test_report_browser.sh); else a fresh temporary directory. */
static char *report_dir(void) {
    const char *keep = getenv("REPORT_E2E_OUT");
    if (!keep || !*keep)
        return clirun_tmpdir();
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir -p '%s'", keep, keep);
    cr_assert_eq(system(cmd), 0, "cannot make %s", keep);
    return strdup(keep);
}

Test(cli_report, tiny_report_draws_every_figure_and_links_it, .timeout = 240) {
    char *dir = report_dir(), args[1024];
    snprintf(args, sizeof args, "report --out %s/out --budget 1 --limit 64 --max-workers 4 --reps 2", dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "exit %d: %s", r.status, r.err);
    cr_assert(strstr(r.out, "index.html") != NULL, "says where the report is: %s", r.out);
    char out[512], path[1200];
    snprintf(out, sizeof out, "%s/out", dir);
    static const char *const figs[] = { "speedup", "splits", "breakdown", "timeline", "calibration" };
    snprintf(path, sizeof path, "%s/index.html", out);
    char *html = strdup(slurp(path)); /* slurp's buffer is reused below */
    char figdir[1100];
    snprintf(figdir, sizeof figdir, "%s/figures", out);
    for (int i = 0; i < 5; i++) {
        clirun_assert_png(figdir, figs[i], 1000, 640);
        char ref[128];
        snprintf(ref, sizeof ref, "src=\"figures/%s.png\"", figs[i]);
        cr_assert(strstr(html, ref) != NULL, "index.html does not show %s", figs[i]);
        snprintf(ref, sizeof ref, "href=\"figures/%s.svg\"", figs[i]);
        cr_assert(strstr(html, ref) != NULL, "index.html does not link %s.svg", figs[i]);
    }
    cr_assert(strstr(html, "held out") != NULL, "no held-out configuration in index.html");
    /* The fitted parameters are the registry's (model/params.h), not a list of the first ten. */
    for (const char *const *name = (const char *const[]){ "<td>c1</td>", "<td>rank_cv</td>", "<td>oversub_compute</td>",
                                                          "<td>master_yield</td>", NULL };
         *name; name++)
        cr_assert(strstr(html, *name) != NULL, "index.html's calibration table has no %s", *name);
    /* Every rank of the measured runs against the memory model (cli/report_memory.h). */
    cr_assert(strstr(html, "<h2 id=\"memory\">") && strstr(html, "<td>master+worker</td>"),
              "no memory section with the ps master in index.html");
    /* The cluster what-ifs come first (two by default: 1 and 10 Gbit/s), the validation
     * on this host after them. */
    for (int i = 1; i <= 2; i++) {
        char cdir[1200], ref[128];
        snprintf(cdir, sizeof cdir, "%s/cluster-%d", figdir, i);
        clirun_assert_png(cdir, "speedup", 1000, 640);
        snprintf(ref, sizeof ref, "src=\"figures/cluster-%d/speedup.png\"", i);
        const char *at = strstr(html, ref), *validation = strstr(html, "id=\"errors\"");
        cr_assert(at && validation && at < validation, "cluster-%d's figure is not before the validation", i);
    }
    char machines[128];
    snprintf(machines, sizeof machines, "On 16 machines x %ld cores, 10 Gbit/s", sysconf(_SC_NPROCESSORS_ONLN));
    cr_assert(strstr(html, machines) != NULL, "no '%s' in index.html", machines);
    /* The measurements are real runs: one row per measured configuration at batch 32. */
    snprintf(path, sizeof path, "%s/measurements.csv", out);
    const char *csv = slurp(path);
    cr_assert(strstr(csv, "\n2,1,every:8,allreduce,") != NULL, "no measured every:8 row: %s", csv);
    /* Every held-out configuration is run twice (the default --repeats), and the fidelity
     * figures are stated above the error table and in fidelity.csv (5 held-out rows on
     * a 2-core host). */
    snprintf(path, sizeof path, "%s/measured/train-2x1-every-8-allreduce-b32-r2.trace.jsonl", out);
    FILE *second = fopen(path, "r");
    cr_assert_not_null(second, "no second run of 2x1 every:8: %s", path);
    fclose(second);
    cr_assert(strstr(html, "single runs") && strstr(html, "inside the 95% prediction interval for one run"),
              "no coverage figure in index.html");
    snprintf(path, sizeof path, "%s/fidelity.csv", out);
    const char *fid = slurp(path);
    int rows = 0;
    for (const char *p = strstr(fid, "\nconfiguration,"); p && (p = strchr(p + 1, '\n'));)
        rows += p[1] != '#' && p[1] != '\0';
    cr_assert(rows == 5 || rows == 7, "%d held-out rows in fidelity.csv: %s", rows, fid);
    cr_assert(strstr(r.out, "held-out: ") != NULL, "no fidelity line on stdout: %s", r.out);
    clirun_free(&r);
    free(html);
    free(dir);
}

