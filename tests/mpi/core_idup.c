/* MPI_Comm_idup without blocking, and a few rules of the standard that
 * programs lean on.
 *
 *  - idup of an intercommunicator does not block: every rank but the
 *    leaders starts the idup, then sends to its leader with MPI_Ssend, which
 *    completes only once the leader has received; the leaders start their
 *    idup after receiving from everyone. A blocking idup deadlocks here.
 *  - several idups outstanding at once, mixed with blocking duplicates,
 *    give communicators with distinct contexts: the same tag sent on each
 *    and received in the reverse order arrives on the right one.
 *  - a communicator keeps the standard's assertion hints and drops keys it
 *    does not know (MPI_Comm_get_info does not return them).
 *  - MPI_PROC_NULL receives and probes leave MPI_ERROR of the status alone;
 *    null requests complete with the empty status (MPI_ERROR = MPI_SUCCESS)
 *    (Mprobe, Mrecv and Recv with MPI_PROC_NULL; Wait and Test on MPI_REQUEST_NULL).
 *  - MPI_DATATYPE_NULL is accepted where no data moves: with MPI_PROC_NULL
 *    and with a count of 0.
 * Ranks: 2 or more. Prints "core_idup: ok" on rank 0. */
#include "mpitest.h"

static void exchange_check(MPI_Comm c, int salt)
{
    int rank, size;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int sum = -1, mine = rank + salt;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT(sum, size * (size - 1) / 2 + size * salt);
}

static void inter_idup(int rank, int size)
{
    MPI_Comm local, ic, dup;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 77, &ic));
    int lrank, rsize;
    MPI_OK(MPI_Comm_rank(ic, &lrank));
    MPI_OK(MPI_Comm_remote_size(ic, &rsize));
    MPI_Request r;
    int buf[2];
    if (lrank == 0) {
        for (int i = 1; i < rsize; i++) {
            MPI_OK(MPI_Recv(buf, 2, MPI_INT, i, 5, ic, MPI_STATUS_IGNORE));
            CHECK_INT(buf[0], i);
            CHECK_INT(buf[1], 1000 + i);
        }
        MPI_OK(MPI_Comm_idup(ic, &dup, &r));
    } else {
        MPI_OK(MPI_Comm_idup(ic, &dup, &r));
        buf[0] = lrank;
        buf[1] = 1000 + lrank;
        MPI_OK(MPI_Ssend(buf, 2, MPI_INT, 0, 5, ic));
    }
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    int flag = 0, dsize, drsize;
    MPI_OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag, "the duplicate of an intercommunicator is not one");
    MPI_OK(MPI_Comm_size(dup, &dsize));
    MPI_OK(MPI_Comm_remote_size(dup, &drsize));
    CHECK_INT(drsize, rsize);
    /* Each side learns the sum of the other side's world ranks. */
    int other = -1, sum_remote = 0;
    for (int w = 0; w < size; w++)
        if (w % 2 != rank % 2)
            sum_remote += w;
    MPI_OK(MPI_Allreduce(&rank, &other, 1, MPI_INT, MPI_SUM, dup));
    CHECK_INT(other, sum_remote);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Comm_free(&ic));
    MPI_OK(MPI_Comm_free(&local));
}

static void many_idups(int rank, int size)
{
    enum { N = 4 };
    MPI_Comm c[N + 1];
    MPI_Request r[N];
    for (int i = 0; i < 2; i++)
        MPI_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &r[i]));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c[N]));   /* blocking, in between */
    for (int i = 2; i < N; i++)
        MPI_OK(MPI_Comm_idup(i == 3 ? c[N] : MPI_COMM_WORLD, &c[i], &r[i]));
    /* Complete them in the reverse order. */
    for (int i = N - 1; i >= 0; i--)
        MPI_OK(MPI_Wait(&r[i], MPI_STATUS_IGNORE));
    /* The same tag on every communicator, received in the reverse order:
     * a message lands on its own communicator only if the contexts differ. */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Request s[N + 1];
    for (int i = 0; i <= N; i++) {
        int v = 100 * i + rank;
        MPI_OK(MPI_Isend(&v, 1, MPI_INT, to, 9, c[i], &s[i]));
        MPI_OK(MPI_Wait(&s[i], MPI_STATUS_IGNORE));
    }
    for (int i = N; i >= 0; i--) {
        int v = -1;
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, from, 9, c[i], MPI_STATUS_IGNORE));
        CHECK(v == 100 * i + from, "communicator %d got %d, expected %d", i, v, 100 * i + from);
    }
    for (int i = 0; i <= N; i++) {
        exchange_check(c[i], i);
        MPI_OK(MPI_Comm_free(&c[i]));
    }
}

