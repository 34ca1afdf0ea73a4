#include "model/chrome.h"

#include "util/atomicfile.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

/* Host, network and process names come from users: let jansson quote them. */
static void put_string(FILE *out, const char *s) {
    json_t *j = json_string(s);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(text ? text : "\"\"", out);
    free(text);
    json_decref(j);
}

int chrome_write(const trace *t, int pid, const char *process_name, const char *path, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    FILE *out = atomicfile_stream(f);
    const costmodel_config *c = &t->run.config;
    char sync[24];
    costmodel_sync_format(c->sync, c->every_n, sync, sizeof sync);
    fputs("{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"host\":", out);
    put_string(out, t->run.host);
    fputs(",\"net\":", out);
    put_string(out, t->run.net);
    fprintf(out, ",\"workers\":%d,\"cores\":%d,\"sync\":\"%s\",\"topology\":\"%s\"},\n\"traceEvents\":[\n",
            c->workers, c->cores, sync, costmodel_topology_name(c->topology));
    fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pid);
    put_string(out, process_name);
    fputs("}}", out);
    int max_rank = -1;
    bool background = false;
    for (long i = 0; i < t->n_events; i++) {
        if (t->events[i].rank > max_rank)
            max_rank = t->events[i].rank;
        background |= t->events[i].background;
    }
    for (int r = 0; r <= max_rank; r++) {
        fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"rank %d\"}}",
                pid, r, r);
        if (background)
            fprintf(out, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":"
                         "\"rank %d, beside\"}}", pid, CHROME_BACKGROUND_TID + r, r);
    }
    for (long i = 0; i < t->n_events; i++) {
        const trace_event *e = &t->events[i];
        const char *ph = trace_phase_name(e->ph);
        /* Microseconds with three decimals keep the trace's nanoseconds. */
        fprintf(out, ",\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,"
                     "\"args\":{\"epoch\":%d,\"step\":%ld",
                e->name[0] ? e->name : ph, ph, e->t0_s * 1e6, (e->t1_s - e->t0_s) * 1e6, pid,
                e->background ? CHROME_BACKGROUND_TID + e->rank : e->rank, e->epoch, e->step);
        if (e->bytes)
            fprintf(out, ",\"bytes\":%ld", e->bytes);
        if (e->examples)
            fprintf(out, ",\"examples\":%ld", e->examples);
        fputs("}}", out);
    }
    fputs("\n]}\n", out);
    return atomicfile_commit(f, err, errlen);
}
