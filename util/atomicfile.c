#define _POSIX_C_SOURCE 200809L
#include "util/atomicfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct atomicfile {
    FILE *stream;
    char *path;
    char *tmp_path;
};

atomicfile *atomicfile_open(const char *path, char *err, int errlen) {
    atomicfile *f = calloc(1, sizeof *f);
    size_t n = strlen(path) + 32;
    if (f) {
        f->path = strdup(path);
        f->tmp_path = malloc(n);
    }
    if (!f || !f->path || !f->tmp_path) {
        snprintf(err, (size_t)errlen, "%s: out of memory", path);
        atomicfile_abort(f);
        return NULL;
    }
    snprintf(f->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    f->stream = fopen(f->tmp_path, "wb");
    if (!f->stream) {
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(errno));
        atomicfile_abort(f);
        return NULL;
    }
    return f;
}

FILE *atomicfile_stream(atomicfile *f) { return f->stream; }

int atomicfile_commit(atomicfile *f, char *err, int errlen) {
    int rc = 0;
    FILE *s = f->stream;
    f->stream = NULL;
    /* fflush/ferror catch a full disk before the rename makes the file visible. */
    if (fflush(s) != 0 || ferror(s) || fsync(fileno(s)) != 0) {
        snprintf(err, (size_t)errlen, "%s: write failed: %s", f->path, strerror(errno));
        rc = -1;
    }
    if (fclose(s) != 0 && rc == 0) {
        snprintf(err, (size_t)errlen, "%s: write failed: %s", f->path, strerror(errno));
        rc = -1;
    }
    if (rc == 0 && rename(f->tmp_path, f->path) != 0) {
        snprintf(err, (size_t)errlen, "%s: cannot rename into place: %s", f->path, strerror(errno));
        rc = -1;
    }
    if (rc != 0)
        remove(f->tmp_path);
    free(f->path);
    free(f->tmp_path);
    free(f);
    return rc;
}

void atomicfile_abort(atomicfile *f) {
    if (!f)
        return;
    if (f->stream) {
        fclose(f->stream);
        remove(f->tmp_path);
    }
    free(f->path);
    free(f->tmp_path);
    free(f);
}

int atomicfile_probe(const char *path, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    static const char block[4096];
    errno = 0;
    const int ok = fwrite(block, 1, sizeof block, f->stream) == sizeof block && fflush(f->stream) == 0 &&
                   fsync(fileno(f->stream)) == 0;
    const int why = errno;
    atomicfile_abort(f);
    if (!ok) {
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", path, strerror(why ? why : EIO));
        return -1;
    }
    return 0;
}
