/* Collectives on intercommunicators: Barrier, Bcast, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v,w), Reduce, Allreduce, Reduce_scatter(_block),
 * each blocking, nonblocking and persistent (started twice), and some of
 * their large-count twins; over intercommunicators whose groups have
 * uneven sizes (1 and n-1, n-1 and 1, halves with the local order the
 * reverse of the world order, evens and odds) and on a duplicate; roots in
 * either group and at every rank of it (three ranks of larger groups);
 * counts 0, small and above the eager limit; int, double, a type with holes
 * received from plain ints, and a non-commutative user operation. Every
 * element is checked against values computed from the REMOTE group, holes
 * and untouched buffers included. Then several nonblocking collectives
 * outstanding at once, completed in reverse order, and the errors: Scan
 * and Exscan (MPI_ERR_COMM), MPI_IN_PLACE (MPI_ERR_BUFFER), roots that
 * name nobody (MPI_ERR_ROOT). */
#include <unistd.h>

#include "mpitest.h"

#define SENT (-77)      /* what untouched ints hold */
#define BIG 6000        /* data ints of a large case: 24 KB, above the eager limit */

typedef struct ic {
    MPI_Comm comm;
    int g;              /* my group: 0 or 1 */
    int rank, size;     /* in my group */
    int rsize;          /* of the other group */
    char name[64];
} ic_t;

static char cur[160];   /* the case being checked, for failure messages */

/* Data int number i of local rank r of group g. */
static int val(int g, int r, long i)
{
    return (g + 1) * 1000000 + r * 10000 + (int)(i % 9973);
}

/* ---------------------------------------------------------------- buffers of ints seen through a type */

/* A datatype seen as a sequence of data ints: MPI_INT, or VEC (two ints
 * of every three: a hole in the middle of each element). */
typedef struct tdesc {
    MPI_Datatype type;
    int per;            /* data ints an element */
    int span;           /* ints an element's extent covers */
    const char *name;
} tdesc_t;

static tdesc_t T_INT, T_VEC;

static long tpos(tdesc_t t, long k)   /* where data int k lies */
{
    return t.per == 1 ? k : 3 * (k / 2) + 2 * (k % 2);
}

/* A buffer for `data` data ints, every int SENT. */
static int *tbuf(tdesc_t t, long data)
{
    long n = data / t.per * t.span + 1;
    int *b = malloc((size_t)n * sizeof(int));
    for (long i = 0; i < n; i++)
        b[i] = SENT;
    return b;
}

static void tclear(tdesc_t t, int *b, long data)
{
    long n = data / t.per * t.span + 1;
    for (long i = 0; i < n; i++)
        b[i] = SENT;
}

/* Data ints [at, at + n) of buffer b must be want(i) for i in [0, n); the
 * holes of their elements must be untouched. */
#define CHECK_RANGE(t, b, at, n, want_expr)                                                   \
    do {                                                                                      \
        for (long i_ = 0; i_ < (n); i_++) {                                                   \
            long i = i_;                                                                      \
            int got_ = (b)[tpos((t), (at) + i_)], want_ = (want_expr);                        \
            CHECK(got_ == want_, "%s: data int %ld: got %d, expected %d", cur, (long)(at) + i_, got_, want_); \
            if ((t).per == 2 && ((at) + i_) % 2 == 0)                                         \
                CHECK((b)[tpos((t), (at) + i_) + 1] == SENT, "%s: the hole after data int %ld was written", cur, \
                      (long)(at) + i_);                                                       \
            (void)i;                                                                          \
        }                                                                                     \
    } while (0)

static void check_untouched(const int *b, long n)
{
    for (long i = 0; i < n; i++)
        CHECK(b[i] == SENT, "%s: int %ld of a buffer that is not significant was written (%d)", cur, i, b[i]);
}

/* Runs a collective in the three call styles, clearing the results before
 * each run and checking them after: blocking, nonblocking, persistent
 * (started twice). The nonblocking and persistent calls name req_. */
#define RUN3(CLEAR, CHECKS, BLOCKING, NONBLOCKING, INIT)                                      \
    do {                                                                                      \
        MPI_Request req_;                                                                     \
        CLEAR;                                                                                \
        MPI_OK(BLOCKING);                                                                     \
        CHECKS;                                                                               \
        CLEAR;                                                                                \
        MPI_OK(NONBLOCKING);                                                                  \
        MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                           \
        CHECKS;                                                                               \
        MPI_OK(INIT);                                                                         \
        for (int rep_ = 0; rep_ < 2; rep_++) {                                                \
            CLEAR;                                                                            \
            MPI_OK(MPI_Start(&req_));                                                         \
            MPI_OK(MPI_Wait(&req_, MPI_STATUS_IGNORE));                                       \
            CHECKS;                                                                           \
        }                                                                                     \
        MPI_OK(MPI_Request_free(&req_));                                                      \
    } while (0)

/* Roots tried in a group of n: all, or the first, second and last. */
static int nroots(int n)
{
    return n <= 3 ? n : 3;
}
static int root_at(int n, int k)
{
    return n <= 3 ? k : (k == 2 ? n - 1 : k);
}

/* The root argument of a process for a root at rank `root` of group rg. */
static int root_arg(const ic_t *x, int rg, int root)
{
    if (x->g != rg)
        return root;
    return x->rank == root ? MPI_ROOT : MPI_PROC_NULL;
}

static const long counts[] = {0, 2, BIG};
#define NCOUNTS 3

/* ---------------------------------------------------------------- rooted */

