/* Blocking collectives made again with the same arguments rerun the
 * schedule kept from the last call (coll/coll_api.c). The reuse must never
 * change a result:
 * - the same Allreduce, Bcast, Reduce, Gather, Scatter, Allgather and
 *   Alltoall, 40 times each with new data every time;
 * - calls that differ in one argument only (root, count, operation, in
 *   place or not, buffer), alternated, so that a kept schedule of one must
 *   not serve the other;
 * - more distinct calls in turn than the communicator keeps (eviction);
 * - a derived datatype freed and another made (its handle may come back):
 *   the result follows the new type;
 * - Reduce_scatter, Allgatherv, Alltoallv, Gatherv and Scatterv (int and
 *   large-count forms) whose count and displacement arrays change in place
 *   between calls (same addresses, new contents): the kept schedule of the
 *   old counts must not serve the new ones; the ranks that are not the
 *   root of Gatherv or Scatterv pass NULL arrays in one call and arrays of
 *   nonsense in the next (not significant there);
 * - Alltoallw whose type array changes in place between MPI_INT and
 *   MPI_SHORT (predefined types are kept by handle);
 * - a call with a bad root between kept ones fails with MPI_ERR_ROOT and
 *   the next ones still work;
 * - a duplicated communicator freed with schedules kept (no leak under the
 *   sanitizers);
 * - Neighbor_alltoallv and Neighbor_allgather on a distributed graph where
 *   rank 0 sends to more neighbors than there are ranks (2p - 1 edges,
 *   some to the same rank): its send counts alternate in place between
 *   two patterns that differ only in an entry past the first p, so a
 *   kept schedule compared on p entries would send the wrong count.
 * Every rank checks every element against a value computed locally. */
#include <stdbool.h>

#include "mpitest.h"

static int rank, size;

static int val(int r, int it, int i)
{
    return 1000 * (it + 1) + 10 * r + i;
}

static void allreduce_rounds(MPI_Comm comm)
{
    int s[8], r[8];
    for (int it = 0; it < 40; it++) {
        for (int i = 0; i < 8; i++)
            s[i] = val(rank, it, i);
        /* Two calls that differ only in the operation, then only in count. */
        MPI_OK(MPI_Allreduce(s, r, 8, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < 8; i++) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, it, i);
            CHECK(r[i] == want, "it %d sum[%d] = %d, want %d", it, i, r[i], want);
        }
        MPI_OK(MPI_Allreduce(s, r, 8, MPI_INT, MPI_MAX, comm));
        for (int i = 0; i < 8; i++)
            CHECK(r[i] == val(size - 1, it, i), "it %d max[%d] = %d", it, i, r[i]);
        r[3] = -7;
        MPI_OK(MPI_Allreduce(s, r, 3, MPI_INT, MPI_MIN, comm));
        for (int i = 0; i < 3; i++)
            CHECK(r[i] == val(0, it, i), "it %d min[%d] = %d", it, i, r[i]);
        CHECK(r[3] == -7, "it %d: count 3 wrote element 3 (%d)", it, r[3]);
        /* In place, same buffer as the receive buffer above. */
        for (int i = 0; i < 8; i++)
            r[i] = val(rank, it, i);
        MPI_OK(MPI_Allreduce(MPI_IN_PLACE, r, 8, MPI_INT, MPI_SUM, comm));
        for (int i = 0; i < 8; i++) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, it, i);
            CHECK(r[i] == want, "it %d in place sum[%d] = %d, want %d", it, i, r[i], want);
        }
    }
}

