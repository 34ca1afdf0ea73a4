/* cli/cmd_advise.c: the advice is the fastest split the model knows of. */
#include "model/costmodel.h"
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

Test(cli_advise, best_split_is_the_fastest_of_every_divisor) {
    clirun_result r = clirun("advise --total-cores 12 --csv --sync batch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* 12 has 6 divisors: six rows after the header, sorted by time. */
    int rows = 0;
    double last = 0, first_time = 0;
    int best_k = 0;
    for (char *line = strchr(r.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int k, t;
        double time_s;
        cr_assert_eq(sscanf(line + 1, "%d,%d,batch,ps,%lf", &k, &t, &time_s), 3, "%s", line + 1);
        cr_assert_eq(k * t, 12);
        cr_assert_geq(time_s, last);
        if (rows == 0)
            first_time = time_s, best_k = k;
        last = time_s;
        rows++;
    }
    cr_assert_eq(rows, 6);
    /* Against the model directly: no divisor is faster than the advised one. */
    costmodel_params p = costmodel_params_seed_example();
    job_config c = costmodel_config_seed_example();
    for (int k = 1; k <= 12; k++) {
        if (12 % k)
            continue;
        c.workers = k;
        c.cores = 12 / k;
        cr_assert_geq(costmodel_total_time(&p, &c) * (1 + 1e-8), first_time, "K = %d beats advised K = %d", k, best_k);
    }
    clirun_free(&r);
}

Test(cli_advise, missing_cores_is_a_usage_error) {
    clirun_result r = clirun("advise");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--total-cores N is required") != NULL, "%s", r.err);
    clirun_free(&r);
    r = clirun("advise --total-cores 8 --workers 2");
    cr_assert_eq(r.status, 2);
    clirun_free(&r);
    r = clirun("advise --total-cores -4");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "'-4'") != NULL, "%s", r.err);
    clirun_free(&r);
}

