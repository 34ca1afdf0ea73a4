#define _XOPEN_SOURCE 700
#include "tests/clirun.h"

#include <criterion/criterion.h>
#include <ftw.h>
#include <stdint.h>
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

/* Every directory clirun_tmpdir made in this process, removed with its contents when the
 * process exits (Criterion runs each test in a process of its own), so a test run leaves
 * nothing under /tmp; SPEEDUP_KEEP_TEST_DIRS=1 keeps them to look at a failure. */
enum { CLIRUN_MAX_DIRS = 256 };
static char *clirun_dirs[CLIRUN_MAX_DIRS];
static int clirun_n_dirs;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    remove(path); /* keep going: what cannot be removed stays, and nothing else depends on it */
    return 0;
}

static void remove_dirs(void) {
    const char *keep = getenv("SPEEDUP_KEEP_TEST_DIRS");
    for (int i = 0; i < clirun_n_dirs; i++) {
        if (!keep || strcmp(keep, "1") != 0)
            nftw(clirun_dirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(clirun_dirs[i]);
    }
    clirun_n_dirs = 0;
}

char *clirun_tmpdir(void) {
    char tmpl[] = "/tmp/speedup-test-XXXXXX";
    if (!mkdtemp(tmpl))
        return NULL;
    if (clirun_n_dirs == 0)
        atexit(remove_dirs);
    if (clirun_n_dirs < CLIRUN_MAX_DIRS)
        clirun_dirs[clirun_n_dirs++] = strdup(tmpl);
    return strdup(tmpl);
}

/* text with every run of spaces and newlines made one space (malloc'd). */
static char *flatten(const char *text) {
    char *flat = malloc(strlen(text) + 1), *o = flat;
    for (const char *c = text; *c; c++) {
        if (*c == ' ' || *c == '\n') {
            if (o == flat || o[-1] != ' ')
                *o++ = ' ';
        } else {
            *o++ = *c;
        }
    }
    *o = '\0';
    return flat;
}

bool clirun_says(const char *text, const char *needle) {
    char *t = flatten(text), *n = flatten(needle);
    const bool found = strstr(t, n) != NULL;
    free(t);
    free(n);
    return found;
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

static int count_lines(const char *s) {
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

void clirun_assert_refused(const char *args, int status, const char *needle) {
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, status, "'%s': status %d, stderr: %s", args, r.status, r.err);
    cr_assert(strncmp(r.err, "speedup: ", 9) == 0, "'%s': stderr: %s", args, r.err);
    cr_assert(strstr(r.err, needle) != NULL, "'%s': stderr lacks '%s': %s", args, needle, r.err);
    cr_assert_eq(count_lines(r.err), 1, "'%s': not one line: %s", args, r.err);
    cr_assert_str_eq(r.out, "", "'%s' printed on stdout: %s", args, r.out);
    clirun_free(&r);
}

void clirun_assert_png(const char *dir, const char *name, unsigned width, unsigned height) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f, "%s missing", path);
    unsigned char head[24];
    size_t n = fread(head, 1, sizeof head, f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    cr_assert_eq(n, sizeof head, "%s: too short", path);
    static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
    cr_assert(memcmp(head, sig, 8) == 0, "%s: not a PNG", path);
    /* The IHDR chunk comes first and holds the big-endian width and height. */
    cr_assert(memcmp(head + 12, "IHDR", 4) == 0, "%s: no IHDR", path);
    uint32_t w = (uint32_t)head[16] << 24 | (uint32_t)head[17] << 16 | (uint32_t)head[18] << 8 | head[19];
    uint32_t h = (uint32_t)head[20] << 24 | (uint32_t)head[21] << 16 | (uint32_t)head[22] << 8 | head[23];
    cr_assert_eq(w, width, "%s: width %u", path, w);
    cr_assert_eq(h, height, "%s: height %u", path, h);
    cr_assert_gt(size, 5000, "%s: only %ld bytes, nothing drawn?", path, size);
    snprintf(path, sizeof path, "%s/%s.svg", dir, name);
    f = fopen(path, "r");
    cr_assert_not_null(f, "%s missing", path);
    char svg[256] = "";
    n = fread(svg, 1, sizeof svg - 1, f);
    fclose(f);
    cr_assert(strstr(svg, "<svg") != NULL || strstr(svg, "<?xml") != NULL, "%s: not SVG", path);
}

static void put_be32(FILE *f, long v) {
    unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16), (unsigned char)(v >> 8), (unsigned char)v };
    fwrite(b, 1, 4, f);
}

void clirun_write_idx_set(const char *dir, const char *prefix, long n, unsigned seed) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s-images-idx3-ubyte", dir, prefix);
    FILE *im = fopen(path, "wb");
    snprintf(path, sizeof path, "%s/%s-labels-idx1-ubyte", dir, prefix);
    FILE *lb = fopen(path, "wb");
    cr_assert(im && lb, "cannot write %s", path);
    fwrite("\0\0\x08\x03", 1, 4, im), put_be32(im, n), put_be32(im, 8), put_be32(im, 8);
    fwrite("\0\0\x08\x01", 1, 4, lb), put_be32(lb, n);
    /* A fixed LCG: test data must not change when a library's generator does. */
    unsigned s = seed;
    for (long i = 0; i < n; i++) {
        int k = (int)(i % 4);
        fputc(k, lb);
        for (int y = 0; y < 8; y++)
            for (int x = 0; x < 8; x++) {
                s = s * 1664525u + 1013904223u;
                int q = (y >= 4) * 2 + (x >= 4);
                int v = (q == k ? 150 : 30) + (int)((s >> 24) % 100);
                fputc(v, im);
            }
    }
    fclose(im), fclose(lb);
}
