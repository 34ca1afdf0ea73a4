/* chrome_parts — what trace/chrome_import.c (files, events, ranks, the run header) and
 * trace/chrome_timeline.c (one rank's events placed into its timeline) share. Private to
 * those two files; the contract is trace/chrome_import.h's.
 */
#ifndef SPEEDUP_CHROME_PARTS_H
#define SPEEDUP_CHROME_PARTS_H

#include "trace/chrome_import.h"

#include <jansson.h>
#include <stdbool.h>

/* One span of a thread: an "X" event, or a "B" with its "E". */
typedef struct {
    const char *name;        /* borrowed from the file's JSON */
    double t0_us, t1_us;
    int track;               /* its thread, index into ci_run.tracks */
    long index;              /* the event's index in the file's "traceEvents" (its "B") */
    long bytes;              /* bytes it moved where the file says (Horovod's "E" args), else 0 */
    int phase;               /* placed: its trace_phase; -1 when not placed */
    bool step_start;         /* a "step" container: a step begins at t0 */
    bool top;                /* nested in no other span of its thread */
    int step;                /* the occurrence of its top-level ancestor's name on the thread */
    const char *kind;        /* placed comm: "allreduce", "broadcast", ... */
} ci_span;

/* One thread (pid, tid) of one file. */
typedef struct {
    char pid[48], tid[48];   /* as the file writes them (numbers or strings) */
    int file;
    double compute_us;       /* placed compute time: the main thread has the most */
    long unmatched;          /* the first span looked at that no rule matches; -1 none */
    long n_spans;
} ci_track;

typedef struct {
    const char *path;
    json_t *root;            /* owned */
    json_t *events;          /* borrowed from root */
    int rank;                /* from distributedInfo or the name; -1 none */
    int world;               /* distributedInfo.world_size; 0 none */
    int ticks;               /* Horovod's negotiation: highest rank named + 1; 0 none */
} ci_file;

typedef struct {
    ci_file *files;
    int n_files;
    ci_span *spans;
    long n_spans, cap_spans;
    ci_track *tracks;
    int n_tracks, cap_tracks;
    const phasemap *map;
    long *order;             /* (n_spans) span indices by thread, start, longest first (ci_place) */
    long *track_begin;       /* (n_tracks + 1) where each thread's spans begin in order */
    double origin_us;        /* the run's earliest event: its time 0 */
    char *err;
    int errlen;
} ci_run;

/* Places every thread's spans (the nesting, the rules): 0, or -1 out of memory. */
int ci_place(ci_run *run);

/* The timeline of the rank of file f (its main thread, its background comm; or the
 * overlay of its threads when none computes) as events of rank `rank` of t. examples: the
 * rank's slice. Returns the steps it found, or -1 with run->err set. */
long ci_timeline(ci_run *run, int f, int rank, long examples, trace *t);

#endif