static void test_bcast(const ic_t *x)
{
    tdesc_t pairs[2][2] = {{T_INT, T_INT}, {T_INT, T_VEC}};   /* root's type, receivers' type */
    for (int tp = 0; tp < 2; tp++)
        for (int rg = 0; rg < 2; rg++) {
            int rn = rg == x->g ? x->size : x->rsize;
            for (int k = 0; k < nroots(rn); k++)
                for (int ci = 0; ci < NCOUNTS; ci++) {
                    int root = root_at(rn, k), arg = root_arg(x, rg, root);
                    long n = counts[ci];
                    tdesc_t t = arg == MPI_ROOT ? pairs[tp][0] : pairs[tp][1];
                    int *b = tbuf(t, n);
                    int cnt = (int)(n / t.per);
                    snprintf(cur, sizeof cur, "%s bcast %s/%s root %d of group %d n %ld", x->name, pairs[tp][0].name,
                             pairs[tp][1].name, root, rg, n);
#define BC_CLEAR                                                                              \
    do {                                                                                      \
        tclear(t, b, n);                                                                      \
        if (arg == MPI_ROOT)                                                                  \
            for (long i = 0; i < n; i++)                                                      \
                b[tpos(t, i)] = val(rg, root, i);                                             \
    } while (0)
#define BC_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_PROC_NULL)                                                             \
            check_untouched(b, n / t.per * t.span + 1);                                       \
        else                                                                                  \
            CHECK_RANGE(t, b, 0, n, val(rg, root, i));                                        \
    } while (0)
                    RUN3(BC_CLEAR, BC_CHECK, MPI_Bcast(b, cnt, t.type, arg, x->comm),
                         MPI_Ibcast(b, cnt, t.type, arg, x->comm, &req_),
                         MPI_Bcast_init(b, cnt, t.type, arg, x->comm, MPI_INFO_NULL, &req_));
                    free(b);
                }
        }
}

static void test_gather(const ic_t *x)
{
    for (int rg = 0; rg < 2; rg++) {
        int rn = rg == x->g ? x->size : x->rsize;
        for (int k = 0; k < nroots(rn); k++)
            for (int ci = 0; ci < NCOUNTS; ci++) {
                int root = root_at(rn, k), arg = root_arg(x, rg, root);
                long n = counts[ci];
                int q = x->rsize, og = 1 - x->g;
                int *s = tbuf(T_INT, n), *r = tbuf(T_VEC, n * q);
                for (long i = 0; i < n; i++)
                    s[i] = val(x->g, x->rank, i);
                snprintf(cur, sizeof cur, "%s gather root %d of group %d n %ld", x->name, root, rg, n);
#define GA_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_ROOT)                                                                  \
            for (int j = 0; j < q; j++)                                                       \
                CHECK_RANGE(T_VEC, r, j * n, n, val(og, j, i));                               \
        else                                                                                  \
            check_untouched(r, n * q / 2 * 3 + 1);                                            \
    } while (0)
                /* The root receives into VEC what the others send as ints. */
                RUN3(tclear(T_VEC, r, n * q), GA_CHECK,
                     MPI_Gather(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm),
                     MPI_Igather(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm, &req_),
                     MPI_Gather_init(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm, MPI_INFO_NULL,
                                     &req_));
                free(s);
                free(r);
            }
    }
}

/* Counts of the v forms: block j of n_j ints at reversed places with gaps. */
static int vcount(int j, long n)
{
    return n == 0 ? 0 : (int)((j % 3) * n / 2 + (j == 1 ? 1 : 0));
}
static void vlayout(int q, long n, int *cnts, int *displs, long *total)
{
    long at = 0;
    for (int j = q - 1; j >= 0; j--) {
        cnts[j] = vcount(j, n);
        displs[j] = (int)at;
        at += cnts[j] + 1;
    }
    *total = at;
}

static void test_gatherv(const ic_t *x)
{
    for (int rg = 0; rg < 2; rg++) {
        int rn = rg == x->g ? x->size : x->rsize;
        for (int k = 0; k < nroots(rn); k++)
            for (int ci = 0; ci < NCOUNTS; ci++) {
                int root = root_at(rn, k), arg = root_arg(x, rg, root);
                long n = counts[ci], total;
                int q = x->rsize, og = 1 - x->g;
                int *cnts = malloc((size_t)q * sizeof(int)), *displs = malloc((size_t)q * sizeof(int));
                vlayout(q, n, cnts, displs, &total);
                int mine = vcount(x->rank, n);
                int *s = tbuf(T_INT, mine), *r = tbuf(T_INT, total);
                for (long i = 0; i < mine; i++)
                    s[i] = val(x->g, x->rank, i);
                snprintf(cur, sizeof cur, "%s gatherv root %d of group %d n %ld", x->name, root, rg, n);
#define GV_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_ROOT) {                                                                \
            for (int j = 0; j < q; j++) {                                                     \
                CHECK_RANGE(T_INT, r, displs[j], cnts[j], val(og, j, i));                     \
                CHECK(r[displs[j] + cnts[j]] == SENT, "%s: gap after block %d written", cur, j); \
            }                                                                                 \
        } else {                                                                              \
            check_untouched(r, total + 1);                                                    \
        }                                                                                     \
    } while (0)
                RUN3(tclear(T_INT, r, total), GV_CHECK,
                     MPI_Gatherv(s, mine, MPI_INT, r, cnts, displs, MPI_INT, arg, x->comm),
                     MPI_Igatherv(s, mine, MPI_INT, r, cnts, displs, MPI_INT, arg, x->comm, &req_),
                     MPI_Gatherv_init(s, mine, MPI_INT, r, cnts, displs, MPI_INT, arg, x->comm, MPI_INFO_NULL,
                                      &req_));
                free(s);
                free(r);
                free(cnts);
                free(displs);
            }
    }
}

