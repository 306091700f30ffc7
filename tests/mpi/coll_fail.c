/* A collective that fails on one rank reaches the others as an error, not
 * a hang, and the communicator stays usable afterwards.
 *
 *   coll_fail truncate | badop | badop_nb
 *
 * truncate (4 ranks or more, with HALO_BCAST_ALGORITHM=binomial): rank 2
 *   receives a broadcast into a buffer too short (MPI_ERR_TRUNCATE there);
 *   rank 3 gets its data from rank 2 in a binomial tree, so it must fail
 *   too, with MPI_ERR_OTHER and a message naming rank 2.
 * badop: rank 1 calls MPI_Allreduce with MPI_OP_NULL (MPI_ERR_OP there);
 *   every other rank needs rank 1's data, so each must fail with
 *   MPI_ERR_OTHER naming rank 1 (whatever the algorithm: run it under
 *   HALO_ALLREDUCE_ALGORITHM=...).
 * badop_nb: the same with MPI_Iallreduce and MPI_Wait.
 * Then, on the same communicator: an allreduce and a broadcast of every
 * size class whose results are checked, and a barrier. */
#include <stdbool.h>

#include "mpitest.h"

static void expect_fail(int rc, int want_class, const char *names, int rank, const char *what)
{
    CHECK(rc != MPI_SUCCESS, "%s: rank %d: the call succeeded", what, rank);
    int cls;
    MPI_OK(MPI_Error_class(rc, &cls));
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(cls == want_class, "%s: rank %d: error class %d, expected %d (%s)", what, rank, cls, want_class, msg);
    if (names)
        CHECK(strstr(msg, names) != NULL, "%s: rank %d: message \"%s\" does not name %s", what, rank, msg, names);
}

/* The communicator still works: results checked. */
static void afterwards(MPI_Comm comm, int rank, int size)
{
    static const int counts[] = {1, 100, 5000, 100000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        int n = counts[k];
        int *v = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            v[i] = rank + i;
        MPI_OK(MPI_Allreduce(v, r, n, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < n; i++)
            CHECK(r[i] == size * (size - 1) / 2 + size * i, "allreduce after the failure: element %d is %d", i,
                  r[i]);
        for (int i = 0; i < n; i++)
            v[i] = rank == size - 1 ? 7 * i : -1;
        MPI_OK(MPI_Bcast(v, n, MPI_INT, size - 1, comm));
        for (int i = 0; i < n; i++)
            CHECK(v[i] == 7 * i, "bcast after the failure: element %d is %d", i, v[i]);
        free(v);
        free(r);
    }
    MPI_OK(MPI_Barrier(comm));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argc > 1 ? argv[1] : "badop";
    MPI_Comm comm;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));

    if (!strcmp(mode, "truncate")) {
        CHECK(size >= 4, "truncate needs 4 ranks or more");
        enum { N = 64 };
        int buf[N];
        for (int i = 0; i < N; i++)
            buf[i] = rank == 0 ? i : -1;
        int rc = MPI_Bcast(buf, rank == 2 ? N / 2 : N, MPI_INT, 0, comm);
        if (rank == 2)
            expect_fail(rc, MPI_ERR_TRUNCATE, NULL, rank, "bcast");
        else if (rank == 3)
            expect_fail(rc, MPI_ERR_OTHER, "rank 2", rank, "bcast");
    } else {
        bool nb = !strcmp(mode, "badop_nb");
        enum { N = 1000 };
        int v[N], r[N];
        for (int i = 0; i < N; i++)
            v[i] = i;
        MPI_Op op = rank == 1 ? MPI_OP_NULL : MPI_SUM;
        int rc;
        if (nb) {
            MPI_Request req = MPI_REQUEST_NULL;
            rc = MPI_Iallreduce(v, r, N, MPI_INT, op, comm, &req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            rc = MPI_Allreduce(v, r, N, MPI_INT, op, comm);
        }
        if (rank == 1)
            expect_fail(rc, MPI_ERR_OP, NULL, rank, "allreduce");
        else if (size > 1)
            expect_fail(rc, MPI_ERR_OTHER, "rank 1", rank, "allreduce");
    }
    afterwards(comm, rank, size);
    MPI_OK(MPI_Comm_free(&comm));
    if (rank == 0)
        printf("coll_fail %s: ok\n", mode);
    MPI_Finalize();
    return 0;
}
