/* Persistent requests: Send_init, Ssend_init, Bsend_init, Rsend_init and
 * Recv_init, started with Start and Startall over several iterations around
 * a ring, with the buffer contents changing every iteration (the request
 * must send what the buffer holds at Start, not at init). After each
 * Waitall the handles stay valid and inactive; at the end Request_free of
 * the inactive requests. Also a wildcard persistent receive reused for
 * messages from every other rank, whose status must name each sender, and
 * Waitany/Testsome over persistent requests. */
#include "mpitest.h"

#include <stdint.h>

enum { STANDARD, SYNCHRONOUS, BUFFERED, READY, NMODES };
static const char *mode_name[NMODES] = {"Send_init", "Ssend_init", "Bsend_init", "Rsend_init"};
static const int sizes[] = {0, 8, 2048, 16384, 17408, 262144};
#define NS ((int)(sizeof sizes / sizeof sizes[0]))
#define ITERS 5
#define GUARD 8

static int rank, size;

static unsigned char pat(unsigned seed, size_t i)
{
    uint64_t x = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)seed * 0xC2B2AE3D27D4EB4Full;
    x ^= x >> 29;
    return (unsigned char)(x ^ (x >> 32));
}

static unsigned seed_of(int src, int mode, int si, int it)
{
    return (unsigned)(src * 7919 + mode * 613 + si * 37 + it * 100003 + 1);
}

