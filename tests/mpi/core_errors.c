/* Error classes, codes, strings and communicator error handlers.
 *
 * - every predefined class is its own class and has a non-empty string;
 * - user classes, codes and strings (add and remove), and MPI_LASTUSEDCODE;
 * - MPI_ERRORS_ARE_FATAL is the default; under MPI_ERRORS_RETURN calls give
 *   back codes of the right class whose string names the call and argument;
 * - user handlers get the communicator and the code, and the call returns
 *   the code as the handler leaves it;
 * - objects without a handler of their own follow MPI_COMM_WORLD's current
 *   one; aliased buffers at a root fail there alone (inherit);
 * - errors with no communicator go to MPI_COMM_WORLD's handler until
 *   MPI_COMM_SELF's is set, then to MPI_COMM_SELF's;
 * - MPI_Comm_call_errhandler, MPI_Comm_get_errhandler, MPI_Errhandler_free
 *   (a freed handler stays in use by the communicators that have it). */
#include "mpitest.h"

/* A call that must fail; the standard leaves its error class open. */
#define MPI_FAILS_ANY(call)                                                                   \
    do {                                                                                      \
        if ((call) == MPI_SUCCESS)                                                            \
            MT_FAIL("%s succeeded, expected an error", #call);                                \
    } while (0)

static int rank, size;

static void check_class_of(int code, int want)
{
    int cls = -1;
    MPI_OK(MPI_Error_class(code, &cls));
    CHECK(cls == want, "MPI_Error_class(%d) = %d, want %d", code, cls, want);
}

static void error_string(int code, char *buf)
{
    int len = -1;
    memset(buf, 'x', MPI_MAX_ERROR_STRING);
    MPI_OK(MPI_Error_string(code, buf, &len));
    CHECK(len >= 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%d) length %d", code, len);
    CHECK((int)strlen(buf) == len, "MPI_Error_string(%d): length %d, strlen %zu", code, len,
          strlen(buf));
}

static void test_predefined_classes(void)
{
    static const int classes[] = {
        MPI_SUCCESS, MPI_ERR_BUFFER, MPI_ERR_COUNT, MPI_ERR_TYPE, MPI_ERR_TAG, MPI_ERR_COMM,
        MPI_ERR_RANK, MPI_ERR_REQUEST, MPI_ERR_ROOT, MPI_ERR_GROUP, MPI_ERR_OP, MPI_ERR_TOPOLOGY,
        MPI_ERR_DIMS, MPI_ERR_ARG, MPI_ERR_UNKNOWN, MPI_ERR_TRUNCATE, MPI_ERR_OTHER,
        MPI_ERR_INTERN, MPI_ERR_PENDING, MPI_ERR_IN_STATUS, MPI_ERR_ACCESS, MPI_ERR_AMODE,
        MPI_ERR_ASSERT, MPI_ERR_BAD_FILE, MPI_ERR_BASE, MPI_ERR_CONVERSION, MPI_ERR_DISP,
        MPI_ERR_DUP_DATAREP, MPI_ERR_FILE_EXISTS, MPI_ERR_FILE_IN_USE, MPI_ERR_FILE,
        MPI_ERR_INFO_KEY, MPI_ERR_INFO_NOKEY, MPI_ERR_INFO_VALUE, MPI_ERR_INFO, MPI_ERR_IO,
        MPI_ERR_KEYVAL, MPI_ERR_LOCKTYPE, MPI_ERR_NAME, MPI_ERR_NO_MEM, MPI_ERR_NOT_SAME,
        MPI_ERR_NO_SPACE, MPI_ERR_NO_SUCH_FILE, MPI_ERR_PORT, MPI_ERR_QUOTA, MPI_ERR_READ_ONLY,
        MPI_ERR_RMA_ATTACH, MPI_ERR_RMA_CONFLICT, MPI_ERR_RMA_RANGE, MPI_ERR_RMA_SHARED,
        MPI_ERR_RMA_SYNC, MPI_ERR_SERVICE, MPI_ERR_SIZE, MPI_ERR_SPAWN,
        MPI_ERR_UNSUPPORTED_DATAREP, MPI_ERR_UNSUPPORTED_OPERATION, MPI_ERR_WIN,
        MPI_ERR_RMA_FLAVOR, MPI_ERR_PROC_ABORTED, MPI_ERR_VALUE_TOO_LARGE, MPI_ERR_SESSION,
        MPI_ERR_ERRHANDLER, MPI_ERR_ABI, MPI_T_ERR_CANNOT_INIT, MPI_T_ERR_NOT_ACCESSIBLE,
        MPI_T_ERR_NOT_INITIALIZED, MPI_T_ERR_NOT_SUPPORTED, MPI_T_ERR_MEMORY, MPI_T_ERR_INVALID,
        MPI_T_ERR_INVALID_INDEX, MPI_T_ERR_INVALID_ITEM, MPI_T_ERR_INVALID_SESSION,
        MPI_T_ERR_INVALID_HANDLE, MPI_T_ERR_INVALID_NAME, MPI_T_ERR_OUT_OF_HANDLES,
        MPI_T_ERR_OUT_OF_SESSIONS, MPI_T_ERR_CVAR_SET_NOT_NOW, MPI_T_ERR_CVAR_SET_NEVER,
        MPI_T_ERR_PVAR_NO_WRITE, MPI_T_ERR_PVAR_NO_STARTSTOP, MPI_T_ERR_PVAR_NO_ATOMIC,
        MPI_ERR_LASTCODE,
    };
    char buf[MPI_MAX_ERROR_STRING];
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        check_class_of(classes[i], classes[i]);
        error_string(classes[i], buf);
        CHECK(buf[0] != '\0', "MPI_Error_string(%d) is empty", classes[i]);
    }
    /* A value that no class or code has. */
    int cls = -1;
    CHECK(MPI_Error_class(123456789, &cls) != MPI_SUCCESS, "MPI_Error_class(123456789) gave %d",
          cls);
    CHECK(MPI_Error_class(-5, &cls) != MPI_SUCCESS, "MPI_Error_class(-5) gave %d", cls);
}

