/* Many ranks on one node: every pair of ranks exchanges a small and a
 * medium message (so every pair's ring and the cell queues are used), with
 * the data checked; then a barrier and an allreduce over everyone. Run at
 * 32 and 128 ranks on a 2-core machine: it must finish (no rank may spin
 * the others out) and leave nothing in /dev/shm. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const int medium = 4000;
    int *sbuf = malloc(sizeof(int) * (size_t)medium);
    int *rbuf = malloc(sizeof(int) * (size_t)medium * (size_t)size);
    long *small = malloc(sizeof(long) * (size_t)size);
    MPI_Request *req = malloc(sizeof(MPI_Request) * 4 * (size_t)size);
    for (int i = 0; i < medium; i++)
        sbuf[i] = rank * 100000 + i;
    long mine = 1000L * rank;
    int n = 0;
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        MPI_OK(MPI_Irecv(&small[p], 1, MPI_LONG, p, 1, MPI_COMM_WORLD, &req[n++]));
        MPI_OK(MPI_Irecv(rbuf + (size_t)p * medium, medium, MPI_INT, p, 2, MPI_COMM_WORLD, &req[n++]));
    }
    for (int k = 1; k < size; k++) {
        int p = (rank + k) % size;
        MPI_OK(MPI_Isend(&mine, 1, MPI_LONG, p, 1, MPI_COMM_WORLD, &req[n++]));
        MPI_OK(MPI_Isend(sbuf, medium, MPI_INT, p, 2, MPI_COMM_WORLD, &req[n++]));
    }
    MPI_OK(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        CHECK(small[p] == 1000L * p, "small message from %d: %ld", p, small[p]);
        for (int i = 0; i < medium; i += 97)
            CHECK(rbuf[(size_t)p * medium + i] == p * 100000 + i, "medium message from %d, element %d", p, i);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    long sum = 0, one = rank;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == (long)size * (size - 1) / 2, "allreduce: %ld", sum);
    if (rank == 0)
        printf("scale_alltoall: %d ranks ok\n", size);
    free(sbuf);
    free(rbuf);
    free(small);
    free(req);
    MPI_OK(MPI_Finalize());
    return 0;
}
