/* Another network than the one measured: a network's work counted layer by layer (worked
 * by hand), the per-kind rates recovered from layer times, and a prediction for another
 * network priced with them — in the library and through `speedup model --net`. */
#include "fit/netfit.h"
#include "model/calibration.h"
#include "model/netcost.h"
#include "tests/clirun.h"
#include "trace/trace.h"
#include "train/net.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A spec's layer-by-layer cost from its plan (nothing allocated): 0, or -1 with err. */
static int planned_cost(const char *spec, int h, int w, int c, int classes, network_cost *out, char *err, int errlen) {
    net *planned = net_plan(spec, h, w, c, classes, err, errlen);
    if (!planned)
        return -1;
    *out = net_cost_of(planned);
    net_free(planned);
    return 0;
}

static void assert_rel(double got, double want, double tol, const char *what) {
    cr_assert(fabs(got - want) <= tol * fabs(want), "%s: got %.12g, want %.12g", what, got, want);
}

/* conv3x3x2 on 4x4x1 (same padding): along a side of 4, the 3 taps of the 4 positions
 * reach inside the image 2 + 3 + 3 + 2 = 10 times, so 10 x 10 = 100 (position, tap) pairs
 * of the 16 x 9 = 144 (the rest read the zero padding, which a direct convolution skips):
 * 100 x 2 channels = 200 multiply-adds forward, 400 FLOPs, and as many for the weights'
 * gradient; no input gradient (no layer before it has parameters): 800. Its 18 weights
 * (read by the forward and the weights' gradient: twice) and 2 biases; after pool2, 2x2x2
 * = 8 inputs to fc4: 32 multiply-adds, 192 FLOPs with its input's gradient (the conv
 * needs it); 32 weights, 4 biases. 56 parameters. The relu is fused into the conv: no
 * work of its own. */
