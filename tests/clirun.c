#define _POSIX_C_SOURCE 200809L
#include "tests/clirun.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

char *clirun_tmpdir(void) {
    char tmpl[] = "/tmp/speedup-test-XXXXXX";
    if (!mkdtemp(tmpl))
        return NULL;
    return strdup(tmpl);
}

char *clirun_write_file(const char *dir, const char *name, const char *text) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *path = malloc(n);
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

clirun_result clirun(const char *args) {
    clirun_result r = { .status = -1 };
    const char *bin = getenv("SPEEDUP_BIN");
    char *dir = clirun_tmpdir();
    if (!bin || !dir) {
        free(dir);
        r.out = strdup("");
        r.err = strdup("SPEEDUP_BIN not set or no temporary directory");
        return r;
    }
    size_t n = strlen(bin) + strlen(args) + 2 * strlen(dir) + 64;
    char *cmd = malloc(n);
    snprintf(cmd, n, "'%s' %s >%s/out 2>%s/err </dev/null", bin, args, dir, dir);
    int st = system(cmd);
    if (st != -1)
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    char path[512];
    snprintf(path, sizeof path, "%s/out", dir);
    r.out = slurp(path);
    remove(path);
    snprintf(path, sizeof path, "%s/err", dir);
    r.err = slurp(path);
    remove(path);
    remove(dir);
    free(dir);
    free(cmd);
    return r;
}

void clirun_free(clirun_result *r) {
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
