/* Derived datatypes on the point-to-point path, at an eager and at a
 * rendezvous size. Sender and receiver use DIFFERENT datatypes with the
 * same type signature, so the data must be packed by one layout and
 * unpacked by the other:
 *   vector  -> MPI_INT              every third int, received contiguous
 *   MPI_INT -> vector               contiguous ints, spread every other int
 *   indexed -> contiguous type      irregular blocks, received as one block
 *   C struct {char; double; int}    (padded) -> a record with the fields in
 *                                   another order and place
 *   vector(2,1,3) with count k      (extent shorter than the stride pattern)
 *   MPI_INT -> resized int          (each int in a 12-byte slot)
 *   ints -> MPI_BOTTOM + hindexed   of absolute addresses
 * Bytes the receive type does not cover must stay as they were, and
 * Get_count/Get_elements are checked. Finally a partial receive: fewer
 * elements than the receive type describes, where Get_count is
 * MPI_UNDEFINED and Get_elements counts the basic elements received.
 * Pairs 2k -> 2k+1; both directions. */
#include "mpitest.h"

#include <stddef.h>
#include <stdint.h>

static int rank, size, partner;

static int ival(int k, int i)
{
    return k * 1000003 + i * 7 + 1;
}

typedef struct {
    char c;
    double d;
    int i;
} cdi_t;

typedef struct {
    double d;
    int i;
    char c;
} other_t;

static void check_counts(const MPI_Status *st, MPI_Datatype t, int count, int elements,
                         const char *what)
{
    int c = -2, e = -2;
    MPI_OK(MPI_Get_count(st, t, &c));
    MPI_OK(MPI_Get_elements(st, t, &e));
    CHECK(c == count && e == elements, "%s: Get_count %d, Get_elements %d; expected %d, %d", what,
          c, e, count, elements);
    CHECK(st->MPI_SOURCE == partner, "%s: source %d", what, st->MPI_SOURCE);
}

/* One exchange: the even rank sends (sbuf, scount, stype), the odd one
 * receives (rbuf, rcount, rtype); then the roles swap. */
static void exchange(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                     MPI_Datatype rtype, int tag, MPI_Status *st, int sender)
{
    if (sender)
        MPI_OK(MPI_Send(sbuf, scount, stype, partner, tag, MPI_COMM_WORLD));
    else
        MPI_OK(MPI_Recv(rbuf, rcount, rtype, partner, tag, MPI_COMM_WORLD, st));
}

