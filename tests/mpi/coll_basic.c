/* The basic collectives: Barrier, Bcast, Allreduce, Allgather.
 *
 * - Barrier: nobody leaves before the last one arrives;
 * - Bcast: every root, counts 0 / 1 / 1000 / 100000, MPI_INT and a strided
 *   vector type (the gaps must stay untouched);
 * - Allreduce: the predefined operations on several types, MINLOC/MAXLOC
 *   (ties go to the lower index), MPI_IN_PLACE, counts 0 / 1 / 7 / 100000,
 *   and a non-commutative user operation (2x2 matrix product) whose result
 *   must be the product in rank order; predefined and user operations on
 *   derived datatypes (gaps untouched, a nonzero lower bound);
 * - Allgather: in place or not, and with send and receive types that differ
 *   but have the same type signature;
 * - nonblocking versions, several outstanding, completed in another order;
 * - persistent versions started several times with new data;
 * - persistent collectives started in different orders on different ranks
 *   (MPI 4 matches them by their init calls), and in the same order on a
 *   communicator that asserts mpi_assert_strict_persistent_collective_ordering;
 * - blocking and nonblocking calls issued in different orders on different
 *   ranks (MPI orders each kind only among itself; MPICH and Open MPI allow
 *   this and mpi4py's Iagree relies on it): a rank's Iallreduce stays
 *   incomplete and its buffer untouched while the others sit in Barrier,
 *   then every rank gets the right result;
 * - all of it on split and duplicated communicators too.
 * Every expected result is computed locally from the same generators. */
#include <time.h>

#include "mpitest.h"

static int wrank, wsize;

/* ---------------------------------------------------------------- barrier */

static void test_barrier(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_OK(MPI_Barrier(comm));
    if (size == 1) {
        MPI_OK(MPI_Barrier(comm));
        return;
    }
    /* The last rank arrives 400 ms late; the others must wait for it (the
     * margin allows for ranks that left the first barrier late). */
    double t0 = MPI_Wtime();
    if (rank == size - 1) {
        struct timespec ts = {0, 400 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    MPI_OK(MPI_Barrier(comm));
    double waited = MPI_Wtime() - t0;
    if (rank != size - 1)
        CHECK(waited > 0.15, "left the barrier after %.3f s; the last rank came 0.4 s late",
              waited);
    /* Many in a row. */
    for (int i = 0; i < 200; i++)
        MPI_OK(MPI_Barrier(comm));
}

/* ---------------------------------------------------------------- bcast */

static int gen_ag(int r, int i)
{
    return r * 1000 + i;
}

static int gen_bcast(int root, int i)
{
    return root * 1000003 + i * 7 + 1;
}

static void test_bcast(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    static const int counts[] = {0, 1, 1000, 100000};
    int *buf = malloc(sizeof(int) * 100001);
    for (int root = 0; root < size; root++) {
        for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
            int n = counts[c];
            for (int i = 0; i <= n; i++)
                buf[i] = rank == root ? gen_bcast(root, i) : -1;
            MPI_OK(MPI_Bcast(buf, n, MPI_INT, root, comm));
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == gen_bcast(root, i), "bcast root %d count %d: [%d] = %d", root, n,
                      i, buf[i]);
            CHECK(buf[n] == (rank == root ? gen_bcast(root, n) : -1),
                  "bcast root %d count %d wrote past the end", root, n);
        }
    }
    /* A vector type: 50 blocks of 2 ints every 3 ints; 4 of them. Gaps stay. */
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(50, 2, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    MPI_Aint lb, extent;
    MPI_OK(MPI_Type_get_extent(vec, &lb, &extent));
    int per = (int)(extent / sizeof(int)); /* 149 ints */
    int total = 4 * per;
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < total; i++)
            buf[i] = rank == root ? gen_bcast(root, i) : -1;
        MPI_OK(MPI_Bcast(buf, 4, vec, root, comm));
        for (int i = 0; i < total; i++) {
            int in_type = (i % per) % 3 != 2;
            int want = (rank == root || in_type) ? gen_bcast(root, i) : -1;
            CHECK(buf[i] == want, "vector bcast root %d: [%d] = %d, want %d", root, i, buf[i],
                  want);
        }
    }
    MPI_OK(MPI_Type_free(&vec));
    free(buf);
}

/* ---------------------------------------------------------------- allreduce */

/* Values of rank r at index i for an operation: small enough that sums and
 * products are exact, with repeats so MIN/MAX and the logical ops are not
 * trivial. */
