#define _POSIX_C_SOURCE 200809L
#include "cli/grid.h"

#include "train/net.h"

#include "cli/args.h"
#include "model/calibration.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The grid's cells that select_cells kept, by their raw index (one grid a process). */
static int cells[GRID_MAX_CELLS];
static job_config raw_config(const grid *g, int i);
static int select_cells(grid *g);
static int pairs(const grid *g);

void grid_init(grid *g) {
    memset(g, 0, sizeof *g);
    static const int workers[] = { 1, 2, 4, 8, 16 }, cores[] = { 1, 2, 4 };
    g->n_workers = 5;
    memcpy(g->workers, workers, sizeof workers);
    g->n_cores = 3;
    memcpy(g->cores, cores, sizeof cores);
    g->n_sync = 2;
    g->sync[0] = JOB_SYNC_BATCH, g->every_n[0] = 1;
    g->sync[1] = JOB_SYNC_EPOCH, g->every_n[1] = 0;
    g->n_topology = 2; /* both, as advise ranks them */
    g->topology[0] = JOB_TOPO_PS;
    g->topology[1] = JOB_TOPO_ALLREDUCE;
    g->base = costmodel_config_seed_example();
    g->workload_from = "the seed's, by default: give --examples, --batch, --epochs";
    for (int i = 0; i < PARAM_COUNT; i++)
        g->param[i] = NAN;
    g->latency = g->bandwidth = g->w0 = g->w1 = g->run_cv = NAN;
    g->allreduce = g->ps_separate = g->step_time = NAN;
    g->examples = g->batch = -1;
    g->epochs = -1;
    g->target_accuracy = NAN;
}

/* --target-accuracy: a fraction strictly inside (0, 1). */
static int parse_target(grid *g, const char *arg) {
    double a;
    if (args_double("--target-accuracy", arg, 0, 1, &a))
        return -1;
    if (a <= 0 || a >= 1) {
        args_error("--target-accuracy: expected a test accuracy strictly between 0 and 1 (e.g. 0.90), got '%s'", arg);
        return -1;
    }
    g->target_accuracy = a;
    return 0;
}

/* Splits a comma-separated list and hands each item to one(g, item, index); one returns
 * -1 after printing why the item is bad. Returns the number of items or -1. */
static int parse_list(grid *g, const char *flag, const char *arg, const char *expected,
                      int (*one)(grid *g, const char *item, int index)) {
    char buf[1024];
    if (strlen(arg) >= sizeof buf) {
        args_error("%s: list too long", flag);
        return -1;
    }
    strcpy(buf, arg);
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == GRID_MAX_VALUES) {
            args_error("%s: at most %d values", flag, GRID_MAX_VALUES);
            return -1;
        }
        if (one(g, tok, n++))
            return -1;
    }
    if (n == 0) {
        args_error("%s: expected %s, got '%s'", flag, expected, arg);
        return -1;
    }
    return n;
}

static int sync_item(grid *g, const char *item, int i) {
    if (job_sync_parse(item, &g->sync[i], &g->every_n[i]) == 0)
        return 0;
    args_error("--sync: unknown sync mode '%s' (expected batch, epoch, every:N, async[:N] or hogwild[:N] with "
               "N >= 1)", item);
    return -1;
}

static int topology_item(grid *g, const char *item, int i) {
    if (job_topology_parse(item, &g->topology[i]) == 0)
        return 0;
    args_error("--topology: unknown topology '%s' (expected ps or allreduce)", item);
    return -1;
}

static int parse_sync_list(grid *g, const char *arg) {
    int n = parse_list(g, "--sync", arg, "batch, epoch, every:N, async[:N] or hogwild[:N]", sync_item);
    if (n < 0)
        return -1;
    g->n_sync = n;
    return 0;
}

static int parse_topology_list(grid *g, const char *arg) {
    int n = parse_list(g, "--topology", arg, "ps or allreduce", topology_item);
    if (n < 0)
        return -1;
    g->n_topology = n;
    return 0;
}