static void run(int n, int round)
{
    char what[128];
    MPI_Status st;
    for (int dir = 0; dir < 2; dir++) {
        int sender = (rank % 2) == dir;
        int k = round * 10 + dir;
        /* vector -> MPI_INT */
        {
            int *s = malloc(sizeof(int) * 3 * (size_t)n), *r = malloc(sizeof(int) * ((size_t)n + 4));
            for (int i = 0; i < 3 * n; i++)
                s[i] = (i % 3) ? -1 : ival(k, i / 3);
            for (int i = 0; i < n + 4; i++)
                r[i] = -9;
            MPI_Datatype v;
            MPI_OK(MPI_Type_vector(n, 1, 3, MPI_INT, &v));
            MPI_OK(MPI_Type_commit(&v));
            exchange(s, 1, v, r, n + 4, MPI_INT, 1, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "vector of %d ints -> MPI_INT", n);
                check_counts(&st, MPI_INT, n, n, what);
                for (int i = 0; i < n; i++)
                    CHECK(r[i] == ival(k, i), "%s: int %d is %d", what, i, r[i]);
                for (int i = n; i < n + 4; i++)
                    CHECK(r[i] == -9, "%s: int %d past the message written", what, i);
            }
            MPI_OK(MPI_Type_free(&v));
            free(s);
            free(r);
        }
        /* MPI_INT -> vector(stride 2) */
        {
            int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * 2 * (size_t)n);
            for (int i = 0; i < n; i++)
                s[i] = ival(k + 1, i);
            for (int i = 0; i < 2 * n; i++)
                r[i] = -9;
            MPI_Datatype v;
            MPI_OK(MPI_Type_vector(n, 1, 2, MPI_INT, &v));
            MPI_OK(MPI_Type_commit(&v));
            exchange(s, n, MPI_INT, r, 1, v, 2, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "%d MPI_INT -> vector", n);
                check_counts(&st, v, 1, n, what);
                for (int i = 0; i < 2 * n; i++) {
                    int want = (i % 2) ? -9 : ival(k + 1, i / 2);
                    CHECK(r[i] == want, "%s: int %d is %d, expected %d", what, i, r[i], want);
                }
            }
            MPI_OK(MPI_Type_free(&v));
            free(s);
            free(r);
        }
        /* indexed -> contiguous */
        {
            int nb = 0, total = 0, span = 0;
            while (total < n) {
                int len = 1 + nb % 5;
                if (total + len > n)
                    len = n - total;
                total += len;
                span += len + 1 + nb % 3;
                nb++;
            }
            int *lens = malloc(sizeof(int) * (size_t)nb), *disp = malloc(sizeof(int) * (size_t)nb);
            int *s = malloc(sizeof(int) * (size_t)span), *r = malloc(sizeof(int) * ((size_t)n + 1));
            int at = 0, idx = 0;
            total = 0;
            for (int b = 0; b < nb; b++) {
                int len = 1 + b % 5;
                if (total + len > n)
                    len = n - total;
                lens[b] = len;
                disp[b] = at;
                for (int i = 0; i < len; i++)
                    s[at + i] = ival(k + 2, idx++);
                for (int i = len; i < len + 1 + b % 3 && at + i < span; i++)
                    s[at + i] = -1;
                at += len + 1 + b % 3;
                total += len;
            }
            for (int i = 0; i <= n; i++)
                r[i] = -9;
            MPI_Datatype ix, ct;
            MPI_OK(MPI_Type_indexed(nb, lens, disp, MPI_INT, &ix));
            MPI_OK(MPI_Type_commit(&ix));
            MPI_OK(MPI_Type_contiguous(n, MPI_INT, &ct));
            MPI_OK(MPI_Type_commit(&ct));
            exchange(s, 1, ix, r, 1, ct, 3, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "indexed (%d blocks) -> contiguous of %d", nb, n);
                check_counts(&st, ct, 1, n, what);
                for (int i = 0; i < n; i++)
                    CHECK(r[i] == ival(k + 2, i), "%s: int %d is %d", what, i, r[i]);
                CHECK(r[n] == -9, "%s: int past the buffer written", what);
            }
            MPI_OK(MPI_Type_free(&ix));
            MPI_OK(MPI_Type_free(&ct));
            free(lens);
            free(disp);
            free(s);
            free(r);
        }
        /* struct {char; double; int} -> struct {double; int; char} */
        {
            cdi_t *s = malloc(sizeof(cdi_t) * (size_t)n);
            other_t *r = malloc(sizeof(other_t) * ((size_t)n + 1));
            memset(s, 0x77, sizeof(cdi_t) * (size_t)n);
            for (int i = 0; i < n; i++) {
                s[i].c = (char)(i * 7 + k);
                s[i].d = ival(k + 3, i) + 0.25;
                s[i].i = -ival(k + 3, i);
            }
            memset(r, 0x33, sizeof(other_t) * ((size_t)n + 1));
            int bl[3] = {1, 1, 1};
            MPI_Aint sd[3] = {offsetof(cdi_t, c), offsetof(cdi_t, d), offsetof(cdi_t, i)};
            MPI_Aint rd[3] = {offsetof(other_t, c), offsetof(other_t, d), offsetof(other_t, i)};
            MPI_Datatype ty[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT};
            MPI_Datatype st0, stype, rt0, rtype;
            MPI_OK(MPI_Type_create_struct(3, bl, sd, ty, &st0));
            MPI_OK(MPI_Type_create_resized(st0, 0, sizeof(cdi_t), &stype));
            MPI_OK(MPI_Type_commit(&stype));
            MPI_OK(MPI_Type_create_struct(3, bl, rd, ty, &rt0));
            MPI_OK(MPI_Type_create_resized(rt0, 0, sizeof(other_t), &rtype));
            MPI_OK(MPI_Type_commit(&rtype));
            exchange(s, n, stype, r, n + 1, rtype, 4, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "%d C structs -> reordered records", n);
                check_counts(&st, rtype, n, 3 * n, what);
                for (int i = 0; i < n; i++)
                    CHECK(r[i].c == (char)(i * 7 + k) && r[i].d == ival(k + 3, i) + 0.25 &&
                          r[i].i == -ival(k + 3, i),
                          "%s: record %d holds (%d, %g, %d)", what, i, r[i].c, r[i].d, r[i].i);
                const unsigned char *tail = (const unsigned char *)&r[n];
                for (size_t b = 0; b < sizeof(other_t); b++)
                    CHECK(tail[b] == 0x33, "%s: record past the message written", what);
            }
            MPI_OK(MPI_Type_free(&st0));
            MPI_OK(MPI_Type_free(&stype));
            MPI_OK(MPI_Type_free(&rt0));
            MPI_OK(MPI_Type_free(&rtype));
            free(s);
            free(r);
        }
        /* count k of vector(2 blocks, 1, stride 3): extent 4 ints, so
         * consecutive elements interleave as 0,3,4,7,8,11,... */
        {
            int cnt = n / 2;
            int span = 4 * cnt + 4;
            int *s = malloc(sizeof(int) * (size_t)span), *r = malloc(sizeof(int) * (size_t)(2 * cnt + 1));
            for (int i = 0; i < span; i++)
                s[i] = -1;
            for (int e = 0; e < cnt; e++) {
                s[4 * e] = ival(k + 4, 2 * e);
                s[4 * e + 3] = ival(k + 4, 2 * e + 1);
            }
            for (int i = 0; i <= 2 * cnt; i++)
                r[i] = -9;
            MPI_Datatype v;
            MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
            MPI_OK(MPI_Type_commit(&v));
            MPI_Aint lb, ext;
            MPI_OK(MPI_Type_get_extent(v, &lb, &ext));
            CHECK(lb == 0 && ext == 4 * (MPI_Aint)sizeof(int), "vector(2,1,3) extent %ld",
                  (long)ext);
            exchange(s, cnt, v, r, 2 * cnt + 1, MPI_INT, 5, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "%d x vector(2,1,3) -> MPI_INT", cnt);
                check_counts(&st, MPI_INT, 2 * cnt, 2 * cnt, what);
                for (int i = 0; i < 2 * cnt; i++)
                    CHECK(r[i] == ival(k + 4, i), "%s: int %d is %d, expected %d", what, i, r[i],
                          ival(k + 4, i));
                CHECK(r[2 * cnt] == -9, "%s: int past the message written", what);
            }
            MPI_OK(MPI_Type_free(&v));
            free(s);
            free(r);
        }
        /* MPI_INT -> int resized to a 12-byte slot */
        {
            int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * 3 * (size_t)n);
            for (int i = 0; i < n; i++)
                s[i] = ival(k + 5, i);
            for (int i = 0; i < 3 * n; i++)
                r[i] = -9;
            MPI_Datatype rs;
            MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &rs));
            MPI_OK(MPI_Type_commit(&rs));
            exchange(s, n, MPI_INT, r, n, rs, 6, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "%d MPI_INT -> resized int", n);
                check_counts(&st, rs, n, n, what);
                for (int i = 0; i < 3 * n; i++) {
                    int want = (i % 3) ? -9 : ival(k + 5, i / 3);
                    CHECK(r[i] == want, "%s: int %d is %d, expected %d", what, i, r[i], want);
                }
            }
            MPI_OK(MPI_Type_free(&rs));
            free(s);
            free(r);
        }
        /* ints -> MPI_BOTTOM with absolute addresses: two separate arrays,
         * the first half of the message into b, the second half into a. */
        {
            int half = n / 2;
            int *s = malloc(sizeof(int) * 2 * (size_t)half);
            int *a = malloc(sizeof(int) * ((size_t)half + 1)), *b = malloc(sizeof(int) * ((size_t)half + 1));
            for (int i = 0; i < 2 * half; i++)
                s[i] = ival(k + 6, i);
            for (int i = 0; i <= half; i++)
                a[i] = b[i] = -9;
            MPI_Aint addr[2];
            MPI_OK(MPI_Get_address(b, &addr[0]));
            MPI_OK(MPI_Get_address(a, &addr[1]));
            int bl[2] = {half, half};
            MPI_Datatype hx;
            MPI_OK(MPI_Type_create_hindexed(2, bl, addr, MPI_INT, &hx));
            MPI_OK(MPI_Type_commit(&hx));
            exchange(s, 2 * half, MPI_INT, MPI_BOTTOM, 1, hx, 7, &st, sender);
            if (!sender) {
                snprintf(what, sizeof what, "%d MPI_INT -> MPI_BOTTOM hindexed", 2 * half);
                check_counts(&st, hx, 1, 2 * half, what);
                for (int i = 0; i < half; i++) {
                    CHECK(b[i] == ival(k + 6, i), "%s: b[%d] is %d", what, i, b[i]);
                    CHECK(a[i] == ival(k + 6, half + i), "%s: a[%d] is %d", what, i, a[i]);
                }
                CHECK(a[half] == -9 && b[half] == -9, "%s: wrote past an array", what);
            }
            MPI_OK(MPI_Type_free(&hx));
            free(s);
            free(a);
            free(b);
        }
    }
}

