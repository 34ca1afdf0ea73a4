#include "model/predictions.h"

#include "model/traceinfo.h"
#include "util/atomicfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

prediction_row predictions_from_model(const costmodel_params *p, const costmodel_config *c) {
    costmodel_breakdown b = costmodel_breakdown_of(p, c);
    prediction_row r = {
        .workers = c->workers, .cores = c->cores, .topology = c->topology,
        .time_s = b.total_s, .speedup = costmodel_speedup(p, c),
        .compute_s = b.compute_s, .comm_s = b.comm_s, .wait_s = b.wait_s, .startup_s = b.startup_s,
        .update_s = b.update_s,
    };
    predictions_set_point(&r);
    costmodel_sync_format(c->sync, c->every_n, r.sync, sizeof r.sync);
    if (costmodel_sync_is_async(c->sync)) {
        const costmodel_async a = costmodel_async_of(p, c);
        r.has_staleness = true;
        r.staleness_median = a.staleness;
        r.staleness_p90 = a.staleness_p90;
    }
    return r;
}

prediction_row predictions_from_trace(const trace *t) {
    const costmodel_config *k = &t->run.config;
    prediction_row r = { .workers = k->workers, .cores = k->cores, .topology = k->topology, .speedup = 1 };
    costmodel_sync_format(k->sync, k->every_n, r.sync, sizeof r.sync);
    r.time_s = traceinfo_training_time(t);
    traceinfo_phases ph = traceinfo_phase_means(t);
    r.startup_s = ph.startup_s;
    r.compute_s = ph.compute_s;
    r.update_s = ph.update_s;
    r.comm_s = ph.comm_s;
    r.wait_s = ph.wait_s;
    predictions_set_point(&r);
    const trace_memory *m = &t->run.memory;
    if (m->has && m->n_ranks > 0) {
        /* rank 0's peak, and the largest of the others' (rank 0's when it ran alone) */
        long others = m->n_ranks > 1 ? 0 : m->peak_rss_kib[0];
        for (int i = 1; i < m->n_ranks; i++)
            others = m->peak_rss_kib[i] > others ? m->peak_rss_kib[i] : others;
        r.has_memory = r.fits = true;
        r.rss_master_mib = (double)m->peak_rss_kib[0] / 1024.0;
        r.rss_worker_mib = (double)others / 1024.0;
    }
    traceinfo_async a;
    if (costmodel_sync_is_async(k->sync) && traceinfo_async_of(t, &a) == 0 && a.updates > 0) {
        r.has_staleness = true;
        r.staleness_median = a.staleness_median;
        r.staleness_p90 = a.staleness_p90;
    }
    return r;
}

prediction_row predictions_from_model_interval(const costmodel_params *p, const costmodel_config *c,
                                               const uncertainty *u) {
    prediction_row r = predictions_from_model(p, c);
    uncertainty_interval pi = uncertainty_closed_form(p, c, u);
    r.time_lo = pi.time_lo_s;
    r.time_hi = pi.time_hi_s;
    r.ci_lo = pi.speedup_lo;
    r.ci_hi = pi.speedup_hi;
    return r;
}

void predictions_set_point(prediction_row *r) {
    r->ci_lo = r->ci_hi = r->mean_lo = r->mean_hi = r->speedup;
    r->time_lo = r->time_hi = r->time_s;
}

void predictions_write_csv(FILE *out, const prediction_row *rows, int n) {
    fprintf(out, "%s\n", PREDICTIONS_CSV_HEADER);
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        /* %.9g keeps every digit a double carries that a reader will care about. */
        fprintf(out, "%d,%d,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", r->workers,
                r->cores, r->sync, costmodel_topology_name(r->topology), r->time_s, r->speedup, r->ci_lo, r->ci_hi,
                r->compute_s, r->comm_s, r->wait_s, r->startup_s, r->update_s, r->time_lo, r->time_hi, r->mean_lo,
                r->mean_hi);
        if (r->has_memory)
            fprintf(out, ",%.6g,%.6g,%d", r->rss_worker_mib, r->rss_master_mib, r->fits ? 1 : 0);
        else
            fputs(",,,", out);
        if (r->has_staleness)
            fprintf(out, ",%.6g,%.6g\n", r->staleness_median, r->staleness_p90);
        else
            fputs(",,\n", out);
    }
}

