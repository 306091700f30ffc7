/* Wildcard receives and MPI_PROC_NULL.
 *  - MPI_ANY_SOURCE with a fixed tag, MPI_ANY_TAG from a fixed source, and
 *    both, over messages from every other rank (eager and rendezvous); the
 *    status names the real source and tag, which the data repeats.
 *  - All-to-all with only (MPI_ANY_SOURCE, MPI_ANY_TAG) receives, half
 *    posted before the messages come and half after: every message arrives
 *    once, and the messages of one sender in the order it sent them.
 *  - Wildcard and specific receives posted together: a message goes to the
 *    earliest posted receive that matches it.
 *  - The largest tag (MPI_TAG_UB) works with MPI_ANY_TAG.
 *  - MPI_PROC_NULL: every send mode completes at once; receives complete
 *    at once with source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0 and an
 *    untouched buffer. */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

/* Message layout: int[0] source, int[1] tag, int[2] sequence number, then
 * a pattern. */
static const int lens[] = {3, 4, 600, 5000, 30000}; /* ints */
#define NLENS ((int)(sizeof lens / sizeof lens[0]))
#define MAXLEN 30000

static int body(int src, int seq, int i)
{
    return src * 1000003 + seq * 7919 + i;
}

static void make(int *b, int n, int src, int tag, int seq)
{
    b[0] = src;
    b[1] = tag;
    b[2] = seq;
    for (int i = 3; i < n; i++)
        b[i] = body(src, seq, i);
}

/* Checks a received message against its status; returns its seq. */
static int verify(const int *b, const MPI_Status *st, const char *what)
{
    int n = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &n));
    CHECK(n >= 3, "%s: %d ints", what, n);
    CHECK(st->MPI_SOURCE == b[0], "%s: status source %d, message is from %d", what,
          st->MPI_SOURCE, b[0]);
    CHECK(st->MPI_TAG == b[1], "%s: status tag %d, message has tag %d", what, st->MPI_TAG, b[1]);
    for (int i = 3; i < n; i++)
        if (b[i] != body(b[0], b[2], i))
            MT_FAIL("%s: message %d from %d: int %d is %d, expected %d", what, b[2], b[0], i, b[i],
                    body(b[0], b[2], i));
    return b[2];
}

/* Every rank except 0 sends NLENS messages to rank 0: tag 1 then tags
 * 10+k. Rank 0 takes the tag-1 ones with MPI_ANY_SOURCE, then the others
 * source by source with MPI_ANY_TAG. */
static void to_root(int *b)
{
    if (rank != 0) {
        for (int k = 0; k < NLENS; k++) {
            make(b, lens[k], rank, 1, k);
            MPI_OK(MPI_Send(b, lens[k], MPI_INT, 0, 1, MPI_COMM_WORLD));
        }
        for (int k = 0; k < NLENS; k++) {
            make(b, lens[k], rank, 10 + k, k);
            MPI_OK(MPI_Send(b, lens[k], MPI_INT, 0, 10 + k, MPI_COMM_WORLD));
        }
        return;
    }
    int next[64] = {0};
    for (int m = 0; m < (size - 1) * NLENS; m++) {
        MPI_Status st;
        MPI_OK(MPI_Recv(b, MAXLEN, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st));
        int seq = verify(b, &st, "MPI_ANY_SOURCE receive");
        CHECK(st.MPI_TAG == 1, "tag %d", st.MPI_TAG);
        CHECK(seq == next[st.MPI_SOURCE], "from %d got message %d, expected %d (overtaken)",
              st.MPI_SOURCE, seq, next[st.MPI_SOURCE]);
        next[st.MPI_SOURCE]++;
    }
    for (int src = size - 1; src >= 1; src--) {
        for (int k = 0; k < NLENS; k++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(b, MAXLEN, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int seq = verify(b, &st, "MPI_ANY_TAG receive");
            CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 10 + k && seq == k,
                  "MPI_ANY_TAG receive from %d: got source %d tag %d seq %d, expected tag %d",
                  src, st.MPI_SOURCE, st.MPI_TAG, seq, 10 + k);
        }
    }
}

