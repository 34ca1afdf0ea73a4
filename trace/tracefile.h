/* tracefile — the trace files the tools read, whatever wrote them: the project's own
 * (*.trace.jsonl, trace/trace.h: a first line {"run": ...}) or Chrome trace-event JSON from
 * PyTorch's profiler or Horovod's timeline (trace/chrome_import.h: an array of events, or
 * an object with "traceEvents"; gzipped or not). They are told apart by content: a file
 * whose first line is a JSON object with "run" is the project's, any other is read as
 * Chrome JSON — but a file named *.trace.jsonl is always the project's (so that a broken
 * one is reported as such, by its line).
 *
 * Runs. The project's trace is one run. Chrome files named RUN.rankR.json (any suffix
 * after R; '.', '-' or '_' before "rank") are the ranks of run DIR/RUN and are read
 * together, whatever their order among the paths; any other Chrome file is a run by
 * itself. A run is named by its path, or "DIR/RUN.rank*" for rank files.
 *
 *   tracefile_set s;
 *   if (tracefile_open(paths, n, &opts, true, &s, err, sizeof err)) ...;
 *   for (int i = 0; i < s.n; i++) use(s.runs[i].name, s.runs[i].t);
 *   tracefile_set_free(&s);
 */
#ifndef SPEEDUP_TRACEFILE_H
#define SPEEDUP_TRACEFILE_H

#include "trace/chrome_import.h"
#include "trace/trace.h"

#include <stdbool.h>

typedef struct {
    char *name;              /* owned */
    trace *t;                /* owned */
    bool imported;           /* read from Chrome JSON */
} tracefile_run;

typedef struct {
    tracefile_run *runs;     /* owned */
    int n;
} tracefile_set;

/* Is path the project's own trace (true) or Chrome JSON (false)? -1 when unreadable. */
int tracefile_is_speedup(const char *path, bool *out, char *err, int errlen);

/* Reads paths[0..n) as runs (see above), in the order of their first file. need_batch:
 * refuse Chrome files when opts gives no batch (a fit or a measurement needs the steps'
 * examples; a summary does not). 0, or -1 with the first failure in err (nothing kept). */
int tracefile_open(const char *const *paths, int n, const chrome_import_opts *opts, bool need_batch,
                   tracefile_set *out, char *err, int errlen);
void tracefile_set_free(tracefile_set *s);

/* The trace files of dir, sorted: *.trace.jsonl, *.json and *.json.gz, less the project's
 * other JSON files (those declaring "format": "speedup-..." early on, as calibration.json
 * does). *paths malloc'd, each entry too (tracefile_paths_free). 0, or -1 with err. */
int tracefile_list_dir(const char *dir, char ***paths, int *n, char *err, int errlen);
void tracefile_paths_free(char **paths, int n);

#endif
