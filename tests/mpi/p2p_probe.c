/* Probe and matched probe.
 *  - Iprobe says flag=0 when nothing matching is pending (nothing at all,
 *    or only messages of other tags/communicators).
 *  - Probe/Iprobe report the source, tag and full size of the message that
 *    the following receive gets (eager and rendezvous sizes, wildcards).
 *  - Mprobe/Improbe take the message out of matching: a later receive with
 *    the same source and tag gets the NEXT message; Mrecv/Imrecv then
 *    deliver the taken one and reset the handle to MPI_MESSAGE_NULL.
 *  - MPI_PROC_NULL: Mprobe/Improbe give MPI_MESSAGE_NO_PROC; receiving it
 *    completes at once with the MPI_PROC_NULL status.
 *  - Threads (MPI_THREAD_MULTIPLE): on rank 0 one thread takes messages
 *    with Improbe+Mrecv while another receives with plain MPI_Recv on the
 *    same (MPI_ANY_SOURCE, tag); every message is received exactly once. */
#include "mpitest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

static int rank, size;

static const int sizes[] = {0, 4, 2048, 16384, 20000, 300000}; /* bytes, multiples of 4 */
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXBYTES 300000

static int val(int src, int tag, int i)
{
    return src * 7919 + tag * 104729 + i;
}

static void fill(int *b, int nints, int src, int tag)
{
    for (int i = 0; i < nints; i++)
        b[i] = val(src, tag, i);
}

static void check_data(const int *b, int nints, int src, int tag, const char *what)
{
    for (int i = 0; i < nints; i++)
        if (b[i] != val(src, tag, i))
            MT_FAIL("%s: message from %d tag %d: int %d is %d, expected %d", what, src, tag, i,
                    b[i], val(src, tag, i));
}

static void check_status(const MPI_Status *st, int src, int tag, int bytes, const char *what)
{
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == tag && count == bytes,
          "%s: status (source %d, tag %d, %d bytes), expected (%d, %d, %d)", what,
          st->MPI_SOURCE, st->MPI_TAG, count, src, tag, bytes);
}

static void check_proc_null(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status (source %d, tag %d, count %d), expected (MPI_PROC_NULL, MPI_ANY_TAG, 0)",
          what, st->MPI_SOURCE, st->MPI_TAG, count);
    /* Single-completion calls leave MPI_ERROR as the caller set it. */
    CHECK(st->MPI_ERROR == MPI_ERR_DIMS, "%s: MPI_ERROR changed to %d", what, st->MPI_ERROR);
}

/* Nothing pending: Iprobe gives flag 0 (and polls without blocking). */
static void iprobe_nothing(void)
{
    MPI_Comm quiet;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &quiet));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    /* Every rank sends one message with tag 1 to its right neighbour on
     * MPI_COMM_WORLD; probes for anything else must say no. */
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int x = rank;
    MPI_OK(MPI_Send(&x, 1, MPI_INT, right, 1, MPI_COMM_WORLD));
    MPI_Status st;
    MPI_OK(MPI_Probe(left, 1, MPI_COMM_WORLD, &st));
    check_status(&st, left, 1, 4, "Probe of the neighbour's message");
    for (int k = 0; k < 100; k++) {
        int flag = -1;
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &flag, &st));
        CHECK(flag == 0, "Iprobe on a communicator nobody sent on says flag=%d", flag);
        MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 0, "Iprobe for tag 2 (never sent) says flag=%d", flag);
        if (size > 2) {
            MPI_OK(MPI_Iprobe(right, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            CHECK(flag == 0, "Iprobe for source %d (which sent nothing here) says flag=%d", right,
                  flag);
        }
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, quiet, &flag, &m, &st));
        CHECK(flag == 0 && m == MPI_MESSAGE_NULL, "Improbe with nothing pending: flag %d", flag);
    }
    /* The probed message is still there, and Iprobe sees it. */
    int flag = 0;
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1, "Iprobe does not see the message Probe found");
    check_status(&st, left, 1, 4, "Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG)");
    MPI_OK(MPI_Recv(&x, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &st));
    CHECK(x == left, "received %d, expected %d", x, left);
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 0, "Iprobe still sees a message that was received");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Comm_free(&quiet));
}

/* Every other rank sends each size to rank 0 (tag = 10*src + size index);
 * rank 0 probes with wildcards and receives exactly what the probe named. */
