/* Ranks placed on one CPU.
 *
 *   p2p_shared_cpu bound | free
 *
 * bound (mpiexec's default placement): every rank runs on one CPU, rank i
 * on the (i mod n)-th of the CPUs the job may use; free (--bind-to none):
 * no rank is bound. Each rank tells every other, from its own affinity
 * mask, the CPU it is bound to (or none), and checks that the library
 * sees a peer as sharing its CPU exactly when both are bound to the same
 * one (halo_tool_shares_cpu): a receiver then copies a large message alone
 * rather than splitting the copy with a sender that cannot run meanwhile.
 * Then every rank sends messages of 64 KiB, 1 MiB + 3 bytes and 4 MiB to
 * the rank half the job away and to its neighbour (pairs on one CPU and
 * pairs across CPUs when the ranks outnumber the CPUs), and the data is
 * checked byte for byte. */
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

int halo_tool_shares_cpu(int world);

static int my_cpu(int *ncpus)
{
    cpu_set_t set;
    CHECK(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity failed");
    *ncpus = CPU_COUNT(&set);
    if (*ncpus != 1)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}

static unsigned char pattern(int from, int to, size_t i)
{
    return (unsigned char)(from * 31 + to * 7 + i * 13 + (i >> 11));
}

static void exchange(int rank, int size, int dist, size_t n)
{
    int to = (rank + dist) % size, from = (rank - dist + size) % size;
    unsigned char *s = calloc(n, 1), *r = calloc(n, 1);
    CHECK(s && r, "calloc(%zu) failed", n);
    for (size_t i = 0; i < n; i++)
        s[i] = pattern(rank, to, i);
    MPI_OK(MPI_Sendrecv(s, (int)n, MPI_BYTE, to, 7, r, (int)n, MPI_BYTE, from, 7, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
    for (size_t i = 0; i < n; i++)
        CHECK(r[i] == pattern(from, rank, i), "%zu bytes from rank %d (distance %d): byte %zu is %u, "
              "expected %u", n, from, dist, i, r[i], pattern(from, rank, i));
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (!strcmp(argv[1], "bound") || !strcmp(argv[1], "free")),
          "usage: p2p_shared_cpu bound|free");
    bool bound = !strcmp(argv[1], "bound");
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size, ncpus;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int cpu = my_cpu(&ncpus);
    if (bound)
        CHECK(cpu >= 0, "rank %d: mpiexec's default placement left it on %d CPUs", rank, ncpus);
    else
        CHECK(cpu < 0 || ncpus == 1, "rank %d: bound to CPU %d under --bind-to none", rank, cpu);
    int *cpus = malloc((size_t)size * sizeof *cpus);
    CHECK(cpus != NULL, "malloc failed");
    MPI_OK(MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD));
    int sharing = 0;
    for (int j = 0; j < size; j++) {
        int want = j != rank && cpu >= 0 && cpus[j] == cpu;
        int got = halo_tool_shares_cpu(j);
        CHECK(got == want, "rank %d (CPU %d) and rank %d (CPU %d): shares_cpu says %d", rank, cpu, j, cpus[j],
              got);
        sharing += want;
    }
    CHECK(halo_tool_shares_cpu(-1) == 0 && halo_tool_shares_cpu(size) == 0, "ranks out of range share a CPU");
    /* Bound round robin, ranks that outnumber the CPUs share them. */
    int total = 0;
    MPI_OK(MPI_Allreduce(&sharing, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (bound && size > online)
        CHECK(total > 0, "%d ranks bound on %ld CPUs and no two share one", size, online);
    if (!bound)
        CHECK(total == 0, "unbound ranks seen sharing a CPU (%d pairs)", total);

    const size_t sizes[] = {65536, (1 << 20) + 3, 4 << 20};
    for (int k = 0; k < 3; k++) {
        if (size > 1) {
            exchange(rank, size, 1, sizes[k]);
            if (size > 2)
                exchange(rank, size, size / 2, sizes[k]);
        }
    }
    free(cpus);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_shared_cpu: %s, %d ranks, %d pairs on one CPU: ok\n", argv[1], size, total / 2);
    MPI_OK(MPI_Finalize());
    return 0;
}
