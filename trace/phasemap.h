/* phasemap — which phase of trace/trace.h an event of someone else's trace is, by its
 * name: the table trace/chrome_import.h reads PyTorch profiler traces and Horovod
 * timelines with.
 *
 * A phase map is a list of rules "PATTERN PHASE", the first whose pattern matches the
 * event's whole name wins. PATTERN is a shell glob (fnmatch: '*' any text, '?' one
 * character, [...] a set; "aten::*" is a prefix match) and may contain spaces; PHASE, the
 * last word of the line, is one of
 *   compute update comm wait startup eval   that phase (trace/trace.h)
 *   step                                    a step's container (ProfilerStep#N): look
 *                                           inside it; a step ends where one begins
 *   -                                       none of its own: look inside it, and what is
 *                                           not placed there belongs to the phase that
 *                                           follows (an operator between two annotated
 *                                           phases, the interpreter's time between them)
 * A file (--phase-map FILE) has one rule per line; blank lines and lines starting with
 * '#' are skipped. Its rules come before the built-in ones (phasemap_default, printed by
 * phasemap_write), so a file overrides what it names and keeps the rest.
 *
 *   phasemap *m = phasemap_default();
 *   if (phasemap_read_file(m, "my.map", err, sizeof err)) ...;   // user's rules first
 *   const phasemap_rule *r = phasemap_match(m, "aten::conv2d");   // NULL: no rule matches
 *   phasemap_free(m);
 */
#ifndef SPEEDUP_PHASEMAP_H
#define SPEEDUP_PHASEMAP_H

#include "trace/trace.h"

#include <stdio.h>

/* A rule's phase: a trace_phase, or one of these. */
enum { PHASEMAP_STEP = TRACE_PHASE_COUNT, PHASEMAP_NONE };

typedef struct {
    char pattern[160];
    int phase;               /* trace_phase, PHASEMAP_STEP or PHASEMAP_NONE */
    int line;                /* its line in the file; 0 for a built-in rule */
} phasemap_rule;

typedef struct {
    phasemap_rule *rules;    /* owned */
    int n, cap;
    char source[256];        /* the file the first rules came from, "" when none */
} phasemap;

/* The built-in map (PyTorch's profiler, DDP, Horovod's timeline); NULL out of memory. */
phasemap *phasemap_default(void);
void phasemap_free(phasemap *m);                 /* NULL is a no-op */
/* Puts path's rules before m's. 0, or -1 with "PATH: line L: ..." in err. */
int phasemap_read_file(phasemap *m, const char *path, char *err, int errlen);
/* The first rule matching name, or NULL. */
const phasemap_rule *phasemap_match(const phasemap *m, const char *name);
/* "compute", ..., "step", "-". */
const char *phasemap_phase_name(int phase);
/* Writes m in the file format, one rule per line. */
void phasemap_write(const phasemap *m, FILE *out);

#endif
