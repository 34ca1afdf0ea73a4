/* rounds — standard errors that cover the host's drift between the plan's rounds.
 *
 * The pooled fit's standard errors describe the scatter inside one fit; the host drifts
 * from minute to minute, and two plans of the same code can differ by many of them
 * (issue 40: c1 by 15). The plan runs its configurations in rounds (trace names ...-rN),
 * so each round is a whole small plan: fitted alone, the rounds' spread of a parameter is
 * what the drift does to it. For every parameter the prediction interval draws
 * (model/params.h, drawn), the between-round standard error sd(θ_round) / √R replaces the
 * pooled one where it is larger, with a note naming both. Fewer than two rounds that fit:
 * nothing changes.
 */
#ifndef SPEEDUP_FIT_ROUNDS_H
#define SPEEDUP_FIT_ROUNDS_H

#include "fit/fit.h"

/* The round of a trace from its file name (...-rN.trace.jsonl): N, or 0 where none. */
int fit_round_of(const char *path);

/* Fits each round of traces/paths alone (traces with no round, the commbench's, go with
 * every round) with o, and widens pooled's standard errors as above. Returns how many
 * rounds were fitted (0 or 1: nothing changed), or -1 out of memory. */
int fit_rounds_widen(trace *const *traces, const char *const *paths, int n, const fit_options *o,
                     fit_result *pooled);

#endif
