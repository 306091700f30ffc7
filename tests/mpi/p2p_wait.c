/* The completion calls with mixes of active, null, already-complete and
 * inactive persistent requests, where the helper rank holds back some
 * messages until told to send them, so that which requests can be complete
 * at each call is known:
 *  - Wait/Test on MPI_REQUEST_NULL give the empty status at once;
 *  - Waitall/Testall (Testall with flag 0 leaves the handles alone);
 *  - Waitany/Testany (index of the one that completed; MPI_UNDEFINED when
 *    none is active);
 *  - Waitsome/Testsome (only indices of messages that were sent;
 *    MPI_UNDEFINED when none is active);
 *  - Request_get_status (and its _any/_all/_some forms) does not free;
 *  - Request_free of a pending send: the message is still delivered;
 *  - Cancel of an unmatched receive (Test_cancelled true, the message goes
 *    to a later receive), of a matched one (false), of a persistent one,
 *    and of a send (either outcome, but the receiver must agree).
 * Ranks work in pairs (even rank tests, odd rank helps). */
#include <string.h>

#include "mpitest.h"

#include <stdint.h>

enum { TAG_GO = 1000 };

static int rank, size, partner;

static void go(void)
{
    MPI_OK(MPI_Send(NULL, 0, MPI_BYTE, partner, TAG_GO, MPI_COMM_WORLD));
}

static void wait_go(void)
{
    MPI_OK(MPI_Recv(NULL, 0, MPI_BYTE, partner, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

static void send_int(int v, int tag)
{
    MPI_OK(MPI_Send(&v, 1, MPI_INT, partner, tag, MPI_COMM_WORLD));
}

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1, cancelled = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    MPI_OK(MPI_Test_cancelled(st, &cancelled));
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
          !cancelled && st->MPI_ERROR == MPI_SUCCESS,
          "%s: not the empty status (source %d, tag %d, count %d, cancelled %d, error %d)", what,
          st->MPI_SOURCE, st->MPI_TAG, count, cancelled, st->MPI_ERROR);
}

static void check_recv_status(const MPI_Status *st, int tag, int count, const char *what)
{
    int c = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &c));
    CHECK(st->MPI_SOURCE == partner && st->MPI_TAG == tag && c == count,
          "%s: status (source %d, tag %d, count %d), expected (%d, %d, %d)", what, st->MPI_SOURCE,
          st->MPI_TAG, c, partner, tag, count);
}

/* A status the call must overwrite: every field wrong, MPI_ERROR too (the
 * empty status has MPI_ERROR == MPI_SUCCESS). */
static void spoil(MPI_Status *st)
{
    memset(st, 0x5a, sizeof *st);
    st->MPI_ERROR = MPI_ERR_OTHER;
}

static void null_requests(void)
{
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    spoil(&st);
    MPI_OK(MPI_Wait(&r, &st));
    check_empty(&st, "Wait(MPI_REQUEST_NULL)");
    int flag = 0;
    spoil(&st);
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1, "Test(MPI_REQUEST_NULL) flag %d", flag);
    check_empty(&st, "Test(MPI_REQUEST_NULL)");
    spoil(&st);
    MPI_OK(MPI_Request_get_status(r, &flag, &st));
    CHECK(flag == 1, "Request_get_status(MPI_REQUEST_NULL) flag %d", flag);
    check_empty(&st, "Request_get_status(MPI_REQUEST_NULL)");
}

/* Waitall over [NULL, recv, NULL, send, send to PROC_NULL, inactive
 * persistent]; then Testall that must say 0 until the helper sends. */
