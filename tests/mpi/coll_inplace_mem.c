/* In-place collectives on large buffers keep their scratch bounded.
 *
 *   coll_inplace_mem [MiB]      (run with HALO_COLL_SCRATCH_MAX=8388608)
 *
 * An in-place MPI_Alltoall of a 64 MiB buffer (by default) must not stage
 * the blocks it sends ((p - 1) / p of the buffer): the growth of the
 * process's peak resident size over the call must stay under a quarter of
 * the buffer (the peak is read from VmHWM, reset before each call). An
 * in-place MPI_Allreduce (MPI_SUM) of the same size must not take scratch
 * of the whole vector: growth under three quarters of it.
 * Both results are checked element by element, and both calls are made
 * blocking and nonblocking. */
#include "mpitest.h"

/* The peak resident size (VmHWM), which reset_peak sets back to the
 * current one (Linux's /proc/self/clear_refs, value 5). */
static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    CHECK(f != NULL, "cannot read /proc/self/status");
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
            break;
    fclose(f);
    CHECK(kib > 0, "no VmHWM in /proc/self/status");
    return kib;
}

static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    CHECK(f != NULL, "cannot open /proc/self/clear_refs");
    fputs("5", f);
    CHECK(fclose(f) == 0, "writing 5 to /proc/self/clear_refs failed");
}

static int value(int from, int to, long i)
{
    return from * 1000003 + to * 7919 + (int)(i % 100000);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long mib = argc > 1 ? atol(argv[1]) : 64;
    long n = (mib << 20) / (long)sizeof(int) / p * p, blk = n / p;
    int *v = malloc((size_t)n * sizeof(int));
    CHECK(v != NULL, "no memory for %ld ints", n);
    for (int pass = 0; pass < 2; pass++) {
        for (long i = 0; i < n; i++)
            v[i] = value(rank, (int)(i / blk), i % blk);
        reset_peak();
        long before = peak_kib();
        if (pass == 0) {
            MPI_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, (int)blk, MPI_INT, MPI_COMM_WORLD));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v, (int)blk, MPI_INT, MPI_COMM_WORLD,
                                 &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        long grew = peak_kib() - before;
        for (long i = 0; i < n; i++)
            if (v[i] != value((int)(i / blk), rank, i % blk))
                MT_FAIL("alltoall pass %d: element %ld is %d, expected %d", pass, i, v[i],
                        value((int)(i / blk), rank, i % blk));
        CHECK(grew < (mib << 10) / 4,
              "in-place alltoall pass %d: peak resident size grew by %ld KiB (buffer %ld KiB)", pass, grew,
              mib << 10);

        for (long i = 0; i < n; i++)
            v[i] = (int)(i % 1000) + rank;
        reset_peak();
        before = peak_kib();
        if (pass == 0) {
            MPI_OK(MPI_Allreduce(MPI_IN_PLACE, v, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        } else {
            MPI_Request r;
            MPI_OK(MPI_Iallreduce(MPI_IN_PLACE, v, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
        grew = peak_kib() - before;
        for (long i = 0; i < n; i++)
            if (v[i] != p * (int)(i % 1000) + p * (p - 1) / 2)
                MT_FAIL("allreduce pass %d: element %ld is %d", pass, i, v[i]);
        CHECK(grew < (mib << 10) * 3 / 4,
              "in-place allreduce pass %d: peak resident size grew by %ld KiB (buffer %ld KiB)", pass, grew,
              mib << 10);
    }
    free(v);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_inplace_mem: %d ranks ok\n", p);
    MPI_Finalize();
    return 0;
}
