/* The profiling interface: this program defines MPI_Send and
 * MPI_Allreduce itself, counting its calls and passing them on to
 * PMPI_Send and PMPI_Allreduce, as a profiling tool does: the counts must
 * match the calls made and the data must arrive. */
#include "mpitest.h"

static int sends, allreduces;

int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, datatype, dest, tag, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                  MPI_Comm comm)
{
    allreduces++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Profiling: every rank sends to the next, three times. */
    for (int k = 0; k < 3; k++) {
        int v = rank * 10 + k, got = -1;
        MPI_Request req;
        MPI_OK(MPI_Irecv(&got, 1, MPI_INT, (rank + size - 1) % size, k, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Send(&v, 1, MPI_INT, (rank + 1) % size, k, MPI_COMM_WORLD));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK_INT(got, ((rank + size - 1) % size) * 10 + k);
    }
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, size * (size - 1) / 2);
    CHECK_INT(sends, 3);
    CHECK_INT(allreduces, 1);

    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_profiling: ok\n");
    return 0;
}