static void test_scatter(const ic_t *x)
{
    for (int rg = 0; rg < 2; rg++) {
        int rn = rg == x->g ? x->size : x->rsize;
        for (int k = 0; k < nroots(rn); k++)
            for (int ci = 0; ci < NCOUNTS; ci++) {
                int root = root_at(rn, k), arg = root_arg(x, rg, root);
                long n = counts[ci];
                int q = x->rsize;
                /* The root sends ints; the others receive into VEC. */
                int *s = tbuf(T_INT, n * q), *r = tbuf(T_VEC, n);
                for (int j = 0; j < q; j++)
                    for (long i = 0; i < n; i++)
                        s[j * n + i] = val(x->g, x->rank, 100 * j + i);
                snprintf(cur, sizeof cur, "%s scatter root %d of group %d n %ld", x->name, root, rg, n);
#define SC_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_ROOT || arg == MPI_PROC_NULL)                                          \
            check_untouched(r, n / 2 * 3 + 1);                                                \
        else                                                                                  \
            CHECK_RANGE(T_VEC, r, 0, n, val(rg, root, 100 * x->rank + i));                    \
    } while (0)
                RUN3(tclear(T_VEC, r, n), SC_CHECK,
                     MPI_Scatter(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm),
                     MPI_Iscatter(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm, &req_),
                     MPI_Scatter_init(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, arg, x->comm, MPI_INFO_NULL,
                                      &req_));
                free(s);
                free(r);
            }
    }
}

static void test_scatterv(const ic_t *x)
{
    for (int rg = 0; rg < 2; rg++) {
        int rn = rg == x->g ? x->size : x->rsize;
        for (int k = 0; k < nroots(rn); k++)
            for (int ci = 0; ci < NCOUNTS; ci++) {
                int root = root_at(rn, k), arg = root_arg(x, rg, root);
                long n = counts[ci], total;
                int q = x->rsize;
                int *cnts = malloc((size_t)q * sizeof(int)), *displs = malloc((size_t)q * sizeof(int));
                vlayout(q, n, cnts, displs, &total);
                int mine = vcount(x->rank, n);
                int *s = tbuf(T_INT, total), *r = tbuf(T_INT, mine);
                for (int j = 0; j < q; j++)
                    for (long i = 0; i < cnts[j]; i++)
                        s[displs[j] + i] = val(x->g, x->rank, 100 * j + i);
                snprintf(cur, sizeof cur, "%s scatterv root %d of group %d n %ld", x->name, root, rg, n);
#define SV_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_ROOT || arg == MPI_PROC_NULL)                                          \
            check_untouched(r, mine + 1);                                                     \
        else {                                                                                \
            CHECK_RANGE(T_INT, r, 0, mine, val(rg, root, 100 * x->rank + i));                 \
            CHECK(r[mine] == SENT, "%s: written past the block", cur);                        \
        }                                                                                     \
    } while (0)
                RUN3(tclear(T_INT, r, mine), SV_CHECK,
                     MPI_Scatterv(s, cnts, displs, MPI_INT, r, mine, MPI_INT, arg, x->comm),
                     MPI_Iscatterv(s, cnts, displs, MPI_INT, r, mine, MPI_INT, arg, x->comm, &req_),
                     MPI_Scatterv_init(s, cnts, displs, MPI_INT, r, mine, MPI_INT, arg, x->comm, MPI_INFO_NULL,
                                       &req_));
                free(s);
                free(r);
                free(cnts);
                free(displs);
            }
    }
}

/* ---------------------------------------------------------------- all to all */

static void test_allgather(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    for (int ci = 0; ci < NCOUNTS; ci++) {
        long n = counts[ci];
        int *s = tbuf(T_INT, n), *r = tbuf(T_VEC, n * q);
        for (long i = 0; i < n; i++)
            s[i] = val(x->g, x->rank, i);
        snprintf(cur, sizeof cur, "%s allgather n %ld", x->name, n);
#define AG_CHECK                                                                              \
    do {                                                                                      \
        for (int j = 0; j < q; j++)                                                           \
            CHECK_RANGE(T_VEC, r, j * n, n, val(og, j, i));                                   \
    } while (0)
        RUN3(tclear(T_VEC, r, n * q), AG_CHECK,
             MPI_Allgather(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm),
             MPI_Iallgather(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm, &req_),
             MPI_Allgather_init(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm, MPI_INFO_NULL, &req_));
        free(s);
        free(r);
    }
}

static void test_allgatherv(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    for (int ci = 0; ci < NCOUNTS; ci++) {
        long n = counts[ci], total;
        int *cnts = malloc((size_t)q * sizeof(int)), *displs = malloc((size_t)q * sizeof(int));
        vlayout(q, n, cnts, displs, &total);
        int mine = vcount(x->rank, n);
        int *s = tbuf(T_INT, mine), *r = tbuf(T_INT, total);
        for (long i = 0; i < mine; i++)
            s[i] = val(x->g, x->rank, i);
        snprintf(cur, sizeof cur, "%s allgatherv n %ld", x->name, n);
#define AGV_CHECK                                                                             \
    do {                                                                                      \
        for (int j = 0; j < q; j++) {                                                         \
            CHECK_RANGE(T_INT, r, displs[j], cnts[j], val(og, j, i));                         \
            CHECK(r[displs[j] + cnts[j]] == SENT, "%s: gap after block %d written", cur, j);  \
        }                                                                                     \
    } while (0)
        RUN3(tclear(T_INT, r, total), AGV_CHECK,
             MPI_Allgatherv(s, mine, MPI_INT, r, cnts, displs, MPI_INT, x->comm),
             MPI_Iallgatherv(s, mine, MPI_INT, r, cnts, displs, MPI_INT, x->comm, &req_),
             MPI_Allgatherv_init(s, mine, MPI_INT, r, cnts, displs, MPI_INT, x->comm, MPI_INFO_NULL, &req_));
        free(s);
        free(r);
        free(cnts);
        free(displs);
    }
}

