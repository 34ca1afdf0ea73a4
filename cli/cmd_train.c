/* speedup train — train the CNN on an IDX data set and print one JSON summary line.
 * Reads like a script: usage → flags → (--workers: launch mpirun on ourselves and report a
 * dead rank) → train (train/trainer.h) → summary (rank 0).
 * Under mpirun (detected from Open MPI's / PMI's environment) the run is data-parallel;
 * without it, one process, no MPI at all.
 * Test hook: SPEEDUP_TEST_KILL=RANK:STEP in the environment makes rank RANK kill itself
 * (SIGKILL) at global step STEP (tests/test_train_mpi.c, experiments/faults). */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/commands.h"
#include "cli/spawn.h"
#include "model/contention.h"
#include "train/probe.h"
#include "train/trainer.h"
#include "trace/trace.h"

#include "train/checkpoint.h"
#include "util/host.h"

#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SPEEDUP_MPIEXEC
#define SPEEDUP_MPIEXEC "mpirun"
#endif

#include "git_revision.h" /* SPEEDUP_GIT: generated at build time (cmake/git_revision.cmake) */

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup train [FLAGS]\n"
            "\n"
            "Trains a CNN with SGD on IDX images (Fashion-MNIST by default), evaluates it on\n"
            "the test set after every epoch and prints one JSON summary line on stdout:\n"
            "examples_per_s, epoch_times_s, train_loss, test_accuracy, accuracy_curve (each\n"
            "epoch's test accuracy at its training time), peak_rss_mib, cpu_s_per_rank, ...\n"
            "\n"
            "Data:\n"
            "  --data DIR           directory with {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]\n"
            "                       (default " DATASET_DEFAULT_DIR ")\n"
            "  --limit N            use only the first N training and test examples (default 0: all)\n"
            "Network and optimiser:\n"
            "  --net SPEC           layers (default " NETSPEC_DEFAULT ")\n"
            "                       tokens: convKxKxO (K odd, same padding), relu, poolP, fcN, dropoutP\n"
            "  --epochs E           (default 5)\n"
            "  --batch B            examples per step (default 32)\n"
            "  --lr X               peak learning rate (default 0.02)\n"
            "  --momentum X         SGD momentum (default 0.9)\n"
            "  --weight-decay X     L2 weight decay (default 0.0005)\n"
            "  --schedule S         cosine (per step, to 0) or step (x0.1 at 1/2 and 3/4 of the\n"
            "                       epochs) (default cosine)\n"
            "  --warmup-epochs X    ramp the rate linearly from 0 over the first X epochs (default 1)\n"
            "  --seed S             initialisation, shuffling and dropout (default 1)\n"
            "Run:\n"
            "  --threads T          threads: OpenMP, each running single-threaded OpenBLAS on its\n"
            "                       share of the batch (default 1); also --cores T, the cores\n"
            "                       per worker, as model, simulate and advise name it\n"
            "  --checkpoint FILE    save the network after every epoch (atomically) (default none)\n"
            "  --resume FILE        continue from a checkpoint, to the weights an uninterrupted run\n"
            "                       gives; every setting above and below (seed, data, batch,\n"
            "                       workers, sync, ...) must be the checkpoint's, or it is refused\n"
            "                       naming both values (--threads may differ: rounding only)\n"
            "                       (default none)\n"
            "  --stop-after N       stop after epoch N of --epochs, as an interrupted run would\n"
            "                       (the schedule still spans --epochs; default 0: never)\n"
            "  --trace FILE         write the run's phases as a *.trace.jsonl, every rank's events\n"
            "                       in one file, the accuracies included (default none)\n"
            "Accuracy (the test set is evaluated after every epoch; evaluation is not training time):\n"
            "  --eval-every N       also evaluate a fixed subset of the test set every N global\n"
            "                       steps (summary: subset_curve). The workers' models must be\n"
            "                       equal: every:k needs N a multiple of k and evaluates at the\n"
            "                       first averaging at or after each multiple of N; refused with\n"
            "                       --sync epoch, async and hogwild (default 0: never)\n"
            "  --eval-subset M      the subset's size: M test examples drawn once with a fixed\n"
            "                       seed, the same in every run (default 2000; at most the test set)\n"
            "  --stop-at-accuracy A stop after the first epoch whose test accuracy is >= A (0 < A <= 1);\n"
            "                       the schedule still spans --epochs (default 0: never)\n");
    // Two strings: C99 promises only 4095 characters in one literal.
    fprintf(out,
            "Data-parallel (run under `mpirun -np N`, or give --workers K). K counts training\n"
            "workers: N = K ranks, or K + 1 with --master dedicated:\n"
            "  --workers K          launch mpirun on this machine with the other flags: K training\n"
            "                       ranks, plus the master's with --master dedicated\n"
            "                       (mpirun: $MPIEXEC, else " SPEEDUP_MPIEXEC ", else PATH) (default: none)\n"
            "  --hostfile FILE      with --workers: passed to mpirun, for a cluster (default none)\n"
            "  --oversubscribe      with --workers: let mpirun run more ranks than slots (default:\n"
            "                       only when K x --threads, plus 1 for a dedicated master, exceeds\n"
            "                       this machine's cores; then, with --threads > 1, the ranks'\n"
            "                       threads wait passively, OMP_WAIT_POLICY=passive unless set: a\n"
            "                       spinning thread holds the core its team's next thread needs)\n"
            "  --sync S             batch (synchronous SGD, the global batch split over the K\n"
            "                       workers: K <= B), epoch (average the weights after every epoch),\n"
            "                       every:N (average every N local steps and after every epoch),\n"
            "                       async (Elephas' asynchronous mode: rank 0 is a parameter server\n"
            "                       that applies each worker's gradient as it arrives, one request\n"
            "                       at a time; no barrier but at the epoch's end) or hogwild (the\n"
            "                       same without the server's lock: updates applied at once on\n"
            "                       --threads updater threads). async and hogwild imply --topology\n"
            "                       ps and --master dedicated (K + 1 ranks) (default batch)\n"
            "  --pull-every N       async, hogwild: a worker pulls the server's weights every N of\n"
            "                       its steps (Elephas' frequency: 1 = every batch) and pushes its\n"
            "                       gradient after every step (default 1)\n"
            "  --topology T         ps (a parameter server on rank 0: every worker sends it the\n"
            "                       gradients, it updates and sends the weights back to each) or\n"
            "                       allreduce (MPI_Allreduce, every rank updates) (default allreduce)\n"
            "  --master M           ps: worker (rank 0 trains too) or dedicated (rank 0 only serves:\n"
            "                       one rank more than the K workers) (default worker)\n"
            "  --batch-per-worker   batch sync: each training rank takes --batch examples per step\n"
            "                       (global batch K x B) instead of B/K (default off)\n"
            "  --quiet              no progress bar (it is drawn only when stderr is a terminal)\n"
            "  --help               this text\n");
}