static int parse_startup(grid *g, const char *arg) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", arg);
    char *comma = strchr(buf, ',');
    if (comma)
        *comma = '\0';
    if (args_seconds("--startup", buf, &g->w0))
        return -1;
    if (comma && args_seconds("--startup", comma + 1, &g->w1))
        return -1;
    return 0;
}

/* A registry parameter's what-if flag (model/params.h): its value read by its kind. */
static int parse_param(grid *g, param_id id, const char *arg) {
    const param_row *r = param_info(id);
    char flag[48];
    snprintf(flag, sizeof flag, "--%s", r->flag);
    double *v = &g->param[id];
    switch (r->kind) {
    case PARAM_SECONDS: return args_seconds(flag, arg, v);
    case PARAM_FRACTION: return args_double(flag, arg, 0, 1, v);
    case PARAM_RATIO: return args_double(flag, arg, 0, 100, v);
    case PARAM_CORES: return args_double(flag, arg, 0, 1e9, v);
    case PARAM_BYTES: return args_size(flag, arg, 0, 1e18, v);
    case PARAM_INTEGER: {
        int n;
        if (args_int(flag, arg, 1, (int)r->hi, &n))
            return -1;
        *v = n;
        return 0;
    }
    }
    return 1;
}

int grid_handle_option(grid *g, int code, const char *arg) {
    switch (code) {
    case GRID_OPT_CALIB:
        if (g->calib_path) {
            args_error("--calib given twice ('%s', then '%s'): one calibration predicts", g->calib_path, arg);
            return -1;
        }
        g->calib_path = arg;
        return 0;
    case GRID_OPT_WORKERS:
        g->workers_given = true;
        return args_int_list("--workers", arg, 1, 1000000, g->workers, GRID_MAX_VALUES, &g->n_workers);
    case GRID_OPT_CORES:
        g->cores_given = true;
        return args_int_list("--cores", arg, 1, 100000, g->cores, GRID_MAX_VALUES, &g->n_cores);
    case GRID_OPT_SYNC: return parse_sync_list(g, arg);
    case GRID_OPT_TOPOLOGY:
        g->topology_given = true;
        return parse_topology_list(g, arg);
    case GRID_OPT_MASTER:
        if (job_master_parse(arg, &g->base.master)) {
            args_error("--master: expected worker or dedicated, got '%s'", arg);
            return -1;
        }
        return 0;
    case GRID_OPT_BATCH_PER_WORKER: g->base.batch_per_worker = true; return 0;
    case GRID_OPT_EXAMPLES: return args_long("--examples", arg, 1, 1000000000000L, &g->examples);
    case GRID_OPT_BATCH: return args_long("--batch", arg, 1, 1000000000L, &g->batch);
    case GRID_OPT_EPOCHS: return args_int("--epochs", arg, 1, 1000000, &g->epochs);
    case GRID_OPT_LATENCY: return args_latency("--latency", arg, &g->latency);
    case GRID_OPT_BANDWIDTH: return args_bandwidth("--bandwidth", arg, &g->bandwidth);
    case GRID_OPT_STARTUP: return parse_startup(g, arg);
    case GRID_OPT_RUN_CV: return args_double("--run-cv", arg, 0, 10, &g->run_cv);
    case GRID_OPT_TARGET_ACCURACY: return parse_target(g, arg);
    case GRID_OPT_ALLREDUCE: {
        costmodel_allreduce a;
        if (costmodel_allreduce_parse(arg, &a)) {
            args_error("--allreduce: expected ring, hierarchical or either, got '%s'", arg);
            return -1;
        }
        g->allreduce = a;
        return 0;
    }
    case GRID_OPT_PS_PLACEMENT:
        if (strcmp(arg, "colocated") != 0 && strcmp(arg, "separate") != 0) {
            args_error("--ps-placement: expected colocated or separate, got '%s'", arg);
            return -1;
        }
        g->ps_separate = strcmp(arg, "separate") == 0;
        return 0;
    case GRID_OPT_STEP_TIME: return args_seconds("--step-time", arg, &g->step_time);
    case GRID_OPT_WIDE: g->wide = true; return 0;
    case GRID_OPT_NO_CONTENTION: g->no_contention = true; return 0;
    case GRID_OPT_NET: g->net_spec = arg; return 0;
    case GRID_OPT_CLUSTER:
        if (g->has_cluster) { /* one grid, one cluster (speedup report draws up to four) */
            args_error("--cluster given twice (then '%s'): one cluster a grid; speedup report --cluster draws up "
                       "to four", arg);
            return -1;
        }
        g->has_cluster = true;
        return cluster_spec_parse("--cluster", arg, &g->cluster);
    case GRID_OPT_SCALING:
        if (strcmp(arg, "strong") != 0 && strcmp(arg, "weak") != 0) {
            args_error("--scaling: expected strong (B split over the workers) or weak (B per worker), got '%s'", arg);
            return -1;
        }
        g->base.batch_per_worker = strcmp(arg, "weak") == 0;
        return 0;
    default:
        if (code >= GRID_OPT_PARAM && code < GRID_OPT_PARAM + PARAM_COUNT)
            return parse_param(g, (param_id)(code - GRID_OPT_PARAM), arg);
        return 1;
    }
}

