/* memory_fit — model/memory.h's fitted terms (base, peer, thread, allreduce_scratch) from
 * the peak resident set every rank of a `speedup train` run measured and its trace header
 * records (trace/trace.h's run.memory).
 *
 * For every rank of every training trace with a "memory" header: y = the rank's measured
 * peak − the known terms of its role (memory_peak with the fitted terms 0, the header's
 * network and data counts, and the trace events that rank recorded), regressed on the
 * features of memory_features (1, R − 1, T − 1, M·min(K − 1, 2)/K on all-reduce ranks) by
 * NNLS (fit/nnls.h) with standard errors. A feature no rank varies (every run at T = 1,
 * no all-reduce at K ≥ 2) is not fitted: its term is 0 with a note in `why`.
 *
 * The known terms in the result are the traces' (they must agree: one network, one data
 * set); test_examples is the test set's size (the largest test_set_examples).
 */
#ifndef SPEEDUP_MEMORY_FIT_H
#define SPEEDUP_MEMORY_FIT_H

#include "model/memory.h"
#include "trace/trace.h"

/* 0: fitted into *out (known, with points, rms_bytes, worst_rel_error), and `why` says
 * which terms could not be fitted ("" when all were); 1: no trace records memory (*out
 * is left with known = false); -1: the memory traces cannot be fitted (disagreeing
 * networks, fewer ranks than terms), the reason in why. Commbench traces are skipped. */
int memory_fit(trace *const *traces, int n, memory_params *out, char *why, int whylen);

/* The bytes of the events rank `rank` recorded in trace t: what its trace held in memory. */
double memory_fit_rank_trace_bytes(const trace *t, int rank);
/* The known part of one rank's peak in trace t (bytes): memory_peak of its role with the
 * fitted terms 0 and the rank's own recorded events. */
double memory_fit_known_bytes(const trace *t, int rank);

#endif
