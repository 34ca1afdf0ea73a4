#include "model/predictions.h"

prediction_row predictions_from_model(const costmodel_params *p, const costmodel_config *c) {
    costmodel_breakdown b = costmodel_breakdown_of(p, c);
    prediction_row r = {
        .workers = c->workers, .cores = c->cores, .topology = c->topology,
        .time_s = b.total_s, .speedup = costmodel_speedup(p, c),
        .compute_s = b.compute_s, .comm_s = b.comm_s, .wait_s = b.wait_s, .startup_s = b.startup_s,
    };
    r.ci_lo = r.ci_hi = r.speedup;
    costmodel_sync_format(c->sync, c->every_n, r.sync, sizeof r.sync);
    return r;
}

void predictions_write_csv(FILE *out, const prediction_row *rows, int n) {
    fprintf(out, "%s\n", PREDICTIONS_CSV_HEADER);
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        /* %.9g keeps every digit a double carries that a reader will care about. */
        fprintf(out, "%d,%d,%s,%s,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", r->workers, r->cores,
                r->sync, costmodel_topology_name(r->topology), r->time_s, r->speedup, r->ci_lo,
                r->ci_hi, r->compute_s, r->comm_s, r->wait_s, r->startup_s);
    }
}

void predictions_write_table(FILE *out, const prediction_row *rows, int n) {
    fprintf(out, "%7s %5s %-10s %-9s %12s %8s %17s %12s %12s %12s %12s\n", "workers", "cores",
            "sync", "topology", "time_s", "speedup", "95% interval", "compute_s", "comm_s",
            "wait_s", "startup_s");
    for (int i = 0; i < n; i++) {
        const prediction_row *r = &rows[i];
        char ci[40];
        snprintf(ci, sizeof ci, "[%.2f, %.2f]", r->ci_lo, r->ci_hi);
        fprintf(out, "%7d %5d %-10s %-9s %12.1f %8.2f %17s %12.1f %12.1f %12.1f %12.1f\n",
                r->workers, r->cores, r->sync, costmodel_topology_name(r->topology), r->time_s,
                r->speedup, ci, r->compute_s, r->comm_s, r->wait_s, r->startup_s);
    }
}