static void test_alltoall(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    for (int ci = 0; ci < NCOUNTS; ci++) {
        long n = counts[ci];
        int *s = tbuf(T_INT, n * q), *r = tbuf(T_VEC, n * q);
        for (int j = 0; j < q; j++)
            for (long i = 0; i < n; i++)
                s[j * n + i] = val(x->g, x->rank, 100 * j + i);
        snprintf(cur, sizeof cur, "%s alltoall n %ld", x->name, n);
#define A2A_CHECK                                                                             \
    do {                                                                                      \
        for (int j = 0; j < q; j++)                                                           \
            CHECK_RANGE(T_VEC, r, j * n, n, val(og, j, 100 * x->rank + i));                   \
    } while (0)
        RUN3(tclear(T_VEC, r, n * q), A2A_CHECK,
             MPI_Alltoall(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm),
             MPI_Ialltoall(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm, &req_),
             MPI_Alltoall_init(s, (int)n, MPI_INT, r, (int)n / 2, T_VEC.type, x->comm, MPI_INFO_NULL, &req_));
        free(s);
        free(r);
    }
}

/* Alltoallv/w: data ints from (group g, rank r) to remote rank j: even. */
static int a2av_count(int g, int r, int j, long n)
{
    return n == 0 ? 0 : (int)(((r + 2 * j + g) % 3) * n + 2 * ((r + j) % 2));
}

static void test_alltoallv(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    for (int ci = 0; ci < NCOUNTS; ci++) {
        long n = counts[ci];
        int *sc = malloc((size_t)q * sizeof(int)), *sd = malloc((size_t)q * sizeof(int));
        int *rc = malloc((size_t)q * sizeof(int)), *rd = malloc((size_t)q * sizeof(int));
        long stot = 0, rtot = 0;
        for (int j = q - 1; j >= 0; j--) {   /* reversed places, a gap after each */
            sc[j] = a2av_count(x->g, x->rank, j, n);
            sd[j] = (int)stot;
            stot += sc[j] + 1;
            rc[j] = a2av_count(og, j, x->rank, n);
            rd[j] = (int)rtot;
            rtot += rc[j] + 1;
        }
        int *s = tbuf(T_INT, stot), *r = tbuf(T_INT, rtot);
        for (int j = 0; j < q; j++)
            for (long i = 0; i < sc[j]; i++)
                s[sd[j] + i] = val(x->g, x->rank, 100 * j + i);
        snprintf(cur, sizeof cur, "%s alltoallv n %ld", x->name, n);
#define A2AV_CHECK                                                                            \
    do {                                                                                      \
        for (int j = 0; j < q; j++) {                                                         \
            CHECK_RANGE(T_INT, r, rd[j], rc[j], val(og, j, 100 * x->rank + i));               \
            CHECK(r[rd[j] + rc[j]] == SENT, "%s: gap after block %d written", cur, j);        \
        }                                                                                     \
    } while (0)
        RUN3(tclear(T_INT, r, rtot), A2AV_CHECK,
             MPI_Alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, x->comm),
             MPI_Ialltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, x->comm, &req_),
             MPI_Alltoallv_init(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, x->comm, MPI_INFO_NULL, &req_));

        /* Alltoallw: byte displacements; blocks from odd remote ranks land
         * in VEC elements, the others in ints; each block starts on a
         * fresh VEC element. */
        MPI_Datatype *st = malloc((size_t)q * sizeof *st), *rt = malloc((size_t)q * sizeof *rt);
        int *wrc = malloc((size_t)q * sizeof(int)), *wrd = malloc((size_t)q * sizeof(int));
        int *wsd = malloc((size_t)q * sizeof(int));
        long wtot = 0;
        for (int j = 0; j < q; j++) {
            st[j] = MPI_INT;
            wsd[j] = sd[j] * (int)sizeof(int);
            tdesc_t t = j % 2 ? T_VEC : T_INT;
            rt[j] = t.type;
            wrc[j] = rc[j] / t.per;
            wrd[j] = (int)(wtot * (long)sizeof(int));
            wtot += rc[j] / t.per * t.span + 3;
        }
        int *w = tbuf(T_INT, wtot);
        snprintf(cur, sizeof cur, "%s alltoallw n %ld", x->name, n);
#define A2AW_CHECK                                                                            \
    do {                                                                                      \
        for (int j = 0; j < q; j++) {                                                         \
            tdesc_t t_ = j % 2 ? T_VEC : T_INT;                                               \
            CHECK_RANGE(t_, w + wrd[j] / (int)sizeof(int), 0, rc[j], val(og, j, 100 * x->rank + i)); \
        }                                                                                     \
    } while (0)
        RUN3(tclear(T_INT, w, wtot), A2AW_CHECK,
             MPI_Alltoallw(s, sc, wsd, st, w, wrc, wrd, rt, x->comm),
             MPI_Ialltoallw(s, sc, wsd, st, w, wrc, wrd, rt, x->comm, &req_),
             MPI_Alltoallw_init(s, sc, wsd, st, w, wrc, wrd, rt, x->comm, MPI_INFO_NULL, &req_));
        free(w);
        free(st);
        free(rt);
        free(wrc);
        free(wrd);
        free(wsd);
        free(s);
        free(r);
        free(sc);
        free(sd);
        free(rc);
        free(rd);
    }
}

/* ---------------------------------------------------------------- reductions */

/* x -> a x + b modulo M, composed left to right: (f op g)(x) = g(f(x)).
 * Associative, not commutative. */
#define AFF_M 1000003
typedef struct aff {
    int a, b;
} aff_t;