/* A what-if value replaces the parameter and, being exact, its standard error. */
static void override(double *target, double *se, double value) {
    if (isnan(value))
        return;
    *target = value;
    *se = 0;
}

/* The parameters and their uncertainty: --calib's or the seed's example. 0, or 1 for a
 * bad file (printed). */
static int load_params(grid *g) {
    memset(&g->unc, 0, sizeof g->unc);
    if (!g->calib_path) {
        g->params = costmodel_params_seed_example();
        snprintf(g->host, sizeof g->host, "seed example");
        return 0;
    }
    calibration cal;
    char err[512];
    if (calibration_read(g->calib_path, &cal, err, sizeof err)) {
        args_error("%s", err);
        return 1;
    }
    g->params = cal.params;
    memcpy(g->uncalibrated, cal.uncalibrated, sizeof g->uncalibrated);
    g->sigma_unmeasured = cal.sigma_unmeasured;
    g->range_workers = cal.range_workers;
    g->range_machines = cal.range_machines;
    g->network = cal.network;
    if (!g->topology_given) { /* the default leaves out what was never measured */
        int n = 0;
        for (int t = 0; t < JOB_TOPO_COUNT; t++)
            if (!g->uncalibrated[t])
                g->topology[n++] = (job_topology)t;
        g->n_topology = n > 0 ? n : g->n_topology;
    }
    g->unc = uncertainty_of_calibration(&cal);
    snprintf(g->host, sizeof g->host, "%s", cal.host);
    if (cal.has_workload) {
        g->base.examples = cal.examples;
        g->base.batch = cal.batch;
        g->base.epochs = cal.epochs;
        g->workload_from = "the calibration's";
    }
    g->efficiency = cal.efficiency;
    if (!isnan(g->target_accuracy) && cal.efficiency.known) {
        /* The time to accuracy is the accuracy fit's workload's: its data, batch, schedule. */
        g->base.examples = cal.efficiency.examples;
        g->base.batch = cal.efficiency.batch;
        g->base.epochs = cal.efficiency.epochs;
        g->workload_from = "the accuracy fit's";
    }
    return 0;
}

/* --target-accuracy's needs: an accuracy fit (grid_finish checks that it can predict every
 * configuration). 0, or 2 with the reason printed. */
static int check_target(const grid *g) {
    if (isnan(g->target_accuracy))
        return 0;
    if (!g->calib_path) {
        args_error("--target-accuracy needs --calib FILE with an accuracy fit (speedup calibrate --accuracy-plan "
                   "SECONDS, or --from-traces on runs that recorded accuracy): the seed's example has none");
        return 2;
    }
    if (!g->efficiency.known) {
        args_error("--target-accuracy: %s has no accuracy fit (no \"efficiency\"): calibrate with --accuracy-plan "
                   "SECONDS, or --from-traces on runs that recorded accuracy", g->calib_path);
        return 2;
    }
    return 0;
}