static void comm_hints(void)
{
    MPI_Info in, used;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "no_such_hint_here", "true"));
    MPI_OK(MPI_Info_set(in, "mpi_assert_no_any_tag", "true"));
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, in, &d));
    MPI_OK(MPI_Comm_get_info(d, &used));
    char val[MPI_MAX_INFO_VAL];
    int len = (int)sizeof val, flag = 1;
    MPI_OK(MPI_Info_get_string(used, "no_such_hint_here", &len, val, &flag));
    CHECK(!flag, "MPI_Comm_get_info returned an unknown key");
    len = (int)sizeof val;
    MPI_OK(MPI_Info_get_string(used, "mpi_assert_no_any_tag", &len, val, &flag));
    CHECK(flag && !strcmp(val, "true"), "the assertion hint was not kept");
    MPI_OK(MPI_Info_free(&used));
    /* Set_info: the same filter. */
    MPI_OK(MPI_Comm_set_info(d, in));
    MPI_OK(MPI_Comm_get_info(d, &used));
    len = (int)sizeof val;
    MPI_OK(MPI_Info_get_string(used, "no_such_hint_here", &len, val, &flag));
    CHECK(!flag, "MPI_Comm_set_info kept an unknown key");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Info_free(&in));
    MPI_OK(MPI_Comm_free(&d));
}

static void status_error_of_procnull_and_empty(void)
{
    MPI_Status st;
    MPI_Message msg = MPI_MESSAGE_NULL;
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_TAG, MPI_ANY_TAG);
    CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
    CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    st.MPI_ERROR = MPI_ERR_TOPOLOGY;
    MPI_OK(MPI_Mrecv(NULL, 0, MPI_INT, &msg, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_ERROR, MPI_ERR_TOPOLOGY);
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_OK(MPI_Recv(NULL, 0, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    CHECK_INT(st.MPI_ERROR, MPI_ERR_DIMS);
    MPI_Request r = MPI_REQUEST_NULL;
    st.MPI_ERROR = MPI_ERR_ROOT;
    /* A null request completes with the empty status, whose MPI_ERROR is
     * MPI_SUCCESS: that one is written. */
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_ANY_SOURCE);
    CHECK_INT(st.MPI_ERROR, MPI_SUCCESS);
    int flag = 0;
    st.MPI_ERROR = MPI_ERR_ROOT;
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag, "Test on MPI_REQUEST_NULL did not complete");
    CHECK_INT(st.MPI_ERROR, MPI_SUCCESS);
}

static void null_datatype_without_data(int rank, int size)
{
    MPI_Status st;
    MPI_Request r;
    MPI_OK(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK_INT(st.MPI_SOURCE, MPI_PROC_NULL);
    MPI_OK(MPI_Send(NULL, 5, MPI_DATATYPE_NULL, MPI_PROC_NULL, 4, MPI_COMM_WORLD));
    /* Count 0 to a real peer: an empty message that matches. */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_OK(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, to, 6, NULL, 0, MPI_DATATYPE_NULL, from, 6,
                        MPI_COMM_WORLD, &st));
    CHECK_INT(st.MPI_SOURCE, from);
    CHECK_INT(st.MPI_TAG, 6);
    int n = -1;
    MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK_INT(n, 0);
    /* A datatype is still required where data moves. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Send(&n, 1, MPI_DATATYPE_NULL, to, 6, MPI_COMM_WORLD));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks or more, has %d", size);
    inter_idup(rank, size);
    many_idups(rank, size);
    comm_hints();
    status_error_of_procnull_and_empty();
    null_datatype_without_data(rank, size);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("core_idup: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
