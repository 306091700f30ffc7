/* Where eager sends stop, as the shared-memory transport chooses it:
 *
 *   p2p_eager_limit LIMIT
 *
 * LIMIT is the largest message the environment should make eager
 * (HALO_SHM_EAGER_MAX, or the default HALO_CPU picks: 2048 for Intel
 * processors when the two ranks have a core each and single-copy reads
 * work, else 16384). An eager send completes without its receive being
 * posted; a rendezvous send cannot complete before it. Rank 0 sends LIMIT
 * and LIMIT + 1 bytes to rank 1, which posts its receives only when told
 * to, after rank 0 has watched each send for a while: the first must
 * complete alone, the second must not. The data is checked. */
#include <sys/uio.h>
#include <unistd.h>

#include "mpitest.h"

/* Whether this process may use single-copy reads at all. */
static int cma_here(void)
{
    static const long probe = 0x5a5a1234;
    long got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)&probe, sizeof probe};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof got && got == probe;
}

/* Tests req for up to ms milliseconds; whether it completed. */
static int completes_within(MPI_Request *req, int ms)
{
    double end = MPI_Wtime() + ms * 1e-3;
    int done = 0;
    while (!done && MPI_Wtime() < end)
        MPI_OK(MPI_Test(req, &done, MPI_STATUS_IGNORE));
    return done;
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size == 2, "run with 2 ranks, not %d", size);
    CHECK(argc > 1, "usage: p2p_eager_limit LIMIT|auto");
    long limit = atol(argv[1]);
    if (!strcmp(argv[1], "auto")) {
        /* The default for this processor and these two ranks. */
        const char *cpu = getenv("HALO_CPU");
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        CHECK(cpu && !strcmp(cpu, "intel"), "auto expects HALO_CPU=intel");
        limit = ncpu >= 2 && cma_here() ? 2048 : 16384;
    }
    CHECK(limit > 0 && limit < 32768, "limit %ld", limit);
    char *buf = malloc((size_t)limit + 1);
    for (long n = limit; n <= limit + 1; n++) {
        int eager = n == limit;
        if (rank == 0) {
            for (long i = 0; i < n; i++)
                buf[i] = (char)(i * 7 + n);
            MPI_Request req;
            MPI_OK(MPI_Isend(buf, (int)n, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &req));
            /* An eager send leaves at once; give a rendezvous one the same
             * time to show that it does not complete alone. */
            int done = completes_within(&req, eager ? 5000 : 200);
            CHECK(done == eager, "a send of %ld bytes %s before its receive was posted (eager limit %ld)", n,
                  done ? "completed" : "did not complete", limit);
            MPI_OK(MPI_Send(NULL, 0, MPI_CHAR, 1, 2, MPI_COMM_WORLD));
            MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv(NULL, 0, MPI_CHAR, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            memset(buf, 0, (size_t)n);
            MPI_Status st;
            MPI_OK(MPI_Recv(buf, (int)n, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &st));
            int got;
            MPI_OK(MPI_Get_count(&st, MPI_CHAR, &got));
            CHECK(got == n, "received %d bytes, expected %ld", got, n);
            for (long i = 0; i < n; i++)
                CHECK(buf[i] == (char)(i * 7 + n), "byte %ld of %ld", i, n);
        }
    }
    free(buf);
    MPI_OK(MPI_Finalize());
    return 0;
}
