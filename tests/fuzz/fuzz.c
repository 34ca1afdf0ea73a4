#define _POSIX_C_SOURCE 200809L
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_PATHS = 8 };
static char paths[MAX_PATHS][512];
static int n_paths;

static void remove_paths(void) {
    for (int i = 0; i < n_paths; i++) {
        unlink(paths[i]);
        char tmp[1024]; // what an atomic write interrupted by a finding leaves (util/atomicfile.h)
        snprintf(tmp, sizeof tmp, "%.511s.tmp.%ld", paths[i], (long)getpid());
        unlink(tmp);
    }
}

const char *fuzz_path(const char *tag) {
    for (int i = 0; i < n_paths; i++)
        if (strstr(paths[i], tag))
            return paths[i];
    if (n_paths == MAX_PATHS)
        abort();
    if (n_paths == 0)
        atexit(remove_paths);
    const char *dir = getenv("TMPDIR");
    snprintf(paths[n_paths], sizeof paths[n_paths], "%s/speedup-fuzz-%ld-%s", dir && *dir ? dir : "/tmp",
             (long)getpid(), tag);
    return paths[n_paths++];
}

const char *fuzz_file(const char *tag, const uint8_t *data, size_t size) {
    const char *path = fuzz_path(tag);
    FILE *f = fopen(path, "wb");
    if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(path);
        abort();
    }
    return path;
}

char *fuzz_string(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    if (!s)
        abort();
    if (size)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* stderr as it was at start-up: libFuzzer's -close_fd_mask=2 closes fd 2 before the first
 * input (it keeps its own copy for its output), and a violated property must still say
 * which one. */
static int report_fd = 2;

__attribute__((constructor)) static void keep_stderr(void) {
    int fd = dup(2);
    if (fd >= 0)
        report_fd = fd;
}

void fuzz_check(int ok, const char *what) {
    if (!ok) {
        dprintf(report_fd, "fuzz: property violated: %s\n", what);
        abort();
    }
}
