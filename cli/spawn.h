/* spawn — run this same program (/proc/self/exe) or mpirun as a child process and wait
 * for it: the sub-steps of `speedup calibrate` (the measurement plan) and `speedup report`.
 *
 * Arguments are an argv array (no shell). stdout_path, when not NULL, receives the child's
 * stdout (created/truncated); stderr stays ours, so progress and errors show through.
 * Returns the child's exit status (128 + signal when killed), or -1 with the reason in
 * err when it could not be started at all.
 */
#ifndef SPEEDUP_SPAWN_H
#define SPEEDUP_SPAWN_H

/* argv[0] is the subcommand ("train", "simulate", ...): runs /proc/self/exe argv... */
int spawn_self(const char *const *argv, const char *stdout_path, char *err, int errlen);
/* Runs `MPIEXEC -np NP --bind-to none --oversubscribe [--hostfile F] /proc/self/exe argv...`. */
int spawn_mpi_self(int np, const char *hostfile, const char *const *argv, const char *stdout_path, char *err,
                   int errlen);
/* The mpirun used: $MPIEXEC, the one CMake found, or the PATH's. */
const char *spawn_mpiexec(void);

#endif