/* Partial receive: the receive type is a pair {int, double}; the message
 * holds m pairs and one more int. */
static void partial(int m)
{
    typedef struct {
        int i;
        double d;
    } pair_t;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(pair_t, i), offsetof(pair_t, d)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_DOUBLE}, p0, pair;
    MPI_OK(MPI_Type_create_struct(2, bl, disp, ty, &p0));
    MPI_OK(MPI_Type_create_resized(p0, 0, sizeof(pair_t), &pair));
    MPI_OK(MPI_Type_commit(&pair));
    pair_t *buf = malloc(sizeof(pair_t) * ((size_t)m + 10));
    if (rank % 2 == 0) {
        for (int i = 0; i <= m; i++) {
            buf[i].i = ival(9, i);
            buf[i].d = ival(9, i) * 0.5;
        }
        /* m pairs followed by the int of pair m. */
        int sbl[2] = {m, 1};
        MPI_Aint sdisp[2] = {0, (MPI_Aint)(m * sizeof(pair_t))};
        MPI_Datatype sty[2] = {pair, MPI_INT}, msg;
        MPI_OK(MPI_Type_create_struct(2, sbl, sdisp, sty, &msg));
        MPI_OK(MPI_Type_commit(&msg));
        MPI_OK(MPI_Send(buf, 1, msg, partner, 8, MPI_COMM_WORLD));
        MPI_OK(MPI_Type_free(&msg));
    } else {
        memset(buf, 0x44, sizeof(pair_t) * ((size_t)m + 10));
        MPI_Status st;
        MPI_OK(MPI_Recv(buf, m + 10, pair, partner, 8, MPI_COMM_WORLD, &st));
        char what[64];
        snprintf(what, sizeof what, "partial receive of %d pairs and an int", m);
        check_counts(&st, pair, MPI_UNDEFINED, 2 * m + 1, what);
        MPI_Count ce = -2;
        MPI_OK(MPI_Get_elements_c(&st, pair, &ce));
        CHECK(ce == 2 * m + 1, "%s: Get_elements_c %lld", what, (long long)ce);
        for (int i = 0; i < m; i++)
            CHECK(buf[i].i == ival(9, i) && buf[i].d == ival(9, i) * 0.5,
                  "%s: pair %d holds (%d, %g)", what, i, buf[i].i, buf[i].d);
        CHECK(buf[m].i == ival(9, m), "%s: the last int is %d", what, buf[m].i);
        const unsigned char *d = (const unsigned char *)&buf[m].d;
        for (size_t b = 0; b < sizeof(double); b++)
            CHECK(d[b] == 0x44, "%s: the double that was not sent was written", what);
    }
    MPI_OK(MPI_Type_free(&p0));
    MPI_OK(MPI_Type_free(&pair));
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    partner = rank ^ 1;
    if (partner < size) {
        /* 300 ints: eager everywhere; 50000 ints (200+ KB): rendezvous,
         * where a non-contiguous sender is packed and a non-contiguous
         * receiver is read into (or pushed to) in pieces. */
        run(300, 0);
        run(50000, 1);
        run(3001, 2); /* odd sizes around the eager limit with 16-byte records */
        partial(5);
        partial(20000);
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_dtype: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