enum {
    OPT_DATA = 1, OPT_LIMIT, OPT_EPOCHS, OPT_BATCH, OPT_LR, OPT_MOMENTUM, OPT_WD, OPT_SCHEDULE, OPT_WARMUP, OPT_NET,
    OPT_SEED, OPT_THREADS, OPT_CHECKPOINT, OPT_RESUME, OPT_TRACE, OPT_QUIET, OPT_HELP, OPT_STOP,
    OPT_WORKERS, OPT_HOSTFILE, OPT_OVERSUB, OPT_SYNC, OPT_TOPOLOGY, OPT_MASTER, OPT_BPW, OPT_EVAL_EVERY,
    OPT_EVAL_SUBSET, OPT_STOP_ACC, OPT_PULL_EVERY
};

/* This process's rank when mpirun started it, else -1. */
static int env_rank(void) {
    static const char *names[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return atoi(v);
    }
    return -1;
}

/* Reads mpirun's stderr through to ours, noting which rank died and how. */
typedef struct {
    int rank;          /* -1: none named */
    int signal;        /* > 0: killed by it */
    int aborted;       /* MPI_Abort */
} failure;

static void scan_line(const char *line, failure *f) {
    const char *p;
    int r, sig;
    if ((p = strstr(line, "process rank ")) && sscanf(p, "process rank %d", &r) == 1) {
        f->rank = r;
        if ((p = strstr(line, "on signal ")) && sscanf(p, "on signal %d", &sig) == 1)
            f->signal = sig;
    } else if ((p = strstr(line, "invoked on rank ")) && sscanf(p, "invoked on rank %d", &r) == 1 && f->rank < 0) {
        f->rank = r;
        f->aborted = 1;
    }
}

/* mpirun's argument vector for K training workers (+ a dedicated master): this binary's
 * `train` with every flag but the skipped ones; NULL after an error message. np holds the
 * rank count the vector points to; free the vector (not its strings). */