static void rooted_rounds(MPI_Comm comm)
{
    int b[4], g[4 * 64], one;
    for (int it = 0; it < 40; it++) {
        int root = it % size;
        /* Bcast: same buffer and count, the root moves. */
        for (int i = 0; i < 4; i++)
            b[i] = rank == root ? val(root, it, i) : -1;
        MPI_OK(MPI_Bcast(b, 4, MPI_INT, root, comm));
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == val(root, it, i), "it %d bcast from %d [%d] = %d", it, root, i, b[i]);
        /* Reduce to the same root. */
        one = val(rank, it, 0);
        int sum = -1;
        MPI_OK(MPI_Reduce(&one, &sum, 1, MPI_INT, MPI_SUM, root, comm));
        if (rank == root) {
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, it, 0);
            CHECK(sum == want, "it %d reduce to %d = %d, want %d", it, root, sum, want);
        }
        /* Gather and Scatter of 2 ints, root 0 and the moving root. */
        int s2[2] = {val(rank, it, 0), val(rank, it, 1)}, r2[2] = {-1, -1};
        for (int k = 0; k < 2; k++) {
            int rt = k ? root : 0;
            memset(g, 0xff, sizeof g);
            MPI_OK(MPI_Gather(s2, 2, MPI_INT, g, 2, MPI_INT, rt, comm));
            if (rank == rt)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < 2; i++)
                        CHECK(g[2 * q + i] == val(q, it, i), "it %d gather to %d [%d][%d] = %d", it, rt, q, i,
                              g[2 * q + i]);
            if (rank == rt)
                for (int q = 0; q < size; q++)
                    for (int i = 0; i < 2; i++)
                        g[2 * q + i] = val(q, it + 7, i);
            MPI_OK(MPI_Scatter(g, 2, MPI_INT, r2, 2, MPI_INT, rt, comm));
            for (int i = 0; i < 2; i++)
                CHECK(r2[i] == val(rank, it + 7, i), "it %d scatter from %d [%d] = %d", it, rt, i, r2[i]);
        }
    }
}

static void exchange_rounds(MPI_Comm comm)
{
    int s[64], r[64];
    for (int it = 0; it < 40; it++) {
        for (int q = 0; q < size; q++)
            s[q] = val(rank, it, q);
        MPI_OK(MPI_Alltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm));
        for (int q = 0; q < size; q++)
            CHECK(r[q] == val(q, it, rank), "it %d alltoall from %d = %d", it, q, r[q]);
        int mine = val(rank, it, 5);
        MPI_OK(MPI_Allgather(&mine, 1, MPI_INT, r, 1, MPI_INT, comm));
        for (int q = 0; q < size; q++)
            CHECK(r[q] == val(q, it, 5), "it %d allgather [%d] = %d", it, q, r[q]);
    }
}

/* More distinct calls in turn than are kept: each must stay right. */
static void eviction_rounds(MPI_Comm comm)
{
    enum { NB = 7 };
    int s[NB], r[NB];
    for (int it = 0; it < 20; it++)
        for (int k = 0; k < NB; k++) {
            s[k] = val(rank, it, k);
            r[k] = -1;
            MPI_OK(MPI_Allreduce(&s[k], &r[k], 1, MPI_INT, MPI_SUM, comm));
            int want = 0;
            for (int q = 0; q < size; q++)
                want += val(q, it, k);
            CHECK(r[k] == want, "it %d call %d: %d, want %d", it, k, r[k], want);
        }
}