static void all_forms(void)
{
    int rbuf = -1, sval = 1000 + rank, dummy = 0;
    if (rank % 2 == 0) {
        MPI_Request pers;
        MPI_OK(MPI_Recv_init(&dummy, 1, MPI_INT, partner, 77, MPI_COMM_WORLD, &pers));
        MPI_Request r[6] = {MPI_REQUEST_NULL};
        MPI_OK(MPI_Irecv(&rbuf, 1, MPI_INT, partner, 10, MPI_COMM_WORLD, &r[1]));
        r[2] = MPI_REQUEST_NULL;
        MPI_OK(MPI_Isend(&sval, 1, MPI_INT, partner, 11, MPI_COMM_WORLD, &r[3]));
        MPI_OK(MPI_Isend(&sval, 1, MPI_INT, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &r[4]));
        r[5] = pers;
        MPI_Status st[6];
        MPI_OK(MPI_Waitall(6, r, st));
        for (int i = 0; i < 5; i++)
            CHECK(r[i] == MPI_REQUEST_NULL, "Waitall left request %d set", i);
        CHECK(r[5] == pers, "Waitall changed the handle of an inactive persistent request");
        check_empty(&st[0], "Waitall status of MPI_REQUEST_NULL");
        check_empty(&st[2], "Waitall status of MPI_REQUEST_NULL");
        check_empty(&st[5], "Waitall status of an inactive persistent request");
        check_recv_status(&st[1], 10, 1, "Waitall receive");
        CHECK(rbuf == 2000 + partner, "Waitall receive got %d", rbuf);
        MPI_OK(MPI_Request_free(&pers));
        CHECK(pers == MPI_REQUEST_NULL, "Request_free did not reset the handle");

        /* Testall: the message with tag 12 comes only after go(). */
        MPI_OK(MPI_Irecv(&rbuf, 1, MPI_INT, partner, 12, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(&sval, 1, MPI_INT, MPI_PROC_NULL, 11, MPI_COMM_WORLD, &r[1]));
        r[2] = MPI_REQUEST_NULL;
        MPI_Request saved[3] = {r[0], r[1], r[2]};
        for (int k = 0; k < 50; k++) {
            int flag = -1;
            MPI_OK(MPI_Testall(3, r, &flag, st));
            CHECK(flag == 0, "Testall says complete before the message was sent");
            CHECK(r[0] == saved[0] && r[1] == saved[1] && r[2] == saved[2],
                  "Testall with flag 0 changed the request handles");
        }
        go();
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Testall(3, r, &flag, st));
        CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL,
              "Testall with flag 1 left requests set");
        check_recv_status(&st[0], 12, 1, "Testall receive");
        CHECK(rbuf == 3000 + partner, "Testall receive got %d", rbuf);
        check_empty(&st[2], "Testall status of MPI_REQUEST_NULL");
        /* All null: complete at once. */
        MPI_OK(MPI_Testall(3, r, &flag, st));
        CHECK(flag == 1, "Testall over null requests says flag %d", flag);
        MPI_OK(MPI_Waitall(3, r, st));
    } else {
        send_int(2000 + rank, 10);
        MPI_OK(MPI_Recv(&rbuf, 1, MPI_INT, partner, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(rbuf == 1000 + partner, "helper got %d", rbuf);
        wait_go();
        send_int(3000 + rank, 12);
    }
}

/* Waitany/Testany: B (tag 21) is sent at once, A (tag 20) only after go. */
static void any_forms(void)
{
    if (rank % 2 == 0) {
        for (int use_test = 0; use_test < 2; use_test++) {
            int a = -1, b = -1;
            MPI_Request r[4] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL,
                                MPI_REQUEST_NULL};
            MPI_OK(MPI_Irecv(&a, 1, MPI_INT, partner, 20, MPI_COMM_WORLD, &r[1]));
            MPI_OK(MPI_Irecv(&b, 1, MPI_INT, partner, 21, MPI_COMM_WORLD, &r[2]));
            int idx = -5, flag = 0;
            MPI_Status st;
            const char *what = use_test ? "Testany" : "Waitany";
            if (use_test) {
                while (!flag) {
                    MPI_OK(MPI_Testany(4, r, &idx, &flag, &st));
                    if (!flag)
                        CHECK(idx == MPI_UNDEFINED, "Testany with flag 0 gave index %d", idx);
                }
            } else {
                MPI_OK(MPI_Waitany(4, r, &idx, &st));
            }
            CHECK(idx == 2, "%s returned index %d; only the message of index 2 was sent", what, idx);
            CHECK(r[2] == MPI_REQUEST_NULL && r[1] != MPI_REQUEST_NULL,
                  "%s freed the wrong request", what);
            check_recv_status(&st, 21, 1, what);
            CHECK(b == 21 + 100 * use_test, "%s: received %d", what, b);
            /* Nothing else can complete yet. */
            for (int k = 0; k < 20; k++) {
                MPI_OK(MPI_Testany(4, r, &idx, &flag, &st));
                CHECK(flag == 0 && idx == MPI_UNDEFINED,
                      "Testany says index %d is complete before its message was sent", idx);
            }
            go();
            if (use_test) {
                flag = 0;
                while (!flag)
                    MPI_OK(MPI_Testany(4, r, &idx, &flag, &st));
            } else {
                MPI_OK(MPI_Waitany(4, r, &idx, &st));
            }
            CHECK(idx == 1, "%s returned index %d, expected 1", what, idx);
            check_recv_status(&st, 20, 1, what);
            CHECK(a == 20 + 100 * use_test, "%s: received %d", what, a);
            /* None active. */
            if (use_test) {
                MPI_OK(MPI_Testany(4, r, &idx, &flag, &st));
                CHECK(flag == 1 && idx == MPI_UNDEFINED,
                      "Testany over null requests: flag %d index %d", flag, idx);
            } else {
                MPI_OK(MPI_Waitany(4, r, &idx, &st));
                CHECK(idx == MPI_UNDEFINED, "Waitany over null requests: index %d", idx);
            }
            check_empty(&st, "status of Wait/Testany over null requests");
            MPI_OK(MPI_Waitany(0, NULL, &idx, &st));
            CHECK(idx == MPI_UNDEFINED, "Waitany of 0 requests: index %d", idx);
        }
    } else {
        for (int use_test = 0; use_test < 2; use_test++) {
            send_int(21 + 100 * use_test, 21);
            wait_go();
            send_int(20 + 100 * use_test, 20);
        }
    }
}

