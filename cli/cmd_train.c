/* speedup train — train the CNN on an IDX data set and print one JSON summary line.
 * Reads like a script: usage → flags → train (train/trainer.h) → summary. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/commands.h"
#include "train/trainer.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef SPEEDUP_GIT
#define SPEEDUP_GIT "unknown"
#endif

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup train [FLAGS]\n"
            "\n"
            "Trains a CNN with SGD on IDX images (Fashion-MNIST by default), evaluates it on\n"
            "the test set after every epoch and prints one JSON summary line on stdout:\n"
            "examples_per_s, epoch_times_s, train_loss, test_accuracy, peak_rss_mib, ...\n"
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
            "  --lr X               peak learning rate (default 0.01)\n"
            "  --momentum X         SGD momentum (default 0.9)\n"
            "  --weight-decay X     L2 weight decay (default 0.0005)\n"
            "  --schedule S         cosine (per step, to 0) or step (x0.1 at 1/2 and 3/4 of the\n"
            "                       epochs) (default cosine)\n"
            "  --seed S             initialisation, shuffling and dropout (default 1)\n"
            "Run:\n"
            "  --threads T          threads: OpenMP, each running single-threaded OpenBLAS on its\n"
            "                       share of the batch (default 1)\n"
            "  --checkpoint FILE    save the network after every epoch (atomically) (default none)\n"
            "  --resume FILE        continue from a checkpoint (default none)\n"
            "  --stop-after N       stop after epoch N of --epochs, as an interrupted run would\n"
            "                       (the schedule still spans --epochs; default 0: never)\n"
            "  --trace FILE         write the run's phases as a *.trace.jsonl (default none)\n"
            "  --quiet              no progress bar (it is drawn only when stderr is a terminal)\n"
            "  --help               this text\n");
}

enum {
    OPT_DATA = 1, OPT_LIMIT, OPT_EPOCHS, OPT_BATCH, OPT_LR, OPT_MOMENTUM, OPT_WD, OPT_SCHEDULE, OPT_NET,
    OPT_SEED, OPT_THREADS, OPT_CHECKPOINT, OPT_RESUME, OPT_TRACE, OPT_QUIET, OPT_HELP, OPT_STOP
};

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

int cmd_train(int argc, char **argv) {
    static const struct option options[] = {
        { "data", required_argument, 0, OPT_DATA },       { "limit", required_argument, 0, OPT_LIMIT },
        { "epochs", required_argument, 0, OPT_EPOCHS },   { "batch", required_argument, 0, OPT_BATCH },
        { "lr", required_argument, 0, OPT_LR },           { "momentum", required_argument, 0, OPT_MOMENTUM },
        { "weight-decay", required_argument, 0, OPT_WD }, { "schedule", required_argument, 0, OPT_SCHEDULE },
        { "net", required_argument, 0, OPT_NET },         { "seed", required_argument, 0, OPT_SEED },
        { "threads", required_argument, 0, OPT_THREADS }, { "checkpoint", required_argument, 0, OPT_CHECKPOINT },
        { "resume", required_argument, 0, OPT_RESUME },   { "trace", required_argument, 0, OPT_TRACE },
        { "quiet", no_argument, 0, OPT_QUIET },           { "stop-after", required_argument, 0, OPT_STOP },           { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    trainer_config c;
    trainer_config_default(&c);
    c.git = SPEEDUP_GIT;
    int quiet = 0, code, rc = 0;
    long seed = 1;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_DATA: c.data_dir = optarg; break;
        case OPT_LIMIT: rc = args_long("--limit", optarg, 0, 1L << 40, &c.limit); break;
        case OPT_EPOCHS: rc = args_int("--epochs", optarg, 1, TRAINER_MAX_EPOCHS, &c.epochs); break;
        case OPT_BATCH: rc = args_int("--batch", optarg, 1, 65536, &c.batch); break;
        case OPT_LR: rc = args_double("--lr", optarg, 0.0, 100.0, &c.lr); break;
        case OPT_MOMENTUM: rc = args_double("--momentum", optarg, 0.0, 0.999999, &c.momentum); break;
        case OPT_WD: rc = args_double("--weight-decay", optarg, 0.0, 1.0, &c.weight_decay); break;
        case OPT_SCHEDULE:
            if (strcmp(optarg, "cosine") == 0)
                c.schedule = SCHEDULE_COSINE;
            else if (strcmp(optarg, "step") == 0)
                c.schedule = SCHEDULE_STEP;
            else {
                args_error("--schedule: expected cosine or step, got '%s'", optarg);
                rc = -1;
            }
            break;
        case OPT_NET: c.net_spec = optarg; break;
        case OPT_SEED: rc = args_long("--seed", optarg, 0, 4294967295L, &seed); break;
        case OPT_THREADS: rc = args_int("--threads", optarg, 1, 1024, &c.threads); break;
        case OPT_CHECKPOINT: c.checkpoint_path = optarg; break;
        case OPT_RESUME: c.resume_path = optarg; break;
        case OPT_TRACE: c.trace_path = optarg; break;
        case OPT_QUIET: quiet = 1; break;
        case OPT_STOP: rc = args_int("--stop-after", optarg, 0, TRAINER_MAX_EPOCHS, &c.stop_after); break;
        case OPT_HELP: usage(stdout); return 0;
        default:
            args_error("train: unknown flag or missing value: '%s' (try speedup train --help)", argv[optind - 1]);
            return 2;
        }
        if (rc)
            return 2;
    }
    if (optind < argc) {
        args_error("train: unexpected argument '%s'", argv[optind]);
        return 2;
    }
    c.seed = (unsigned long)seed;
    char err[1024];
    netspec spec;
    if (netspec_parse(c.net_spec, &spec, err, sizeof err)) {
        args_error("--net: %s", err);
        return 2;
    }
    long calls = 0;
    if (!quiet && isatty(STDERR_FILENO)) {
        c.progress = progress_bar;
        c.progress_ctx = &calls;
    }

    trainer_result *r = malloc(sizeof *r);
    if (!r) {
        args_error("out of memory");
        return 1;
    }
    if (trainer_run(&c, r, err, sizeof err)) {
        args_error("%s", err);
        free(r);
        return 1;
    }

    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    json_t *times = json_array(), *losses = json_array();
    for (int i = 0; i < r->epochs_run; i++) {
        json_array_append_new(times, json_real(r->epoch_times_s[i]));
        json_array_append_new(losses, json_real(r->train_loss[i]));
    }
    char crc[16];
    snprintf(crc, sizeof crc, "%08lx", r->params_crc32);
    json_t *o = json_object();
    json_object_set_new(o, "command", json_string("train"));
    json_object_set_new(o, "net", json_string(c.net_spec));
    json_object_set_new(o, "train_examples", json_integer(r->train_examples));
    json_object_set_new(o, "test_examples", json_integer(r->test_examples));
    json_object_set_new(o, "epochs", json_integer(c.epochs));
    json_object_set_new(o, "first_epoch", json_integer(r->first_epoch));
    json_object_set_new(o, "batch", json_integer(c.batch));
    json_object_set_new(o, "threads", json_integer(c.threads));
    json_object_set_new(o, "seed", json_integer(seed));
    json_object_set_new(o, "params", json_integer(r->n_params));
    json_object_set_new(o, "forward_flops_per_example", json_real(r->forward_flops));
    json_object_set_new(o, "examples_per_s", json_real(r->examples_per_s));
    json_object_set_new(o, "epoch_times_s", times);
    json_object_set_new(o, "train_loss", losses);
    json_object_set_new(o, "test_accuracy", json_real(r->test_accuracy));
    json_object_set_new(o, "data_load_s", json_real(r->data_load_s));
    json_object_set_new(o, "model_build_s", json_real(r->model_build_s));
    json_object_set_new(o, "eval_s", json_real(r->eval_s));
    json_object_set_new(o, "wall_s", json_real(r->wall_s));
    json_object_set_new(o, "peak_rss_mib", json_real((double)ru.ru_maxrss / 1024.0));
    json_object_set_new(o, "params_crc32", json_string(crc));
    char *line = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    if (line)
        printf("%s\n", line);
    free(line);
    json_decref(o);
    free(r);
    return line ? 0 : 1;
}