/* Count arrays rewritten in place between calls with the same addresses. */
static void counts_rounds(MPI_Comm comm)
{
    enum { MAXP = 64, MAXC = 3 };
    int s[MAXP * MAXC], r[MAXP * MAXC], cnt[MAXP], dsp[MAXP], rcnt[MAXP], rdsp[MAXP];
    MPI_Count ccnt[MAXP];
    for (int it = 0; it < 30; it++) {
        /* Rank q's count: 1 + (q + it) % 3 (changes every call, same arrays). */
        int total = 0;
        for (int q = 0; q < size; q++) {
            cnt[q] = 1 + (q + it) % MAXC;
            ccnt[q] = cnt[q];
            dsp[q] = total;
            total += cnt[q];
        }
        for (int i = 0; i < total; i++)
            s[i] = val(rank, it, i);
        for (int k = 0; k < 2; k++) {
            for (int i = 0; i < MAXP * MAXC; i++)
                r[i] = -1;
            if (k == 0)
                MPI_OK(MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, comm));
            else
                MPI_OK(MPI_Reduce_scatter_c(s, r, ccnt, MPI_INT, MPI_SUM, comm));
            for (int i = 0; i < cnt[rank]; i++) {
                int want = 0;
                for (int q = 0; q < size; q++)
                    want += val(q, it, dsp[rank] + i);
                CHECK(r[i] == want, "it %d form %d reduce_scatter [%d] = %d, want %d", it, k, i, r[i], want);
            }
            CHECK(r[cnt[rank]] == -1, "it %d form %d: reduce_scatter wrote past its count %d", it, k, cnt[rank]);
        }
        /* Allgatherv: rank q gives cnt[q] ints. */
        for (int i = 0; i < MAXP * MAXC; i++)
            r[i] = -1;
        MPI_OK(MPI_Allgatherv(s, cnt[rank], MPI_INT, r, cnt, dsp, MPI_INT, comm));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < cnt[q]; i++)
                CHECK(r[dsp[q] + i] == val(q, it, i), "it %d allgatherv [%d][%d] = %d", it, q, i, r[dsp[q] + i]);
        CHECK(r[total] == -1, "it %d: allgatherv wrote past %d", it, total);
        /* Alltoallv: rank me sends cnt[q] ints to q and receives
         * rcnt[q] = cnt[me] from each (what q sends it). */
        int rt = 0;
        for (int q = 0; q < size; q++) {
            rcnt[q] = cnt[rank];
            rdsp[q] = rt;
            rt += rcnt[q];
        }
        for (int i = 0; i < MAXP * MAXC; i++)
            r[i] = -1;
        MPI_OK(MPI_Alltoallv(s, cnt, dsp, MPI_INT, r, rcnt, rdsp, MPI_INT, comm));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < rcnt[q]; i++)
                CHECK(r[rdsp[q] + i] == val(q, it, dsp[rank] + i), "it %d alltoallv from %d [%d] = %d", it, q, i,
                      r[rdsp[q] + i]);
        CHECK(r[rt] == -1, "it %d: alltoallv wrote past %d", it, rt);
    }
}

/* Gatherv and Scatterv, root 1 % size: the root's arrays change in place
 * every call; elsewhere the arrays are NULL or nonsense (one entry long:
 * the sanitizers' run catches a read of the next). */
static void rooted_counts_rounds(MPI_Comm comm)
{
    enum { MAXP = 64, MAXC = 3 };
    int s[MAXP * MAXC], r[MAXP * MAXC], cnt[MAXP], dsp[MAXP];
    MPI_Count ccnt[MAXP];
    MPI_Aint cdsp[MAXP];
    int root = 1 % size;
    int *junk = malloc(sizeof *junk);
    MPI_Count *cjunk = malloc(sizeof *cjunk);
    MPI_Aint *cdjunk = malloc(sizeof *cdjunk);
    *junk = 1 << 28;
    *cjunk = (MPI_Count)1 << 40;
    *cdjunk = -((MPI_Aint)1 << 40);
    for (int it = 0; it < 24; it++) {
        int total = 0;
        for (int q = 0; q < size; q++) {
            cnt[q] = (q + it) % (MAXC + 1);   /* 0 included */
            ccnt[q] = cnt[q];
            dsp[q] = total;
            cdsp[q] = total;
            total += cnt[q];
        }
        bool at_root = rank == root, lf = it % 2 == 1;   /* large-count form on odd calls */
        bool junk_here = it % 4 >= 2;                    /* nonsense instead of NULL off the root */
        const int *acnt = at_root ? cnt : junk_here ? junk : NULL;
        const int *adsp = at_root ? dsp : junk_here ? junk : NULL;
        const MPI_Count *accnt = at_root ? ccnt : junk_here ? cjunk : NULL;
        const MPI_Aint *acdsp = at_root ? cdsp : junk_here ? cdjunk : NULL;
        /* Gatherv: rank q gives cnt[q] ints. */
        for (int i = 0; i < cnt[rank]; i++)
            s[i] = val(rank, it, i);
        for (int i = 0; i < MAXP * MAXC; i++)
            r[i] = -1;
        if (lf)
            MPI_OK(MPI_Gatherv_c(s, cnt[rank], MPI_INT, r, accnt, acdsp, MPI_INT, root, comm));
        else
            MPI_OK(MPI_Gatherv(s, cnt[rank], MPI_INT, r, acnt, adsp, MPI_INT, root, comm));
        if (at_root) {
            for (int q = 0; q < size; q++)
                for (int i = 0; i < cnt[q]; i++)
                    CHECK(r[dsp[q] + i] == val(q, it, i), "it %d gatherv [%d][%d] = %d", it, q, i, r[dsp[q] + i]);
            CHECK(r[total] == -1, "it %d: gatherv wrote past %d", it, total);
        }
        /* Scatterv: the root sends cnt[q] ints to q. */
        for (int i = 0; i < total; i++)
            s[i] = val(rank, it, i);
        for (int i = 0; i < MAXP * MAXC; i++)
            r[i] = -1;
        if (lf)
            MPI_OK(MPI_Scatterv_c(s, accnt, acdsp, MPI_INT, r, cnt[rank], MPI_INT, root, comm));
        else
            MPI_OK(MPI_Scatterv(s, acnt, adsp, MPI_INT, r, cnt[rank], MPI_INT, root, comm));
        for (int i = 0; i < cnt[rank]; i++)
            CHECK(r[i] == val(root, it, dsp[rank] + i), "it %d scatterv [%d] = %d", it, i, r[i]);
        CHECK(r[cnt[rank]] == -1, "it %d: scatterv wrote past %d", it, cnt[rank]);
    }
    free(junk);
    free(cjunk);
    free(cdjunk);
}

