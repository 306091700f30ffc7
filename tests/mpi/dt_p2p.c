/* Derived datatypes on point-to-point, at an eager size and at rendezvous
 * sizes (> 16 KiB), with a different but matching type on each side:
 *   3-D subarray (C order)     -> indexed_block of the same doubles
 *   records {int; double[3]; char} laid out in C (resized struct)
 *                              -> a struct whose map order is not its
 *                                 address order, count > 1
 *   contiguous ints            -> vector with a negative stride, and a
 *                                 resized type with a negative lb
 *   MPI_BOTTOM + hindexed of absolute addresses (three separate arrays)
 *                              -> MPI_BOTTOM + struct of absolute addresses
 *   MPI_Pack'ed data sent as MPI_PACKED -> the typed layout
 * Bytes outside the receive type's map must keep their value. Types are
 * freed right after MPI_Isend/MPI_Irecv, before the wait. Then partial
 * receives: a prefix of a struct's signature, where MPI_Get_count is
 * MPI_UNDEFINED and MPI_Get_elements counts the basic elements; with the
 * argument "exact" also a byte count that ends inside a basic element
 * (the receive fails with MPI_ERR_TYPE, and MPI_Get_elements is then
 * MPI_UNDEFINED). Pairs 2k -> 2k+1, both
 * directions. */
#include "mpitest.h"

#include <stddef.h>
#include <stdint.h>

static int rank, size, partner;
static int exact;

static double dval(int k, long i)
{
    return k * 1000003.0 + (double)i * 0.5 + 1;
}

/* Runs one transfer: the sender side packs (sbuf, scount, stype), the
 * receiver side gets it in (rbuf, rcount, rtype). Types are freed before
 * the wait: the operations hold them. */
static void xfer(int sender, const void *sbuf, int scount, MPI_Datatype *stype, void *rbuf, int rcount,
                 MPI_Datatype *rtype, int tag, MPI_Status *st)
{
    MPI_Request req;
    if (sender) {
        MPI_OK(MPI_Isend(sbuf, scount, *stype, partner, tag, MPI_COMM_WORLD, &req));
        if (*stype != MPI_PACKED)
            MPI_OK(MPI_Type_free(stype));
        MPI_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    } else {
        MPI_OK(MPI_Irecv(rbuf, rcount, *rtype, partner, tag, MPI_COMM_WORLD, &req));
        MPI_OK(MPI_Wait(&req, st));
    }
}

/* 3-D subarray of an N^3 block of doubles -> the same doubles listed by
 * an indexed_block type over another array. */