static long long gen_val(MPI_Op op, int r, int i)
{
    if (op == MPI_PROD)
        return 1 + ((r + i) % 5 == 0);       /* 1 or 2 */
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return (r * 3 + i) % 4 != 0;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR)
        return ((long long)(r + 1) * 0x9e37 + (long long)i * 0x85eb) & 0x7fff;
    return ((r * 37 + i * 11) % 101) - 50;
}

#define APPLY_COMMON(op, a, b)                                                                \
    ((op) == MPI_SUM    ? (a) + (b)                                                           \
     : (op) == MPI_PROD ? (a) * (b)                                                           \
     : (op) == MPI_MAX  ? ((a) > (b) ? (a) : (b))                                             \
     : (op) == MPI_MIN  ? ((a) < (b) ? (a) : (b))                                             \
     : (op) == MPI_LAND ? ((a) && (b))                                                        \
     : (op) == MPI_LOR  ? ((a) || (b))                                                        \
     : (op) == MPI_LXOR ? (!(a) != !(b))                                                      \
                        : (a))

#define APPLY_INT(op, a, b)                                                                   \
    ((op) == MPI_BAND ? ((a) & (b)) : (op) == MPI_BOR ? ((a) | (b))                           \
     : (op) == MPI_BXOR ? ((a) ^ (b)) : APPLY_COMMON(op, a, b))

/* Allreduce of count elements of CTYPE with op, in place or not, against
 * the reduction computed here. */
#define DEFINE_ALLREDUCE_TEST(NAME, CTYPE, APPLY, GEN)                                        \
    static void NAME(MPI_Comm comm, MPI_Datatype type, MPI_Op op, int count, int inplace,     \
                     const char *what)                                                        \
    {                                                                                         \
        int rank, size;                                                                       \
        MPI_OK(MPI_Comm_rank(comm, &rank));                                                   \
        MPI_OK(MPI_Comm_size(comm, &size));                                                   \
        CTYPE *in = malloc(sizeof(CTYPE) * (count + 1));                                      \
        CTYPE *out = malloc(sizeof(CTYPE) * (count + 1));                                     \
        for (int i = 0; i < count; i++) {                                                     \
            in[i] = (CTYPE)GEN(op, rank, i);                                                  \
            out[i] = inplace ? in[i] : (CTYPE)-77;                                            \
        }                                                                                     \
        out[count] = (CTYPE)-99;                                                              \
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, count, type, op, comm));       \
        for (int i = 0; i < count; i++) {                                                     \
            CTYPE want = (CTYPE)GEN(op, 0, i);                                                \
            for (int r = 1; r < size; r++) {                                                  \
                CTYPE v = (CTYPE)GEN(op, r, i);                                               \
                want = (CTYPE)APPLY(op, want, v);                                             \
            }                                                                                 \
            if (out[i] != want)                                                               \
                MT_FAIL("allreduce %s count %d%s: [%d] = %g, want %g", what, count,           \
                        inplace ? " in place" : "", i, (double)out[i], (double)want);         \
            if (!inplace && in[i] != (CTYPE)GEN(op, rank, i))                                 \
                MT_FAIL("allreduce %s changed the send buffer at %d", what, i);               \
        }                                                                                     \
        if (out[count] != (CTYPE)-99)                                                         \
            MT_FAIL("allreduce %s count %d wrote past the end", what, count);                 \
        free(in);                                                                             \
        free(out);                                                                            \
    }

static double gen_dbl(MPI_Op op, int r, int i)
{
    if (op == MPI_PROD)
        return (r + i) % 4 == 0 ? 0.5 : ((r + i) % 4 == 1 ? 2.0 : 1.0);
    return (double)gen_val(op, r, i) * 0.25;
}

DEFINE_ALLREDUCE_TEST(ar_int, int, APPLY_INT, gen_val)
DEFINE_ALLREDUCE_TEST(ar_uint, unsigned, APPLY_INT, gen_val)
DEFINE_ALLREDUCE_TEST(ar_short, short, APPLY_INT, gen_val)
DEFINE_ALLREDUCE_TEST(ar_llong, long long, APPLY_INT, gen_val)
DEFINE_ALLREDUCE_TEST(ar_uchar, unsigned char, APPLY_INT, gen_val)
DEFINE_ALLREDUCE_TEST(ar_double, double, APPLY_COMMON, gen_dbl)
DEFINE_ALLREDUCE_TEST(ar_float, float, APPLY_COMMON, gen_dbl)

typedef struct {
    double v;
    int k;
} dbl_int_t;

typedef struct {
    int v;
    int k;
} int_int_t;

