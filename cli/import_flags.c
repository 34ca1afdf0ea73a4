/* import_flags — what a foreign trace does not say (see import_flags.h). */
#define _POSIX_C_SOURCE 200809L
#include "cli/import_flags.h"

#include "cli/args.h"
#include "util/host.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

void import_flags_init(import_flags *f) {
    memset(f, 0, sizeof *f);
    if (gethostname(f->host, sizeof f->host - 1) != 0)
        snprintf(f->host, sizeof f->host, "unknown");
    f->opts.host_cores = host_online_cores();
    f->opts.host = f->host;
}

int import_flags_handle(import_flags *f, int code, const char *arg) {
    chrome_import_opts *o = &f->opts;
    switch (code) {
    case IMPORT_OPT_PHASE_MAP: f->map_path = arg; return 0;
    case IMPORT_OPT_WORKERS: return args_int("--workers", arg, 1, 1000000, &o->workers);
    case IMPORT_OPT_CORES: return args_int("--cores", arg, 1, 100000, &o->cores);
    case IMPORT_OPT_BATCH: return args_long("--batch", arg, 1, 1000000000L, &o->batch);
    case IMPORT_OPT_BATCH_PER_WORKER: o->batch_per_worker = true; return 0;
    case IMPORT_OPT_MODEL_BYTES: {
        double bytes;
        if (args_size("--model-bytes", arg, 1, 1125899906842624.0, &bytes))
            return -1;
        o->model_bytes = (long)bytes;
        return 0;
    }
    case IMPORT_OPT_HOST_CORES: return args_int("--host-cores", arg, 1, 1000000, &o->host_cores);
    case IMPORT_OPT_HOST: snprintf(f->host, sizeof f->host, "%s", arg); return 0;
    case IMPORT_OPT_NET: o->net = arg; return 0;
    case IMPORT_OPT_PRINT_MAP: f->print_map = true; return 0;
    default: return 1;
    }
}

int import_flags_finish(import_flags *f) {
    char err[512];
    f->map = phasemap_default();
    if (!f->map) {
        args_error("out of memory");
        return 1;
    }
    if (f->map_path && phasemap_read_file(f->map, f->map_path, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    f->opts.map = f->map;
    if (f->print_map) {
        phasemap_write(f->map, stdout);
        return 3;
    }
    return 0;
}

void import_flags_release(import_flags *f) {
    phasemap_free(f->map);
    f->map = NULL;
    f->opts.map = NULL;
}
