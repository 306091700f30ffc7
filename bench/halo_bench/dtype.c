/* Datatype benchmarks: MPI_Pack and MPI_Unpack of derived types against a
 * plain memcpy of the same number of packed bytes, on rank 0 (the other
 * ranks wait; packing is local).
 *
 *   pack_vector      MPI_Type_vector of doubles in blocks of --block bytes
 *                    (default 256) at a stride of twice the block
 *   pack_subarray2d  a rows x cols block out of a rows x 2*cols array of
 *                    doubles (a column half of a matrix)
 *   pack_subarray3d  the interior of a 3-D array of doubles with one ghost
 *                    layer (what a stencil code sends whole)
 *
 * The size is the packed size. Each iteration times the three operations
 * one after the other (so a disturbance hits all alike), each repeated
 * until it has moved at least 1 MiB; the table gives GB/s of packed bytes
 * and each operation's speed as a percentage of memcpy's. With -c the
 * packed bytes are compared with the type map walked by hand, and unpacking
 * into a poisoned buffer must fill exactly the map. */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hb_dtype_block = 256;

/* The layout of one benchmark at one size, in doubles. */
typedef struct {
    int kind;
    long n;                  /* doubles packed */
    long blk;                /* vector: doubles per block */
    long rows, cols;         /* 2-D */
    long d0, d1, d2;         /* 3-D interior */
    long span;               /* doubles the user buffer holds */
} layout_t;

/* The largest power of two whose square (cube with `cube`) divides into n
 * with what is left at least as large. */
static long split_pow2(long n, int cube)
{
    long a = 1;
    while (n % (2 * a) == 0 && (cube ? (2 * a) * (2 * a) * (2 * a) <= n : (2 * a) * (2 * a) <= n))
        a *= 2;
    return a;
}

static int make_layout(int kind, size_t bytes, layout_t *l, MPI_Datatype *t)
{
    memset(l, 0, sizeof *l);
    l->kind = kind;
    l->n = (long)(bytes / 8);
    if (l->n < 1)
        return -1;
    switch (kind) {
    case HB_D_PACK_VECTOR: {
        l->blk = hb_dtype_block / 8;
        if (l->blk > l->n)
            l->blk = l->n;
        if (l->n % l->blk)
            return -1;
        long count = l->n / l->blk;
        l->span = (count - 1) * 2 * l->blk + l->blk;
        return MPI_Type_vector((int)count, (int)l->blk, (int)(2 * l->blk), MPI_DOUBLE, t);
    }
    case HB_D_PACK_SUBARRAY2D: {
        l->rows = split_pow2(l->n, 0);
        l->cols = l->n / l->rows;
        l->span = l->rows * 2 * l->cols;
        int sz[2] = {(int)l->rows, (int)(2 * l->cols)}, sub[2] = {(int)l->rows, (int)l->cols};
        int st[2] = {0, (int)(l->cols / 2)};
        return MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, t);
    }
    default: {
        l->d0 = split_pow2(l->n, 1);
        l->d1 = split_pow2(l->n / l->d0, 0);
        l->d2 = l->n / l->d0 / l->d1;
        l->span = (l->d0 + 2) * (l->d1 + 2) * (l->d2 + 2);
        int sz[3] = {(int)l->d0 + 2, (int)l->d1 + 2, (int)l->d2 + 2};
        int sub[3] = {(int)l->d0, (int)l->d1, (int)l->d2}, st[3] = {1, 1, 1};
        return MPI_Type_create_subarray(3, sz, sub, st, MPI_ORDER_C, MPI_DOUBLE, t);
    }
    }
}

/* Index in the user buffer (in doubles) of packed double k. */
static long user_index(const layout_t *l, long k)
{
    switch (l->kind) {
    case HB_D_PACK_VECTOR:
        return (k / l->blk) * 2 * l->blk + k % l->blk;
    case HB_D_PACK_SUBARRAY2D:
        return (k / l->cols) * 2 * l->cols + l->cols / 2 + k % l->cols;
    default: {
        long i = k / (l->d1 * l->d2), j = (k / l->d2) % l->d1, m = k % l->d2;
        return ((i + 1) * (l->d1 + 2) + (j + 1)) * (l->d2 + 2) + (m + 1);
    }
    }
}

/* -c: pack, compare with the map walked by hand; unpack into a poisoned
 * buffer, which must then hold the map's doubles and nothing else. */
