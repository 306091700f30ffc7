/* Generalized requests (MPI_Grequest_start/complete):
 *  - not complete until MPI_Grequest_complete; then Wait/Test call the
 *    query callback once and return the status it set (source, tag,
 *    elements, cancelled), then call the free callback once, after query;
 *  - Request_get_status calls query but does not free;
 *  - MPI_Request_free before completion: free_fn runs only once the
 *    request is also completed (at MPI_Grequest_complete), not before;
 *  - MPI_Cancel calls cancel_fn with complete=false before completion and
 *    complete=true after it;
 *  - an error returned by query_fn is what MPI_Wait returns;
 *  - completion from another thread wakes a thread blocked in MPI_Wait;
 *  - mixed with ordinary requests in Waitall/Waitany.
 * Arguments select parts: basic free cancel error thread (default all).
 * Every rank runs this on its own (MPI_COMM_SELF-style, no messages other
 * than the mixed Waitall part, which sends to itself). */
#include "mpitest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

typedef struct state {
    int query_calls, free_calls, cancel_calls;
    int last_cancel_complete;
    int order;            /* sequence counter for callback order */
    int query_at, free_at;
    int source, tag, elements;
    int cancelled;        /* set by cancel_fn, reported by query_fn */
    int query_rc;
} state_t;

static int query_fn(void *extra, MPI_Status *st)
{
    state_t *s = extra;
    s->query_calls++;
    s->query_at = ++s->order;
    MPI_Status_set_source(st, s->source);
    MPI_Status_set_tag(st, s->tag);
    MPI_Status_set_elements(st, MPI_INT, s->elements);
    MPI_Status_set_cancelled(st, s->cancelled);
    MPI_Status_set_error(st, MPI_SUCCESS);
    return s->query_rc;
}

static int free_fn(void *extra)
{
    state_t *s = extra;
    s->free_calls++;
    s->free_at = ++s->order;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    s->cancel_calls++;
    s->last_cancel_complete = complete;
    if (!complete)
        s->cancelled = 1;
    return MPI_SUCCESS;
}

static void init_state(state_t *s, int source, int tag, int elements)
{
    memset(s, 0, sizeof *s);
    s->source = source;
    s->tag = tag;
    s->elements = elements;
    s->query_rc = MPI_SUCCESS;
}

static void check_status(const MPI_Status *st, const state_t *s, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    MPI_OK(MPI_Test_cancelled(st, &cancelled));
    CHECK(st->MPI_SOURCE == s->source && st->MPI_TAG == s->tag && count == s->elements &&
          cancelled == s->cancelled,
          "%s: status (source %d, tag %d, count %d, cancelled %d), query_fn set (%d, %d, %d, %d)",
          what, st->MPI_SOURCE, st->MPI_TAG, count, cancelled, s->source, s->tag, s->elements,
          s->cancelled);
}

static void basic(void)
{
    state_t s;
    init_state(&s, 5, 77, 3);
    MPI_Request r;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    int flag = -1;
    MPI_Status st;
    for (int k = 0; k < 10; k++) {
        MPI_OK(MPI_Test(&r, &flag, &st));
        CHECK(flag == 0, "Test says a generalized request is complete before Grequest_complete");
    }
    CHECK(s.free_calls == 0, "free_fn called before completion");
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 1, "Request_get_status after Grequest_complete: flag %d", flag);
    CHECK(s.query_calls >= 1, "Request_get_status did not call query_fn");
    CHECK(s.free_calls == 0, "Request_get_status called free_fn");
    check_status(&st, &s, "Request_get_status");
    int q = s.query_calls;
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL, "Wait did not free the generalized request");
    CHECK(s.query_calls == q + 1, "Wait called query_fn %d times", s.query_calls - q);
    CHECK(s.free_calls == 1, "Wait called free_fn %d times", s.free_calls);
    CHECK(s.free_at > s.query_at, "free_fn ran before query_fn");
    check_status(&st, &s, "Wait");
    CHECK(s.cancel_calls == 0, "cancel_fn called without MPI_Cancel");

    /* Test after completion. */
    init_state(&s, 1, 2, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1 && r == MPI_REQUEST_NULL && s.query_calls == 1 && s.free_calls == 1,
          "Test of a completed generalized request: flag %d, query %d, free %d", flag,
          s.query_calls, s.free_calls);
    check_status(&st, &s, "Test");
}