/* MINLOC / MAXLOC with many ties: the smallest index wins a tie. */
static void test_loc(MPI_Comm comm, int count, int inplace)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    int_int_t *a = malloc(sizeof *a * (count + 1)), *b = malloc(sizeof *b * (count + 1));
    dbl_int_t *c = malloc(sizeof *c * (count + 1)), *d = malloc(sizeof *d * (count + 1));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Op op = pass ? MPI_MAXLOC : MPI_MINLOC;
        for (int i = 0; i < count; i++) {
            a[i].v = (rank * 7 + i) % 3;
            a[i].k = rank * 10 + i % 10;      /* the index: not the rank */
            c[i].v = ((rank + i) % 4) * 0.5;
            c[i].k = size - rank;             /* lower index = higher rank */
            b[i] = a[i];
            d[i] = c[i];
        }
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : a, b, count, MPI_2INT, op, comm));
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : c, d, count, MPI_DOUBLE_INT, op, comm));
        for (int i = 0; i < count; i++) {
            int_int_t w = {(0 * 7 + i) % 3, 0 * 10 + i % 10};
            dbl_int_t x = {(i % 4) * 0.5, size};
            for (int r = 1; r < size; r++) {
                int_int_t e = {(r * 7 + i) % 3, r * 10 + i % 10};
                dbl_int_t f = {((r + i) % 4) * 0.5, size - r};
                int better = pass ? e.v > w.v : e.v < w.v;
                if (better || (e.v == w.v && e.k < w.k))
                    w = e;
                better = pass ? f.v > x.v : f.v < x.v;
                if (better || (f.v == x.v && f.k < x.k))
                    x = f;
            }
            CHECK(b[i].v == w.v && b[i].k == w.k, "%s 2INT [%d] = (%d,%d), want (%d,%d)",
                  pass ? "MAXLOC" : "MINLOC", i, b[i].v, b[i].k, w.v, w.k);
            CHECK(d[i].v == x.v && d[i].k == x.k, "%s DOUBLE_INT [%d] = (%g,%d), want (%g,%d)",
                  pass ? "MAXLOC" : "MINLOC", i, d[i].v, d[i].k, x.v, x.k);
        }
    }
    free(a);
    free(b);
    free(c);
    free(d);
}

/* 2x2 matrices of unsigned ints (arithmetic mod 2^32): not commutative. */
typedef struct {
    unsigned m[4];
} mat_t;

static mat_t mat_mul(mat_t a, mat_t b)
{
    mat_t c;
    c.m[0] = a.m[0] * b.m[0] + a.m[1] * b.m[2];
    c.m[1] = a.m[0] * b.m[1] + a.m[1] * b.m[3];
    c.m[2] = a.m[2] * b.m[0] + a.m[3] * b.m[2];
    c.m[3] = a.m[2] * b.m[1] + a.m[3] * b.m[3];
    return c;
}

static mat_t gen_mat(int r, int i)
{
    mat_t a = {{1u, (unsigned)(r + 2 + i), (unsigned)(3 * r + i % 5), 1u + (unsigned)(r % 3)}};
    return a;
}

static int mat_calls;

/* inout = in * inout: the standard's order, in holding the lower ranks. */
static void mat_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    mat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = mat_mul(a[i], b[i]);
    mat_calls++;
}

static void test_noncommutative(MPI_Comm comm, MPI_Datatype mat_type, MPI_Op op)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    static const int counts[] = {1, 7, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        for (int inplace = 0; inplace < 2; inplace++) {
            mat_t *in = malloc(sizeof(mat_t) * n), *out = malloc(sizeof(mat_t) * n);
            for (int i = 0; i < n; i++)
                in[i] = out[i] = gen_mat(rank, i);
            MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, mat_type, op, comm));
            int differs = 0;
            for (int i = 0; i < n; i++) {
                mat_t want = gen_mat(0, i), rev = gen_mat(size - 1, i);
                for (int r = 1; r < size; r++) {
                    want = mat_mul(want, gen_mat(r, i));
                    rev = mat_mul(rev, gen_mat(size - 1 - r, i));
                }
                differs |= memcmp(&want, &rev, sizeof want) != 0;
                CHECK(!memcmp(&out[i], &want, sizeof want),
                      "matrix product count %d%s [%d] = (%u %u %u %u), want (%u %u %u %u)", n,
                      inplace ? " in place" : "", i, out[i].m[0], out[i].m[1], out[i].m[2],
                      out[i].m[3], want.m[0], want.m[1], want.m[2], want.m[3]);
            }
            /* The data must be able to tell the orders apart. */
            CHECK(size < 2 || differs, "rank order and reverse order agree: the test is blind");
            free(in);
            free(out);
        }
    }
}