/* User-added classes, codes and strings. */
static void test_user_codes(void)
{
    int flag = 0, *last = NULL;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && last, "MPI_LASTUSEDCODE is not set on MPI_COMM_WORLD");
    CHECK(*last >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d below MPI_ERR_LASTCODE %d", *last,
          MPI_ERR_LASTCODE);

    int c1 = -1, c2 = -1, code1 = -1, code2 = -1, code3 = -1;
    MPI_OK(MPI_Add_error_class(&c1));
    CHECK(c1 >= MPI_ERR_LASTCODE, "user class %d below MPI_ERR_LASTCODE", c1);
    check_class_of(c1, c1);
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(flag && *last == c1, "MPI_LASTUSEDCODE %d after adding class %d", *last, c1);

    MPI_OK(MPI_Add_error_code(c1, &code1));
    MPI_OK(MPI_Add_error_code(c1, &code2));
    CHECK(code1 != c1 && code2 != c1 && code1 != code2, "codes %d %d of class %d not distinct",
          code1, code2, c1);
    CHECK(code1 >= MPI_ERR_LASTCODE && code2 >= MPI_ERR_LASTCODE, "user codes %d %d", code1,
          code2);
    check_class_of(code1, c1);
    check_class_of(code2, c1);
    /* A code of a predefined class. */
    MPI_OK(MPI_Add_error_code(MPI_ERR_ARG, &code3));
    check_class_of(code3, MPI_ERR_ARG);
    MPI_OK(MPI_Add_error_class(&c2));
    CHECK(c2 != c1 && c2 != code1 && c2 != code2 && c2 != code3, "class %d reuses a value", c2);
    check_class_of(c2, c2);
    int maxv = c1;
    int vals[] = {code1, code2, code3, c2};
    for (int i = 0; i < 4; i++)
        if (vals[i] > maxv)
            maxv = vals[i];
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
    CHECK(*last == maxv, "MPI_LASTUSEDCODE %d, want the largest added value %d", *last, maxv);

    /* Strings: set, read back, replace. */
    char buf[MPI_MAX_ERROR_STRING];
    MPI_OK(MPI_Add_error_string(c1, "halo test class one"));
    MPI_OK(MPI_Add_error_string(code1, "halo test code one"));
    error_string(c1, buf);
    CHECK(!strcmp(buf, "halo test class one"), "class string \"%s\"", buf);
    error_string(code1, buf);
    CHECK(!strcmp(buf, "halo test code one"), "code string \"%s\"", buf);
    MPI_OK(MPI_Add_error_string(code1, "halo test code one, replaced"));
    error_string(code1, buf);
    CHECK(!strcmp(buf, "halo test code one, replaced"), "replaced code string \"%s\"", buf);
    /* Predefined codes keep their strings. */
    MPI_FAILS_ANY(MPI_Add_error_string(MPI_ERR_ARG, "no"));

    /* Removal: a class with codes, or a code or class with a string, stays. */
    MPI_FAILS_ANY(MPI_Remove_error_class(c1));
    MPI_FAILS_ANY(MPI_Remove_error_code(code1));
    check_class_of(code1, c1);
    check_class_of(c1, c1);
    MPI_OK(MPI_Remove_error_string(code1));
    MPI_FAILS_ANY(MPI_Remove_error_string(code1));
    MPI_OK(MPI_Remove_error_code(code1));
    MPI_OK(MPI_Remove_error_code(code2));
    MPI_FAILS_ANY(MPI_Remove_error_class(c1));   /* its string is still there */
    MPI_OK(MPI_Remove_error_string(c1));
    MPI_OK(MPI_Remove_error_class(c1));
    MPI_FAILS_ANY(MPI_Remove_error_class(MPI_ERR_ARG));
    MPI_FAILS_ANY(MPI_Remove_error_code(MPI_ERR_COUNT));
    /* What was not removed still works. */
    check_class_of(code3, MPI_ERR_ARG);
    check_class_of(c2, c2);
    MPI_OK(MPI_Remove_error_code(code3));
    MPI_OK(MPI_Remove_error_class(c2));
}