int predictions_save_csv(const char *path, const prediction_row *rows, int n, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    predictions_write_csv(atomicfile_stream(f), rows, n);
    return atomicfile_commit(f, err, errlen);
}

void predictions_write_table(FILE *out, const prediction_row *rows, int n) {
    bool memory = false, stale = false;
    for (int i = 0; i < n; i++) {
        memory |= rows[i].has_memory;
        stale |= rows[i].has_staleness;
    }
    fprintf(out, "%7s %5s %-10s %-9s %12s %22s %8s %12s %12s %12s %12s %12s", "workers", "cores", "sync",
            "topology", "time_s", "95% PI (one run)", "speedup", "compute_s", "update_s", "comm_s", "wait_s",
            "startup_s");
    fputs(memory ? "  worker_MiB  rank0_MiB" : "", out);
    fputs(stale ? "  stale_med  stale_p90\n" : "\n", out);
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        char pi[48];
        /* A row without spread (a measurement, a known run) has no interval to show. */
        if (r->time_lo == r->time_hi)
            snprintf(pi, sizeof pi, "-");
        else
            snprintf(pi, sizeof pi, "[%.1f, %.1f]", r->time_lo, r->time_hi);
        fprintf(out, "%7d %5d %-10s %-9s %12.1f %22s %8.2f %12.1f %12.1f %12.1f %12.1f %12.1f", r->workers,
                r->cores, r->sync, costmodel_topology_name(r->topology), r->time_s, pi, r->speedup, r->compute_s,
                r->update_s, r->comm_s, r->wait_s, r->startup_s);
        if (memory && r->has_memory)
            fprintf(out, "  %10.1f %10.1f%s", r->rss_worker_mib, r->rss_master_mib, r->fits ? "" : "  OVER");
        else if (memory)
            fprintf(out, "  %10s %10s", "-", "-");
        if (stale && r->has_staleness)
            fprintf(out, "  %9.1f  %9.1f", r->staleness_median, r->staleness_p90);
        else if (stale)
            fprintf(out, "  %9s  %9s", "-", "-");
        fputs("\n", out);
    }
}

/* ---------------------------------------------------------------------------------- */
/* Reading */

static int read_fail(char *err, int errlen, const char *path, long line, const char *what) {
    snprintf(err, (size_t)errlen, "%s: line %ld: %s", path, line, what);
    return -1;
}

/* field[0], field[1]: finite numbers >= 0 into *a, *b; 0, or -1. */
static int parse_two(char *const *field, double *a, double *b) {
    char *end;
    double *v[2] = { a, b };
    for (int i = 0; i < 2; i++) {
        *v[i] = strtod(field[i], &end);
        if (end == field[i] || *end || !isfinite(*v[i]) || *v[i] < 0)
            return -1;
    }
    return 0;
}

/* The memory columns: all three empty (unknown), or two sizes >= 0 and fits 0 or 1. */
static int parse_memory(char *const *field, prediction_row *r) {
    if (!*field[0] && !*field[1] && !*field[2])
        return 0;
    if (parse_two(field, &r->rss_worker_mib, &r->rss_master_mib))
        return -1;
    if (strcmp(field[2], "0") != 0 && strcmp(field[2], "1") != 0)
        return -1;
    r->fits = field[2][0] == '1';
    r->has_memory = true;
    return 0;
}

/* The staleness columns: both empty (not async), or two numbers >= 0. */
static int parse_staleness(char *const *field, prediction_row *r) {
    if (!*field[0] && !*field[1])
        return 0;
    if (parse_two(field, &r->staleness_median, &r->staleness_p90))
        return -1;
    r->has_staleness = true;
    return 0;
}

/* One data line: `columns` comma-separated fields (12, 17, 20 or 22), numbers finite,
 * counts >= 1. */
