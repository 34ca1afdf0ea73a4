/* netcost — a calibration's per-kind rates applied to another network (netcost.h). */
#include "model/netcost.h"

#include <math.h>
#include <stdio.h>

double netcost_example_s(const calibration_network *n, const network_cost *x) {
    double s = 0;
    for (int i = 0; i < x->n; i++) {
        const network_layer *l = &x->layer[i];
        const netcost_rates *r = &n->rate[l->kind];
        s += r->s_per_flop * l->flops + r->s_per_byte * l->bytes;
    }
    return s;
}

double netcost_step_s(const calibration_network *n, const network_cost *x) {
    double s = 0;
    for (int i = 0; i < x->n; i++) {
        const network_layer *l = &x->layer[i];
        const netcost_rates *r = &n->rate[l->kind];
        if (!network_layer_idle(l))
            s += r->s_per_step_byte * l->step_bytes + r->s_per_layer_step;
    }
    return s;
}

int netcost_transfer(const calibration_network *n, const network_cost *target, costmodel_params *p,
                     double *c0_se, double *c1_se, char *err, int errlen) {
    const double measured = n->known ? netcost_example_s(n, &n->cost) : 0.0;
    if (!(measured > 0)) {
        snprintf(err, (size_t)errlen, "the calibration has no per-layer rates of this host (calibrate again: its "
                 "traces time each layer)");
        return -1;
    }
    const double rest = fmax(0.0, p->c1_s - measured);
    const double scale = (netcost_example_s(n, target) + rest) / (measured + rest);
    const double step_m = netcost_step_s(n, &n->cost), step_x = netcost_step_s(n, target);
    /* c1 below the layers' own cost: the whole-step fit moved part of the layers' per-example
     * cost into c0 (its c0–c1 trade-off), so c0's excess over the layers' per-step cost goes
     * with the layers too. */
    const double step_rest = p->c0_s - step_m;
    if (p->c1_s < measured && step_rest > 0) {
        p->c0_s = step_x + step_rest * scale;
        *c0_se *= scale; /* kept whole, c0's uncertainty would outgrow a small network's c0 */
    } else {
        p->c0_s = fmax(0.0, p->c0_s + step_x - step_m);
    }
    p->c1_s *= scale;
    *c1_se *= scale;
    if (n->cost.params > 0)
        p->update_s *= (double)target->params / (double)n->cost.params;
    p->model_bytes = 4.0 * (double)target->params;
    p->model_cv = sqrt(p->model_cv * p->model_cv + n->transfer_cv * n->transfer_cv);
    if (p->model_cv_oversub > 0)
        p->model_cv_oversub = sqrt(p->model_cv_oversub * p->model_cv_oversub + n->transfer_cv * n->transfer_cv);
    return 0;
}
