/* fuzz_netspec — train/netspec.h and train/net.h on any spec text: what parses either
 * builds on 8x8 images or is refused with a reason; a network that builds (up to 2^18
 * parameters, to keep inputs fast) trains one step and evaluates without a sanitizer
 * report, and its loss is finite or NaN, never a crash. */
#include "tests/fuzz/fuzz.h"
#include "train/net.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

static void train_one_step(net *n) {
    float *x = net_input(n);
    for (long i = 0; i < 2L * n->h * n->w * n->c; i++)
        x[i] = (float)((i * 37) % 17) / 8.0f - 1.0f;
    uint8_t labels[2] = { 0, (uint8_t)((n->classes - 1) % 256) };
    net_init(n, 1);
    net_seed_dropout(n, 2);
    net_forward(n, 2, labels, 1, 0.0f);
    net_backward(n, 2, labels, 0.0f);
    net_update(n, 0.01f, 0.9f, 5e-4f);
    net_forward(n, 2, labels, 0, 0.0f);
    fuzz_check(net_count_correct(n, 2, labels) <= 2, "at most every prediction correct");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int once;
    if (!once++)
        omp_set_num_threads(1);
    char *text = fuzz_string(data, size), err[512] = "";
    netspec spec;
    if (netspec_parse(text, &spec, err, sizeof err) == 0) {
        fuzz_check(spec.n >= 1 && spec.n <= NETSPEC_MAX_LAYERS, "1..NETSPEC_MAX_LAYERS layers");
        const netspec_layer *last = &spec.layers[spec.n - 1];
        const int classes = last->kind == LAYER_FC && last->out <= 256 ? last->out : 4;
        net *n = net_new(text, 8, 8, 1, classes, 2, err, sizeof err);
        fuzz_check(n != NULL || err[0] != '\0', "a refusal says why");
        if (n && n->n_params <= (1L << 18))
            train_one_step(n);
        net_free(n);
    } else {
        fuzz_check(err[0] != '\0', "a refusal says why");
    }
    free(text);
    return 0;
}
