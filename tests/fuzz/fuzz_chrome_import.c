/* fuzz_chrome_import — trace/chrome_import.h on any bytes as a profiler trace (PyTorch's
 * legacy or Kineto Chrome JSON, a Horovod timeline; gzip'd or not), read as one run at
 * batch 32: an imported run has every event in order (t0 <= t1, ranks below its
 * workers), writes as the project's trace and reads back with as many events. */
#include "trace/chrome_import.h"
#include "trace/trace.h"
#include "trace/traceinfo.h"
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("chrome.json", data, size);
    const chrome_import_opts opts = { .batch = 32 };
    char err[1024] = "";
    trace *t = chrome_import(&path, 1, &opts, err, sizeof err);
    if (!t) {
        fuzz_check(err[0] != '\0', "a refusal says why");
        return 0;
    }
    for (long i = 0; i < t->n_events; i++)
        fuzz_check(t->events[i].t0_s <= t->events[i].t1_s && t->events[i].rank >= 0, "events in order");
    traceinfo_training_time(t);
    traceinfo_phase_means(t);
    const char *out = fuzz_path("chrome-out.trace.jsonl");
    fuzz_check(trace_write(t, out, err, sizeof err) == 0, "an imported run writes");
    trace *back = trace_read(out, err, sizeof err);
    fuzz_check(back != NULL, "the written run reads back");
    fuzz_check(back->n_events == t->n_events, "with as many events");
    trace_free(back);
    trace_free(t);
    return 0;
}
