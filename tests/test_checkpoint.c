/* checkpoint: a save/load round trip is exact; a flipped byte, a truncation and a wrong
 * magic are each refused with the file and byte. */
#include "tests/clirun.h"
#include "train/checkpoint.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static net *small_net(void) {
    char err[256];
    net *n = net_new("conv3x3x2,relu,pool2,fc4", 4, 4, 1, 4, 3, err, sizeof err);
    cr_assert(n, "%s", err);
    net_init(n, 3);
    for (long i = 0; i < n->n_params; i++)
        n->momentum[i] = 0.01f * (float)i;
    n->in_mean = 0.25f, n->in_std = 0.5f;
    return n;
}

static char *saved(net *n, char **dir) {
    *dir = clirun_tmpdir();
    char *path = clirun_write_file(*dir, "c.ckpt", "");
    char err[256];
    checkpoint_state st = { 2, 40, 9 };
    cr_assert_eq(checkpoint_save(path, n, &st, err, sizeof err), 0, "%s", err);
    return path;
}

Test(checkpoint, round_trip_is_exact) {
    net *n = small_net();
    char *dir, *path = saved(n, &dir), err[256];
    checkpoint_state st;
    net *m = checkpoint_load(path, 5, &st, err, sizeof err);
    cr_assert(m, "%s", err);
    cr_expect(st.epochs_done == 2 && st.steps_done == 40 && st.seed == 9);
    cr_expect_str_eq(m->spec_text, n->spec_text);
    cr_expect(m->in_mean == 0.25f && m->in_std == 0.5f);
    cr_expect(memcmp(m->params, n->params, sizeof(float) * (size_t)n->n_params) == 0);
    cr_expect(memcmp(m->momentum, n->momentum, sizeof(float) * (size_t)n->n_params) == 0);
    net_free(n), net_free(m), free(path), free(dir);
}

static void corrupt_and_expect(void (*damage)(const char *path), const char *want) {
    net *n = small_net();
    char *dir, *path = saved(n, &dir), err[512] = "";
    damage(path);
    checkpoint_state st;
    cr_expect_null(checkpoint_load(path, 5, &st, err, sizeof err));
    cr_expect(strstr(err, path) && strstr(err, want), "error '%s' lacks '%s'", err, want);
    net_free(n), free(path), free(dir);
}

static void flip_byte(const char *path) {
    FILE *f = fopen(path, "r+b");
    fseek(f, 100, SEEK_SET);
    int c = fgetc(f);
    fseek(f, 100, SEEK_SET);
    fputc(c ^ 0x40, f);
    fclose(f);
}
static void truncate_half(const char *path) {
    FILE *f = fopen(path, "rb");
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    f = fopen(path, "wb");
    fwrite(buf, 1, n / 2, f);
    fclose(f);
}
static void wrong_magic(const char *path) {
    FILE *f = fopen(path, "r+b");
    fputs("XX", f);
    fclose(f);
}

Test(checkpoint, flipped_byte_fails_checksum) { corrupt_and_expect(flip_byte, "checksum mismatch"); }
Test(checkpoint, truncated_file_fails_checksum) { corrupt_and_expect(truncate_half, "checksum mismatch"); }
Test(checkpoint, wrong_magic_is_refused) { corrupt_and_expect(wrong_magic, "byte 0: expected the checkpoint magic"); }