static void subarray_to_indexed(int n, int k, int sender)
{
    int g[3] = {n + 2, n + 3, n + 1}, sub[3] = {n, n, n - 1 > 0 ? n - 1 : 1}, st[3] = {1, 2, 0};
    long total = (long)g[0] * g[1] * g[2], m = (long)sub[0] * sub[1] * sub[2];
    MPI_Datatype t;
    if (sender) {
        double *a = malloc(sizeof(double) * (size_t)total);
        for (long i = 0; i < total; i++)
            a[i] = dval(k, i);
        MPI_OK(MPI_Type_create_subarray(3, g, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t));
        MPI_OK(MPI_Type_commit(&t));
        xfer(1, a, 1, &t, NULL, 0, NULL, 1, NULL);
        free(a);
        return;
    }
    /* every other double of the receive array, in reverse order */
    int *disp = malloc(sizeof(int) * (size_t)m);
    for (long i = 0; i < m; i++)
        disp[i] = (int)(2 * (m - 1 - i));
    double *r = malloc(sizeof(double) * (size_t)(2 * m));
    for (long i = 0; i < 2 * m; i++)
        r[i] = -1;
    MPI_OK(MPI_Type_create_indexed_block((int)m, 1, disp, MPI_DOUBLE, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Status s;
    xfer(0, NULL, 0, NULL, r, 1, &t, 1, &s);
    long e = 0;
    for (int i = 0; i < sub[0]; i++)
        for (int j = 0; j < sub[1]; j++)
            for (int l = 0; l < sub[2]; l++, e++) {
                long gi = ((long)(i + st[0]) * g[1] + (j + st[1])) * g[2] + (l + st[2]);
                double got = r[2 * (m - 1 - e)];
                CHECK(got == dval(k, gi), "subarray->indexed n=%d: element %ld is %g, expected %g", n, e, got,
                      dval(k, gi));
                CHECK(r[2 * (m - 1 - e) + 1] == -1, "subarray->indexed: a gap was written");
            }
    int c, el;
    MPI_OK(MPI_Get_count(&s, t, &c));
    MPI_OK(MPI_Get_elements(&s, t, &el));
    CHECK(c == 1 && el == (int)m, "counts %d %d", c, el);
    MPI_OK(MPI_Type_free(&t));
    free(disp);
    free(r);
}

typedef struct rec {
    int a;
    double b[3];
    char c;
} rec_t;

/* the receiver's record: the same fields elsewhere, char first in memory */
typedef struct rrec {
    char c;
    char pad[3];
    double b[3];
    int a;
    int guard;
} rrec_t;

static void records(int n, int k, int sender)
{
    int bl[3] = {1, 3, 1};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, t0, t;
    if (sender) {
        MPI_Aint d[3] = {offsetof(rec_t, a), offsetof(rec_t, b), offsetof(rec_t, c)};
        rec_t *s = malloc(sizeof(rec_t) * (size_t)n);
        for (int i = 0; i < n; i++) {
            s[i].a = k + i;
            for (int j = 0; j < 3; j++)
                s[i].b[j] = dval(k, 3 * i + j);
            s[i].c = (char)(i * 7);
        }
        MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &t0));
        MPI_OK(MPI_Type_create_resized(t0, 0, sizeof(rec_t), &t));
        MPI_OK(MPI_Type_free(&t0));
        MPI_OK(MPI_Type_commit(&t));
        xfer(1, s, n, &t, NULL, 0, NULL, 2, NULL);
        free(s);
        return;
    }
    MPI_Aint d[3] = {offsetof(rrec_t, a), offsetof(rrec_t, b), offsetof(rrec_t, c)};
    rrec_t *r = malloc(sizeof(rrec_t) * (size_t)n);
    memset(r, 0x5a, sizeof(rrec_t) * (size_t)n);
    MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &t0));
    MPI_OK(MPI_Type_create_resized(t0, 0, sizeof(rrec_t), &t));
    MPI_OK(MPI_Type_free(&t0));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Status s;
    xfer(0, NULL, 0, NULL, r, n, &t, 2, &s);
    for (int i = 0; i < n; i++) {
        CHECK(r[i].a == k + i && r[i].c == (char)(i * 7), "record %d: a=%d c=%d", i, r[i].a, r[i].c);
        for (int j = 0; j < 3; j++)
            CHECK(r[i].b[j] == dval(k, 3 * i + j), "record %d: b[%d]", i, j);
        CHECK(r[i].guard == 0x5a5a5a5a && r[i].pad[0] == 0x5a, "record %d: padding written", i);
    }
    int c, el;
    MPI_OK(MPI_Get_count(&s, t, &c));
    MPI_OK(MPI_Get_elements(&s, t, &el));
    CHECK(c == n && el == 5 * n, "records: Get_count %d, Get_elements %d", c, el);
    MPI_OK(MPI_Type_free(&t));
    free(r);
}

/* contiguous ints -> every third int backwards; and into 12-byte slots
 * given by a resized int with a negative lb */
