/* fuzz_predictions — model/predictions.h's CSV reader on any bytes: accepted rows write
 * and read back as many rows; the table prints. */
#include "model/predictions.h"
#include "tests/fuzz/fuzz.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("predictions", data, size);
    prediction_row *rows = NULL;
    int n = 0;
    char err[1024] = "";
    if (predictions_read_csv(path, &rows, &n, err, sizeof err) != 0) {
        fuzz_check(err[0] != '\0', "a refusal says why");
        return 0;
    }
    fuzz_check(n >= 0, "a row count");
    const char *out = fuzz_path("predictions-out.csv");
    fuzz_check(predictions_save_csv(out, rows, n, err, sizeof err) == 0, "accepted rows write");
    prediction_row *back = NULL;
    int m = -1;
    fuzz_check(predictions_read_csv(out, &back, &m, err, sizeof err) == 0, "written rows read back");
    fuzz_check(m == n, "as many rows");
    FILE *devnull = fopen("/dev/null", "w");
    if (devnull) {
        predictions_write_table(devnull, rows, n, false);
        predictions_write_table(devnull, rows, n, true);
        fclose(devnull);
    }
    free(back);
    free(rows);
    return 0;
}