/* ---------------------------------------------------------------- handlers */

static int eh_calls;
static MPI_Comm eh_comm;
static int eh_code;

static void record_handler(MPI_Comm *comm, int *code, ...)
{
    eh_calls++;
    eh_comm = *comm;
    eh_code = *code;
}

static void expect_class(int rc, int cls, const char *what)
{
    int got = -1;
    CHECK(rc != MPI_SUCCESS, "%s succeeded, want class %d", what, cls);
    MPI_OK(MPI_Error_class(rc, &got));
    CHECK(got == cls, "%s: class %d, want %d", what, got, cls);
}

static void zero_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    eh_calls++;
    *code = MPI_SUCCESS;
}

static void other_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    eh_calls++;
    *code = MPI_ERR_OTHER;
}

static void win_record_handler(MPI_Win *win, int *code, ...)
{
    (void)win;
    eh_calls++;
    eh_code = *code;
}

/* Objects nobody gave a handler (a communicator made from MPI_COMM_WORLD
 * before its handler was set, a window) follow MPI_COMM_WORLD's current
 * handler (as MPICH; they read back MPI_ERRORS_ARE_FATAL); one set
 * explicitly keeps it. A handler's change of the code is what the call
 * returns. Buffers aliased at the root of a rooted collective fail there
 * without costing the others: the root's correct call afterwards matches
 * what they did. Runs first (world's handler untouched); leaves world's
 * handler MPI_ERRORS_ARE_FATAL, set explicitly. */
