#include "model/predictions.h"

#include "util/atomicfile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

prediction_row predictions_from_model(const costmodel_params *p, const job_config *c) {
    costmodel_breakdown b = costmodel_breakdown_of(p, c);
    prediction_row r = {
        .workers = c->workers, .cores = c->cores, .topology = c->topology,
        .time_s = b.total_s, .speedup = costmodel_speedup(p, c),
        .compute_s = b.compute_s, .comm_s = b.comm_s, .wait_s = b.wait_s, .startup_s = b.startup_s,
        .update_s = b.update_s,
    };
    predictions_set_point(&r);
    job_sync_format(c->sync, c->every_n, r.sync, sizeof r.sync);
    if (job_sync_is_async(c->sync)) {
        const costmodel_async a = costmodel_async_of(p, c);
        r.has_staleness = true;
        r.staleness_median = r.staleness_mean = a.staleness; /* the closed form's mean is its median */
        r.staleness_p90 = a.staleness_p90;
    }
    return r;
}

prediction_row predictions_from_model_interval(const costmodel_params *p, const job_config *c,
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

static const char *const REACH_NAMES[] = { [EFFICIENCY_REACHED] = "reached",
                                           [EFFICIENCY_BEYOND_SCHEDULE] = "beyond_schedule",
                                           [EFFICIENCY_ABOVE_PLATEAU] = "above_plateau" };

/* ",x" when the value is known, "," when not (an end not reached). */
static void put_optional(FILE *out, bool known, double x) {
    if (known)
        fprintf(out, ",%.9g", x);
    else
        fputc(',', out);
}

/* The nine time-to-accuracy columns of row r (all empty without a target). */
static void write_tta(FILE *out, const prediction_row *r) {
    const efficiency_prediction *t = &r->tta;
    if (!r->has_tta) {
        fputs(",,,,,,,,,", out);
        return;
    }
    const bool reached = t->reach == EFFICIENCY_REACHED;
    fprintf(out, ",%.9g,%s", t->target, REACH_NAMES[t->reach]);
    put_optional(out, reached, t->epochs);
    put_optional(out, t->lo_reached, t->epochs_lo);
    put_optional(out, t->hi_reached, t->epochs_hi);
    put_optional(out, reached, t->time_s);
    put_optional(out, t->lo_reached, t->time_lo_s);
    put_optional(out, t->hi_reached, t->time_hi_s);
    fprintf(out, ",%.9g", t->accuracy_at_end);
}

void predictions_write_csv(FILE *out, const prediction_row *rows, int n) {
    bool tta = false;
    for (int i = 0; i < n; i++)
        tta |= rows[i].has_tta;
    fprintf(out, "%s\n", tta ? PREDICTIONS_CSV_HEADER_TTA : PREDICTIONS_CSV_HEADER);
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        /* %.9g keeps every digit a double carries that a reader will care about. */
        fprintf(out, "%d,%d,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g", r->workers,
                r->cores, r->sync, job_topology_name(r->topology), r->time_s, r->speedup, r->ci_lo, r->ci_hi,
                r->compute_s, r->comm_s, r->wait_s, r->startup_s, r->update_s, r->time_lo, r->time_hi, r->mean_lo,
                r->mean_hi);
        if (r->has_memory)
            fprintf(out, ",%.6g,%.6g,%d", r->rss_worker_mib, r->rss_master_mib, r->fits ? 1 : 0);
        else
            fputs(",,,", out);
        if (r->has_staleness)
            fprintf(out, ",%.6g,%.6g", r->staleness_median, r->staleness_p90);
        else
            fputs(",,", out);
        if (tta)
            write_tta(out, r);
        fputc('\n', out);
    }
}

int predictions_save_csv(const char *path, const prediction_row *rows, int n, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    predictions_write_csv(atomicfile_stream(f), rows, n);
    return atomicfile_commit(f, err, errlen);
}