Test(network, a_small_networks_work_is_counted_layer_by_layer) {
    network_cost c;
    char err[256];
    cr_assert_eq(planned_cost("conv3x3x2,relu,pool2,fc4", 4, 4, 1, 4, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n, 4);
    cr_assert_eq(c.params, 56);
    cr_assert_eq(c.layer[0].kind, NETWORK_CONV);
    assert_rel(c.layer[0].flops, 800, 1e-12, "conv FLOPs");
    assert_rel(c.layer[0].bytes, 4.0 * 3 * (16 + 32), 1e-12, "conv: its 16 inputs and 32 outputs, three passes");
    assert_rel(c.layer[0].step_bytes, 4.0 * 2 * 18, 1e-12, "conv weights read twice");
    cr_assert(network_layer_idle(&c.layer[1]), "the fused relu does no work");
    cr_assert_eq(c.layer[2].kind, NETWORK_POOL);
    cr_assert_eq(c.layer[2].flops, 0);
    assert_rel(c.layer[2].bytes, 4.0 * 3 * (32 + 8), 1e-12, "pool reads 32 and writes 8 floats, three passes");
    cr_assert_eq(c.layer[3].kind, NETWORK_FC);
    assert_rel(c.layer[3].flops, 192, 1e-12, "fc FLOPs");
    assert_rel(c.layer[3].step_bytes, 4.0 * 3 * 32, 1e-12, "fc weights read three times");
    /* A relu that follows no conv is elementwise work of its own. */
    cr_assert_eq(planned_cost("fc8,relu,fc4", 4, 4, 1, 4, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.layer[1].kind, NETWORK_ELEMENTWISE);
    cr_assert(c.layer[1].bytes > 0);
}

/* The plan gives each layer its shape: conv5x5x6 on 28x28x1 keeps 28x28 (same padding):
 * 1 channel in, 6 out, 784 positions, kernel 5; pool2 halves them to 196 positions of 6
 * channels, kernel 2; fc10 takes 14·14·6 = 1176 inputs at 1 position, kernel 1. Alike is
 * the same kind with every dimension within 2x: 6 against 12 channels is (and 1176 inputs
 * against 14·14·12 = 2352), against 13 not (2548 inputs);
 * a 5x5 kernel against a 3x3 or a 7x7 is, against an 11x11 not; another kind never is, nor a
 * layer whose shape is not known (a trace's). */
Test(network, layers_are_alike_within_twice_each_dimension_of_the_same_kind) {
    network_cost a, b;
    char err[256];
    cr_assert_eq(planned_cost("conv5x5x6,relu,pool2,fc10", 28, 28, 1, 10, &a, err, sizeof err), 0, "%s", err);
    const network_shape *conv = &a.layer[0].shape, *pool = &a.layer[2].shape, *fc = &a.layer[3].shape;
    cr_assert(conv->channels_in == 1 && conv->channels_out == 6 && conv->positions == 784 && conv->kernel == 5);
    cr_assert(pool->channels_in == 6 && pool->channels_out == 6 && pool->positions == 196 && pool->kernel == 2);
    cr_assert(fc->channels_in == 1176 && fc->channels_out == 10 && fc->positions == 1 && fc->kernel == 1);
    cr_assert_eq(planned_cost("conv3x3x12,relu,pool2,fc10", 28, 28, 1, 10, &b, err, sizeof err), 0, "%s", err);
    cr_assert(network_layers_alike(&a.layer[0], &b.layer[0]), "6 and 12 channels, 5x5 and 3x3");
    cr_assert(network_layers_alike(&a.layer[2], &b.layer[2]));
    cr_assert(!network_layers_alike(&a.layer[0], &b.layer[2]), "a conv is no pool");
    cr_assert(network_layers_alike(&a.layer[3], &b.layer[3]), "1176 against 2352 inputs: twice, alike");
    cr_assert_eq(planned_cost("conv7x7x13,relu,pool2,fc10", 28, 28, 1, 10, &b, err, sizeof err), 0, "%s", err);
    cr_assert(!network_layers_alike(&a.layer[0], &b.layer[0]), "13 channels against 6, 7x7 against 5x5");
    cr_assert(!network_layers_alike(&a.layer[3], &b.layer[3]), "2548 inputs against 1176");
    b.layer[0].shape.channels_out = 12;
    cr_assert(network_layers_alike(&a.layer[0], &b.layer[0]), "7x7 against 5x5");
    b.layer[0].shape.kernel = 11;
    cr_assert(!network_layers_alike(&a.layer[0], &b.layer[0]), "11x11 against 5x5");
    network_layer unknown = a.layer[0];
    unknown.shape = (network_shape){ 0 };
    cr_assert(!network_layers_alike(&a.layer[0], &unknown), "a shape not known is alike nothing");
}

/* Known rates, three runs at batches 16, 32 and 64 over 960 examples: the layer times the
 * rates make, exactly, each run's times multiplied by its host's phase (1 where none is
 * given). conv and fc cost FLOPs only, as oneDNN's and OpenBLAS's products nearly do:
 * every layer of the kind runs at the kind's one speed, and the fit must give every rate
 * back. */
static const netcost_rates truth[NETWORK_KINDS] = {
    [NETWORK_CONV] = { 1.0 / 60e9, 0, 0, 0 },
    [NETWORK_FC] = { 1.0 / 40e9, 0, 0, 0 },
    [NETWORK_ELEMENTWISE] = { 0, 1.0 / 5e9, 0, 2e-6 },
    [NETWORK_POOL] = { 0, 1.0 / 3e9, 0, 3e-6 },
};

static trace *synthetic_run(const network_cost *c, int batch, const netcost_rates *truth, double phase) {
    trace *t = calloc(1, sizeof *t);
    t->run.config.workers = 1, t->run.config.cores = 1, t->run.host_cores = 2;
    snprintf(t->run.net, sizeof t->run.net, "synthetic");
    trace_layers *l = &t->run.layers;
    *l = (trace_layers){ .has = true, .cost = *c, .examples = 960, .steps = 960 / batch, .input = { 8, 8, 1, 4 } };
    for (int i = 0; i < c->n; i++) {
        const network_layer *y = &c->layer[i];
        const netcost_rates *r = &truth[y->kind];
        l->time_s[i] = network_layer_idle(y) ? 1e-6
                       : phase * ((r->s_per_flop * y->flops + r->s_per_byte * y->bytes) * l->examples +
                                  (r->s_per_step_byte * y->step_bytes + r->s_per_layer_step) * (double)l->steps);
    }
    return t;
}

static const char *const synthetic_spec =
    "conv3x3x4,relu,conv5x5x8,relu,pool2,conv3x3x8,relu,pool2,fc16,relu,dropout0.5,fc12,relu,fc4";

Test(network, the_fit_gives_back_each_kinds_rates_from_layer_times) {
    network_cost c;
    char err[256], note[512];
    cr_assert_eq(planned_cost("conv3x3x4,relu,conv5x5x8,relu,pool2,conv3x3x8,relu,fc16,relu,dropout0.5,fc12,"
                                  "relu,fc8,pool1,fc4", 8, 8, 1, 4, &c, err, sizeof err), -1,
                 "a pool after an fc is not a network (it checks the spec)");
    cr_assert_eq(planned_cost(synthetic_spec, 8, 8, 1, 4, &c, err, sizeof err), 0, "%s", err);
    trace *tr[3] = { synthetic_run(&c, 16, truth, 1), synthetic_run(&c, 32, truth, 1),
                     synthetic_run(&c, 64, truth, 1) };
    calibration_network got;
    cr_assert_eq(netfit_traces(tr, 3, &got, note, sizeof note), 0, "%s", note);
    cr_assert(got.known);
    cr_assert_str_eq(got.spec, "synthetic");
    cr_assert_eq(got.cost.params, c.params);
    for (int k = 0; k < NETWORK_KINDS; k++) {
        const char *name = network_kind_name((network_kind)k);
        const netcost_rates *w = &truth[k], *g = &got.rate[k];
        cr_assert(fabs(g->s_per_flop - w->s_per_flop) <= 1e-6 * w->s_per_flop, "%s per FLOP: %g", name, g->s_per_flop);
        cr_assert(fabs(g->s_per_byte - w->s_per_byte) <= 1e-6 * w->s_per_byte + 1e-18, "%s per byte: %g", name,
                  g->s_per_byte);
        cr_assert(fabs(g->s_per_step_byte - w->s_per_step_byte) <= 1e-18, "%s per step byte: %g", name,
                  g->s_per_step_byte);
        cr_assert(fabs(g->s_per_layer_step - w->s_per_layer_step) <= 1e-6 * w->s_per_layer_step + 1e-15,
                  "%s per layer-step: %g", name, g->s_per_layer_step);
    }
    /* A run at two cores a worker, or one whose ranks share a core, is not an idle core's. */
    tr[0]->run.config.cores = 2, tr[1]->run.config.cores = 2, tr[2]->run.config.cores = 2;
    cr_assert_eq(netfit_traces(tr, 3, &got, note, sizeof note), 1);
    cr_assert(!got.known);
    for (int i = 0; i < 3; i++)
        free(tr[i]);
}

/* The host's phase moves every layer together: runs at 1.0, 1.3 and 1.1 times the rates
 * above, their probes 1.2, 1.1 and 1.3 ms (the faster of each run's two). A FLOP of conv
 * costs what it cost in each run's fastest conv layer, the median over the runs: 1.1/60
 * ns, whatever the probe says; one of fc costs the probe's, 1.2 ms for its 2·384³ FLOPs
 * (fc runs on the probe's kernel). Anchored at the probe, conv's slow phase would be
 * charged to its bytes, and a network with more bytes per FLOP priced higher for it. */
Test(network, a_flop_costs_its_engines_speed_conv_its_fastest_layer_fc_the_probe) {
    network_cost c;
    char err[256], note[512];
    cr_assert_eq(planned_cost(synthetic_spec, 8, 8, 1, 4, &c, err, sizeof err), 0, "%s", err);
    trace *tr[3] = { synthetic_run(&c, 16, truth, 1.0), synthetic_run(&c, 32, truth, 1.3),
                     synthetic_run(&c, 64, truth, 1.1) };
    const double before[3] = { 1.2e-3, 1.4e-3, 1.3e-3 }, after[3] = { 1.3e-3, 1.1e-3, 1.9e-3 };
    for (int i = 0; i < 3; i++)
        tr[i]->run.speed = (trace_host_speed){ .has = true, .probe_before_s = before[i], .probe_after_s = after[i] };
    calibration_network got;
    cr_assert_eq(netfit_traces(tr, 3, &got, note, sizeof note), 0, "%s", note);
    assert_rel(got.rate[NETWORK_CONV].s_per_flop, 1.1 / 60e9, 1e-9, "conv per FLOP");
    assert_rel(got.rate[NETWORK_FC].s_per_flop, 1.2e-3 / (2.0 * 384 * 384 * 384), 1e-9, "fc per FLOP");
    /* The runs off the median leave conv residues of −10% and +18%, none of them the bytes'. */
    const netcost_rates *conv = &got.rate[NETWORK_CONV];
    const double flops_s = 1.1 / 60e9 * c.layer[2].flops;
    cr_assert(conv->s_per_byte * c.layer[2].bytes < 0.02 * flops_s, "conv's bytes cost %g s an example against "
              "its FLOPs' %g", conv->s_per_byte * c.layer[2].bytes, flops_s);
    for (int i = 0; i < 3; i++)
        free(tr[i]);
}

/* Measured: fc4 on 2x2x1 (16 weights; the first layer: no input gradient, 2·2·16 = 64
 * FLOPs; 20 parameters); the target fc8,relu,fc4 (fc8: 32 weights, first, 2·2·32 = 128
 * FLOPs; fc4 on 8 inputs: 32 weights with its input's gradient, 2·3·32 = 192; 40 + 36 =
 * 76 parameters). Only FLOPs cost, 1 µs each, and 10 µs a layer-step: E(m) = 64 µs,
 * E(x) = 320 µs; S(m) = 10 µs, S(x) = 20 µs (the relu is elementwise, at 0 here). Every
 * transfer below is read at B = 32. */
static calibration_network fc_network(void) {
    calibration_network n = { .known = true, .spec = "fc4", .input = { 2, 2, 1, 4 }, .transfer_cv = 0.1 };
    n.rate[NETWORK_FC] = (netcost_rates){ .s_per_flop = 1e-6, .s_per_layer_step = 10e-6 };
    n.cost = (network_cost){ .n = 1, .params = 20 };
    n.cost.layer[0] = (network_layer){ .kind = NETWORK_FC, .flops = 64, .bytes = 96, .step_bytes = 128 };
    return n;
}

/* What the two transfers below share: fc8,relu,fc4's layers (S(x) = 20 µs, E(x) = 320 µs)
 * at the measured step's level k, and both standard errors scaled as the step at B = 32,
 * (20 + 32·320)·k = 10 260·k µs against the measured step's 2058·k. */
static void assert_layers_at_level(const costmodel_params *p, double k, double se, double se_was, double se0,
                                   double se0_was) {
    assert_rel(p->c1_s, 320e-6 * k, 1e-12, "c1");
    assert_rel(p->c0_s, 20e-6 * k, 1e-12, "c0");
    assert_rel(se, se_was * 10260.0 / 2058.0, 1e-12, "c1's standard error");
    assert_rel(se0, se0_was * 10260.0 / 2058.0, 1e-12, "c0's standard error");
}

/* c0 = 20 µs, c1 = 70 µs: at B = 32 the step costs 20 + 32·70 = 2260 µs, its layers 10 +
 * 32·64 = 2058 µs. The layers are priced at the step's level, k = 2260/2058, and keep their
 * own split: c0' = 20·k = 21.96 µs, c1' = 320·k = 351.4 µs (until 2026-12-07 the 202 µs
 * over the layers were kept whole, 10 a step and 6 an example: c0' = 30 µs, c1' = 326
 * µs). The step at B becomes (20 + 32·320)·k = 10 260·k µs, 10 260/2058 times the measured
 * one, and so both standard errors. */
Test(network, another_network_is_priced_by_its_layers_at_the_measured_steps_level) {
    calibration_network n = fc_network();
    network_cost x;
    char err[256];
    cr_assert_eq(planned_cost("fc8,relu,fc4", 2, 2, 1, 4, &x, err, sizeof err), 0, "%s", err);
    cr_assert_eq(x.params, 76);
    costmodel_params p = { .c0_s = 20e-6, .c1_s = 70e-6, .update_s = 1e-4, .model_bytes = 80, .model_cv = 0.05 };
    double se = 2e-6, se0 = 1e-5;
    cr_assert_eq(netcost_transfer(&n, &x, 32, 0, &p, &se0, &se, err, sizeof err), 0, "%s", err);
    assert_layers_at_level(&p, 2260.0 / 2058.0, se, 2e-6, se0, 1e-5);
    assert_rel(p.update_s, 1e-4 * 76 / 20, 1e-12, "update");
    assert_rel(p.model_bytes, 304, 1e-12, "model bytes");
    assert_rel(p.model_cv, sqrt(0.05 * 0.05 + 0.1 * 0.1), 1e-12, "model_cv");
    /* With no rates there is nothing to price it with, and no step below one example. */
    cr_assert_eq(netcost_transfer(&n, &x, 0.5, 0, &p, &se0, &se, err, sizeof err), -1);
    cr_assert(strstr(err, "at least 1 example"), "%s", err);
    n.known = false;
    cr_assert_eq(netcost_transfer(&n, &x, 32, 0, &p, &se0, &se, err, sizeof err), -1);
    cr_assert(strstr(err, "calibrate again"), "%s", err);
}

/* A noisy plan's whole-step fit can trade c1 against c0: here c1 = 32 µs an example, half
 * what fc4's layers cost (E(m) = 64 µs), and c0 = 1 ms a step against the layers' S(m) =
 * 10 µs. At B = 32 the step costs 1000 + 1024 = 2024 µs, its layers 2058: the layers are
 * scaled down to the step, k = 2024/2058, and keep their own split: c0' = 20·k = 19.67 µs,
 * c1' = 320·k = 314.7 µs (the step at B: 10 260·k, 10 260/2058 times the measured one,
 * and so both standard errors). */
Test(network, layers_that_cost_more_than_the_measured_step_are_scaled_down_to_it_and_keep_their_split) {
    calibration_network n = fc_network();
    network_cost x;
    char err[256];
    cr_assert_eq(planned_cost("fc8,relu,fc4", 2, 2, 1, 4, &x, err, sizeof err), 0, "%s", err);
    costmodel_params p = { .c0_s = 1e-3, .c1_s = 32e-6, .model_bytes = 80 };
    double se = 3.2e-6, se0 = 0.5e-3;
    cr_assert_eq(netcost_transfer(&n, &x, 32, 0, &p, &se0, &se, err, sizeof err), 0, "%s", err);
    assert_layers_at_level(&p, 2024.0 / 2058.0, se, 3.2e-6, se0, 0.5e-3);
}

/* The fit of the whole step put c0 at its bound, 0, and c1 = 60 µs, while fc4's layers
 * move their weights every step (S(m) = 10 µs): at B = 32 the step is 1920 µs, the layers
 * 2058, k = 1920/2058. Another network keeps the layers' fixed cost a step, c0' = 20·k =
 * 18.66 µs, where subtracting S(m) from the fit's c0 would leave it max(0, 0 + 20 − 10) =
 * 10 µs and hand the rest to every example; c1' = 320·k = 298.5 µs. The measured network
 * itself comes back as measured at B: 10·k + 32·64·k = 1920 µs. */
Test(network, a_fit_with_c0_at_zero_leaves_another_network_its_layers_cost_a_step) {
    calibration_network n = fc_network();
    network_cost x;
    char err[256];
    cr_assert_eq(planned_cost("fc8,relu,fc4", 2, 2, 1, 4, &x, err, sizeof err), 0, "%s", err);
    costmodel_params p = { .c0_s = 0, .c1_s = 60e-6, .model_bytes = 80 }, same = p;
    double se = 1e-6, se0 = 1e-5;
    cr_assert_eq(netcost_transfer(&n, &x, 32, 0, &p, &se0, &se, err, sizeof err), 0, "%s", err);
    const double k = 1920.0 / 2058.0;
    assert_rel(p.c0_s, 20e-6 * k, 1e-12, "c0");
    assert_rel(p.c1_s, 320e-6 * k, 1e-12, "c1");
    cr_assert_eq(netcost_transfer(&n, &n.cost, 32, 0, &same, &se0, &se, err, sizeof err), 0, "%s", err);
    assert_rel(same.c0_s + 32 * same.c1_s, 1920e-6, 1e-12, "the measured network at B");
}

/* fc_network's fc4 planned on 2x2x1 has its shape (4 in, 4 out); the target fc8,relu,fc4:
 * fc8 (4 in, 8 out) and fc4 (8 in, 4 out) are alike it, the relu is of a kind it has
 * not. With an elementwise rate of 1 µs a byte, at B = 1: fc8 128 + 10 = 138 µs, the relu
 * 5 passes of 8 floats, 160 µs, fc4 192 + 10 = 202 µs: the relu is 160/500 = 0.32 of the
 * layer time, and the transfer error √(τ² + (0.32·U)²) joins model_cv. A target whose
 * shapes are not known is all unlike. */
Test(network, layers_unlike_the_measured_ones_widen_the_transfers_error_by_their_share) {
    calibration_network n = fc_network();
    n.rate[NETWORK_ELEMENTWISE] = (netcost_rates){ .s_per_byte = 1e-6 };
    network_cost measured, x;
    char err[256];
    cr_assert_eq(planned_cost("fc4", 2, 2, 1, 4, &measured, err, sizeof err), 0, "%s", err);
    cr_assert_eq(planned_cost("fc8,relu,fc4", 2, 2, 1, 4, &x, err, sizeof err), 0, "%s", err);
    netcost_unlike v = netcost_unlike_of(&n, &measured, &x, 1);
    const double u = v.share;
    assert_rel(u, 160.0 / 500.0, 1e-12, "the relu's share");
    cr_assert_eq(v.unlike, 1);
    cr_assert_eq(v.layers, 3);
    costmodel_params p = { .c0_s = 20e-6, .c1_s = 70e-6, .model_bytes = 80, .model_cv = 0.05 };
    double se = 2e-6, se0 = 1e-5;
    cr_assert_eq(netcost_transfer(&n, &x, 1, u, &p, &se0, &se, err, sizeof err), 0, "%s", err);
    const double apart = 0.32 * NETCOST_UNLIKE_CV;
    assert_rel(p.model_cv, sqrt(0.05 * 0.05 + 0.1 * 0.1 + apart * apart), 1e-12, "model_cv");
    /* the measured network against itself: nothing unlike */
    v = netcost_unlike_of(&n, &measured, &measured, 32);
    cr_assert(v.share == 0.0 && v.unlike == 0 && v.layers == 1);
    /* work without shapes (a trace's layers, calibration.json's): nothing known alike */
    cr_assert_eq(netcost_unlike_of(&n, &measured, &n.cost, 32).share, 1.0);
}

Test(network, the_network_survives_a_calibration_files_round_trip_and_a_bad_one_is_named) {
    char *dir = clirun_tmpdir(), path[512], err[512];
    snprintf(path, sizeof path, "%s/cal.json", dir);
    calibration cal = { 0 };
    cal.network = fc_network();
    snprintf(cal.host, sizeof cal.host, "t");
    cal.params.c1_s = 0.002, cal.params.model_bytes = 80, cal.params.host_cores = 2;
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    calibration back;
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), 0, "%s", err);
    cr_assert(back.network.known);
    cr_assert_str_eq(back.network.spec, "fc4");
    cr_assert_eq(back.network.cost.n, 1);
    cr_assert_eq(back.network.cost.layer[0].kind, NETWORK_FC);
    cr_assert_eq(back.network.cost.layer[0].flops, 64);
    cr_assert_eq(back.network.rate[NETWORK_FC].s_per_layer_step, 10e-6);
    cr_assert_eq(back.network.input[3], 4);
    /* A layer of a kind nobody knows is refused by its place. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sed -i 's/\"kind\": *\"fc\"/\"kind\": \"lstm\"/' %s", path);
    cr_assert_eq(system(cmd), 0);
    cr_assert_eq(calibration_read(path, &back, err, sizeof err), -1);
    cr_assert(strstr(err, "network.layers[0].kind"), "%s", err);
    free(dir);
}

/* Through the binary: one worker, only compute costs, so the time is c1's; the
 * calibration of fc4 with the rates above, no layer-step cost. --net fc8,relu,fc4 prices
 * its layers at the measured step's level: c1 by E(x)/E(m) = 320/64, the time by 5. */
/* clirun's calibration where only c1 costs (2 ms ± 0.2 ms), with fc_network's per-FLOP
 * rate (no layer-step cost: c0 stays 0) and model bytes, written back through the
 * calibration file's own writer. */
static char *write_fc_calibration(const char *dir) {
    char *path = clirun_write_c1_calibration(dir), err[512];
    calibration cal;
    cr_assert_eq(calibration_read(path, &cal, err, sizeof err), 0, "%s", err);
    cal.network = fc_network();
    cal.network.rate[NETWORK_FC].s_per_layer_step = 0;
    cal.params.model_bytes = 80;
    cr_assert_eq(calibration_write(path, &cal, NULL, err, sizeof err), 0, "%s", err);
    return path;
}

Test(network, model_net_prices_another_network_through_the_binary) {
    char *dir = clirun_tmpdir(), *cal = write_fc_calibration(dir);
    char args[1024];
    int n1 = 0, n2 = 0;
    snprintf(args, sizeof args, "model --calib %s --workers 1 --cores 1 --topology ps --sync batch", cal);
    prediction_row *own = clirun_predictions(args, &n1);
    snprintf(args, sizeof args, "model --calib %s --workers 1 --cores 1 --topology ps --sync batch --net fc8,relu,fc4", cal);
    prediction_row *other = clirun_predictions(args, &n2);
    cr_assert_eq(n1, 1);
    cr_assert_eq(n2, 1);
    assert_rel(other[0].time_s / own[0].time_s, 320.0 / 64.0, 1e-6, "the time moves with c1");
    cr_assert(other[0].time_hi / other[0].time_s > own[0].time_hi / own[0].time_s, "the transfer widens the interval");
    free(own), free(other);
    clirun_result r = clirun(args);
    cr_assert(strstr(r.out, "network: fc8,relu,fc4"), "the setting names the network: %s", r.out);
    cr_assert(strstr(r.out, "1 of its 3 layers"), "and the layer unlike the measured ones (the relu): %s", r.out);
    clirun_free(&r);
    snprintf(args, sizeof args, "model --calib %s --net fc8,relu,fc5", cal);
    clirun_assert_refused(args, 2, "fc4");
    free(cal), free(dir);
}

/* `trace --summary --calib`: rank 0's layers priced by a calibration's rates. One fc4 layer
 * on 2x2x1 (64 FLOPs an example), 320 examples in 10 steps, timed at 20 ms; the fc
 * calibration's rate, 1 µs a FLOP and nothing a step: 64 · 320 µs = 20.48 ms, +2%. */
Test(network, trace_summary_prices_each_layer_by_a_calibrations_rates) {
    char *dir = clirun_tmpdir(), *cal = write_fc_calibration(dir), path[512], err[512], args[1024];
    trace_run run = { .host_cores = 2 };
    snprintf(run.host, sizeof run.host, "t");
    snprintf(run.net, sizeof run.net, "fc4");
    run.config = (job_config){ .workers = 1, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                               .topology = JOB_TOPO_ALLREDUCE, .examples = 320, .batch = 32, .epochs = 1 };
    run.layers = (trace_layers){ .has = true, .cost = fc_network().cost, .input = { 2, 2, 1, 4 }, .steps = 10,
                                 .examples = 320 };
    run.layers.time_s[0] = 0.02;
    trace *t = trace_new(&run);
    trace_event c = { .rank = 0, .ph = TRACE_COMPUTE, .t0_s = 0, .t1_s = 0.03, .step = 0, .examples = 320 };
    trace_add(t, &c);
    snprintf(path, sizeof path, "%s/run.trace.jsonl", dir);
    cr_assert_eq(trace_write(t, path, err, sizeof err), 0, "%s", err);
    trace_free(t);
    snprintf(args, sizeof args, "trace --summary --calib %s %s", cal, path);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(strstr(r.out, "(measured on fc4): 0 fc 0.02048 s (+2%); all 0.02048 s (+2%)"), "%s", r.out);
    clirun_free(&r);
    snprintf(args, sizeof args, "trace --chrome --calib %s %s %s/x.json", cal, path, dir);
    clirun_assert_refused(args, 2, "--calib goes with --summary");
    char *plain = clirun_write_c1_calibration(dir); /* no "network": no layer rates */
    snprintf(args, sizeof args, "trace --summary --calib %s %s", plain, path);
    clirun_assert_refused(args, 2, "no per-layer rates");
    free(plain), free(cal), free(dir);
}

/* --net prices the other network's buffers too (model/memory.h's known terms). fc4 on 2x2x1
 * inputs (4 classes), as calibrated: its forward writes the input, fc4's output and the
 * probabilities, 4 + 4 + 4 floats = 48 bytes an example; backward only softmax's gradient
 * (fc4 needs no input gradient), 4 floats = 16 bytes; 20 parameters, 80 model bytes.
 * fc1024,relu,fc4: forward 4 + 1024 + 4 + 4 = 1036 floats = 4144 bytes; backward the
 * softmax's 4 and fc4's input gradient of 1024 (fc1024 before it has parameters) = 4112
 * bytes; 4·1024 + 1024 + 1024·4 + 4 = 9220 parameters, 36880 bytes. One worker at batch 32
 * holds three model copies: it grows by 3·(36880 − 80) + 32·(4144 + 4112 − 48 − 16) =
 * 110400 + 262144 = 372544 bytes (the model bytes alone would say 110400). */
Test(network, model_net_prices_another_networks_buffers_in_memory) {
    char *dir = clirun_tmpdir(), *cal = write_fc_calibration(dir), err[512], args[1024];
    calibration c;
    cr_assert_eq(calibration_read(cal, &c, err, sizeof err), 0, "%s", err);
    c.memory = (memory_params){ .known = true, .base_bytes = 1 << 20, .fwd_bytes_per_example = 48,
                                .train_bytes_per_example = 16, .example_bytes = 5, .test_examples = 100,
                                .points = 10, .master_example_bytes = 5 };
    cr_assert_eq(calibration_write(cal, &c, NULL, err, sizeof err), 0, "%s", err);
    int n1 = 0, n2 = 0;
    snprintf(args, sizeof args, "model --calib %s --workers 1 --cores 1 --topology allreduce --sync batch --batch 32", cal);
    prediction_row *own = clirun_predictions(args, &n1);
    snprintf(args, sizeof args, "model --calib %s --workers 1 --cores 1 --topology allreduce --sync batch --batch 32 "
             "--net fc1024,relu,fc4", cal);
    prediction_row *other = clirun_predictions(args, &n2);
    cr_assert_eq(n1, 1);
    cr_assert_eq(n2, 1);
    cr_assert(own[0].has_memory && other[0].has_memory);
    const double grown = (other[0].rss_worker_mib - own[0].rss_worker_mib) * 1048576.0;
    cr_assert(fabs(grown - 372544) < 8, "the worker grows by %.1f bytes, want 372544", grown);
    free(own), free(other);
    clirun_result r = clirun(args);
    cr_assert(strstr(r.out, "--net's buffers counted from its layers"), "the note says so: %s", r.out);
    clirun_free(&r);
    free(cal), free(dir);
}

/* The report of a calibration made elsewhere prices the network asked for and names both;
 * without --calib there is nothing to price it from. */
Test(network, report_calib_net_names_both_networks_and_needs_a_calibration) {
    char *dir = clirun_tmpdir(), *cal = write_fc_calibration(dir), args[1024], page[600];
    snprintf(args, sizeof args, "report --calib %s --cluster 2x2@10gbit --net fc8,relu,fc4 --sync batch --out %s/r "
             "--what-if 2000,1", cal, dir);
    clirun_result r = clirun(args);
    cr_assert_eq(r.status, 0, "%s", r.err);
    clirun_free(&r);
    snprintf(page, sizeof page, "%s/r/index.html", dir);
    FILE *f = fopen(page, "r");
    cr_assert(f, "%s", page);
    char html[1 << 16];
    const size_t got = fread(html, 1, sizeof html - 1, f);
    html[got] = '\0';
    fclose(f);
    cr_assert(strstr(html, "<b>Neural network:</b> <code>fc8,relu,fc4</code>") && strstr(html, "<code>fc4</code>"),
              "the page names both networks");
    cr_assert(strstr(html, "1 of its 3 layers"), "and the layer unlike the measured ones (the relu)");
    clirun_assert_refused("report --net fc8,relu,fc10", 2, "--calib");
    free(cal), free(dir);
}
