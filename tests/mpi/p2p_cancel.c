/* MPI_Cancel of sends: either the send is cancelled and its message is
 * never received, or it completes and its message is received whole; a
 * wait on a cancelled send returns whatever the receiver does next.
 *
 * Rank 0 sends to the last rank (which may be rank 0 itself at 1 rank);
 * every other rank only joins the barriers. After each cancel the sender
 * tells the receiver the outcome in a message on the same pair (it travels
 * behind the cancel request), and the receiver then checks with Iprobe
 * that a cancelled message is gone, or receives and checks an uncancelled
 * one.
 *  - unmatched: rendezvous sends (1 MiB, and a strided type), synchronous
 *    sends (0 B, 64 B, 1 MiB), persistent ones restarted after a cancel
 *    (the restart is received): Halo cancels each of them;
 *  - a send queued behind a full channel (eager sends the receiver does not
 *    take yet): if it had not left when cancelled, it is cancelled;
 *  - matched first (the receiver took the message, then the sender
 *    cancels): never cancelled, data intact;
 *  - standard eager sends complete as they leave: cancel may fail, and the
 *    message must then arrive;
 *  - Cancel then Request_free of an unmatched synchronous send: no message
 *    arrives, nothing leaks;
 *  - to itself on MPI_COMM_SELF: a probed Issend is cancelled and gone. */
#include "mpitest.h"

#include <stdint.h>

enum { TAG_OUTCOME = 1000, TAG_NOTE = 1001 };

static int rank, size, dest;

static unsigned char pat(int k, size_t i)
{
    return (unsigned char)((i * 167u + (i >> 11) * 13u + (unsigned)k * 41u + 5u) & 0xff);
}

static void fill(unsigned char *b, size_t n, int k)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(k, i);
}

static void check_data(const unsigned char *b, size_t n, int k, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(b[i] == pat(k, i), "%s: byte %zu is %d, expected %d", what, i, b[i], pat(k, i));
}

static int cancelled_flag(const MPI_Status *st)
{
    int flag = -1;
    MPI_OK(MPI_Test_cancelled(st, &flag));
    CHECK(flag == 0 || flag == 1, "Test_cancelled gave %d", flag);
    return flag;
}

/* Receiver: learns the outcome of the send with `tag`, then checks that a
 * cancelled message is gone or receives an uncancelled one (n bytes of
 * pattern k, into a contiguous buffer). */
