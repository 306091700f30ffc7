/* Buffered sends: MPI_Bsend and MPI_Ibsend are local (they return while the
 * receiver has not posted anything), send a copy (the user buffer may be
 * overwritten at once), fail with MPI_ERR_BUFFER when the attached buffer
 * is too small or none is attached, and Buffer_detach gives back the
 * address and size that were attached. Also: a communicator's own buffer
 * (MPI_Comm_attach_buffer), MPI_Buffer_flush / MPI_Comm_flush_buffer
 * emptying the buffer, and MPI_BUFFER_AUTOMATIC.
 * Rank 0 sends to rank 1; other ranks only take part in barriers. */
#include "mpitest.h"

#include <stdint.h>

static const int sizes[] = {0, 1, 100, 2048, 16384, 17408, 102400, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))
#define MAXSIZE (1 << 20)

static int rank, size;

static unsigned char pat(unsigned seed, size_t i)
{
    uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)seed * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 32));
}

static void fill(unsigned char *b, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pat(seed, i);
}

static void recv_check(unsigned char *b, int n, unsigned seed, int tag, MPI_Comm comm,
                       const char *what)
{
    MPI_Status st;
    memset(b, 0, (size_t)n + 16);
    MPI_OK(MPI_Recv(b, n + 16, MPI_BYTE, 0, tag, comm, &st));
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == n && st.MPI_SOURCE == 0 && st.MPI_TAG == tag,
          "%s: got %d bytes from %d tag %d, expected %d bytes from 0 tag %d", what, count,
          st.MPI_SOURCE, st.MPI_TAG, n, tag);
    for (int i = 0; i < n; i++)
        if (b[i] != pat(seed, (size_t)i))
            MT_FAIL("%s: %d-byte message: byte %d is %d, expected %d", what, n, i, b[i],
                    pat(seed, (size_t)i));
}

static int packed(int n)
{
    int ps = 0;
    MPI_OK(MPI_Pack_size(n, MPI_BYTE, MPI_COMM_WORLD, &ps));
    return ps + MPI_BSEND_OVERHEAD;
}

/* All sizes Bsend (then Ibsend) before the receiver posts anything; the
 * send buffer is scribbled over right after each call. */