void predictions_duration(double s, char *out, int size) {
    if (!(s >= 60)) {
        snprintf(out, (size_t)size, "%.3g s", s);
        return;
    }
    const long t = lround(s);
    snprintf(out, (size_t)size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
}

/* The term that takes most of a row's time, as "comm 68%". */
static void most_of(const prediction_row *r, char *out, size_t size) {
    const struct { const char *name; double s; } terms[] = {
        { "compute", r->compute_s }, { "update", r->update_s }, { "comm", r->comm_s }, { "wait", r->wait_s },
        { "start-up", r->startup_s } };
    int best = 0;
    for (int i = 1; i < 5; i++)
        best = terms[i].s > terms[best].s ? i : best;
    snprintf(out, size, "%s %.0f%%", terms[best].name, r->time_s > 0 ? 100 * terms[best].s / r->time_s : 0.0);
}

/* The 80-column table: time as h:mm:ss, its interval, the speedup, the largest term. */
static void write_narrow(FILE *out, const prediction_row *rows, int n) {
    fprintf(out, "%7s %5s %-8s %-9s %8s %18s %6s %s\n", "workers", "cores", "sync", "topology", "time",
            "95% PI (one run)", "speedup", "most of it");
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        char t[24], lo[24], hi[24], pi[56], most[32];
        predictions_duration(r->time_s, t, sizeof t);
        predictions_duration(r->time_lo, lo, sizeof lo);
        predictions_duration(r->time_hi, hi, sizeof hi);
        if (r->time_lo == r->time_hi)
            snprintf(pi, sizeof pi, "-");
        else
            snprintf(pi, sizeof pi, "[%s, %s]", lo, hi);
        most_of(r, most, sizeof most);
        fprintf(out, "%7d %5d %-8s %-9s %8s %18s %6.3g %s%s\n", r->workers, r->cores, r->sync,
                job_topology_name(r->topology), t, pi, r->speedup, most, r->has_memory && !r->fits ? "  OVER" : "");
    }
}

