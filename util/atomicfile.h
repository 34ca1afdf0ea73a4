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

#endif
