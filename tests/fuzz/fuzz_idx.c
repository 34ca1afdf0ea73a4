/* fuzz_idx — train/idx.h on any bytes, raw or gzip'd: an accepted file's payload is the
 * product of its dimensions, each within IDX_MAX_DIM, the whole within IDX_MAX_BYTES. */
#include "tests/fuzz/fuzz.h"
#include "train/idx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("idx", data, size);
    char err[512];
    for (int want = 1; want <= 3; want += 2) { // labels, images
        idx_file f;
        if (idx_read(path, want, &f, err, sizeof err) != 0)
            continue;
        size_t product = 1;
        for (int d = 0; d < f.ndims; d++) {
            fuzz_check(f.dims[d] >= 0 && f.dims[d] <= IDX_MAX_DIM, "a dimension within IDX_MAX_DIM");
            product *= (size_t)f.dims[d];
        }
        fuzz_check(f.ndims == want, "the dimensions asked for");
        fuzz_check(product == f.n_bytes && f.n_bytes <= (size_t)IDX_MAX_BYTES, "payload = product of dimensions");
        unsigned sum = 0; // every payload byte readable (ASan checks the reads)
        for (size_t i = 0; i < f.n_bytes; i++)
            sum += f.data[i];
        fuzz_check(sum <= 255u * f.n_bytes, "payload bytes");
        idx_free(&f);
    }
    return 0;
}
