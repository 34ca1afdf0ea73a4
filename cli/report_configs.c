/* report_configs — which configurations the report measures (report_configs.h). */
#include "cli/report_configs.h"

#include "util/errmsg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static report_config make(int k, int t, const char *sync, const char *topo, long b, job_master m, int held) {
    report_config c = { .workers = k, .cores = t, .master = m, .batch = b, .epochs = 1, .held_out = held };
    snprintf(c.sync, sizeof c.sync, "%.23s", sync);
    snprintf(c.topology, sizeof c.topology, "%.15s", topo);
    return c;
}

/* The plan's runs at the grid's batch, in the fit (cli/calib_plan.h). */
static int in_fit(long b, long cores, report_config *out) {
    int n = 0;
    out[n++] = make(1, 1, "batch", "allreduce", b, JOB_MASTER_WORKER, 0);
    out[n++] = make(1, 2, "batch", "allreduce", b, JOB_MASTER_WORKER, 0);
    out[n++] = make(2, 1, "batch", "allreduce", b, JOB_MASTER_WORKER, 0);
    out[n++] = make(2, 1, "epoch", "allreduce", b, JOB_MASTER_WORKER, 0);
    out[n++] = make(2, 1, "batch", "ps", b, JOB_MASTER_WORKER, 0);
    if (cores >= 4) {
        out[n++] = make(2, 2, "batch", "allreduce", b, JOB_MASTER_WORKER, 0);
        out[n++] = make(4, 1, "batch", "allreduce", b, JOB_MASTER_WORKER, 0);
    }
    return n;
}

int report_configs_builtin(long b, long cores, report_config *out) {
    int n = in_fit(b, cores, out);
    out[n++] = make(2, 1, "every:8", "allreduce", b, JOB_MASTER_WORKER, 1);
    out[n++] = make(2, 1, "every:8", "ps", b, JOB_MASTER_WORKER, 1);
    out[n++] = make(2, 1, "epoch", "ps", b, JOB_MASTER_WORKER, 1);
    out[n++] = make(2, 1, "batch", "allreduce", 2 * b, JOB_MASTER_WORKER, 1);
    out[n++] = make(1, 2, "batch", "allreduce", b / 2, JOB_MASTER_WORKER, 1);
    if (cores >= 4) {
        out[n++] = make(4, 1, "every:8", "allreduce", b, JOB_MASTER_WORKER, 1);
        out[n++] = make(2, 2, "epoch", "ps", b, JOB_MASTER_WORKER, 1);
    }
    return n;
}

/* One line's configuration; 0, or -1 with what was expected in why. */
static int parse_line(char *line, report_config *c, char *why, int whylen) {
    char sync[24], topo[16], master[16], scaling[16], extra[2];
    long b;
    int k, t, e;
    const int fields = sscanf(line, "%d %d %23s %15s %ld %15s %d %15s %1s", &k, &t, sync, topo, &b, master, &e,
                              scaling, extra);
    if (fields != 7 && fields != 8)
        return errmsg_set(why, whylen, "expected 7 fields: WORKERS CORES SYNC TOPOLOGY BATCH MASTER EPOCHS, and "
                          "optionally an 8th: weak");
    if (fields == 8 && strcmp(scaling, "weak") != 0)
        return errmsg_set(why, whylen, "8th field '%s': expected weak (every worker takes BATCH a step)", scaling);
    job_config cc = { .workers = k, .cores = t, .batch = b, .epochs = e, .examples = b, .batch_per_worker = fields == 8 };
    if (job_sync_parse(sync, &cc.sync, &cc.every_n))
        return errmsg_set(why, whylen, "sync '%s': expected batch, epoch, every:N, async[:N] or hogwild[:N]", sync);
    if (job_topology_parse(topo, &cc.topology))
        return errmsg_set(why, whylen, "topology '%s': expected ps or allreduce", topo);
    if (job_master_parse(master, &cc.master))
        return errmsg_set(why, whylen, "master '%s': expected worker or dedicated", master);
    if (cc.batch_per_worker && cc.sync != JOB_SYNC_BATCH)
        return errmsg_set(why, whylen, "weak goes with batch sync (every:N and epoch already give every worker the "
                          "whole batch)");
    costmodel_params any = costmodel_params_seed_example();
    char bad[200];
    if (k > 64 || t > 64 || e > 100 || costmodel_check(&any, &cc, bad, sizeof bad))
        return errmsg_set(why, whylen, "%s", k > 64 || t > 64 || e > 100 ? "workers and cores at most 64, epochs at most 100" : bad);
    *c = make(k, t, sync, topo, b, cc.master, 1);
    c->epochs = e;
    c->batch_per_worker = cc.batch_per_worker;
    return 0;
}

int report_configs_read(const char *path, long b, long cores, report_config *out, int max, char *err,
                        int errlen) {
    FILE *f = fopen(path, "r");
    if (!f)
        return errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    int n = in_fit(b, cores, out), fitted = n, lineno = 0, rc = 0;
    char line[512], why[300];
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        if (n == max)
            rc = errmsg_set(err, errlen, "%s: line %d: more than %d configurations", path, lineno, max - 1);
        else if (parse_line(line, &out[n], why, sizeof why))
            rc = errmsg_set(err, errlen, "%s: line %d: %s", path, lineno, why);
        else
            n++;
    }
    fclose(f);
    if (rc == 0 && n == fitted)
        rc = errmsg_set(err, errlen, "%s: no configurations", path);
    return rc ? -1 : n;
}

void report_config_name(const report_config *k, char *out, int size) {
    int w = snprintf(out, (size_t)size, "%dx%d %s %s b%ld", k->workers, k->cores, k->sync, k->topology, k->batch);
    if (w > 0 && w < size && k->master == JOB_MASTER_DEDICATED)
        w += snprintf(out + w, (size_t)(size - w), " dedicated");
    if (w > 0 && w < size && k->epochs > 1)
        w += snprintf(out + w, (size_t)(size - w), " E%d", k->epochs);
    if (w > 0 && w < size && k->batch_per_worker)
        snprintf(out + w, (size_t)(size - w), " weak");
}
