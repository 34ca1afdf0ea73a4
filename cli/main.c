/* speedup — how much faster will data-parallel training be on K workers × T cores?
 * The front door: picks a subcommand and hands it the rest of argv. */
#include "cli/commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifndef SPEEDUP_VERSION
#define SPEEDUP_VERSION "0"
#endif
#include "git_revision.h" /* SPEEDUP_GIT: generated at build time (cmake/git_revision.cmake) */

static const struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} commands[] = {
    { "model", cmd_model, "closed-form predictions for a grid of workers x cores x sync" },
    { "advise", cmd_advise, "the best K x T split, sync mode and topology for N cores" },
    { "trace", cmd_trace, "a recorded trace: per-phase totals per rank, or Chrome JSON for Perfetto" },
    { "plot", cmd_plot, "gnuplot figures: predicted vs measured speedup, breakdowns, timelines" },
    { "calibrate", cmd_calibrate, "fit the model to traces (or Ernest to its CSV): calibration.json" },
    { "commbench", cmd_commbench, "under mpirun: time ping-pong, all-reduce, ps exchanges (alpha, beta)" },
    { "simulate", cmd_simulate, "discrete-event simulation of the grid, with 95% intervals" },
    { "train", cmd_train, "train the CNN on Fashion-MNIST (IDX files), print a JSON summary" },
    { "eval", cmd_eval, "test accuracy of a checkpoint written by train" },
    { "report", cmd_report, "calibrate, measure, simulate, plot: out/index.html with every figure" },
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup COMMAND [FLAGS]   (speedup COMMAND --help, or speedup help COMMAND,\n"
            "                                 for its flags)\n"
            "\n"
            "Predicts and explains the speedup of data-parallel neural-network training on\n"
            "K workers with T cores each: T(K,T) = W(K) + E*rounds*(p*step + wait + S(K)).\n"
            "\n"
            "Commands:\n");
    for (int i = 0; i < N_COMMANDS; i++)
        fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n  --help     this text\n  --version  version and git commit\n");
}

/* A command's status, or 1 when what it printed did not all reach stdout (a redirect to a
 * full disk: printf fails silently, and `speedup report` would keep a cut file). */
static int stdout_closed(int code) {
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "speedup: stdout: write failed: %s\n", strerror(errno));
        return code ? code : 1;
    }
    return code;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    static char help_flag[] = "--help";
    if (strcmp(name, "help") == 0 && argc >= 3) { /* speedup help CMD: CMD --help */
        name = argv[1] = argv[2];
        argv[2] = help_flag;
        argc = 3;
    } else if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    /* -h is --help for every command, unless it is a flag's value (after a --flag). */
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 && strncmp(argv[i - 1], "--", 2) != 0)
            argv[i] = help_flag;
    if (strcmp(name, "--version") == 0) {
        printf("speedup %s (git %s)\n", SPEEDUP_VERSION, SPEEDUP_GIT);
        return 0;
    }
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return stdout_closed(commands[i].run(argc - 1, argv + 1));
    fprintf(stderr, "speedup: unknown command '%s' (try speedup --help)\n", name);
    return 2;
}
