/* fit_rank — a rank's own speed within a run: ς (rank_cv, model/costmodel.h), from the
 * runs whose K ≥ 2 ranks each kept a core (costmodel_rank_cv applies nowhere else).
 *
 * Per rank, its steps' sum (each at most 3 fitted, fit_compute's level rule) over the
 * model's idle steps at their examples, on the log scale: l_r. Within a run the l_r differ
 * by the ranks' own speeds and by the steps' spread, which the rank's n_r steps average to
 * v_r/n_r (v_r: the relative variance of its own steps against the model's, so the rank's
 * speed is not in it); so ς² = (Σ (l_r − l̄)² − Σ (R − 1)/R · v_r/n_r) / Σ (R − 1), pooled
 * over the runs, at least 0, with the standard error of a variance's square root,
 * ς/√(2·dof). No such run: ς = 0, with a note. */
#include "fit/fit_parts.h"

#include "util/errmsg.h"

#include "trace/traceinfo.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    double measured, fitted;    /* Σ step (each at most 3 fitted), Σ fitted */
    double ratio, ratio_sq;     /* Σ step/fitted, Σ (step/fitted)² */
    long steps;
} rank_sum;

/* The relative variance of rank r's steps about their own mean, over its n steps: what the
 * steps' spread leaves in its l_r. */
static double steps_share(const rank_sum *r) {
    const double n = (double)r->steps, mean = r->ratio / n;
    if (r->steps < 2 || !(mean > 0))
        return 0.0;
    const double var = fmax(0.0, (r->ratio_sq - n * mean * mean) / (n - 1));
    return var / (mean * mean) / n;
}

/* Adds run t's ranks' spread to *ss (their l_r about their mean), the steps' share of it
 * to *noise and R − 1 to *dof; 0, or -1 out of memory. */
static int add_run(const fit_core *f, const trace *t, double *ss, double *noise, double *dof) {
    enum { PREEMPTED = 3 };
    const int ranks = traceinfo_ranks(t);
    rank_sum *r = calloc((size_t)(ranks > 0 ? ranks : 1), sizeof *r);
    if (!r)
        return -1;
    costmodel_params p = f->p;
    p.host_cores = t->run.host_cores;
    p.model_bytes = (double)t->run.model_bytes;
    /* The model's step is affine in its examples: its value at 0 and its slope, once. */
    const double at_zero = costmodel_step_time_at(&p, &t->run.config, 0.0);
    const double per_example = costmodel_step_time_at(&p, &t->run.config, 1.0) - at_zero;
    for (long k = 0; k < t->n_events; k++) {
        const trace_event *e = &t->events[k];
        if (!traceinfo_is_step(e) || e->rank < 0 || e->rank >= ranks)
            continue;
        const double y_hat = at_zero + per_example * (double)e->examples;
        if (!(y_hat > 0)) /* c0 and c1 at 0: nothing to weigh a step against */
            continue;
        const double y = fmin(e->t1_s - e->t0_s, PREEMPTED * y_hat);
        rank_sum *q = &r[e->rank];
        q->measured += y;
        q->fitted += y_hat;
        q->ratio += y / y_hat;
        q->ratio_sq += (y / y_hat) * (y / y_hat);
        q->steps++;
    }
    double sum = 0, sq = 0, steps = 0;
    int n = 0;
    for (int i = 0; i < ranks; i++)
        if (r[i].steps > 0 && r[i].measured > 0 && r[i].fitted > 0) {
            const double l = log(r[i].measured / r[i].fitted);
            sum += l;
            sq += l * l;
            steps += steps_share(&r[i]);
            n++;
        }
    free(r);
    if (n < 2)
        return 0;
    *ss += fmax(0.0, sq - sum * sum / n);
    *noise += (double)(n - 1) / n * steps;
    *dof += n - 1;
    return 0;
}

int fit_rank_cv(fit_subset *s, fit_core *f, char *err, int errlen) {
    double ss = 0, noise = 0, dof = 0;
    long runs = 0;
    f->p.rank_cv = f->se.rank_cv = 0;
    for (int i = 0; i < s->n; i++) {
        const trace *t = s->tr[i];
        costmodel_params at = f->p;
        at.host_cores = t->run.host_cores;
        if (!fit_used(s, i, true) || !costmodel_rank_cv_applies(&at, &t->run.config))
            continue;
        const double before = dof;
        if (add_run(f, t, &ss, &noise, &dof))
            return errmsg_set(err, errlen, "out of memory");
        runs += dof > before;
    }
    if (!(dof > 0)) {
        fit_note(f, "rank_cv", "no run of two or more ranks that each kept a core: the ranks are taken to run "
                 "at one speed (rank_cv = 0), and a round waits only for its steps' own spread");
        return 0;
    }
    f->p.rank_cv = sqrt(fmax(0.0, (ss - noise) / dof));
    f->se.rank_cv = f->p.rank_cv / sqrt(2.0 * dof);
    fit_add_reg(f, "rank_cv", "pooled variance of the ranks' log speed within a run", runs, (int)dof, ss);
    return 0;
}
