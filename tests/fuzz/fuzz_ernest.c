/* fuzz_ernest — fit/ernest.h on any bytes: accepted points are in Ernest's ranges, and
 * the NNLS fit on them gives non-negative θ or a refusal, never a crash. */
#include "fit/ernest.h"
#include "tests/fuzz/fuzz.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("ernest", data, size);
    char err[1024] = "";
    ernest_data *d = ernest_read_csv(path, err, sizeof err);
    if (!d) {
        fuzz_check(err[0] != '\0', "a refusal says why");
        return 0;
    }
    for (long i = 0; i < d->n; i++) {
        const ernest_point *p = &d->points[i];
        fuzz_check(p->machines >= 1 && p->fraction > 0 && isfinite(p->fraction) && p->time_s >= 0 &&
                       isfinite(p->time_s),
                   "points in Ernest's ranges");
    }
    ernest_model m;
    if (ernest_fit(d->points, d->n, &m, err, sizeof err) == 0) {
        for (int k = 0; k < ERNEST_N_THETA; k++)
            fuzz_check(!(m.theta[k] < 0), "NNLS gives theta >= 0");
        ernest_predict(&m, 4, 1.0);
    }
    ernest_data_free(d);
    return 0;
}
