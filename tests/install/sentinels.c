/* The standard's sentinel addresses passed where arrays are expected
 * (tests/install builds this with -O2 -Wall -Wextra -Werror: mpi.h must not
 * make the compiler warn about them), and an unweighted ring graph built
 * and queried with them. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Comm adj, gen;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, MPI_UNWEIGHTED, 1, &right, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &adj);
    int one = 1;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &right, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &gen);
    int src = -1, dst = -1, indeg, outdeg, weighted = 1;
    MPI_Dist_graph_neighbors_count(adj, &indeg, &outdeg, &weighted);
    MPI_Dist_graph_neighbors(adj, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED);
    MPI_Request q[2];
    int got = -1;
    MPI_Irecv(&got, 1, MPI_INT, src, 0, adj, &q[0]);
    MPI_Isend(&rank, 1, MPI_INT, dst, 0, adj, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    if (indeg == 1 && outdeg == 1 && !weighted && src == left && dst == right && got == left)
        printf("rank %d ok\n", rank);
    MPI_Comm_free(&adj);
    MPI_Comm_free(&gen);
    MPI_Finalize();
    return 0;
}
