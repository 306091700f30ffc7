/* Neighborhood collectives: Neighbor_allgather(v) and Neighbor_alltoall(v,w),
 * blocking, nonblocking (two outstanding, completed in reverse order) and
 * persistent (started twice, with new data each time), int and large-count
 * (_c) forms, on:
 *   - 2-D Cartesian grids, periodic, non-periodic and mixed (MPI_PROC_NULL
 *     neighbors: their receive blocks must keep the sentinel);
 *   - 1-D periodic rings of 1 and 2 processes (the -1 and +1 neighbors are
 *     the same process: the block sent to -1 must land in that process's +1
 *     block and the other way round);
 *   - a graph whose edges repeat (a multigraph);
 *   - distributed graphs with in- and out-lists that differ, from
 *     Dist_graph_create_adjacent and from Dist_graph_create.
 * Element types: int, a type with holes (int resized to two ints), a
 * vector (two ints of every four), different types per neighbor (w form),
 * counts 0, and blocks above the eager limit. Every int of every receive
 * buffer is compared with what the sender wrote (holes, gaps between
 * blocks and the end of the buffer must keep the sentinel). Then the
 * errors: no topology (MPI_ERR_TOPOLOGY, the message names the call), an
 * intercommunicator (MPI_ERR_COMM), MPI_IN_PLACE (MPI_ERR_BUFFER), a
 * negative count (MPI_ERR_COUNT). */
#include <stdbool.h>

#include "mpitest.h"

#define MAXD 40           /* neighbors of one process, at most */
#define SENT (-7)         /* what untouched ints hold */
#define HOLE (-1)         /* what send buffers hold where no data is */

enum { OP_ALLGATHER, OP_ALLGATHERV, OP_ALLTOALL, OP_ALLTOALLV, OP_ALLTOALLW, NOPS };
static const char *op_names[NOPS] = {"allgather", "allgatherv", "alltoall", "alltoallv", "alltoallw"};
enum { ST_BLOCKING, ST_NONBLOCKING, ST_PERSISTENT };
static const char *style_names[] = {"blocking", "nonblocking", "persistent"};

/* An element type seen as data ints: element e's k-th data int lies at
 * int e * ext + off[k] of the block. */
typedef struct etype {
    MPI_Datatype t;
    int ext, nints, off[2];
    const char *name;
} etype_t;
enum { ET_INT, ET_STRIDED, ET_VECTOR, NETYPES };
static etype_t ets[NETYPES];

/* A topology as the test sees it: its lists computed by the test, and for
 * each receive block the sender's block that must land there. */
typedef struct topo {
    MPI_Comm comm;
    char name[64];
    int me, p;
    int in, out;
    int src[MAXD], dst[MAXD];
    int from[MAXD];   /* receive block i: the sender's block index; -1: MPI_PROC_NULL */
} topo_t;

static char cur[200];  /* the case being run, for failure messages */

/* Data int q of block j of sender s, in round r (persistent: 1, 2). */
static int val(int s, int j, int q, int r)
{
    return 1 + r * 100000000 + s * 1000000 + j * 10000 + q;
}

/* ---------------------------------------------------------------- topologies */

/* The k-th occurrence of x in v[0..n), or -1. */
static int nth(const int *v, int n, int x, int k)
{
    for (int i = 0; i < n; i++)
        if (v[i] == x && k-- == 0)
            return i;
    return -1;
}

/* Graphs: the k-th message from s to me fills my k-th receive block from s.
 * Everyone's destination lists are gathered to find which block that is. */
static void match_by_order(topo_t *t)
{
    int *all = malloc((size_t)t->p * (MAXD + 1) * sizeof(int));
    int mine[MAXD + 1];
    mine[0] = t->out;
    memcpy(mine + 1, t->dst, sizeof t->dst);
    MPI_OK(MPI_Allgather(mine, MAXD + 1, MPI_INT, all, MAXD + 1, MPI_INT, t->comm));
    for (int i = 0; i < t->in; i++) {
        int s = t->src[i], k = 0;
        for (int h = 0; h < i; h++)
            k += t->src[h] == s;
        const int *sd = all + (size_t)s * (MAXD + 1);
        t->from[i] = nth(sd + 1, sd[0], t->me, k);
        CHECK(t->from[i] >= 0, "%s: rank %d lists %d as a source %d times, which does not send that often",
              t->name, t->me, s, k + 1);
    }
    free(all);
}

