/* fuzz_phasemap — trace/phasemap.h's --phase-map FILE reader on any bytes: a map that
 * reads matches names (its own patterns included) without a report, and prints. */
#include "trace/phasemap.h"
#include "tests/fuzz/fuzz.h"

#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("phasemap", data, size);
    phasemap *m = phasemap_default();
    fuzz_check(m != NULL, "the built-in map");
    char err[1024] = "";
    if (phasemap_read_file(m, path, err, sizeof err) == 0) {
        static const char *const names[] = { "aten::conv2d", "ProfilerStep#3", "", "nccl:all_reduce",
                                             "Optimizer.step#SGD.step", "[memory]" };
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            phasemap_match(m, names[i]);
        for (int i = 0; i < m->n; i++)
            phasemap_match(m, m->rules[i].pattern);
        FILE *devnull = fopen("/dev/null", "w");
        if (devnull) {
            phasemap_write(m, devnull);
            fclose(devnull);
        }
    } else {
        fuzz_check(err[0] != '\0', "a refusal says why");
    }
    phasemap_free(m);
    return 0;
}
