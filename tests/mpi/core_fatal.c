/* An error under the predefined error handlers.
 *
 *   core_fatal fatal    rank 0 calls MPI_Send with count -1 under the default
 *                       MPI_ERRORS_ARE_FATAL: the job must end, non-zero,
 *                       with a message naming MPI_Send
 *   core_fatal abort    the last rank calls MPI_Recv with tag -7 under
 *                       MPI_ERRORS_ABORT: the job must end, naming MPI_Recv
 *   core_fatal return   the same MPI_Send under MPI_ERRORS_RETURN: the call
 *                       returns MPI_ERR_COUNT and the job ends normally
 *   core_fatal call     rank 0 calls MPI_Comm_call_errhandler(MPI_COMM_WORLD,
 *                       MPI_ERR_OTHER) under the default handler: the job ends
 *   core_fatal abort7   the last rank calls MPI_Abort(MPI_COMM_WORLD, 7): the
 *                       job ends with status 7 (mpiexec passes the code on)
 *
 * The other ranks wait for a message that only comes if the erroneous call
 * returns; then every rank finalizes and exits 0, which the testlist entries
 * that expect failure count as a failure. */
#include "mpitest.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fatal";
    int rank, size, buf[4] = {0};
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int culprit = 0;
    if (!strcmp(mode, "abort")) {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT));
        culprit = size - 1;
    } else if (!strcmp(mode, "return")) {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    } else if (!strcmp(mode, "abort7")) {
        culprit = size - 1;
    } else if (strcmp(mode, "fatal") != 0 && strcmp(mode, "call") != 0) {
        fprintf(stderr, "usage: core_fatal fatal|abort|return|call|abort7\n");
        return 2;
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == culprit) {
        int rc;
        if (!strcmp(mode, "abort"))
            rc = MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else if (!strcmp(mode, "call"))
            rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
        else if (!strcmp(mode, "abort7"))
            rc = MPI_Abort(MPI_COMM_WORLD, 7);
        else
            rc = MPI_Send(buf, -1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD);
        printf("core_fatal %s: the erroneous call returned %d on rank %d\n", mode, rc, rank);
        fflush(stdout);
        if (!strcmp(mode, "return")) {
            int cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK_INT(cls, MPI_ERR_COUNT);
        }
        for (int r = 0; r < size; r++)
            if (r != rank)
                MPI_OK(MPI_Send(buf, 1, MPI_INT, r, 1, MPI_COMM_WORLD));
    } else {
        /* Stays here unless the culprit's call returned. */
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, 1, MPI_INT, culprit, 1, MPI_COMM_WORLD, &st));
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