static void test_allreduce(MPI_Comm comm, int big)
{
    static const int counts[] = {0, 1, 7, 1000};
    const MPI_Op int_ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD, MPI_LAND, MPI_LOR,
                              MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    const MPI_Op flt_ops[] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        for (int inplace = 0; inplace < 2; inplace++) {
            for (size_t k = 0; k < sizeof int_ops / sizeof int_ops[0]; k++) {
                ar_int(comm, MPI_INT, int_ops[k], n, inplace, "int");
                ar_uint(comm, MPI_UNSIGNED, int_ops[k], n, inplace, "unsigned");
                ar_llong(comm, MPI_LONG_LONG, int_ops[k], n, inplace, "long long");
                ar_short(comm, MPI_SHORT, int_ops[k], n, inplace, "short");
            }
            ar_uchar(comm, MPI_UNSIGNED_CHAR, MPI_BOR, n, inplace, "unsigned char");
            ar_uchar(comm, MPI_UNSIGNED_CHAR, MPI_MAX, n, inplace, "unsigned char");
            for (size_t k = 0; k < sizeof flt_ops / sizeof flt_ops[0]; k++) {
                ar_double(comm, MPI_DOUBLE, flt_ops[k], n, inplace, "double");
                ar_float(comm, MPI_FLOAT, flt_ops[k], n, inplace, "float");
            }
            test_loc(comm, n, inplace);
        }
    }
    if (big) {
        for (int inplace = 0; inplace < 2; inplace++) {
            ar_int(comm, MPI_INT, MPI_SUM, 100000, inplace, "int");
            ar_int(comm, MPI_INT, MPI_BXOR, 100000, inplace, "int");
            ar_double(comm, MPI_DOUBLE, MPI_MAX, 100000, inplace, "double");
            ar_llong(comm, MPI_LONG_LONG, MPI_MIN, 100000, inplace, "long long");
            test_loc(comm, 100000, inplace);
        }
    }
}

/* Predefined and user operations on derived datatypes: a vector with gaps
 * (which must stay untouched) and a type whose data starts 8 bytes past
 * the buffer address (lower bound 8). */
static void sum_ints(void *in, void *inout, int *len, MPI_Datatype *type)
{
    /* Called on whole elements of the datatype; add the ints they cover. */
    MPI_Aint lb, extent;
    int size;
    MPI_Type_get_extent(*type, &lb, &extent);
    MPI_Type_size(*type, &size);
    if (*type == MPI_INT) {
        for (int i = 0; i < *len; i++)
            ((int *)inout)[i] += ((int *)in)[i];
        return;
    }
    /* vector(4, 2, 3, MPI_INT): ints 0,1, 3,4, 6,7, 9,10 of each element */
    for (int e = 0; e < *len; e++)
        for (int b = 0; b < 4; b++)
            for (int k = 0; k < 2; k++) {
                int at = e * (int)(extent / sizeof(int)) + b * 3 + k;
                ((int *)inout)[at] += ((int *)in)[at];
            }
    (void)size;
}

static void test_allreduce_derived(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_Datatype vec, shifted;
    MPI_OK(MPI_Type_vector(4, 2, 3, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    int blen = 2;
    MPI_Aint disp = 8;
    MPI_OK(MPI_Type_create_hindexed(1, &blen, &disp, MPI_INT, &shifted));
    MPI_OK(MPI_Type_commit(&shifted));
    MPI_Op usum;
    MPI_OK(MPI_Op_create(sum_ints, 1, &usum));

    enum { COUNT = 5, PER = 11 };   /* vector extent: 11 ints */
    int in[COUNT * PER + 1], out[COUNT * PER + 1];
    for (int pass = 0; pass < 4; pass++) {
        MPI_Op op = pass % 2 ? usum : MPI_SUM;
        int inplace = pass / 2;
        for (int i = 0; i <= COUNT * PER; i++) {
            int in_type = i < COUNT * PER && (i % PER) % 3 != 2;
            in[i] = in_type ? gen_ag(rank, i) : -2;
            out[i] = inplace ? in[i] : -1;
        }
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, COUNT, vec, op, comm));
        for (int i = 0; i <= COUNT * PER; i++) {
            int in_type = i < COUNT * PER && (i % PER) % 3 != 2;
            long long want = 0;
            for (int q = 0; q < size; q++)
                want += gen_ag(q, i);
            if (!in_type)
                want = inplace ? -2 : -1;
            CHECK(out[i] == want, "allreduce %s on vector%s: [%d] = %d, want %lld",
                  pass % 2 ? "user sum" : "MPI_SUM", inplace ? " in place" : "", i, out[i],
                  want);
        }
    }
    /* lower bound 8: element e's two ints sit at int index 2 + 2e, 3 + 2e */
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < 12; i++) {
            in[i] = i >= 2 && i < 10 ? gen_ag(rank, i) : -2;
            out[i] = inplace ? in[i] : -1;
        }
        MPI_OK(MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, 4, shifted, MPI_MAX, comm));
        for (int i = 0; i < 12; i++) {
            int want = i >= 2 && i < 10 ? gen_ag(size - 1, i) : (inplace ? -2 : -1);
            CHECK(out[i] == want, "allreduce MAX on a type with lb 8%s: [%d] = %d, want %d",
                  inplace ? " in place" : "", i, out[i], want);
        }
    }
    MPI_OK(MPI_Op_free(&usum));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&shifted));
}