static void cart_topo(topo_t *t, MPI_Comm base, int ndims, const int dims[], const int periods[],
                      const char *name)
{
    MPI_OK(MPI_Cart_create(base, ndims, dims, periods, 0, &t->comm));
    MPI_OK(MPI_Comm_rank(t->comm, &t->me));
    MPI_OK(MPI_Comm_size(t->comm, &t->p));
    snprintf(t->name, sizeof t->name, "%s (%d", name, dims[0]);
    for (int d = 1; d < ndims; d++)
        snprintf(t->name + strlen(t->name), sizeof t->name - strlen(t->name), "x%d", dims[d]);
    snprintf(t->name + strlen(t->name), sizeof t->name - strlen(t->name), ")");
    /* Row-major coordinates, by hand. */
    int coords[8], r = t->me;
    for (int d = ndims - 1; d >= 0; d--) {
        coords[d] = r % dims[d];
        r /= dims[d];
    }
    t->in = t->out = 2 * ndims;
    for (int d = 0; d < ndims; d++) {
        for (int s = 0; s < 2; s++) {
            int x = coords[d] + (s ? 1 : -1), nb;
            if (periods[d])
                x = (x + dims[d]) % dims[d];
            if (x < 0 || x >= dims[d]) {
                nb = MPI_PROC_NULL;
            } else {
                nb = 0;
                for (int e = 0; e < ndims; e++)
                    nb = nb * dims[e] + (e == d ? x : coords[e]);
            }
            t->src[2 * d + s] = t->dst[2 * d + s] = nb;
            /* The block sent to the -1 neighbor is its +1 block, and back. */
            t->from[2 * d + s] = nb == MPI_PROC_NULL ? -1 : 2 * d + (1 - s);
        }
        int lo, hi;
        MPI_OK(MPI_Cart_shift(t->comm, d, 1, &lo, &hi));
        CHECK(lo == t->src[2 * d] && hi == t->src[2 * d + 1], "%s: Cart_shift(%d) gives %d %d, expected %d %d",
              t->name, d, lo, hi, t->src[2 * d], t->src[2 * d + 1]);
    }
}

/* Node r: r+1, r-1 and r's partner r^1 (when there is one): the partner
 * appears twice (three times with 2 nodes, and a lone node lists itself
 * twice): a symmetric multigraph. */
static int graph_edges(int r, int p, int *e)
{
    int n = 0;
    e[n++] = (r + 1) % p;
    e[n++] = (r - 1 + p) % p;
    if ((r ^ 1) < p)
        e[n++] = r ^ 1;
    return n;
}

static void graph_topo(topo_t *t, int p)
{
    int *index = malloc((size_t)p * sizeof(int)), *edges = malloc((size_t)p * 3 * sizeof(int));
    int ne = 0;
    for (int r = 0; r < p; r++) {
        ne += graph_edges(r, p, edges + ne);
        index[r] = ne;
    }
    MPI_OK(MPI_Graph_create(MPI_COMM_WORLD, p, index, edges, 0, &t->comm));
    free(index);
    free(edges);
    MPI_OK(MPI_Comm_rank(t->comm, &t->me));
    t->p = p;
    snprintf(t->name, sizeof t->name, "graph (ring + partner)");
    t->in = t->out = graph_edges(t->me, p, t->src);
    memcpy(t->dst, t->src, sizeof t->src);
    int n = -1, got[MAXD];
    MPI_OK(MPI_Graph_neighbors_count(t->comm, t->me, &n));
    CHECK_INT(n, t->out);
    MPI_OK(MPI_Graph_neighbors(t->comm, t->me, MAXD, got));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == t->dst[i], "Graph_neighbors[%d] = %d, expected %d", i, got[i], t->dst[i]);
    match_by_order(t);
}