int grid_fill_tta(const grid *g, const job_config *c, prediction_row *r) {
    if (isnan(g->target_accuracy))
        return 0;
    /* The run's time is W + E·t_epoch; its 95% PI is log-symmetric: sd = ln(hi/lo)/(2·1.96). */
    const double z = 1.959963984540054;
    efficiency_timing t = { .startup_s = r->startup_s, .epoch_s = (r->time_s - r->startup_s) / c->epochs,
                            .sd_ln = r->time_lo > 0 && r->time_hi > r->time_lo ? log(r->time_hi / r->time_lo) / (2 * z)
                                                                               : 0 };
    if (t.epoch_s < 0)
        t.epoch_s = 0;
    char err[512], name[96];
    if (efficiency_predict(&g->efficiency, c, r->staleness_mean, g->target_accuracy, &t, &r->tta, err,
                           sizeof err)) {
        grid_describe(c, name, sizeof name);
        args_error("--target-accuracy: %s: %s", name, err);
        return 1;
    }
    r->has_tta = true;
    return 0;
}

static void apply_overrides(grid *g) {
    costmodel_params *p = &g->params;
    calibration_stderr *se = &g->unc.se;
    for (int i = 0; i < PARAM_COUNT; i++)
        override(param_value(p, (param_id)i), param_se(se, (param_id)i), g->param[i]);
    if (!isnan(g->param[PARAM_C0]) || !isnan(g->param[PARAM_C1]))
        g->unc.cov_c0_c1 = 0;
    override(&p->w0_s, &se->w0_s, g->w0);
    override(&p->w1_s, &se->w1_s, g->w1);
    override(&p->run_cv, &se->run_cv, g->run_cv);
    override(&p->run_cv_oversub, &se->run_cv_oversub, g->run_cv); /* one spread stated for every run */
    override(&p->link[JOB_TOPO_PS].alpha_s, &se->alpha_ps, g->latency);
    override(&p->link[JOB_TOPO_ALLREDUCE].alpha_s, &se->alpha_allreduce, g->latency);
    double beta = isnan(g->bandwidth) ? NAN : 1.0 / g->bandwidth;
    override(&p->link[JOB_TOPO_PS].beta_s_per_byte, &se->beta_ps, beta);
    override(&p->link[JOB_TOPO_ALLREDUCE].beta_s_per_byte, &se->beta_allreduce, beta);
    if (!isnan(g->allreduce))
        p->allreduce_algorithm = g->allreduce;
    if (!isnan(g->ps_separate))
        p->ps_separate = g->ps_separate;
    if (!isnan(g->step_time)) { /* a device worker's measured step, at the batch predicted */
        p->c0_s = g->step_time;
        p->c1_s = p->sigma = 0;
        se->c0_s = se->c1_s = se->sigma = 0;
        g->unc.cov_c0_c1 = 0;
        p->worker_device = 1;
    }
    if (g->has_cluster)
        cluster_spec_apply(&g->cluster, p, se);
    p->contention_off = g->no_contention;
    if (g->examples > 0 || g->batch > 0 || g->epochs > 0)
        g->workload_from = g->examples > 0 && g->batch > 0 && g->epochs > 0 ? "given" : "given in part";
    if (g->examples > 0) g->base.examples = g->examples;
    if (g->batch > 0) g->base.batch = g->batch;
    if (g->epochs > 0) g->base.epochs = g->epochs;
}

void grid_print_interval_note(const grid *g, FILE *out) {
    fprintf(out, "95%% PI (one run): where 95 runs in 100 should land; made of step spread cv %.3g, "
            "run-to-run spread run_cv %.3g (%.3g with more ranks than cores), model error model_cv %.3g (%.3g), %s\n",
            g->params.cv, g->params.run_cv, g->params.run_cv_oversub > 0 ? g->params.run_cv_oversub : g->params.run_cv,
            g->params.model_cv, g->params.model_cv_oversub > 0 ? g->params.model_cv_oversub : g->params.model_cv,
            uncertainty_has_params(&g->unc) ? "the calibration's standard errors" : "parameters taken as exact");
}

