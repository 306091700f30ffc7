/* The Sessions model.
 *
 *   core_session loop|world|errors|threads|bsend
 *
 * loop:    sessions before any MPI_Init: init/finalize in a loop, several
 *          open at once and closed out of order; MPI_Initialized and
 *          MPI_Finalized stay 0; the process sets, their names (length
 *          queries, short buffers) and "mpi_size"; a communicator from
 *          "mpi://WORLD" and one from "mpi://SELF" carry checked data and
 *          have MPI_TAG_UB but none of the world's other attributes;
 *          comparing communicators of two sessions is an error;
 *          then MPI_Init after every session is finalized.
 * world:   MPI_Init_thread first, then sessions inside the world model; a
 *          session left open across MPI_Finalize keeps its communicator
 *          working; MPI_Finalized is 1 while it is still open.
 * errors:  also MPI_Session_init with a thread_level that names no level;
 *          a session's handler (MPI_ERRORS_RETURN, a user handler that
 *          counts) gets the errors of calls on it, set/get/call, and
 *          Errhandler_free with only a session open; wrong arguments get
 *          their classes (under the world model, with MPI_COMM_SELF
 *          returning errors: MPI_SESSION_NULL, a communicator's handler).
 * threads: "thread_level" = "MPI_THREAD_MULTIPLE" is granted and reported by
 *          MPI_Session_get_info; two threads each open a session and build
 *          a communicator of their own at the same time.
 * bsend:   buffered sends through a buffer attached to the session (and
 *          MPI_BUFFER_AUTOMATIC), flush, iflush, detach.
 * groups:  (4 or more ranks) one stringtag for several groups: pairs of
 *          ranks make a communicator each, then the first of every pair
 *          one of all the firsts, and the second rank of the first pair
 *          arrives late, so that the firsts' agreement reaches rank 0
 *          while its pair's has not ended; the same with intercommunicators
 *          between neighbouring pairs. Sums over each check the members.
 * Each part ends the process in a different state (the world model used or
 * not), so a run takes exactly one part. */
#include <pthread.h>
#include <unistd.h>

#include "mpitest.h"

static void expect_world_state(int init_want, int fin_want, const char *when)
{
    int init = -1, fin = -1;
    MPI_OK(MPI_Initialized(&init));
    MPI_OK(MPI_Finalized(&fin));
    CHECK(init == init_want && fin == fin_want, "%s: initialized=%d finalized=%d", when, init, fin);
}

static int info_int(MPI_Info info, const char *key)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag, "key %s missing", key);
    return atoi(v);
}

/* A communicator from a process set of s, checked: ranks, sizes and a ring
 * exchange plus an allreduce with data that depends on every rank. */
static MPI_Comm comm_from_pset(MPI_Session s, const char *pset, const char *tag)
{
    MPI_Group g;
    MPI_OK(MPI_Group_from_session_pset(s, pset, &g));
    int gsize, grank;
    MPI_OK(MPI_Group_size(g, &gsize));
    MPI_OK(MPI_Group_rank(g, &grank));
    MPI_Info pinfo;
    MPI_OK(MPI_Session_get_pset_info(s, pset, &pinfo));
    CHECK_INT(info_int(pinfo, "mpi_size"), gsize);
    MPI_OK(MPI_Info_free(&pinfo));
    MPI_Comm c;
    MPI_OK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    MPI_OK(MPI_Group_free(&g));
    CHECK(c != MPI_COMM_NULL, "%s: no communicator", pset);
    int size, rank;
    MPI_OK(MPI_Comm_size(c, &size));
    MPI_OK(MPI_Comm_rank(c, &rank));
    CHECK_INT(size, gsize);
    CHECK_INT(rank, grank);
    /* Of the predefined attributes, a session's communicator has MPI_TAG_UB
     * only (the others describe MPI_COMM_WORLD's launch). */
    int *v = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag));
    CHECK(flag && v && *v >= 32767, "MPI_TAG_UB on a session's communicator: flag %d", flag);
    static const int world_only[] = {MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL, MPI_APPNUM,
                                     MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE};
    for (int i = 0; i < 6; i++) {
        flag = -1;
        MPI_OK(MPI_Comm_get_attr(c, world_only[i], &v, &flag));
        CHECK(flag == 0, "predefined attribute %d on a session's communicator: flag %d", world_only[i],
              flag);
    }
    return c;
}