/* ---------------------------------------------------------------- allgather */

static void expect_gathered(const int *buf, int size, int n, const char *what)
{
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            CHECK(buf[r * n + i] == gen_ag(r, i), "%s: block %d [%d] = %d, want %d", what, r, i,
                  buf[r * n + i], gen_ag(r, i));
}

static void test_allgather(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    static const int counts[] = {0, 1, 3, 5000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        int *send = malloc(sizeof(int) * (n + 1));
        int *recv = malloc(sizeof(int) * (size * n + 1));
        for (int i = 0; i < n; i++)
            send[i] = gen_ag(rank, i);
        for (int i = 0; i <= size * n; i++)
            recv[i] = -1;
        MPI_OK(MPI_Allgather(send, n, MPI_INT, recv, n, MPI_INT, comm));
        expect_gathered(recv, size, n, "allgather");
        CHECK(recv[size * n] == -1, "allgather count %d wrote past the end", n);

        /* In place: my block is already in the receive buffer. */
        for (int i = 0; i < size * n; i++)
            recv[i] = (i / (n ? n : 1)) == rank ? gen_ag(rank, i % n) : -1;
        MPI_OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, n, MPI_INT, comm));
        expect_gathered(recv, size, n, "allgather in place");
        free(send);
        free(recv);
    }

    /* Same signature, different types: 3 ints sent, one 3-int block received. */
    MPI_Datatype three, strided;
    MPI_OK(MPI_Type_contiguous(3, MPI_INT, &three));
    MPI_OK(MPI_Type_commit(&three));
    int send[6], recv[3 * 64 + 1];
    for (int i = 0; i < 3; i++)
        send[i] = gen_ag(rank, i);
    for (int i = 0; i <= 3 * size; i++)
        recv[i] = -1;
    MPI_OK(MPI_Allgather(send, 3, MPI_INT, recv, 1, three, comm));
    expect_gathered(recv, size, 3, "allgather 3 MPI_INT into 1 contiguous(3)");
    CHECK(recv[3 * size] == -1, "allgather of contiguous(3) wrote past the end");
    /* ... and a strided send type: every other int of send[]. */
    MPI_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &strided));
    MPI_OK(MPI_Type_commit(&strided));
    for (int i = 0; i < 6; i++)
        send[i] = i % 2 ? -5 : gen_ag(rank, i / 2);
    for (int i = 0; i <= 3 * size; i++)
        recv[i] = -1;
    MPI_OK(MPI_Allgather(send, 1, strided, recv, 3, MPI_INT, comm));
    expect_gathered(recv, size, 3, "allgather vector(3,1,2) into 3 MPI_INT");
    MPI_OK(MPI_Allgather(send, 1, strided, recv, 1, three, comm));
    expect_gathered(recv, size, 3, "allgather vector(3,1,2) into contiguous(3)");
    MPI_OK(MPI_Type_free(&three));
    MPI_OK(MPI_Type_free(&strided));
}

/* ---------------------------------------------------------------- nonblocking */