static int check_layout(const hb_run_t *r, const layout_t *l, MPI_Datatype t, double *user, double *packed,
                        double *user2, int iter)
{
    for (long i = 0; i < l->span; i++)
        user[i] = (double)hb_pat(0, (size_t)i, iter) + (double)i * 256.0;
    int pos = 0;
    if (MPI_Pack(user, 1, t, packed, (int)(l->n * 8), &pos, r->comm) != MPI_SUCCESS || pos != l->n * 8)
        return 0;
    if (r->o->inject_error)
        packed[l->n / 2] += 1.0;
    long bad = 0;
    for (long k = 0; k < l->n; k++)
        bad += packed[k] != user[user_index(l, k)];
    memset(user2, HB_POISON, (size_t)l->span * sizeof *user2);
    double poison;
    memset(&poison, HB_POISON, sizeof poison);
    pos = 0;
    if (MPI_Unpack(packed, (int)(l->n * 8), &pos, user2, 1, t, r->comm) != MPI_SUCCESS)
        return 0;
    for (long k = 0; k < l->n; k++) {
        long u = user_index(l, k);
        bad += memcmp(&user2[u], &packed[k], sizeof(double)) != 0;
        memcpy(&user2[u], &poison, sizeof poison);
    }
    for (long i = 0; i < l->span; i++)
        bad += memcmp(&user2[i], &poison, sizeof poison) != 0;
    return bad == 0;
}

int hb_run_dtype(hb_run_t *r, int kind)
{
    static const hb_col_t cols[] = {
        {"Pack(GB/s)", "pack_gb_s", 0, 2},
        {"Unpack(GB/s)", "unpack_gb_s", 0, 2},
        {"Memcpy(GB/s)", "memcpy_gb_s", 0, 2},
        {"Pack/Memcpy(%)", "pack_pct", 0, 1},
        {"Unpack/Memcpy(%)", "unpack_pct", 0, 1},
    };
    hb_report_begin(r, cols, 5, 0);
    const hb_opts_t *o = r->o;
    size_t *sizes;
    int nsizes = hb_sizes(o, 1024, (size_t)64 << 20, 8, &sizes);
    for (int si = 0; si < nsizes; si++) {
        size_t bytes = sizes[si];
        layout_t l;
        MPI_Datatype t = MPI_DATATYPE_NULL;
        int ok = 1;
        double v[5] = {0, 0, 0, 0, 0};
        if (bytes > (size_t)1 << 30 || make_layout(kind, bytes, &l, &t) != MPI_SUCCESS ||
            MPI_Type_commit(&t) != MPI_SUCCESS) {
            if (t != MPI_DATATYPE_NULL)
                MPI_Type_free(&t);
            continue;   /* a size the shape cannot take (not whole blocks; over 1 GiB for int counts) */
        }
        if (r->rank == 0) {
            double *user = hb_alloc((size_t)l.span * sizeof(double));
            double *user2 = hb_alloc((size_t)l.span * sizeof(double));
            double *packed = hb_alloc(bytes), *src = hb_alloc(bytes);
            for (long i = 0; i < l.span; i++)
                user[i] = (double)i;
            memset(src, 1, bytes);
            int iters = hb_iters(o, bytes, 20, 5), warmup = hb_warmup(o, bytes, 2, 1);
            long inner = (long)(((size_t)1 << 20) / bytes);
            if (inner < 1)
                inner = 1;
            double tp = 0, tu = 0, tm = 0;
            for (int it = -warmup; it < iters; it++) {
                double t0 = MPI_Wtime();
                for (long k = 0; k < inner; k++) {
                    int pos = 0;
                    MPI_Pack(user, 1, t, packed, (int)bytes, &pos, r->comm);
                }
                double t1 = MPI_Wtime();
                for (long k = 0; k < inner; k++) {
                    int pos = 0;
                    MPI_Unpack(packed, (int)bytes, &pos, user, 1, t, r->comm);
                }
                double t2 = MPI_Wtime();
                for (long k = 0; k < inner; k++) {
                    memcpy(packed, src, bytes);
                    __asm__ __volatile__("" ::: "memory");
                }
                double t3 = MPI_Wtime();
                if (it >= 0) {
                    tp += t1 - t0;
                    tu += t2 - t1;
                    tm += t3 - t2;
                }
            }
            double moved = (double)bytes * (double)inner * iters / 1e9;
            v[0] = moved / tp;
            v[1] = moved / tu;
            v[2] = moved / tm;
            v[3] = 100.0 * tm / tp;
            v[4] = 100.0 * tm / tu;
            if (o->validate)
                ok = check_layout(r, &l, t, user, packed, user2, si);
            free(user);
            free(user2);
            free(packed);
            free(src);
        }
        MPI_Barrier(r->comm);
        hb_report_row(r, bytes, v, o->validate, ok);
        MPI_Type_free(&t);
    }
    free(sizes);
    return 0;
}