static void check_comm(MPI_Comm c, int salt)
{
    int size, rank;
    MPI_OK(MPI_Comm_size(c, &size));
    MPI_OK(MPI_Comm_rank(c, &rank));
    int out[64], in[64];
    for (int i = 0; i < 64; i++)
        out[i] = salt * 100000 + rank * 1000 + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_OK(MPI_Sendrecv(out, 64, MPI_INT, right, salt, in, 64, MPI_INT, left, salt, c, MPI_STATUS_IGNORE));
    for (int i = 0; i < 64; i++)
        CHECK(in[i] == salt * 100000 + left * 1000 + i, "in[%d]=%d from rank %d", i, in[i], left);
    int sum = -1, mine = rank + salt;
    MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK_INT(sum, size * (size - 1) / 2 + size * salt);
}

static void check_psets(MPI_Session s)
{
    int n = -1;
    MPI_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n));
    CHECK(n >= 2, "%d process sets", n);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < n; i++) {
        int len = 0;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d: length %d", i, len);
        char name[MPI_MAX_PSET_NAME_LEN];
        int got = len;
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, name));
        CHECK_INT(got, len);
        CHECK_INT((int)strlen(name) + 1, len);
        /* A short buffer gets a truncated, terminated name. */
        char shortname[5];
        got = 5;
        memset(shortname, 'x', sizeof shortname);
        MPI_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &got, shortname));
        CHECK(shortname[4] == '\0' && !strncmp(shortname, name, 4), "short name %.5s of %s", shortname,
              name);
        seen_world += !strcmp(name, "mpi://WORLD");
        seen_self += !strcmp(name, "mpi://SELF");
    }
    CHECK(seen_world == 1 && seen_self == 1, "world %d self %d", seen_world, seen_self);
    MPI_Info in;
    MPI_OK(MPI_Session_get_pset_info(s, "mpi://SELF", &in));
    CHECK_INT(info_int(in, "mpi_size"), 1);
    MPI_OK(MPI_Info_free(&in));
}