static void free_before_complete(void)
{
    state_t s;
    init_state(&s, 0, 0, 0);
    MPI_Request r, keep;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    keep = r;
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free did not reset the handle");
    CHECK(s.free_calls == 0,
          "free_fn ran at MPI_Request_free although the request is not complete (it must run "
          "when both Request_free and Grequest_complete have happened)");
    MPI_OK(MPI_Grequest_complete(keep));
    CHECK(s.free_calls == 1, "free_fn ran %d times after Request_free and Grequest_complete",
          s.free_calls);

    /* Other order: complete, then free: free_fn at Request_free. */
    init_state(&s, 0, 0, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    CHECK(s.free_calls == 0, "free_fn ran at Grequest_complete of a request not freed");
    MPI_OK(MPI_Request_free(&r));
    CHECK(s.free_calls == 1, "free_fn ran %d times", s.free_calls);
}

static void cancel(void)
{
    state_t s;
    init_state(&s, 3, 4, 0);
    MPI_Request r;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(s.cancel_calls == 1 && s.last_cancel_complete == 0,
          "Cancel of a pending generalized request: cancel_fn calls %d, complete=%d",
          s.cancel_calls, s.last_cancel_complete);
    MPI_OK(MPI_Grequest_complete(r));
    MPI_Status st;
    MPI_OK(MPI_Wait(&r, &st));
    int c = -1;
    MPI_OK(MPI_Test_cancelled(&st, &c));
    CHECK(c == 1, "query_fn marked the request cancelled but Test_cancelled says %d", c);
    check_status(&st, &s, "Wait of a cancelled generalized request");

    init_state(&s, 3, 4, 0);
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_OK(MPI_Cancel(&r));
    CHECK(s.cancel_calls == 1 && s.last_cancel_complete == 1,
          "Cancel of a completed generalized request: cancel_fn calls %d, complete=%d (the "
          "standard passes complete=true once Grequest_complete was called)",
          s.cancel_calls, s.last_cancel_complete);
    MPI_OK(MPI_Wait(&r, &st));
    MPI_OK(MPI_Test_cancelled(&st, &c));
    CHECK(c == 0, "Test_cancelled %d for a request that completed before the cancel", c);
}

static void query_error(void)
{
    state_t s;
    init_state(&s, 0, 0, 0);
    s.query_rc = MPI_ERR_OTHER;
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r;
    MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
    MPI_OK(MPI_Grequest_complete(r));
    MPI_Status st;
    int rc = MPI_Wait(&r, &st);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "query_fn returned MPI_ERR_OTHER, Wait returned class %d", cls);
    CHECK(s.free_calls == 1 && r == MPI_REQUEST_NULL, "after a query error: free_fn calls %d",
          s.free_calls);
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

static void *completer(void *arg)
{
    struct timespec ts = {0, 150 * 1000 * 1000};
    nanosleep(&ts, NULL);
    MPI_OK(MPI_Grequest_complete(*(MPI_Request *)arg));
    return NULL;
}

static void other_thread(void)
{
    for (int use_waitall = 0; use_waitall < 2; use_waitall++) {
        state_t s;
        init_state(&s, 9, 10, 1);
        MPI_Request r[3];
        int rank, x = 5, y = -1;
        MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
        MPI_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r[0]));
        MPI_OK(MPI_Irecv(&y, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Isend(&x, 1, MPI_INT, rank, 99, MPI_COMM_WORLD, &r[2]));
        MPI_Request copy = r[0];
        /* The clock starts before the thread: its completion comes at
         * least 150 ms later. */
        double t0 = MPI_Wtime();
        pthread_t t;
        pthread_create(&t, NULL, completer, &copy);
        MPI_Status st[3];
        if (use_waitall) {
            MPI_OK(MPI_Waitall(3, r, st));
        } else {
            /* Both ordinary requests finish first; the last is the greq. */
            int idx, seen = 0;
            for (int k = 0; k < 3; k++) {
                MPI_OK(MPI_Waitany(3, r, &idx, &st[0]));
                seen |= 1 << idx;
                if (idx == 0)
                    check_status(&st[0], &s, "Waitany of a generalized request");
            }
            CHECK(seen == 7, "Waitany returned indices %x", seen);
        }
        double dt = MPI_Wtime() - t0;
        pthread_join(t, NULL);
        CHECK(dt > 0.14, "wait returned after %.3f s, before the other thread completed the "
              "generalized request (150 ms)", dt);
        CHECK(dt < 2.0, "wait took %.3f s to notice a completion from another thread", dt);
        CHECK(y == 5 && s.query_calls == 1 && s.free_calls == 1,
              "after the wait: y %d, query %d, free %d", y, s.query_calls, s.free_calls);
        if (use_waitall)
            check_status(&st[0], &s, "Waitall of a generalized request");
    }
}

int main(int argc, char **argv)
{
    int provided;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    /* Arguments name the parts to run (all by default), so that each part
     * can be registered as its own test. */
    static const struct {
        const char *name;
        void (*fn)(void);
    } parts[] = {{"basic", basic}, {"free", free_before_complete}, {"cancel", cancel},
                 {"error", query_error}, {"thread", other_thread}};
    int nparts = (int)(sizeof parts / sizeof parts[0]);
    for (int i = 0; i < nparts; i++) {
        int run = argc <= 1;
        for (int a = 1; a < argc; a++)
            run |= !strcmp(argv[a], parts[i].name);
        if (run)
            parts[i].fn();
    }
    for (int a = 1; a < argc; a++) {
        int known = 0;
        for (int i = 0; i < nparts; i++)
            known |= !strcmp(argv[a], parts[i].name);
        CHECK(known, "unknown part %s", argv[a]);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    if (rank == 0)
        printf("p2p_grequest: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