static void strided_ints(int n, int k, int sender)
{
    MPI_Datatype t;
    if (sender) {
        int *s = malloc(sizeof(int) * (size_t)n);
        for (int i = 0; i < n; i++)
            s[i] = k * 31 + i;
        t = MPI_INT;
        MPI_OK(MPI_Send(s, n, MPI_INT, partner, 3, MPI_COMM_WORLD));
        MPI_OK(MPI_Send(s, n, MPI_INT, partner, 4, MPI_COMM_WORLD));
        free(s);
        return;
    }
    int *r = malloc(sizeof(int) * (size_t)(3 * n));
    for (int i = 0; i < 3 * n; i++)
        r[i] = -7;
    MPI_OK(MPI_Type_vector(n, 1, -3, MPI_INT, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Recv(&r[3 * (n - 1)], 1, t, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) {
        CHECK(r[3 * (n - 1 - i)] == k * 31 + i, "negative stride: element %d", i);
        CHECK(r[3 * i + 1] == -7 && r[3 * i + 2] == -7, "negative stride: gap %d written", i);
    }
    MPI_OK(MPI_Type_free(&t));
    /* each int at the middle of a 12-byte slot: lb -4, extent 12 */
    for (int i = 0; i < 3 * n; i++)
        r[i] = -7;
    MPI_OK(MPI_Type_create_resized(MPI_INT, -4, 12, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_OK(MPI_Recv(&r[1], n, t, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < n; i++) {
        CHECK(r[3 * i + 1] == k * 31 + i, "resized: element %d", i);
        CHECK(r[3 * i] == -7 && r[3 * i + 2] == -7, "resized: slot %d written around", i);
    }
    MPI_OK(MPI_Type_free(&t));
    free(r);
}

/* MPI_BOTTOM on both sides, absolute addresses from MPI_Get_address. */
static void bottom(int n, int k, int sender)
{
    int len[3] = {n, n / 2 + 1, 3};
    MPI_Datatype t;
    if (sender) {
        double *p[3];
        MPI_Aint a[3];
        for (int j = 0; j < 3; j++) {
            p[j] = malloc(sizeof(double) * (size_t)len[j]);
            for (int i = 0; i < len[j]; i++)
                p[j][i] = dval(k + j, i);
            MPI_OK(MPI_Get_address(p[j], &a[j]));
        }
        MPI_OK(MPI_Type_create_hindexed(3, len, a, MPI_DOUBLE, &t));
        MPI_OK(MPI_Type_commit(&t));
        xfer(1, MPI_BOTTOM, 1, &t, NULL, 0, NULL, 5, NULL);
        for (int j = 0; j < 3; j++)
            free(p[j]);
        return;
    }
    /* receive: the three runs into one array, backwards, via a struct */
    long tot = len[0] + len[1] + len[2];
    double *r = malloc(sizeof(double) * (size_t)(tot + 2));
    for (long i = 0; i < tot + 2; i++)
        r[i] = -1;
    MPI_Aint a[3], base;
    MPI_OK(MPI_Get_address(&r[1], &base));
    a[2] = base;
    a[1] = MPI_Aint_add(base, (MPI_Aint)sizeof(double) * len[2]);
    a[0] = MPI_Aint_add(a[1], (MPI_Aint)sizeof(double) * len[1]);
    CHECK(MPI_Aint_diff(a[0], base) == (MPI_Aint)sizeof(double) * (len[1] + len[2]), "MPI_Aint_diff");
    MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
    MPI_OK(MPI_Type_create_struct(3, len, a, ty, &t));
    MPI_OK(MPI_Type_commit(&t));
    MPI_Status s;
    xfer(0, NULL, 0, NULL, MPI_BOTTOM, 1, &t, 5, &s);
    long o = 1;
    for (int j = 2; j >= 0; j--)
        for (int i = 0; i < len[j]; i++, o++)
            CHECK(r[o] == dval(k + j, i), "MPI_BOTTOM: run %d element %d: %g", j, i, r[o]);
    CHECK(r[0] == -1 && r[tot + 1] == -1, "MPI_BOTTOM: wrote outside");
    MPI_OK(MPI_Type_free(&t));
    free(r);
}

/* MPI_Pack on one side, the typed receive on the other. */
static void packed(int n, int k, int sender)
{
    MPI_Datatype v;
    MPI_OK(MPI_Type_vector(n, 2, 3, MPI_SHORT, &v));
    MPI_OK(MPI_Type_commit(&v));
    if (sender) {
        short *s = malloc(sizeof(short) * (size_t)(3 * n));
        for (int i = 0; i < 3 * n; i++)
            s[i] = (short)(k + i);
        int psize, pos = 0;
        MPI_OK(MPI_Pack_size(1, v, MPI_COMM_WORLD, &psize));
        char *pk = malloc((size_t)psize + 8);
        int one = 77;
        MPI_OK(MPI_Pack(&one, 1, MPI_INT, pk, psize + 8, &pos, MPI_COMM_WORLD));
        MPI_OK(MPI_Pack(s, 1, v, pk, psize + 8, &pos, MPI_COMM_WORLD));
        CHECK(pos == 4 + 4 * n, "MPI_Pack position %d", pos);
        MPI_OK(MPI_Send(pk + 4, pos - 4, MPI_PACKED, partner, 6, MPI_COMM_WORLD));
        free(pk);
        free(s);
    } else {
        short *r = malloc(sizeof(short) * (size_t)(3 * n));
        for (int i = 0; i < 3 * n; i++)
            r[i] = -1;
        MPI_OK(MPI_Recv(r, 1, v, partner, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++)
            CHECK(r[3 * i] == (short)(k + 3 * i) && r[3 * i + 1] == (short)(k + 3 * i + 1) && r[3 * i + 2] == -1,
                  "packed: element %d", i);
        free(r);
    }
    MPI_OK(MPI_Type_free(&v));
}

/* Partial receives of a struct {int; double; int; double[2]}. */
static void partial(int sender)
{
    int bl[4] = {1, 1, 1, 2};
    MPI_Aint d[4] = {0, 8, 16, 24};
    MPI_Datatype ty[4] = {MPI_INT, MPI_DOUBLE, MPI_INT, MPI_DOUBLE}, st, sub;
    MPI_OK(MPI_Type_create_struct(4, bl, d, ty, &st));
    MPI_OK(MPI_Type_commit(&st));
    /* the first three fields: a prefix of the signature */
    MPI_OK(MPI_Type_create_struct(3, bl, d, ty, &sub));
    MPI_OK(MPI_Type_commit(&sub));
    char buf[3 * 40];
    memset(buf, 0, sizeof buf);
    MPI_Status s;
    int c, e;
    MPI_Count cc;
    if (sender) {
        MPI_OK(MPI_Send(buf, 1, sub, partner, 7, MPI_COMM_WORLD));                 /* 3 elements */
        MPI_OK(MPI_Send(buf, 2, st, partner, 8, MPI_COMM_WORLD));                  /* 10 elements */
        MPI_OK(MPI_Send(buf, 0, st, partner, 9, MPI_COMM_WORLD));
        if (exact) {
            MPI_OK(MPI_Send(buf, 4 + 8 + 2, MPI_BYTE, partner, 10, MPI_COMM_WORLD));  /* inside the 2nd int */
            MPI_OK(MPI_Send(buf, 36 + 4 + 3, MPI_BYTE, partner, 11, MPI_COMM_WORLD)); /* inside element 2 */
        }
    } else {
        MPI_OK(MPI_Recv(buf, 3, st, partner, 7, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Get_count(&s, st, &c));
        MPI_OK(MPI_Get_elements(&s, st, &e));
        MPI_OK(MPI_Get_elements_x(&s, st, &cc));
        CHECK(c == MPI_UNDEFINED && e == 3 && cc == 3, "prefix: Get_count %d, Get_elements %d/%lld", c, e,
              (long long)cc);
        MPI_OK(MPI_Recv(buf, 3, st, partner, 8, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Get_count(&s, st, &c));
        MPI_OK(MPI_Get_elements_c(&s, st, &cc));
        CHECK(c == 2 && cc == 10, "two of three: Get_count %d, Get_elements %lld", c, (long long)cc);
        MPI_OK(MPI_Recv(buf, 3, st, partner, 9, MPI_COMM_WORLD, &s));
        MPI_OK(MPI_Get_count(&s, st, &c));
        MPI_OK(MPI_Get_elements(&s, st, &e));
        CHECK(c == 0 && e == 0, "empty: Get_count %d, Get_elements %d", c, e);
        if (exact) {
            /* The signatures cannot match: the receive says so
             * (MPI_ERR_TYPE), and the status still counts the bytes. */
            MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
            int rc = MPI_Recv(buf, 3, st, partner, 10, MPI_COMM_WORLD, &s), cls = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TYPE, "inside an int: MPI_Recv gave class %d", cls);
            MPI_OK(MPI_Get_elements(&s, st, &e));
            CHECK(e == MPI_UNDEFINED, "inside an int: Get_elements %d", e);
            MPI_OK(MPI_Get_count(&s, MPI_BYTE, &c));
            CHECK(c == 14, "inside an int: %d bytes", c);
            rc = MPI_Recv(buf, 3, st, partner, 11, MPI_COMM_WORLD, &s);
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TYPE, "inside a double of element 2: MPI_Recv gave class %d", cls);
            MPI_OK(MPI_Get_elements(&s, st, &e));
            CHECK(e == MPI_UNDEFINED, "inside a double of element 2: Get_elements %d", e);
            MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        }
    }
    MPI_OK(MPI_Type_free(&st));
    MPI_OK(MPI_Type_free(&sub));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    exact = argc > 1 && strcmp(argv[1], "exact") == 0;
    if (size % 2) {
        if (rank == 0)
            fprintf(stderr, "needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    partner = rank ^ 1;
    /* sizes: eager (well under 16 KiB) and rendezvous (well over) */
    const int sub_n[] = {4, 24}, rec_n[] = {10, 2000}, int_n[] = {100, 30000}, pk_n[] = {50, 20000};
    for (int round = 0; round < 2; round++) {
        for (int dir = 0; dir < 2; dir++) {
            int sender = (rank % 2) == dir, k = round * 10 + dir + rank / 2 * 100;
            int ks = sender ? k : k;
            subarray_to_indexed(sub_n[round], ks, sender);
            records(rec_n[round], ks, sender);
            strided_ints(int_n[round], ks, sender);
            bottom(round ? 5000 : 40, ks, sender);
            packed(pk_n[round], ks, sender);
        }
    }
    for (int dir = 0; dir < 2; dir++)
        partial((rank % 2) == dir);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("dt_p2p: %d ranks ok%s\n", size, exact ? " (exact element counts)" : "");
    MPI_Finalize();
    return 0;
}
