/* netspec — the short text that names a network, e.g. the default
 *   conv5x5x32,relu,pool2,conv5x5x64,relu,pool2,fc128,relu,dropout0.5,fc10
 * Tokens, comma-separated: convKxKxO (square kernel K odd in [1, 15], O channels in
 * [1, 4096], stride 1, "same" padding), relu, poolP (max-pool P in [2, 8]), fcN (N units
 * in [1, 65536]), dropoutP (0 ≤ P < 1).
 *
 * netspec_parse checks syntax only; the shapes are checked by net_new. A bad token gives
 * "token N 'TEXT' (character C): expected ..." in err.
 */
#ifndef SPEEDUP_NETSPEC_H
#define SPEEDUP_NETSPEC_H

#define NETSPEC_DEFAULT "conv5x5x32,relu,pool2,conv5x5x64,relu,pool2,fc128,relu,dropout0.5,fc10"
#define NETSPEC_MAX_LAYERS 64

typedef enum { LAYER_CONV, LAYER_RELU, LAYER_POOL, LAYER_FC, LAYER_DROPOUT } layer_kind;

typedef struct {
    layer_kind kind;
    int k;          /* conv: kernel side; pool: pool side */
    int out;        /* conv: output channels; fc: units */
    float p;        /* dropout: probability of dropping */
} netspec_layer;

typedef struct {
    int n;
    netspec_layer layers[NETSPEC_MAX_LAYERS];
} netspec;

int netspec_parse(const char *text, netspec *out, char *err, int errlen);
const char *netspec_kind_name(layer_kind k);
/* 1 when a and b name the same layers ("dropout0.50" and "dropout0.5" do), else 0. */
int netspec_equal(const netspec *a, const netspec *b);

#endif