static void test_inherit(void)
{
    MPI_Comm old, older, set;
    MPI_Win win;
    int wbuf[4], buf[64], rc;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &old));
    MPI_OK(MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &set));
    MPI_OK(MPI_Comm_set_errhandler(set, MPI_ERRORS_RETURN));
    MPI_Errhandler got;
    MPI_OK(MPI_Comm_get_errhandler(old, &got));
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a communicator's first handler reads %p", (void *)got);
    MPI_OK(MPI_Errhandler_free(&got));

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_dup(old, &older));
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, old);
    expect_class(rc, MPI_ERR_RANK, "MPI_Send(dest=size) on a communicator made before");
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, older);
    expect_class(rc, MPI_ERR_RANK, "MPI_Send(dest=size) on its duplicate");
    rc = MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    expect_class(rc, MPI_ERR_RANK, "MPI_Put(target=size) on a window");

    MPI_Errhandler rec, zero, other, wrec;
    MPI_OK(MPI_Comm_create_errhandler(record_handler, &rec));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, rec));
    eh_calls = 0;
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, old);
    expect_class(rc, MPI_ERR_RANK, "MPI_Send on old under a user handler");
    CHECK(eh_calls == 1 && eh_comm == old, "world's user handler: %d calls, comm %p (want the "
          "communicator in error)", eh_calls, (void *)eh_comm);
    rc = MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    CHECK(eh_calls == 2 && eh_comm == MPI_COMM_WORLD, "a window's error under world's user "
          "handler: %d calls, comm %p", eh_calls, (void *)eh_comm);
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, set);
    expect_class(rc, MPI_ERR_RANK, "MPI_Send on a communicator with its own handler");
    CHECK(eh_calls == 2, "world's handler ran for a communicator with its own");
    MPI_OK(MPI_Win_create_errhandler(win_record_handler, &wrec));
    MPI_OK(MPI_Win_set_errhandler(win, wrec));
    rc = MPI_Put(buf, 1, MPI_INT, size, 0, 1, MPI_INT, win);
    CHECK(eh_calls == 3 && rc != MPI_SUCCESS, "the window's own handler: %d calls", eh_calls);

    /* What the handler leaves in the code is what the call returns. */
    MPI_OK(MPI_Comm_create_errhandler(zero_handler, &zero));
    MPI_OK(MPI_Comm_create_errhandler(other_handler, &other));
    MPI_OK(MPI_Comm_set_errhandler(set, zero));
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, set);
    CHECK(rc == MPI_SUCCESS && eh_calls == 4, "a handler that clears the code: call returned %d", rc);
    MPI_OK(MPI_Comm_set_errhandler(set, other));
    rc = MPI_Send(buf, 1, MPI_INT, size, 0, set);
    expect_class(rc, MPI_ERR_OTHER, "a handler that changes the code");

    /* Aliased buffers at the root only; the root then calls again. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    for (int round = 0; round < 2; round++) {
        int one = rank + 1, sum = -1;
        int *rb = rank == 0 ? &one : NULL;
        rc = MPI_Reduce(&one, rb, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            expect_class(rc, MPI_ERR_BUFFER, "MPI_Reduce(sendbuf=recvbuf) at the root");
            MPI_OK(MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD));
            CHECK(sum == size * (size + 1) / 2, "the root's second MPI_Reduce: %d", sum);
        } else {
            MPI_OK(rc);
        }
        for (int i = 0; i < size; i++)
            buf[i] = 100 + i;
        int mine = -1;
        rc = MPI_Scatter(buf, 1, MPI_INT, rank == 0 ? buf : &mine, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            expect_class(rc, MPI_ERR_BUFFER, "MPI_Scatter(sendbuf=recvbuf) at the root");
            MPI_OK(MPI_Scatter(buf, 1, MPI_INT, &mine, 1, MPI_INT, 0, MPI_COMM_WORLD));
        } else {
            MPI_OK(rc);
        }
        CHECK(mine == 100 + rank, "scatter after the root's second call: %d", mine);
        buf[0] = 7 * rank;
        rc = MPI_Gather(buf, 1, MPI_INT, rank == 0 ? buf : NULL, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            expect_class(rc, MPI_ERR_BUFFER, "MPI_Gather(sendbuf=recvbuf) at the root");
            int all[64];
            MPI_OK(MPI_Gather(buf, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD));
            for (int i = 0; i < size; i++)
                CHECK(all[i] == 7 * i, "gather after the root's second call: [%d] = %d", i, all[i]);
        } else {
            MPI_OK(rc);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Win_free(&win));
    MPI_OK(MPI_Comm_free(&old));
    MPI_OK(MPI_Comm_free(&older));
    MPI_OK(MPI_Comm_free(&set));
    MPI_OK(MPI_Errhandler_free(&rec));
    MPI_OK(MPI_Errhandler_free(&zero));
    MPI_OK(MPI_Errhandler_free(&other));
    MPI_OK(MPI_Errhandler_free(&wrec));
}

/* Before anyone sets MPI_COMM_SELF's handler, errors with no object and
 * errors on handles that are not communicators go to MPI_COMM_WORLD's (as
 * before MPI 4.0, and as MPICH does); once it is set, to MPI_COMM_SELF's.
 * Runs first: it needs MPI_COMM_SELF untouched. Leaves both handlers at
 * MPI_ERRORS_ARE_FATAL. */
