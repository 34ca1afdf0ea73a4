/* memory_fit — the per-rank peak regression (memory_fit.h). */
#include "fit/memory_fit.h"

#include "fit/nnls.h"
#include "util/errmsg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TERMS = 4 };
static const char *const term_names[TERMS] = { "base", "peer", "thread", "allreduce_scratch" };
static const char *const term_why[TERMS] = { "", "no run with two ranks or more", "no run at T > 1",
                                             "no all-reduce run at K >= 2" };

static memory_params known_of(const trace_memory *tm) {
    return (memory_params){ .known = true, .fwd_bytes_per_example = (double)tm->fwd_bytes_per_example,
                            .train_bytes_per_example = (double)tm->train_bytes_per_example,
                            .workspace_bytes = (double)tm->workspace_bytes,
                            .workspace_bytes_per_thread = (double)tm->workspace_bytes_per_thread,
                            .example_bytes = (double)tm->example_bytes,
                            .master_example_bytes = (double)tm->example_bytes,
                            .test_examples = (double)tm->test_examples };
}

double memory_fit_rank_trace_bytes(const trace *t, int rank) {
    long n = 0;
    for (long i = 0; i < t->n_events; i++)
        n += t->events[i].rank == rank;
    return (double)n * (double)sizeof(trace_event);
}

double memory_fit_known_bytes(const trace *t, int rank) {
    const memory_params m = known_of(&t->run.memory);
    const job_config *c = &t->run.config;
    return memory_peak(&m, (double)t->run.model_bytes, c, job_role_of(c, rank), memory_fit_rank_trace_bytes(t, rank)).total;
}

static bool usable(const trace *t) { return t->run.memory.has && t->run.memory.n_ranks > 0; }

/* Every trace's network counts agree with the first's; -1 with why. */
static int check_same_net(trace *const *traces, int n, const trace_memory **first, char *why, int whylen) {
    *first = NULL;
    for (int i = 0; i < n; i++) {
        if (!usable(traces[i]))
            continue;
        const trace_memory *m = &traces[i]->run.memory;
        if (!*first) {
            *first = m;
            continue;
        }
        if (m->fwd_bytes_per_example != (*first)->fwd_bytes_per_example ||
            m->train_bytes_per_example != (*first)->train_bytes_per_example ||
            m->workspace_bytes != (*first)->workspace_bytes || m->example_bytes != (*first)->example_bytes)
            return errmsg_set(why, whylen, "the traces record different networks or data (activation, workspace or "
                                           "example bytes differ): fit one network's runs");
    }
    return 0;
}

/* The rows: features (n_rows, TERMS) and y = measured − known, bytes. */
static long fill_rows(trace *const *traces, int n, double *x, double *y, double *measured) {
    long r = 0;
    for (int i = 0; i < n; i++) {
        const trace *t = traces[i];
        if (!usable(t))
            continue;
        for (int k = 0; k < t->run.memory.n_ranks; k++, r++) {
            const job_config *c = &t->run.config;
            memory_features((double)t->run.model_bytes, c, job_role_of(c, k), x + r * TERMS);
            measured[r] = 1024.0 * (double)t->run.memory.peak_rss_kib[k];
            y[r] = measured[r] - memory_fit_known_bytes(t, k);
        }
    }
    return r;
}

/* NNLS on the columns some row varies (the base always); the others stay 0. */
static int solve(const double *x, const double *y, long rows, memory_params *out, char *why, int whylen) {
    int used[TERMS], p = 0;
    for (int j = 0; j < TERMS; j++) {
        bool any = j == 0;
        for (long r = 0; r < rows && !any; r++)
            any = x[r * TERMS + j] != 0.0;
        if (any)
            used[p++] = j;
    }
    if (rows <= p)
        return errmsg_set(why, whylen, "%ld rank peaks for %d memory terms: too few", rows, p);
    gsl_matrix *A = gsl_matrix_alloc((size_t)rows, (size_t)p);
    gsl_vector *b = gsl_vector_alloc((size_t)rows);
    nnls_result *res = nnls_result_new(p);
    int rc = -1;
    char err[200];
    if (!A || !b || !res) {
        errmsg_set(why, whylen, "out of memory");
        goto done;
    }
    for (long r = 0; r < rows; r++) {
        gsl_vector_set(b, (size_t)r, y[r]);
        for (int j = 0; j < p; j++)
            gsl_matrix_set(A, (size_t)r, (size_t)j, x[r * TERMS + used[j]]);
    }
    if (nnls_solve(A, b, res, err, sizeof err)) {
        errmsg_set(why, whylen, "memory: %s", err);
        goto done;
    }
    double *value[TERMS] = { &out->base_bytes, &out->peer_bytes, &out->thread_bytes, &out->allreduce_scratch };
    double *se[TERMS] = { &out->se_base_bytes, &out->se_peer_bytes, &out->se_thread_bytes, &out->se_allreduce_scratch };
    for (int j = 0; j < p; j++) {
        *value[used[j]] = gsl_vector_get(res->x, (size_t)j);
        *se[used[j]] = gsl_vector_get(res->se, (size_t)j);
    }
    why[0] = '\0';
    for (int j = 0, k = 0; j < TERMS; j++) {
        if (k < p && used[k] == j) {
            k++;
            continue;
        }
        size_t len = strlen(why);
        snprintf(why + len, (size_t)whylen - len, "%s%s not fitted (%s): 0", len ? "; " : "", term_names[j], term_why[j]);
    }
    rc = 0;
done:
    gsl_matrix_free(A);
    gsl_vector_free(b);
    nnls_result_free(res);
    return rc;
}

int memory_fit(trace *const *traces, int n, memory_params *out, char *why, int whylen) {
    const trace_memory *first;
    why[0] = '\0';
    if (check_same_net(traces, n, &first, why, whylen))
        return -1;
    if (!first)
        return 1;
    long rows = 0;
    double test = 0;
    for (int i = 0; i < n; i++)
        if (usable(traces[i])) {
            rows += traces[i]->run.memory.n_ranks;
            test = fmax(test, (double)traces[i]->run.memory.test_set_examples);
        }
    double *x = malloc(sizeof *x * (size_t)rows * TERMS), *y = malloc(sizeof *y * (size_t)rows),
           *measured = malloc(sizeof *measured * (size_t)rows);
    memory_params m = known_of(first);
    m.test_examples = test;
    int rc = -1;
    if (!x || !y || !measured) {
        errmsg_set(why, whylen, "out of memory");
    } else {
        fill_rows(traces, n, x, y, measured);
        rc = solve(x, y, rows, &m, why, whylen);
    }
    if (rc == 0) {
        /* The fit's quality, on the peaks themselves. */
        double ss = 0, worst = 0;
        const double coef[TERMS] = { m.base_bytes, m.peer_bytes, m.thread_bytes, m.allreduce_scratch };
        for (long r = 0; r < rows; r++) {
            double fitted = 0;
            for (int j = 0; j < TERMS; j++)
                fitted += coef[j] * x[r * TERMS + j];
            const double e = fitted - y[r];
            ss += e * e;
            worst = fmax(worst, fabs(e) / measured[r]);
        }
        m.points = rows;
        m.rms_bytes = sqrt(ss / (double)rows);
        m.worst_rel_error = worst;
        *out = m;
    }
    free(x);
    free(y);
    free(measured);
    return rc;
}
