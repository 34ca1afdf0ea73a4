/* idx + dataset: reading raw and gzip'd IDX files, and every corruption named by file
 * and byte; shuffling and sharding. */
#include "tests/clirun.h"
#include "train/dataset.h"
#include "train/idx.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Writes an IDX header (magic 00 00 08 nd, big-endian dims) and `len` payload bytes. */
static char *write_idx(const char *dir, const char *name, int nd, const long *dims, long len) {
    char *path = clirun_write_file(dir, name, "");
    FILE *f = fopen(path, "wb");
    unsigned char hdr[4] = { 0, 0, 8, (unsigned char)nd };
    fwrite(hdr, 1, 4, f);
    for (int i = 0; i < nd; i++) {
        unsigned char be[4] = { (unsigned char)(dims[i] >> 24), (unsigned char)(dims[i] >> 16),
                                (unsigned char)(dims[i] >> 8), (unsigned char)dims[i] };
        fwrite(be, 1, 4, f);
    }
    for (long i = 0; i < len; i++)
        fputc((int)(i % 7), f);
    fclose(f);
    return path;
}

Test(idx, raw_file_reads_dims_and_data) {
    char *dir = clirun_tmpdir(), err[512];
    long dims[3] = { 2, 3, 4 };
    char *p = write_idx(dir, "a", 3, dims, 24);
    idx_file f;
    cr_assert_eq(idx_read(p, 3, &f, err, sizeof err), 0, "%s", err);
    cr_expect(f.dims[0] == 2 && f.dims[1] == 3 && f.dims[2] == 4 && f.n_bytes == 24);
    cr_expect(f.data[23] == 23 % 7);
    idx_free(&f);
    free(p), free(dir);
}

Test(idx, gzip_file_reads_like_raw) {
    char *dir = clirun_tmpdir(), err[512], path[512];
    snprintf(path, sizeof path, "%s/l.gz", dir);
    gzFile gz = gzopen(path, "wb");
    unsigned char bytes[] = { 0, 0, 8, 1, 0, 0, 0, 3, 9, 8, 7 };
    gzwrite(gz, bytes, sizeof bytes);
    gzclose(gz);
    idx_file f;
    cr_assert_eq(idx_read(path, 1, &f, err, sizeof err), 0, "%s", err);
    cr_expect(f.dims[0] == 3 && f.data[0] == 9 && f.data[2] == 7);
    idx_free(&f);
    free(dir);
}

static void expect_error(const char *path, int nd, const char *want) {
    char err[512] = "";
    idx_file f;
    cr_expect_eq(idx_read(path, nd, &f, err, sizeof err), -1, "%s was accepted", path);
    cr_expect(strstr(err, want), "error '%s' does not contain '%s'", err, want);
    cr_expect(strstr(err, path), "error '%s' does not name the file", err);
}

Test(idx, truncated_data_names_byte) {
    char *dir = clirun_tmpdir();
    long dims[3] = { 2, 3, 4 };
    char *p = write_idx(dir, "t", 3, dims, 20);
    expect_error(p, 3, "byte 36: file ends, expected 4 more bytes of data");
    free(p), free(dir);
}

Test(idx, truncated_header_names_byte) {
    char *dir = clirun_tmpdir();
    char *p = clirun_write_file(dir, "h", "\0");
    expect_error(p, 1, "byte 0: file ends");
    free(p), free(dir);
}

Test(idx, wrong_magic_is_refused) {
    char *dir = clirun_tmpdir();
    char *p = clirun_write_file(dir, "m", "PK\003\004rest of a zip");
    expect_error(p, 3, "byte 0: expected IDX magic");
    free(p), free(dir);
}

Test(idx, wrong_dimension_count_is_refused) {
    char *dir = clirun_tmpdir();
    long dims[1] = { 5 };
    char *p = write_idx(dir, "d", 1, dims, 5);
    expect_error(p, 3, "byte 3: expected 3 dimensions, got 1");
    free(p), free(dir);
}

Test(idx, absurd_dimension_is_refused_before_allocating) {
    char *dir = clirun_tmpdir();
    long dims[3] = { 60000, 400000000, 28 };
    char *p = write_idx(dir, "x", 3, dims, 0);
    expect_error(p, 3, "byte 8: expected dimension 1 in [1, 100000000]");
    long dims2[3] = { 60000, 60000, 60000 };
    char *q = write_idx(dir, "y", 3, dims2, 0);
    expect_error(q, 3, "more than 1073741824 bytes");
    free(p), free(q), free(dir);
}

Test(idx, trailing_bytes_are_refused) {
    char *dir = clirun_tmpdir();
    long dims[1] = { 3 };
    char *p = write_idx(dir, "e", 1, dims, 4);
    expect_error(p, 1, "byte 11: expected end of file");
    free(p), free(dir);
}

