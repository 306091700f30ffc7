#!/bin/bash
# Our mpiexec as the PMI-1 server of MPICH programs: an MPI program built
# with MPICH's mpicc (not Halo) starts, wires up through our KVS, sees its
# MPMD appnum, and aborts cleanly. Skipped (77) without mpicc.mpich.
. "$(dirname "$0")/common.sh"

MPICC=$(command -v mpicc.mpich)
if [ -z "$MPICC" ]; then
    echo "SKIP: mpicc.mpich not found"
    exit 77
fi
cat >"$TMP/hello.c" <<'SRC'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    int rank, size, sum = 0, flag = 0, *appnum;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    printf("rank %d of %d appnum %d sum %d\n", rank, size, flag ? *appnum : -1, sum);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "abort") == 0 && rank == 1)
        MPI_Abort(MPI_COMM_WORLD, 5);
    MPI_Finalize();
    return 0;
}
SRC
if ! "$MPICC" -o "$TMP/hello" "$TMP/hello.c" 2>"$TMP/err"; then
    echo "SKIP: mpicc.mpich cannot build a program"; cat "$TMP/err"
    exit 77
fi

run -n 3 "$TMP/hello"
expect_rc 0 "MPICH program, 3 ranks"
expect_count out '^rank [0-2] of 3 appnum 0 sum 3$' 3 "MPICH ranks wired up through our PMI server"

run -n 2 "$TMP/hello" : -n 1 "$TMP/hello"
expect_grep out '^rank 2 of 3 appnum 1 sum 3$' "MPICH sees the MPMD appnum"

run -n 3 "$TMP/hello" abort
expect_rc 5 "MPI_Abort of an MPICH program"
expect_grep err '^mpiexec: rank 1 called MPI_Abort with code 5; ending the job$' "abort reported"
expect_faster 2.0 "abort ends the job"

finish