/* Out: r+1, r+2, and rank 0 also to everyone; in: accordingly. */
static void dist_adjacent_topo(topo_t *t, int me, int p)
{
    t->me = me;
    t->p = p;
    t->out = t->in = 0;
    t->dst[t->out++] = (me + 1) % p;
    t->dst[t->out++] = (me + 2) % p;
    if (me == 0)
        for (int q = 0; q < p; q++)
            t->dst[t->out++] = q;
    t->src[t->in++] = (me - 1 + p) % p;
    t->src[t->in++] = (me - 2 + 2 * p) % p;
    t->src[t->in++] = 0;
    int w[MAXD];
    for (int i = 0; i < MAXD; i++)
        w[i] = 1;
    MPI_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, t->in, t->src, w, t->out, t->dst, w, MPI_INFO_NULL,
                                          0, &t->comm));
    snprintf(t->name, sizeof t->name, "dist graph, adjacent (in %d, out %d)", t->in, t->out);
    int in, out, weighted, s[MAXD], d[MAXD], sw[MAXD], dw[MAXD];
    MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &in, &out, &weighted));
    CHECK(in == t->in && out == t->out, "degrees %d %d, expected %d %d", in, out, t->in, t->out);
    MPI_OK(MPI_Dist_graph_neighbors(t->comm, MAXD, s, sw, MAXD, d, dw));
    for (int i = 0; i < in; i++)
        CHECK_INT(s[i], t->src[i]);
    for (int i = 0; i < out; i++)
        CHECK_INT(d[i], t->dst[i]);
    match_by_order(t);
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Each rank declares the edges r -> r+1 and r -> r+3; rank 0 also declares
 * p-1 -> 0 for someone else. The order of the lists is the library's:
 * read back, compared as multisets. */
static void dist_create_topo(topo_t *t, int me, int p)
{
    int sources[2] = {me, p - 1}, degrees[2] = {2, 1}, dests[3] = {(me + 1) % p, (me + 3) % p, 0};
    /* (Through a variable: GCC takes the ABI's small constant for a
     * pointer to nothing and warns about reading it.) */
    int *volatile unweighted = MPI_UNWEIGHTED;
    MPI_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? 2 : 1, sources, degrees, dests, unweighted,
                                 MPI_INFO_NULL, 0, &t->comm));
    t->me = me;
    t->p = p;
    int weighted;
    MPI_OK(MPI_Dist_graph_neighbors_count(t->comm, &t->in, &t->out, &weighted));
    CHECK(t->in <= MAXD && t->out <= MAXD, "degrees %d %d", t->in, t->out);
    MPI_OK(MPI_Dist_graph_neighbors(t->comm, MAXD, t->src, unweighted, MAXD, t->dst, unweighted));
    int eo[4], ei[4], no = 0, ni = 0;
    eo[no++] = (me + 1) % p;
    eo[no++] = (me + 3) % p;
    if (me == p - 1)
        eo[no++] = 0;
    ei[ni++] = (me - 1 + p) % p;
    ei[ni++] = (me - 3 + 3 * p) % p;
    if (me == 0)
        ei[ni++] = p - 1;
    CHECK(t->in == ni && t->out == no, "degrees %d %d, expected %d %d", t->in, t->out, ni, no);
    int so[MAXD], si[MAXD];
    memcpy(so, t->dst, sizeof so);
    memcpy(si, t->src, sizeof si);
    qsort(so, (size_t)no, sizeof(int), cmp_int);
    qsort(eo, (size_t)no, sizeof(int), cmp_int);
    qsort(si, (size_t)ni, sizeof(int), cmp_int);
    qsort(ei, (size_t)ni, sizeof(int), cmp_int);
    for (int i = 0; i < no; i++)
        CHECK(so[i] == eo[i], "destinations differ at %d: %d, expected %d", i, so[i], eo[i]);
    for (int i = 0; i < ni; i++)
        CHECK(si[i] == ei[i], "sources differ at %d: %d, expected %d", i, si[i], ei[i]);
    snprintf(t->name, sizeof t->name, "dist graph, created (in %d, out %d)", t->in, t->out);
    match_by_order(t);
}

/* ---------------------------------------------------------------- one call */

/* The layout of one call at this rank: blocks in elements of their types,
 * starts in ints from the buffer's start. */
typedef struct layout {
    int op, n;
    const etype_t *et;             /* the element type (not the w form) */
    int sc[MAXD], ss[MAXD];        /* send block j: count, start */
    const etype_t *se[MAXD];
    int rc[MAXD], rs[MAXD];        /* receive block i */
    const etype_t *re[MAXD];
    int slen, rlen;                /* buffer sizes in ints */
} layout_t;

/* v and w counts: of block j of sender s (0 for some small ones); n = 0:
 * all 0; large n: about n. */