Test(dataset, label_count_mismatch_names_both_files) {
    char *dir = clirun_tmpdir(), err[512] = "";
    long di[3] = { 4, 2, 2 }, dl[1] = { 3 };
    char *im = write_idx(dir, "train-images-idx3-ubyte", 3, di, 16);
    char *lb = write_idx(dir, "train-labels-idx1-ubyte", 1, dl, 3);
    dataset d;
    cr_expect_eq(dataset_load(dir, "train", 0, &d, err, sizeof err), -1);
    cr_expect(strstr(err, "3 labels, but") && strstr(err, "holds 4 images"), "%s", err);
    free(im), free(lb), free(dir);
}

Test(dataset, epoch_order_is_a_permutation_fixed_by_seed_and_epoch) {
    long a[100], b[100], c[100], seen[100] = { 0 };
    dataset_epoch_order(100, 5, 0, a);
    dataset_epoch_order(100, 5, 0, b);
    dataset_epoch_order(100, 5, 1, c);
    cr_expect(memcmp(a, b, sizeof a) == 0, "same seed and epoch, different order");
    cr_expect(memcmp(a, c, sizeof a) != 0, "another epoch, same order");
    for (int i = 0; i < 100; i++)
        seen[a[i]]++;
    for (int i = 0; i < 100; i++)
        cr_expect_eq(seen[i], 1, "example %d appears %ld times", i, seen[i]);
}

Test(dataset, shards_cover_the_order_exactly_once) {
    long prev_end = 0;
    for (int r = 0; r < 3; r++) {
        long b, e;
        dataset_shard(10, r, 3, &b, &e);
        cr_expect_eq(b, prev_end);
        cr_expect(e - b == 3 || e - b == 4);
        prev_end = e;
    }
    cr_expect_eq(prev_end, 10);
}

Test(dataset, batch_normalises_bytes) {
    uint8_t images[8] = { 0, 255, 51, 102, 0, 0, 255, 255 }, labels[2] = { 1, 0 };
    dataset d = { .images = images, .labels = labels, .n = 2, .h = 2, .w = 2, .classes = 2 };
    float mean, sd, x[4];
    dataset_pixel_stats(&d, &mean, &sd);
    cr_expect(fabsf(mean - (0 + 1 + 0.2f + 0.4f + 0 + 0 + 1 + 1) / 8) < 1e-6f, "mean %g", mean);
    long idx[1] = { 0 };
    uint8_t y[1];
    dataset_batch(&d, idx, 1, 0.5f, 0.25f, x, y);
    cr_expect(fabsf(x[0] + 2.0f) < 1e-6f && fabsf(x[1] - 2.0f) < 1e-6f && y[0] == 1, "x %g %g", x[0], x[1]);
}

Test(idx, first_items_reads_only_those_rows_and_keeps_the_files_count) {
    char *dir = clirun_tmpdir(), err[512];
    long dims[3] = { 5, 2, 3 };
    char *p = write_idx(dir, "f", 3, dims, 30);
    idx_file f;
    cr_assert_eq(idx_read_first(p, 3, 2, &f, err, sizeof err), 0, "%s", err);
    cr_expect_eq(f.dims[0], 5, "the file's count");
    cr_expect_eq(f.items, 2);
    cr_expect_eq(f.n_bytes, 12, "2 rows of 2x3 bytes, not the file's 30");
    cr_expect_eq(f.data[11], 11 % 7);
    idx_free(&f);
    // More rows than the file has: all of them, and the file must end there.
    cr_assert_eq(idx_read_first(p, 3, 9, &f, err, sizeof err), 0, "%s", err);
    cr_expect(f.items == 5 && f.n_bytes == 30);
    idx_free(&f);
    free(p), free(dir);
}

Test(dataset, limit_reads_only_the_first_examples) {
    char *dir = clirun_tmpdir(), err[512];
    clirun_write_idx_set(dir, "train", 40, 3);
    dataset d;
    cr_assert_eq(dataset_load(dir, "train", 7, &d, err, sizeof err), 0, "%s", err);
    cr_expect_eq(d.n, 7);
    cr_expect_eq(d.n_in_file, 40);
    dataset all;
    cr_assert_eq(dataset_load(dir, "train", 0, &all, err, sizeof err), 0, "%s", err);
    cr_expect_eq(all.n, 40);
    cr_expect_eq(memcmp(d.images, all.images, 7 * 64), 0, "the same first 7 images");
    cr_expect_eq(memcmp(d.labels, all.labels, 7), 0);
    dataset_free(&d);
    dataset_free(&all);
    free(dir);
}
