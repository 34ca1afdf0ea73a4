/* speedup eval — test accuracy of a saved checkpoint, as one JSON line. */
#define _POSIX_C_SOURCE 200809L
#include "cli/args.h"
#include "cli/commands.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif
void openblas_set_num_threads(int num_threads);

static void usage(FILE *out) {
    fprintf(out,
            "usage: speedup eval --checkpoint FILE [FLAGS]\n"
            "\n"
            "Loads a checkpoint written by speedup train and prints its test accuracy as JSON, with\n"
            "params_crc32, the weights' crc32 (train prints the same for its final weights).\n"
            "\n"
            "  --checkpoint FILE    the checkpoint (required)\n"
            "  --data DIR           directory with t10k-{images-idx3,labels-idx1}-ubyte[.gz]\n"
            "                       (default " DATASET_DEFAULT_DIR ")\n"
            "  --limit N            only the first N test examples (default 0: all)\n"
            "  --batch B            examples per forward pass (default 256)\n"
            "  --threads T          OpenMP threads, each running single-threaded OpenBLAS (default 1)\n"
            "  --help               this text\n");
}

enum { OPT_CHECKPOINT = 1, OPT_DATA, OPT_LIMIT, OPT_BATCH, OPT_THREADS, OPT_HELP };

int cmd_eval(int argc, char **argv) {
    static const struct option options[] = {
        { "checkpoint", required_argument, 0, OPT_CHECKPOINT }, { "data", required_argument, 0, OPT_DATA },
        { "limit", required_argument, 0, OPT_LIMIT },           { "batch", required_argument, 0, OPT_BATCH },
        { "threads", required_argument, 0, OPT_THREADS },       { "help", no_argument, 0, OPT_HELP },
        { 0, 0, 0, 0 },
    };
    const char *path = NULL, *dir = DATASET_DEFAULT_DIR;
    long limit = 0;
    int batch = 256, threads = 1, code, rc = 0;
    opterr = 0;
    optind = 1;
    while ((code = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (code) {
        case OPT_CHECKPOINT: path = optarg; break;
        case OPT_DATA: dir = optarg; break;
        case OPT_LIMIT: rc = args_long("--limit", optarg, 0, 1L << 40, &limit); break;
        case OPT_BATCH: rc = args_int("--batch", optarg, 1, 65536, &batch); break;
        case OPT_THREADS: rc = args_int("--threads", optarg, 1, 1024, &threads); break;
        case OPT_HELP: usage(stdout); return 0;
        default:
            return args_unknown_flag("eval", argv[optind - 1]);
        }
        if (rc)
            return 2;
    }
    if (optind < argc)
        return args_unexpected("eval", argv[optind]);
    if (!path) {
        args_error("eval: --checkpoint FILE is required");
        return 2;
    }
    openblas_set_num_threads(1); // OpenMP splits the products (layers.h)
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    char err[1024];
    checkpoint_state st;
    net *n = checkpoint_load(path, batch, &st, err, sizeof err);
    if (!n) {
        args_error("%s", err);
        return 1;
    }
    dataset test;
    if (dataset_load(dir, "t10k", limit, &test, err, sizeof err)) {
        args_error("%s", err);
        net_free(n);
        return 1;
    }
    long *idx = malloc(sizeof *idx * (size_t)batch);
    uint8_t *labels = malloc((size_t)batch);
    if (!idx || !labels || test.h != n->h || test.w != n->w || test.classes > n->classes) {
        if (!idx || !labels)
            args_error("out of memory");
        else
            args_error("%s: network is for %dx%d images and %d classes, %s has %dx%d and %d", path, n->h, n->w,
                       n->classes, dir, test.h, test.w, test.classes);
        free(idx), free(labels), net_free(n), dataset_free(&test);
        return 1;
    }
    double acc = trainer_evaluate(n, &test, idx, labels);
    char crc[16];
    snprintf(crc, sizeof crc, "%08lx", net_params_crc32(n));
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:s}", "command", "eval", "checkpoint", path, "net",
                          n->spec_text, "epochs_done", st.epochs_done, "test_examples", (json_int_t)test.n,
                          "test_accuracy", acc, "params_crc32", crc);
    char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) : NULL;
    if (line)
        printf("%s\n", line);
    else
        args_error("%s: cannot print the result (a path that is not UTF-8?)", path);
    free(line);
    json_decref(o);
    free(idx), free(labels), net_free(n), dataset_free(&test);
    return line ? 0 : 1;
}