static const char **mpirun_argv(int workers, int master, int threads, const char *hostfile, int oversubscribe,
                                int argc, char **argv, const char *skip, char *self, size_t self_size,
                                char np[16]) {
    ssize_t len = readlink("/proc/self/exe", self, self_size - 1);
    if (len <= 0) {
        args_error("--workers: cannot find this program (/proc/self/exe)");
        return NULL;
    }
    self[len] = '\0';
    snprintf(np, 16, "%d", workers + master);
    const char **av = calloc((size_t)argc + 16, sizeof *av);
    if (!av) {
        args_error("out of memory");
        return NULL;
    }
    int k = 0;
    av[k++] = spawn_mpiexec();
    av[k++] = "-np";
    av[k++] = np;
    av[k++] = "--bind-to"; // ranks pinned to the same core would share it
    av[k++] = "none";
    // Whether the ranks' threads (a dedicated master one more) outnumber this host's cores
    // is the cost model's question: one answer for the launch and the prediction.
    const costmodel_params host = { .host_cores = host_online_cores() };
    const job_config job = { .workers = workers, .cores = threads,
                             .master = master ? JOB_MASTER_DEDICATED : JOB_MASTER_WORKER };
    if (oversubscribe || contention_shares_cores(&host, &job))
        av[k++] = "--oversubscribe";
    // A spinning thread would keep the core its team's descheduled thread needs: wait
    // passively there (contention_team_shares_cores), unless the environment says otherwise.
    if (contention_team_shares_cores(&host, &job) && !getenv("OMP_WAIT_POLICY")) {
        av[k++] = "-x";
        av[k++] = "OMP_WAIT_POLICY=passive";
    }
    if (hostfile) {
        av[k++] = "--hostfile";
        av[k++] = hostfile;
    }
    av[k++] = self;
    av[k++] = "train";
    for (int i = 1; i < argc; i++)
        if (!skip[i])
            av[k++] = argv[i];
    av[k] = NULL;
    return av;
}

/* Runs av, passing its stderr through to ours and noting in f which rank died and how:
 * its exit status (128 + the signal that killed it), or -1 after an error message. */
