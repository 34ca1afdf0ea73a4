/* atomicfile — write a file so that readers see the old one or the whole new one,
 * never half of it: write to "PATH.tmp.PID", fsync, rename over PATH.
 *
 *   atomicfile *f = atomicfile_open(path, err, sizeof err);
 *   fprintf(atomicfile_stream(f), ...);
 *   if (atomicfile_commit(f, err, sizeof err)) ...   // renames; frees f either way
 * atomicfile_abort(f) removes the temporary file and frees f (NULL is a no-op).
 */
#ifndef SPEEDUP_ATOMICFILE_H
#define SPEEDUP_ATOMICFILE_H

#include <stdio.h>

typedef struct atomicfile atomicfile;

atomicfile *atomicfile_open(const char *path, char *err, int errlen);
FILE *atomicfile_stream(atomicfile *f);
int atomicfile_commit(atomicfile *f, char *err, int errlen);
void atomicfile_abort(atomicfile *f);
/* Can path be written: its temporary file created, a block written and synced, then
 * removed (path itself is never touched)? 0, or -1 with "PATH: cannot write: REASON". For
 * commands that measure for minutes before they write: a read-only or full directory is
 * said at once, not after the work. */
int atomicfile_probe(const char *path, char *err, int errlen);

#endif
