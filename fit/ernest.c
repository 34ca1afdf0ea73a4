#define _POSIX_C_SOURCE 200809L
#include "fit/ernest.h"

#include "util/errmsg.h"

#include "fit/nnls.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ernest_features(double machines, double fraction, double out[ERNEST_N_THETA]) {
    /* amplab/ernest predictor.py: return [1.0, float(scale) / float(mc), float(mc), np.log(mc)] */
    out[0] = 1.0;
    out[1] = fraction / machines;
    out[2] = machines;
    out[3] = log(machines);
}

double ernest_predict(const ernest_model *m, double machines, double fraction) {
    double f[ERNEST_N_THETA], t = 0;
    ernest_features(machines, fraction, f);
    for (int j = 0; j < ERNEST_N_THETA; j++)
        t += m->theta[j] * f[j];
    return t;
}

/* ---------------------------------------------------------------------------------- */
/* Reading Ernest's CSV */

void ernest_data_free(ernest_data *d) {
    if (!d)
        return;
    free(d->points);
    free(d);
}

static int push(ernest_data *d, ernest_point p) {
    if (d->n == d->cap) {
        long cap = d->cap ? 2 * d->cap : 64;
        ernest_point *np = realloc(d->points, sizeof *np * (size_t)cap);
        if (!np)
            return -1;
        d->points = np;
        d->cap = cap;
    }
    d->points[d->n++] = p;
    return 0;
}

/* One field of a row, surrounding blanks allowed. Returns 0 and the value, or -1. */
static int parse_number(const char *text, size_t len, double *out) {
    char buf[64];
    while (len > 0 && (*text == ' ' || *text == '\t')) {
        text++;
        len--;
    }
    while (len > 0 && (text[len - 1] == ' ' || text[len - 1] == '\t'))
        len--;
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static const char *const field_names[3] = { "machines", "input_fraction", "time_s" };

static int parse_row(char *line, ernest_point *p, char *what, int whatlen) {
    double v[3];
    const char *s = line;
    for (int f = 0; f < 3; f++) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (f < 2 && !comma) {
            snprintf(what, (size_t)whatlen, "3 comma-separated fields machines,input_fraction,time_s, got %d", f + 1);
            return -1;
        }
        if (f == 2 && comma) {
            snprintf(what, (size_t)whatlen, "3 comma-separated fields machines,input_fraction,time_s, got more");
            return -1;
        }
        if (parse_number(s, len, &v[f])) {
            snprintf(what, (size_t)whatlen, "field %d (%s): a number, got '%.*s'", f + 1, field_names[f],
                     (int)(len > 40 ? 40 : len), s);
            return -1;
        }
        s = comma ? comma + 1 : s + len;
    }
    if (v[0] < 1 || v[0] != floor(v[0]) || v[0] > 1e9) {
        snprintf(what, (size_t)whatlen, "field 1 (machines): an integer >= 1, got %g", v[0]);
        return -1;
    }
    if (v[1] <= 0) {
        snprintf(what, (size_t)whatlen, "field 2 (input_fraction): a number > 0, got %g", v[1]);
        return -1;
    }
    if (v[2] < 0) {
        snprintf(what, (size_t)whatlen, "field 3 (time_s): a number >= 0, got %g", v[2]);
        return -1;
    }
    *p = (ernest_point){ .machines = v[0], .fraction = v[1], .time_s = v[2] };
    return 0;
}

ernest_data *ernest_read_csv(const char *path, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f) {
        errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    ernest_data *d = calloc(1, sizeof *d);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long lineno = 0;
    int ok = d != NULL;
    if (!d)
        errmsg_set(err, errlen, "%s: out of memory", path);
    while (ok && (len = getline(&line, &cap, f)) != -1) {
        lineno++;
        if ((size_t)len != strlen(line)) {
            errmsg_set(err, errlen, "%s: line %ld: expected text, found a NUL byte", path, lineno);
            ok = 0;
            break;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        const char *first = line + strspn(line, " \t");
        if (*first == '\0' || *first == '#')
            continue;
        ernest_point p;
        char what[160];
        if (parse_row(line, &p, what, sizeof what)) {
            errmsg_set(err, errlen, "%s: line %ld: expected %s", path, lineno, what);
            ok = 0;
        } else if (push(d, p)) {
            errmsg_set(err, errlen, "%s: out of memory at line %ld", path, lineno);
            ok = 0;
        }
    }
    if (ok && ferror(f)) {
        errmsg_set(err, errlen, "%s: read error: %s", path, strerror(errno));
        ok = 0;
    }
    if (ok && d->n == 0) {
        errmsg_set(err, errlen, "%s: no data rows: expected lines machines,input_fraction,time_s", path);
        ok = 0;
    }
    free(line);
    fclose(f);
    if (!ok) {
        ernest_data_free(d);
        return NULL;
    }
    return d;
}

/* ---------------------------------------------------------------------------------- */
/* The fit */

int ernest_fit(const ernest_point *points, long n, ernest_model *out, char *err, int errlen) {
    if (n <= ERNEST_N_THETA)
        return errmsg_set(err, errlen, "Ernest's model has %d parameters: it needs at least %d data points for a fit "
                    "with standard errors, got %ld", ERNEST_N_THETA, ERNEST_N_THETA + 1, n);
    gsl_matrix *A = gsl_matrix_alloc((size_t)n, ERNEST_N_THETA);
    gsl_vector *y = gsl_vector_alloc((size_t)n);
    nnls_result *r = nnls_result_new(ERNEST_N_THETA);
    int rc = -1;
    if (!A || !y || !r) {
        errmsg_set(err, errlen, "out of memory");
        goto done;
    }
    for (long i = 0; i < n; i++) {
        double f[ERNEST_N_THETA];
        if (!(points[i].machines >= 1)) {
            errmsg_set(err, errlen, "data point %ld: machines must be >= 1 (got %g)", i + 1, points[i].machines);
            goto done;
        }
        ernest_features(points[i].machines, points[i].fraction, f);
        for (int j = 0; j < ERNEST_N_THETA; j++)
            gsl_matrix_set(A, (size_t)i, (size_t)j, f[j]);
        gsl_vector_set(y, (size_t)i, points[i].time_s);
    }
    if (nnls_solve(A, y, r, err, errlen))
        goto done;
    for (int j = 0; j < ERNEST_N_THETA; j++) {
        out->theta[j] = gsl_vector_get(r->x, (size_t)j);
        out->se[j] = gsl_vector_get(r->se, (size_t)j);
        out->at_bound[j] = r->at_bound[j];
    }
    out->rss = r->rss;
    out->n = n;
    out->dof = r->dof;
    rc = 0;
done:
    nnls_result_free(r);
    if (y)
        gsl_vector_free(y);
    if (A)
        gsl_matrix_free(A);
    return rc;
}