static void aff_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    aff_t *f = in, *g = inout;
    for (int i = 0; i < *len; i++) {
        long long a = (long long)f[i].a * g[i].a % AFF_M;
        long long b = ((long long)g[i].a * f[i].b + g[i].b) % AFF_M;
        g[i].a = (int)a;
        g[i].b = (int)b;
    }
}

static MPI_Datatype T_AFF;
static MPI_Op OP_AFF;

enum { R_INT_SUM, R_DOUBLE_MAX, R_AFF, R_NKINDS };
static const char *rnames[R_NKINDS] = {"int sum", "double max", "affine (non-commutative)"};

typedef struct rkind {
    MPI_Datatype type;
    MPI_Op op;
    size_t size;
} rkind_t;

static rkind_t rkind(int k)
{
    if (k == R_INT_SUM)
        return (rkind_t){MPI_INT, MPI_SUM, sizeof(int)};
    if (k == R_DOUBLE_MAX)
        return (rkind_t){MPI_DOUBLE, MPI_MAX, sizeof(double)};
    return (rkind_t){T_AFF, OP_AFF, sizeof(aff_t)};
}

/* Element i of the vector of (group g, rank r). */
static void relem(int k, int g, int r, long i, void *out)
{
    int v = val(g, r, i);
    if (k == R_INT_SUM)
        *(int *)out = v;
    else if (k == R_DOUBLE_MAX)
        *(double *)out = (double)(((long)v * 7919) % 10007) + 0.25 * r;
    else
        *(aff_t *)out = (aff_t){v % 97 + 2, v % 1009};
}

static void rfill(int k, int g, int r, long n, void *buf)
{
    size_t sz = rkind(k).size;
    for (long i = 0; i < n; i++)
        relem(k, g, r, i, (char *)buf + (size_t)i * sz);
}

/* Element i of the reduction, in rank order, over the q processes of group g. */
static void rexpect(int k, int g, int q, long i, void *out)
{
    relem(k, g, 0, i, out);
    for (int j = 1; j < q; j++) {
        union {
            int i;
            double d;
            aff_t f;
        } e;
        relem(k, g, j, i, &e);
        if (k == R_INT_SUM)
            *(int *)out += e.i;
        else if (k == R_DOUBLE_MAX)
            *(double *)out = e.d > *(double *)out ? e.d : *(double *)out;
        else {
            aff_t acc = *(aff_t *)out;
            int one = 1;
            MPI_Datatype dt = T_AFF;
            aff_op(&acc, &e.f, &one, &dt);   /* e = acc op e */
            *(aff_t *)out = e.f;
        }
    }
}

/* The n elements from element `from` of the reduction over group g land
 * at buf (0 when the element count is 0). */
static void rcheck(int k, int g, int q, long from, long n, const void *buf)
{
    size_t sz = rkind(k).size;
    for (long i = 0; i < n; i++) {
        union {
            int i;
            double d;
            aff_t f;
        } want, got;
        rexpect(k, g, q, from + i, &want);
        memcpy(&got, (const char *)buf + (size_t)i * sz, sz);
        if (memcmp(&got, &want, sz) != 0) {
            if (k == R_AFF)
                MT_FAIL("%s: element %ld: got (%d, %d), expected (%d, %d)", cur, from + i, got.f.a, got.f.b,
                        want.f.a, want.f.b);
            else if (k == R_INT_SUM)
                MT_FAIL("%s: element %ld: got %d, expected %d", cur, from + i, got.i, want.i);
            else
                MT_FAIL("%s: element %ld: got %g, expected %g", cur, from + i, got.d, want.d);
        }
    }
}

static void *rbuf_new(int k, long n)
{
    size_t bytes = (size_t)(n + 1) * rkind(k).size;
    void *b = malloc(bytes);
    memset(b, 0xa5, bytes);
    return b;
}

static void rclear(int k, void *b, long n)
{
    memset(b, 0xa5, (size_t)(n + 1) * rkind(k).size);
}

static void runtouched(int k, const void *b, long n)
{
    const unsigned char *c = b;
    for (size_t i = 0; i < (size_t)(n + 1) * rkind(k).size; i++)
        CHECK(c[i] == 0xa5, "%s: byte %zu of a buffer that is not significant was written", cur, i);
}

static const long rcounts_[] = {0, 5, 3000};

static void test_reduce(const ic_t *x)
{
    int og = 1 - x->g, q = x->rsize;
    for (int k = 0; k < R_NKINDS; k++)
        for (int rg = 0; rg < 2; rg++) {
            int rn = rg == x->g ? x->size : x->rsize;
            for (int rr = 0; rr < nroots(rn); rr++)
                for (int ci = 0; ci < 3; ci++) {
                    int root = root_at(rn, rr), arg = root_arg(x, rg, root);
                    long n = rcounts_[ci];
                    rkind_t t = rkind(k);
                    void *s = rbuf_new(k, n), *r = rbuf_new(k, n);
                    rfill(k, x->g, x->rank, n, s);
                    snprintf(cur, sizeof cur, "%s reduce %s root %d of group %d n %ld", x->name, rnames[k], root,
                             rg, n);
#define RE_CHECK                                                                              \
    do {                                                                                      \
        if (arg == MPI_ROOT)                                                                  \
            rcheck(k, og, q, 0, n, r);                                                        \
        else                                                                                  \
            runtouched(k, r, n);                                                              \
    } while (0)
                    RUN3(rclear(k, r, n), RE_CHECK, MPI_Reduce(s, r, (int)n, t.type, t.op, arg, x->comm),
                         MPI_Ireduce(s, r, (int)n, t.type, t.op, arg, x->comm, &req_),
                         MPI_Reduce_init(s, r, (int)n, t.type, t.op, arg, x->comm, MPI_INFO_NULL, &req_));
                    free(s);
                    free(r);
                }
        }
}

