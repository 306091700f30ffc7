/* The profiling interface and functions not implemented yet.
 *
 * - This program defines MPI_Send and MPI_Allreduce itself, counting its
 *   calls and passing them on to PMPI_Send and PMPI_Allreduce, as a
 *   profiling tool does: the counts must match the calls made and the data
 *   must arrive.
 * - A function Halo does not implement yet (MPI_Register_datarep)
 *   returns MPI_ERR_UNSUPPORTED_OPERATION, with a message naming the
 *   function, and changes nothing (the data representation it would have
 *   registered stays unknown to MPI_File_set_view). */
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

static int extent_fn(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    (void)extra_state;
    MPI_Aint lb;
    return MPI_Type_get_extent(datatype, &lb, extent);
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

    /* Not implemented yet: the right class, a message naming it. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int rc = MPI_Register_datarep("core_profiling_rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  extent_fn, NULL);
    int cls = -1;
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_OPERATION, "MPI_Register_datarep: error class %d", cls);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(strncmp(msg, "MPI_Register_datarep:", 21) == 0 && strstr(msg, "not supported") != NULL,
          "message \"%s\" does not say that MPI_Register_datarep is not supported", msg);
    MPI_File fh;
    MPI_OK(MPI_File_open(MPI_COMM_SELF, "/dev/null", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    rc = MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "core_profiling_rep", MPI_INFO_NULL);
    MPI_OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_UNSUPPORTED_DATAREP, "the representation was registered after all (class %d)", cls);
    MPI_OK(MPI_File_close(&fh));

    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_profiling: ok\n");
    return 0;
}