static void local_completion(unsigned char *sbuf, unsigned char *rbuf, int nonblocking)
{
    int total = 0;
    for (int si = 0; si < NSIZES; si++)
        total += packed(sizes[si]);
    void *bb = malloc((size_t)total);
    if (rank == 0) {
        MPI_OK(MPI_Buffer_attach(bb, total));
        for (int si = 0; si < NSIZES; si++) {
            int n = sizes[si];
            fill(sbuf, (size_t)n, (unsigned)(si + 100 * nonblocking));
            if (nonblocking) {
                MPI_Request r;
                MPI_OK(MPI_Ibsend(sbuf, n, MPI_BYTE, 1, si, MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                CHECK(r == MPI_REQUEST_NULL, "Wait did not free an Ibsend request");
            } else {
                MPI_OK(MPI_Bsend(sbuf, n, MPI_BYTE, 1, si, MPI_COMM_WORLD));
            }
            memset(sbuf, 0xEE, (size_t)n);
        }
    }
    /* Rank 1 has posted nothing yet: every buffered send above had to
     * complete locally, or rank 0 would never reach this barrier. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        /* Receive in reverse order: the messages must be waiting. */
        for (int si = NSIZES - 1; si >= 0; si--)
            recv_check(rbuf, sizes[si], (unsigned)(si + 100 * nonblocking), si, MPI_COMM_WORLD,
                       nonblocking ? "Ibsend" : "Bsend");
    }
    if (rank == 0) {
        void *addr = NULL;
        int dsize = -1;
        MPI_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == bb && dsize == total, "Buffer_detach gave %p/%d, attached %p/%d", addr,
              dsize, bb, total);
    }
    free(bb);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Too small a buffer, and no buffer at all, give MPI_ERR_BUFFER; the
 * failed send sends nothing (the next message rank 1 gets is the marker). */
static void buffer_errors(unsigned char *sbuf, unsigned char *rbuf)
{
    if (rank == 0) {
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        fill(sbuf, 1000, 77);
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(sbuf, 1000, MPI_BYTE, 1, 50, MPI_COMM_WORLD));
        int small = packed(100);
        void *bb = malloc((size_t)small);
        MPI_OK(MPI_Buffer_attach(bb, small));
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(sbuf, 1000, MPI_BYTE, 1, 50, MPI_COMM_WORLD));
        MPI_Request r = MPI_REQUEST_NULL;
        int rc = MPI_Ibsend(sbuf, 1000, MPI_BYTE, 1, 50, MPI_COMM_WORLD, &r);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        if (rc == MPI_SUCCESS) {
            /* The error may also be reported at completion. */
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            MPI_Error_class(rc, &cls);
        } else if (r != MPI_REQUEST_NULL) {
            MPI_Request_free(&r);
        }
        CHECK(cls == MPI_ERR_BUFFER, "Ibsend of 1000 bytes into a %d-byte buffer: class %d, "
              "expected MPI_ERR_BUFFER", small, cls);
        /* What fits still goes. */
        fill(sbuf, 100, 78);
        MPI_OK(MPI_Bsend(sbuf, 100, MPI_BYTE, 1, 51, MPI_COMM_WORLD));
        void *addr;
        int dsize;
        MPI_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == bb && dsize == small, "Buffer_detach gave %p/%d, attached %p/%d", addr,
              dsize, bb, small);
        free(bb);
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    } else if (rank == 1) {
        MPI_Status st;
        MPI_OK(MPI_Probe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_TAG == 51, "first message after the failed buffered sends has tag %d, "
              "expected 51 (a failed Bsend sent something)", st.MPI_TAG);
        recv_check(rbuf, 100, 78, 51, MPI_COMM_WORLD, "Bsend after failures");
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A buffer with room for exactly one rendezvous-sized message: after the
 * receiver took it and Buffer_flush returned, the room is free again, so a
 * second message of the same size fits. The same with a communicator's
 * own buffer and MPI_Comm_flush_buffer; sends on that communicator do not
 * need the process buffer (none is attached). */
static void flush_and_comm_buffer(unsigned char *sbuf, unsigned char *rbuf)
{
    const int n = 102400;
    int one = packed(n);
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    void *bb = malloc((size_t)one);
    for (int use_comm = 0; use_comm < 2; use_comm++) {
        MPI_Comm c = use_comm ? dup : MPI_COMM_WORLD;
        if (rank == 0) {
            if (use_comm)
                MPI_OK(MPI_Comm_attach_buffer(dup, bb, one));
            else
                MPI_OK(MPI_Buffer_attach(bb, one));
            fill(sbuf, (size_t)n, 200 + (unsigned)use_comm);
            MPI_OK(MPI_Bsend(sbuf, n, MPI_BYTE, 1, 60, c));
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 1)
            recv_check(rbuf, n, 200 + (unsigned)use_comm, 60, c, "first Bsend before flush");
        if (rank == 0) {
            if (use_comm)
                MPI_OK(MPI_Comm_flush_buffer(dup));
            else
                MPI_OK(MPI_Buffer_flush());
            fill(sbuf, (size_t)n, 210 + (unsigned)use_comm);
            MPI_OK(MPI_Bsend(sbuf, n, MPI_BYTE, 1, 61, c));
            if (use_comm) {
                MPI_OK(MPI_Comm_flush_buffer(dup));
            } else {
                MPI_OK(MPI_Buffer_flush());
            }
        }
        if (rank == 1)
            recv_check(rbuf, n, 210 + (unsigned)use_comm, 61, c, "second Bsend after flush");
        if (rank == 0) {
            void *addr = NULL;
            int dsize = -1;
            if (use_comm)
                MPI_OK(MPI_Comm_detach_buffer(dup, &addr, &dsize));
            else
                MPI_OK(MPI_Buffer_detach(&addr, &dsize));
            CHECK(addr == bb && dsize == one, "%s gave %p/%d, attached %p/%d",
                  use_comm ? "Comm_detach_buffer" : "Buffer_detach", addr, dsize, bb, one);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* A communicator buffer serves only its communicator: with one attached
     * to dup and none to the process, a Bsend on MPI_COMM_WORLD fails. */
    if (rank == 0) {
        MPI_OK(MPI_Comm_attach_buffer(dup, bb, one));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        MPI_FAILS(MPI_ERR_BUFFER, MPI_Bsend(sbuf, 10, MPI_BYTE, 1, 62, MPI_COMM_WORLD));
        MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        fill(sbuf, 10, 220);
        MPI_OK(MPI_Bsend(sbuf, 10, MPI_BYTE, 1, 63, dup));
        void *addr;
        int dsize;
        MPI_OK(MPI_Comm_detach_buffer(dup, &addr, &dsize));
        CHECK(addr == bb && dsize == one, "Comm_detach_buffer gave %p/%d", addr, dsize);
    } else if (rank == 1) {
        recv_check(rbuf, 10, 220, 63, dup, "Bsend on a communicator with its own buffer");
    }
    free(bb);
    MPI_OK(MPI_Comm_free(&dup));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* MPI_BUFFER_AUTOMATIC: the library finds room for any number of copies;
 * detach gives back MPI_BUFFER_AUTOMATIC. */
static void automatic_buffer(unsigned char *sbuf, unsigned char *rbuf)
{
    const int count = 8, n = 102400;
    if (rank == 0) {
        MPI_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        for (int k = 0; k < count; k++) {
            fill(sbuf, (size_t)n, 300 + (unsigned)k);
            MPI_OK(MPI_Bsend(sbuf, n, MPI_BYTE, 1, 70 + k, MPI_COMM_WORLD));
        }
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1)
        for (int k = count - 1; k >= 0; k--)
            recv_check(rbuf, n, 300 + (unsigned)k, 70 + k, MPI_COMM_WORLD, "automatic Bsend");
    if (rank == 0) {
        void *addr = NULL;
        int dsize = -1;
        MPI_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == MPI_BUFFER_AUTOMATIC, "Buffer_detach gave %p, expected MPI_BUFFER_AUTOMATIC",
              addr);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A buffered send of a non-contiguous type (every other int) is packed
 * into the buffer; the receiver gets the ints in a row. */
static void derived(void)
{
    const int n = 6000; /* 24 KB of data: a rendezvous-sized copy */
    int *s = malloc(sizeof(int) * 2 * n), *r = malloc(sizeof(int) * (n + 1));
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
    MPI_OK(MPI_Type_commit(&v));
    int ps = 0;
    MPI_OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &ps));
    int bsize = ps + MPI_BSEND_OVERHEAD;
    void *bb = malloc((size_t)bsize);
    if (rank == 0) {
        for (int i = 0; i < 2 * n; i++)
            s[i] = (i % 2) ? -1 : i / 2 * 3 + 1;
        MPI_OK(MPI_Buffer_attach(bb, bsize));
        MPI_OK(MPI_Bsend(s, 1, v, 1, 80, MPI_COMM_WORLD));
        memset(s, 0, sizeof(int) * 2 * n);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 1) {
        MPI_Status st;
        r[n] = -5;
        MPI_OK(MPI_Recv(r, n + 1, MPI_INT, 0, 80, MPI_COMM_WORLD, &st));
        int count = -1;
        MPI_OK(MPI_Get_count(&st, MPI_INT, &count));
        CHECK(count == n, "buffered vector: %d ints received", count);
        for (int i = 0; i < n; i++)
            CHECK(r[i] == i * 3 + 1, "buffered vector: int %d is %d", i, r[i]);
        CHECK(r[n] == -5, "buffered vector: wrote past the message");
    }
    if (rank == 0) {
        void *addr;
        int dsize;
        MPI_OK(MPI_Buffer_detach(&addr, &dsize));
    }
    MPI_OK(MPI_Type_free(&v));
    free(bb);
    free(s);
    free(r);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    unsigned char *sbuf = malloc(MAXSIZE), *rbuf = malloc(MAXSIZE + 16);
    local_completion(sbuf, rbuf, 0);
    local_completion(sbuf, rbuf, 1);
    buffer_errors(sbuf, rbuf);
    flush_and_comm_buffer(sbuf, rbuf);
    automatic_buffer(sbuf, rbuf);
    derived();
    free(sbuf);
    free(rbuf);
    if (rank == 0)
        printf("p2p_bsend: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