static void test_allreduce(const ic_t *x)
{
    int og = 1 - x->g, q = x->rsize;
    for (int k = 0; k < R_NKINDS; k++)
        for (int ci = 0; ci < 3; ci++) {
            long n = rcounts_[ci];
            rkind_t t = rkind(k);
            void *s = rbuf_new(k, n), *r = rbuf_new(k, n);
            rfill(k, x->g, x->rank, n, s);
            snprintf(cur, sizeof cur, "%s allreduce %s n %ld", x->name, rnames[k], n);
            RUN3(rclear(k, r, n), rcheck(k, og, q, 0, n, r),
                 MPI_Allreduce(s, r, (int)n, t.type, t.op, x->comm),
                 MPI_Iallreduce(s, r, (int)n, t.type, t.op, x->comm, &req_),
                 MPI_Allreduce_init(s, r, (int)n, t.type, t.op, x->comm, MPI_INFO_NULL, &req_));
            free(s);
            free(r);
        }
}

static void test_reduce_scatter(const ic_t *x)
{
    int og = 1 - x->g, p = x->size, q = x->rsize;
    for (int k = 0; k < R_NKINDS; k++)
        for (int ci = 0; ci < 3; ci++) {
            rkind_t t = rkind(k);
            /* Block: both groups reduce vectors of p q m elements; each
             * process of a group of n gets p q m / n of them. */
            long m = ci == 0 ? 0 : ci == 1 ? 1 : 200;
            long total = (long)p * q * m, blk = total / p;
            void *s = rbuf_new(k, total), *r = rbuf_new(k, blk);
            rfill(k, x->g, x->rank, total, s);
            snprintf(cur, sizeof cur, "%s reduce_scatter_block %s n %ld", x->name, rnames[k], total);
            RUN3(rclear(k, r, blk), rcheck(k, og, q, x->rank * blk, blk, r),
                 MPI_Reduce_scatter_block(s, r, (int)blk, t.type, t.op, x->comm),
                 MPI_Ireduce_scatter_block(s, r, (int)blk, t.type, t.op, x->comm, &req_),
                 MPI_Reduce_scatter_block_init(s, r, (int)blk, t.type, t.op, x->comm, MPI_INFO_NULL, &req_));
            free(r);

            /* Uneven blocks (some empty) cut at i^2 / p^2 of the vector. */
            int *cnts = malloc((size_t)p * sizeof(int));
            long from = 0;
            for (int i = 0; i < p; i++) {
                long a = total * i * i / ((long)p * p), b = total * (i + 1) * (i + 1) / ((long)p * p);
                cnts[i] = (int)(b - a);
                if (i < x->rank)
                    from += cnts[i];
            }
            long mine = cnts[x->rank];
            r = rbuf_new(k, mine);
            snprintf(cur, sizeof cur, "%s reduce_scatter %s n %ld", x->name, rnames[k], total);
            RUN3(rclear(k, r, mine), rcheck(k, og, q, from, mine, r),
                 MPI_Reduce_scatter(s, r, cnts, t.type, t.op, x->comm),
                 MPI_Ireduce_scatter(s, r, cnts, t.type, t.op, x->comm, &req_),
                 MPI_Reduce_scatter_init(s, r, cnts, t.type, t.op, x->comm, MPI_INFO_NULL, &req_));
            free(cnts);
            free(s);
            free(r);
        }
}

/* ---------------------------------------------------------------- barrier, many at once, large counts, errors */

