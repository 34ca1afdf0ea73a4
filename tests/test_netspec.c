/* netspec: the default parses to the layers it names; each kind of bad token is refused
 * with its position. */
#include "train/netspec.h"

#include <criterion/criterion.h>
#include <string.h>

Test(netspec, default_parses_to_its_layers) {
    netspec s;
    char err[256];
    cr_assert_eq(netspec_parse(NETSPEC_DEFAULT, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n, 10);
    cr_expect(s.layers[0].kind == LAYER_CONV && s.layers[0].k == 5 && s.layers[0].out == 32);
    cr_expect(s.layers[2].kind == LAYER_POOL && s.layers[2].k == 2);
    cr_expect(s.layers[6].kind == LAYER_FC && s.layers[6].out == 128);
    cr_expect(s.layers[8].kind == LAYER_DROPOUT && s.layers[8].p == 0.5f);
}

static void expect_bad(const char *text, const char *where) {
    netspec s;
    char err[256] = "";
    cr_expect_eq(netspec_parse(text, &s, err, sizeof err), -1, "'%s' was accepted", text);
    cr_expect(strstr(err, where), "'%s': error '%s' does not contain '%s'", text, err, where);
}

Test(netspec, unknown_token_is_named_with_position) { expect_bad("conv5x5x32,relu,banana,fc10", "token 3 'banana' (character 17)"); }
Test(netspec, even_kernel_is_refused) { expect_bad("conv4x4x8,fc10", "token 1 'conv4x4x8'"); }
Test(netspec, non_square_kernel_is_refused) { expect_bad("conv3x5x8,fc10", "'conv3x5x8'"); }
Test(netspec, trailing_garbage_is_refused) { expect_bad("fc10x", "'fc10x'"); }
Test(netspec, dropout_one_is_refused) { expect_bad("fc10,dropout1.0", "token 2 'dropout1.0'"); }
Test(netspec, empty_token_is_refused) { expect_bad("fc10,,fc10", "token 2 ''"); }
Test(netspec, zero_units_are_refused) { expect_bad("fc0", "token 1 'fc0'"); }
