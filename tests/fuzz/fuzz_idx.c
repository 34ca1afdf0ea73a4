/* fuzz_idx — train/idx.h on any bytes, raw or gzip'd, as labels and as images, whole and
 * its first 3 items (--limit): an accepted file's payload is the items read times the
 * size of one item, each dimension within IDX_MAX_DIM, the whole within IDX_MAX_BYTES, and
 * every byte of it readable. */
#include "tests/fuzz/fuzz.h"
#include "train/idx.h"

static void check(const idx_file *f, int want, long most) {
    size_t item = 1;
    for (int d = 0; d < f->ndims; d++) {
        fuzz_check(f->dims[d] >= 0 && f->dims[d] <= IDX_MAX_DIM, "a dimension within IDX_MAX_DIM");
        if (d > 0)
            item *= (size_t)f->dims[d];
    }
    fuzz_check(f->ndims == want, "the dimensions asked for");
    fuzz_check(f->items >= 0 && f->items <= f->dims[0] && f->items <= most, "the items asked for");
    fuzz_check((size_t)f->items * item == f->n_bytes && f->n_bytes <= (size_t)IDX_MAX_BYTES,
               "payload = items x item size");
    unsigned sum = 0; // every payload byte readable (ASan checks the reads)
    for (size_t i = 0; i < f->n_bytes; i++)
        sum += f->data[i];
    fuzz_check(sum <= 255u * f->n_bytes, "payload bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("idx", data, size);
    char err[512];
    for (int want = 1; want <= 3; want += 2) { // labels, images
        idx_file f;
        if (idx_read(path, want, &f, err, sizeof err) == 0) {
            check(&f, want, IDX_MAX_DIM);
            idx_free(&f);
        }
        if (idx_read_first(path, want, 3, &f, err, sizeof err) == 0) {
            check(&f, want, 3);
            idx_free(&f);
        }
    }
    return 0;
}
