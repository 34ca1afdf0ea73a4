#include "trace/chrome.h"

#include "util/jsonout.h"
#include "util/atomicfile.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* The header and the per-rank thread names; 0, or -1 on a string that is not UTF-8. */
static int write_header(FILE *out, const trace *t, int pid, const char *process_name) {
    const job_config *c = &t->run.config;
    char sync[24];
    job_sync_format(c->sync, c->every_n, sync, sizeof sync);
    fputs("{\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"host\":", out);
    if (jsonout_string(out, t->run.host))
        return -1;
    fputs(",\"net\":", out);
    if (jsonout_string(out, t->run.net))
        return -1;
    fprintf(out, ",\"workers\":%d,\"cores\":%d,\"sync\":\"%s\",\"topology\":\"%s\"},\n\"traceEvents\":[\n",
            c->workers, c->cores, sync, job_topology_name(c->topology));
    fprintf(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":0,\"args\":{\"name\":", pid);
    if (jsonout_string(out, process_name))
        return -1;
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
    return 0;
}

/* One complete ("X") event; 0, or -1 on a name that is not UTF-8. */
static int write_event(FILE *out, const trace_event *e, int pid) {
    const char *ph = trace_phase_name(e->ph);
    fputs(",\n{\"name\":", out);
    if (jsonout_string(out, e->name[0] ? e->name : ph))
        return -1;
    /* Microseconds with three decimals keep the trace's nanoseconds. */
    fprintf(out, ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.3f,\"dur\":%.3f,\"pid\":%d,\"tid\":%d,"
                 "\"args\":{\"epoch\":%d,\"step\":%ld",
            ph, e->t0_s * 1e6, (e->t1_s - e->t0_s) * 1e6, pid,
            e->background ? CHROME_BACKGROUND_TID + e->rank : e->rank, e->epoch, e->step);
    if (e->bytes)
        fprintf(out, ",\"bytes\":%ld", e->bytes);
    if (e->examples)
        fprintf(out, ",\"examples\":%ld", e->examples);
    if (e->has_accuracy) // trace_read and trace_write keep them finite and in range
        fprintf(out, ",\"accuracy\":%.17g,\"loss\":%.17g", e->accuracy, e->loss);
    fputs("}}", out);
    return 0;
}

int chrome_write(const trace *t, int pid, const char *process_name, const char *path, char *err, int errlen) {
    atomicfile *f = atomicfile_open(path, err, errlen);
    if (!f)
        return -1;
    FILE *out = atomicfile_stream(f);
    int bad = write_header(out, t, pid, process_name);
    for (long i = 0; !bad && i < t->n_events; i++)
        bad = write_event(out, &t->events[i], pid);
    if (bad) {
        snprintf(err, (size_t)errlen, "%s: a host, net, process or event name is not valid UTF-8", path);
        atomicfile_abort(f);
        return -1;
    }
    fputs("\n]}\n", out);
    return atomicfile_commit(f, err, errlen);
}