/* Waitsome/Testsome over 8 receives (tags 30..37) and 2 null handles; the
 * helper sends the even tags first and the odd ones after go. */
#define NSOME 10
static void some_forms(void)
{
    if (rank % 2 == 0) {
        for (int use_test = 0; use_test < 2; use_test++) {
            const char *what = use_test ? "Testsome" : "Waitsome";
            int v[NSOME];
            MPI_Request r[NSOME];
            int done[NSOME] = {0};
            for (int i = 0; i < NSOME; i++) {
                v[i] = -1;
                r[i] = MPI_REQUEST_NULL;
                if (i != 3 && i != 6)
                    MPI_OK(MPI_Irecv(&v[i], 1, MPI_INT, partner, 30 + i, MPI_COMM_WORLD, &r[i]));
            }
            int got = 0, expect_first = 0;
            for (int i = 0; i < NSOME; i++)
                if (i != 3 && i != 6 && i % 2 == 0)
                    expect_first++;
            int outcount, idx[NSOME];
            MPI_Status st[NSOME];
            for (int phase = 0; phase < 2; phase++) {
                int target = phase == 0 ? expect_first : NSOME - 2;
                while (got < target) {
                    if (use_test)
                        MPI_OK(MPI_Testsome(NSOME, r, &outcount, idx, st));
                    else
                        MPI_OK(MPI_Waitsome(NSOME, r, &outcount, idx, st));
                    CHECK(outcount != MPI_UNDEFINED, "%s: MPI_UNDEFINED with requests active", what);
                    if (!use_test)
                        CHECK(outcount >= 1, "Waitsome returned %d completions", outcount);
                    for (int k = 0; k < outcount; k++) {
                        int i = idx[k];
                        CHECK(i >= 0 && i < NSOME && i != 3 && i != 6 && !done[i],
                              "%s gave index %d", what, i);
                        if (phase == 0)
                            CHECK(i % 2 == 0, "%s: index %d completed before its message was sent",
                                  what, i);
                        CHECK(r[i] == MPI_REQUEST_NULL, "%s left request %d set", what, i);
                        check_recv_status(&st[k], 30 + i, 1, what);
                        CHECK(v[i] == 500 + i, "%s: request %d received %d", what, i, v[i]);
                        done[i] = 1;
                        got++;
                    }
                }
                if (phase == 0)
                    go();
            }
            if (use_test)
                MPI_OK(MPI_Testsome(NSOME, r, &outcount, idx, st));
            else
                MPI_OK(MPI_Waitsome(NSOME, r, &outcount, idx, st));
            CHECK(outcount == MPI_UNDEFINED, "%s over null requests: outcount %d", what, outcount);
        }
    } else {
        for (int use_test = 0; use_test < 2; use_test++) {
            for (int i = 0; i < NSOME; i += 2)
                if (i != 6)
                    send_int(500 + i, 30 + i);
            wait_go();
            for (int i = 1; i < NSOME; i += 2)
                if (i != 3)
                    send_int(500 + i, 30 + i);
        }
    }
}

