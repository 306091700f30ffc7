/* Datatype pack/unpack throughput against memcpy of the same packed bytes.
 *
 *   mpiexec -n 1 halo-pack-bench [-min BYTES] [-max BYTES] [-reps N] [-best]
 *
 * For each packed size from 1 KiB to 64 MiB (x4 steps) and each type:
 *   vector B     MPI_Type_vector of B-byte blocks of doubles (B = 8, 64,
 *                256, 1024, 4096) at a stride of 2B
 *   subarray2d   a rows x cols block of doubles out of a rows x 2 cols array
 *   subarray3d   the interior of a 3-D array of doubles with one ghost layer
 * it times MPI_Pack and MPI_Unpack and a plain memcpy of the packed size
 * between two contiguous buffers (each run times the three in turn, each
 * repeated for about 10 ms; medians over the runs), and prints GB/s and
 * the median of the per-run ratios to memcpy. Run it on an otherwise idle
 * machine; on a shared one, -best reports the fastest of the runs (each
 * about 2 ms) instead, an estimate of the undisturbed speed. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

enum { OP_PACK, OP_UNPACK, OP_MEMCPY, NOPS };

/* -best: report the fastest run instead of the median (an estimate of the
 * undisturbed speed on a shared machine). */
static int use_best;
static double window = 0.01;

typedef struct job {
    void *user, *packed, *src;
    MPI_Datatype t;
    MPI_Count bytes;
} job_t;

/* Seconds for `iters` repetitions of one operation. */
static double once(const job_t *j, int op, int iters)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        MPI_Count pos = 0;
        if (op == OP_PACK)
            MPI_Pack_c(j->user, 1, j->t, j->packed, j->bytes, &pos, MPI_COMM_SELF);
        else if (op == OP_UNPACK)
            MPI_Unpack_c(j->packed, j->bytes, &pos, j->user, 1, j->t, MPI_COMM_SELF);
        else
            memcpy(j->packed, j->src, (size_t)j->bytes);
    }
    return MPI_Wtime() - t0;
}

/* Seconds per operation of pack, unpack and memcpy: medians over `runs`
 * runs, each run timing the three one after the other (so that a
 * disturbance hits all three alike), each for about 10 ms. Also the
 * medians of the per-run ratios memcpy / pack and memcpy / unpack. */
static void timeit(const job_t *j, int runs, double t[NOPS], double ratio[2])
{
    int iters[NOPS];
    for (int op = 0; op < NOPS; op++) {
        iters[op] = 1;
        for (int calib = 0; calib < 30 && once(j, op, iters[op]) < window; calib++)
            iters[op] *= 2;
    }
    double *v = malloc(sizeof(double) * (size_t)runs * (NOPS + 2));
    for (int r = 0; r < runs; r++) {
        double s[NOPS];
        for (int op = 0; op < NOPS; op++) {
            s[op] = once(j, op, iters[op]) / iters[op];
            v[op * runs + r] = s[op];
        }
        v[NOPS * runs + r] = s[OP_MEMCPY] / s[OP_PACK];
        v[(NOPS + 1) * runs + r] = s[OP_MEMCPY] / s[OP_UNPACK];
    }
    for (int k = 0; k < NOPS + 2; k++)
        qsort(v + k * runs, (size_t)runs, sizeof *v, cmpd);
    int at = use_best ? 0 : runs / 2;
    for (int op = 0; op < NOPS; op++)
        t[op] = v[op * runs + at];
    ratio[0] = use_best ? t[OP_MEMCPY] / t[OP_PACK] : v[NOPS * runs + runs / 2];
    ratio[1] = use_best ? t[OP_MEMCPY] / t[OP_UNPACK] : v[(NOPS + 1) * runs + runs / 2];
    free(v);
}

static void fill(void *p, size_t n)
{
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)(i * 131 + 7);
}

/* Runs one type: user buffer of `span` bytes, `bytes` packed. */
static void run(const char *name, MPI_Datatype t, MPI_Count bytes, int runs)
{
    MPI_Count lb, extent, size;
    MPI_Type_get_true_extent_c(t, &lb, &extent);
    MPI_Type_size_c(t, &size);
    if (size != bytes) {
        fprintf(stderr, "%s: size %lld, expected %lld\n", name, (long long)size, (long long)bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    char *user = malloc((size_t)(lb + extent));
    char *packed = malloc((size_t)bytes), *src = malloc((size_t)bytes);
    fill(user, (size_t)(lb + extent));
    fill(src, (size_t)bytes);
    job_t j = {user, packed, src, t, bytes};
    double tm[NOPS], ratio[2];
    timeit(&j, runs, tm, ratio);
    double gb = (double)bytes / 1e9;
    printf("%-14s %10lld  %8.2f  %8.2f  %8.2f   %5.0f%%  %5.0f%%\n", name, (long long)bytes, gb / tm[OP_PACK],
           gb / tm[OP_UNPACK], gb / tm[OP_MEMCPY], 100 * ratio[0], 100 * ratio[1]);
    fflush(stdout);
    free(user);
    free(packed);
    free(src);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Count minb = 1024, maxb = 64 << 20;
    int runs = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-best")) {
            use_best = 1;
            window = 0.002;
        } else if (i + 1 < argc && !strcmp(argv[i], "-min")) {
            minb = atoll(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-max")) {
            maxb = atoll(argv[++i]);
        } else if (i + 1 < argc && !strcmp(argv[i], "-reps")) {
            runs = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: halo-pack-bench [-min BYTES] [-max BYTES] [-reps N] [-best]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    printf("# type            packed B   pack GB/s unpack GB/s memcpy GB/s  pack/memcpy unpack/memcpy"
           " (%s of %d)\n", use_best ? "best" : "median", runs);
    static const int blocks[] = {8, 64, 256, 1024, 4096};
    for (MPI_Count bytes = minb; bytes <= maxb; bytes *= 4) {
        for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
            int b = blocks[k];
            if (bytes < b)
                continue;
            MPI_Datatype v;
            MPI_Type_vector((int)(bytes / b), b / 8, b / 4, MPI_DOUBLE, &v);
            MPI_Type_commit(&v);
            char name[32];
            snprintf(name, sizeof name, "vector %d", b);
            run(name, v, bytes, runs);
            MPI_Type_free(&v);
        }
        /* elements = 2^e doubles, split over the dimensions */
        int e = 0;
        while (((MPI_Count)8 << e) < bytes)
            e++;
        if (((MPI_Count)8 << e) == bytes && e >= 2) {
            /* a rows x cols block out of a rows x 2 cols array */
            int rows = 1 << (e / 2), cols = 1 << (e - e / 2);
            int sz[2] = {rows, 2 * cols}, sub[2] = {rows, cols}, st[2] = {0, cols / 2};
            MPI_Datatype s;
            MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, &s);
            MPI_Type_commit(&s);
            run("subarray2d", s, bytes, runs);
            MPI_Type_free(&s);
            /* the interior of a 3-D array with one ghost layer */
            int d0 = 1 << (e / 3), d1 = 1 << ((e - e / 3) / 2), d2 = 1 << (e - e / 3 - (e - e / 3) / 2);
            int sz3[3] = {d0 + 2, d1 + 2, d2 + 2}, sub3[3] = {d0, d1, d2}, st3[3] = {1, 1, 1};
            MPI_Type_create_subarray(3, sz3, sub3, st3, MPI_ORDER_C, MPI_DOUBLE, &s);
            MPI_Type_commit(&s);
            run("subarray3d", s, bytes, runs);
            MPI_Type_free(&s);
        }
    }
    MPI_Finalize();
    return 0;
}
