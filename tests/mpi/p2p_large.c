/* A message of more than 2 GiB (2^31 + 8 bytes of MPI_BYTE, a count above
 * INT_MAX) with the large-count calls: MPI_Send_c/MPI_Recv_c from rank 0
 * to rank 1, then MPI_Isend_c/MPI_Irecv_c back with every word changed.
 * Every 8-byte word is checked (each holds its own index), and guard bytes
 * after the receive buffer. On the status: MPI_Get_count and
 * MPI_Get_elements with MPI_BYTE give MPI_UNDEFINED (the count does not
 * fit an int) while the _c forms give the full count, and MPI_Get_count
 * with MPI_INT gives the (int-sized) number of ints. Each direction must
 * take less than 90 s (more means the transfer stalls). */
#include "mpitest.h"

#include <stdint.h>

#define NBYTES (((MPI_Count)1 << 31) + 8)
#define NWORDS ((size_t)NBYTES / 8)
#define GUARD 64
#define FLIP 0xF0F0F0F00F0F0F0Full
#define LIMIT 90.0

static uint64_t word(size_t j)
{
    return (uint64_t)j * 0x9E3779B97F4A7C15ull + 0x1234567ull;
}

static void check_counts(const MPI_Status *st, const char *what)
{
    int count = 0;
    MPI_Count ccount = 0;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(count == MPI_UNDEFINED, "%s: MPI_Get_count(MPI_BYTE) gave %d, expected MPI_UNDEFINED",
          what, count);
    MPI_OK(MPI_Get_count_c(st, MPI_BYTE, &ccount));
    CHECK(ccount == NBYTES, "%s: MPI_Get_count_c gave %lld, expected %lld", what,
          (long long)ccount, (long long)NBYTES);
    MPI_OK(MPI_Get_elements(st, MPI_BYTE, &count));
    CHECK(count == MPI_UNDEFINED, "%s: MPI_Get_elements(MPI_BYTE) gave %d", what, count);
    MPI_OK(MPI_Get_elements_c(st, MPI_BYTE, &ccount));
    CHECK(ccount == NBYTES, "%s: MPI_Get_elements_c gave %lld", what, (long long)ccount);
    MPI_OK(MPI_Get_count(st, MPI_INT, &count));
    CHECK(count == (int)(NBYTES / 4), "%s: MPI_Get_count(MPI_INT) gave %d, expected %lld", what,
          count, (long long)(NBYTES / 4));
}

static void check_words(const uint64_t *w, uint64_t flip, const char *what)
{
    for (size_t j = 0; j < NWORDS; j++)
        if (w[j] != (word(j) ^ flip))
            MT_FAIL("%s: word %zu (byte offset %zu) is %#llx, expected %#llx", what, j, j * 8,
                    (unsigned long long)w[j], (unsigned long long)(word(j) ^ flip));
    const unsigned char *g = (const unsigned char *)(w + NWORDS);
    for (int i = 0; i < GUARD; i++)
        if (g[i] != 0xA5)
            MT_FAIL("%s: guard byte %d after the buffer was overwritten", what, i);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    uint64_t *w = NULL;
    if (rank < 2) {
        w = malloc((size_t)NBYTES + GUARD);
        CHECK(w != NULL, "cannot allocate %lld bytes", (long long)NBYTES + GUARD);
        memset((char *)w + NBYTES, 0xA5, GUARD);
    }
    MPI_Status st;
    if (rank == 0) {
        for (size_t j = 0; j < NWORDS; j++)
            w[j] = word(j);
        double t0 = MPI_Wtime();
        MPI_OK(MPI_Send_c(w, NBYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD));
        double t1 = MPI_Wtime();
        /* The answer comes back into the same buffer, every word flipped. */
        MPI_Request r;
        MPI_OK(MPI_Irecv_c(w, NBYTES + GUARD, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == 1 && st.MPI_TAG == 2, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        double t2 = MPI_Wtime();
        check_counts(&st, "Irecv_c on rank 0");
        check_words(w, FLIP, "message returned by Isend_c");
        printf("p2p_large: %lld bytes each way, Send_c took %.2f s, the way back %.2f s\n",
               (long long)NBYTES, t1 - t0, t2 - t1);
        /* A few seconds each way on an idle machine (single copy or
         * pushed through shared memory); the limit only catches transfers
         * that stall, so that they fail here rather than at the timeout. */
        CHECK(t1 - t0 < LIMIT && t2 - t1 < LIMIT,
              "moving 2 GiB took %.1f s and %.1f s (limit %.0f s each)", t1 - t0, t2 - t1, LIMIT);
    } else if (rank == 1) {
        MPI_OK(MPI_Recv_c(w, NBYTES + GUARD, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 1, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        check_counts(&st, "Recv_c on rank 1");
        check_words(w, 0, "message sent by Send_c");
        for (size_t j = 0; j < NWORDS; j++)
            w[j] ^= FLIP;
        MPI_Request r;
        MPI_OK(MPI_Isend_c(w, NBYTES, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    }
    free(w);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_large: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
