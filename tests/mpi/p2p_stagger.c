/* Several receivers reading one send buffer at once.
 *
 *   p2p_stagger on | off | any
 *
 * Rank 0 sends one buffer to every other rank with nonblocking sends
 * posted together (as a linear Bcast's root does), at sizes from below
 * the stagger threshold (HALO_STAGGER_MIN, 256 KiB by default) to 4 MiB,
 * some not a multiple of a page; every receiver checks every byte of what
 * it got, and the guard bytes after it. Then rank 0 sends one buffer four
 * times in a row to rank 1 alone.
 *
 * on: where single-copy reads work, the library numbers the concurrent
 * readers of the range and each but the first starts its read at a page
 * boundary of its own (halo_tool_last_read_first): the test checks that
 * the receiver of the first send starts at byte 0, every other receiver of
 * a message at or above the threshold at a distinct nonzero page boundary
 * inside the message, every receiver below it at 0, and the lone
 * receiver of the repeated sends at 0 (one reader reads in order).
 * off (HALO_STAGGER_MIN=0, or no single-copy reads): every read starts at
 * byte 0. any: the data only, and every start at a page boundary inside
 * the message (with the rendezvous split on, a receiver reads the first
 * part only and staggers within it when that part reaches the threshold).
 * The testlist runs "on" with the split off (HALO_SPLIT_MIN=0): where
 * the ranks fit the cores the receivers would split their copies. */
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

long long halo_tool_last_read_first(void);

#define GUARD 64
#define MIN_DEFAULT 262144

/* A byte of each position (a hash: a block read into the wrong place
 * shows, whatever the shift). */
static unsigned char pattern(int round, size_t i)
{
    uint32_t x = (uint32_t)i * 0x9E3779B1u + (uint32_t)round * 0x85EBCA6Bu;
    return (unsigned char)(x >> 24);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    CHECK(argc == 2 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off") || !strcmp(argv[1], "any")),
          "usage: p2p_stagger on|off|any");
    bool on = !strcmp(argv[1], "on"), any = !strcmp(argv[1], "any");
    CHECK(p >= 3, "needs at least 3 ranks, has %d", p);
    long min = MIN_DEFAULT;
    const char *e = getenv("HALO_STAGGER_MIN");
    if (e)
        min = atol(e);
    const size_t sizes[] = {20000, 262143, 262144, 1048576 + 12345, 4194304};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    long long *firsts = malloc((size_t)p * sizeof *firsts);
    for (int s = 0; s < nsizes; s++) {
        size_t n = sizes[s];
        unsigned char *buf = malloc(n + GUARD);
        if (me == 0) {
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(s, i);
            MPI_Request *rq = malloc((size_t)(p - 1) * sizeof *rq);
            for (int j = 1; j < p; j++)
                MPI_OK(MPI_Isend(buf, (int)n, MPI_BYTE, j, s, MPI_COMM_WORLD, &rq[j - 1]));
            MPI_OK(MPI_Waitall(p - 1, rq, MPI_STATUSES_IGNORE));
            free(rq);
        } else {
            memset(buf, 0xA5, n + GUARD);
            MPI_Status st;
            MPI_OK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, s, MPI_COMM_WORLD, &st));
            int cnt = -1;
            MPI_OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
            CHECK(cnt == (int)n, "size %zu: received %d bytes", n, cnt);
            for (size_t i = 0; i < n; i++)
                CHECK(buf[i] == pattern(s, i), "size %zu: byte %zu is %u, expected %u", n, i, buf[i],
                      pattern(s, i));
            for (size_t i = n; i < n + GUARD; i++)
                CHECK(buf[i] == 0xA5, "size %zu: guard byte %zu overwritten", n, i - n);
        }
        long long mine = me == 0 ? 0 : halo_tool_last_read_first();
        MPI_OK(MPI_Gather(&mine, 1, MPI_LONG_LONG, firsts, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
        if (me == 0 && any) {
            for (int j = 1; j < p; j++)
                CHECK(firsts[j] >= 0 && firsts[j] < (long long)n && firsts[j] % 4096 == 0,
                      "size %zu: receiver %d's read began at byte %lld", n, j, firsts[j]);
        } else if (me == 0) {
            bool stagger = on && min > 0 && (long)n >= min;
            CHECK(firsts[1] == 0, "size %zu: the first receiver's read began at byte %lld", n, firsts[1]);
            for (int j = 2; j < p; j++) {
                long long f = firsts[j];
                if (!stagger) {
                    CHECK(f == 0, "size %zu (%s): receiver %d's read began at byte %lld", n,
                          on ? "below the threshold" : "off", j, f);
                    continue;
                }
                CHECK(f > 0 && f < (long long)n && f % 4096 == 0,
                      "size %zu: receiver %d's read began at byte %lld, not at a page boundary inside", n,
                      j, f);
                for (int k = 2; k < j; k++)
                    CHECK(firsts[k] != f, "size %zu: receivers %d and %d both began at byte %lld", n, k,
                          j, f);
            }
        }
        free(buf);
    }
    /* One receiver, the same buffer four times: read in order each time. */
    size_t n = 1048576 + 12345;
    unsigned char *buf = malloc(n);
    if (me == 0) {
        for (size_t i = 0; i < n; i++)
            buf[i] = pattern(7, i);
        MPI_Request rq[4];
        for (int k = 0; k < 4; k++)
            MPI_OK(MPI_Isend(buf, (int)n, MPI_BYTE, 1, 100 + k, MPI_COMM_WORLD, &rq[k]));
        MPI_OK(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE));
    } else if (me == 1) {
        for (int k = 0; k < 4; k++) {
            memset(buf, 0, n);
            MPI_OK(MPI_Recv(buf, (int)n, MPI_BYTE, 0, 100 + k, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (size_t i = 0; i < n; i++)
                CHECK(buf[i] == pattern(7, i), "repeat %d: byte %zu is %u", k, i, buf[i]);
            CHECK(halo_tool_last_read_first() == 0, "repeat %d: one receiver's read began at byte %lld",
                  k, halo_tool_last_read_first());
        }
    }
    free(buf);
    free(firsts);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("p2p_stagger: %s, %d ranks, threshold %ld: ok\n", argv[1], p, min);
    MPI_Finalize();
    return 0;
}