static bool row_beyond(const grid *g, const prediction_row *r) {
    const int machines = g->has_cluster ? cluster_spec_machines_filled(g->cluster.cores, r->workers, r->cores) : 1;
    return calibration_beyond_range(g->range_workers, g->range_machines, r->workers, machines);
}

void grid_print_range_note(const grid *g, const prediction_row *rows, int n, FILE *out) {
    char list[256] = "";
    int len = 0, beyond = 0;
    for (int i = 0; i < n; i++) {
        if (!row_beyond(g, &rows[i]))
            continue;
        beyond++;
        bool listed = false; /* each worker count once, whatever sync and topology it runs */
        for (int j = 0; j < i && !listed; j++)
            listed = rows[j].workers == rows[i].workers && row_beyond(g, &rows[j]);
        if (!listed && len < (int)sizeof list - 16)
            len += snprintf(list + len, sizeof list - (size_t)len, "%s%d", len ? ", " : "", rows[i].workers);
    }
    if (beyond > 0)
        fprintf(out, "extrapolated: %d row%s (K = %s) beyond the calibration, which measured at most %d workers on %d "
                "machine%s; the interval carries the parameters' errors there, not the model's own at that scale\n",
                beyond, beyond == 1 ? "" : "s", list, g->range_workers, g->range_machines,
                g->range_machines == 1 ? "" : "s");
}

int grid_describe(const job_config *c, char *out, int outlen) {
    char sync[24];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    return snprintf(out, (size_t)outlen, "%d worker%s x %d core%s, %s sync, %s", c->workers,
                    c->workers == 1 ? "" : "s", c->cores, c->cores == 1 ? "" : "s", sync,
                    job_topology_name(c->topology));
}

/* Does some configuration split the global batch over the workers (strong scaling)? */
static bool splits_batch(const grid *g) {
    for (int s = 0; s < g->n_sync; s++)
        if (g->sync[s] == JOB_SYNC_BATCH && !g->base.batch_per_worker)
            return true;
    return false;
}

/* Workers 1, 2, 4, … up to the cluster's cores (and the cores themselves), never more
 * than the batch has examples when it is split: no worker gets less than one. */
static void default_workers(grid *g) {
    int most = g->cluster.machines * g->cluster.cores;
    if (splits_batch(g) && most > g->base.batch)
        most = (int)g->base.batch;
    g->n_workers = 0;
    for (int k = 1; k <= most && g->n_workers < GRID_MAX_VALUES - 1; k *= 2)
        g->workers[g->n_workers++] = k;
    if (g->workers[g->n_workers - 1] != most)
        g->workers[g->n_workers++] = most;
}

void grid_print_usage(FILE *out) {
    fputs(GRID_USAGE_CONFIGS, out);
    fputs(GRID_USAGE_PARAMS, out);
}

void grid_print_setting(const grid *g, FILE *out) {
    char where[200];
    if (g->has_cluster)
        cluster_spec_describe(&g->cluster, &g->params, where, sizeof where);
    else if (g->params.host_cores > 0)
        snprintf(where, sizeof where, "one host of %g cores", g->params.host_cores);
    else
        snprintf(where, sizeof where, "one host, cores unlimited");
    if (g->net_spec) {
        fprintf(out, "network: %s, priced by layer kind from the calibration's %s (transfer error %.3g added to the "
                "interval)\n", g->net_spec, g->network.spec, netcost_transfer_cv(&g->network, g->net_unlike.share));
        char unlike[1024];
        netcost_unlike_describe(&g->net_unlike, g->net_spec, unlike, sizeof unlike);
        if (unlike[0])
            fprintf(out, "  %s\n", unlike);
    }
    fprintf(out, "parameters: %s; D = %ld examples, B = %ld (%s), E = %d epochs (%s); on %s%s\n", g->host,
            g->base.examples, g->base.batch,
            g->base.batch_per_worker ? "weak scaling: B per worker" : "strong scaling: B split over the workers",
            g->base.epochs, g->workload_from, where,
            g->no_contention ? " (--no-contention: as if every rank had a core of its own)" : "");
}

