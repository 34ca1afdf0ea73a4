#include "sim/cores.h"

#include <math.h>
#include <stdlib.h>

struct cores {
    int ranks, processors;
    int rotating;          /* entities 0..rotating−1 take part in the rotation; the rest */
    int *placed;           /* (P) how many rotating ranks each processor holds, now */
    cores_policy policy;
    double now_s;
    long moves;            /* rotations so far: k */
    double *left_s;        /* (R) idle-core work left; computing where busy */
    double *rate;          /* (R) its share of an idle core now */
    bool *busy;            /* (R) */
    int *on;               /* (P) computing ranks on each processor (polling placement) */
    int n_busy;
};

cores *cores_new(int ranks, int processors) {
    cores *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ranks = c->rotating = ranks;
    c->processors = processors;
    c->placed = calloc((size_t)processors, sizeof *c->placed);
    c->left_s = calloc((size_t)ranks, sizeof *c->left_s);
    c->rate = calloc((size_t)ranks, sizeof *c->rate);
    c->busy = calloc((size_t)ranks, sizeof *c->busy);
    c->on = calloc((size_t)processors, sizeof *c->on);
    if (!c->left_s || !c->rate || !c->busy || !c->on || !c->placed) {
        cores_free(c);
        return NULL;
    }
    return c;
}

void cores_free(cores *c) {
    if (!c)
        return;
    free(c->left_s);
    free(c->rate);
    free(c->busy);
    free(c->on);
    free(c->placed);
    free(c);
}

void cores_set(cores *c, const cores_policy *policy) { c->policy = *policy; }

void cores_set_rotating(cores *c, int n) { c->rotating = n >= 1 && n <= c->ranks ? n : c->ranks; }

void cores_reset(cores *c) {
    c->now_s = 0;
    c->moves = 0;
    c->n_busy = 0;
    for (int r = 0; r < c->ranks; r++) {
        c->busy[r] = false;
        c->left_s[r] = 0;
    }
}

/* Polling ranks move; napping ones spread at once. */
static bool placed(const cores *c) { return !c->policy.napping && c->policy.tau_s > 0; }

static int rotating_processor_of(const cores *c, int r) {
    return (int)(((long)r + c->moves) % c->rotating) % c->processors;
}

/* A rotating rank's processor; another entity (a dedicated master) takes the processor
 * that holds the fewest rotating ranks, the first such from k mod P on. */
static int processor_of(const cores *c, int r) {
    if (r < c->rotating)
        return rotating_processor_of(c, r);
    int best = -1;
    for (int i = 0; i < c->processors; i++) {
        const int p = (int)((c->moves + i) % c->processors);
        if (best < 0 || c->placed[p] < c->placed[best])
            best = p;
    }
    return best;
}

/* The share of an idle core each rank gets on a processor of load n + b. */
static double share_at(const cores *c, double n) {
    const double load = n + c->policy.background;
    return load > 1.0 ? 1.0 / (load + c->policy.kappa * (load - 1.0)) : 1.0;
}

static void update_rates(cores *c) {
    if (!placed(c)) {
        const double share = share_at(c, (double)c->n_busy / c->processors);
        for (int r = 0; r < c->ranks; r++)
            c->rate[r] = share;
        return;
    }
    for (int p = 0; p < c->processors; p++)
        c->on[p] = c->placed[p] = 0;
    for (int r = 0; r < c->rotating; r++)
        c->placed[rotating_processor_of(c, r)]++;
    for (int r = 0; r < c->ranks; r++)
        if (c->busy[r])
            c->on[processor_of(c, r)]++;
    for (int r = 0; r < c->ranks; r++)
        c->rate[r] = share_at(c, c->on[processor_of(c, r)]);
}

/* Every busy rank's progress from now_s to t at the current rates. */
static void progress(cores *c, double t) {
    const double dt = t - c->now_s;
    if (dt > 0)
        for (int r = 0; r < c->ranks; r++)
            if (c->busy[r])
                c->left_s[r] -= c->rate[r] * dt;
    c->now_s = t;
}

/* Counts the rotations up to t: by steps, so a move at exactly (k + 1)·τ is counted at
 * that time whatever the rounding of t/τ. */
static void count_moves(cores *c, double t) {
    if (placed(c))
        while (t >= (double)(c->moves + 1) * c->policy.tau_s)
            c->moves++;
}

static double next_move(const cores *c) {
    return placed(c) && c->n_busy > 0 ? (double)(c->moves + 1) * c->policy.tau_s : INFINITY;
}

/* When rank r ends at the current rates. */
static double end_of(const cores *c, int r) { return c->now_s + c->left_s[r] / c->rate[r]; }

void cores_begin(cores *c, int rank, double work_s, double now_s) {
    progress(c, now_s);
    /* The rotations the clock passed while nothing computed moved no rank that mattered:
     * they are counted now, so the placement follows the clock. */
    count_moves(c, now_s);
    c->busy[rank] = true;
    c->left_s[rank] = work_s > 0 ? work_s : 0;
    c->n_busy++;
    update_rates(c);
}

double cores_next(const cores *c) {
    double t = next_move(c);
    for (int r = 0; r < c->ranks; r++)
        if (c->busy[r]) {
            const double e = end_of(c, r);
            if (e < t)
                t = e;
        }
    return t;
}

int cores_advance(cores *c, double t_s, int *done) {
    /* Decide who ends at the rates that held until t, before progress rounds them. */
    int n = 0;
    for (int r = 0; r < c->ranks; r++)
        if (c->busy[r] && end_of(c, r) <= t_s)
            done[n++] = r;
    progress(c, t_s);
    for (int i = 0; i < n; i++) {
        c->busy[done[i]] = false;
        c->left_s[done[i]] = 0;
        c->n_busy--;
    }
    count_moves(c, t_s);
    update_rates(c);
    return n;
}