static void test_nonblocking(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    enum { N = 5000 };
    int *bc = malloc(sizeof(int) * N), *ag = malloc(sizeof(int) * size * 4);
    int *ar_in = malloc(sizeof(int) * N), *ar_out = malloc(sizeof(int) * N);
    int agsend[4], ar2_in = rank + 1, ar2_out = 0;
    for (int iter = 0; iter < 4; iter++) {
        int root = (iter * 3) % size;
        for (int i = 0; i < N; i++) {
            bc[i] = rank == root ? gen_bcast(root, i + iter) : -1;
            ar_in[i] = gen_ag(rank, i + iter);
        }
        for (int i = 0; i < 4; i++)
            agsend[i] = gen_ag(rank, i);
        MPI_Request r[5];
        MPI_OK(MPI_Ibarrier(comm, &r[0]));
        MPI_OK(MPI_Ibcast(bc, N, MPI_INT, root, comm, &r[1]));
        MPI_OK(MPI_Iallreduce(ar_in, ar_out, N, MPI_INT, MPI_SUM, comm, &r[2]));
        MPI_OK(MPI_Iallgather(agsend, 4, MPI_INT, ag, 4, MPI_INT, comm, &r[3]));
        MPI_OK(MPI_Iallreduce(&ar2_in, &ar2_out, 1, MPI_INT, MPI_PROD, comm, &r[4]));
        if (iter % 2 == 0) {
            /* In reverse order of starting. */
            for (int k = 4; k >= 0; k--) {
                MPI_OK(MPI_Wait(&r[k], MPI_STATUS_IGNORE));
                CHECK(r[k] == MPI_REQUEST_NULL, "request %d not freed by MPI_Wait", k);
            }
        } else {
            /* By polling, then whichever finishes first. */
            int done = 0, flag = 0, idx;
            while (!flag)
                MPI_OK(MPI_Testall(1, &r[3], &flag, MPI_STATUSES_IGNORE));
            for (done = 1; done < 5; done++)
                MPI_OK(MPI_Waitany(5, r, &idx, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Waitany(5, r, &idx, MPI_STATUS_IGNORE));
            CHECK(idx == MPI_UNDEFINED, "Waitany found request %d still active", idx);
        }
        for (int i = 0; i < N; i++) {
            CHECK(bc[i] == gen_bcast(root, i + iter), "ibcast iter %d [%d] = %d", iter, i, bc[i]);
            long long want = 0;
            for (int q = 0; q < size; q++)
                want += gen_ag(q, i + iter);
            CHECK(ar_out[i] == want, "iallreduce iter %d [%d] = %d, want %lld", iter, i,
                  ar_out[i], want);
        }
        expect_gathered(ag, size, 4, "iallgather");
        long long prod = 1;
        for (int q = 1; q <= size; q++)
            prod *= q;
        CHECK(ar2_out == (int)prod, "iallreduce PROD = %d, want %lld", ar2_out, prod);
    }
    free(bc);
    free(ag);
    free(ar_in);
    free(ar_out);
}

/* ---------------------------------------------------------------- persistent */

static void test_persistent(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    enum { N = 300 };
    int bc[N], ar_in[N], ar_out[N], agsend[2], *ag = malloc(sizeof(int) * 2 * size);
    int root = size - 1;
    MPI_Request r[4];
    MPI_OK(MPI_Barrier_init(comm, MPI_INFO_NULL, &r[0]));
    MPI_OK(MPI_Bcast_init(bc, N, MPI_INT, root, comm, MPI_INFO_NULL, &r[1]));
    MPI_OK(MPI_Allreduce_init(ar_in, ar_out, N, MPI_INT, MPI_MAX, comm, MPI_INFO_NULL, &r[2]));
    MPI_OK(MPI_Allgather_init(agsend, 2, MPI_INT, ag, 2, MPI_INT, comm, MPI_INFO_NULL, &r[3]));
    for (int iter = 0; iter < 6; iter++) {
        for (int i = 0; i < N; i++) {
            bc[i] = rank == root ? gen_bcast(iter, i) : -1;
            ar_in[i] = gen_ag(rank, i) * (iter % 2 ? -1 : 1) + iter;
            ar_out[i] = -12345;
        }
        agsend[0] = gen_ag(rank, iter);
        agsend[1] = gen_ag(rank, iter + 1);
        if (iter % 2 == 0) {
            MPI_OK(MPI_Startall(4, r));
        } else {
            for (int k = 3; k >= 0; k--)
                MPI_OK(MPI_Start(&r[k]));
        }
        MPI_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        for (int k = 0; k < 4; k++)
            CHECK(r[k] != MPI_REQUEST_NULL, "persistent request %d freed by completion", k);
        for (int i = 0; i < N; i++) {
            CHECK(bc[i] == gen_bcast(iter, i), "bcast_init iter %d [%d] = %d", iter, i, bc[i]);
            int want = iter % 2 ? -gen_ag(0, i) + iter : gen_ag(size - 1, i) + iter;
            CHECK(ar_out[i] == want, "allreduce_init iter %d [%d] = %d, want %d", iter, i,
                  ar_out[i], want);
        }
        for (int q = 0; q < size; q++)
            CHECK(ag[2 * q] == gen_ag(q, iter) && ag[2 * q + 1] == gen_ag(q, iter + 1),
                  "allgather_init iter %d block %d = (%d,%d)", iter, q, ag[2 * q],
                  ag[2 * q + 1]);
    }
    for (int k = 0; k < 4; k++) {
        MPI_OK(MPI_Request_free(&r[k]));
        CHECK(r[k] == MPI_REQUEST_NULL, "MPI_Request_free did not reset request %d", k);
    }
    free(ag);
}

/* ------------------------------------------------- blocking vs nonblocking */

/* Round `first` of size rounds: rank `first` starts an Iallreduce (BAND),
 * an Ibcast from itself and an Ibarrier, tests them, then joins a Barrier,
 * a Bcast and an Allreduce; the other ranks make the blocking calls first
 * and the nonblocking ones after. */
static void test_mixed_kinds(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    for (int first = 0; first < size; first++) {
        int bits = 0xff ^ (1 << (rank % 8)), agreed = -1, nb_bc[3], b_bc = -1, b_sum = -1;
        int one = 1;
        MPI_Request r[3];
        for (int i = 0; i < 3; i++)
            nb_bc[i] = rank == first ? 1000 * first + i : -1;
        if (rank == first) {
            agreed = 0x5a5a;
            MPI_OK(MPI_Iallreduce(&bits, &agreed, 1, MPI_INT, MPI_BAND, comm, &r[0]));
            MPI_OK(MPI_Ibcast(nb_bc, 3, MPI_INT, first, comm, &r[1]));
            MPI_OK(MPI_Ibarrier(comm, &r[2]));
            int done = -1;
            MPI_OK(MPI_Test(&r[0], &done, MPI_STATUS_IGNORE));
            if (size > 1) {
                CHECK(!done, "round %d: Iallreduce done before the others called it", first);
                CHECK(agreed == 0x5a5a, "round %d: Iallreduce wrote its result early: %#x",
                      first, agreed);
            }
            MPI_OK(MPI_Barrier(comm));
            b_bc = rank == first ? 77 + first : -1;
            MPI_OK(MPI_Bcast(&b_bc, 1, MPI_INT, first, comm));
            MPI_OK(MPI_Allreduce(&one, &b_sum, 1, MPI_INT, MPI_SUM, comm));
        } else {
            b_bc = -1;
            MPI_OK(MPI_Barrier(comm));
            MPI_OK(MPI_Bcast(&b_bc, 1, MPI_INT, first, comm));
            MPI_OK(MPI_Allreduce(&one, &b_sum, 1, MPI_INT, MPI_SUM, comm));
            MPI_OK(MPI_Iallreduce(&bits, &agreed, 1, MPI_INT, MPI_BAND, comm, &r[0]));
            MPI_OK(MPI_Ibcast(nb_bc, 3, MPI_INT, first, comm, &r[1]));
            MPI_OK(MPI_Ibarrier(comm, &r[2]));
        }
        MPI_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
        int want = 0xff;
        for (int q = 0; q < size; q++)
            want &= 0xff ^ (1 << (q % 8));
        CHECK(agreed == want, "round %d: Iallreduce gave %#x, want %#x", first, agreed, want);
        for (int i = 0; i < 3; i++)
            CHECK(nb_bc[i] == 1000 * first + i, "round %d: Ibcast [%d] = %d", first, i, nb_bc[i]);
        CHECK(b_bc == 77 + first, "round %d: Bcast gave %d", first, b_bc);
        CHECK(b_sum == size, "round %d: Allreduce gave %d, want %d", first, b_sum, size);
    }
}

/* ------------------------------------------------- persistent start order */

/* Bcast_init, Allreduce_init, Barrier_init and Allgather_init, started in
 * rank-dependent orders (rotated by rank and iteration, reversed on odd
 * ranks) several times with new data; then the same on a duplicate that
 * asserts strict ordering, every rank starting them in one order. */
static void test_persistent_order(MPI_Comm comm)
{
    int rank, size;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_Comm strict;
    MPI_Info in;
    MPI_OK(MPI_Info_create(&in));
    MPI_OK(MPI_Info_set(in, "mpi_assert_strict_persistent_collective_ordering", "true"));
    MPI_OK(MPI_Comm_dup_with_info(comm, in, &strict));
    MPI_OK(MPI_Info_free(&in));
    for (int mode = 0; mode < 2; mode++) {
        MPI_Comm c = mode ? strict : comm;
        enum { N = 5000 };
        int *bc = malloc(sizeof(int) * N), *ain = malloc(sizeof(int) * N), *aout = malloc(sizeof(int) * N);
        int *ag = malloc(sizeof(int) * (size_t)size), mine = 0;
        int root = size / 2;
        MPI_Request r[4];
        MPI_OK(MPI_Bcast_init(bc, N, MPI_INT, root, c, MPI_INFO_NULL, &r[0]));
        MPI_OK(MPI_Allreduce_init(ain, aout, N, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r[1]));
        MPI_OK(MPI_Barrier_init(c, MPI_INFO_NULL, &r[2]));
        MPI_OK(MPI_Allgather_init(&mine, 1, MPI_INT, ag, 1, MPI_INT, c, MPI_INFO_NULL, &r[3]));
        for (int iter = 0; iter < 6; iter++) {
            for (int i = 0; i < N; i++) {
                bc[i] = rank == root ? gen_bcast(iter, i) : -1;
                ain[i] = gen_ag(rank, i) + iter;
                aout[i] = -1;
            }
            mine = 100 * rank + iter;
            for (int q = 0; q < size; q++)
                ag[q] = -1;
            for (int k = 0; k < 4; k++) {
                int shift = mode ? iter : rank + iter;
                int which = (k + shift) % 4;
                if (!mode && rank % 2)
                    which = 3 - which;
                MPI_OK(MPI_Start(&r[which]));
            }
            MPI_OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
            for (int i = 0; i < N; i++) {
                CHECK(bc[i] == gen_bcast(iter, i), "%s: bcast iter %d [%d] = %d",
                      mode ? "strict" : "any order", iter, i, bc[i]);
                long long want = 0;
                for (int q = 0; q < size; q++)
                    want += gen_ag(q, i) + iter;
                CHECK(aout[i] == (int)want, "%s: allreduce iter %d [%d] = %d, want %lld",
                      mode ? "strict" : "any order", iter, i, aout[i], want);
            }
            for (int q = 0; q < size; q++)
                CHECK(ag[q] == 100 * q + iter, "%s: allgather iter %d [%d] = %d",
                      mode ? "strict" : "any order", iter, q, ag[q]);
        }
        for (int k = 0; k < 4; k++)
            MPI_OK(MPI_Request_free(&r[k]));
        free(bc);
        free(ain);
        free(aout);
        free(ag);
    }
    MPI_OK(MPI_Comm_free(&strict));
}

/* ---------------------------------------------------------------- driver */

static void run_all(MPI_Comm comm, MPI_Datatype mat_type, MPI_Op mat, int big)
{
    test_barrier(comm);
    test_bcast(comm);
    test_allreduce(comm, big);
    test_noncommutative(comm, mat_type, mat);
    test_allreduce_derived(comm);
    test_allgather(comm);
    test_nonblocking(comm);
    test_persistent(comm);
    test_persistent_order(comm);
    test_mixed_kinds(comm);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (wsize > 64)
        MT_FAIL("this test handles at most 64 ranks");

    MPI_Datatype mat_type;
    MPI_Op mat;
    MPI_OK(MPI_Type_contiguous(4, MPI_UNSIGNED, &mat_type));
    MPI_OK(MPI_Type_commit(&mat_type));
    MPI_OK(MPI_Op_create(mat_op, 0, &mat));
    int commute = -1;
    MPI_OK(MPI_Op_commutative(mat, &commute));
    CHECK_INT(commute, 0);
    MPI_OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK_INT(commute, 1);

    run_all(MPI_COMM_WORLD, mat_type, mat, 1);
    int calls = 0;
    MPI_OK(MPI_Allreduce(&mat_calls, &calls, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(wsize == 1 || calls > 0, "the user operation was never called");

    /* MPI_COMM_SELF, a duplicate, and a split by parity with reversed ranks. */
    run_all(MPI_COMM_SELF, mat_type, mat, 0);
    MPI_Comm dup, half;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    run_all(dup, mat_type, mat, 0);
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wsize - wrank, &half));
    run_all(half, mat_type, mat, 0);
    /* The split's collectives see the split's ranks: gather world ranks. */
    int hsize, hrank, members[64];
    MPI_OK(MPI_Comm_size(half, &hsize));
    MPI_OK(MPI_Comm_rank(half, &hrank));
    MPI_OK(MPI_Allgather(&wrank, 1, MPI_INT, members, 1, MPI_INT, half));
    for (int i = 0, w = (wsize - 1) - ((wsize - 1 - wrank) % 2); i < hsize; i++, w -= 2)
        CHECK(members[i] == w, "split member %d is world rank %d, want %d", i, members[i], w);
    int root_world = -1;
    if (hrank == 0)
        root_world = wrank;
    MPI_OK(MPI_Bcast(&root_world, 1, MPI_INT, 0, half));
    CHECK(root_world == members[0], "bcast from the split's rank 0 gave %d", root_world);
    MPI_OK(MPI_Comm_free(&half));
    MPI_OK(MPI_Comm_free(&dup));

    MPI_OK(MPI_Op_free(&mat));
    MPI_OK(MPI_Type_free(&mat_type));
    MPI_OK(MPI_Finalize());
    if (wrank == 0)
        printf("coll_basic: ok\n");
    return 0;
}
