/* A root's fan-out by rendezvous where ranks outnumber the cores
 * (halo_coll_fanout_rdv, coll_util.c): Scatter and Scatterv by messages
 * send blocks of 4 KiB and more by rendezvous, below the eager limit,
 * once they add up to more than 24 KiB, so that each receiver copies its
 * own block; with a core per rank, or smaller blocks, they go eagerly.
 * The testlist fixes the eager limit (16 KiB) and forces Scatter's linear
 * algorithm (the built-in table sends such blocks by single-copy reads,
 * shm_scatter_cma.c, instead); whether ranks outnumber
 * the processors comes from HALO_JOB_CPUS, which mpiexec sets (so on this
 * 2-CPU machine 4 and 8 ranks test the fan-out by rendezvous, and a
 * larger machine tests the eager one). For each block size the root
 * counts its rendezvous sends (halo_tool_rdv_sends) across one Scatter and
 * one Scatterv and checks them against the rule; every rank checks every
 * byte it received. With HALO_CMA=0 every block goes eagerly. */
#include <stdbool.h>

#include "mpitest.h"

long long halo_tool_rdv_sends(void);
int halo_tool_cma_node(void);

static unsigned char byte_of(int to, int it, long i)
{
    return (unsigned char)(to * 37 + it * 11 + i * 7 + (i >> 9));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *jc = getenv("HALO_JOB_CPUS");
    CHECK(jc && atol(jc) > 0, "HALO_JOB_CPUS is not set (run under Halo's mpiexec)");
    bool over = size > atol(jc);
    /* Without single-copy reads (HALO_CMA=0, or refused by the kernel)
     * the fan-out stays eager. */
    bool cma = halo_tool_cma_node() != 0;
    const char *cv = getenv("HALO_CMA");
    if (cv && atoi(cv) == 0)
        CHECK(!cma, "HALO_CMA=0, yet the library reads single-copy");
    const int sizes[] = {1024, 4096, 8192, 16384};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    const int root = size - 1;
    unsigned char *sbuf = malloc((size_t)size * 16384), *rbuf = malloc(16384 + 64);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    CHECK(sbuf && rbuf && counts && displs, "no memory");
    for (int it = 0; it < nsizes; it++) {
        int n = sizes[it];
        for (int to = 0; to < size; to++) {
            counts[to] = n;
            displs[to] = to * n;
            for (long i = 0; i < n; i++)
                sbuf[(long)to * n + i] = byte_of(to, it, i);
        }
        long long before = halo_tool_rdv_sends();
        for (int form = 0; form < 2; form++) {
            memset(rbuf, 0xee, (size_t)n + 64);
            if (form == 0)
                MPI_OK(MPI_Scatter(sbuf, n, MPI_BYTE, rbuf, n, MPI_BYTE, root, MPI_COMM_WORLD));
            else
                MPI_OK(MPI_Scatterv(sbuf, counts, displs, MPI_BYTE, rbuf, n, MPI_BYTE, root, MPI_COMM_WORLD));
            for (long i = 0; i < n; i++)
                if (rbuf[i] != byte_of(rank, it, i))
                    MT_FAIL("%s of %d-byte blocks: byte %ld is %u, expected %u", form ? "Scatterv" : "Scatter",
                            n, i, rbuf[i], byte_of(rank, it, i));
            for (int i = n; i < n + 64; i++)
                CHECK(rbuf[i] == 0xee, "%s of %d-byte blocks wrote past the block (byte %d)",
                      form ? "Scatterv" : "Scatter", n, i);
        }
        long long got = halo_tool_rdv_sends() - before;
        bool rdv = cma && over && n >= 4096 && (long)n * (size - 1) > 24576;
        long long want = rank == root && rdv ? 2LL * (size - 1) : 0;
        CHECK(got == want, "%d-byte blocks at %d ranks on %s processors: %lld sends by rendezvous, expected %lld",
              n, size, jc, got, want);
    }
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_fanout: ok\n");
    MPI_Finalize();
    return 0;
}
