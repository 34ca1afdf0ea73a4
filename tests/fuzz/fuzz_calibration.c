/* fuzz_calibration — model/calibration.h on any bytes: an accepted calibration passes
 * costmodel_check's parameter ranges, writes, and reads back. */
#include "model/calibration.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("calibration", data, size);
    calibration cal;
    char err[1024] = "";
    if (calibration_read(path, &cal, err, sizeof err) != 0) {
        fuzz_check(err[0] != '\0', "a refusal says why");
        return 0;
    }
    const job_config any = { .workers = 1, .cores = 1, .sync = JOB_SYNC_BATCH, .every_n = 1,
                                   .topology = JOB_TOPO_PS, .examples = 1, .batch = 1, .epochs = 1 };
    fuzz_check(costmodel_check(&cal.params, &any, err, sizeof err) == 0, "accepted parameters are in range");
    const char *out = fuzz_path("calibration-out");
    fuzz_check(calibration_write(out, &cal, NULL, err, sizeof err) == 0, "an accepted calibration writes");
    calibration back;
    fuzz_check(calibration_read(out, &back, err, sizeof err) == 0, "a written calibration reads back");
    return 0;
}
