/* clirun — run the real `speedup` binary (path in $SPEEDUP_BIN, set by ctest) from a
 * test and capture what it printed and how it exited. */
#ifndef SPEEDUP_TESTS_CLIRUN_H
#define SPEEDUP_TESTS_CLIRUN_H

typedef struct {
    int status;        /* exit status, or 128 + signal */
    char *out, *err;   /* NUL-terminated, owned: clirun_free */
} clirun_result;

/* Runs "$SPEEDUP_BIN ARGS" through /bin/sh (args are shell words). */
clirun_result clirun(const char *args);
void clirun_free(clirun_result *r);
/* A fresh empty directory under /tmp; caller frees the string. */
char *clirun_tmpdir(void);
/* Writes text to dir/name and returns the malloc'd path. */
char *clirun_write_file(const char *dir, const char *name, const char *text);

/* Criterion checks shared by the CLI suites (they fail the calling test). */

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