Test(cli_advise, splits_batch_sync_cannot_make_are_skipped_with_a_note) {
    /* 64 cores, batch 32: 64 workers x 1 core would leave 32 ranks without examples. The
     * other six divisors are ranked; the note goes to stderr beside the CSV. */
    clirun_result r = clirun("advise --total-cores 64 --batch 32 --csv --sync batch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    int rows = 0;
    for (char *line = strchr(r.out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int k;
        cr_assert_eq(sscanf(line + 1, "%d,", &k), 1);
        cr_assert_leq(k, 32, "%s", line + 1);
        rows++;
    }
    cr_assert_eq(rows, 6, "%s", r.out);
    cr_assert(strstr(r.err, "skipped 64 workers x 1 core, batch sync, ps") != NULL, "%s", r.err);
    clirun_free(&r);
    /* In the table, the note follows it. */
    r = clirun("advise --total-cores 64 --batch 32 --sync batch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "skipped 64 workers x 1 core") != NULL, "%s", r.out);
    cr_assert(strstr(r.out, "95% PI (one run)") != NULL, "%s", r.out);
    clirun_free(&r);
}

/* A model with nothing but compute: c1 = 10 ms per example, no serial part, no comm, no
 * start-up, no spread. 320 examples, B = 32, one epoch, epoch sync. */
#define BARE "--c0 0 --c1 0.01 --sigma 0 --latency 0 --bandwidth 1e15 --startup 0,0 --cv 0 --run-cv 0 " \
             "--update 0 --examples 320 --batch 32 --epochs 1 --sync epoch --topology ps --csv"

/* The time of row "K,T,epoch,ps," in a predictions CSV, or -1. */
static double row_time(const char *csv, int k, int t) {
    char want[64];
    snprintf(want, sizeof want, "\n%d,%d,epoch,ps,", k, t);
    const char *at = strstr(csv, want);
    return at ? atof(at + strlen(want)) : -1;
}

Test(cli_advise, n_cores_means_n_cores_whatever_the_calibrated_host_had) {
    /* --host-cores 2 says the parameters were measured on 2 cores; 4 cores asked for are
     * 4 cores: 4 x 1 runs ⌈320/(4·32)⌉ = 3 steps of 0.01·32 = 0.32 s = 0.96 s (on the
     * 2-core host ρ = 2 would make it 1.92 s); 1 x 4 runs 10 steps of 0.32/4 = 0.8 s. */
    clirun_result r = clirun("advise --total-cores 4 --host-cores 2 " BARE);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_float_eq(row_time(r.out, 4, 1), 0.96, 1e-6, "%s", r.out);
    cr_assert_float_eq(row_time(r.out, 1, 4), 0.8, 1e-6, "%s", r.out);
    clirun_free(&r);
}

Test(cli_advise, on_a_cluster_a_worker_is_at_most_one_machine) {
    /* 2 machines of 2 cores on an infinitely fast network: 1 x 4 does not fit a machine;
     * 2 x 2 (5 steps of 0.16 s) and 4 x 1 do (ρ = 1). */
    clirun_result r = clirun("advise --total-cores 4 --cluster 2x2@1e15,0 " BARE);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert_eq(row_time(r.out, 1, 4), -1, "%s", r.out);
    cr_assert_float_eq(row_time(r.out, 4, 1), 0.96, 1e-6, "%s", r.out);
    cr_assert_float_eq(row_time(r.out, 2, 2), 5 * 0.16, 1e-6, "%s", r.out);
    clirun_free(&r);
    r = clirun("advise --total-cores 6 --cluster 2x2@1gbit " BARE);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "more than the cluster's 4") != NULL, "%s", r.err);
    clirun_free(&r);
}

Test(cli_advise, says_which_term_makes_each_alternative_lose) {
    /* Batch sync through a slow network against epoch sync: the loser loses on comm. */
    clirun_result r = clirun("advise --total-cores 4 --cluster 2x2@10mbit --sync batch,epoch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *why = strstr(r.out, "another sync:");
    cr_assert(why && strstr(why, "batch sync") && strstr(why, "of comm"), "%s", r.out);
    clirun_free(&r);
}

/* One vocabulary: --cores is the cores per worker in advise too (only those splits), and
 * --cores N alone, the old spelling of the total, is read as --total-cores with a warning. */
Test(cli_advise, cores_is_cores_per_worker_and_the_old_total_spelling_warns) {
    clirun_result r = clirun("advise --total-cores 16 --cores 1,2 --csv --sync batch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "\n16,1,batch,ps,") && strstr(r.out, "\n8,2,batch,ps,") && !strstr(r.out, "\n4,4,"),
              "%s", r.out);
    clirun_free(&r);
    r = clirun("advise --cores 16 --csv --sync batch --topology ps");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.err, "read as --total-cores 16"), "%s", r.err);
    cr_assert(strstr(r.out, "\n4,4,batch,ps,"), "%s", r.out);
    clirun_free(&r);
}

/* Every line a command prints fits 80 columns (UTF-8 characters), and no word is lost:
 * with the breaks taken out, a sentence longer than 80 columns reads whole. */
static void assert_fits_80_and_reads(const char *args, const char *sentence) {
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s: %s", args, r.err);
    for (const char *line = r.out; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        int columns = 0;
        for (const char *c = line; c < end; c++)
            columns += ((unsigned char)*c & 0xC0) != 0x80;
        cr_assert_leq(columns, 80, "%s: a line of %d columns: %.*s", args, columns, (int)(end - line), line);
        line = *end ? end + 1 : end;
    }
    cr_assert(clirun_says(r.out, sentence), "%s: \"%s\" not in:\n%s", args, sentence, r.out);
    clirun_free(&r);
}

Test(cli_advise, every_line_of_advise_model_and_simulate_fits_80_columns_and_loses_no_word) {
    assert_fits_80_and_reads("advise --total-cores 16 --cluster 4x4@10gbit --topology ps,allreduce",
                             "The fastest batch sync: ");
    assert_fits_80_and_reads("advise --total-cores 16 --cluster 4x4@10gbit",
                             "E = 5 epochs (the seed's, by default: give --examples, --batch, --epochs); on 4 "
                             "machines x 4 cores, 10 Gbit/s");
    assert_fits_80_and_reads("model --workers 2,4", "(the seed's, by default: give --examples, --batch, --epochs)");
    assert_fits_80_and_reads("simulate --workers 2 --reps 3", "95% PI (one run): where 95 runs in 100 should land");
}