static int cnt_v(const layout_t *l, int s, int j)
{
    return l->n == 0 ? 0 : l->n <= 16 ? (s + 2 * j + l->n) % 4 : l->n - (s + 2 * j) % 4;
}
static int cnt_g(const layout_t *l, int s)
{
    return l->n == 0 ? 0 : l->n <= 16 ? 1 + (s + l->n) % 3 : l->n - s % 3;
}

static void make_layout(const topo_t *t, layout_t *l, int op, int n, int et)
{
    memset(l, 0, sizeof *l);
    l->op = op;
    l->n = n;
    l->et = &ets[et];
    int nsb = op == OP_ALLGATHER || op == OP_ALLGATHERV ? 1 : t->out;   /* send blocks in the buffer */
    for (int j = 0; j < t->out; j++) {
        l->se[j] = op == OP_ALLTOALLW ? &ets[j % 2 ? ET_STRIDED : ET_INT] : l->et;
        l->sc[j] = op == OP_ALLTOALLV || op == OP_ALLTOALLW ? cnt_v(l, t->me, j)
                   : op == OP_ALLGATHERV                   ? cnt_g(l, t->me)
                                                           : n;
    }
    for (int i = 0; i < t->in; i++) {
        int s = t->src[i], f = t->from[i];
        l->re[i] = op == OP_ALLTOALLW ? &ets[i % 2 ? ET_INT : ET_STRIDED] : l->et;
        if (op == OP_ALLGATHER || op == OP_ALLTOALL)
            l->rc[i] = n;
        else if (f < 0)
            l->rc[i] = 2;   /* a block that must stay untouched */
        else
            l->rc[i] = op == OP_ALLGATHERV ? cnt_g(l, s) : cnt_v(l, s, f);
    }
    /* Starts: plain forms back to back; v forms in reverse order with a
     * one-element gap (displacements in extents); w form forward with a
     * three-int gap (displacements in bytes). */
    int pos = 0;
    for (int jj = 0; jj < nsb; jj++) {
        int j = op == OP_ALLTOALLV ? nsb - 1 - jj : jj;
        l->ss[j] = pos;
        pos += l->sc[j] * l->se[j]->ext + (op == OP_ALLTOALLV ? l->et->ext : op == OP_ALLTOALLW ? 3 : 0);
    }
    if (nsb == 1)
        for (int j = 1; j < t->out; j++)
            l->ss[j] = 0;
    l->slen = pos + 1;
    pos = 0;
    for (int ii = 0; ii < t->in; ii++) {
        bool v = op == OP_ALLGATHERV || op == OP_ALLTOALLV;
        int i = v ? t->in - 1 - ii : ii;
        l->rs[i] = pos;
        pos += l->rc[i] * l->re[i]->ext + (v ? l->et->ext : op == OP_ALLTOALLW ? 3 : 0);
    }
    l->rlen = pos + 2;
}

typedef struct bufs {
    int *sbuf, *rbuf, *exp;
    int round;
} bufs_t;

static void fill(const topo_t *t, const layout_t *l, bufs_t *b, int round)
{
    b->round = round;
    for (int k = 0; k < l->slen; k++)
        b->sbuf[k] = HOLE;
    int nsb = l->op == OP_ALLGATHER || l->op == OP_ALLGATHERV ? (t->out ? 1 : 0) : t->out;
    for (int j = 0; j < nsb; j++) {
        const etype_t *e = l->se[j];
        for (int q = 0; q < l->sc[j] * e->nints; q++)
            b->sbuf[l->ss[j] + q / e->nints * e->ext + e->off[q % e->nints]] = val(t->me, j, q, round);
    }
    for (int k = 0; k < l->rlen; k++)
        b->rbuf[k] = b->exp[k] = SENT;
    for (int i = 0; i < t->in; i++) {
        if (t->from[i] < 0)
            continue;
        const etype_t *e = l->re[i];
        int jv = l->op == OP_ALLGATHER || l->op == OP_ALLGATHERV ? 0 : t->from[i];
        for (int q = 0; q < l->rc[i] * e->nints; q++)
            b->exp[l->rs[i] + q / e->nints * e->ext + e->off[q % e->nints]] = val(t->src[i], jv, q, round);
    }
}

static void check(const layout_t *l, const bufs_t *b)
{
    for (int k = 0; k < l->rlen; k++)
        if (b->rbuf[k] != b->exp[k])
            MT_FAIL("%s, round %d: recvbuf[%d] = %d, expected %d", cur, b->round, k, b->rbuf[k], b->exp[k]);
}

