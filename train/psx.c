/* psx — the parameter server's exchange (see psx.h). */
#include "train/psx.h"

enum { PSX_TAG_PUSH = 21, PSX_TAG_PULL = 22 };

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