static int parse_row(char *line, int columns, prediction_row *r) {
    memset(r, 0, sizeof *r);
    char *field[22];
    int n = 0;
    for (char *p = line; n < columns; n++) {
        field[n] = p;
        char *comma = strchr(p, ',');
        if (!comma) {
            n++;
            break;
        }
        *comma = '\0';
        p = comma + 1;
    }
    if (n != columns || strchr(field[columns - 1], ','))
        return -1;
    char *end;
    long k = strtol(field[0], &end, 10);
    if (end == field[0] || *end || k < 1 || k > 100000000)
        return -1;
    long t = strtol(field[1], &end, 10);
    if (end == field[1] || *end || t < 1 || t > 100000000)
        return -1;
    r->workers = (int)k;
    r->cores = (int)t;
    costmodel_sync sync;
    int every;
    if (costmodel_sync_parse(field[2], &sync, &every) || strlen(field[2]) >= sizeof r->sync)
        return -1;
    strcpy(r->sync, field[2]);
    if (costmodel_topology_parse(field[3], &r->topology))
        return -1;
    double *num[] = { &r->time_s, &r->speedup, &r->ci_lo, &r->ci_hi, &r->compute_s, &r->comm_s, &r->wait_s,
                      &r->startup_s, &r->update_s, &r->time_lo, &r->time_hi, &r->mean_lo, &r->mean_hi };
    for (int i = 0; i < (columns == 12 ? 8 : 13); i++) {
        *num[i] = strtod(field[4 + i], &end);
        if (end == field[4 + i] || *end || !isfinite(*num[i]) || *num[i] < 0)
            return -1;
    }
    if (columns == 12) { /* before update_s: its ci was the mean's interval */
        r->update_s = 0;
        r->time_lo = r->time_hi = r->time_s;
        r->mean_lo = r->ci_lo;
        r->mean_hi = r->ci_hi;
    }
    if (columns >= 20 && parse_memory(field + 17, r))
        return -1;
    return columns == 22 ? parse_staleness(field + 20, r) : 0;
}

int predictions_read_csv(const char *path, prediction_row **rows, int *n, char *err, int errlen) {
    *rows = NULL;
    *n = 0;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, (size_t)errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    char line[1024];
    long lineno = 0;
    int cap = 0, rc = 0, columns = 22;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            rc = read_fail(err, errlen, path, lineno, "line too long");
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (lineno == 1) {
            if (strcmp(line, PREDICTIONS_CSV_HEADER_V1) == 0)
                columns = 12;
            else if (strcmp(line, PREDICTIONS_CSV_HEADER_V2) == 0)
                columns = 17;
            else if (strcmp(line, PREDICTIONS_CSV_HEADER_V3) == 0)
                columns = 20;
            else if (strcmp(line, PREDICTIONS_CSV_HEADER) != 0)
                rc = read_fail(err, errlen, path, 1, "expected the header " PREDICTIONS_CSV_HEADER);
            continue;
        }
        if (len == 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            prediction_row *grown = realloc(*rows, sizeof **rows * (size_t)cap);
            if (!grown) {
                rc = read_fail(err, errlen, path, lineno, "out of memory");
                break;
            }
            *rows = grown;
        }
        if (parse_row(line, columns, &(*rows)[*n]))
            rc = read_fail(err, errlen, path, lineno,
                           columns == 12 ? "expected workers,cores,sync,topology and 8 numbers >= 0 (time_s .. startup_s)"
                           : columns == 17 ? "expected workers,cores,sync,topology and 13 numbers >= 0 (time_s .. mean_hi)"
                           : columns == 20 ? "expected workers,cores,sync,topology, 13 numbers >= 0 (time_s .. mean_hi), "
                                             "then rss_worker_mib,rss_master_mib,fits: two sizes >= 0 and 0 or 1, or "
                                             "all three empty"
                                           : "expected workers,cores,sync,topology, 13 numbers >= 0 (time_s .. mean_hi), "
                                             "then rss_worker_mib,rss_master_mib,fits: two sizes >= 0 and 0 or 1, or "
                                             "all three empty, then staleness_median,staleness_p90: two numbers >= 0 "
                                             "or both empty");
        else
            (*n)++;
    }
    if (rc == 0 && lineno == 0)
        rc = read_fail(err, errlen, path, 1, "empty file: expected the header " PREDICTIONS_CSV_HEADER);
    fclose(f);
    if (rc) {
        free(*rows);
        *rows = NULL;
        *n = 0;
    }
    return rc;
}