/* The call's arguments in both widths. */
typedef struct args {
    int sci[MAXD], rci[MAXD], sdi[MAXD], rdi[MAXD];
    MPI_Count scc[MAXD], rcc[MAXD];
    MPI_Aint sda[MAXD], rda[MAXD];
    MPI_Datatype st[MAXD], rt[MAXD];
} args_t;

static void make_args(const topo_t *t, const layout_t *l, args_t *a)
{
    for (int j = 0; j < t->out; j++) {
        a->sci[j] = l->sc[j];
        a->scc[j] = l->sc[j];
        a->st[j] = l->se[j]->t;
        bool w = l->op == OP_ALLTOALLW;
        a->sdi[j] = w ? 0 : l->ss[j] / l->et->ext;
        a->sda[j] = w ? (MPI_Aint)l->ss[j] * (MPI_Aint)sizeof(int) : a->sdi[j];
    }
    for (int i = 0; i < t->in; i++) {
        a->rci[i] = l->rc[i];
        a->rcc[i] = l->rc[i];
        a->rt[i] = l->re[i]->t;
        bool w = l->op == OP_ALLTOALLW;
        a->rdi[i] = w ? 0 : l->rs[i] / l->et->ext;
        a->rda[i] = w ? (MPI_Aint)l->rs[i] * (MPI_Aint)sizeof(int) : a->rdi[i];
    }
}

/* Calls the collective in one style and width: MPI_Neighbor_X,
 * MPI_Ineighbor_X or MPI_Neighbor_X_init, int or _c. */