static void recv_outcome(int tag, size_t n, int k, const char *what)
{
    int cancelled;
    MPI_OK(MPI_Recv(&cancelled, 1, MPI_INT, 0, TAG_OUTCOME, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    int flag;
    MPI_Status st;
    MPI_OK(MPI_Iprobe(0, tag, MPI_COMM_WORLD, &flag, &st));
    if (cancelled) {
        CHECK(!flag, "%s: the send was cancelled but its message (tag %d) can still be received",
              what, tag);
        return;
    }
    unsigned char *b = malloc(n + 1);
    MPI_OK(MPI_Recv(b, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &st));
    int cnt;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECK(cnt == (int)n, "%s: received %d bytes, expected %zu", what, cnt, n);
    check_data(b, n, k, what);
    free(b);
}

/* Isend (sync 0) or Issend (sync 1) of n bytes of b to dest. */
static MPI_Request start_send(const unsigned char *b, size_t n, int tag, int sync)
{
    MPI_Request r;
    if (sync)
        MPI_OK(MPI_Issend(b, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r));
    else
        MPI_OK(MPI_Isend(b, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r));
    return r;
}

static void send_outcome(int cancelled)
{
    MPI_OK(MPI_Send(&cancelled, 1, MPI_INT, dest, TAG_OUTCOME, MPI_COMM_WORLD));
}

/* An unmatched Isend (mode 0) or Issend (mode 1) is cancelled:
 * must_cancel says whether Halo has to succeed. */
static void unmatched(int tag, size_t n, int k, int mode, int must_cancel, const char *what)
{
    if (rank == 0) {
        unsigned char *b = malloc(n + 1);
        fill(b, n, k);
        MPI_Request r = start_send(b, n, tag, mode);
        MPI_OK(MPI_Cancel(&r));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL, "%s: request not freed by Wait", what);
        int c = cancelled_flag(&st);
        CHECK(!must_cancel || c, "%s: an unmatched send was not cancelled", what);
        send_outcome(c);
        free(b);
    }
    if (rank == dest)
        recv_outcome(tag, n, k, what);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* The receiver takes the message, then the sender cancels: too late. */
static void matched(int tag, size_t n, int k, int sync, const char *what)
{
    if (rank == 0) {
        unsigned char *b = malloc(n + 1);
        fill(b, n, k);
        MPI_Request r = start_send(b, n, tag, sync);
        int note;
        MPI_OK(MPI_Recv(&note, 1, MPI_INT, dest, TAG_NOTE, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MPI_OK(MPI_Cancel(&r));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(!cancelled_flag(&st), "%s: a send whose message was received reads as cancelled", what);
        free(b);
    }
    if (rank == dest) {
        unsigned char *b = malloc(n + 1);
        MPI_Request r;
        MPI_OK(MPI_Irecv(b, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_data(b, n, k, what);
        int note = 1;
        MPI_OK(MPI_Send(&note, 1, MPI_INT, 0, TAG_NOTE, MPI_COMM_WORLD));
        free(b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Receiver of persistent(): the cancelled start is gone, so the first
 * message on the tag is the restart, with pattern k. */
static void recv_restart(int tag, size_t n, int k, const char *what)
{
    int cancelled;
    MPI_OK(MPI_Recv(&cancelled, 1, MPI_INT, 0, TAG_OUTCOME, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    unsigned char *b = malloc(n + 1);
    MPI_OK(MPI_Recv(b, (int)n, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    check_data(b, n, k, what);
    free(b);
}

/* A persistent send cancelled unmatched, then started again and received. */
static void persistent(int tag, size_t n, int k, int sync, const char *what)
{
    if (rank == 0) {
        unsigned char *b = malloc(n + 1);
        fill(b, n, k);
        MPI_Request r;
        if (sync)
            MPI_OK(MPI_Ssend_init(b, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r));
        else
            MPI_OK(MPI_Send_init(b, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Cancel(&r));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(r != MPI_REQUEST_NULL, "%s: Wait freed a persistent request", what);
        CHECK(cancelled_flag(&st), "%s: an unmatched persistent send was not cancelled", what);
        send_outcome(1);
        fill(b, n, k + 1);
        MPI_OK(MPI_Start(&r));
        if (dest == 0)
            recv_restart(tag, n, k + 1, what);
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(!cancelled_flag(&st), "%s: the restart after a cancel reads as cancelled", what);
        MPI_OK(MPI_Request_free(&r));
        free(b);
    }
    if (rank == dest && dest != 0)
        recv_restart(tag, n, k + 1, what);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A rendezvous send of a strided type (every other 4 KiB block). */
static void unmatched_vector(int tag, int k)
{
    const int blocks = 64, blk = 4096;
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(blocks, blk, 2 * blk, MPI_BYTE, &v));
    MPI_OK(MPI_Type_commit(&v));
    if (rank == 0) {
        unsigned char *b = malloc((size_t)2 * blocks * blk);
        fill(b, (size_t)2 * blocks * blk, k);
        MPI_Request r;
        MPI_OK(MPI_Isend(b, 1, v, dest, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        MPI_Status st;
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(cancelled_flag(&st), "vector rendezvous: an unmatched send was not cancelled");
        send_outcome(1);
        free(b);
    }
    if (rank == dest)
        recv_outcome(tag, 0, 0, "vector rendezvous");
    MPI_OK(MPI_Type_free(&v));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Many eager sends the receiver does not take yet fill the channel; the
 * send after them may have to wait its turn at the sender. Cancelled while
 * it waits, it must never arrive; the others arrive in order. */
static void queued(int tag, int k)
{
    enum { N = 4096, LEN = 1024 };
    if (rank == 0) {
        unsigned char *b = malloc((size_t)N * LEN);
        MPI_Request *r = malloc((N + 1) * sizeof *r);
        for (int i = 0; i < N; i++) {
            fill(b + (size_t)i * LEN, LEN, k + i);
            MPI_OK(MPI_Isend(b + (size_t)i * LEN, LEN, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r[i]));
        }
        unsigned char last[64];
        fill(last, sizeof last, k - 1);
        MPI_OK(MPI_Isend(last, (int)sizeof last, MPI_BYTE, dest, tag + 1, MPI_COMM_WORLD, &r[N]));
        int left;
        MPI_OK(MPI_Test(&r[N], &left, MPI_STATUS_IGNORE));
        int c = 0;
        if (!left) {
            MPI_OK(MPI_Cancel(&r[N]));
            MPI_Status st;
            MPI_OK(MPI_Wait(&r[N], &st));
            c = cancelled_flag(&st);
            CHECK(c, "queued send: a send that had not left was not cancelled");
        }
        send_outcome(c);
        MPI_OK(MPI_Waitall(N, r, MPI_STATUSES_IGNORE));
        if (dest != 0)
            printf("queued send: %s\n", left ? "had left (not cancelled)" : "cancelled while queued");
        free(r);
        free(b);
    }
    if (rank == dest) {
        int cancelled;
        /* the outcome comes after the N messages on this pair: take them */
        unsigned char *b = malloc(LEN);
        for (int i = 0; i < N; i++) {
            MPI_OK(MPI_Recv(b, LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            check_data(b, LEN, k + i, "queued send: one of the sends before it");
        }
        free(b);
        MPI_OK(MPI_Recv(&cancelled, 1, MPI_INT, 0, TAG_OUTCOME, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        int flag;
        MPI_OK(MPI_Iprobe(0, tag + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        if (cancelled) {
            CHECK(!flag, "queued send: cancelled, yet its message arrived");
        } else {
            unsigned char last[64];
            MPI_OK(MPI_Recv(last, (int)sizeof last, MPI_BYTE, 0, tag + 1, MPI_COMM_WORLD,
                            MPI_STATUS_IGNORE));
            check_data(last, sizeof last, k - 1, "queued send: uncancelled");
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Cancel, then Request_free before the answer: nothing arrives. */
static void cancel_then_free(int tag)
{
    if (rank == 0) {
        unsigned char b[64];
        fill(b, sizeof b, 9);
        MPI_Request r;
        MPI_OK(MPI_Issend(b, (int)sizeof b, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Cancel(&r));
        MPI_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle set");
        send_outcome(1);
    }
    if (rank == dest)
        recv_outcome(tag, 0, 0, "Cancel then Request_free");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void to_self(void)
{
    unsigned char b[32];
    fill(b, sizeof b, 3);
    MPI_Request r;
    MPI_Status st;
    MPI_OK(MPI_Issend(b, (int)sizeof b, MPI_BYTE, 0, 77, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Probe(0, 77, MPI_COMM_SELF, &st));
    MPI_OK(MPI_Cancel(&r));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(cancelled_flag(&st), "Issend to self, probed, not cancelled");
    int flag;
    MPI_OK(MPI_Iprobe(0, 77, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Issend to self was cancelled but its message is still there");
    /* and unprobed, the message still on its way: the cancel to ourselves
     * is decided at once (a program may test once, then receive what was
     * not cancelled, as mpi4py's testCancel does) */
    MPI_OK(MPI_Issend(b, (int)sizeof b, MPI_BYTE, 0, 78, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Cancel(&r));
    int done = 0;
    MPI_OK(MPI_Request_get_status(r, &done, &st));
    CHECK(done && cancelled_flag(&st), "Issend to self, unprobed: after Cancel, Request_get_status "
          "gave flag %d, cancelled %d", done, cancelled_flag(&st));
    MPI_OK(MPI_Wait(&r, &st));
    CHECK(cancelled_flag(&st), "Issend to self, unprobed, not cancelled");
    MPI_OK(MPI_Iprobe(0, 78, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "unprobed Issend to self was cancelled but its message is still there");
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dest = size - 1;

    unmatched(10, 1 << 20, 1, 0, 1, "Isend 1 MiB");
    unmatched(11, 0, 2, 1, 1, "Issend 0 B");
    unmatched(12, 64, 3, 1, 1, "Issend 64 B");
    unmatched(13, 1 << 20, 4, 1, 1, "Issend 1 MiB");
    unmatched(14, 8, 5, 0, 0, "Isend 8 B (eager)");
    unmatched_vector(15, 6);
    if (size > 1) {
        matched(20, 1 << 20, 7, 0, "matched Isend 1 MiB");
        matched(21, 64, 8, 1, "matched Issend 64 B");
        matched(22, 8, 9, 0, "matched Isend 8 B");
    }
    persistent(30, 1 << 20, 10, 0, "persistent Send_init 1 MiB");
    persistent(31, 100, 11, 1, "persistent Ssend_init 100 B");
    cancel_then_free(40);
    if (size > 1)
        queued(50, 12);
    if (rank == 0)
        to_self();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_cancel: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
