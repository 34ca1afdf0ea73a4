/* netcost — a calibration's per-kind rates applied to another network (netcost.h). */
#include "model/netcost.h"

#include <math.h>
#include <stdio.h>

/* A layer's price by n's rates: per example, and once a step (a layer of no work: none). */
static double layer_example_s(const calibration_network *n, const network_layer *l) {
    const netcost_rates *r = &n->rate[l->kind];
    return r->s_per_flop * l->flops + r->s_per_byte * l->bytes;
}

static double layer_step_s(const calibration_network *n, const network_layer *l) {
    const netcost_rates *r = &n->rate[l->kind];
    return network_layer_idle(l) ? 0.0 : r->s_per_step_byte * l->step_bytes + r->s_per_layer_step;
}

double netcost_layer_s(const calibration_network *n, const network_layer *l, double examples, double steps) {
    return layer_example_s(n, l) * examples + layer_step_s(n, l) * steps;
}

double netcost_example_s(const calibration_network *n, const network_cost *x) {
    double s = 0;
    for (int i = 0; i < x->n; i++)
        s += layer_example_s(n, &x->layer[i]);
    return s;
}

double netcost_step_s(const calibration_network *n, const network_cost *x) {
    double s = 0;
    for (int i = 0; i < x->n; i++)
        s += layer_step_s(n, &x->layer[i]);
    return s;
}

netcost_unlike netcost_unlike_of(const calibration_network *n, const network_cost *measured,
                                 const network_cost *target, double batch) {
    netcost_unlike u = { 0 };
    double all = 0, apart = 0;
    bool shaped = false;
    for (int i = 0; i < target->n; i++) {
        const network_layer *x = &target->layer[i];
        if (network_layer_idle(x))
            continue;
        shaped |= x->shape.channels_out > 0;
        bool alike = false;
        for (int j = 0; j < measured->n && !alike; j++)
            alike = network_layers_alike(x, &measured->layer[j]);
        const double s = netcost_layer_s(n, x, batch, 1);
        all += s;
        u.layers++;
        if (!alike) {
            apart += s;
            u.unlike++;
        }
    }
    u.share = !shaped ? 1.0 : all > 0 ? apart / all : 0.0;
    return u;
}

void netcost_unlike_describe(const netcost_unlike *u, const char *spec, char *out, int outlen) {
    out[0] = '\0';
    if (u->unlike > 0)
        snprintf(out, (size_t)outlen, "%d of its %d layers (%.0f%% of its layer time) are unlike any the "
                 "calibration timed (channels, positions or kernel more than 2x apart): their rates are "
                 "extrapolated (%.3g of the transfer error is theirs); `speedup calibrate --net %s` measures them",
                 u->unlike, u->layers, 100 * u->share, u->share * NETCOST_UNLIKE_CV, spec);
}

double netcost_split(const calibration_network *n, const network_cost *target, double batch, double *c0_s,
                     double *c1_s) {
    const double e_m = netcost_example_s(n, &n->cost), s_m = netcost_step_s(n, &n->cost);
    const double e_x = netcost_example_s(n, target), s_x = netcost_step_s(n, target);
    /* The two fits of the measured step at the batch asked: the whole step's (c0 + c1·B)
     * and its layers' (S + E·B). The layers set the split between a step's fixed and
     * per-example cost (their features say which bytes move once a step), the whole step
     * the level, by one factor k either way: what a step spends outside its layers is
     * 0.1–0.6% of a CNN's step (the traces' compute spans against their layers' times), and
     * what else tells the two fits apart (the whole step's level is its mean, slow steps
     * included) grows with the step, not with its examples. */
    const double fit = *c0_s + *c1_s * batch, k = fit / (s_m + e_m * batch); /* E(m) > 0, batch ≥ 1 */
    *c0_s = k * s_x;
    *c1_s = k * e_x;
    return fit > 0 ? (*c0_s + *c1_s * batch) / fit : 1.0;
}

/* τ² + (u·U)² (netcost.h). */
static double transfer_variance(const calibration_network *n, double unlike_share) {
    const double apart = unlike_share * NETCOST_UNLIKE_CV;
    return n->transfer_cv * n->transfer_cv + apart * apart;
}

double netcost_transfer_cv(const calibration_network *n, double unlike_share) {
    return sqrt(transfer_variance(n, unlike_share));
}

int netcost_transfer(const calibration_network *n, const network_cost *target, double batch, double unlike_share,
                     costmodel_params *p, double *c0_se, double *c1_se, char *err, int errlen) {
    const double e_m = n->known ? netcost_example_s(n, &n->cost) : 0.0;
    if (!(e_m > 0)) {
        snprintf(err, (size_t)errlen, "the calibration has no per-layer rates of this host (calibrate again: its "
                 "traces time each layer)");
        return -1;
    }
    if (!(batch >= 1)) {
        snprintf(err, (size_t)errlen, "a network's step is priced at a batch of at least 1 example (got %g)", batch);
        return -1;
    }
    /* The step's relative uncertainty at B carries over. */
    const double scale = netcost_split(n, target, batch, &p->c0_s, &p->c1_s);
    *c0_se *= scale;
    *c1_se *= scale;
    if (n->cost.params > 0)
        p->update_s *= (double)target->params / (double)n->cost.params;
    p->model_bytes = 4.0 * (double)target->params;
    if (p->traffic_bytes_per_example + p->traffic_bytes_per_step > 0) { /* its exchange's price by its steps */
        p->traffic_bytes_per_example = p->traffic_bytes_per_step = 0;
        for (int i = 0; i < target->n; i++) {
            p->traffic_bytes_per_example += target->layer[i].bytes;
            p->traffic_bytes_per_step += target->layer[i].step_bytes;
        }
    }
    const double transfer2 = transfer_variance(n, unlike_share);
    p->model_cv = sqrt(p->model_cv * p->model_cv + transfer2);
    if (p->model_cv_oversub > 0)
        p->model_cv_oversub = sqrt(p->model_cv_oversub * p->model_cv_oversub + transfer2);
    return 0;
}