static void ring(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    unsigned char *sb[NS], *rb[NS];
    int total = 0;
    for (int si = 0; si < NS; si++) {
        sb[si] = malloc((size_t)sizes[si] + 1);
        rb[si] = malloc((size_t)sizes[si] + GUARD);
        total += sizes[si] + MPI_BSEND_OVERHEAD;
    }
    /* Without a barrier a rank can run up to size-1 iterations ahead of
     * its right neighbour, each leaving copies in the buffer. */
    int bsize = (size + 1) * total;
    void *battach = malloc((size_t)bsize);
    MPI_OK(MPI_Buffer_attach(battach, bsize));
    for (int mode = 0; mode < NMODES; mode++) {
        MPI_Request rr[NS], sr[NS], all[2 * NS];
        for (int si = 0; si < NS; si++) {
            int tag = mode * 10 + si;
            MPI_OK(MPI_Recv_init(rb[si], sizes[si] + GUARD, MPI_BYTE, left, tag, MPI_COMM_WORLD,
                                 &rr[si]));
            switch (mode) {
            case STANDARD:
                MPI_OK(MPI_Send_init(sb[si], sizes[si], MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr[si]));
                break;
            case SYNCHRONOUS:
                MPI_OK(MPI_Ssend_init(sb[si], sizes[si], MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr[si]));
                break;
            case BUFFERED:
                MPI_OK(MPI_Bsend_init(sb[si], sizes[si], MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr[si]));
                break;
            default:
                MPI_OK(MPI_Rsend_init(sb[si], sizes[si], MPI_BYTE, right, tag, MPI_COMM_WORLD, &sr[si]));
                break;
            }
        }
        for (int it = 0; it < ITERS; it++) {
            for (int si = 0; si < NS; si++) {
                for (int i = 0; i < sizes[si]; i++)
                    sb[si][i] = pat(seed_of(rank, mode, si, it), (size_t)i);
                memset(rb[si], 0xA5, (size_t)sizes[si] + GUARD);
            }
            /* Odd iterations start one by one, even ones with Startall. */
            if (it % 2)
                for (int si = 0; si < NS; si++)
                    MPI_OK(MPI_Start(&rr[si]));
            else
                MPI_OK(MPI_Startall(NS, rr));
            if (mode == READY)
                MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (it % 2)
                for (int si = NS - 1; si >= 0; si--)
                    MPI_OK(MPI_Start(&sr[si]));
            else
                MPI_OK(MPI_Startall(NS, sr));
            for (int si = 0; si < NS; si++) {
                all[si] = rr[si];
                all[NS + si] = sr[si];
            }
            MPI_Status st[2 * NS];
            MPI_OK(MPI_Waitall(2 * NS, all, st));
            for (int si = 0; si < NS; si++) {
                CHECK(all[si] == rr[si] && all[NS + si] == sr[si],
                      "%s: Waitall changed the handle of a persistent request", mode_name[mode]);
                int count = -1;
                MPI_OK(MPI_Get_count(&st[si], MPI_BYTE, &count));
                CHECK(st[si].MPI_SOURCE == left && st[si].MPI_TAG == mode * 10 + si &&
                      count == sizes[si],
                      "%s iteration %d: status (source %d, tag %d, count %d), expected (%d, %d, %d)",
                      mode_name[mode], it, st[si].MPI_SOURCE, st[si].MPI_TAG, count, left,
                      mode * 10 + si, sizes[si]);
                unsigned seed = seed_of(left, mode, si, it);
                for (int i = 0; i < sizes[si]; i++)
                    if (rb[si][i] != pat(seed, (size_t)i))
                        MT_FAIL("%s iteration %d, %d bytes: byte %d is %d, expected %d "
                                "(from iteration %s)", mode_name[mode], it, sizes[si], i,
                                rb[si][i], pat(seed, (size_t)i),
                                it > 0 && rb[si][i] == pat(seed_of(left, mode, si, it - 1), (size_t)i)
                                    ? "before" : "?");
                for (int i = 0; i < GUARD; i++)
                    CHECK(rb[si][sizes[si] + i] == 0xA5, "%s: guard byte %d overwritten",
                          mode_name[mode], i);
            }
            /* Inactive now: Test says complete with the empty status. */
            int flag = 0;
            MPI_Status est;
            MPI_OK(MPI_Test(&rr[0], &flag, &est));
            CHECK(flag == 1 && est.MPI_SOURCE == MPI_ANY_SOURCE && est.MPI_TAG == MPI_ANY_TAG,
                  "%s: Test of an inactive persistent request: flag %d source %d tag %d",
                  mode_name[mode], flag, est.MPI_SOURCE, est.MPI_TAG);
        }
        for (int si = 0; si < NS; si++) {
            MPI_OK(MPI_Request_free(&rr[si]));
            MPI_OK(MPI_Request_free(&sr[si]));
            CHECK(rr[si] == MPI_REQUEST_NULL && sr[si] == MPI_REQUEST_NULL,
                  "Request_free of an inactive persistent request did not reset the handle");
        }
    }
    void *addr;
    int dsize;
    MPI_OK(MPI_Buffer_detach(&addr, &dsize));
    CHECK(addr == battach && dsize == bsize, "Buffer_detach gave %p/%d", addr, dsize);
    free(battach);
    for (int si = 0; si < NS; si++) {
        free(sb[si]);
        free(rb[si]);
    }
}

/* Rank 0 reuses one Recv_init(MPI_ANY_SOURCE, MPI_ANY_TAG); every other
 * rank sends it one message per iteration through a persistent send. */
