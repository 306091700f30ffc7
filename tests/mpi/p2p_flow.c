/* Flow control: a sender that has filled the shared-memory channels to a
 * receiver must resume as soon as the receiver drains them, not after a
 * sleep timeout. Rank 0 streams to rank 1 (other ranks idle):
 *   - 2000 eager messages of 16 KiB with blocking sends (32 MiB), far more
 *     than the sender's cells and ring hold;
 *   - 1000 tiny messages through a window of Isends;
 *   - two 64 MiB rendezvous messages (with HALO_CMA=0 they are pushed in
 *     eager-sized chunks through the same cells).
 * Each phase moves its data in a fraction of a second on an idle machine;
 * the limits (a few MB/s) only catch a sender that stalls each time the
 * channels fill up. All data is checked. */
#include "mpitest.h"

#include <stdint.h>
#include <time.h>

static int rank, size;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void phase_done(const char *what, double t0, double limit, double mbytes)
{
    double dt = now() - t0;
    MPI_OK(MPI_Bcast(&dt, 1, MPI_DOUBLE, 1, MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_flow: %s: %.3f s (%.0f MB/s)\n", what, dt, mbytes / dt);
    CHECK(dt < limit, "%s took %.3f s (limit %.1f s): the sender stalls when the channels fill",
          what, dt, limit);
}

static void eager_stream(void)
{
    const int n = 2000, len = 16384 / 8;
    uint64_t *b = malloc(16384);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    if (rank == 0) {
        for (int k = 0; k < n; k++) {
            for (int i = 0; i < len; i++)
                b[i] = (uint64_t)k << 32 | (uint64_t)i;
            MPI_OK(MPI_Send(b, len, MPI_UINT64_T, 1, 1, MPI_COMM_WORLD));
        }
    } else if (rank == 1) {
        for (int k = 0; k < n; k++) {
            MPI_OK(MPI_Recv(b, len, MPI_UINT64_T, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            for (int i = 0; i < len; i++)
                if (b[i] != ((uint64_t)k << 32 | (uint64_t)i))
                    MT_FAIL("eager message %d: word %d is %#llx", k, i, (unsigned long long)b[i]);
        }
    }
    phase_done("2000 x 16 KiB eager sends", t0, 3.0, 2000 * 16384 / 1e6);
    free(b);
}

static void tiny_window(void)
{
    const int n = 1000, window = 100;
    int *v = malloc(sizeof(int) * (size_t)window);
    MPI_Request *r = malloc(sizeof(MPI_Request) * (size_t)window);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    for (int k = 0; k < n; k += window) {
        if (rank == 0) {
            for (int j = 0; j < window; j++) {
                v[j] = k + j;
                MPI_OK(MPI_Isend(&v[j], 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r[j]));
            }
            MPI_OK(MPI_Waitall(window, r, MPI_STATUSES_IGNORE));
        } else if (rank == 1) {
            for (int j = 0; j < window; j++) {
                int x = -1;
                MPI_OK(MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                CHECK(x == k + j, "tiny message %d holds %d", k + j, x);
            }
        }
    }
    phase_done("1000 tiny Isends", t0, 2.0, n * 4 / 1e6);
    free(v);
    free(r);
}

static void rendezvous(void)
{
    const size_t words = (64u << 20) / 8;
    uint64_t *b = NULL;
    if (rank < 2) {
        b = malloc(words * 8);
        memset(b, 0, words * 8); /* page faults outside the timed part */
    }
    for (int rep = 0; rep < 2; rep++) {
        if (rank == 0)
            for (size_t i = 0; i < words; i++)
                b[i] = i * 0x9E3779B97F4A7C15ull + (uint64_t)rep;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = now();
        if (rank == 0)
            MPI_OK(MPI_Send(b, (int)words, MPI_UINT64_T, 1, 3, MPI_COMM_WORLD));
        else if (rank == 1)
            MPI_OK(MPI_Recv(b, (int)words, MPI_UINT64_T, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        phase_done("64 MiB rendezvous", t0, 3.0, 64 * 1.048576);
        if (rank == 1)
            for (size_t i = 0; i < words; i++)
                if (b[i] != i * 0x9E3779B97F4A7C15ull + (uint64_t)rep)
                    MT_FAIL("64 MiB message %d: word %zu is wrong", rep, i);
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    eager_stream();
    tiny_window();
    rendezvous();
    if (rank == 0)
        printf("p2p_flow: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
