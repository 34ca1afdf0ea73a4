/* memopt — --memory-limit and the rows' memory columns (memopt.h). */
#include "cli/memopt.h"

#include "cli/args.h"
#include "model/calibration.h"
#include "train/net.h"

#include <string.h>

static const double MIB = 1048576.0;

void memopt_init(memopt *o) {
    memset(o, 0, sizeof *o);
}

int memopt_handle_option(memopt *o, int code, const char *arg) {
    if (code != MEMOPT_OPT_LIMIT)
        return 1;
    if (memory_parse_size(arg, &o->limit_bytes) || o->limit_bytes <= 0) {
        args_error("--memory-limit: expected a size such as 4GiB, 512MiB or 2G (units B, K M G T = KiB MiB GiB TiB, "
                   "kB MB GB TB), got '%s'", arg);
        return -1;
    }
    return 0;
}

/* --net: the network's own buffers (activations, gradients, masks, workspaces) in the known
 * terms, counted from its layers as the trainer would write them (train/net.h); the
 * fitted terms stay the host's and the runtime's. 0, or 2 printed. */
static int use_network(memopt *o, const calibration *cal, const char *calib_path, const char *net_spec) {
    if (!cal->network.known) {
        args_error("--net %s: %s has no network to price another one's memory from: calibrate again", net_spec,
                   calib_path);
        return 2;
    }
    const int *in = cal->network.input;
    char err[512];
    net *planned = net_plan(net_spec, in[0], in[1], in[2], in[3], err, sizeof err);
    if (!planned) {
        args_error("--net: %s", err);
        return 2;
    }
    const net_memory nm = net_memory_of(planned);
    net_free(planned);
    o->m.fwd_bytes_per_example = (double)nm.fwd_bytes_per_example;
    o->m.train_bytes_per_example = (double)nm.train_bytes_per_example;
    o->m.workspace_bytes = (double)nm.workspace_bytes;
    o->m.workspace_bytes_per_thread = (double)nm.workspace_bytes_per_thread;
    return 0;
}

int memopt_finish(memopt *o, const char *calib_path, const char *net_spec) {
    if (!calib_path) {
        o->m = memory_params_seed_example();
        snprintf(o->source, sizeof o->source, "the seed-like example's stated assumptions (Keras on Elephas on Spark)");
        return 0;
    }
    calibration cal;
    char err[512];
    if (calibration_read(calib_path, &cal, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    o->m = cal.memory;
    if (!o->m.known && o->limit_bytes > 0) {
        args_error("--memory-limit: %s has no \"memory\" (calibrated before the ranks' memory was measured): run "
                   "speedup calibrate again", calib_path);
        return 2;
    }
    snprintf(o->source, sizeof o->source, "%s (fitted to %ld rank peaks, worst error %.1f%%%s)", calib_path,
             o->m.points, 100.0 * o->m.worst_rel_error,
             net_spec && o->m.known ? "; --net's buffers counted from its layers" : "");
    return net_spec && o->m.known ? use_network(o, &cal, calib_path, net_spec) : 0;
}

void memopt_fill(const memopt *o, double model_bytes, const job_config *c, prediction_row *r) {
    if (!o->m.known)
        return;
    double rank0, other;
    memory_rank_peaks(&o->m, model_bytes, c, &rank0, &other);
    r->has_memory = true;
    r->rss_master_mib = rank0 / MIB;
    r->rss_worker_mib = other / MIB;
    r->fits = o->limit_bytes <= 0 || (rank0 <= o->limit_bytes && other <= o->limit_bytes);
}

void memopt_print_note(const memopt *o, const prediction_row *rows, int n, FILE *out) {
    if (!o->m.known) {
        fprintf(out, "memory per rank: unknown (the calibration has none; speedup calibrate measures it)\n");
        return;
    }
    int over = 0;
    for (int i = 0; i < n; i++)
        over += rows[i].has_memory && !rows[i].fits;
    fprintf(out, "memory per rank (peak resident set, MiB; rank 0 is the ps master): from %s", o->source);
    if (o->limit_bytes > 0)
        fprintf(out, "; limit %.0f MiB: %d of %d configurations do not fit (OVER)", o->limit_bytes / MIB, over, n);
    fputc('\n', out);
}
