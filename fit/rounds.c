/* rounds — each round of the plan fitted alone, their spread as standard error (rounds.h). */
#include "fit/rounds.h"

#include "fit/fit_parts.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ROUNDS = 16 };

int fit_round_of(const char *path) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *r = strstr(base, "-r");
    int round = 0;
    for (; r; r = strstr(r + 2, "-r")) { /* the last "-rN." of the name */
        char *end;
        long v = strtol(r + 2, &end, 10);
        if (end > r + 2 && *end == '.' && v >= 1 && v <= 1000)
            round = (int)v;
    }
    return round;
}

/* Round `round`'s traces and the ones of no round into sub: how many. */
static int pick(trace *const *traces, const char *const *paths, int n, int round, trace **sub) {
    int m = 0;
    for (int i = 0; i < n; i++) {
        const int r = fit_round_of(paths[i]);
        if (r == round || r == 0)
            sub[m++] = traces[i];
    }
    return m;
}

static void note(calibration_fit *f, const char *param, const char *text) {
    if (f->n_notes == CALIBRATION_MAX_NOTES)
        return;
    calibration_note *n = &f->notes[f->n_notes++];
    snprintf(n->param, sizeof n->param, "%s", param);
    snprintf(n->text, sizeof n->text, "%s", text);
}

int fit_rounds_widen(trace *const *traces, const char *const *paths, int n, const fit_options *o,
                     fit_result *pooled) {
    int rounds[MAX_ROUNDS], n_rounds = 0;
    for (int i = 0; i < n; i++) {
        const int r = fit_round_of(paths[i]);
        bool seen = r == 0;
        for (int j = 0; j < n_rounds && !seen; j++)
            seen = rounds[j] == r;
        if (!seen && n_rounds < MAX_ROUNDS)
            rounds[n_rounds++] = r;
    }
    if (n_rounds < 2)
        return 0;
    trace **sub = malloc(sizeof *sub * (size_t)n);
    double(*value)[PARAM_COUNT] = malloc(sizeof *value * MAX_ROUNDS);
    if (!sub || !value) {
        free(sub), free(value);
        return -1;
    }
    int fitted = 0;
    for (int j = 0; j < n_rounds; j++) {
        const int m = pick(traces, paths, n, rounds[j], sub);
        costmodel_params p;
        char err[1200];
        if (fit_parameters(sub, m, o, &p, err, sizeof err))
            continue; /* a round that cannot be fitted alone tells nothing of the drift */
        for (int id = 0; id < PARAM_COUNT; id++)
            value[fitted][id] = param_get(&p, (param_id)id);
        fitted++;
    }
    for (int id = 0; fitted >= 2 && id < PARAM_COUNT; id++) {
        if (!param_info((param_id)id)->drawn)
            continue;
        double v[MAX_ROUNDS];
        for (int j = 0; j < fitted; j++)
            v[j] = value[j][id];
        const double between = gsl_stats_sd(v, 1, (size_t)fitted) / sqrt((double)fitted);
        double *se = param_se(&pooled->cal.stderr_, (param_id)id);
        if (!(between > *se))
            continue;
        char text[240];
        snprintf(text, sizeof text, "standard error %.3g from the spread of %d rounds fitted alone (the pooled fit's: "
                 "%.3g): the host drifted between them", between, fitted, *se);
        note(&pooled->fit, param_info((param_id)id)->name, text);
        *se = between;
    }
    free(sub), free(value);
    return fitted;
}
