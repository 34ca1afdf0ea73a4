/* psx — the parameter server's exchange (see psx.h). */
#define _POSIX_C_SOURCE 200809L
#include "comm/psx.h"

#include <time.h>

enum {
    PSX_TAG_PUSH = 21,
    PSX_TAG_PULL = 22,
    PSX_TAG_REQUEST = 23,
    PSX_TAG_APUSH = 24,
    PSX_TAG_APULL = 25,
    PSX_TAG_AGO = 26,  /* rank 0 to a worker: send your push's block now */
    PSX_TAG_AGOT = 27, /* a worker to rank 0: the pull's block is here */
};

long psx_recv_floats(long n) { return n < PSX_CHUNK_FLOATS ? n : PSX_CHUNK_FLOATS; }

static int chunk_of(long n, long off) { return (int)(n - off < PSX_CHUNK_FLOATS ? n - off : PSX_CHUNK_FLOATS); }

/* Rank 0: every other rank's push, one at a time in rank order, added into block. */
static void master_take_pushes(MPI_Comm comm, int size, float *block, long n, float *recv) {
    for (int r = 1; r < size; r++)
        for (long off = 0; off < n; off += PSX_CHUNK_FLOATS) {
            const int c = chunk_of(n, off);
            MPI_Recv(recv, c, MPI_FLOAT, r, PSX_TAG_PUSH, comm, MPI_STATUS_IGNORE);
            float *dst = block + off;
            for (int i = 0; i < c; i++)
                dst[i] += recv[i];
        }
}

/* Rank 0: the pull block to every other rank, one at a time in rank order. */
static void master_send_pulls(MPI_Comm comm, int size, const float *block, long n) {
    for (int r = 1; r < size; r++)
        for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
            MPI_Send(block + off, chunk_of(n, off), MPI_FLOAT, r, PSX_TAG_PULL, comm);
}

void psx_exchange(MPI_Comm comm, float *push, float *pull, long n, float *recv, psx_between_fn between, void *ctx) {
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0) {
        master_take_pushes(comm, size, push, n, recv);
        if (between)
            between(ctx);
        master_send_pulls(comm, size, pull, n);
        return;
    }
    for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
        MPI_Send(push + off, chunk_of(n, off), MPI_FLOAT, 0, PSX_TAG_PUSH, comm);
    for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
        MPI_Recv(pull + off, chunk_of(n, off), MPI_FLOAT, 0, PSX_TAG_PULL, comm, MPI_STATUS_IGNORE);
}

// ---- the asynchronous exchange: requests, one worker at a time

static void send_block(MPI_Comm comm, const float *block, long n, int to, int tag) {
    for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
        MPI_Send(block + off, chunk_of(n, off), MPI_FLOAT, to, tag, comm);
}

static void recv_block(MPI_Comm comm, float *block, long n, int from, int tag) {
    for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
        MPI_Recv(block + off, chunk_of(n, off), MPI_FLOAT, from, tag, comm, MPI_STATUS_IGNORE);
}

void psx_async_push(MPI_Comm comm, const psx_request *h, const float *block, long n) {
    MPI_Send(h, (int)sizeof *h, MPI_BYTE, 0, PSX_TAG_REQUEST, comm);
    if (!h->shared)
        MPI_Recv(NULL, 0, MPI_BYTE, 0, PSX_TAG_AGO, comm, MPI_STATUS_IGNORE);
    send_block(comm, block, n, 0, PSX_TAG_APUSH);
}

void psx_async_pull(MPI_Comm comm, const psx_request *h, float *block, long n, long *version) {
    psx_request ask = *h, answer;
    ask.kind = PSX_PULL;
    MPI_Send(&ask, (int)sizeof ask, MPI_BYTE, 0, PSX_TAG_REQUEST, comm);
    MPI_Recv(&answer, (int)sizeof answer, MPI_BYTE, 0, PSX_TAG_APULL, comm, MPI_STATUS_IGNORE);
    recv_block(comm, block, n, 0, PSX_TAG_APULL);
    if (!h->shared)
        MPI_Send(NULL, 0, MPI_BYTE, 0, PSX_TAG_AGOT, comm);
    *version = answer.version;
}

void psx_async_done(MPI_Comm comm, int epoch) {
    psx_request h = { .kind = PSX_DONE, .epoch = epoch };
    MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, PSX_TAG_REQUEST, comm);
}

void psx_wait_napping(MPI_Request *req, MPI_Status *st) { psx_wait_any_napping(1, req, st); }

int psx_chunks(long n) { return n <= PSX_CHUNK_FLOATS ? 1 : (int)((n + PSX_CHUNK_FLOATS - 1) / PSX_CHUNK_FLOATS); }

void psx_async_listen(MPI_Comm comm, psx_request *h, MPI_Request *req) {
    MPI_Irecv(h, (int)sizeof *h, MPI_BYTE, MPI_ANY_SOURCE, PSX_TAG_REQUEST, comm, req);
}

void psx_async_take_start(MPI_Comm comm, int from, float *recv, long n, MPI_Request *reqs, bool go) {
    int i = 0;
    for (long off = 0; off < n; off += PSX_CHUNK_FLOATS)
        MPI_Irecv(recv + off, chunk_of(n, off), MPI_FLOAT, from, PSX_TAG_APUSH, comm, &reqs[i++]);
    if (go)
        MPI_Send(NULL, 0, MPI_BYTE, from, PSX_TAG_AGO, comm);
}

int psx_wait_any_napping(int count, MPI_Request *reqs, MPI_Status *st) {
    const struct timespec nap = { 0, PSX_NAP_NS };
    for (;;) {
        int done = 0, index = MPI_UNDEFINED;
        MPI_Testany(count, reqs, &index, &done, st);
        if (done)
            return index == MPI_UNDEFINED ? -1 : index;
        nanosleep(&nap, NULL);
    }
}

void psx_barrier_napping(MPI_Comm comm) {
    MPI_Request req;
    MPI_Ibarrier(comm, &req);
    psx_wait_napping(&req, MPI_STATUS_IGNORE);
}

void psx_async_give(MPI_Comm comm, int from, long version, const float *block, long n, MPI_Request *got) {
    psx_request answer = { .kind = PSX_PULL, .version = version };
    MPI_Send(&answer, (int)sizeof answer, MPI_BYTE, from, PSX_TAG_APULL, comm);
    send_block(comm, block, n, from, PSX_TAG_APULL);
    if (got)
        MPI_Irecv(NULL, 0, MPI_BYTE, from, PSX_TAG_AGOT, comm, got);
}
