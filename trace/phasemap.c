/* phasemap — event names to phases (see phasemap.h). */
#define _POSIX_C_SOURCE 200809L
#include "trace/phasemap.h"

#include "util/errmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------- */
/* The built-in map: what PyTorch 1.13's profiler (legacy and Kineto) writes for a DDP job
 * on gloo (experiments/pytorch-ddp), and Horovod's timeline (horovod/common/timeline.cc,
 * docs/timeline.rst). One line per rule, in the file format. */

static const char *const default_rules[] = {
    /* Start-up and evaluation are the job's own record_function("startup: ...") blocks. */
    "startup* startup",
    "eval* eval",
    /* Containers: a training step (Kineto's ProfilerStep#N), the profiler's own span. */
    "ProfilerStep#* step",
    "PyTorch Profiler* -",
    /* The optimizer: the step is the update; zeroing the gradients opens the next step. */
    "Optimizer.step#* update",
    "Optimizer.zero_grad#* compute",
    /* Forward, loss and backward. */
    "DistributedDataParallel.forward compute",
    "nn.Module: * compute",
    "autograd::engine::evaluate_function: * compute",
    "torch::autograd::* compute",
    "*Backward[0-9]* compute",
    /* DDP's wait for its buckets and copy back, the collectives (gloo's threads run them
     * beside the main thread: background). */
    "torch.distributed.ddp.reducer::* comm",
    "c10d::barrier* wait",
    "gloo:barrier* wait",
    "c10d::* comm",
    "gloo:* comm",
    "nccl:* comm",
    "mpi:* comm",
    "record_param_comms comm",
    /* Operators outside the annotated phases (the loss, the grad seed, the batch's
     * indexing): part of the phase that follows. */
    "aten::* -",
    "prim::* -",
    "detach -",
    /* Horovod: a response per tensor holds its activities; negotiating and queueing is
     * waiting for the other ranks, the rest moves the data. */
    "NEGOTIATE_* wait",
    "WAIT_FOR_* wait",
    "QUEUE wait",
    "MEMCPY_* comm",
    "INIT_FUSION_BUFFER comm",
    "ALLOCATE_* comm",
    "COPY_ALLGATHER_OUTPUT comm",
    "MPI_* comm",
    "NCCL_* comm",
    "GLOO_* comm",
    "CCL_* comm",
    "ALLREDUCE -",
    "ALLGATHER -",
    "BROADCAST -",
    "ALLTOALL -",
    "REDUCESCATTER -",
    "ADASUM -",
    "CYCLE_START -",
};

static const char *const phase_words[] = { "startup", "compute", "comm", "wait", "eval", "update", "step", "-" };

const char *phasemap_phase_name(int phase) {
    return phase >= 0 && phase <= PHASEMAP_NONE ? phase_words[phase] : "?";
}

static int phase_parse(const char *word) {
    for (int i = 0; i <= PHASEMAP_NONE; i++)
        if (strcmp(word, phase_words[i]) == 0)
            return i;
    return -1;
}

/* One line "PATTERN PHASE" into r; NULL, or what is wrong with it. */
static const char *parse_rule(const char *line, phasemap_rule *r) {
    size_t n = strlen(line);
    while (n > 0 && isspace((unsigned char)line[n - 1]))
        n--;
    size_t w = n;
    while (w > 0 && !isspace((unsigned char)line[w - 1]))
        w--;
    char word[16];
    if (n - w >= sizeof word)
        return "expected PATTERN PHASE, PHASE one of compute update comm wait startup eval step -";
    memcpy(word, line + w, n - w);
    word[n - w] = '\0';
    size_t p0 = 0, p1 = w;
    while (p0 < p1 && isspace((unsigned char)line[p0]))
        p0++;
    while (p1 > p0 && isspace((unsigned char)line[p1 - 1]))
        p1--;
    if (p1 == p0)
        return "expected PATTERN PHASE: no pattern before the phase";
    if (p1 - p0 >= sizeof r->pattern)
        return "pattern too long (at most 159 characters)";
    if ((r->phase = phase_parse(word)) < 0)
        return "unknown phase: expected compute, update, comm, wait, startup, eval, step or -";
    memcpy(r->pattern, line + p0, p1 - p0);
    r->pattern[p1 - p0] = '\0';
    return NULL;
}

static int push(phasemap *m, const phasemap_rule *r) {
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        phasemap_rule *v = realloc(m->rules, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        m->rules = v;
        m->cap = cap;
    }
    m->rules[m->n++] = *r;
    return 0;
}

phasemap *phasemap_default(void) {
    phasemap *m = calloc(1, sizeof *m);
    for (size_t i = 0; m && i < sizeof default_rules / sizeof default_rules[0]; i++) {
        phasemap_rule r = { .line = 0 };
        if (parse_rule(default_rules[i], &r) || push(m, &r)) { /* the table parses: only memory fails */
            phasemap_free(m);
            return NULL;
        }
    }
    return m;
}

void phasemap_free(phasemap *m) {
    if (!m)
        return;
    free(m->rules);
    free(m);
}

int phasemap_read_file(phasemap *m, const char *path, char *err, int errlen) {
    FILE *f = fopen(path, "r");
    if (!f)
        return errmsg_set(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    phasemap mine = { 0 };
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0, rc = 0;
    while (rc == 0 && getline(&line, &cap, f) != -1) {
        lineno++;
        const char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        if (*s == '\0' || *s == '#')
            continue;
        phasemap_rule r = { .line = lineno };
        const char *why = parse_rule(s, &r);
        if (why)
            rc = errmsg_set(err, errlen, "%s: line %d: %s", path, lineno, why);
        else if (push(&mine, &r))
            rc = errmsg_set(err, errlen, "%s: out of memory", path);
    }
    free(line);
    fclose(f);
    /* The file's rules first, then the ones m had. */
    for (int i = 0; rc == 0 && i < m->n; i++)
        if (push(&mine, &m->rules[i]))
            rc = errmsg_set(err, errlen, "%s: out of memory", path);
    if (rc) {
        free(mine.rules);
        return -1;
    }
    free(m->rules);
    m->rules = mine.rules;
    m->n = mine.n;
    m->cap = mine.cap;
    snprintf(m->source, sizeof m->source, "%s", path);
    return 0;
}

const phasemap_rule *phasemap_match(const phasemap *m, const char *name) {
    for (int i = 0; i < m->n; i++)
        if (fnmatch(m->rules[i].pattern, name, 0) == 0)
            return &m->rules[i];
    return NULL;
}

void phasemap_write(const phasemap *m, FILE *out) {
    for (int i = 0; i < m->n; i++)
        fprintf(out, "%-44s %s\n", m->rules[i].pattern, phasemap_phase_name(m->rules[i].phase));
}