static void test_barrier(const ic_t *x)
{
    snprintf(cur, sizeof cur, "%s barrier", x->name);
    RUN3((void)0, (void)0, MPI_Barrier(x->comm), MPI_Ibarrier(x->comm, &req_),
         MPI_Barrier_init(x->comm, MPI_INFO_NULL, &req_));
    /* Nobody leaves before everyone of both groups has arrived: the last
     * process of group 1 arrives 250 ms late, and group 0 must wait for it
     * (blocking and nonblocking). */
    for (int style = 0; style < 2; style++) {
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        double t0 = MPI_Wtime();
        if (x->g == 1 && x->rank == x->size - 1)
            usleep(250000);
        if (style == 0) {
            MPI_OK(MPI_Barrier(x->comm));
        } else {
            MPI_Request rq;
            MPI_OK(MPI_Ibarrier(x->comm, &rq));
            MPI_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        double waited = MPI_Wtime() - t0;
        if (x->g == 0)
            CHECK(waited > 0.1, "%s: left the barrier after %.3f s, before the late process arrived", cur, waited);
    }
}

/* Several nonblocking collectives outstanding at once, completed in
 * reverse order of starting. */
static void test_many(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    int b = x->g == 0 && x->rank == 0 ? 4242 : -1;
    int ar_s = x->rank + 1, ar_r = 0;
    int *a2a_s = malloc((size_t)q * sizeof(int)), *a2a_r = malloc((size_t)q * sizeof(int));
    int *ga_r = malloc((size_t)q * sizeof(int)), ga_s = val(x->g, x->rank, 0);
    for (int j = 0; j < q; j++)
        a2a_s[j] = val(x->g, x->rank, j);
    MPI_Request rq[5];
    /* Bcast from group 0's rank 0; gather to group 1's last rank. */
    int bc_root = x->g == 0 ? (x->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    int last1 = x->g == 1 ? x->size - 1 : q - 1;
    int ga_root = x->g == 1 ? (x->rank == last1 ? MPI_ROOT : MPI_PROC_NULL) : last1;
    MPI_OK(MPI_Ibcast(&b, 1, MPI_INT, bc_root, x->comm, &rq[0]));
    MPI_OK(MPI_Iallreduce(&ar_s, &ar_r, 1, MPI_INT, MPI_SUM, x->comm, &rq[1]));
    MPI_OK(MPI_Ialltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, x->comm, &rq[2]));
    MPI_OK(MPI_Igather(&ga_s, 1, MPI_INT, ga_r, 1, MPI_INT, ga_root, x->comm, &rq[3]));
    MPI_OK(MPI_Ibarrier(x->comm, &rq[4]));
    for (int i = 4; i >= 0; i--)
        MPI_OK(MPI_Wait(&rq[i], MPI_STATUS_IGNORE));
    snprintf(cur, sizeof cur, "%s many outstanding", x->name);
    CHECK(b == (x->g == 1 ? 4242 : x->rank == 0 ? 4242 : -1), "%s: bcast got %d", cur, b);
    CHECK_INT(ar_r, q * (q + 1) / 2);
    for (int j = 0; j < q; j++)
        CHECK(a2a_r[j] == val(og, j, x->rank), "%s: alltoall block %d", cur, j);
    if (ga_root == MPI_ROOT)
        for (int j = 0; j < q; j++)
            CHECK(ga_r[j] == val(og, j, 0), "%s: gather block %d", cur, j);
    free(a2a_s);
    free(a2a_r);
    free(ga_r);
}

/* Some large-count twins (the int forms share their path). */
static void test_large_count(const ic_t *x)
{
    int q = x->rsize, og = 1 - x->g;
    snprintf(cur, sizeof cur, "%s large-count forms", x->name);
    long n = 3;
    int *b = tbuf(T_INT, n);
    int root = x->g == 0 ? (x->rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    if (root == MPI_ROOT)
        for (long i = 0; i < n; i++)
            b[i] = val(0, 0, i);
    MPI_OK(MPI_Bcast_c(b, (MPI_Count)n, MPI_INT, root, x->comm));
    if (root != MPI_PROC_NULL)
        CHECK_RANGE(T_INT, b, 0, n, val(0, 0, i));
    free(b);

    MPI_Count *cnts = malloc((size_t)q * sizeof *cnts);
    MPI_Aint *displs = malloc((size_t)q * sizeof *displs);
    MPI_Datatype *types = malloc((size_t)q * sizeof *types);
    long total = 0;
    for (int j = 0; j < q; j++) {
        cnts[j] = j + 1;
        displs[j] = (MPI_Aint)total;
        types[j] = MPI_INT;
        total += j + 1;
    }
    int *s = tbuf(T_INT, x->rank + 1), *r = tbuf(T_INT, total);
    for (long i = 0; i <= x->rank; i++)
        s[i] = val(x->g, x->rank, i);
    MPI_OK(MPI_Allgatherv_c(s, x->rank + 1, MPI_INT, r, cnts, displs, MPI_INT, x->comm));
    for (int j = 0; j < q; j++)
        CHECK_RANGE(T_INT, r, displs[j], cnts[j], val(og, j, i));
    free(s);
    free(r);

    /* Alltoallw_c: one int to and from everyone, byte displacements. */
    int *ws = malloc((size_t)q * sizeof(int)), *wr = malloc((size_t)q * sizeof(int));
    for (int j = 0; j < q; j++) {
        ws[j] = val(x->g, x->rank, j);
        wr[j] = SENT;
        cnts[j] = 1;
        displs[j] = (MPI_Aint)(j * sizeof(int));
    }
    MPI_OK(MPI_Alltoallw_c(ws, cnts, displs, types, wr, cnts, displs, types, x->comm));
    for (int j = 0; j < q; j++)
        CHECK(wr[j] == val(og, j, x->rank), "%s: alltoallw_c block %d", cur, j);
    free(ws);
    free(wr);
    free(cnts);
    free(displs);
    free(types);

    /* Reduce_scatter_c: both groups reduce vectors of p q elements, and
     * each process gets q of the other group's sum (p of them on the
     * other side). */
    int p = x->size;
    MPI_Count *rc = malloc((size_t)p * sizeof *rc);
    int *rs = malloc((size_t)p * (size_t)q * sizeof(int)), *rr = tbuf(T_INT, q);
    for (int i = 0; i < p; i++)
        rc[i] = q;
    for (int k = 0; k < p * q; k++)
        rs[k] = x->rank + 10 * k;
    MPI_OK(MPI_Reduce_scatter_c(rs, rr, rc, MPI_INT, MPI_SUM, x->comm));
    CHECK_RANGE(T_INT, rr, 0, q, q * (q - 1) / 2 + 10 * (x->rank * q + (int)i) * q);
    CHECK(rr[q] == SENT, "%s: reduce_scatter_c wrote past its block", cur);
    free(rc);
    free(rs);
    free(rr);
}

static void test_errors(const ic_t *x)
{
    int a = 1, b = 0;
    MPI_OK(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_COMM, MPI_Scan(&a, &b, 1, MPI_INT, MPI_SUM, x->comm));
    MPI_FAILS(MPI_ERR_COMM, MPI_Exscan(&a, &b, 1, MPI_INT, MPI_SUM, x->comm));
    MPI_Request rq;
    MPI_FAILS(MPI_ERR_COMM, MPI_Iscan(&a, &b, 1, MPI_INT, MPI_SUM, x->comm, &rq));
    MPI_FAILS(MPI_ERR_COMM, MPI_Exscan_init(&a, &b, 1, MPI_INT, MPI_SUM, x->comm, MPI_INFO_NULL, &rq));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM, x->comm));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(MPI_IN_PLACE, 0, MPI_INT, &b, 1, MPI_INT, x->comm));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, &b, 1, MPI_INT, x->comm, &rq));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Reduce(&a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_ROOT, x->comm));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, &b, 1, MPI_INT, 0, x->comm));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(&a, 1, MPI_INT, x->rsize, x->comm));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(&a, 1, MPI_INT, -7, x->comm));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Reduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_ANY_SOURCE, x->comm));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Igatherv(&a, 1, MPI_INT, &b, NULL, NULL, MPI_INT, x->rsize + 3, x->comm, &rq));
    /* The failed calls left the intercommunicator usable. */
    MPI_OK(MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, x->comm));
    CHECK_INT(b, x->rsize);
    MPI_OK(MPI_Comm_set_errhandler(x->comm, MPI_ERRORS_ARE_FATAL));
}