void predictions_write_table(FILE *out, const prediction_row *rows, int n, bool wide) {
    if (!wide) {
        write_narrow(out, rows, n);
        return;
    }
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
                r->cores, r->sync, job_topology_name(r->topology), r->time_s, pi, r->speedup, r->compute_s,
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

void predictions_write_tta_table(FILE *out, const prediction_row *rows, int n, int epochs) {
    double target = 0;
    for (int i = 0; i < n; i++)
        target = rows[i].has_tta ? rows[i].tta.target : target;
    fprintf(out, "time to %.1f%% test accuracy (95%% PI of one run: the accuracy fit's and the time's uncertainty):\n",
            100 * target);
    fprintf(out, "%7s %5s %-10s %-9s %8s %20s %12s %26s\n", "workers", "cores", "sync", "topology", "epochs",
            "95% PI", "time_s", "95% PI (one run)");
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        const efficiency_prediction *t = &r->tta;
        fprintf(out, "%7d %5d %-10s %-9s ", r->workers, r->cores, r->sync, job_topology_name(r->topology));
        if (!r->has_tta) {
            fputs("-\n", out);
            continue;
        }
        char lo[24], hi[24], tlo[24], thi[24], miss[200];
        snprintf(lo, sizeof lo, t->lo_reached ? "%.2f" : "not reached", t->epochs_lo);
        snprintf(hi, sizeof hi, t->hi_reached ? "%.2f" : "not reached", t->epochs_hi);
        snprintf(tlo, sizeof tlo, t->lo_reached ? "%.1f" : "not reached", t->time_lo_s);
        snprintf(thi, sizeof thi, t->hi_reached ? "%.1f" : "not reached", t->time_hi_s);
        if (t->reach == EFFICIENCY_REACHED) {
            char pe[64], pt[64];
            snprintf(pe, sizeof pe, "[%s, %s]", lo, hi);
            snprintf(pt, sizeof pt, "[%s, %s]", tlo, thi);
            fprintf(out, "%8.2f %20s %12.1f %26s\n", t->epochs, pe, t->time_s, pt);
        } else {
            efficiency_describe_miss(t, epochs, miss, sizeof miss);
            fprintf(out, "%s", miss);
            if (t->lo_reached) /* a lucky run might still: say how early */
                fprintf(out, "; 95%% PI from %s epochs (%s s)", lo, tlo);
            fputc('\n', out);
        }
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

/* An optional number >= 0: empty (known false), or finite. -1 when neither. */
static int parse_optional(const char *f, bool *known, double *x) {
    *known = *f != '\0';
    *x = 0;
    if (!*known)
        return 0;
    char *end;
    *x = strtod(f, &end);
    return end == f || *end || !isfinite(*x) || *x < 0 ? -1 : 0;
}

/* The nine time-to-accuracy columns (see the header): all empty, or a target, its reach
 * and what goes with it. */
static int parse_tta(char *const *field, prediction_row *r) {
    bool any = false;
    for (int i = 0; i < 9; i++)
        any |= *field[i] != '\0';
    if (!any)
        return 0;
    efficiency_prediction *t = &r->tta;
    bool known, reached_epochs, reached_time;
    int reach = -1;
    for (int i = 0; i < 3; i++)
        if (strcmp(field[1], REACH_NAMES[i]) == 0)
            reach = i;
    if (parse_optional(field[0], &known, &t->target) || !known || !(t->target > 0 && t->target < 1) || reach < 0)
        return -1;
    t->reach = (efficiency_reach)reach;
    if (parse_optional(field[2], &reached_epochs, &t->epochs) || parse_optional(field[3], &t->lo_reached, &t->epochs_lo) ||
        parse_optional(field[4], &t->hi_reached, &t->epochs_hi) || parse_optional(field[5], &reached_time, &t->time_s) ||
        parse_optional(field[8], &known, &t->accuracy_at_end) || !known || t->accuracy_at_end > 1)
        return -1;
    bool lo_time, hi_time;
    if (parse_optional(field[6], &lo_time, &t->time_lo_s) || parse_optional(field[7], &hi_time, &t->time_hi_s) ||
        lo_time != t->lo_reached || hi_time != t->hi_reached)
        return -1;
    const bool reached = t->reach == EFFICIENCY_REACHED;
    if (reached_epochs != reached || reached_time != reached)
        return -1;
    t->has_time = true;
    r->has_tta = true;
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

/* One data line: `columns` comma-separated fields (12, 17, 20, 22, 29 or 31), numbers finite,
 * counts >= 1. */
static int parse_row(char *line, int columns, prediction_row *r) {
    memset(r, 0, sizeof *r);
    char *field[31];
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
    job_sync sync;
    int every;
    if (job_sync_parse(field[2], &sync, &every) || strlen(field[2]) >= sizeof r->sync)
        return -1;
    strcpy(r->sync, field[2]);
    if (job_topology_parse(field[3], &r->topology))
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
    if ((columns == 22 || columns == 31) && parse_staleness(field + 20, r))
        return -1;
    return columns == 29 ? parse_tta(field + 20, r) : columns == 31 ? parse_tta(field + 22, r) : 0;
}

#define EXPECT_NUMBERS "expected workers,cores,sync,topology, 13 numbers >= 0 (time_s .. mean_hi)"
#define EXPECT_MEMORY ", then rss_worker_mib,rss_master_mib,fits: two sizes >= 0 and 0 or 1, or all three empty"
#define EXPECT_STALENESS ", then staleness_median,staleness_p90: two numbers >= 0 or both empty"
#define EXPECT_TTA                                                                                              \
    ", then target_accuracy in (0, 1), reach (reached, beyond_schedule or above_plateau), epochs and times >= 0 " \
    "(empty where not reached) and accuracy_at_end in [0, 1], or all nine empty"

/* What a data line of `columns` fields should have been. */
static const char *row_expected(int columns) {
    switch (columns) {
    case 12: return "expected workers,cores,sync,topology and 8 numbers >= 0 (time_s .. startup_s)";
    case 17: return EXPECT_NUMBERS;
    case 20: return EXPECT_NUMBERS EXPECT_MEMORY;
    case 22: return EXPECT_NUMBERS EXPECT_MEMORY EXPECT_STALENESS;
    case 29: return EXPECT_NUMBERS EXPECT_MEMORY EXPECT_TTA;
    default: return EXPECT_NUMBERS EXPECT_MEMORY EXPECT_STALENESS EXPECT_TTA;
    }
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
            else if (strcmp(line, PREDICTIONS_CSV_HEADER_V3_TTA) == 0)
                columns = 29;
            else if (strcmp(line, PREDICTIONS_CSV_HEADER_TTA) == 0)
                columns = 31;
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
            rc = read_fail(err, errlen, path, lineno, row_expected(columns));
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

const prediction_row *predictions_fastest_batch_sync(const prediction_row *rows, int n) {
    const prediction_row *batch = NULL;
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].sync, "batch") == 0 && (!batch || rows[i].time_s < batch->time_s))
            batch = &rows[i];
    return batch;
}

bool predictions_row_is_async(const prediction_row *r) {
    job_sync sync;
    int every_n;
    return job_sync_parse(r->sync, &sync, &every_n) == 0 && job_sync_is_async(sync);
}

double predictions_accuracy_after(const efficiency_model *m, const prediction_row *r, const job_config *workload,
                                  char *why, int whylen) {
    job_config c = *workload;
    c.workers = r->workers;
    c.cores = r->cores;
    c.topology = r->topology;
    if (job_sync_parse(r->sync, &c.sync, &c.every_n)) {
        snprintf(why, (size_t)whylen, "unknown sync '%s'", r->sync);
        return NAN;
    }
    const bool stale = job_sync_is_async(c.sync);
    c.master = stale ? JOB_MASTER_DEDICATED : JOB_MASTER_WORKER;
    const double tau = stale ? r->staleness_mean : 0.0;
    if (!m->known) {
        snprintf(why, (size_t)whylen, "the calibration has no accuracy fit");
        return NAN;
    }
    if (efficiency_check_at(m, &c, tau, why, whylen))
        return NAN;
    return efficiency_accuracy(m, &c, tau, (double)workload->epochs);
}
