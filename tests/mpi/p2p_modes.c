/* Every send mode (standard, synchronous, ready, buffered), blocking and
 * nonblocking, delivers every byte of messages from 0 bytes to 4 MiB: sizes
 * on both sides of the shared-memory ring record limit (2 KiB), of the
 * eager limit (16 KiB) and well into rendezvous. Blocking modes run between
 * pairs of ranks; nonblocking ones over rings with several strides,
 * including a rank sending to itself. Each receive checks the data, the
 * status (source, tag, count) and guard bytes after the buffer. */
#include "mpitest.h"

#include <stdint.h>

/* CHECK with a formatted message (mpitest.h's CHECK puts the condition
 * text after the message arguments). */
enum { STANDARD, SYNCHRONOUS, READY, BUFFERED, NMODES };
static const char *mode_name[NMODES] = {"standard", "synchronous", "ready", "buffered"};

static const int sizes[] = {0, 1, 40, 2048, 2049, 16384, 17408, 102400, 4 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define GUARD 64
#define MAXSIZE (4 << 20)

static int rank, size;

static unsigned char pat(unsigned seed, size_t i)
{
    uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)seed * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 32));
}

static unsigned seed_of(int src, int dst, int mode, int si, int round)
{
    return (unsigned)(src * 1000003 + dst * 10007 + mode * 101 + si * 7 + round * 65537 + 1);
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(seed, i);
}

static void prepare_recv(unsigned char *b, size_t n)
{
    memset(b, 0x5A, n);
    memset(b + n, 0xA5, GUARD);
}

static void check_recv(const unsigned char *b, size_t n, unsigned seed, const MPI_Status *st,
                       int src, int tag, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pat(seed, i))
            MT_FAIL("%s: %zu-byte message from %d: byte %zu is %d, expected %d", what, n, src, i,
                    b[i], pat(seed, i));
    for (size_t i = 0; i < GUARD; i++)
        if (b[n + i] != 0xA5)
            MT_FAIL("%s: %zu-byte message from %d: guard byte %zu after the buffer was overwritten",
                    what, n, src, i);
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(count == (int)n, "%s: Get_count %d, expected %zu", what, count, n);
}

static int blocking_send(int mode, const void *buf, int n, int dest, int tag)
{
    switch (mode) {
    case STANDARD: return MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    case SYNCHRONOUS: return MPI_Ssend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    case READY: return MPI_Rsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    default: return MPI_Bsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD);
    }
}

static int nonblocking_send(int mode, const void *buf, int n, int dest, int tag, MPI_Request *r)
{
    switch (mode) {
    case STANDARD: return MPI_Isend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r);
    case SYNCHRONOUS: return MPI_Issend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r);
    case READY: return MPI_Irsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r);
    default: return MPI_Ibsend(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, r);
    }
}

/* Pairs (0,1), (2,3), ...: the even rank sends first and then receives, the
 * odd one the other way round; a ready send goes only after the barrier
 * that follows the posting of its receive. */
static void blocking_pairs(unsigned char *sbuf, unsigned char *rbuf)
{
    int partner = rank ^ 1;
    int active = partner < size;
    char what[96];
    for (int mode = 0; mode < NMODES; mode++) {
        for (int si = 0; si < NSIZES; si++) {
            int n = sizes[si];
            int tag = mode * 100 + si;
            snprintf(what, sizeof what, "blocking %s send", mode_name[mode]);
            MPI_Status st;
            if (active) {
                fill(sbuf, (size_t)n, seed_of(rank, partner, mode, si, 0));
                prepare_recv(rbuf, (size_t)n);
            }
            if (mode == READY) {
                MPI_Request r = MPI_REQUEST_NULL;
                if (active)
                    MPI_OK(MPI_Irecv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                if (active) {
                    MPI_OK(MPI_Rsend(sbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD));
                    MPI_OK(MPI_Wait(&r, &st));
                }
            } else if (active && rank % 2 == 0) {
                MPI_OK(blocking_send(mode, sbuf, n, partner, tag));
                MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
            } else if (active) {
                MPI_OK(MPI_Recv(rbuf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st));
                MPI_OK(blocking_send(mode, sbuf, n, partner, tag));
            }
            if (active)
                check_recv(rbuf, (size_t)n, seed_of(partner, rank, mode, si, 0), &st, partner, tag,
                           what);
        }
    }
}

/* Every rank receives from rank-d and sends to rank+d, for strides 1,
 * size/2 and 0 (to itself). The receive is posted before the send; ready
 * sends wait for a barrier after the posting. */
static void nonblocking_rings(unsigned char *sbuf, unsigned char *rbuf)
{
    int strides[3] = {1, size / 2, 0};
    char what[96];
    for (int mode = 0; mode < NMODES; mode++) {
        for (int k = 0; k < 3; k++) {
            int d = strides[k];
            if (k == 1 && (d == 1 || d == 0))
                continue;
            int to = (rank + d) % size, from = (rank - d + size) % size;
            for (int si = 0; si < NSIZES; si++) {
                int n = sizes[si];
                int tag = 1000 + mode * 100 + si;
                snprintf(what, sizeof what, "nonblocking %s send, stride %d", mode_name[mode], d);
                fill(sbuf, (size_t)n, seed_of(rank, to, mode, si, 1 + k));
                prepare_recv(rbuf, (size_t)n);
                MPI_Request r[2];
                MPI_Status st[2];
                MPI_OK(MPI_Irecv(rbuf, n, MPI_BYTE, from, tag, MPI_COMM_WORLD, &r[0]));
                if (mode == READY)
                    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
                MPI_OK(nonblocking_send(mode, sbuf, n, to, tag, &r[1]));
                MPI_OK(MPI_Waitall(2, r, st));
                CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL,
                      "%s: Waitall left a request handle set", what);
                check_recv(rbuf, (size_t)n, seed_of(from, rank, mode, si, 1 + k), &st[0], from, tag,
                           what);
            }
        }
    }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    unsigned char *sbuf = malloc(MAXSIZE), *rbuf = malloc(MAXSIZE + GUARD);
    CHECK(sbuf && rbuf, "out of memory");
    /* Room for the copies of size largest messages still in flight (a ring
     * lets a rank run up to size-1 steps ahead of its right neighbour). */
    int bsize = (size + 1) * (MAXSIZE + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(battach, bsize));

    blocking_pairs(sbuf, rbuf);
    nonblocking_rings(sbuf, rbuf);

    void *bdetached = NULL;
    int bdsize = -1;
    MPI_OK(MPI_Buffer_detach(&bdetached, &bdsize));
    CHECK(bdetached == battach && bdsize == bsize, "Buffer_detach gave %p/%d, attached %p/%d",
          bdetached, bdsize, battach, bsize);
    free(battach);
    free(sbuf);
    free(rbuf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_modes: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
