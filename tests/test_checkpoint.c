/* checkpoint: a save/load round trip is exact, the run's settings and every rank's
 * momentum block included; a version-1 file (written here byte by byte, as the old code
 * did) still loads; a flipped byte, a truncation, a wrong magic and sizes that do not
 * match the spec are each refused with the file and byte. */
#include "tests/clirun.h"
#include "train/checkpoint.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static checkpoint_state sample_state(void) {
    return (checkpoint_state){ .version = CHECKPOINT_VERSION, .epochs_done = 2, .steps_done = 40,
                               .run = { .seed = 9, .examples = 320, .epochs = 3, .batch = 16, .workers = 2,
                                        .ranks = 3, .sync = JOB_SYNC_EVERY, .every_n = 4,
                                        .topology = JOB_TOPO_PS, .master = JOB_MASTER_DEDICATED,
                                        .schedule = 1, .lr = 0.05, .momentum = 0.9, .weight_decay = 5e-4,
                                        .warmup_epochs = 0.5 },
                               .momentum_blocks = 1 };
}

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
    checkpoint_state st = sample_state();
    cr_assert_eq(checkpoint_save(path, n, &st, err, sizeof err), 0, "%s", err);
    return path;
}

Test(checkpoint, round_trip_is_exact) {
    net *n = small_net();
    char *dir, *path = saved(n, &dir), err[256];
    checkpoint_state st;
    net *m = checkpoint_load(path, 5, &st, err, sizeof err);
    cr_assert(m, "%s", err);
    const checkpoint_state want = sample_state();
    cr_expect(st.version == 2 && st.epochs_done == 2 && st.steps_done == 40 && st.momentum_blocks == 1);
    cr_expect(memcmp(&st.run, &want.run, sizeof want.run) == 0, "the run's settings differ after the round trip");
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

Test(checkpoint, one_momentum_block_per_rank_round_trips) {
    net *n = small_net();
    char *dir = clirun_tmpdir(), path[512], err[256];
    snprintf(path, sizeof path, "%s/k3.ckpt", dir);
    checkpoint_state st = sample_state();
    st.momentum_blocks = 3;
    float *b1 = malloc(sizeof(float) * (size_t)n->n_params), *b2 = malloc(sizeof(float) * (size_t)n->n_params);
    for (long i = 0; i < n->n_params; i++)
        b1[i] = 1.0f + (float)i, b2[i] = -2.0f * (float)i;
    checkpoint_writer *w = checkpoint_begin(path, n, &st, err, sizeof err);
    cr_assert(w, "%s", err);
    checkpoint_put_momentum(w, b1);
    checkpoint_put_momentum(w, b2);
    cr_assert_eq(checkpoint_commit(w, err, sizeof err), 0, "%s", err);
    checkpoint_file *f = checkpoint_open(path, err, sizeof err);
    cr_assert(f, "%s", err);
    cr_expect_eq(checkpoint_state_of(f)->momentum_blocks, 3);
    net *m = checkpoint_net(f, 2, err, sizeof err);
    cr_assert(m, "%s", err);
    float *got = malloc(sizeof(float) * (size_t)n->n_params);
    cr_expect(memcmp(m->momentum, n->momentum, sizeof(float) * (size_t)n->n_params) == 0, "block 0 is rank 0's");
    checkpoint_momentum(f, 1, got);
    cr_expect(memcmp(got, b1, sizeof(float) * (size_t)n->n_params) == 0, "block 1");
    checkpoint_momentum(f, 2, got);
    cr_expect(memcmp(got, b2, sizeof(float) * (size_t)n->n_params) == 0, "block 2");
    checkpoint_close(f);
    net_free(m), net_free(n), free(b1), free(b2), free(got), free(dir);
}

Test(checkpoint, a_missing_momentum_block_leaves_no_file) {
    net *n = small_net();
    char *dir = clirun_tmpdir(), path[512], err[256];
    snprintf(path, sizeof path, "%s/k2.ckpt", dir);
    checkpoint_state st = sample_state();
    st.momentum_blocks = 3;
    checkpoint_writer *w = checkpoint_begin(path, n, &st, err, sizeof err);
    cr_assert(w, "%s", err);
    checkpoint_put_momentum(w, n->momentum);
    cr_expect_eq(checkpoint_commit(w, err, sizeof err), -1);
    cr_expect(strstr(err, "1 momentum blocks missing"), "%s", err);
    cr_expect_null(fopen(path, "rb"), "a refused checkpoint was left at %s", path);
    net_free(n), free(dir);
}

/* A version-1 file as the code before version 2 wrote it: magic, version, spec, shape,
 * normalisation, epochs, steps, seed, n_params, params, momentum, crc. */
static void write_v1(const char *path, const net *n) {
    uint8_t *buf = malloc(4096 + 8 * (size_t)n->n_params), *p = buf;
#define PUT(v) (memcpy(p, &(v), sizeof(v)), p += sizeof(v))
    memcpy(p, "SPDCKPT", 8), p += 8;
    uint32_t version = 1, sl = (uint32_t)strlen(n->spec_text);
    PUT(version);
    PUT(sl);
    memcpy(p, n->spec_text, sl), p += sl;
    int32_t shape[4] = { n->h, n->w, n->c, n->classes }, epochs = 4;
    PUT(shape);
    PUT(n->in_mean);
    PUT(n->in_std);
    PUT(epochs);
    int64_t steps = 80, seed = 7, count = n->n_params;
    PUT(steps);
    PUT(seed);
    PUT(count);
#undef PUT
    memcpy(p, n->params, 4 * (size_t)n->n_params), p += 4 * n->n_params;
    memcpy(p, n->momentum, 4 * (size_t)n->n_params), p += 4 * n->n_params;
    uint32_t crc = (uint32_t)crc32(0L, buf, (uInt)(p - buf));
    memcpy(p, &crc, 4), p += 4;
    FILE *f = fopen(path, "wb");
    fwrite(buf, 1, (size_t)(p - buf), f);
    fclose(f);
    free(buf);
}

Test(checkpoint, version_1_files_still_load_and_say_so) {
    net *n = small_net();
    char *dir = clirun_tmpdir(), path[512], err[256];
    snprintf(path, sizeof path, "%s/v1.ckpt", dir);
    write_v1(path, n);
    checkpoint_state st;
    net *m = checkpoint_load(path, 2, &st, err, sizeof err);
    cr_assert(m, "%s", err);
    cr_expect(st.version == 1 && st.epochs_done == 4 && st.steps_done == 80 && st.momentum_blocks == 1);
    cr_expect(memcmp(m->params, n->params, sizeof(float) * (size_t)n->n_params) == 0);
    cr_expect(memcmp(m->momentum, n->momentum, sizeof(float) * (size_t)n->n_params) == 0);
    net_free(m), net_free(n), free(dir);
}

/* The checksum is made right again after the damage, so the parser itself must refuse. */
static void expect_refused_with_good_crc(size_t at, const void *bytes, size_t len, const char *want) {
    net *n = small_net();
    char *dir, *path = saved(n, &dir), err[512] = "";
    FILE *f = fopen(path, "rb");
    uint8_t buf[8192];
    size_t size = fread(buf, 1, sizeof buf, f);
    fclose(f);
    memcpy(buf + at, bytes, len);
    uint32_t crc = (uint32_t)crc32(0L, buf, (uInt)(size - 4));
    memcpy(buf + size - 4, &crc, 4);
    checkpoint_file *c = checkpoint_parse(buf, size, "damaged", err, sizeof err);
    cr_expect_null(c, "accepted a checkpoint damaged at byte %zu", at);
    cr_expect(strstr(err, want), "error '%s' lacks '%s'", err, want);
    checkpoint_close(c);
    net_free(n), free(path), free(dir);
}

/* Offsets for the spec "conv3x3x2,relu,pool2,fc4" (24 bytes): header 16 + 24, shape at 40,
 * normalisation 56, epochs 64, steps 68, run 76..164 (sync at 112), n_params 164, blocks
 * 172. */
Test(checkpoint, a_parameter_count_the_spec_does_not_have_is_refused) {
    int64_t lie = 1L << 40;
    expect_refused_with_good_crc(164, &lie, 8, "byte 164: expected 56 parameters for 'conv3x3x2,relu,pool2,fc4'");
}
Test(checkpoint, more_momentum_blocks_than_ranks_are_refused) {
    int32_t blocks = 7;
    expect_refused_with_good_crc(172, &blocks, 4, "one per rank (3), got 7");
}
Test(checkpoint, a_huge_shape_is_refused_by_its_parameter_count_before_anything_is_allocated) {
    // 4096 x 4096 x 4096 inputs: conv 2·9·4096 + 2 = 73730, fc on 2048·2048·2 to 4 units
    // 33554436: 33628166 parameters, of which the file holds 56.
    int32_t huge[3] = { 4096, 4096, 4096 };
    expect_refused_with_good_crc(40, huge, sizeof huge, "expected 33628166 parameters for");
}
Test(checkpoint, a_shape_beyond_the_limits_is_refused) {
    int32_t h = 5000;
    expect_refused_with_good_crc(40, &h, 4, "byte 40: expected input height, width, channels and classes");
}
Test(checkpoint, an_unknown_sync_mode_is_refused) {
    int32_t sync = 9;
    expect_refused_with_good_crc(76 + 16 + 5 * 4, &sync, 4, "run's settings are out of range");
}

#include "train/trainer.h"

Test(checkpoint, resume_from_a_version_1_file_is_refused_with_what_it_lacks) {
    char *dir = clirun_tmpdir(), path[512], err[1024] = "";
    clirun_write_idx_set(dir, "train", 32, 1);
    clirun_write_idx_set(dir, "t10k", 8, 2);
    net *n = net_new("conv3x3x2,relu,pool2,fc4", 8, 8, 1, 4, 4, err, sizeof err);
    cr_assert(n, "%s", err);
    net_init(n, 1);
    snprintf(path, sizeof path, "%s/v1.ckpt", dir);
    write_v1(path, n);
    trainer_config c;
    trainer_config_default(&c);
    c.data_dir = dir;
    c.net_spec = "conv3x3x2,relu,pool2,fc4";
    c.epochs = 6;
    c.resume_path = path;
    trainer_result *r = malloc(sizeof *r);
    cr_assert_eq(trainer_run(&c, r, err, sizeof err), -1);
    cr_expect(strstr(err, "v1.ckpt: a version-1 checkpoint does not record its run's settings"), "%s", err);
    free(r), net_free(n), free(dir);
}