static void part_loop(void)
{
    expect_world_state(0, 0, "start");
    int world_size = -1;
    for (int iter = 0; iter < 4; iter++) {
        MPI_Session s;
        MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        CHECK(s != MPI_SESSION_NULL, "iteration %d", iter);
        expect_world_state(0, 0, "session open");
        check_psets(s);
        char tag[32];
        snprintf(tag, sizeof tag, "loop-%d", iter);
        MPI_Comm c = comm_from_pset(s, "mpi://WORLD", tag);
        MPI_OK(MPI_Comm_size(c, &world_size));
        check_comm(c, iter + 1);
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Session_finalize(&s));
        CHECK(s == MPI_SESSION_NULL, "handle not reset");
        expect_world_state(0, 0, "session closed");
    }
    /* Three at once, communicators from each alive together, closed in
     * another order than opened. */
    MPI_Session s[3];
    MPI_Comm c[3];
    for (int i = 0; i < 3; i++) {
        MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s[i]));
        char tag[32];
        snprintf(tag, sizeof tag, "many-%d", i);
        c[i] = comm_from_pset(s[i], i == 2 ? "mpi://self" : "mpi://WORLD", tag);
    }
    for (int i = 0; i < 3; i++)
        check_comm(c[i], 10 + i);
    /* Communicators of two sessions may not meet in one call; of one, may. */
    int cmp = -1;
    int rc = MPI_Comm_compare(c[0], c[1], &cmp);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_COMM && cmp == -1,
          "MPI_Comm_compare across sessions: rc %d class %d result %d", rc, cls, cmp);
    /* Nor may their requests in one completion call: sends that left at
     * once (complete inside MPI_Isend) as well as pending receives. The
     * error returns (the communicators return errors) and leaves every
     * request as it was. */
    int me;
    MPI_OK(MPI_Comm_rank(c[0], &me));
    int out[2] = {700 + me, 800 + me}, got[2] = {-1, -1}, flag = -1;
    MPI_Request rq[4];
    MPI_OK(MPI_Irecv(&got[0], 1, MPI_INT, me, 5, c[0], &rq[0]));
    MPI_OK(MPI_Irecv(&got[1], 1, MPI_INT, me, 5, c[1], &rq[1]));
    MPI_OK(MPI_Isend(&out[0], 1, MPI_INT, me, 5, c[0], &rq[2]));
    MPI_OK(MPI_Isend(&out[1], 1, MPI_INT, me, 5, c[1], &rq[3]));
    rc = MPI_Testall(2, &rq[2], &flag, MPI_STATUSES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST && flag == -1,
          "MPI_Testall over sends of two sessions: rc %d class %d flag %d", rc, cls, flag);
    rc = MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    MPI_Error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == MPI_ERR_REQUEST,
          "MPI_Waitall over requests of two sessions: rc %d class %d", rc, cls);
    for (int i = 0; i < 4; i++) {
        CHECK(rq[i] != MPI_REQUEST_NULL, "request %d cleared by a call that failed", i);
        MPI_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    }
    CHECK(got[0] == 700 + me && got[1] == 800 + me, "received %d %d", got[0], got[1]);
    MPI_OK(MPI_Waitall(2, (MPI_Request[]){MPI_REQUEST_NULL, MPI_REQUEST_NULL}, MPI_STATUSES_IGNORE));
    MPI_Comm same;
    MPI_OK(MPI_Comm_dup(c[0], &same));
    MPI_OK(MPI_Comm_compare(c[0], same, &cmp));
    CHECK(cmp == MPI_CONGRUENT, "a dup of a session's communicator compares %d", cmp);
    MPI_OK(MPI_Comm_free(&same));
    int order[3] = {1, 2, 0};
    for (int k = 0; k < 3; k++) {
        MPI_OK(MPI_Comm_free(&c[order[k]]));
        MPI_OK(MPI_Session_finalize(&s[order[k]]));
    }
    expect_world_state(0, 0, "all sessions closed");

    /* The world model may start once every session is finalized. */
    MPI_OK(MPI_Init(NULL, NULL));
    expect_world_state(1, 0, "after MPI_Init");
    int size;
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK_INT(size, world_size);
    check_comm(MPI_COMM_WORLD, 20);
    MPI_OK(MPI_Finalize());
    expect_world_state(1, 1, "after MPI_Finalize");
    printf("core_session.loop: ok\n");
}

static void part_world(void)
{
    int provided;
    MPI_OK(MPI_Init_thread(NULL, NULL, MPI_THREAD_SINGLE, &provided));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    for (int iter = 0; iter < 3; iter++) {
        MPI_Session s;
        MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
        MPI_Comm c = comm_from_pset(s, "mpi://WORLD", "world-inner");
        int r;
        MPI_OK(MPI_Comm_rank(c, &r));
        CHECK_INT(r, rank);   /* the WORLD set is ordered as MPI_COMM_WORLD */
        check_comm(c, 30 + iter);
        check_comm(MPI_COMM_WORLD, 40 + iter);
        MPI_OK(MPI_Comm_free(&c));
        MPI_OK(MPI_Session_finalize(&s));
        expect_world_state(1, 0, "inside the world model");
    }
    /* A session outlives the world model. */
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm c = comm_from_pset(s, "mpi://WORLD", "world-outer");
    MPI_OK(MPI_Finalize());
    expect_world_state(1, 1, "session open after MPI_Finalize");
    check_comm(c, 50);
    MPI_Session s2;   /* and another may still open */
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    MPI_Comm c2 = comm_from_pset(s2, "mpi://WORLD", "world-late");
    check_comm(c2, 60);
    MPI_OK(MPI_Comm_free(&c2));
    MPI_OK(MPI_Session_finalize(&s2));
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Session_finalize(&s));
    expect_world_state(1, 1, "end");
    printf("core_session.world: ok\n");
}

static int eh_calls, eh_last_class;
static MPI_Session eh_expect;

static void session_eh(MPI_Session *s, int *code, ...)
{
    eh_calls++;
    MPI_Error_class(*code, &eh_last_class);
    if (*s != eh_expect)
        eh_last_class = -100;
}