/* Alltoallw with two ints to and from every rank, as MPI_INT or (odd
 * calls) as MPI_SHORT, which moves half the bytes: the type array changes
 * in place. */
static void typed_rounds(MPI_Comm comm)
{
    enum { MAXP = 64 };
    unsigned char s[MAXP * 8], r[MAXP * 8 + 8];
    int cnt[MAXP], dsp[MAXP];
    MPI_Datatype ty[MAXP];
    for (int q = 0; q < size; q++) {
        cnt[q] = 2;
        dsp[q] = 8 * q;
    }
    for (int it = 0; it < 12; it++) {
        int bytes = it % 2 ? 4 : 8;   /* per block */
        for (int q = 0; q < size; q++)
            ty[q] = it % 2 ? MPI_SHORT : MPI_INT;
        for (int i = 0; i < MAXP * 8; i++)
            s[i] = (unsigned char)(rank * 7 + it * 3 + i);
        memset(r, 0xee, sizeof r);
        MPI_OK(MPI_Alltoallw(s, cnt, dsp, ty, r, cnt, dsp, ty, comm));
        for (int q = 0; q < size; q++)
            for (int i = 0; i < 8; i++) {
                int want = i < bytes ? (unsigned char)(q * 7 + it * 3 + 8 * rank + i) : 0xee;
                CHECK(r[8 * q + i] == want, "it %d alltoallw from %d byte %d = %#x, want %#x", it, q, i,
                      r[8 * q + i], want);
            }
    }
}

/* A user type freed and another made: a Bcast with the new one moves the
 * new layout (not kept: the result must follow the type). */
static void derived_rounds(MPI_Comm comm)
{
    int b[16];
    for (int it = 0; it < 6; it++) {
        MPI_Datatype t;
        int stride = 1 + it % 3;
        MPI_OK(MPI_Type_vector(4, 1, stride, MPI_INT, &t));
        MPI_OK(MPI_Type_commit(&t));
        for (int i = 0; i < 16; i++)
            b[i] = rank == 0 ? val(0, it, i) : -1;
        MPI_OK(MPI_Bcast(b, 1, t, 0, comm));
        for (int i = 0; i < 16; i++) {
            int want = rank == 0 || (i % stride == 0 && i / stride < 4) ? val(0, it, i) : -1;
            CHECK(b[i] == want, "it %d stride %d: [%d] = %d, want %d", it, stride, i, b[i], want);
        }
        MPI_OK(MPI_Type_free(&t));
    }
}

static void error_between(MPI_Comm comm)
{
    int x = rank, y = -1;
    MPI_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
    int rc = MPI_Bcast(&x, 1, MPI_INT, size + 3, comm);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ROOT, "Bcast with root %d: class %d, want MPI_ERR_ROOT", size + 3, cls);
    for (int it = 0; it < 3; it++) {
        y = -1;
        MPI_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm));
        CHECK(y == size * (size - 1) / 2, "after the error: %d, want %d", y, size * (size - 1) / 2);
    }
}

/* Edges of the graph: every rank to the next; rank 0 also twice to every
 * other rank. dests and sources in the order given to the topology. */
static int graph_dests(int r, int *d)
{
    int n = 0;
    d[n++] = (r + 1) % size;
    if (r == 0)
        for (int k = 0; k < 2; k++)
            for (int q = 1; q < size; q++)
                d[n++] = q;
    return n;
}