static void test_world_fallback(void)
{
    MPI_Errhandler mine;
    MPI_Comm dup, stale;
    MPI_Datatype t;
    int buf[2] = {0, 0};
    MPI_OK(MPI_Comm_create_errhandler(record_handler, &mine));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine));
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* used first, so that the argument checks have just found it valid */
    MPI_OK(MPI_Barrier(dup));
    stale = dup;
    MPI_OK(MPI_Comm_free(&dup));

    eh_calls = 0;
    int rc = MPI_Barrier(stale);
    expect_class(rc, MPI_ERR_COMM, "MPI_Barrier(freed communicator)");
    CHECK(eh_calls == 1 && eh_comm == MPI_COMM_WORLD,
          "a freed communicator's error: world's handler ran %d times (comm %p)", eh_calls,
          (void *)eh_comm);
    rc = MPI_Allgather(buf, 1, MPI_INT, buf + 1, 1, MPI_INT, MPI_COMM_NULL);
    expect_class(rc, MPI_ERR_COMM, "MPI_Allgather(MPI_COMM_NULL)");
    rc = MPI_Type_contiguous(-1, MPI_INT, &t);
    expect_class(rc, MPI_ERR_COUNT, "MPI_Type_contiguous(count=-1)");
    CHECK(eh_calls == 3, "errors with no communicator reached world's handler %d times, want 3",
          eh_calls);

    /* Once MPI_COMM_SELF has a handler set, it takes over. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    eh_calls = 0;
    rc = MPI_Barrier(stale);
    expect_class(rc, MPI_ERR_COMM, "MPI_Barrier(freed communicator), self set");
    rc = MPI_Type_contiguous(-1, MPI_INT, &t);
    expect_class(rc, MPI_ERR_COUNT, "MPI_Type_contiguous(count=-1), self set");
    CHECK(eh_calls == 0, "with MPI_COMM_SELF's handler set, world's still ran %d times", eh_calls);
    /* Errors on a valid communicator stay on it. */
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_COUNT, "MPI_Send(count=-1) on world");
    CHECK(eh_calls == 1 && eh_comm == MPI_COMM_WORLD, "world's own error: handler ran %d times",
          eh_calls);

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Errhandler_free(&mine));
}