static void part_errors(void)
{
    MPI_Errhandler eh;
    /* Creating a session's handler is allowed before anything else. */
    MPI_OK(MPI_Session_create_errhandler(session_eh, &eh));
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, eh, &s));
    eh_expect = s;
    /* Freeing the handle with only a session open (the session keeps its
     * own reference). */
    MPI_OK(MPI_Errhandler_free(&eh));
    CHECK(eh == MPI_ERRHANDLER_NULL, "handle not reset");

    /* A thread level that is none: refused, on the handler given. */
    MPI_Info bad;
    MPI_Session none = MPI_SESSION_NULL;
    MPI_OK(MPI_Info_create(&bad));
    MPI_OK(MPI_Info_set(bad, "thread_level", "THIS_IS_NOT_A_LEVEL"));
    int rc = MPI_Session_init(bad, MPI_ERRORS_RETURN, &none);
    int bad_cls = -1;
    MPI_Error_class(rc, &bad_cls);
    CHECK(rc != MPI_SUCCESS && bad_cls == MPI_ERR_INFO_VALUE && none == MPI_SESSION_NULL,
          "MPI_Session_init with thread_level THIS_IS_NOT_A_LEVEL: rc %d class %d", rc, bad_cls);
    MPI_OK(MPI_Info_free(&bad));

    int len = 0;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 99, &len, NULL);
    CHECK_INT(eh_calls, 1);
    CHECK_INT(eh_last_class, MPI_ERR_ARG);
    int cls;
    MPI_Error_class(rc, &cls);
    CHECK_INT(cls, MPI_ERR_ARG);
    MPI_Group g = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s, "mpi://nowhere", &g);
    CHECK_INT(eh_calls, 2);
    CHECK_INT(eh_last_class, MPI_ERR_ARG);
    CHECK(rc != MPI_SUCCESS && g == MPI_GROUP_NULL, "rc=%d", rc);
    MPI_Info pinfo;
    rc = MPI_Session_get_pset_info(s, "@qwerty", &pinfo);
    CHECK_INT(eh_calls, 3);
    MPI_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK_INT(eh_calls, 4);
    CHECK_INT(eh_last_class, MPI_ERR_OTHER);

    MPI_Errhandler got;
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got != MPI_ERRHANDLER_NULL && got != MPI_ERRORS_RETURN, "got %p", (void *)got);
    MPI_OK(MPI_Errhandler_free(&got));
    MPI_OK(MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == MPI_ERRORS_RETURN, "got %p", (void *)got);
    MPI_FAILS(MPI_ERR_ARG, MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, NULL));
    MPI_FAILS(MPI_ERR_ARG, MPI_Session_get_pset_info(s, NULL, &pinfo));
    CHECK_INT(eh_calls, 4);   /* the user handler is not there any more */

    /* Objects derived from a session work with only the session open. */
    MPI_Comm c = comm_from_pset(s, "mpi://WORLD", "errors");
    check_comm(c, 70);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Session_finalize(&s));

    /* Under the world model, with MPI_COMM_SELF returning errors: the
     * errors that name no valid session. */
    MPI_OK(MPI_Init(NULL, NULL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int n;
    MPI_FAILS(MPI_ERR_SESSION, MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n));
    MPI_FAILS(MPI_ERR_SESSION, MPI_Session_get_info(MPI_SESSION_NULL, &pinfo));
    MPI_FAILS(MPI_ERR_SESSION, MPI_Session_set_errhandler(MPI_SESSION_NULL, MPI_ERRORS_RETURN));
    MPI_Session null = MPI_SESSION_NULL;
    MPI_FAILS(MPI_ERR_SESSION, MPI_Session_finalize(&null));
    MPI_Errhandler ceh;
    MPI_OK(MPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)(void (*)(void))session_eh, &ceh));
    MPI_FAILS(MPI_ERR_ARG, MPI_Session_init(MPI_INFO_NULL, ceh, &s));
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_FAILS(MPI_ERR_ARG, MPI_Session_set_errhandler(s, ceh));
    MPI_OK(MPI_Errhandler_free(&ceh));
    MPI_OK(MPI_Session_finalize(&s));
    MPI_OK(MPI_Finalize());
    printf("core_session.errors: ok\n");
}

