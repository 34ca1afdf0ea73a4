/* speedup advise — the best split of a number of cores into K workers × T cores, and the
 * sync mode and topology to use, ranked by predicted time (closed-form model), each with
 * the 95% prediction interval of one run. A split the model refuses (batch sync cannot
 * split a batch of B examples over K > B workers) is no way to use the cores: it is
 * skipped with a note, and the advice comes from the rest. */
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/grid.h"
#include "cli/memopt.h"
#include "model/predictions.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup advise --cores N [--calib F] [FLAGS]\n"
            "\n"
            "Ranks every way to use N cores — K workers x T cores with K*T = N, each sync\n"
            "mode and topology — by predicted training time, best first. Epoch and every:N\n"
            "sync average models instead of gradients: they train differently, so check\n"
            "accuracy before switching from batch sync. Batch sync cannot split B examples\n"
            "over more than B workers: such splits are skipped, with a note.\n"
            "\n"
            "  --cores N            total cores to use (K*T = N)                 [required]\n"
            "  --top N              show the N best alternatives                 [all]\n"
            "  --csv                the predictions CSV instead of a table\n"
            "  --help               this text\n"
            "\n"
            "Sync modes, topologies, workload and parameters as for speedup model\n"
            "(--workers is not used: advise tries every divisor of N):\n"
            "  --sync LIST  [batch,epoch]   --topology LIST  [ps,allreduce]   --master MODE\n"
            "  --calib FILE, --c0, --c1, --sigma, --latency, --bandwidth, --model-bytes,\n"
            "  --startup, --cv, --host-cores, --update, --run-cv, --examples, --batch, --epochs,\n"
            "  --batch-per-worker\n"
            MEMOPT_USAGE);
}

enum { OPT_TOP = 1, OPT_CSV, OPT_HELP };

typedef char skip_note[400];

/* Every way to use total cores (K | total, T = total/K) with each sync mode and topology
 * of g that the model accepts, as rows; each refused one (batch sync split over K > B
 * workers) as a note "CONFIG: why" in skipped. Returns the number of rows. */
static int advise_rows(const grid *g, const memopt *mo, int total, prediction_row *rows, skip_note *skipped,
                       int *n_skipped) {
    int n = 0;
    for (int s = 0; s < g->n_sync; s++)
        for (int t = 0; t < g->n_topology; t++)
            for (int k = 1; k <= total; k++) {
                if (total % k)
                    continue;
                costmodel_config c = g->base;
                c.workers = k;
                c.cores = total / k;
                c.sync = g->sync[s];
                c.every_n = g->every_n[s];
                c.topology = g->topology[t];
                char err[256], name[64];
                if (costmodel_check(&g->params, &c, err, sizeof err)) {
                    grid_describe(&c, name, sizeof name);
                    snprintf(skipped[(*n_skipped)++], sizeof *skipped, "%s: %s", name, err);
                    continue;
                }
                rows[n] = predictions_from_model_interval(&g->params, &c, &g->unc);
                memopt_fill(mo, g->params.model_bytes, &c, &rows[n++]);
            }
    return n;
}

static int by_time(const void *a, const void *b) {
    const prediction_row *x = a, *y = b;
    return (x->time_s > y->time_s) - (x->time_s < y->time_s);
}

int cmd_advise(int argc, char **argv) {
    static const struct option options[] = {
        GRID_LONG_OPTIONS,
        MEMOPT_LONG_OPTIONS,
        { "top", required_argument, 0, OPT_TOP },
        { "csv", no_argument, 0, OPT_CSV },
        { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    grid g;
    grid_init(&g);
    g.n_topology = 2;
    g.topology[0] = COSTMODEL_TOPO_PS;
    g.topology[1] = COSTMODEL_TOPO_ALLREDUCE;
    memopt mo;
    memopt_init(&mo);
    int total = 0, top = 0, csv = 0, code;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_TOP:
            if (args_int("--top", optarg, 1, 1000000, &top))
                return 2;
            continue;
        case OPT_CSV: csv = 1; continue;
        case OPT_HELP: usage(stdout); return 0;
        case GRID_OPT_CORES:
            /* Here --cores is the total to split, not a list of cores per worker. */
            if (args_int("--cores", optarg, 1, 1000000, &total))
                return 2;
            continue;
        case GRID_OPT_WORKERS:
            args_error("advise: --workers is not used: advise tries every K that divides --cores");
            return 2;
        case '?':
            return args_unknown_flag("advise", argv[optind - 1]);
        }
        const int mem = memopt_handle_option(&mo, code, optarg);
        if (mem < 0 || (mem > 0 && grid_handle_option(&g, code, optarg)))
            return 2;
    }
    if (optind < argc)
        return args_unexpected("advise", argv[optind]);
    if (total < 1) {
        args_error("advise: --cores N is required (the total number of cores to split)");
        return 2;
    }
    /* Every divisor K of N with T = N/K; the grid checks them all. */
    g.n_workers = g.n_cores = 1;
    g.workers[0] = g.cores[0] = 1;
    int rc = grid_finish(&g);
    if (rc || (rc = memopt_finish(&mo, g.calib_path)))
        return rc;

    int n_div = 0;
    for (int k = 1; k <= total; k++)
        n_div += total % k == 0;
    int n = n_div * g.n_sync * g.n_topology, n_skipped = 0;
    prediction_row *rows = malloc(sizeof *rows * (size_t)n);
    skip_note *skipped = malloc(sizeof *skipped * (size_t)n);
    if (!rows || !skipped) {
        free(rows);
        free(skipped);
        args_error("out of memory");
        return 1;
    }
    n = advise_rows(&g, &mo, total, rows, skipped, &n_skipped);
    qsort(rows, (size_t)n, sizeof *rows, by_time);
    int shown = top > 0 && top < n ? top : n;
    if (csv) {
        predictions_write_csv(stdout, rows, shown);
    } else {
        printf("advise: %d cores; parameters: %s; D = %ld examples, B = %ld, E = %d epochs\n", total, g.host,
               g.base.examples, g.base.batch, g.base.epochs);
        printf("best: %d workers x %d cores, %s sync, %s: %.1f s [95%% PI %.1f, %.1f], speedup %.2f over 1 core\n\n",
               rows[0].workers, rows[0].cores, rows[0].sync, costmodel_topology_name(rows[0].topology), rows[0].time_s,
               rows[0].time_lo, rows[0].time_hi, rows[0].speedup);
        predictions_write_table(stdout, rows, shown);
        grid_print_interval_note(&g, stdout);
        memopt_print_note(&mo, rows, shown, stdout);
    }
    /* Beside the CSV, not inside it. */
    for (int k = 0; k < n_skipped; k++)
        fprintf(csv ? stderr : stdout, "skipped %s\n", skipped[k]);
    free(skipped);
    free(rows);
    return 0;
}