static int run_scanning_stderr(const char **av, failure *f) {
    int fds[2];
    if (pipe(fds)) {
        args_error("--workers: pipe failed");
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        args_error("--workers: fork failed");
        return -1;
    }
    if (pid == 0) {
        close(fds[0]);
        dup2(fds[1], STDERR_FILENO);
        close(fds[1]);
        execvp(av[0], (char *const *)av);
        fprintf(stderr, "speedup: --workers: cannot run %s\n", av[0]);
        _exit(127);
    }
    close(fds[1]);
    FILE *in = fdopen(fds[0], "r");
    char line[4096];
    while (in && fgets(line, sizeof line, in)) {
        fputs(line, stderr);
        scan_line(line, f);
    }
    if (in)
        fclose(in);
    else
        close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Says which rank stopped the job, how, and where training can go on from. */
static void report_rank_failure(const failure *f, const char *checkpoint_path) {
    char how[64], where[1400];
    if (f->signal)
        snprintf(how, sizeof how, "died (signal %d)", f->signal);
    else
        snprintf(how, sizeof how, "called MPI_Abort");
    checkpoint_state st;
    char err[1024];
    net *n = checkpoint_path ? checkpoint_load(checkpoint_path, 1, &st, err, sizeof err) : NULL;
    if (n)
        snprintf(where, sizeof where, "last checkpoint: %s after epoch %d (continue: the same flags and --resume %s)",
                 checkpoint_path, st.epochs_done, checkpoint_path);
    else if (checkpoint_path)
        snprintf(where, sizeof where, "no usable checkpoint (%.1000s)", err);
    else
        snprintf(where, sizeof where, "no checkpoint (--checkpoint FILE saves one every epoch)");
    net_free(n);
    args_error("rank %d %s; the job was stopped; %s", f->rank, how, where);
}

/* --workers K: runs mpirun on this binary with the other flags, K ranks, or K + 1 with a
 * dedicated master (K counts training workers only, as in the cost model, the trace and
 * the JSON line); its exit status. */
static int launch(int workers, int master, int threads, const char *hostfile, int oversubscribe, int argc,
                  char **argv, const char *skip, const char *checkpoint_path) {
    char self[4096], np[16];
    const char **av = mpirun_argv(workers, master, threads, hostfile, oversubscribe, argc, argv, skip, self,
                                  sizeof self, np);
    if (!av)
        return 1;
    failure f = { -1, 0, 0 };
    const int code = run_scanning_stderr(av, &f);
    free(av);
    if (code == 0)
        return 0;
    if (code < 0)
        return 1;
    if (code == 127) {
        args_error("--workers: could not run %s (set MPIEXEC to mpirun's path)", spawn_mpiexec());
        return 1;
    }
    if (f.rank >= 0 && (f.signal || f.aborted))
        report_rank_failure(&f, checkpoint_path);
    return code == 2 ? 2 : 1;
}

/* The test hook SPEEDUP_TEST_KILL=RANK:STEP: rank RANK kills itself with SIGKILL at the
 * start of global step STEP (counted from 0), as a crashed node would die: no handler runs,
 * no file is closed. Tests and experiments/faults use it; it is read here, never by the
 * trainer library, and only under this exact name. */
typedef struct {
    int rank;
    long step;
} test_kill;

static void test_kill_hook(void *ctx, int rank, long step) {
    const test_kill *k = ctx;
    if (rank == k->rank && step == k->step)
        raise(SIGKILL);
}

/* Reads SPEEDUP_TEST_KILL into k: 0 (absent: k->rank = -1), or -1 after saying why. */
static int read_test_kill(test_kill *k) {
    k->rank = -1;
    const char *v = getenv("SPEEDUP_TEST_KILL");
    if (!v || !*v)
        return 0;
    char rank[32];
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : 0;
    if (!colon || n == 0 || n >= sizeof rank) {
        args_error("SPEEDUP_TEST_KILL: expected RANK:STEP, got '%s'", v);
        return -1;
    }
    memcpy(rank, v, n);
    rank[n] = '\0';
    return args_int("SPEEDUP_TEST_KILL rank", rank, 0, 1 << 20, &k->rank) ||
                   args_long("SPEEDUP_TEST_KILL step", colon + 1, 0, 1L << 40, &k->step)
               ? -1
               : 0;
}

static void progress_bar(void *ctx, int epoch, int epochs, long done, long total, double ex_per_s,
                         double loss) {
    long *calls = ctx;
    if (++*calls % 16 != 0 && done != total)
        return;
    int width = 30, filled = (int)(width * done / (total ? total : 1));
    fprintf(stderr, "\repoch %d/%d [%.*s%*s] %ld/%ld  %.0f img/s  loss %.4f", epoch + 1, epochs, filled,
            "==============================", width - filled, "", done, total, ex_per_s, loss);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* What the flags say besides the trainer's config. */
typedef struct {
    int quiet, workers, oversubscribe, mpi_rank;
    int eval_subset_given;        /* --eval-subset was on the command line */
    int topology_given, master_given, pull_every;  /* pull_every: 0 when not given */
    const char *hostfile;
    long seed;
    char *skip;                   /* argv entries --workers does not pass on (argc + 1) */
} train_options;

enum { TRAIN_HELP_SHOWN = -100 };

/* The flags into c and o: 0, TRAIN_HELP_SHOWN, or another non-zero after a usage error
 * (said on stderr). */
static int check_train_options(trainer_config *c, const train_options *o);

/* --stop-at-accuracy: any number, then one message for all that is not a fraction in
 * (0, 1]. 0, or -1 after saying why. */
static int parse_stop_at_accuracy(const char *arg, trainer_config *c) {
    int rc = args_double("--stop-at-accuracy", arg, -HUGE_VAL, HUGE_VAL, &c->stop_at_accuracy);
    if (!rc && !(c->stop_at_accuracy > 0 && c->stop_at_accuracy <= 1)) {
        args_error("--stop-at-accuracy: expected a fraction in (0, 1], got '%s'", arg);
        rc = -1;
    }
    return rc;
}

static int parse_master(const char *arg, trainer_config *c) {
    if (!job_master_parse(arg, &c->master))
        return 0;
    args_error("--master: expected worker or dedicated, got '%s'", arg);
    return -1;
}

static int parse_train_options(int argc, char **argv, trainer_config *c, train_options *o) {
    static const struct option options[] = {
        { "data", required_argument, 0, OPT_DATA },       { "limit", required_argument, 0, OPT_LIMIT },
        { "epochs", required_argument, 0, OPT_EPOCHS },   { "batch", required_argument, 0, OPT_BATCH },
        { "lr", required_argument, 0, OPT_LR },           { "momentum", required_argument, 0, OPT_MOMENTUM },
        { "weight-decay", required_argument, 0, OPT_WD }, { "schedule", required_argument, 0, OPT_SCHEDULE },
        { "warmup-epochs", required_argument, 0, OPT_WARMUP },
        { "net", required_argument, 0, OPT_NET },         { "seed", required_argument, 0, OPT_SEED },
        { "threads", required_argument, 0, OPT_THREADS }, { "checkpoint", required_argument, 0, OPT_CHECKPOINT },
        { "cores", required_argument, 0, OPT_THREADS },
        { "resume", required_argument, 0, OPT_RESUME },   { "trace", required_argument, 0, OPT_TRACE },
        { "quiet", no_argument, 0, OPT_QUIET },           { "stop-after", required_argument, 0, OPT_STOP },
        { "workers", required_argument, 0, OPT_WORKERS }, { "hostfile", required_argument, 0, OPT_HOSTFILE },
        { "oversubscribe", no_argument, 0, OPT_OVERSUB }, { "sync", required_argument, 0, OPT_SYNC },
        { "topology", required_argument, 0, OPT_TOPOLOGY }, { "master", required_argument, 0, OPT_MASTER },
        { "batch-per-worker", no_argument, 0, OPT_BPW }, { "help", no_argument, 0, OPT_HELP },
        { "eval-every", required_argument, 0, OPT_EVAL_EVERY }, { "eval-subset", required_argument, 0, OPT_EVAL_SUBSET },
        { "stop-at-accuracy", required_argument, 0, OPT_STOP_ACC },
        { "pull-every", required_argument, 0, OPT_PULL_EVERY },
        { 0, 0, 0, 0 },
    };
    int code, rc = 0;
    opterr = 0;
    optind = 1;
    for (;;) {
        int before = optind;
        if ((code = getopt_long(argc, argv, "", options, NULL)) == -1)
            break;
        if (code == OPT_WORKERS || code == OPT_HOSTFILE || code == OPT_OVERSUB)
            for (int i = before; i < optind && i < argc; i++)
                o->skip[i] = 1;
        switch (code) {
        case OPT_DATA: c->data_dir = optarg; break;
        case OPT_LIMIT: rc = args_long("--limit", optarg, 0, 1L << 40, &c->limit); break;
        case OPT_EPOCHS: rc = args_int("--epochs", optarg, 1, TRAINER_MAX_EPOCHS, &c->epochs); break;
        case OPT_BATCH: rc = args_int("--batch", optarg, 1, 65536, &c->batch); break;
        case OPT_LR: rc = args_double("--lr", optarg, 0.0, 100.0, &c->lr); break;
        case OPT_MOMENTUM: rc = args_double("--momentum", optarg, 0.0, 0.999999, &c->momentum); break;
        case OPT_WD: rc = args_double("--weight-decay", optarg, 0.0, 1.0, &c->weight_decay); break;
        case OPT_WARMUP: rc = args_double("--warmup-epochs", optarg, 0.0, 1000.0, &c->warmup_epochs); break;
        case OPT_SCHEDULE:
            if (strcmp(optarg, "cosine") == 0)
                c->schedule = SCHEDULE_COSINE;
            else if (strcmp(optarg, "step") == 0)
                c->schedule = SCHEDULE_STEP;
            else {
                args_error("--schedule: expected cosine or step, got '%s'", optarg);
                rc = -1;
            }
            break;
        case OPT_NET: c->net_spec = optarg; break;
        case OPT_SEED: rc = args_long("--seed", optarg, 0, 4294967295L, &o->seed); break;
        case OPT_THREADS: rc = args_int("--threads", optarg, 1, 1024, &c->threads); break;
        case OPT_CHECKPOINT: c->checkpoint_path = optarg; break;
        case OPT_RESUME: c->resume_path = optarg; break;
        case OPT_TRACE: c->trace_path = optarg; break;
        case OPT_QUIET: o->quiet = 1; break;
        case OPT_STOP: rc = args_int("--stop-after", optarg, 0, TRAINER_MAX_EPOCHS, &c->stop_after); break;
        case OPT_WORKERS: rc = args_int("--workers", optarg, 1, 4096, &o->workers); break;
        case OPT_HOSTFILE: o->hostfile = optarg; break;
        case OPT_OVERSUB: o->oversubscribe = 1; break;
        case OPT_SYNC:
            if (job_sync_parse(optarg, &c->sync, &c->every_n)) {
                args_error("--sync: expected batch, epoch, every:N with N >= 1, async or hogwild, got '%s'", optarg);
                rc = -1;
            }
            break;
        case OPT_PULL_EVERY: rc = args_int("--pull-every", optarg, 1, 1000000000, &o->pull_every); break;
        case OPT_TOPOLOGY:
            o->topology_given = 1;
            if (job_topology_parse(optarg, &c->topology)) {
                args_error("--topology: expected ps or allreduce, got '%s'", optarg);
                rc = -1;
            }
            break;
        case OPT_MASTER:
            o->master_given = 1;
            rc = parse_master(optarg, c);
            break;
        case OPT_BPW: c->batch_per_worker = 1; break;
        case OPT_EVAL_EVERY: rc = args_long("--eval-every", optarg, 0, 1L << 40, &c->eval_every); break;
        case OPT_EVAL_SUBSET:
            rc = args_long("--eval-subset", optarg, 1, 1L << 40, &c->eval_subset);
            o->eval_subset_given = 1;
            break;
        case OPT_STOP_ACC: rc = parse_stop_at_accuracy(optarg, c); break;
        case OPT_HELP: usage(stdout); return TRAIN_HELP_SHOWN;
        default:
            rc = -args_unknown_flag("train", argv[optind - 1]);
        }
        if (rc)
            break;
    }
    if (!rc && optind < argc)
        rc = -args_unexpected("train", argv[optind]);
    return rc ? rc : check_train_options(c, o);
}

/* async and hogwild: a parameter server on a dedicated master, implied; a flag that says
 * otherwise is a usage error, and so is a pull period for a synchronous mode. 0, or -1
 * after saying why. */
static int check_async_options(trainer_config *c, const train_options *o) {
    if (!job_sync_is_async(c->sync)) {
        if (o->pull_every) {
            args_error("--pull-every goes with --sync async or hogwild");
            return -1;
        }
        return 0;
    }
    const char *mode = c->sync == JOB_SYNC_ASYNC ? "async" : "hogwild";
    if (o->topology_given && c->topology != JOB_TOPO_PS) {
        args_error("--sync %s runs through a parameter server: --topology %s cannot go with it (leave it out: "
                   "async implies ps)", mode, job_topology_name(c->topology));
        return -1;
    }
    if (o->master_given && c->master != JOB_MASTER_DEDICATED) {
        args_error("--sync %s needs rank 0 to serve only: --master %s cannot go with it (leave it out: async "
                   "implies dedicated)", mode, job_master_name(c->master));
        return -1;
    }
    if (o->pull_every && c->every_n > 1 && o->pull_every != c->every_n) {
        args_error("--sync %s:%d and --pull-every %d disagree: give the pull period once", mode, c->every_n,
                   o->pull_every);
        return -1;
    }
    if (!o->workers && o->mpi_rank < 0) {
        args_error("--sync %s needs a parameter server and workers: give --workers K (K + 1 ranks), or run under "
                   "mpirun -np K+1", mode);
        return -1;
    }
    c->topology = JOB_TOPO_PS;
    c->master = JOB_MASTER_DEDICATED;
    if (o->pull_every)
        c->every_n = o->pull_every;
    return 0;
}

/* Flags that are fine alone but not together: 0, or -1 after saying why. */
static int check_train_options(trainer_config *c, const train_options *o) {
    int rc = check_async_options(c, o);
    if (!rc && c->master == JOB_MASTER_DEDICATED && c->topology != JOB_TOPO_PS) {
        args_error("--master dedicated needs --topology ps");
        rc = -1;
    }
    if (!rc && o->workers && o->mpi_rank >= 0) {
        args_error("--workers launches mpirun itself: under mpirun, leave it out");
        rc = -1;
    }
    if (!rc && !o->workers && (o->hostfile || o->oversubscribe)) {
        args_error("--hostfile and --oversubscribe go with --workers");
        rc = -1;
    }
    if (!rc && o->eval_subset_given && c->eval_every <= 0) {
        args_error("--eval-subset goes with --eval-every N");
        rc = -1;
    }
    char why[512];
    if (!rc && trainer_check_eval(c, why, sizeof why)) {
        args_error("%s", why);
        rc = -1;
    }
    return rc;
}

/* One accuracy measurement as JSON. */
static json_t *accuracy_json(const trainer_accuracy *a) {
    return json_pack("{s:i, s:I, s:f, s:f, s:I, s:f, s:f}", "epoch", a->epoch, "step", (json_int_t)a->step,
                     "train_time_s", a->train_time_s, "examples_seen", a->examples_seen, "evaluated",
                     (json_int_t)a->evaluated, "accuracy", a->accuracy, "train_loss", a->train_loss);
}

/* --stop-at-accuracy: the target, whether it was reached, and when; null when not asked. */
static json_t *stop_json(const trainer_config *c, const trainer_result *r) {
    if (!(c->stop_at_accuracy > 0))
        return json_null();
    const trainer_accuracy *a = r->reached >= 0 ? &r->test_curve[r->reached] : NULL;
    return json_pack("{s:f, s:b, s:o, s:o}", "target", c->stop_at_accuracy, "reached", a != NULL, "epoch",
                     a ? json_integer(a->epoch) : json_null(), "train_time_s",
                     a ? json_real(a->train_time_s) : json_null());
}

/* The JSON line of a finished run (rank 0). */
static json_t *summary_json(const trainer_config *c, const trainer_result *r) {
    json_t *rss = json_array(), *rss_final = json_array(), *cpu = json_array();
    for (int i = 0; i < r->world && i < TRAINER_MAX_RANKS; i++) {
        json_array_append_new(rss, json_real(r->peak_rss_mib[i]));
        json_array_append_new(rss_final, json_real(r->peak_rss_final_mib[i]));
        json_array_append_new(cpu, json_real(r->cpu_s[i]));
    }
    json_t *times = json_array(), *losses = json_array(), *curve = json_array(), *subset = json_array();
    for (int i = 0; i < r->epochs_run; i++) {
        json_array_append_new(times, json_real(r->epoch_times_s[i]));
        json_array_append_new(losses, json_real(r->train_loss[i]));
        json_array_append_new(curve, accuracy_json(&r->test_curve[i]));
    }
    for (long i = 0; i < r->n_subset; i++)
        json_array_append_new(subset, accuracy_json(&r->subset_curve[i]));
    char crc[16];
    snprintf(crc, sizeof crc, "%08lx", r->params_crc32);
    json_t *o = json_object();
    json_object_set_new(o, "command", json_string("train"));
    json_object_set_new(o, "net", json_string(c->net_spec));
    json_object_set_new(o, "train_examples", json_integer(r->train_examples));
    json_object_set_new(o, "test_examples", json_integer(r->test_examples));
    json_object_set_new(o, "epochs", json_integer(c->epochs));
    json_object_set_new(o, "first_epoch", json_integer(r->first_epoch));
    json_object_set_new(o, "batch", json_integer(c->batch));
    json_object_set_new(o, "ranks", json_integer(r->world));
    json_object_set_new(o, "workers", json_integer(r->workers));
    char sync[32];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    json_object_set_new(o, "sync", json_string(sync));
    if (job_sync_is_async(c->sync)) {
        json_object_set_new(o, "pull_every", json_integer(c->every_n));
        json_object_set_new(o, "server_updates", json_integer(r->server_updates));
    }
    json_object_set_new(o, "topology", json_string(job_topology_name(c->topology)));
    json_object_set_new(o, "master", json_string(job_master_name(c->master)));
    json_object_set_new(o, "batch_per_worker", json_boolean(c->batch_per_worker));
    json_object_set_new(o, "steps_per_epoch", json_integer(r->steps_per_epoch));
    json_object_set_new(o, "model_bytes", json_integer(4 * r->n_params));
    json_object_set_new(o, "threads", json_integer(c->threads));
    json_object_set_new(o, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(o, "lr", json_real(c->lr));
    json_object_set_new(o, "momentum", json_real(c->momentum));
    json_object_set_new(o, "weight_decay", json_real(c->weight_decay));
    json_object_set_new(o, "schedule", json_string(c->schedule == SCHEDULE_COSINE ? "cosine" : "step"));
    json_object_set_new(o, "warmup_epochs", json_real(c->warmup_epochs));
    json_object_set_new(o, "params", json_integer(r->n_params));
    json_object_set_new(o, "forward_flops_per_example", json_real(r->forward_flops));
    json_object_set_new(o, "examples_per_s", json_real(r->examples_per_s));
    json_object_set_new(o, "epoch_times_s", times);
    json_object_set_new(o, "train_loss", losses);
    json_object_set_new(o, "test_accuracy", json_real(r->test_accuracy));
    // Time to accuracy: every epoch's test accuracy at its training time (start-up in,
    // evaluations and checkpoints out), the subset's points, and --stop-at-accuracy.
    json_object_set_new(o, "accuracy_curve", curve);
    json_object_set_new(o, "eval_every", json_integer(c->eval_every));
    json_object_set_new(o, "subset_curve", subset);
    json_object_set_new(o, "stop_at_accuracy", stop_json(c, r));
    json_object_set_new(o, "data_load_s", json_real(r->data_load_s));
    json_object_set_new(o, "model_build_s", json_real(r->model_build_s));
    json_object_set_new(o, "eval_s", json_real(r->eval_s));
    json_object_set_new(o, "wall_s", json_real(r->wall_s));
    json_object_set_new(o, "peak_rss_mib", json_real(r->peak_rss_final_mib[0]));
    // Training's peak (before rank 0 gathers the trace) and the run's, per rank.
    json_object_set_new(o, "peak_rss_mib_per_rank", rss);
    json_object_set_new(o, "peak_rss_final_mib_per_rank", rss_final);
    json_object_set_new(o, "cpu_s_per_rank", cpu);
    json_object_set_new(o, "params_crc32", json_string(crc));
    return o;
}

/* Trains on this rank; rank 0 prints the JSON summary. The exit status: a failure seen by
 * this rank only ends every rank (trainer_abort), one agreed on by all is reported once. */
static int train_and_report(const trainer_config *c) {
    char err[1024];
    trainer_result *r = malloc(sizeof *r);
    if (!r) {
        args_error("out of memory");
        return 1;
    }
    int trc = trainer_run(c, r, err, sizeof err);
    if (trc == -2) {
        // Only this rank failed: say so, then end every rank (mpirun reports the abort).
        if (c->mpi)
            args_error("rank %d: %s", r->rank, err);
        else
            args_error("%s", err);
        trainer_result_release(r);
        free(r);
        trainer_abort(1);
        return 1;
    }
    if (trc) {
        if (r->rank == 0)
            args_error("%s", err); // before trainer_finish lets the other ranks exit
        trainer_finish();
        trainer_result_release(r);
        free(r);
        return 1;
    }
    if (r->rank != 0) {
        trainer_result_release(r);
        free(r);
        return 0;
    }

    json_t *o_json = summary_json(c, r);
    char *line = o_json ? json_dumps(o_json, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
    if (line)
        printf("%s\n", line);
    free(line);
    json_decref(o_json);
    trainer_result_release(r);
    free(r);
    return line ? 0 : 1;
}

/* The host's speed at one moment: the probes (train/probe.h) and the CPU times so far. */
typedef struct {
    double probe_s, transfer_s, steal_s, cpu_s;
} host_reading;

static host_reading read_host(void) {
    host_reading h = { .probe_s = probe_sgemm_s(), .transfer_s = probe_transfer_s() };
    host_cpu_times(&h.steal_s, &h.cpu_s);
    return h;
}

/* Writes the host's speed over the run into the trace's header (trace/trace.h's
 * host_speed): the probes before and now, the steal time between. A trace that cannot be
 * rewritten keeps its header, with a warning: the run itself is good. */
static void mark_host_speed(const char *path, const host_reading *before) {
    const host_reading after = read_host();
    char err[1024];
    trace *t = trace_read(path, err, sizeof err);
    if (t) {
        t->run.speed = (trace_host_speed){ .has = true, .probe_before_s = before->probe_s, .probe_after_s = after.probe_s,
                                           .transfer_before_s = before->transfer_s,
                                           .transfer_after_s = after.transfer_s,
                                           .steal_s = fmax(0.0, after.steal_s - before->steal_s),
                                           .cpu_s = fmax(0.0, after.cpu_s - before->cpu_s) };
        if (trace_write(t, path, err, sizeof err) == 0) {
            trace_free(t);
            return;
        }
        trace_free(t);
    }
    fprintf(stderr, "speedup train: warning: the host's speed is not in the trace: %s\n", err);
}

int cmd_train(int argc, char **argv) {
    trainer_config c;
    trainer_config_default(&c);
    c.git = SPEEDUP_GIT;
    train_options o = { .seed = 1, .mpi_rank = env_rank(), .skip = calloc((size_t)argc + 1, 1) };
    if (!o.skip) {
        args_error("out of memory");
        return 1;
    }
    test_kill kill;
    if (read_test_kill(&kill)) {
        free(o.skip);
        return 2;
    }
    if (kill.rank >= 0) {
        c.step_hook = test_kill_hook;
        c.step_hook_ctx = &kill;
    }
    // Under mpirun every rank parses the same flags: only rank 0 says what was wrong.
    int saved_stderr = -1;
    if (o.mpi_rank > 0) {
        int devnull = open("/dev/null", O_WRONLY);
        saved_stderr = dup(STDERR_FILENO);
        if (devnull >= 0) {
            dup2(devnull, STDERR_FILENO);
            close(devnull);
        }
    }
    int rc = parse_train_options(argc, argv, &c, &o);
    if (saved_stderr >= 0) {
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
    }
    // mpirun ends the whole job at the first non-zero exit: were the other ranks to exit
    // 2 too, rank 0 could be killed before it said why. They end quietly; rank 0's 2 is
    // mpirun's status.
    const int usage_status = o.mpi_rank > 0 ? 0 : 2;
    if (rc) {
        free(o.skip);
        return rc == TRAIN_HELP_SHOWN ? 0 : usage_status;
    }
    c.seed = (unsigned long)o.seed;
    char err[1024];
    netspec spec;
    if (netspec_parse(c.net_spec, &spec, err, sizeof err)) {
        if (o.mpi_rank <= 0)
            args_error("--net: %s", err);
        free(o.skip);
        return usage_status;
    }
    /* The host's speed beside the run: probed here, where no rank of it runs yet (or any
     * more), and written into the trace's header afterwards. Not under a bare mpirun. */
    const bool probe = c.trace_path && o.mpi_rank < 0;
    const host_reading before = probe ? read_host() : (host_reading){ 0 };
    if (o.workers) {
        const int master = c.master == JOB_MASTER_DEDICATED;
        int code_w = launch(o.workers, master, c.threads, o.hostfile, o.oversubscribe, argc, argv, o.skip, c.checkpoint_path);
        free(o.skip);
        if (code_w == 0 && probe)
            mark_host_speed(c.trace_path, &before);
        return code_w;
    }
    free(o.skip);
    c.mpi = o.mpi_rank >= 0;
    long calls = 0;
    if (!o.quiet && isatty(STDERR_FILENO)) {
        c.progress = progress_bar;
        c.progress_ctx = &calls;
    }

    rc = train_and_report(&c);
    if (rc == 0 && probe)
        mark_host_speed(c.trace_path, &before);
    return rc;
}