static void test_default_and_return(void)
{
    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_WORLD %p", (void *)eh);
    MPI_OK(MPI_Errhandler_free(&eh));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler of MPI_COMM_SELF %p", (void *)eh);
    MPI_OK(MPI_Errhandler_free(&eh));

    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "handler after set: %p", (void *)eh);
    MPI_OK(MPI_Errhandler_free(&eh));

    int buf[4] = {0};
    char msg[MPI_MAX_ERROR_STRING];
    int rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_COUNT, "MPI_Send(count=-1)");
    error_string(rc, msg);
    CHECK(strstr(msg, "MPI_Send") != NULL, "message \"%s\" does not name MPI_Send", msg);
    CHECK(strstr(msg, "count=-1") != NULL, "message \"%s\" does not show count=-1", msg);

    rc = MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_RANK, "MPI_Send(dest=size)");
    rc = MPI_Send(buf, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_TAG, "MPI_Send(tag=-5)");
    rc = MPI_Send(buf, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_TYPE, "MPI_Send(MPI_DATATYPE_NULL)");
    rc = MPI_Recv(buf, 1, MPI_INT, MPI_ANY_SOURCE, -7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    expect_class(rc, MPI_ERR_TAG, "MPI_Recv(tag=-7)");
    rc = MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_ROOT, "MPI_Bcast(root=size)");
    rc = MPI_Allreduce(buf, buf + 1, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_OP, "MPI_Allreduce(MPI_OP_NULL)");

    /* A truncated receive: 4 ints into room for 2, on MPI_COMM_SELF. */
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int four[4] = {1, 2, 3, 4}, two[2];
    MPI_Request req;
    MPI_OK(MPI_Isend(four, 4, MPI_INT, 0, 3, MPI_COMM_SELF, &req));
    rc = MPI_Recv(two, 2, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    expect_class(rc, MPI_ERR_TRUNCATE, "MPI_Recv of 4 ints into 2");
    MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));

    /* A communicator that is not one: raised on MPI_COMM_SELF (returns). */
    rc = MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL);
    expect_class(rc, MPI_ERR_COMM, "MPI_Send(MPI_COMM_NULL)");
    /* Errors with no object go to MPI_COMM_SELF's handler. */
    rc = MPI_Add_error_string(MPI_ERR_COUNT, "predefined strings cannot change");
    CHECK(rc != MPI_SUCCESS, "MPI_Add_error_string on a predefined code succeeded");

    /* MPI_Reduce_local takes no MPI_IN_PLACE and no aliased buffers. */
    int in3[3] = {1, 2, 3}, io3[3] = {10, 20, 30};
    rc = MPI_Reduce_local(MPI_IN_PLACE, io3, 3, MPI_INT, MPI_SUM);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Reduce_local(inbuf=MPI_IN_PLACE)");
    rc = MPI_Reduce_local(in3, MPI_IN_PLACE, 3, MPI_INT, MPI_SUM);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Reduce_local(inoutbuf=MPI_IN_PLACE)");
    rc = MPI_Reduce_local(io3, io3, 3, MPI_INT, MPI_SUM);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Reduce_local(inbuf=inoutbuf)");
    CHECK(io3[0] == 10 && io3[1] == 20 && io3[2] == 30, "a refused MPI_Reduce_local changed inoutbuf");
    MPI_OK(MPI_Reduce_local(in3, io3, 3, MPI_INT, MPI_SUM));
    CHECK(io3[0] == 11 && io3[1] == 22 && io3[2] == 33, "MPI_Reduce_local: %d %d %d", io3[0], io3[1], io3[2]);

    /* A collective's send buffer that is its receive buffer (not
     * MPI_IN_PLACE): MPI_ERR_BUFFER on every rank (rooted ones on
     * MPI_COMM_SELF, where the caller is the root), blocking and not. */
    int ab[64];
    MPI_Request areq = MPI_REQUEST_NULL;
    rc = MPI_Allgather(ab, 1, MPI_INT, ab, 1, MPI_INT, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Allgather(sendbuf=recvbuf)");
    rc = MPI_Ialltoall(ab, 1, MPI_INT, ab, 1, MPI_INT, MPI_COMM_WORLD, &areq);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Ialltoall(sendbuf=recvbuf)");
    rc = MPI_Gather(ab, 2, MPI_INT, ab, 2, MPI_INT, 0, MPI_COMM_SELF);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Gather(sendbuf=recvbuf) at the root");
    rc = MPI_Scatter(ab, 2, MPI_INT, ab, 2, MPI_INT, 0, MPI_COMM_SELF);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Scatter(sendbuf=recvbuf) at the root");
    ab[0] = 41;
    MPI_OK(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, ab, 1, MPI_INT, 0, MPI_COMM_SELF));
    CHECK(ab[0] == 41, "in-place MPI_Gather on MPI_COMM_SELF changed the block: %d", ab[0]);
    MPI_OK(MPI_Allgather(ab, 0, MPI_INT, ab, 0, MPI_INT, MPI_COMM_WORLD));   /* nothing moves: fine */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* Overlapping (not equal) send and receive buffers: MPI_ERR_BUFFER on
     * every rank; disjoint parts of one array, and interleaved elements,
     * are legal. */
    int cnt[64], dsp[64], wdsp[64];
    MPI_Datatype w[64];
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = i;
        wdsp[i] = i * (int)sizeof(int);   /* Alltoallw: in bytes */
        w[i] = MPI_INT;
    }
    rc = MPI_Allgather(&ab[rank], 1, MPI_INT, ab, 1, MPI_INT, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Allgather(sendbuf inside recvbuf)");
    rc = MPI_Allgatherv(&ab[size - 1], 1, MPI_INT, ab, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Allgatherv(sendbuf inside recvbuf)");
    rc = MPI_Alltoallv(ab, cnt, dsp, MPI_INT, ab, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Alltoallv(sendbuf=recvbuf)");
    rc = MPI_Ialltoallw(ab, cnt, wdsp, w, (char *)ab + 2, cnt, wdsp, w, MPI_COMM_WORLD, &areq);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Ialltoallw(overlapping buffers)");
    /* A bad entry of a type array is named with its index. */
    if (size > 1) {
        int wb[64];
        MPI_Datatype bad[64];
        for (int i = 0; i < size; i++)
            bad[i] = i == size - 1 ? MPI_DATATYPE_NULL : MPI_INT;
        rc = MPI_Alltoallw(ab, cnt, wdsp, bad, wb, cnt, wdsp, w, MPI_COMM_WORLD);
        expect_class(rc, MPI_ERR_TYPE, "MPI_Alltoallw(sendtypes[p-1]=MPI_DATATYPE_NULL)");
        char msg[MPI_MAX_ERROR_STRING], want[64];
        int len = 0;
        MPI_OK(MPI_Error_string(rc, msg, &len));
        snprintf(want, sizeof want, "sendtypes[%d]=MPI_DATATYPE_NULL", size - 1);
        CHECK(strstr(msg, want) != NULL, "MPI_Alltoallw's message does not name %s: %s", want, msg);
    }
    rc = MPI_Allreduce(ab + 1, ab, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Allreduce(sendbuf = recvbuf + 1)");
    rc = MPI_Scan(ab, ab + 1, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Scan(recvbuf = sendbuf + 1)");
    rc = MPI_Gather(ab + 1, 2, MPI_INT, ab, 2, MPI_INT, 0, MPI_COMM_SELF);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Gather(sendbuf inside recvbuf) at the root");
    rc = MPI_Reduce_scatter_block(ab, ab + size - 1, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    expect_class(rc, MPI_ERR_BUFFER, "MPI_Reduce_scatter_block(recvbuf = the send vector's last element)");
    /* Legal: the receive block right after the send vector. */
    for (int i = 0; i < size; i++)
        ab[i] = 10 * i + rank;
    ab[size] = -1;
    MPI_OK(MPI_Reduce_scatter_block(ab, ab + size, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(ab[size] == 10 * rank * size + size * (size - 1) / 2, "MPI_Reduce_scatter_block into the next "
          "element: %d", ab[size]);
    /* Legal: even elements sent, odd ones received, in one array. */
    MPI_Datatype every2;
    MPI_OK(MPI_Type_vector(4, 1, 2, MPI_INT, &every2));
    MPI_OK(MPI_Type_commit(&every2));
    for (int i = 0; i < 8; i++)
        ab[i] = i % 2 ? -1 : rank + i;
    MPI_OK(MPI_Allreduce(ab, ab + 1, 1, every2, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < 8; i += 2) {
        CHECK(ab[i] == rank + i, "interleaved MPI_Allreduce changed send element %d: %d", i, ab[i]);
        CHECK(ab[i + 1] == size * (size - 1) / 2 + size * i, "interleaved MPI_Allreduce [%d] = %d", i + 1,
              ab[i + 1]);
    }
    MPI_OK(MPI_Type_free(&every2));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    /* MPI_Group_translate_ranks without its arrays. */
    MPI_Group wg;
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    int r0 = 0, r1 = -5;
    rc = MPI_Group_translate_ranks(wg, 1, &r0, wg, NULL);
    expect_class(rc, MPI_ERR_ARG, "MPI_Group_translate_ranks(ranks2=NULL)");
    rc = MPI_Group_translate_ranks(wg, 1, NULL, wg, &r1);
    expect_class(rc, MPI_ERR_ARG, "MPI_Group_translate_ranks(ranks1=NULL)");
    /* A handle constant where a pointer to a handle belongs (the standard
     * ABI's constants are small integers, no address to write to). */
    rc = MPI_Comm_group(MPI_COMM_WORLD, (MPI_Group *)MPI_GROUP_NULL);
    expect_class(rc, MPI_ERR_ARG, "MPI_Comm_group(group=MPI_GROUP_NULL)");
    rc = MPI_Comm_dup(MPI_COMM_WORLD, (MPI_Comm *)MPI_COMM_NULL);
    expect_class(rc, MPI_ERR_ARG, "MPI_Comm_dup(newcomm=MPI_COMM_NULL)");
    MPI_OK(MPI_Group_free(&wg));

    /* A Cartesian grid larger than the communicator: an error, and no
     * communicator. */
    int dims[2] = {size + 1, 1}, periods[2] = {0, 0};
    MPI_Comm cart = MPI_COMM_WORLD;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    expect_class(rc, MPI_ERR_DIMS, "MPI_Cart_create(dims larger than the communicator)");
    CHECK(cart == MPI_COMM_NULL, "a failed MPI_Cart_create left %p, not MPI_COMM_NULL", (void *)cart);
}

static void test_user_handler(void)
{
    MPI_Comm dup, dup2;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    /* The duplicate inherits MPI_ERRORS_RETURN from MPI_COMM_WORLD. */
    MPI_Errhandler got;
    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == MPI_ERRORS_RETURN, "dup's handler %p, want MPI_ERRORS_RETURN", (void *)got);
    MPI_OK(MPI_Errhandler_free(&got));

    MPI_Errhandler eh;
    MPI_OK(MPI_Comm_create_errhandler(record_handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL, "MPI_Comm_create_errhandler gave MPI_ERRHANDLER_NULL");
    MPI_OK(MPI_Comm_set_errhandler(dup, eh));
    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh, "MPI_Comm_get_errhandler gave %p, set %p", (void *)got, (void *)eh);
    MPI_OK(MPI_Errhandler_free(&got));
    CHECK(got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");

    /* An error on dup: the handler sees dup and the code; the call returns it. */
    int buf[2] = {0};
    eh_calls = 0;
    int rc = MPI_Send(buf, -1, MPI_INT, 0, 0, dup);
    CHECK(eh_calls == 1, "user handler ran %d times, want 1", eh_calls);
    CHECK(eh_comm == dup, "user handler got comm %p, want %p", (void *)eh_comm, (void *)dup);
    expect_class(eh_code, MPI_ERR_COUNT, "code passed to the user handler");
    CHECK(rc == eh_code, "MPI_Send returned %d, the handler saw %d", rc, eh_code);
    /* Errors on MPI_COMM_WORLD do not reach dup's handler. */
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    CHECK(rc != MPI_SUCCESS && eh_calls == 1, "world's error reached dup's handler (calls %d)",
          eh_calls);

    /* MPI_Comm_call_errhandler: the handler runs with the given code. */
    eh_calls = 0;
    rc = MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler returned %d", rc);
    CHECK(eh_calls == 1 && eh_code == MPI_ERR_OTHER && eh_comm == dup,
          "call_errhandler: calls %d code %d", eh_calls, eh_code);
    /* ... also with a user-added code. */
    int ucls, ucode;
    MPI_OK(MPI_Add_error_class(&ucls));
    MPI_OK(MPI_Add_error_code(ucls, &ucode));
    MPI_OK(MPI_Comm_call_errhandler(dup, ucode));
    CHECK(eh_calls == 2 && eh_code == ucode, "call_errhandler(user code): calls %d code %d",
          eh_calls, eh_code);
    MPI_OK(MPI_Remove_error_code(ucode));
    MPI_OK(MPI_Remove_error_class(ucls));

    /* A communicator made from dup inherits the user handler. */
    MPI_OK(MPI_Comm_dup(dup, &dup2));
    eh_calls = 0;
    rc = MPI_Send(buf, 1, MPI_INT, 0, -3, dup2);
    CHECK(eh_calls == 1 && eh_comm == dup2, "inherited handler: calls %d comm %p", eh_calls,
          (void *)eh_comm);
    expect_class(rc, MPI_ERR_TAG, "MPI_Send(tag=-3) on dup2");

    /* Freeing the handler leaves it attached to the communicators that use it. */
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not reset the handle");
    eh_calls = 0;
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, dup);
    CHECK(rc != MPI_SUCCESS && eh_calls == 1, "freed handler: calls %d", eh_calls);
    /* ... and MPI_Comm_get_errhandler gives a usable handle to it. */
    MPI_OK(MPI_Comm_get_errhandler(dup, &got));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, got));
    eh_calls = 0;
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_SELF);
    CHECK(rc != MPI_SUCCESS && eh_calls == 1 && eh_comm == MPI_COMM_SELF,
          "handler from get_errhandler on MPI_COMM_SELF: calls %d", eh_calls);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    /* Back to MPI_ERRORS_RETURN: the user handler is no longer called. */
    MPI_OK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    eh_calls = 0;
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, dup);
    CHECK(rc != MPI_SUCCESS && eh_calls == 0, "after reset: calls %d", eh_calls);

    MPI_OK(MPI_Comm_free(&dup2));
    MPI_OK(MPI_Comm_free(&dup));
}

/* Is `part` in the comma-separated list `only` (NULL: every part)? */
static int run_part(const char *only, const char *part)
{
    if (!only)
        return 1;
    size_t n = strlen(part);
    for (const char *p = only;;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, part, n))
            return 1;
        if (!e)
            return 0;
        p = e + 1;
    }
}

/* Every name in `only` is one of parts[0..n-1]. */
static int parts_known(const char *only, const char *const *parts, int n)
{
    if (!only)
        return 1;
    int found = 0;
    for (int i = 0; i < n; i++)
        found += run_part(only, parts[i]);
    int commas = 0;
    for (const char *p = only; *p; p++)
        commas += *p == ',';
    return found == commas + 1;
}

/* Runs every part, or those named (comma-separated) by the first argument,
 * so that one failing part does not hide the others. */
int main(int argc, char **argv)
{
    const char *only = argc > 1 ? argv[1] : NULL;
    static const char *const parts[] = {"inherit", "world", "defaults", "classes", "codes", "handlers"};
    if (!parts_known(only, parts, (int)(sizeof parts / sizeof parts[0]))) {
        fprintf(stderr, "usage: core_errors [part,...] with parts inherit world defaults classes codes "
                        "handlers\n");
        return 2;
    }
#define RUN(part) run_part(only, part)
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (RUN("inherit"))
        test_inherit();
    if (RUN("world"))
        test_world_fallback();
    if (RUN("defaults")) {
        test_default_and_return();   /* ends with MPI_ERRORS_RETURN on world and self */
    } else {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    }
    if (RUN("classes"))
        test_predefined_classes();
    if (RUN("codes"))
        test_user_codes();
    if (RUN("handlers"))
        test_user_handler();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_errors %s: ok\n", only ? only : "all");
    return 0;
}
