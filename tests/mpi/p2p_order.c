/* Non-overtaking: messages from one sender with the same tag are received
 * in the order they were sent, whatever channel each one takes. The sizes
 * cycle through 8 B (ring records), 2 KiB (the ring's largest record), 4
 * and 16 KiB (cells), 20 and 200 KiB (rendezvous), so consecutive messages
 * travel by different internal paths; the sender mixes blocking sends,
 * synchronous sends and windows of Isend/Issend. Every message carries its
 * sequence number and size, and the receiver checks both and the data.
 * Receivers either post their receives ahead (windows of Irecv) or sleep
 * first so that everything arrives unexpected (and the sender's channels
 * fill up and fall back).
 *   part "pairs": rank 2k sends to 2k+1;
 *   part "any":   every rank sends to rank 0, which receives with
 *                 MPI_ANY_SOURCE and checks the order per sender. */
#include "mpitest.h"

#include <stdint.h>

static const int cycle[] = {8, 4096, 20480, 204800, 2048, 16384, 8, 8, 2048, 8, 4096, 8};
#define NC ((int)(sizeof cycle / sizeof cycle[0]))
#define MAXMSG 204800
#define WINDOW 16
#define TAG 5

static int rank, size;

static int msg_size(int seq)
{
    return cycle[seq % NC];
}

static unsigned char pat(int src, int seq, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u ^ (uint32_t)(src * 40503 + seq * 69069 + 12345);
    return (unsigned char)(x >> 24 ^ x >> 7);
}

static void make(unsigned char *b, int src, int seq)
{
    int n = msg_size(seq);
    int hdr[2] = {seq, n};
    memcpy(b, hdr, sizeof hdr);
    for (int i = 8; i < n; i++)
        b[i] = pat(src, seq, (size_t)i);
}

/* Checks one received message; returns its sequence number. */
static int check(const unsigned char *b, const MPI_Status *st, int src, int want_seq,
                 const char *what)
{
    int hdr[2];
    memcpy(hdr, b, sizeof hdr);
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(st->MPI_SOURCE == src && st->MPI_TAG == TAG, "%s: status source %d tag %d", what,
          st->MPI_SOURCE, st->MPI_TAG);
    CHECK(hdr[0] == want_seq,
          "%s: from rank %d got message %d (%d bytes) where message %d (%d bytes) was due: "
          "a message overtook another", what, src, hdr[0], count, want_seq, msg_size(want_seq));
    CHECK(count == msg_size(want_seq) && hdr[1] == count,
          "%s: message %d from %d has %d bytes (header says %d), expected %d", what, want_seq,
          src, count, hdr[1], msg_size(want_seq));
    for (int i = 8; i < count; i++)
        if (b[i] != pat(src, want_seq, (size_t)i))
            MT_FAIL("%s: message %d from %d: byte %d is %d, expected %d", what, want_seq, src, i,
                    b[i], pat(src, want_seq, (size_t)i));
    return hdr[0];
}

/* Sends nmsg messages to dest: blocks of WINDOW alternate between blocking
 * sends (every fifth synchronous) and a window of nonblocking ones. */
static void sender(int dest, int nmsg, unsigned char *bufs)
{
    MPI_Request r[WINDOW];
    int nr = 0;
    for (int seq = 0; seq < nmsg; seq++) {
        int block = seq / WINDOW;
        unsigned char *b = bufs + (size_t)(seq % WINDOW) * MAXMSG;
        make(b, rank, seq);
        int n = msg_size(seq);
        if (block % 2 == 0) {
            if (seq % 5 == 4)
                MPI_OK(MPI_Ssend(b, n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD));
            else
                MPI_OK(MPI_Send(b, n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD));
        } else {
            if (seq % 7 == 3)
                MPI_OK(MPI_Issend(b, n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD, &r[nr++]));
            else
                MPI_OK(MPI_Isend(b, n, MPI_BYTE, dest, TAG, MPI_COMM_WORLD, &r[nr++]));
        }
        if (nr == WINDOW || (nr > 0 && seq == nmsg - 1)) {
            MPI_OK(MPI_Waitall(nr, r, MPI_STATUSES_IGNORE));
            nr = 0;
        }
    }
}

/* Receives total messages from `source` (or MPI_ANY_SOURCE); next[] holds
 * the next sequence number expected from each rank. */
static void receiver(int source, int total, int unexpected, unsigned char *bufs, const char *what)
{
    int next[64] = {0};
    if (unexpected) {
        mt_sleep_ms(150);
        for (int k = 0; k < total; k++) {
            MPI_Status st;
            MPI_OK(MPI_Recv(bufs, MAXMSG, MPI_BYTE, source, TAG, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            CHECK(src >= 0 && src < size, "%s: source %d", what, src);
            check(bufs, &st, src, next[src]++, what);
        }
        return;
    }
    for (int k = 0; k < total; k += WINDOW) {
        int n = total - k < WINDOW ? total - k : WINDOW;
        MPI_Request r[WINDOW];
        MPI_Status st[WINDOW];
        for (int j = 0; j < n; j++)
            MPI_OK(MPI_Irecv(bufs + (size_t)j * MAXMSG, MAXMSG, MPI_BYTE, source, TAG,
                             MPI_COMM_WORLD, &r[j]));
        MPI_OK(MPI_Waitall(n, r, st));
        for (int j = 0; j < n; j++) {
            int src = st[j].MPI_SOURCE;
            CHECK(src >= 0 && src < size, "%s: source %d", what, src);
            check(bufs + (size_t)j * MAXMSG, &st[j], src, next[src]++, what);
        }
    }
}

static void pairs(unsigned char *bufs)
{
    const int nmsg = 240;
    int partner = rank ^ 1;
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        if (partner < size) {
            if (rank % 2 == 0)
                sender(partner, nmsg, bufs);
            else
                receiver(partner, nmsg, unexpected, bufs,
                         unexpected ? "pair, receiver late" : "pair, receives posted ahead");
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

static void any_source(unsigned char *bufs)
{
    const int nmsg = size <= 4 ? 96 : 48;
    for (int unexpected = 0; unexpected < 2; unexpected++) {
        if (rank == 0)
            receiver(MPI_ANY_SOURCE, nmsg * (size - 1), unexpected, bufs,
                     unexpected ? "MPI_ANY_SOURCE, receiver late"
                                : "MPI_ANY_SOURCE, receives posted ahead");
        else
            sender(0, nmsg, bufs);
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2 && size <= 64, "needs 2 to 64 ranks");
    unsigned char *bufs = malloc((size_t)WINDOW * MAXMSG);
    int do_pairs = argc <= 1, do_any = argc <= 1;
    for (int a = 1; a < argc; a++) {
        do_pairs |= !strcmp(argv[a], "pairs");
        do_any |= !strcmp(argv[a], "any");
        CHECK(!strcmp(argv[a], "pairs") || !strcmp(argv[a], "any"), "unknown part %s", argv[a]);
    }
    if (do_pairs)
        pairs(bufs);
    if (do_any)
        any_source(bufs);
    free(bufs);
    if (rank == 0)
        printf("p2p_order: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
