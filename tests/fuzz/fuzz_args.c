/* fuzz_args — the CLI's value parsers (cli/args.h) and the grid's flags (cli/grid.h:
 * worker and core lists, sync and topology lists, start-up pairs, rates, durations) on any
 * text: the first byte picks the parser, the rest is the value. What is accepted is in the
 * range asked for; a refusal prints one line (stderr is closed by the runner). */
#include "cli/args.h"
#include "cli/grid.h"
#include "model/predictions.h"
#include "tests/fuzz/fuzz.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

static void values(int which, const char *s) {
    double d = NAN;
    long l = 0;
    int i = 0, list[8], n = -1;
    switch (which) {
    case 0:
        if (args_double("--x", s, -1e6, 1e6, &d) == 0)
            fuzz_check(d >= -1e6 && d <= 1e6, "a double in range");
        break;
    case 1:
        if (args_long("--x", s, -5, LONG_MAX, &l) == 0)
            fuzz_check(l >= -5, "a long in range");
        break;
    case 2:
        if (args_int("--x", s, 1, 4096, &i) == 0)
            fuzz_check(i >= 1 && i <= 4096, "an int in range");
        break;
    case 3:
        if (args_seconds("--x", s, &d) == 0)
            fuzz_check(d >= 0 && isfinite(d), "a duration >= 0");
        break;
    case 4:
        if (args_bandwidth("--x", s, &d) == 0)
            fuzz_check(d > 0 && isfinite(d), "a rate > 0");
        break;
    default:
        if (args_int_list("--x", s, 1, 64, list, 8, &n) == 0) {
            fuzz_check(n >= 1 && n <= 8, "1..8 values");
            for (int k = 0; k < n; k++)
                fuzz_check(list[k] >= 1 && list[k] <= 64, "list values in range");
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1)
        return 0;
    char *s = fuzz_string(data + 1, size - 1);
    const int pick = data[0] % 32;
    if (pick < 6) {
        values(pick, s);
    } else {
        // Any grid flag but --calib (a file: fuzz_calibration's), then the grid's checks.
        grid g;
        grid_init(&g);
        const int code = GRID_OPT_CALIB + 1 + (pick - 6) % (GRID_OPT_LAST - GRID_OPT_CALIB - 1);
        if (grid_handle_option(&g, code, s) == 0 && grid_finish(&g) == 0) {
            fuzz_check(grid_size(&g) >= 1, "a grid has a configuration");
            for (int k = 0; k < grid_size(&g) && k < 8; k++) { // what the flag does to a prediction
                const job_config c = grid_config(&g, k);
                predictions_from_model(&g.params, &c);
            }
        }
    }
    free(s);
    return 0;
}