static void *thread_body(void *arg)
{
    int id = (int)(intptr_t)arg;
    MPI_Info in;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_Session s;
    MPI_OK(MPI_Session_init(in, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&in));
    char tag[32];
    snprintf(tag, sizeof tag, "thread-%d", id);
    for (int iter = 0; iter < 3; iter++) {
        MPI_Comm c = comm_from_pset(s, "mpi://WORLD", tag);
        check_comm(c, 100 * (id + 1) + iter);
        MPI_OK(MPI_Comm_free(&c));
    }
    MPI_OK(MPI_Session_finalize(&s));
    return NULL;
}

static void part_threads(void)
{
    MPI_Info in;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "thread_level", "MPI_THREAD_MULTIPLE"));
    MPI_OK(MPI_Info_set(in, "halo_test_hint", "kept"));
    MPI_Session s;
    MPI_OK(MPI_Session_init(in, MPI_ERRORS_RETURN, &s));
    MPI_OK(MPI_Info_free(&in));
    MPI_Info used;
    MPI_OK(MPI_Session_get_info(s, &used));
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    MPI_OK(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && !strcmp(v, "MPI_THREAD_MULTIPLE"), "thread_level %s", flag ? v : "(none)");
    MPI_OK(MPI_Info_free(&used));

    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, thread_body, (void *)(intptr_t)i) == 0, "thread %d", i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);

    /* A session that asks for less still runs at what the library provides. */
    MPI_Session low;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &low));
    MPI_OK(MPI_Session_get_info(low, &used));
    MPI_OK(MPI_Info_get(used, "thread_level", MPI_MAX_INFO_VAL, v, &flag));
    CHECK(flag && !strcmp(v, "MPI_THREAD_MULTIPLE"), "thread_level %s", flag ? v : "(none)");
    MPI_OK(MPI_Info_free(&used));
    MPI_OK(MPI_Session_finalize(&low));
    MPI_OK(MPI_Session_finalize(&s));
    printf("core_session.threads: ok\n");
}

static void bsend_round(MPI_Comm c, int salt)
{
    int size, rank;
    MPI_OK(MPI_Comm_size(c, &size));
    MPI_OK(MPI_Comm_rank(c, &rank));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3][100], in[100];
    for (int m = 0; m < 3; m++) {
        for (int i = 0; i < 100; i++)
            out[m][i] = salt + rank * 1000 + m * 100 + i;
        MPI_OK(MPI_Bsend(out[m], 100, MPI_INT, right, m, c));
        /* The copy was taken: the user's buffer may change at once. */
        memset(out[m], 0, sizeof out[m]);
    }
    for (int m = 0; m < 3; m++) {
        MPI_OK(MPI_Recv(in, 100, MPI_INT, left, m, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < 100; i++)
            CHECK(in[i] == salt + left * 1000 + m * 100 + i, "message %d in[%d]=%d", m, i, in[i]);
    }
}

static void part_bsend(void)
{
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Comm c = comm_from_pset(s, "mpi://WORLD", "bsend");
    int bufsize = 3 * (100 * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bufsize);
    MPI_OK(MPI_Session_attach_buffer(s, buf, bufsize));
    /* A second buffer on the same session is refused. */
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Session_attach_buffer(s, buf, bufsize));
    bsend_round(c, 1000000);
    MPI_OK(MPI_Session_flush_buffer(s));
    bsend_round(c, 2000000);
    MPI_Request r;
    MPI_OK(MPI_Session_iflush_buffer(s, &r));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    void *addr;
    int size;
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &size));
    CHECK(addr == buf && size == bufsize, "detached %p %d", addr, size);
    /* Without any buffer a buffered send fails. */
    int x = 1, sz, rk;
    MPI_OK(MPI_Comm_size(c, &sz));
    MPI_OK(MPI_Comm_rank(c, &rk));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(&x, 1, MPI_INT, (rk + 1) % sz, 9, c));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Session_detach_buffer(s, &addr, &size));
    MPI_OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    bsend_round(c, 3000000);
    MPI_OK(MPI_Session_detach_buffer(s, &addr, &size));
    CHECK(addr == MPI_BUFFER_AUTOMATIC && size == 0, "detached %p %d", addr, size);
    free(buf);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Session_finalize(&s));
    printf("core_session.bsend: ok\n");
}