static void wildcard(void)
{
    if (size < 2)
        return;
    int v[2];
    MPI_Request r;
    if (rank == 0) {
        MPI_OK(MPI_Recv_init(v, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        for (int it = 0; it < ITERS; it++) {
            unsigned seen = 0;
            for (int k = 1; k < size; k++) {
                v[0] = v[1] = -1;
                MPI_Status st;
                MPI_OK(MPI_Start(&r));
                MPI_OK(MPI_Wait(&r, &st));
                int src = st.MPI_SOURCE;
                CHECK(src >= 1 && src < size && st.MPI_TAG == 100 * it + src && v[0] == src &&
                      v[1] == it,
                      "wildcard persistent receive, iteration %d: source %d tag %d data %d/%d",
                      it, src, st.MPI_TAG, v[0], v[1]);
                CHECK(!(seen & (1u << src)), "two messages from %d in iteration %d", src, it);
                seen |= 1u << src;
            }
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
        MPI_OK(MPI_Request_free(&r));
    } else {
        int tag = 0;
        /* The tag is fixed at init: one request per iteration. */
        for (int it = 0; it < ITERS; it++) {
            tag = 100 * it + rank;
            MPI_OK(MPI_Send_init(v, 2, MPI_INT, 0, tag, MPI_COMM_WORLD, &r));
            v[0] = rank;
            v[1] = it;
            MPI_OK(MPI_Start(&r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Request_free(&r));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        }
    }
}

/* Waitany and Testsome over persistent requests: a completed one stays
 * allocated (its handle is kept) and, now inactive, is not reported again;
 * with all of them inactive the calls say MPI_UNDEFINED. */
static void any_some(void)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    enum { N = 4 };
    int in[N], out[N];
    MPI_Request r[2 * N];
    for (int i = 0; i < N; i++) {
        MPI_OK(MPI_Recv_init(&in[i], 1, MPI_INT, left, 600 + i, MPI_COMM_WORLD, &r[i]));
        MPI_OK(MPI_Send_init(&out[i], 1, MPI_INT, right, 600 + i, MPI_COMM_WORLD, &r[N + i]));
    }
    MPI_Request saved[2 * N];
    memcpy(saved, r, sizeof r);
    for (int it = 0; it < 3; it++) {
        for (int i = 0; i < N; i++) {
            in[i] = -1;
            out[i] = rank * 100 + it * 10 + i;
        }
        MPI_OK(MPI_Startall(2 * N, r));
        int seen = 0;
        for (int k = 0; k < 2 * N; k++) {
            int idx = -1;
            MPI_Status st;
            if (it == 1) {
                int outcount = 0, indices[2 * N];
                while (outcount == 0)
                    MPI_OK(MPI_Testsome(2 * N, r, &outcount, indices, MPI_STATUSES_IGNORE));
                CHECK(outcount != MPI_UNDEFINED, "Testsome: MPI_UNDEFINED with active requests");
                for (int q = 0; q < outcount; q++) {
                    CHECK(!(seen & (1 << indices[q])), "Testsome reported index %d twice",
                          indices[q]);
                    seen |= 1 << indices[q];
                }
                k += outcount - 1;
                continue;
            }
            MPI_OK(MPI_Waitany(2 * N, r, &idx, &st));
            CHECK(idx >= 0 && idx < 2 * N, "Waitany index %d", idx);
            CHECK(!(seen & (1 << idx)), "Waitany reported persistent request %d twice", idx);
            seen |= 1 << idx;
            if (idx < N)
                CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 600 + idx,
                      "Waitany status source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        }
        CHECK(seen == (1 << 2 * N) - 1, "completed set %#x", seen);
        for (int i = 0; i < 2 * N; i++)
            CHECK(r[i] == saved[i], "a completion call changed persistent handle %d", i);
        for (int i = 0; i < N; i++)
            CHECK(in[i] == left * 100 + it * 10 + i, "iteration %d: receive %d got %d", it, i,
                  in[i]);
        int idx = -1, outcount = -1, indices[2 * N];
        MPI_OK(MPI_Waitany(2 * N, r, &idx, MPI_STATUS_IGNORE));
        CHECK(idx == MPI_UNDEFINED, "Waitany over inactive persistent requests: index %d", idx);
        MPI_OK(MPI_Testsome(2 * N, r, &outcount, indices, MPI_STATUSES_IGNORE));
        CHECK(outcount == MPI_UNDEFINED, "Testsome over inactive persistent requests: %d",
              outcount);
        /* Keep the iterations apart (tags repeat). */
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    for (int i = 0; i < 2 * N; i++)
        MPI_OK(MPI_Request_free(&r[i]));
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    ring();
    wildcard();
    any_some();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_persistent: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
