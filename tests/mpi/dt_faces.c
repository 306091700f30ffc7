/* The halo exchange of a 3-D stencil code: a 128x128x128 array of doubles
 * with one ghost layer (130^3 in memory). Each rank sends the six faces
 * of its interior to the partner, which receives them into its ghost
 * faces, all described by subarray types (the x faces are 128 runs of 128
 * doubles, the y faces 128 runs of 128 doubles 130*130 apart, the z faces
 * 16384 single doubles). The same bytes are then exchanged from contiguous
 * buffers, and the two times compared (median of several rounds); the
 * ratio is printed (the target is at most 1.5). Every ghost element is
 * checked, and the interior must stay untouched. Two ranks (pairs
 * 2k <-> 2k+1 with more). Arguments: rounds (default 30); "strict" fails
 * the test when the ratio exceeds 1.5. */
#include "mpitest.h"

#include <stdint.h>

#define N 128
#define M (N + 2)

static double val(int rank, long i)
{
    return rank * 1e7 + (double)i;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static long at(long i, long j, long k)
{
    return (i * M + j) * M + k;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = 30, strict = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "strict") == 0)
            strict = 1;
        else
            rounds = atoi(argv[i]);
    }
    int partner = rank ^ 1;
    if (partner >= size) {
        MPI_Finalize();
        return 0;
    }
    long total = (long)M * M * M;
    double *a = malloc(sizeof(double) * (size_t)total);
    for (long i = 0; i < total; i++)
        a[i] = val(rank, i);
    /* face (d, s) of the interior: index 1 (s = 0) or N (s = 1) along d;
     * ghost (d, s): index 0 (s = 0) or N + 1 (s = 1) */
    MPI_Datatype face[3][2], ghost[3][2];
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            int sizes[3] = {M, M, M}, sub[3] = {N, N, N}, st[3] = {1, 1, 1};
            sub[d] = 1;
            st[d] = s ? N : 1;
            MPI_OK(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &face[d][s]));
            MPI_OK(MPI_Type_commit(&face[d][s]));
            st[d] = s ? N + 1 : 0;
            MPI_OK(MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &ghost[d][s]));
            MPI_OK(MPI_Type_commit(&ghost[d][s]));
        }
    long fsz = (long)N * N;
    double *cs[6], *cr[6];
    for (int f = 0; f < 6; f++) {
        cs[f] = malloc(sizeof(double) * (size_t)fsz);
        cr[f] = malloc(sizeof(double) * (size_t)fsz);
        for (long i = 0; i < fsz; i++)
            cs[f][i] = (double)i;
    }
    double *tt = malloc(sizeof(double) * (size_t)rounds), *tc = malloc(sizeof(double) * (size_t)rounds);
    for (int r = -3; r < rounds; r++) {
        MPI_Request q[12];
        /* typed: my face (d, s) lands in the partner's face (d, 1 - s) */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        /* my high face goes to the partner's low ghost, and so on */
        for (int d = 0, n = 0; d < 3; d++)
            for (int s = 0; s < 2; s++, n += 2) {
                MPI_OK(MPI_Irecv(a, 1, ghost[d][1 - s], partner, d * 2 + s, MPI_COMM_WORLD, &q[n]));
                MPI_OK(MPI_Isend(a, 1, face[d][s], partner, d * 2 + s, MPI_COMM_WORLD, &q[n + 1]));
            }
        MPI_OK(MPI_Waitall(12, q, MPI_STATUSES_IGNORE));
        double t1 = MPI_Wtime();
        /* contiguous: the same number of bytes per message */
        MPI_Barrier(MPI_COMM_WORLD);
        double t2 = MPI_Wtime();
        for (int f = 0; f < 6; f++) {
            MPI_OK(MPI_Irecv(cr[f], (int)fsz, MPI_DOUBLE, partner, 100 + f, MPI_COMM_WORLD, &q[2 * f]));
            MPI_OK(MPI_Isend(cs[f], (int)fsz, MPI_DOUBLE, partner, 100 + f, MPI_COMM_WORLD, &q[2 * f + 1]));
        }
        MPI_OK(MPI_Waitall(12, q, MPI_STATUSES_IGNORE));
        double t3 = MPI_Wtime();
        if (r >= 0) {
            tt[r] = t1 - t0;
            tc[r] = t3 - t2;
        }
    }
    /* check every ghost element and the interior; edges and corners of
     * the ghost layer belong to no face and keep their value */
    long bad = 0;
    for (long i = 0; i < M; i++)
        for (long j = 0; j < M; j++)
            for (long k = 0; k < M; k++) {
                long c3[3] = {i, j, k}, src[3] = {i, j, k};
                int ghosts = 0, gd = -1;
                for (int d = 0; d < 3; d++)
                    if (c3[d] == 0 || c3[d] == N + 1) {
                        ghosts++;
                        gd = d;
                    }
                double want = val(rank, at(i, j, k));
                if (ghosts == 1) {
                    src[gd] = c3[gd] == 0 ? N : 1;
                    want = val(partner, at(src[0], src[1], src[2]));
                }
                if (a[at(i, j, k)] != want && bad++ < 5)
                    fprintf(stderr, "rank %d: a[%ld][%ld][%ld] = %.1f, expected %.1f\n", rank, i, j, k,
                            a[at(i, j, k)], want);
            }
    CHECK(bad == 0, "%ld wrong elements after the exchange", bad);
    for (int f = 0; f < 6; f++)
        CHECK(cr[f][fsz - 1] == (double)(fsz - 1), "contiguous face %d", f);
    qsort(tt, (size_t)rounds, sizeof *tt, cmp);
    qsort(tc, (size_t)rounds, sizeof *tc, cmp);
    double mt = tt[rounds / 2], mc = tc[rounds / 2];
    if (rank == 0)
        printf("dt_faces: 6 faces of a %d^3 array of doubles (%ld KiB each): subarray types %.1f us, contiguous %.1f us, "
               "ratio %.2f (median of %d)\n", N, fsz * 8 / 1024, mt * 1e6, mc * 1e6, mt / mc, rounds);
    if (strict)
        CHECK(mt / mc <= 1.5, "ratio %.2f above 1.5", mt / mc);
    for (int d = 0; d < 3; d++)
        for (int s = 0; s < 2; s++) {
            MPI_OK(MPI_Type_free(&face[d][s]));
            MPI_OK(MPI_Type_free(&ghost[d][s]));
        }
    for (int f = 0; f < 6; f++) {
        free(cs[f]);
        free(cr[f]);
    }
    free(a);
    free(tt);
    free(tc);
    MPI_Finalize();
    return 0;
}