/* The group of world ranks lo, lo + step, ... below hi. */
static MPI_Group range_group(MPI_Group world, int lo, int hi, int step)
{
    int ranks[3][3] = {{lo, hi - 1, step}};
    MPI_Group g;
    MPI_OK(MPI_Group_range_incl(world, 1, ranks, &g));
    return g;
}

static void part_groups(void)
{
    MPI_Session s;
    MPI_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    MPI_Group world;
    MPI_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    int rank, size;
    MPI_OK(MPI_Group_rank(world, &rank));
    MPI_OK(MPI_Group_size(world, &size));
    CHECK(size >= 4, "the groups part needs 4 or more ranks, not %d", size);
    int npairs = size / 2, pair = rank / 2;
    if (pair >= npairs)   /* odd size: the last rank joins the last pair */
        pair = npairs - 1;
    int lo = 2 * pair, hi = pair == npairs - 1 ? size : lo + 2;
    for (int round = 0; round < 2; round++) {
        const char *tag = round ? "groups-again" : "groups";
        if (rank == 1)
            usleep(200 * 1000);
        MPI_Group pg = range_group(world, lo, hi, 1);
        MPI_Comm pc;
        MPI_OK(MPI_Comm_create_from_group(pg, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &pc));
        MPI_OK(MPI_Group_free(&pg));
        int sum = -1;
        MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, pc));
        CHECK_INT(sum, (hi - 1) * hi / 2 - (lo - 1) * lo / 2);
        check_comm(pc, 70 + round);
        if (rank == lo) {
            MPI_Group fg = range_group(world, 0, 2 * npairs, 2);
            MPI_Comm fc;
            MPI_OK(MPI_Comm_create_from_group(fg, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &fc));
            MPI_OK(MPI_Group_free(&fg));
            MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, fc));
            CHECK_INT(sum, npairs * (npairs - 1));
            check_comm(fc, 80 + round);
            MPI_OK(MPI_Comm_free(&fc));
        }
        MPI_OK(MPI_Comm_free(&pc));
    }
    /* Intercommunicators between pairs 2k and 2k + 1, all under one tag,
     * after the pairs' own communicators above (same tag as round 0). */
    int other = pair ^ 1;
    if (other < npairs) {
        int olo = 2 * other, ohi = other == npairs - 1 ? size : olo + 2;
        if (rank == 1)
            usleep(200 * 1000);
        MPI_Group lg = range_group(world, lo, hi, 1), rg = range_group(world, olo, ohi, 1);
        MPI_Comm ic;
        MPI_OK(MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "groups", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                                &ic));
        MPI_OK(MPI_Group_free(&lg));
        MPI_OK(MPI_Group_free(&rg));
        int rsize = -1, sum = -1;
        MPI_OK(MPI_Comm_remote_size(ic, &rsize));
        CHECK_INT(rsize, ohi - olo);
        MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, ic));
        CHECK_INT(sum, (ohi - 1) * ohi / 2 - (olo - 1) * olo / 2);
        MPI_OK(MPI_Comm_free(&ic));
    }
    MPI_OK(MPI_Group_free(&world));
    MPI_OK(MPI_Session_finalize(&s));
    if (rank == 0)
        printf("core_session.groups: ok\n");
}

int main(int argc, char **argv)
{
    const char *part = argc > 1 ? argv[1] : "loop";
    if (!strcmp(part, "loop"))
        part_loop();
    else if (!strcmp(part, "world"))
        part_world();
    else if (!strcmp(part, "errors"))
        part_errors();
    else if (!strcmp(part, "threads"))
        part_threads();
    else if (!strcmp(part, "bsend"))
        part_bsend();
    else if (!strcmp(part, "groups"))
        part_groups();
    else {
        fprintf(stderr, "core_session: unknown part %s\n", part);
        return 2;
    }
    return 0;
}