/* The cost of spec on n's input, its layers' shapes with it: 0, or -1 with the reason in err. */
static int planned_cost(const calibration_network *n, const char *spec, network_cost *out, char *err, int errlen) {
    net *planned = net_plan(spec, n->input[0], n->input[1], n->input[2], n->input[3], err, errlen);
    if (!planned)
        return -1;
    *out = net_cost_of(planned);
    net_free(planned);
    return 0;
}

int grid_net_cost(const calibration_network *n, const char *spec, double batch, network_cost *target,
                  netcost_unlike *unlike, char *err, int errlen) {
    if (planned_cost(n, spec, target, err, errlen))
        return -1;
    /* calibration.json keeps its layers' work, not their shapes: planned again from its spec
     * (where it does not plan, no layer is known alike) */
    network_cost measured;
    char ignored[512];
    if (planned_cost(n, n->spec, &measured, ignored, sizeof ignored))
        measured.n = 0;
    *unlike = netcost_unlike_of(n, &measured, target, batch);
    return 0;
}

/* --net: the calibration's rates price another network (model/netcost.h). 0, or 2 printed. */
static int transfer_network(grid *g) {
    if (!g->net_spec)
        return 0;
    if (!g->network.known) {
        args_error("--net %s: %s has no per-layer rates of this host to price another network with: calibrate "
                   "again (its traces time each layer kind)", g->net_spec,
                   g->calib_path ? g->calib_path : "the seed-like example");
        return 2;
    }
    /* At the batch asked (the workload's B, given or the calibration's): where both fits of
     * the measured step are read against each other. */
    const double batch = (double)(g->batch > 0 ? g->batch : g->base.batch);
    char err[512];
    network_cost target;
    if (grid_net_cost(&g->network, g->net_spec, batch, &target, &g->net_unlike, err, sizeof err)) {
        args_error("--net: %s", err);
        return 2;
    }
    if (netcost_transfer(&g->network, &target, batch, g->net_unlike.share, &g->params, &g->unc.se.c0_s,
                         &g->unc.se.c1_s, err, sizeof err)) {
        args_error("--net: %s", err);
        return 2;
    }
    g->unc.cov_c0_c1 = 0; /* c0 and c1 moved apart */
    return 0;
}

int grid_finish(grid *g) {
    if (load_params(g))
        return 1;
    if (transfer_network(g))
        return 2;
    apply_overrides(g);
    if (g->has_cluster && !g->cores_given) {
        /* A worker never takes more cores than a machine has. */
        int n = 0;
        for (int i = 0; i < g->n_cores; i++)
            if (g->cores[i] <= g->cluster.cores)
                g->cores[n++] = g->cores[i];
        g->n_cores = n;
    }
    if (g->has_cluster && !g->workers_given)
        default_workers(g);
    if ((g->sigma_unmeasured || g->params.worker_device) && isnan(g->param[PARAM_SIGMA]) && !g->cores_given) {
        g->n_cores = 1; /* the default grid keeps to what the calibration can predict */
        g->cores[0] = 1;
    }
    for (int i = 0; i < g->n_cores; i++)
        if (g->cores[i] > 1 && g->sigma_unmeasured && isnan(g->param[PARAM_SIGMA])) {
            args_error("--cores %d: %s measured no run with 2 or more threads per worker, so how a worker's step "
                       "shrinks with its cores (sigma) is not known: predict at --cores 1, give --sigma F, or "
                       "calibrate with such a run", g->cores[i], g->calib_path);
            return 2;
        }
    if (g->has_cluster && !cluster_spec_has_rate(&g->cluster) && g->cluster.machines >= 2 &&
        !(g->params.net.beta_s_per_byte > 0 || g->params.net.alpha_s > 0)) {
        args_error("--cluster %dx%d: no rate, and %s has no fabric between machines to take it from: give "
                   "%dx%d@RATE[,LATENCY] (10gbit, 100gbit) or calibrate --from-table with multi-machine rows",
                   g->cluster.machines, g->cluster.cores, g->calib_path ? g->calib_path : "the seed-like example",
                   g->cluster.machines, g->cluster.cores);
        return 2;
    }
    for (int i = 0; i < g->n_topology; i++)
        if (g->uncalibrated[g->topology[i]] && (isnan(g->latency) || isnan(g->bandwidth))) {
            const char *name = job_topology_name(g->topology[i]);
            args_error("%s: the traces held no %s synchronisation, so %s is not calibrated: leave it out of "
                       "--topology, or give its link with --latency and --bandwidth", g->calib_path, name, name);
            return 2;
        }
    for (int s = 0; s < g->n_sync; s++) {
        bool ps = false;
        for (int t = 0; t < g->n_topology; t++)
            ps |= g->topology[t] == JOB_TOPO_PS;
        if (job_sync_is_async(g->sync[s]) && !ps) {
            char name[24];
            job_sync_format(g->sync[s], g->every_n[s], name, sizeof name);
            args_error("--sync %s runs through a parameter server: add ps to --topology", name);
            return 2;
        }
    }
    if (check_target(g))
        return 2;
    return select_cells(g);
}

