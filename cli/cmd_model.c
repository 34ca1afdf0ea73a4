/* speedup model — the closed-form cost model over a grid of configurations, with the 95%
 * prediction interval of one run from the delta method (model/uncertainty.h). */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/grid.h"
#include "cli/wrap.h"
#include "cli/memopt.h"
#include "model/predictions.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup model [FLAGS]\n"
            "\n"
            "Predicts time, speedup over one core, and where the time goes, from the\n"
            "closed-form model of DESIGN.md, for every combination of the lists below, with\n"
            "the 95%% prediction interval of ONE run: the run-to-run spread (run_cv), the step\n"
            "spread within a run (cv) and --calib's standard errors, on the log scale.\n"
            "\n");
    grid_print_usage(out);
    fputs(MEMOPT_USAGE, out);
    fprintf(out,
            "Output:\n"
            "  --csv                the predictions CSV on stdout instead of a table:\n"
            "                       time_s, speedup: the closed form; time_lo,time_hi /\n"
            "                       ci_lo,ci_hi: 95%% prediction interval of ONE run's time /\n"
            "                       speedup; mean_lo,mean_hi: the speedup (no Monte-Carlo error);\n"
            "                       compute_s, update_s, comm_s, wait_s, startup_s: the breakdown;\n"
            "                       rss_worker_mib, rss_master_mib, fits: memory per rank;\n"
            "                       staleness_median, staleness_p90: async and hogwild rows;\n"
            "                       with --target-accuracy, after those: target_accuracy, reach,\n"
            "                       epochs_to_target, epochs_lo, epochs_hi, tta_s, tta_lo,\n"
            "                       tta_hi, accuracy_at_end (empty where not reached)\n"
            "  --out FILE           also write the predictions CSV to FILE (atomically)\n"
            "  --help               this text\n");
}

enum { OPT_CSV = 1, OPT_OUT, OPT_HELP };

int cmd_model(int argc, char **argv) {
    static const struct option options[] = {
        GRID_LONG_OPTIONS,
        MEMOPT_LONG_OPTIONS,
        { "csv", no_argument, 0, OPT_CSV },
        { "out", required_argument, 0, OPT_OUT },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    grid g;
    grid_init(&g);
    memopt mo;
    memopt_init(&mo);
    int csv = 0;
    const char *out_path = NULL;
    int code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_CSV: csv = 1; continue;
        case OPT_OUT: out_path = optarg; continue;
        case OPT_HELP: usage(stdout); return 0;
        case '?':
            return args_unknown_flag("model", argv[optind - 1]);
        }
        const int mem = memopt_handle_option(&mo, code, optarg);
        if (mem < 0 || (mem > 0 && grid_handle_option(&g, code, optarg)))
            return 2;
    }
    if (optind < argc)
        return args_unexpected("model", argv[optind]);
    int rc = grid_finish(&g);
    if (rc || (rc = memopt_finish(&mo, g.calib_path, g.net_spec)))
        return rc;

    int n = grid_size(&g);
    prediction_row *rows = malloc(sizeof *rows * (size_t)n);
    if (!rows) {
        args_error("out of memory");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        job_config c = grid_config(&g, i);
        rows[i] = predictions_from_model_interval(&g.params, &c, &g.unc);
        memopt_fill(&mo, g.params.model_bytes, &c, &rows[i]);
        if (grid_fill_tta(&g, &c, &rows[i])) {
            free(rows);
            return 1;
        }
    }

    if (out_path) {
        char err[512];
        if (predictions_save_csv(out_path, rows, n, err, sizeof err)) {
            args_error("%s", err);
            free(rows);
            return 1;
        }
    }
    if (csv) {
        predictions_write_csv(stdout, rows, n);
    } else {
        FILE *out = wrap_open(stdout, g.wide ? 0 : WRAP_COLUMNS);
        grid_print_setting(&g, out);
        predictions_write_table(out, rows, n, g.wide);
        grid_print_interval_note(&g, out);
        grid_print_range_note(&g, rows, n, out);
        memopt_print_note(&mo, rows, n, out);
        if (!isnan(g.target_accuracy)) {
            fprintf(out, "\n");
            predictions_write_tta_table(out, rows, n, g.base.epochs);
        }
        wrap_close(out, stdout);
    }
    free(rows);
    return 0;
}