static void probe_then_receive(int *buf)
{
    if (rank != 0) {
        for (int si = 0; si < NSIZES; si++) {
            int tag = 10 * rank + si;
            fill(buf, sizes[si] / 4, rank, tag);
            MPI_OK(MPI_Send(buf, sizes[si], MPI_BYTE, 0, tag, MPI_COMM_WORLD));
        }
    } else {
        int total = (size - 1) * NSIZES;
        for (int k = 0; k < total; k++) {
            MPI_Status st, st2;
            if (k % 2 == 0) {
                MPI_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            } else {
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
            }
            int src = st.MPI_SOURCE, tag = st.MPI_TAG;
            CHECK(src >= 1 && src < size && tag / 10 == src && tag % 10 < NSIZES,
                  "probe gave source %d tag %d", src, tag);
            int bytes = sizes[tag % 10];
            check_status(&st, src, tag, bytes, "probe with wildcards");
            /* The probe with the exact source and tag sees the same. */
            MPI_OK(MPI_Probe(src, tag, MPI_COMM_WORLD, &st2));
            check_status(&st2, src, tag, bytes, "probe with the probed source and tag");
            memset(buf, 0xff, MAXBYTES);
            MPI_OK(MPI_Recv(buf, MAXBYTES, MPI_BYTE, src, tag, MPI_COMM_WORLD, &st2));
            check_status(&st2, src, tag, bytes, "receive after probe");
            check_data(buf, bytes / 4, src, tag, "receive after probe");
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Rank 1 sends two messages with the same tag (A then B) of each size;
 * rank 0 takes A with (I)Mprobe, then a plain receive must get B, then
 * (I)Mrecv gets A. */
static void matched_probe(int *buf, int *buf2)
{
    if (rank == 1) {
        /* Nonblocking: the receiver takes B before A. */
        for (int si = 0; si < NSIZES; si++) {
            int n = sizes[si] / 4;
            MPI_Request r[2];
            fill(buf, n, 1, 1000 + si);
            MPI_OK(MPI_Isend(buf, sizes[si], MPI_BYTE, 0, 20 + si, MPI_COMM_WORLD, &r[0]));
            fill(buf2, n, 1, 2000 + si);
            MPI_OK(MPI_Isend(buf2, sizes[si], MPI_BYTE, 0, 20 + si, MPI_COMM_WORLD, &r[1]));
            MPI_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        }
    } else if (rank == 0) {
        for (int si = 0; si < NSIZES; si++) {
            int bytes = sizes[si];
            MPI_Message m = MPI_MESSAGE_NULL;
            MPI_Status st;
            if (si % 2 == 0) {
                MPI_OK(MPI_Mprobe(1, 20 + si, MPI_COMM_WORLD, &m, &st));
            } else {
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, 20 + si, MPI_COMM_WORLD, &flag, &m, &st));
            }
            CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "matched probe gave no message");
            check_status(&st, 1, 20 + si, bytes, "Mprobe");
            /* The taken message is no longer visible to probes or receives. */
            memset(buf, 0xff, MAXBYTES);
            MPI_OK(MPI_Recv(buf, MAXBYTES, MPI_BYTE, 1, 20 + si, MPI_COMM_WORLD, &st));
            check_status(&st, 1, 20 + si, bytes, "receive after Mprobe");
            check_data(buf, bytes / 4, 1, 2000 + si,
                       "receive after Mprobe (must be the second message)");
            int flag = 1;
            MPI_OK(MPI_Iprobe(1, 20 + si, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECK(flag == 0, "Iprobe sees a message that Mprobe took (size %d)", bytes);
            memset(buf2, 0xff, MAXBYTES);
            if (si % 2 == 0) {
                MPI_OK(MPI_Mrecv(buf2, MAXBYTES, MPI_BYTE, &m, &st));
            } else {
                MPI_Request r;
                MPI_OK(MPI_Imrecv(buf2, MAXBYTES, MPI_BYTE, &m, &r));
                CHECK(m == MPI_MESSAGE_NULL, "Imrecv did not reset the message handle");
                MPI_OK(MPI_Wait(&r, &st));
            }
            CHECK(m == MPI_MESSAGE_NULL, "Mrecv did not reset the message handle");
            check_status(&st, 1, 20 + si, bytes, "Mrecv");
            check_data(buf2, bytes / 4, 1, 1000 + si, "Mrecv (must be the first message)");
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void proc_null(void)
{
    MPI_Status st;
    st.MPI_ERROR = MPI_ERR_DIMS;
    MPI_Message m = MPI_MESSAGE_NULL;
    int flag = 0, x = 99;
    MPI_OK(MPI_Probe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "Probe(MPI_PROC_NULL)");
    MPI_OK(MPI_Iprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag == 1, "Iprobe(MPI_PROC_NULL) flag %d", flag);
    check_proc_null(&st, "Iprobe(MPI_PROC_NULL)");
    MPI_OK(MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &m, &st));
    CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_proc_null(&st, "Mprobe(MPI_PROC_NULL)");
    MPI_OK(MPI_Mrecv(&x, 1, MPI_INT, &m, &st));
    CHECK(m == MPI_MESSAGE_NULL, "Mrecv(MPI_MESSAGE_NO_PROC) did not reset the handle");
    check_proc_null(&st, "Mrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(x == 99, "Mrecv(MPI_MESSAGE_NO_PROC) wrote the buffer");
    flag = 0;
    MPI_OK(MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
    CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL): flag %d", flag);
    check_proc_null(&st, "Improbe(MPI_PROC_NULL)");
    MPI_Request r;
    MPI_OK(MPI_Imrecv(&x, 1, MPI_INT, &m, &r));
    MPI_OK(MPI_Wait(&r, &st));
    check_proc_null(&st, "Imrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(x == 99, "Imrecv(MPI_MESSAGE_NO_PROC) wrote the buffer");
}

/* ---------------------------------------------------------------- threads */

#define THREAD_MSGS 40
#define THREAD_TAG 30
#define STOP_TAG_VALUE (-1)

static _Atomic int received;
static int total_msgs;
static unsigned char *seen;   /* [src * THREAD_MSGS + seq] */
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

static int thread_msg_ints(int seq)
{
    return seq % 4 == 3 ? 20000 : 2 + seq; /* some rendezvous-sized */
}

static void record(const int *b, int nints, const char *who)
{
    CHECK(nints >= 2, "%s: message of %d ints", who, nints);
    int src = b[0], seq = b[1];
    CHECK(src >= 1 && src < size && seq >= 0 && seq < THREAD_MSGS, "%s: bad header %d/%d", who,
          src, seq);
    CHECK(nints == thread_msg_ints(seq), "%s: message %d from %d has %d ints", who, seq, src, nints);
    for (int i = 2; i < nints; i++)
        CHECK(b[i] == val(src, seq, i), "%s: int %d of message %d from %d is wrong", who, i, seq,
              src);
    pthread_mutex_lock(&seen_lock);
    int dup = seen[src * THREAD_MSGS + seq]++;
    pthread_mutex_unlock(&seen_lock);
    CHECK(dup == 0, "%s: message %d from %d received twice", who, seq, src);
    atomic_fetch_add(&received, 1);
}

static void *mprobe_thread(void *arg)
{
    (void)arg;
    int *b = malloc(sizeof(int) * 20000);
    while (atomic_load(&received) < total_msgs) {
        int flag = 0;
        MPI_Message m;
        MPI_Status st;
        MPI_OK(MPI_Improbe(MPI_ANY_SOURCE, THREAD_TAG, MPI_COMM_WORLD, &flag, &m, &st));
        if (!flag)
            continue;
        int n = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        MPI_Status st2;
        MPI_OK(MPI_Mrecv(b, 20000, MPI_INT, &m, &st2));
        int n2 = -1;
        MPI_OK(MPI_Get_count(&st2, MPI_INT, &n2));
        CHECK(n == n2 && st.MPI_SOURCE == st2.MPI_SOURCE,
              "Mrecv got %d ints from %d, Improbe said %d from %d", n2, st2.MPI_SOURCE, n,
              st.MPI_SOURCE);
        CHECK(b[0] != STOP_TAG_VALUE, "the Mprobe thread took the stop message");
        record(b, n2, "Mprobe thread");
    }
    /* All messages are in: release the receiving thread. */
    int stop[2] = {STOP_TAG_VALUE, 0};
    MPI_OK(MPI_Send(stop, 2, MPI_INT, 0, THREAD_TAG, MPI_COMM_WORLD));
    free(b);
    return NULL;
}

static void *recv_thread(void *arg)
{
    (void)arg;
    int *b = malloc(sizeof(int) * 20000);
    for (;;) {
        MPI_Status st;
        MPI_OK(MPI_Recv(b, 20000, MPI_INT, MPI_ANY_SOURCE, THREAD_TAG, MPI_COMM_WORLD, &st));
        int n = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &n));
        if (b[0] == STOP_TAG_VALUE) {
            CHECK(st.MPI_SOURCE == 0, "stop message from %d", st.MPI_SOURCE);
            break;
        }
        CHECK(st.MPI_SOURCE == b[0], "status source %d, message says %d", st.MPI_SOURCE, b[0]);
        record(b, n, "Recv thread");
    }
    free(b);
    return NULL;
}

static void threads(void)
{
    if (size < 2)
        return;
    total_msgs = (size - 1) * THREAD_MSGS;
    if (rank == 0) {
        seen = calloc((size_t)size * THREAD_MSGS, 1);
        pthread_t t1, t2;
        pthread_create(&t1, NULL, mprobe_thread, NULL);
        pthread_create(&t2, NULL, recv_thread, NULL);
        pthread_join(t1, NULL);
        pthread_join(t2, NULL);
        for (int s = 1; s < size; s++)
            for (int q = 0; q < THREAD_MSGS; q++)
                CHECK(seen[s * THREAD_MSGS + q] == 1, "message %d from %d received %d times", q, s,
                      seen[s * THREAD_MSGS + q]);
        free(seen);
    } else {
        int *b = malloc(sizeof(int) * 20000);
        for (int q = 0; q < THREAD_MSGS; q++) {
            int n = thread_msg_ints(q);
            b[0] = rank;
            b[1] = q;
            for (int i = 2; i < n; i++)
                b[i] = val(rank, q, i);
            MPI_OK(MPI_Send(b, n, MPI_INT, 0, THREAD_TAG, MPI_COMM_WORLD));
        }
        free(b);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)", provided);
    CHECK(size >= 2, "needs 2 ranks");
    int *buf = malloc(MAXBYTES), *buf2 = malloc(MAXBYTES);
    iprobe_nothing();
    probe_then_receive(buf);
    matched_probe(buf, buf2);
    proc_null();
    threads();
    free(buf);
    free(buf2);
    if (rank == 0)
        printf("p2p_probe: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