/* ---------------------------------------------------------------- layouts */

/* Layout k of n processes; group 0 is A, group 1 is B:
 *   0: A = {0}, B = the rest
 *   1: A = the lower half, B = the upper half, local order reversed
 *   2: A = the even ranks, B = the odd ones
 *   3: A = all but the last, B = {n - 1} */
static ic_t make_layout(int k, int wrank, int wsize)
{
    ic_t x;
    int half = wsize / 2, g, lead[2];
    switch (k) {
    case 0:
        g = wrank >= 1;
        lead[0] = 0;
        lead[1] = 1;
        break;
    case 1:
        g = wrank >= half;
        lead[0] = half - 1;
        lead[1] = wsize - 1;
        break;
    case 2:
        g = wrank % 2;
        lead[0] = 0;
        lead[1] = 1;
        break;
    default:
        g = wrank == wsize - 1;
        lead[0] = 0;
        lead[1] = wsize - 1;
        break;
    }
    MPI_Comm local;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, g, k == 1 ? -wrank : wrank, &local));
    MPI_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, lead[1 - g], 100 + k, &x.comm));
    MPI_OK(MPI_Comm_free(&local));
    x.g = g;
    MPI_OK(MPI_Comm_rank(x.comm, &x.rank));
    MPI_OK(MPI_Comm_size(x.comm, &x.size));
    MPI_OK(MPI_Comm_remote_size(x.comm, &x.rsize));
    snprintf(x.name, sizeof x.name, "layout %d (%d+%d)", k, g ? x.rsize : x.size, g ? x.size : x.rsize);
    return x;
}

static void run_all(const ic_t *x)
{
    test_barrier(x);
    test_bcast(x);
    test_gather(x);
    test_gatherv(x);
    test_scatter(x);
    test_scatterv(x);
    test_allgather(x);
    test_allgatherv(x);
    test_alltoall(x);
    test_alltoallv(x);
    test_reduce(x);
    test_allreduce(x);
    test_reduce_scatter(x);
    test_many(x);
    test_large_count(x);
    test_errors(x);
}

/* Mappings of this process (lines of /proc/self/maps). */
static int count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    int n = 0, ch;
    if (!f)
        return -1;
    while ((ch = fgetc(f)) != EOF)
        n += ch == '\n';
    fclose(f);
    return n;
}

/* Intercommunicators made and freed again and again, with collectives on
 * them and a merge: what their local parts kept (schedules, shared
 * regions) goes with them, so the process's mappings do not grow. */
static void test_free_releases(int wrank, int wsize)
{
    int before = 0;
    for (int it = 0; it < 40; it++) {
        if (it == 10)
            before = count_maps();   /* after the first rounds' one-time setup */
        ic_t x = make_layout(1, wrank, wsize);
        int v = it, sum = 0;
        MPI_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, x.comm));
        int rs;
        MPI_OK(MPI_Comm_remote_size(x.comm, &rs));
        CHECK(sum == it * rs, "intercomm allreduce %d, want %d", sum, it * rs);
        MPI_Comm m;
        MPI_OK(MPI_Intercomm_merge(x.comm, x.g, &m));
        int mr;
        MPI_OK(MPI_Comm_rank(m, &mr));
        int b = mr == 0 ? it + 7 : -1;
        MPI_OK(MPI_Bcast(&b, 1, MPI_INT, 0, m));
        CHECK(b == it + 7, "merged bcast %d", b);
        MPI_OK(MPI_Comm_free(&m));
        MPI_OK(MPI_Comm_free(&x.comm));
    }
    int after = count_maps();
    CHECK(before > 0 && after - before < 8, "mappings grew from %d to %d over 30 intercommunicators made and freed",
          before, after);
}

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    if (wsize < 2) {
        printf("coll_inter: needs 2 ranks, skipped\n");
        MPI_OK(MPI_Finalize());
        return 0;
    }
    MPI_Datatype vec;
    MPI_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
    MPI_OK(MPI_Type_commit(&vec));
    T_INT = (tdesc_t){MPI_INT, 1, 1, "int"};
    T_VEC = (tdesc_t){vec, 2, 3, "holey"};
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &T_AFF));
    MPI_OK(MPI_Type_commit(&T_AFF));
    MPI_OK(MPI_Op_create(aff_op, 0, &OP_AFF));

    for (int k = 0; k < 4; k++) {
        if (wsize == 2 && k > 0)
            break;   /* every layout of two processes is layout 0 */
        ic_t x = make_layout(k, wrank, wsize);
        run_all(&x);
        if (k == 2) {
            /* A duplicate has a bridge of its own. */
            ic_t d = x;
            MPI_OK(MPI_Comm_dup(x.comm, &d.comm));
            snprintf(d.name, sizeof d.name, "dup of layout %d", k);
            test_allreduce(&d);
            test_alltoallv(&d);
            test_reduce(&d);
            MPI_OK(MPI_Comm_free(&d.comm));
        }
        MPI_OK(MPI_Comm_free(&x.comm));
    }
    test_free_releases(wrank, wsize);
    MPI_OK(MPI_Op_free(&OP_AFF));
    MPI_OK(MPI_Type_free(&T_AFF));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (wrank == 0)
        printf("coll_inter: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