/* The cells of the grid that can be predicted: a configuration the model refuses (batch
 * sync split over more workers than the batch has examples, say) is skipped with a line on
 * stderr, as advise skips one; none left is a usage error. One the accuracy fit cannot
 * predict is a usage error: the target was asked for every row. */
static int select_cells(grid *g) {
    const bool target = !isnan(g->target_accuracy);
    const int raw = pairs(g) * g->n_workers * g->n_cores;
    char first[700] = "";
    g->n_cells = 0;
    for (int i = 0; i < raw && g->n_cells < GRID_MAX_CELLS; i++) {
        job_config c = raw_config(g, i);
        char err[512], name[96];
        grid_describe(&c, name, sizeof name);
        if (costmodel_check(&g->params, &c, err, sizeof err)) {
            if (!first[0])
                snprintf(first, sizeof first, "%s: %s", name, err);
            continue;
        }
        if (target && efficiency_check(&g->efficiency, &c, err, sizeof err)) {
            args_error("--target-accuracy: %s: %s", name, err);
            return 2;
        }
        cells[g->n_cells++] = i;
    }
    if (g->n_cells == 0) {
        args_error("no configuration of the grid can be predicted; the first: %s", first);
        return 2;
    }
    for (int i = 0, k = 0; i < raw; i++) { /* the skipped ones, now that some are kept */
        if (k < g->n_cells && cells[k] == i) {
            k++;
            continue;
        }
        job_config c = raw_config(g, i);
        char err[512], name[96];
        grid_describe(&c, name, sizeof name);
        if (costmodel_check(&g->params, &c, err, sizeof err))
            fprintf(stderr, "speedup: skipped %s: %s\n", name, err);
    }
    return 0;
}

/* Does (sync s, topology t) make a row? Async and hogwild run through a parameter server
 * only: with the ps topology, never with allreduce. */
static bool pair_runs(const grid *g, int s, int t) {
    return !job_sync_is_async(g->sync[s]) || g->topology[t] == JOB_TOPO_PS;
}

static int pairs(const grid *g) {
    int n = 0;
    for (int s = 0; s < g->n_sync; s++)
        for (int t = 0; t < g->n_topology; t++)
            n += pair_runs(g, s, t);
    return n;
}

int grid_size(const grid *g) { return g->n_cells; }

job_config grid_config(const grid *g, int i) { return raw_config(g, cells[i]); }

/* Cell i of workers × cores × (sync, topology), skipped ones included. */
static job_config raw_config(const grid *g, int i) {
    job_config c = g->base;
    c.cores = g->cores[i % g->n_cores];
    i /= g->n_cores;
    c.workers = g->workers[i % g->n_workers];
    i /= g->n_workers;
    for (int s = 0; s < g->n_sync; s++)
        for (int t = 0; t < g->n_topology; t++)
            if (pair_runs(g, s, t) && i-- == 0) {
                c.sync = g->sync[s];
                c.every_n = g->every_n[s];
                c.topology = g->topology[t];
                /* The server applies pushes as they come: it trains nothing (--master aside). */
                if (job_sync_is_async(c.sync))
                    c.master = JOB_MASTER_DEDICATED;
                return c;
            }
    return c;
}
