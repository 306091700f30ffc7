/* Argument errors of the point-to-point calls under MPI_ERRORS_RETURN:
 * invalid ranks (MPI_ERR_RANK), tags (MPI_ERR_TAG), counts (MPI_ERR_COUNT),
 * datatypes (MPI_ERR_TYPE, including an uncommitted one), communicators
 * (MPI_ERR_COMM), and starting a request that is not persistent
 * (MPI_ERR_REQUEST), a message that ends inside a basic element of a
 * derived receive type (MPI_ERR_TYPE). MPI_Error_string of the returned code names the call
 * and the argument. A user error handler on the communicator is called
 * with the communicator and the code. After all that the communicator
 * still carries messages. */
#include "mpitest.h"

#include <limits.h>

static int rank, size;

/* The call fails with class cls and its message contains every one of the
 * given substrings. */
#define FAILS_WITH(cls, call, ...)                                                            \
    do {                                                                                      \
        const char *subs_[] = {__VA_ARGS__, NULL};                                            \
        expect_error((call), (cls), #call, subs_);                                            \
    } while (0)

static void expect_error(int rc, int cls, const char *call, const char **subs)
{
    if (rc == MPI_SUCCESS)
        MT_FAIL("%s succeeded, expected error class %d", call, cls);
    int got = -1;
    MPI_OK(MPI_Error_class(rc, &got));
    char msg[MPI_MAX_ERROR_STRING];
    int len = -1;
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(len == (int)strlen(msg), "Error_string length %d for a %zu-char string", len,
          strlen(msg));
    if (got != cls)
        MT_FAIL("%s: error class %d (%s), expected %d", call, got, msg, cls);
    for (int i = 0; subs[i]; i++)
        if (!strstr(msg, subs[i]))
            MT_FAIL("%s: error string \"%s\" does not contain \"%s\"", call, msg, subs[i]);
}

static int handler_calls, handler_code;
static MPI_Comm handler_comm;

static void user_handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    /* Errors with no valid communicator go to MPI_COMM_SELF's handler. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int buf[4] = {0}, flag;
    MPI_Request r;
    MPI_Status st;
    MPI_Comm W = MPI_COMM_WORLD;
    int right = (rank + 1) % size;

    /* Ranks. */
    FAILS_WITH(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, size, 0, W), "MPI_Send", "dest");
    FAILS_WITH(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, -5, 0, W), "MPI_Send", "dest=-5");
    FAILS_WITH(MPI_ERR_RANK, MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, W), "MPI_Send");
    FAILS_WITH(MPI_ERR_RANK, MPI_Ssend(buf, 1, MPI_INT, size + 3, 0, W), "MPI_Ssend");
    FAILS_WITH(MPI_ERR_RANK, MPI_Isend(buf, 1, MPI_INT, size, 0, W, &r), "MPI_Isend");
    FAILS_WITH(MPI_ERR_RANK, MPI_Recv(buf, 1, MPI_INT, size, 0, W, &st), "MPI_Recv", "source");
    FAILS_WITH(MPI_ERR_RANK, MPI_Irecv(buf, 1, MPI_INT, -7, 0, W, &r), "MPI_Irecv");
    FAILS_WITH(MPI_ERR_RANK, MPI_Iprobe(size, 0, W, &flag, &st), "MPI_Iprobe");
    FAILS_WITH(MPI_ERR_RANK, MPI_Send_init(buf, 1, MPI_INT, size, 0, W, &r), "MPI_Send_init");
    FAILS_WITH(MPI_ERR_RANK, MPI_Sendrecv(buf, 1, MPI_INT, size, 0, buf + 1, 1, MPI_INT, 0, 0, W,
                                          &st), "MPI_Sendrecv");

    /* Tags. */
    FAILS_WITH(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, right, -1, W), "MPI_Send", "tag=-1");
    FAILS_WITH(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, right, MPI_ANY_TAG, W), "MPI_Send");
    FAILS_WITH(MPI_ERR_TAG, MPI_Isend(buf, 1, MPI_INT, right, -3, W, &r), "MPI_Isend");
    FAILS_WITH(MPI_ERR_TAG, MPI_Recv(buf, 1, MPI_INT, right, -5, W, &st), "MPI_Recv", "tag=-5");
    FAILS_WITH(MPI_ERR_TAG, MPI_Iprobe(right, -5, W, &flag, &st), "MPI_Iprobe");
    int *ub = NULL;
    MPI_OK(MPI_Comm_get_attr(W, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && ub, "no MPI_TAG_UB attribute");
    if (*ub < INT_MAX)
        FAILS_WITH(MPI_ERR_TAG, MPI_Send(buf, 1, MPI_INT, right, *ub + 1, W), "MPI_Send");

    /* Counts. */
    FAILS_WITH(MPI_ERR_COUNT, MPI_Send(buf, -1, MPI_INT, right, 0, W), "MPI_Send", "count=-1");
    FAILS_WITH(MPI_ERR_COUNT, MPI_Isend(buf, -1, MPI_INT, right, 0, W, &r), "MPI_Isend",
               "count=-1");
    FAILS_WITH(MPI_ERR_COUNT, MPI_Recv(buf, -1, MPI_INT, right, 0, W, &st), "MPI_Recv", "count=-1");
    FAILS_WITH(MPI_ERR_COUNT, MPI_Irecv(buf, -4, MPI_INT, right, 0, W, &r), "MPI_Irecv");
    FAILS_WITH(MPI_ERR_COUNT, MPI_Bsend(buf, -1, MPI_INT, right, 0, W), "MPI_Bsend");
    FAILS_WITH(MPI_ERR_COUNT, MPI_Send_c(buf, -1, MPI_INT, right, 0, W), "MPI_Send_c", "count=-1");

    /* Datatypes. */
    FAILS_WITH(MPI_ERR_TYPE, MPI_Send(buf, 1, MPI_DATATYPE_NULL, right, 0, W), "MPI_Send",
               "datatype");
    FAILS_WITH(MPI_ERR_TYPE, MPI_Recv(buf, 1, MPI_DATATYPE_NULL, right, 0, W, &st), "MPI_Recv");
    FAILS_WITH(MPI_ERR_TYPE, MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, right, 0, W, &r), "MPI_Irecv");
    MPI_Datatype uncommitted;
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
    FAILS_WITH(MPI_ERR_TYPE, MPI_Send(buf, 1, uncommitted, right, 0, W), "MPI_Send", "commit");
    FAILS_WITH(MPI_ERR_TYPE, MPI_Recv(buf, 1, uncommitted, right, 0, W, &st), "MPI_Recv");
    MPI_OK(MPI_Type_free(&uncommitted));

    /* Communicators. */
    FAILS_WITH(MPI_ERR_COMM, MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), "MPI_Send", "comm");
    FAILS_WITH(MPI_ERR_COMM, MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), "MPI_Recv");
    FAILS_WITH(MPI_ERR_COMM, MPI_Isend(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), "MPI_Isend");
    FAILS_WITH(MPI_ERR_COMM, MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &st), "MPI_Iprobe");
    FAILS_WITH(MPI_ERR_COMM, MPI_Sendrecv(buf, 1, MPI_INT, 0, 0, buf + 1, 1, MPI_INT, 0, 0,
                                          MPI_COMM_NULL, &st), "MPI_Sendrecv");

    /* Starting a request that is not persistent. */
    MPI_OK(MPI_Irecv(buf, 1, MPI_INT, MPI_PROC_NULL, 0, W, &r));
    FAILS_WITH(MPI_ERR_REQUEST, MPI_Start(&r), "MPI_Start");
    MPI_OK(MPI_Wait(&r, &st));

    /* A user handler sees the communicator and the code; the call returns
     * the code too. */
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(user_handler, &eh));
    MPI_OK(MPI_Comm_set_errhandler(W, eh));
    int rc = MPI_Send(buf, -1, MPI_INT, right, 0, W);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(handler_calls == 1, "user error handler called %d times", handler_calls);
    CHECK(handler_comm == MPI_COMM_WORLD, "user error handler got another communicator");
    MPI_Error_class(handler_code, &cls);
    CHECK(cls == MPI_ERR_COUNT, "user error handler got class %d", cls);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_COUNT, "MPI_Send returned class %d after the user handler", cls);
    MPI_OK(MPI_Comm_set_errhandler(W, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Errhandler_free(&eh));

    /* A message that stops inside a basic element of a derived receive
     * type cannot match its signature (MPI_ERR_TYPE); one that stops at an
     * element boundary is a short receive (no error). Eager sizes, and a
     * rendezvous one. */
    int left = (rank - 1 + size) % size;
    {
        MPI_Datatype iv;   /* ints at 0, 2, 3, 5, ... with gaps */
        int bl[3] = {1, 2, 1}, dp[3] = {0, 2, 5};
        MPI_OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &iv));
        MPI_OK(MPI_Type_commit(&iv));
        enum { N = 40000 };   /* elements of iv: 640000 bytes of ints, above the eager limit */
        int *in = malloc(sizeof(int) * 6 * N), *out = malloc(sizeof(int) * 4 * N);
        for (int i = 0; i < 4 * N; i++)
            out[i] = rank * 1000 + i;
        const int bytes[3] = {3, 8, 4 * 4 * N - 2};
        for (int k = 0; k < 3; k++) {
            for (int i = 0; i < 6 * N; i++)
                in[i] = -1;
            MPI_OK(MPI_Isend(out, bytes[k], MPI_BYTE, right, 7, W, &r));
            int rc2 = MPI_Recv(in, N, iv, left, 7, W, &st);
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            if (k == 1) {
                MPI_OK(rc2);
                int cnt = -1;
                MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
                CHECK(cnt == 8 && in[0] == left * 1000 && in[2] == left * 1000 + 1 && in[1] == -1,
                      "short receive: %d bytes, in[0..2] = %d %d %d", cnt, in[0], in[1], in[2]);
            } else {
                FAILS_WITH(MPI_ERR_TYPE, rc2, "MPI_Recv", "basic element");
            }
        }
        MPI_OK(MPI_Type_free(&iv));
        free(in);
        free(out);
    }

    /* Nothing above left a message behind: the next one each rank gets is
     * the real one. */
    int v = rank * 11, got = -1;
    MPI_OK(MPI_Sendrecv(&v, 1, MPI_INT, right, 0, &got, 1, MPI_INT, left, MPI_ANY_TAG, W, &st));
    CHECK(got == left * 11 && st.MPI_TAG == 0, "after the errors: got %d tag %d", got, st.MPI_TAG);
    MPI_OK(MPI_Barrier(W));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &flag, &st));
    CHECK(flag == 0, "a failed call left a message behind (from %d, tag %d)", st.MPI_SOURCE,
          st.MPI_TAG);
    MPI_OK(MPI_Barrier(W));
    if (rank == 0)
        printf("p2p_errors: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