/* All-to-all with fully wildcard receives; half pre-posted. */
#define A2A 6
static void all_to_all(void)
{
    int nmsg = (size - 1) * A2A;
    int *rbuf = malloc(sizeof(int) * (size_t)nmsg * MAXLEN);
    int *sbuf = malloc(sizeof(int) * (size_t)(size - 1) * A2A * MAXLEN);
    MPI_Request *rr = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    MPI_Request *sr = malloc(sizeof(MPI_Request) * (size_t)nmsg);
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)nmsg);
    int early = nmsg / 2;
    for (int m = 0; m < early; m++)
        MPI_OK(MPI_Irecv(rbuf + (size_t)m * MAXLEN, MAXLEN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         MPI_COMM_WORLD, &rr[m]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int s = 0;
    for (int k = 0; k < A2A; k++) {
        for (int d = 1; d < size; d++) {
            int to = (rank + d) % size;
            int *b = sbuf + (size_t)s * MAXLEN;
            int n = lens[(k + d) % NLENS];
            make(b, n, rank, 200 + k, k);
            MPI_OK(MPI_Isend(b, n, MPI_INT, to, 200 + k, MPI_COMM_WORLD, &sr[s]));
            s++;
        }
    }
    for (int m = early; m < nmsg; m++)
        MPI_OK(MPI_Irecv(rbuf + (size_t)m * MAXLEN, MAXLEN, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                         MPI_COMM_WORLD, &rr[m]));
    MPI_OK(MPI_Waitall(nmsg, rr, st));
    MPI_OK(MPI_Waitall(nmsg, sr, MPI_STATUSES_IGNORE));
    int next[64] = {0};
    for (int m = 0; m < nmsg; m++) {
        const int *b = rbuf + (size_t)m * MAXLEN;
        int seq = verify(b, &st[m], "all-to-all MPI_ANY_SOURCE/MPI_ANY_TAG receive");
        int src = st[m].MPI_SOURCE;
        CHECK(src != rank && src >= 0 && src < size, "source %d", src);
        CHECK(st[m].MPI_TAG == 200 + seq, "tag %d for seq %d", st[m].MPI_TAG, seq);
        CHECK(seq == next[src],
              "receive %d got message %d of rank %d, expected %d: messages from one sender "
              "must match receives in the order sent", m, seq, src, next[src]);
        next[src]++;
    }
    for (int src = 0; src < size; src++)
        CHECK(src == rank || next[src] == A2A, "got %d messages from %d, expected %d", next[src],
              src, A2A);
    free(rbuf);
    free(sbuf);
    free(rr);
    free(sr);
    free(st);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Posting order decides between a wildcard and a specific receive. Only
 * rank 1 sends (to rank 0), after rank 0 posted and a barrier. */
static void posting_order(void)
{
    for (int variant = 0; variant < 3; variant++) {
        int a[3] = {-1, -1, -1}, b[3] = {-1, -1, -1};
        MPI_Request r[2];
        if (rank == 0) {
            int other = size > 2 ? 2 : MPI_PROC_NULL;
            switch (variant) {
            case 0: /* wildcard first: it gets message 0 */
                MPI_OK(MPI_Irecv(a, 3, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &r[0]));
                MPI_OK(MPI_Irecv(b, 3, MPI_INT, 1, 30, MPI_COMM_WORLD, &r[1]));
                break;
            case 1: /* specific first: it gets message 0 */
                MPI_OK(MPI_Irecv(a, 3, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
                MPI_OK(MPI_Irecv(b, 3, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &r[1]));
                break;
            default: /* a receive for another source does not take it */
                MPI_OK(MPI_Irecv(b, 3, MPI_INT, other == MPI_PROC_NULL ? 0 : other, 30,
                                 MPI_COMM_WORLD, &r[1]));
                MPI_OK(MPI_Irecv(a, 3, MPI_INT, MPI_ANY_SOURCE, 30, MPI_COMM_WORLD, &r[0]));
                break;
            }
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1) {
            int m[3];
            int nsend = variant == 2 ? 1 : 2;
            for (int k = 0; k < nsend; k++) {
                make(m, 3, 1, 30, k);
                MPI_OK(MPI_Send(m, 3, MPI_INT, 0, 30, MPI_COMM_WORLD));
            }
        }
        if (rank == 0) {
            MPI_Status st;
            MPI_OK(MPI_Wait(&r[0], &st));
            verify(a, &st, "posting order");
            CHECK(a[2] == 0, "variant %d: the first-posted matching receive got message %d",
                  variant, a[2]);
            if (variant < 2) {
                MPI_OK(MPI_Wait(&r[1], &st));
                verify(b, &st, "posting order");
                CHECK(b[2] == 1, "variant %d: the second receive got message %d", variant, b[2]);
            } else {
                int flag = 1;
                MPI_OK(MPI_Test(&r[1], &flag, MPI_STATUS_IGNORE));
                CHECK(flag == 0, "a receive for another source completed");
                MPI_OK(MPI_Cancel(&r[1]));
                MPI_OK(MPI_Wait(&r[1], &st));
                int c = 0;
                MPI_OK(MPI_Test_cancelled(&st, &c));
                CHECK(c == 1, "cancel of an unmatched receive failed");
            }
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static void tag_ub(void)
{
    int *ub = NULL, flag = 0;
    MPI_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
    CHECK(flag && ub && *ub >= 32767, "MPI_TAG_UB attribute: flag %d value %d", flag,
          ub ? *ub : -1);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int m[3], g[3];
    make(m, 3, rank, *ub, 0);
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(m, 3, MPI_INT, right, *ub, g, 3, MPI_INT, left, MPI_ANY_TAG,
                        MPI_COMM_WORLD, &st));
    verify(g, &st, "message with tag MPI_TAG_UB");
    CHECK(st.MPI_TAG == *ub, "tag %d, expected MPI_TAG_UB %d", st.MPI_TAG, *ub);
}

static void check_proc_null(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status (source %d, tag %d, count %d), expected (MPI_PROC_NULL, MPI_ANY_TAG, 0)",
          what, st->MPI_SOURCE, st->MPI_TAG, count);
}

static void proc_null(void)
{
    int b[4] = {1, 2, 3, 4};
    MPI_Request r;
    MPI_Status st;
    MPI_OK(MPI_Send(b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Ssend(b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Rsend(b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_OK(MPI_Bsend(b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD)); /* no buffer needed */
    int (*isends[4])(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *) = {
        MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Ibsend};
    for (int k = 0; k < 4; k++) {
        MPI_OK(isends[k](b, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &r));
        int flag = 0;
        MPI_OK(MPI_Test(&r, &flag, &st));
        CHECK(flag == 1, "nonblocking send %d to MPI_PROC_NULL not complete at once", k);
    }
    MPI_OK(MPI_Recv(b, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "Recv from MPI_PROC_NULL");
    MPI_OK(MPI_Recv(b, 4, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    check_proc_null(&st, "Recv from MPI_PROC_NULL with MPI_ANY_TAG");
    MPI_OK(MPI_Irecv(b, 4, MPI_INT, MPI_PROC_NULL, 5, MPI_COMM_WORLD, &r));
    int flag = 0;
    MPI_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 1, "Irecv from MPI_PROC_NULL not complete at once");
    check_proc_null(&st, "Irecv from MPI_PROC_NULL");
    int elems = -1;
    MPI_OK(MPI_Get_elements(&st, MPI_INT, &elems));
    CHECK(elems == 0, "Get_elements %d", elems);
    CHECK(b[0] == 1 && b[1] == 2 && b[2] == 3 && b[3] == 4,
          "a receive from MPI_PROC_NULL changed the buffer");
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2 && size <= 64, "needs 2 to 64 ranks");
    int *b = malloc(sizeof(int) * MAXLEN);
    to_root(b);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    all_to_all();
    posting_order();
    tag_ub();
    proc_null();
    free(b);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_wildcard: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