static void get_status(void)
{
    if (rank % 2 == 0) {
        int v = -1;
        MPI_Request r;
        MPI_Status st;
        MPI_OK(MPI_Irecv(&v, 1, MPI_INT, partner, 40, MPI_COMM_WORLD, &r));
        int flag = 0;
        for (int k = 0; k < 20; k++) {
            MPI_OK(MPI_Request_get_status(r, &flag, &st));
            CHECK(flag == 0, "Request_get_status complete before the message was sent");
        }
        go();
        while (!flag)
            MPI_OK(MPI_Request_get_status(r, &flag, &st));
        CHECK(r != MPI_REQUEST_NULL, "Request_get_status freed the request");
        check_recv_status(&st, 40, 1, "Request_get_status");
        /* Again: still there, same answer. */
        MPI_OK(MPI_Request_get_status(r, &flag, &st));
        CHECK(flag == 1, "second Request_get_status says not complete");
        check_recv_status(&st, 40, 1, "second Request_get_status");
        MPI_OK(MPI_Wait(&r, &st));
        check_recv_status(&st, 40, 1, "Wait after Request_get_status");
        CHECK(r == MPI_REQUEST_NULL && v == 41, "Wait after Request_get_status: v %d", v);
    } else {
        wait_go();
        send_int(41, 40);
    }
}

/* The MPI 4.1 array forms of Request_get_status: like Test{any,all,some}
 * but nothing is freed. Tags 42..44; the helper sends 43 at once and the
 * others after go. */