static int call(const layout_t *l, const args_t *a, bufs_t *b, int style, int wide, MPI_Comm comm,
                MPI_Request *req)
{
    MPI_Datatype et = l->et->t;
    int n = l->n;
    const void *s = b->sbuf;
    void *r = b->rbuf;
    MPI_Info info = MPI_INFO_NULL;
#define STYLES(F, ...)                                                                         \
    (style == ST_BLOCKING      ? MPI_Neighbor_##F(__VA_ARGS__, comm)                        \
     : style == ST_NONBLOCKING ? MPI_Ineighbor_##F(__VA_ARGS__, comm, req)                  \
                               : MPI_Neighbor_##F##_init(__VA_ARGS__, comm, info, req))
    switch (l->op) {
    case OP_ALLGATHER:
        if (wide) {
            MPI_Count nc = n;
            return style == ST_BLOCKING      ? MPI_Neighbor_allgather_c(s, nc, et, r, nc, et, comm)
                   : style == ST_NONBLOCKING ? MPI_Ineighbor_allgather_c(s, nc, et, r, nc, et, comm, req)
                                             : MPI_Neighbor_allgather_init_c(s, nc, et, r, nc, et, comm, info, req);
        }
        return STYLES(allgather, s, n, et, r, n, et);
    case OP_ALLTOALL:
        if (wide) {
            MPI_Count nc = n;
            return style == ST_BLOCKING      ? MPI_Neighbor_alltoall_c(s, nc, et, r, nc, et, comm)
                   : style == ST_NONBLOCKING ? MPI_Ineighbor_alltoall_c(s, nc, et, r, nc, et, comm, req)
                                             : MPI_Neighbor_alltoall_init_c(s, nc, et, r, nc, et, comm, info, req);
        }
        return STYLES(alltoall, s, n, et, r, n, et);
    case OP_ALLGATHERV:
        if (wide)
            return style == ST_BLOCKING
                       ? MPI_Neighbor_allgatherv_c(s, l->sc[0], et, r, a->rcc, a->rda, et, comm)
                   : style == ST_NONBLOCKING
                       ? MPI_Ineighbor_allgatherv_c(s, l->sc[0], et, r, a->rcc, a->rda, et, comm, req)
                       : MPI_Neighbor_allgatherv_init_c(s, l->sc[0], et, r, a->rcc, a->rda, et, comm, info, req);
        return STYLES(allgatherv, s, l->sc[0], et, r, a->rci, a->rdi, et);
    case OP_ALLTOALLV:
        if (wide)
            return style == ST_BLOCKING
                       ? MPI_Neighbor_alltoallv_c(s, a->scc, a->sda, et, r, a->rcc, a->rda, et, comm)
                   : style == ST_NONBLOCKING
                       ? MPI_Ineighbor_alltoallv_c(s, a->scc, a->sda, et, r, a->rcc, a->rda, et, comm, req)
                       : MPI_Neighbor_alltoallv_init_c(s, a->scc, a->sda, et, r, a->rcc, a->rda, et, comm, info,
                                                       req);
        return STYLES(alltoallv, s, a->sci, a->sdi, et, r, a->rci, a->rdi, et);
    default:
        if (wide)
            return style == ST_BLOCKING
                       ? MPI_Neighbor_alltoallw_c(s, a->scc, a->sda, a->st, r, a->rcc, a->rda, a->rt, comm)
                   : style == ST_NONBLOCKING
                       ? MPI_Ineighbor_alltoallw_c(s, a->scc, a->sda, a->st, r, a->rcc, a->rda, a->rt, comm, req)
                       : MPI_Neighbor_alltoallw_init_c(s, a->scc, a->sda, a->st, r, a->rcc, a->rda, a->rt, comm,
                                                       info, req);
        return STYLES(alltoallw, s, a->sci, a->sda, a->st, r, a->rci, a->rda, a->rt);
    }
#undef STYLES
}

static void bufs_alloc(const layout_t *l, bufs_t *b)
{
    b->sbuf = malloc((size_t)l->slen * sizeof(int));
    b->rbuf = malloc((size_t)l->rlen * sizeof(int));
    b->exp = malloc((size_t)l->rlen * sizeof(int));
}

static void bufs_free(bufs_t *b)
{
    free(b->sbuf);
    free(b->rbuf);
    free(b->exp);
}

static void run_case(const topo_t *t, int op, int n, int et, int style, int wide)
{
    layout_t l;
    args_t a;
    bufs_t b[2];
    make_layout(t, &l, op, n, et);
    make_args(t, &l, &a);
    snprintf(cur, sizeof cur, "%s: neighbor_%s%s %s, %s, n=%d", t->name, op_names[op], wide ? "_c" : "",
             style_names[style], op == OP_ALLTOALLW ? "int/strided per block" : ets[et].name, n);
    bufs_alloc(&l, &b[0]);
    bufs_alloc(&l, &b[1]);
    MPI_Request req[2];
    int rc;
    switch (style) {
    case ST_BLOCKING:
        fill(t, &l, &b[0], 1);
        rc = call(&l, &a, &b[0], style, wide, t->comm, NULL);
        CHECK(rc == MPI_SUCCESS, "%s: returned %d", cur, rc);
        check(&l, &b[0]);
        break;
    case ST_NONBLOCKING:
        /* Two at once, on different buffers, completed in reverse order. */
        for (int k = 0; k < 2; k++) {
            fill(t, &l, &b[k], k + 1);
            rc = call(&l, &a, &b[k], style, wide, t->comm, &req[k]);
            CHECK(rc == MPI_SUCCESS, "%s: returned %d", cur, rc);
        }
        MPI_OK(MPI_Wait(&req[1], MPI_STATUS_IGNORE));
        MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        check(&l, &b[0]);
        check(&l, &b[1]);
        break;
    default:
        /* Started twice: the second start sends what the buffer holds then. */
        fill(t, &l, &b[0], 1);
        rc = call(&l, &a, &b[0], style, wide, t->comm, &req[0]);
        CHECK(rc == MPI_SUCCESS, "%s: returned %d", cur, rc);
        for (int k = 1; k <= 2; k++) {
            fill(t, &l, &b[0], k);
            MPI_OK(MPI_Start(&req[0]));
            MPI_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
            check(&l, &b[0]);
        }
        MPI_OK(MPI_Request_free(&req[0]));
        break;
    }
    bufs_free(&b[0]);
    bufs_free(&b[1]);
}

static void run_topo(topo_t *t)
{
    for (int op = 0; op < NOPS; op++) {
        for (int style = ST_BLOCKING; style <= ST_PERSISTENT; style++)
            for (int wide = 0; wide < 2; wide++)
                run_case(t, op, 3, ET_INT, style, wide);
        run_case(t, op, 0, ET_INT, ST_BLOCKING, 0);
        run_case(t, op, 0, ET_INT, ST_PERSISTENT, 1);
        if (op != OP_ALLTOALLW) {
            run_case(t, op, 2, ET_VECTOR, ST_BLOCKING, 1);
            run_case(t, op, 3, ET_STRIDED, ST_NONBLOCKING, 0);
        }
    }
    /* Blocks above the eager limit (rendezvous), duplicates included. */
    run_case(t, OP_ALLTOALL, 5000, ET_INT, ST_NONBLOCKING, 0);
    run_case(t, OP_ALLTOALLV, 5000, ET_STRIDED, ST_BLOCKING, 1);
}

/* ---------------------------------------------------------------- errors */

static void check_fails(int rc, int cls, const char *what, const char *name)
{
    int c = -1, len = 0;
    char msg[MPI_MAX_ERROR_STRING];
    CHECK(rc != MPI_SUCCESS, "%s succeeded; expected error class %d", what, cls);
    MPI_OK(MPI_Error_class(rc, &c));
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(c == cls, "%s: error class %d, expected %d (%s)", what, c, cls, msg);
    CHECK(!name || strstr(msg, name), "%s: the message does not name %s: %s", what, name, msg);
}

static void test_errors(int wsize)
{
    int sb[MAXD] = {0}, rb[MAXD] = {0}, cnt[MAXD] = {0};
    MPI_Aint dsp[MAXD] = {0};
    MPI_Datatype ty[MAXD];
    MPI_Request req = MPI_REQUEST_NULL;
    for (int i = 0; i < MAXD; i++)
        ty[i] = MPI_INT;
    MPI_Comm plain;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &plain));
    MPI_OK(MPI_Comm_set_errhandler(plain, MPI_ERRORS_RETURN));
    check_fails(MPI_Neighbor_allgather(sb, 1, MPI_INT, rb, 1, MPI_INT, plain), MPI_ERR_TOPOLOGY,
                "Neighbor_allgather without topology", "MPI_Neighbor_allgather");
    check_fails(MPI_Neighbor_allgatherv(sb, 1, MPI_INT, rb, cnt, cnt, MPI_INT, plain), MPI_ERR_TOPOLOGY,
                "Neighbor_allgatherv without topology", "MPI_Neighbor_allgatherv");
    check_fails(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, plain), MPI_ERR_TOPOLOGY,
                "Neighbor_alltoall without topology", "MPI_Neighbor_alltoall");
    check_fails(MPI_Neighbor_alltoallv(sb, cnt, cnt, MPI_INT, rb, cnt, cnt, MPI_INT, plain), MPI_ERR_TOPOLOGY,
                "Neighbor_alltoallv without topology", "MPI_Neighbor_alltoallv");
    check_fails(MPI_Neighbor_alltoallw(sb, cnt, dsp, ty, rb, cnt, dsp, ty, plain), MPI_ERR_TOPOLOGY,
                "Neighbor_alltoallw without topology", "MPI_Neighbor_alltoallw");
    check_fails(MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, plain, &req), MPI_ERR_TOPOLOGY,
                "Ineighbor_alltoall without topology", "MPI_Ineighbor_alltoall");
    check_fails(MPI_Neighbor_allgather_init_c(sb, 1, MPI_INT, rb, 1, MPI_INT, plain, MPI_INFO_NULL, &req),
                MPI_ERR_TOPOLOGY, "Neighbor_allgather_init_c without topology", "MPI_Neighbor_allgather_init_c");
    CHECK(req == MPI_REQUEST_NULL, "a failed call made a request");

    /* The communicator still works. */
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, plain));
    CHECK_INT(sum, wsize);

    int dims[1] = {wsize}, periods[1] = {1};
    MPI_Comm cart;
    MPI_OK(MPI_Cart_create(plain, 1, dims, periods, 0, &cart));
    MPI_OK(MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN));
    check_fails(MPI_Neighbor_alltoall(MPI_IN_PLACE, 1, MPI_INT, rb, 1, MPI_INT, cart), MPI_ERR_BUFFER,
                "Neighbor_alltoall in place", "MPI_IN_PLACE");
    check_fails(MPI_Neighbor_allgather(sb, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, cart), MPI_ERR_BUFFER,
                "Neighbor_allgather into MPI_IN_PLACE", NULL);
    check_fails(MPI_Neighbor_alltoall(sb, -1, MPI_INT, rb, 1, MPI_INT, cart), MPI_ERR_COUNT,
                "Neighbor_alltoall with a negative count", "sendcount");
    cnt[1] = -2;
    check_fails(MPI_Neighbor_alltoallv(sb, cnt, cnt, MPI_INT, rb, cnt, cnt, MPI_INT, cart), MPI_ERR_COUNT,
                "Neighbor_alltoallv with a negative count", "sendcounts[1]");
    cnt[1] = 0;
    /* ... and works after the errors. */
    sb[0] = 10 * wsize;
    sb[1] = 20 * wsize;
    MPI_OK(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart));
    CHECK(rb[0] == 20 * wsize && rb[1] == 10 * wsize, "after the errors: %d %d", rb[0], rb[1]);
    MPI_OK(MPI_Comm_free(&cart));

    if (wsize >= 2) {
        int wrank;
        MPI_OK(MPI_Comm_rank(plain, &wrank));
        int color = wrank < wsize / 2;
        MPI_Comm half, inter;
        MPI_OK(MPI_Comm_split(plain, color, wrank, &half));
        MPI_OK(MPI_Intercomm_create(half, 0, plain, color ? wsize / 2 : 0, 7, &inter));
        MPI_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        check_fails(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, inter), MPI_ERR_COMM,
                    "Neighbor_alltoall on an intercommunicator", "MPI_Neighbor_alltoall");
        check_fails(MPI_Ineighbor_allgatherv(sb, 1, MPI_INT, rb, cnt, cnt, MPI_INT, inter, &req), MPI_ERR_COMM,
                    "Ineighbor_allgatherv on an intercommunicator", "MPI_Ineighbor_allgatherv");
        MPI_OK(MPI_Comm_free(&inter));
        MPI_OK(MPI_Comm_free(&half));
    }
    MPI_OK(MPI_Comm_free(&plain));
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    int wrank, wsize;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));

    MPI_Datatype strided, vec;
    MPI_OK(MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided));
    MPI_OK(MPI_Type_commit(&strided));
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &vec));   /* ints 0 and 3; extent 4 ints */
    MPI_OK(MPI_Type_commit(&vec));
    MPI_Datatype vec4;
    MPI_OK(MPI_Type_create_resized(vec, 0, 5 * sizeof(int), &vec4));   /* and a hole after it */
    MPI_OK(MPI_Type_commit(&vec4));
    ets[ET_INT] = (etype_t){MPI_INT, 1, 1, {0, 0}, "int"};
    ets[ET_STRIDED] = (etype_t){strided, 2, 1, {0, 0}, "strided int"};
    ets[ET_VECTOR] = (etype_t){vec4, 5, 2, {0, 3}, "vector"};

    int dims[2] = {0, 0};
    MPI_OK(MPI_Dims_create(wsize, 2, dims));
    static const int pers[3][2] = {{1, 1}, {0, 0}, {1, 0}};
    static const char *pnames[3] = {"2-D Cartesian, periodic", "2-D Cartesian, non-periodic",
                                    "2-D Cartesian, periodic x non-periodic"};
    for (int k = 0; k < 3; k++) {
        topo_t t;
        cart_topo(&t, MPI_COMM_WORLD, 2, dims, pers[k], pnames[k]);
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
    }
    {
        /* 1-D periodic rings of one process and of two (pairs of world ranks). */
        topo_t t;
        int one[1] = {1}, per[1] = {1};
        cart_topo(&t, MPI_COMM_SELF, 1, one, per, "1-D Cartesian, periodic");
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
        MPI_Comm pair;
        int psize;
        MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank / 2, wrank, &pair));
        MPI_OK(MPI_Comm_size(pair, &psize));
        int d1[1] = {psize};
        cart_topo(&t, pair, 1, d1, per, "1-D Cartesian, periodic");
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
        MPI_OK(MPI_Comm_free(&pair));
    }
    {
        topo_t t;
        graph_topo(&t, wsize);
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
        dist_adjacent_topo(&t, wrank, wsize);
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
        dist_create_topo(&t, wrank, wsize);
        run_topo(&t);
        MPI_OK(MPI_Comm_free(&t.comm));
    }
    test_errors(wsize);

    MPI_OK(MPI_Type_free(&strided));
    MPI_OK(MPI_Type_free(&vec));
    MPI_OK(MPI_Type_free(&vec4));
    MPI_OK(MPI_Finalize());
    if (wrank == 0)
        printf("coll_neighbor: ok\n");
    return 0;
}
