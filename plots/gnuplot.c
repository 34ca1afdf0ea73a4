#define _POSIX_C_SOURCE 200809L
#include "plots/gnuplot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The scripts' place relative to the directory of the running binary: bin/ ->
 * share/speedup/plots once installed, and the same from build/cli/ in the build tree,
 * where the build copies them (plots/CMakeLists.txt). No source path is compiled in, so
 * an installed or packaged binary never depends on the tree it was built from, and a
 * moved prefix still works. */
#ifndef SPEEDUP_PLOTS_RELDIR
#define SPEEDUP_PLOTS_RELDIR "../share/speedup/plots"
#endif

const char *gnuplot_scripts_dir(void) {
    const char *dir = getenv("SPEEDUP_PLOTS_DIR");
    if (dir && *dir)
        return dir;
    static char found[4096 + 256];
    if (found[0])
        return found;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) { /* no /proc: relative to the working directory, and an error names it */
        snprintf(found, sizeof found, "%s", SPEEDUP_PLOTS_RELDIR);
        return found;
    }
    *slash = '\0';
    /* Each leading "../" climbs one directory (bin/../share -> share), for messages. */
    const char *rel = SPEEDUP_PLOTS_RELDIR;
    while (strncmp(rel, "../", 3) == 0 && (slash = strrchr(exe, '/')) && slash != exe) {
        *slash = '\0';
        rel += 3;
    }
    snprintf(found, sizeof found, "%s/%s", exe, rel);
    return found;
}

int gnuplot_scripts_check(char *err, int errlen) {
    char common[4096 + 300];
    snprintf(common, sizeof common, "%s/common.gp", gnuplot_scripts_dir());
    if (access(common, R_OK) == 0)
        return 0;
    snprintf(err, (size_t)errlen,
             "%s: cannot read the gnuplot scripts (%s); they are installed in share/speedup/plots "
             "beside bin/ ($SPEEDUP_PLOTS_DIR overrides)", common, strerror(errno));
    return -1;
}

void gnuplot_quote(const char *text, char *out, int outlen) {
    int j = 0;
    for (const char *p = text; *p && j < outlen - 2; p++) {
        if (*p == '\'')
            out[j++] = '\'';
        out[j++] = *p;
    }
    out[j] = '\0';
}

/* Runs gnuplot -e STATEMENTS SCRIPT; stderr goes to a temporary file we read back. */
static int run_once(const char *program, const char *script, const char *statements,
                    char *err, int errlen) {
    char errpath[] = "/tmp/speedup-gnuplot-XXXXXX";
    int errfd = mkstemp(errpath);
    if (errfd < 0) {
        snprintf(err, (size_t)errlen, "cannot create a temporary file: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(err, (size_t)errlen, "cannot start gnuplot: %s", strerror(errno));
        close(errfd);
        unlink(errpath);
        return -1;
    }
    if (pid == 0) {
        dup2(errfd, STDERR_FILENO);
        execlp(program, program, "-e", statements, script, (char *)NULL);
        /* 127 tells the parent the program was not found, as the shell does. */
        _exit(errno == ENOENT ? 127 : 126);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int rc = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        rc = -1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
            snprintf(err, (size_t)errlen, "%s: not found on PATH; install gnuplot (scripts/setup installs gnuplot-nox)", program);
        } else {
            char first[400] = "";
            FILE *f = fdopen(dup(errfd), "r");
            if (f) {
                rewind(f);
                /* gnuplot's first non-empty line is the one that names the problem. */
                while (fgets(first, sizeof first, f) && first[0] == '\n')
                    ;
                fclose(f);
            }
            first[strcspn(first, "\n")] = '\0';
            snprintf(err, (size_t)errlen, "gnuplot failed on %s: %s", script, first[0] ? first : "no message");
        }
    }
    close(errfd);
    unlink(errpath);
    return rc;
}

int gnuplot_render(const char *script, const char *const *vars, int n_vars, const char *out_base,
                   char *err, int errlen) {
    if (gnuplot_scripts_check(err, errlen))
        return -1;
    const char *program = getenv("SPEEDUP_GNUPLOT");
    if (!program || !*program)
        program = "gnuplot";
    static const char *const terms[][2] = { { "pngcairo", "png" }, { "svg", "svg" } };
    for (int t = 0; t < 2; t++) {
        char final[1024], tmp[1100], quoted[2300];
        snprintf(final, sizeof final, "%s.%s", out_base, terms[t][1]);
        snprintf(tmp, sizeof tmp, "%s.tmp.%ld", final, (long)getpid());
        gnuplot_quote(tmp, quoted, sizeof quoted);
        size_t cap = 4096;
        for (int i = 0; i < n_vars; i++)
            cap += strlen(vars[i]) + 2;
        char *stmts = malloc(cap);
        if (!stmts) {
            snprintf(err, (size_t)errlen, "out of memory");
            return -1;
        }
        int len = snprintf(stmts, cap, "term='%s'; outfile='%s'", terms[t][0], quoted);
        for (int i = 0; i < n_vars; i++)
            len += snprintf(stmts + len, cap - (size_t)len, "; %s", vars[i]);
        int rc = run_once(program, script, stmts, err, errlen);
        free(stmts);
        if (rc == 0 && rename(tmp, final) != 0) {
            snprintf(err, (size_t)errlen, "%s: cannot rename into place: %s", final, strerror(errno));
            rc = -1;
        }
        if (rc) {
            unlink(tmp);
            return -1;
        }
    }
    return 0;
}
