/* fuzz_trace — trace/trace.h and trace/traceinfo.h on any bytes: an accepted trace's
 * meaning is computed without a report, it writes, reads back with the same events and
 * names, and its Chrome JSON is valid JSON. */
#include "trace/chrome.h"
#include "model/predictions.h"
#include "trace/measurements.h"
#include "trace/trace.h"
#include "trace/traceinfo.h"
#include "tests/fuzz/fuzz.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static void meaning(const trace *t) {
    fuzz_check(traceinfo_ranks(t) >= 1, "a trace has a rank");
    traceinfo_training_time(t);
    traceinfo_phase_means(t);
    traceinfo_shares_cores(&t->run);
    traceinfo_sync *syncs = NULL;
    long n = traceinfo_syncs(t, &syncs);
    fuzz_check(n >= 0, "syncs computed");
    free(syncs);
    traceinfo_accuracy_point *curve = NULL;
    long n_points = 0;
    char err[256];
    fuzz_check(traceinfo_accuracy_curve(t, &curve, &n_points, err, sizeof err) == 0, "the accuracy curve computed");
    for (long i = 0; i < n_points; i++)
        fuzz_check(curve[i].accuracy >= 0 && curve[i].accuracy <= 1 && curve[i].examples_seen >= 0,
                   "an accuracy point in range");
    free(curve);
    measurements_from_trace(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *path = fuzz_file("trace", data, size);
    char err[1024] = "";
    trace *t = trace_read(path, err, sizeof err);
    if (!t) {
        fuzz_check(err[0] != '\0', "a refusal says why");
        return 0;
    }
    meaning(t);
    const char *out = fuzz_path("trace-out.jsonl");
    fuzz_check(trace_write(t, out, err, sizeof err) == 0, "an accepted trace writes");
    trace *back = trace_read(out, err, sizeof err);
    fuzz_check(back != NULL, "a written trace reads back");
    fuzz_check(back->n_events == t->n_events, "the same events");
    fuzz_check(strcmp(back->run.host, t->run.host) == 0 && strcmp(back->run.net, t->run.net) == 0, "the same run");
    for (long i = 0; i < t->n_events; i++)
        fuzz_check(strcmp(back->events[i].name, t->events[i].name) == 0 && back->events[i].ph == t->events[i].ph &&
                       back->events[i].rank == t->events[i].rank &&
                       back->events[i].has_accuracy == t->events[i].has_accuracy &&
                       back->events[i].accuracy == t->events[i].accuracy && back->events[i].loss == t->events[i].loss,
                   "the same event names, phases, ranks and accuracies");
    trace_free(back);
    const char *chrome = fuzz_path("trace-chrome.json");
    fuzz_check(chrome_write(t, 0, "fuzz", chrome, err, sizeof err) == 0, "an accepted trace writes Chrome JSON");
    json_error_t jerr;
    json_t *root = json_load_file(chrome, 0, &jerr);
    fuzz_check(root != NULL, "Chrome JSON parses");
    json_decref(root);
    trace_free(t);
    return 0;
}
