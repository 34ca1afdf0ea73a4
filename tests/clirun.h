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

#endif
