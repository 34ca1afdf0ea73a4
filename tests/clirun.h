/* clirun — run the real `speedup` binary (path in $SPEEDUP_BIN, set by ctest) from a
 * test and capture what it printed and how it exited. */
#ifndef SPEEDUP_TESTS_CLIRUN_H
#define SPEEDUP_TESTS_CLIRUN_H

#include "model/predictions.h"

#include <stdbool.h>

typedef struct {
    int status;        /* exit status, or 128 + signal */
    char *out, *err;   /* NUL-terminated, owned: clirun_free */
} clirun_result;

/* Runs "$SPEEDUP_BIN ARGS" through /bin/sh (args are shell words). */
clirun_result clirun(const char *args);
void clirun_free(clirun_result *r);
/* A fresh empty directory under /tmp, removed with its contents when the test's process
 * exits (SPEEDUP_KEEP_TEST_DIRS=1 keeps it); caller frees the string. */
char *clirun_tmpdir(void);
/* Does text say needle, line breaks and runs of spaces in either read as one space? (model,
 * simulate and advise wrap a sentence at 80 columns: cli/wrap.h.) */
bool clirun_says(const char *text, const char *needle);
/* Writes text to dir/name and returns the malloc'd path. */
char *clirun_write_file(const char *dir, const char *name, const char *text);

/* Criterion checks shared by the CLI suites (they fail the calling test). */

/* `speedup ARGS --out FILE` succeeds; the rows it wrote (malloc'd), their count in *n
 * (tests/clirun_rows.c: link speedup_model). */
prediction_row *clirun_predictions(const char *args, int *n);
/* `speedup ARGS --out FILE` succeeds and every interval of one run is the point. */
void clirun_assert_point_interval(const char *args);
/* DIR/cal.json: a calibration where only compute costs (c0 = 0) and only c1 is uncertain,
 * c1 = 0.002 ± 0.0002, so a run's time is proportional to c1. Returns the path. */
char *clirun_write_c1_calibration(const char *dir);

/* `speedup ARGS` is refused: the exit status, one line on stderr starting "speedup: "
 * and containing needle, nothing on stdout. */
void clirun_assert_refused(const char *args, int status, const char *needle);
/* DIR/NAME.png is a PNG of width x height with something drawn (> 5 kB), and
 * DIR/NAME.svg is an SVG. */
void clirun_assert_png(const char *dir, const char *name, unsigned width, unsigned height);
/* A tiny IDX pair DIR/PREFIX-{images-idx3,labels-idx1}-ubyte: n 8x8 images of 4 classes
 * (class k lights quadrant k) plus deterministic noise from seed. */
void clirun_write_idx_set(const char *dir, const char *prefix, long n, unsigned seed);

#endif
