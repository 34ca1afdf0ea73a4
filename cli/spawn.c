/* spawn — child processes for the multi-step commands (see spawn.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SPEEDUP_MPIEXEC
#define SPEEDUP_MPIEXEC "mpirun"
#endif

enum { MAX_ARGS = 64 };

const char *spawn_mpiexec(void) {
    const char *e = getenv("MPIEXEC");
    if (e && *e)
        return e;
    if (SPEEDUP_MPIEXEC[0] && access(SPEEDUP_MPIEXEC, X_OK) == 0)
        return SPEEDUP_MPIEXEC;
    return "mpirun";
}

static int self_path(char *buf, size_t size, char *err, int errlen) {
    ssize_t len = readlink("/proc/self/exe", buf, size - 1);
    if (len <= 0) {
        snprintf(err, (size_t)errlen, "cannot find this program (/proc/self/exe): %s", strerror(errno));
        return -1;
    }
    buf[len] = '\0';
    return 0;
}

static int run(const char *const *av, const char *stdout_path, char *err, int errlen) {
    int fd = -1;
    if (stdout_path && (fd = open(stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0) {
        snprintf(err, (size_t)errlen, "%s: cannot write: %s", stdout_path, strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, (size_t)errlen, "fork failed: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    if (pid == 0) {
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            close(fd);
        }
        execvp(av[0], (char *const *)av);
        fprintf(stderr, "speedup: cannot run %s: %s\n", av[0], strerror(errno));
        _exit(127);
    }
    if (fd >= 0)
        close(fd);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int spawn_self(const char *const *argv, const char *stdout_path, char *err, int errlen) {
    char self[4096];
    const char *av[MAX_ARGS + 2];
    int n = 0;
    if (self_path(self, sizeof self, err, errlen))
        return -1;
    av[n++] = self;
    for (int i = 0; argv[i] && n <= MAX_ARGS; i++)
        av[n++] = argv[i];
    av[n] = NULL;
    return run(av, stdout_path, err, errlen);
}

int spawn_mpi_self(int np, const char *hostfile, const char *const *argv, const char *stdout_path, char *err,
                   int errlen) {
    char self[4096], nps[16];
    const char *av[MAX_ARGS + 12];
    int n = 0;
    if (self_path(self, sizeof self, err, errlen))
        return -1;
    snprintf(nps, sizeof nps, "%d", np);
    av[n++] = spawn_mpiexec();
    av[n++] = "-np";
    av[n++] = nps;
    av[n++] = "--bind-to";
    av[n++] = "none";
    av[n++] = "--oversubscribe";
    if (hostfile) {
        av[n++] = "--hostfile";
        av[n++] = hostfile;
    }
    av[n++] = self;
    for (int i = 0; argv[i] && n <= MAX_ARGS; i++)
        av[n++] = argv[i];
    av[n] = NULL;
    return run(av, stdout_path, err, errlen);
}