static void get_status_arrays(void)
{
    if (rank % 2 == 0) {
        int v[3] = {-1, -1, -1}, idx = -5, flag = -1, outcount = -1, indices[3];
        MPI_Request r[3];
        MPI_Status st, sts[3];
        for (int i = 0; i < 3; i++)
            MPI_OK(MPI_Irecv(&v[i], 1, MPI_INT, partner, 42 + i, MPI_COMM_WORLD, &r[i]));
        MPI_Request saved[3] = {r[0], r[1], r[2]};
        flag = 0;
        while (!flag)
            MPI_OK(MPI_Request_get_status_any(3, r, &idx, &flag, &st));
        CHECK(idx == 1, "Request_get_status_any gave index %d; only 1 was sent", idx);
        check_recv_status(&st, 43, 1, "Request_get_status_any");
        MPI_OK(MPI_Request_get_status_all(3, r, &flag, sts));
        CHECK(flag == 0, "Request_get_status_all says all complete before 2 were sent");
        MPI_OK(MPI_Request_get_status_some(3, r, &outcount, indices, sts));
        CHECK(outcount == 1 && indices[0] == 1, "Request_get_status_some: %d, first index %d",
              outcount, indices[0]);
        check_recv_status(&sts[0], 43, 1, "Request_get_status_some");
        CHECK(r[0] == saved[0] && r[1] == saved[1] && r[2] == saved[2],
              "Request_get_status_* changed request handles");
        go();
        flag = 0;
        while (!flag)
            MPI_OK(MPI_Request_get_status_all(3, r, &flag, sts));
        for (int i = 0; i < 3; i++)
            check_recv_status(&sts[i], 42 + i, 1, "Request_get_status_all");
        MPI_OK(MPI_Request_get_status_some(3, r, &outcount, indices, sts));
        CHECK(outcount == 3, "Request_get_status_some over 3 complete requests: %d", outcount);
        CHECK(r[0] == saved[0] && r[1] == saved[1] && r[2] == saved[2],
              "Request_get_status_* freed requests");
        MPI_OK(MPI_Waitall(3, r, sts));
        for (int i = 0; i < 3; i++) {
            check_recv_status(&sts[i], 42 + i, 1, "Waitall after Request_get_status_all");
            CHECK(v[i] == 420 + i, "receive %d got %d", i, v[i]);
        }
        MPI_Request nulls[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        spoil(&st);
        MPI_OK(MPI_Request_get_status_any(2, nulls, &idx, &flag, &st));
        CHECK(flag == 1 && idx == MPI_UNDEFINED, "Request_get_status_any over null requests: "
              "flag %d index %d", flag, idx);
        check_empty(&st, "Request_get_status_any over null requests");
        spoil(&sts[0]);
        spoil(&sts[1]);
        MPI_OK(MPI_Request_get_status_all(2, nulls, &flag, sts));
        CHECK(flag == 1, "Request_get_status_all over null requests: flag %d", flag);
        check_empty(&sts[0], "Request_get_status_all status 0 of null requests");
        check_empty(&sts[1], "Request_get_status_all status 1 of null requests");
        spoil(&st);
        MPI_OK(MPI_Waitany(2, nulls, &idx, &st));
        CHECK(idx == MPI_UNDEFINED, "Waitany over null requests: index %d", idx);
        check_empty(&st, "Waitany over null requests");
        MPI_OK(MPI_Request_get_status_some(2, nulls, &outcount, indices, sts));
        CHECK(outcount == MPI_UNDEFINED, "Request_get_status_some over null requests: %d",
              outcount);
    } else {
        send_int(421, 43);
        wait_go();
        send_int(420, 42);
        send_int(422, 44);
    }
}

/* Request_free on pending sends (eager and rendezvous, standard and
 * synchronous): the helper receives only after a barrier, and the data
 * must be there. */
static void free_pending(void)
{
    const int big = 1 << 18; /* ints: 1 MiB */
    int *b = malloc(sizeof(int) * big);
    if (rank % 2 == 0) {
        for (int i = 0; i < big; i++)
            b[i] = i ^ 0x5a5a;
        MPI_Request r[4];
        MPI_OK(MPI_Isend(b, 1, MPI_INT, partner, 50, MPI_COMM_WORLD, &r[0]));
        MPI_OK(MPI_Isend(b, big, MPI_INT, partner, 51, MPI_COMM_WORLD, &r[1]));
        MPI_OK(MPI_Issend(b, 4, MPI_INT, partner, 52, MPI_COMM_WORLD, &r[2]));
        MPI_OK(MPI_Issend(b, big, MPI_INT, partner, 53, MPI_COMM_WORLD, &r[3]));
        for (int i = 0; i < 4; i++) {
            MPI_OK(MPI_Request_free(&r[i]));
            CHECK(r[i] == MPI_REQUEST_NULL, "Request_free did not reset handle %d", i);
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank % 2 == 1) {
        int n[4] = {1, big, 4, big};
        for (int k = 3; k >= 0; k--) {
            MPI_Status st;
            memset(b, 0, sizeof(int) * (size_t)big);
            MPI_OK(MPI_Recv(b, big, MPI_INT, partner, 50 + k, MPI_COMM_WORLD, &st));
            check_recv_status(&st, 50 + k, n[k], "receive of a freed send");
            for (int i = 0; i < n[k]; i++)
                if (b[i] != (i ^ 0x5a5a))
                    MT_FAIL("message of a freed send (tag %d): int %d is %d", 50 + k, i, b[i]);
        }
        go();
    } else {
        /* The buffer must stay until the helper has it all. */
        wait_go();
    }
    free(b);
}

static void cancels(void)
{
    int cancelled = -1;
    MPI_Status st;
    if (rank % 2 == 0) {
        /* Unmatched receive: cancelled; the message sent later goes to the
         * next receive and leaves the cancelled one's buffer alone. */
        int v = -1, w = -1;
        MPI_Request r;
        MPI_OK(MPI_Irecv(&v, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 1, "cancel of an unmatched receive: Test_cancelled %d", cancelled);
        /* Same with Test instead of Wait, and ANY_SOURCE. */
        MPI_OK(MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Test(&r, &flag, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 1, "cancel of an unmatched wildcard receive: Test_cancelled %d",
              cancelled);
        go();
        MPI_OK(MPI_Recv(&w, 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &st));
        CHECK(w == 61 && v == -1, "after cancels: new receive got %d, cancelled buffer holds %d",
              w, v);
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 0, "a normal receive says Test_cancelled %d", cancelled);

        /* Matched receive: cancel has no effect. */
        MPI_OK(MPI_Irecv(&v, 1, MPI_INT, partner, 62, MPI_COMM_WORLD, &r));
        go();
        flag = 0;
        while (!flag)
            MPI_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Cancel(&r));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 0 && v == 63, "cancel of a completed receive: Test_cancelled %d, got %d",
              cancelled, v);
        check_recv_status(&st, 62, 1, "completed receive after Cancel");

        /* Persistent receive: cancel one activation, the next works. */
        MPI_OK(MPI_Recv_init(&v, 1, MPI_INT, partner, 64, MPI_COMM_WORLD, &r));
        v = -1;
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Cancel(&r));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 1, "cancel of a started persistent receive: Test_cancelled %d", cancelled);
        CHECK(r != MPI_REQUEST_NULL, "Wait freed a cancelled persistent request");
        MPI_OK(MPI_Start(&r));
        go();
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        CHECK(cancelled == 0 && v == 65, "persistent receive after a cancel: cancelled %d, got %d",
              cancelled, v);
        MPI_OK(MPI_Request_free(&r));

        /* Send: the library may or may not cancel it; tell the helper
         * which, and it checks. */
        int s = 66;
        MPI_OK(MPI_Isend(&s, 1, MPI_INT, partner, 66, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        MPI_OK(MPI_Wait(&r, &st));
        MPI_OK(MPI_Test_cancelled(&st, &cancelled));
        send_int(cancelled, 67);
        /* A marker on the same tag: it comes after the original, if that
         * was not cancelled. */
        send_int(-66, 66);
    } else {
        wait_go();
        send_int(61, 60);
        wait_go();
        send_int(63, 62);
        wait_go();
        send_int(65, 64);
        int c = -1, v = -1;
        MPI_OK(MPI_Recv(&c, 1, MPI_INT, partner, 67, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(c == 0 || c == 1, "Test_cancelled gave %d", c);
        if (c == 0) {
            MPI_OK(MPI_Recv(&v, 1, MPI_INT, partner, 66, MPI_COMM_WORLD, &st));
            CHECK(v == 66, "send that was not cancelled delivered %d", v);
        }
        MPI_OK(MPI_Recv(&v, 1, MPI_INT, partner, 66, MPI_COMM_WORLD, &st));
        CHECK(v == -66, "expected the marker after the %s send, got %d",
              c ? "cancelled" : "delivered", v);
    }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    partner = rank ^ 1;
    null_requests();
    if (partner < size) {
        all_forms();
        any_forms();
        some_forms();
        get_status();
        get_status_arrays();
        cancels();
    }
    if (partner < size) {
        free_pending();
    } else {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_wait: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