static int graph_sources(int r, int *s)
{
    int n = 0;
    s[n++] = (r + size - 1) % size;
    if (r != 0) {
        s[n++] = 0;
        s[n++] = 0;
    }
    return n;
}

/* Elements on the o-th edge from s to d (o counts earlier edges between
 * the two), in round it: the o = 1 edge from 0 to p - 1, rank 0's last,
 * changes with the round's parity. */
static int edge_count(int s, int d, int o, int it)
{
    return 1 + (s + d + o) % 3 + (s == 0 && d == size - 1 && o == 1 ? (it % 2) * 4 : 0);
}

static int edge_val(int s, int d, int o, int it, int e)
{
    return 100000 * (it + 1) + 1000 * s + 100 * d + 10 * o + e;
}

/* The occurrence of v[i] among v[0..i]. */
static int occurrence(const int *v, int i)
{
    int o = 0;
    for (int k = 0; k < i; k++)
        o += v[k] == v[i];
    return o;
}

static void neighbor_rounds(void)
{
    if (size < 2)
        return;
    int dests[130], sources[3];
    int out = graph_dests(rank, dests), in = graph_sources(rank, sources);
    MPI_Comm g;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, sources, MPI_UNWEIGHTED, out, dests,
                                          MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g));
    enum { SLOT = 8 };
    int sc[130], sd[130], rc[3], rd[3], sbuf[130 * SLOT], rbuf[3 * SLOT];
    for (int j = 0; j < out; j++)
        sd[j] = j * SLOT;
    for (int i = 0; i < in; i++)
        rd[i] = i * SLOT;
    for (int it = 0; it < 30; it++) {
        /* The same arrays every round, their contents changed in place. */
        for (int j = 0; j < out; j++) {
            int o = occurrence(dests, j);
            sc[j] = edge_count(rank, dests[j], o, it);
            for (int e = 0; e < sc[j]; e++)
                sbuf[sd[j] + e] = edge_val(rank, dests[j], o, it, e);
        }
        for (int i = 0; i < in; i++)
            rc[i] = edge_count(sources[i], rank, occurrence(sources, i), it);
        for (int k = 0; k < 3 * SLOT; k++)
            rbuf[k] = -1;
        MPI_OK(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, g));
        for (int i = 0; i < in; i++) {
            int o = occurrence(sources, i);
            for (int e = 0; e < SLOT; e++) {
                int want = e < rc[i] ? edge_val(sources[i], rank, o, it, e) : -1;
                CHECK(rbuf[rd[i] + e] == want, "neighbor_alltoallv round %d: block %d (from %d) element %d "
                      "is %d, expected %d", it, i, sources[i], e, rbuf[rd[i] + e], want);
            }
        }
        /* Allgather: the same block to every destination. */
        int mine[2] = {edge_val(rank, 0, 0, it, 0), it}, got[6];
        MPI_OK(MPI_Neighbor_allgather(mine, 2, MPI_INT, got, 2, MPI_INT, g));
        for (int i = 0; i < in; i++)
            CHECK(got[2 * i] == edge_val(sources[i], 0, 0, it, 0) && got[2 * i + 1] == it,
                  "neighbor_allgather round %d: block %d (from %d) is %d %d", it, i, sources[i], got[2 * i],
                  got[2 * i + 1]);
    }
    MPI_OK(MPI_Comm_free(&g));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks (got %d)", size);
    allreduce_rounds(MPI_COMM_WORLD);
    rooted_rounds(MPI_COMM_WORLD);
    exchange_rounds(MPI_COMM_WORLD);
    eviction_rounds(MPI_COMM_WORLD);
    derived_rounds(MPI_COMM_WORLD);
    counts_rounds(MPI_COMM_WORLD);
    rooted_counts_rounds(MPI_COMM_WORLD);
    typed_rounds(MPI_COMM_WORLD);
    neighbor_rounds();
    for (int k = 0; k < 3; k++) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        allreduce_rounds(d);
        exchange_rounds(d);
        MPI_OK(MPI_Comm_free(&d));
    }
    error_between(MPI_COMM_WORLD);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_keep: ok\n");
    MPI_Finalize();
    return 0;
}
