/* Every rank starts, learns its place, and takes part in a barrier, an
 * allreduce and a token passed around a ring; the token's final value and
 * the reduction are checked. Each rank prints its MPI_APPNUM (MPMD
 * launches check it). */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int sum = -1;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK_INT(sum, size * (size - 1) / 2);
    int token = 0;
    if (size > 1) {
        if (rank == 0) {
            token = 1;
            MPI_OK(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(token, size);
        } else {
            MPI_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            CHECK_INT(token, rank);
            token++;
            MPI_OK(MPI_Send(&token, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD));
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int *appnum, flag;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    printf("rank %d of %d ok (appnum %d)\n", rank, size, flag ? *appnum : -1);
    MPI_OK(MPI_Finalize());
    return 0;
}
