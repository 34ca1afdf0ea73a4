/* tracefile — any trace file as runs (see tracefile.h). */
#define _POSIX_C_SOURCE 200809L
#include "trace/tracefile.h"

#include "util/errmsg.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum { PEEK = 4096 };

/* The first bytes of path (gunzipped), NUL-terminated, into buf; its length or -1. */
static int peek(const char *path, char *buf, int len, char *err, int errlen) {
    gzFile f = gzopen(path, "rb");
    if (!f)
        return errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    int n = gzread(f, buf, (unsigned)len - 1);
    gzclose(f);
    if (n < 0)
        return errmsg_set(err, errlen, "%s: cannot read", path);
    buf[n] = '\0';
    return n;
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

int tracefile_is_speedup(const char *path, bool *out, char *err, int errlen) {
    char buf[PEEK];
    /* The name says so: a broken first line is then the project's trace's error to report. */
    if (ends_with(path, ".trace.jsonl")) {
        *out = true;
        return 0;
    }
    if (peek(path, buf, sizeof buf, err, errlen) < 0)
        return -1;
    /* The project's first line is short: {"run": {...}}. A Chrome file's first line may be
     * the whole file (PyTorch's legacy export has no newline): not a line that parses. */
    char *nl = strchr(buf, '\n');
    if (nl)
        *nl = '\0';
    json_t *first = json_loads(buf, 0, NULL);
    *out = json_is_object(first) && json_object_get(first, "run") != NULL;
    json_decref(first);
    return 0;
}

/* ---------------------------------------------------------------------------------- */
/* Runs */

static void run_free(tracefile_run *r) {
    free(r->name);
    trace_free(r->t);
}

void tracefile_set_free(tracefile_set *s) {
    for (int i = 0; s && i < s->n; i++)
        run_free(&s->runs[i]);
    if (s)
        free(s->runs);
}

/* The rank files of the run that paths[i] belongs to: their indices into group, the count. */
static int rank_group(const char *const *paths, int n, int i, int *group) {
    int len = 0, m = 0;
    chrome_import_rank_of_name(paths[i], &len);
    for (int j = 0; j < n; j++) {
        int lj = 0;
        if (chrome_import_rank_of_name(paths[j], &lj) >= 0 && lj == len && strncmp(paths[i], paths[j], (size_t)len) == 0)
            group[m++] = j;
    }
    return m;
}

/* Imports the Chrome run that paths[i] starts (its rank files, or itself). */
static int open_chrome(const char *const *paths, int n, int i, const chrome_import_opts *o, bool *done,
                       tracefile_run *r, char *err, int errlen) {
    int *group = malloc(sizeof *group * (size_t)n), m = 1, len = 0;
    const char **files = malloc(sizeof *files * (size_t)n);
    if (!group || !files) {
        free(group);
        free(files);
        return errmsg_set(err, errlen, "out of memory");
    }
    group[0] = i;
    if (chrome_import_rank_of_name(paths[i], &len) >= 0)
        m = rank_group(paths, n, i, group);
    for (int k = 0; k < m; k++) {
        files[k] = paths[group[k]];
        done[group[k]] = true;
    }
    size_t name_len = strlen(paths[i]) + 8;
    r->name = malloc(name_len);
    if (r->name && m > 1)
        snprintf(r->name, name_len, "%.*s.rank*", len, paths[i]);
    else if (r->name)
        snprintf(r->name, name_len, "%s", paths[i]);
    r->imported = true;
    r->t = r->name ? chrome_import(files, m, o, err, errlen) : NULL;
    int rc = r->name ? (r->t ? 0 : -1) : errmsg_set(err, errlen, "out of memory");
    free(group);
    free(files);
    return rc;
}

int tracefile_open(const char *const *paths, int n, const chrome_import_opts *opts, bool need_batch,
                   tracefile_set *out, char *err, int errlen) {
    out->n = 0;
    out->runs = calloc((size_t)(n > 0 ? n : 1), sizeof *out->runs);
    bool *done = calloc((size_t)(n > 0 ? n : 1), sizeof *done);
    int rc = out->runs && done ? 0 : errmsg_set(err, errlen, "out of memory");
    for (int i = 0; rc == 0 && i < n; i++) {
        if (done[i])
            continue;
        bool own = false;
        tracefile_run *r = &out->runs[out->n];
        if ((rc = tracefile_is_speedup(paths[i], &own, err, errlen)))
            break;
        if (own) {
            done[i] = true;
            r->name = strdup(paths[i]);
            r->t = r->name ? trace_read(paths[i], err, errlen) : NULL;
            if (!r->name)
                errmsg_set(err, errlen, "out of memory");
            rc = r->t ? 0 : -1;
        } else if (need_batch && opts->batch <= 0) {
            rc = errmsg_set(err, errlen, "%s: a profiler trace or timeline does not record its batch: give --batch B "
                            "(the global batch, split over the workers)", paths[i]);
        } else {
            rc = open_chrome(paths, n, i, opts, done, r, err, errlen);
        }
        out->n++;
    }
    free(done);
    if (rc) {
        tracefile_set_free(out);
        out->runs = NULL;
        out->n = 0;
    }
    return rc;
}

/* ---------------------------------------------------------------------------------- */
/* Directories */

/* One of the project's other JSON files (calibration.json), not a trace. */
static bool declares_format(const char *path) {
    char buf[PEEK], e[8];
    if (peek(path, buf, 512, e, sizeof e) < 0)
        return false;
    return strstr(buf, "\"format\": \"speedup-") || strstr(buf, "\"format\":\"speedup-");
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void tracefile_paths_free(char **paths, int n) {
    for (int i = 0; paths && i < n; i++)
        free(paths[i]);
    free(paths);
}

int tracefile_list_dir(const char *dir, char ***paths, int *n, char *err, int errlen) {
    *paths = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errmsg_set(err, errlen, "%s: cannot open directory: %s", dir, strerror(errno));
    int cap = 0, rc = 0;
    struct dirent *ent;
    while (rc == 0 && (ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (!ends_with(name, ".trace.jsonl") && !ends_with(name, ".json") && !ends_with(name, ".json.gz"))
            continue;
        size_t len = strlen(dir) + strlen(name) + 2;
        char *path = malloc(len), **grown = *n == cap ? realloc(*paths, sizeof **paths * (size_t)(cap = 2 * cap + 16))
                                                       : *paths;
        if (!path || !grown) {
            free(path);
            rc = errmsg_set(err, errlen, "%s: out of memory", dir);
            break;
        }
        *paths = grown;
        snprintf(path, len, "%s/%s", dir, name);
        if (!ends_with(name, ".trace.jsonl") && declares_format(path))
            free(path);
        else
            (*paths)[(*n)++] = path;
    }
    closedir(d);
    if (rc) {
        tracefile_paths_free(*paths, *n);
        *paths = NULL;
        *n = 0;
        return -1;
    }
    if (*n > 0)
        qsort(*paths, (size_t)*n, sizeof **paths, by_name);
    return 0;
}
