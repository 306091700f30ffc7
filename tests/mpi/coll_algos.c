/* Every collective, checked element by element, under one forced algorithm.
 *
 *   coll_algos COLL ALGORITHM [quick|full]
 *
 * sets HALO_<COLL>_ALGORITHM=ALGORITHM before MPI_Init (and checks that the
 * library took it, unless ALGORITHM is "auto"), then runs COLL (or "all"):
 * - on MPI_COMM_WORLD, a split by rank parity and a copy with the ranks
 *   reversed;
 * - counts 0, 1, 7, about 16 KiB (the eager limit), a large one (about
 *   1 MiB moved in all) and, for the collectives of blocks, blocks of
 *   48 KiB (48 KiB / p for the Alltoalls);
 * - datatypes MPI_INT, MPI_DOUBLE, a vector with holes (the holes, and the
 *   gaps between blocks, must come out untouched), and send and receive
 *   types that differ but have the same signature;
 * - reductions with MPI_SUM (int, double), MPI_MAX on the holey type,
 *   MPI_MINLOC, a commutative user operation and a non-commutative one
 *   (composition of affine maps x -> a x + b, on a pair type and on a pair
 *   type with a hole), whose result must be the reduction in rank order;
 * - MPI_IN_PLACE wherever the standard allows it, every root (in full
 *   mode) or three of them;
 * - blocking, nonblocking (several outstanding on different communicators,
 *   completed in varied orders) and persistent (started three times with
 *   new data; on the "reversed" communicator, which asserts
 *   mpi_assert_strict_persistent_collective_ordering, numbered at each
 *   start, elsewhere matched by their init calls).
 * The expected result is computed locally from the generators, in rank
 * order, and compared with the whole receive buffer, holes included. */
#include <stdbool.h>
#include <stdint.h>

#include "mpitest.h"

static int wrank, wsize, full;
static long njobs, ncalls;   /* checks made, collective calls made */

/* ---------------------------------------------------------------- datatypes */

enum { TY_INT, TY_DOUBLE, TY_HOLEY, TY_PAIR, TY_HPAIR, TY_2INT, TY_GAP, NTY };
typedef struct {
    MPI_Datatype t;
    int per;        /* data items (ints or doubles) per element */
    int off[2];     /* their byte offsets */
    int isz;        /* bytes per item */
    MPI_Aint ext;
    const char *name;
} ty_t;
static ty_t TY[NTY];

static void types_init(void)
{
    MPI_Datatype v, h, c, hp;
    TY[TY_INT] = (ty_t){MPI_INT, 1, {0, 0}, 4, 4, "int"};
    TY[TY_DOUBLE] = (ty_t){MPI_DOUBLE, 1, {0, 0}, 8, 8, "double"};
    MPI_OK(MPI_Type_vector(2, 1, 3, MPI_INT, &v));
    MPI_OK(MPI_Type_create_resized(v, 0, 20, &h));
    MPI_OK(MPI_Type_commit(&h));
    MPI_OK(MPI_Type_free(&v));
    TY[TY_HOLEY] = (ty_t){h, 2, {0, 12}, 4, 20, "holey"};
    MPI_OK(MPI_Type_contiguous(2, MPI_INT, &c));
    MPI_OK(MPI_Type_commit(&c));
    TY[TY_PAIR] = (ty_t){c, 2, {0, 4}, 4, 8, "pair"};
    MPI_OK(MPI_Type_create_resized(c, 0, 12, &hp));
    MPI_OK(MPI_Type_commit(&hp));
    TY[TY_HPAIR] = (ty_t){hp, 2, {0, 4}, 4, 12, "hpair"};
    TY[TY_2INT] = (ty_t){MPI_2INT, 2, {0, 4}, 4, 8, "2int"};
    /* Two ints after a 4-byte gap, extent 12: one element is one run of
     * bytes that does not start at the buffer's address. */
    MPI_Aint four = 4;
    MPI_Datatype g, gr;
    MPI_OK(MPI_Type_create_hindexed_block(1, 2, &four, MPI_INT, &g));
    MPI_OK(MPI_Type_create_resized(g, 0, 12, &gr));
    MPI_OK(MPI_Type_commit(&gr));
    MPI_OK(MPI_Type_free(&g));
    TY[TY_GAP] = (ty_t){gr, 2, {4, 8}, 4, 12, "gap"};
}

static char *item_at(int ty, void *buf, long idx)
{
    const ty_t *t = &TY[ty];
    return (char *)buf + (idx / t->per) * t->ext + t->off[idx % t->per];
}

static void put(int ty, void *buf, long idx, long v)
{
    char *p = item_at(ty, buf, idx);
    if (TY[ty].isz == 8) {
        double d = (double)v;
        memcpy(p, &d, 8);
    } else {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
    }
}

/* The byte that fills every buffer's unused bytes and holes: it differs
 * from rank to rank, so bytes of another rank's holes that an algorithm
 * copies into a receive buffer show. */
static int sentinel = 0xA5;

/* A buffer of n elements of ty, filled with the sentinel. */
static void *alloc_buf(long bytes)
{
    void *b = malloc(bytes > 0 ? (size_t)bytes : 1);
    memset(b, sentinel, bytes > 0 ? (size_t)bytes : 1);
    return b;
}

/* got must equal the expected image byte for byte. */
static void compare(const void *got, const void *exp, long bytes, const char *what)
{
    if (bytes <= 0 || !memcmp(got, exp, (size_t)bytes))
        return;
    long i = 0;
    while (((const unsigned char *)got)[i] == ((const unsigned char *)exp)[i])
        i++;
    long w = i & ~3L;
    int32_t g, e;
    memcpy(&g, (const char *)got + w, 4);
    memcpy(&e, (const char *)exp + w, 4);
    MT_FAIL("%s: byte %ld of %ld differs (int at %ld: got %d = 0x%08x, expected %d = 0x%08x)", what, i,
            bytes, w, g, (unsigned)g, e, (unsigned)e);
}

/* ---------------------------------------------------------------- operations */

enum { OP_SUM_INT, OP_SUM_DBL, OP_MAX_HOLEY, OP_AFF_PAIR, OP_AFF_HPAIR, OP_XOR_USER, OP_MINLOC, OP_SUM_PAIR, NOP };
static struct {
    int ty;
    MPI_Op op;
    int commute;
    const char *name;
} OPS[NOP];

/* (a1, b1) then (a2, b2): x -> a2 (a1 x + b1) + b2. `in` is the lower rank. */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint ext = *dt == TY[TY_HPAIR].t ? 12 : 8;
    for (int i = 0; i < *len; i++) {
        uint32_t *x = (uint32_t *)((char *)in + i * ext), *y = (uint32_t *)((char *)inout + i * ext);
        uint32_t a = x[0] * y[0], b = x[1] * y[0] + y[1];
        y[0] = a;
        y[1] = b;
    }
}

static void xor_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] ^= ((int *)in)[i];
}

static void ops_init(void)
{
    MPI_Op aff, xr;
    MPI_OK(MPI_Op_create(affine_fn, 0, &aff));
    MPI_OK(MPI_Op_create(xor_fn, 1, &xr));
    OPS[OP_SUM_INT].ty = TY_INT, OPS[OP_SUM_INT].op = MPI_SUM, OPS[OP_SUM_INT].commute = 1;
    OPS[OP_SUM_INT].name = "sum/int";
    OPS[OP_SUM_DBL].ty = TY_DOUBLE, OPS[OP_SUM_DBL].op = MPI_SUM, OPS[OP_SUM_DBL].commute = 1;
    OPS[OP_SUM_DBL].name = "sum/double";
    OPS[OP_MAX_HOLEY].ty = TY_HOLEY, OPS[OP_MAX_HOLEY].op = MPI_MAX, OPS[OP_MAX_HOLEY].commute = 1;
    OPS[OP_MAX_HOLEY].name = "max/holey";
    OPS[OP_AFF_PAIR].ty = TY_PAIR, OPS[OP_AFF_PAIR].op = aff, OPS[OP_AFF_PAIR].commute = 0;
    OPS[OP_AFF_PAIR].name = "affine/pair";
    OPS[OP_AFF_HPAIR].ty = TY_HPAIR, OPS[OP_AFF_HPAIR].op = aff, OPS[OP_AFF_HPAIR].commute = 0;
    OPS[OP_AFF_HPAIR].name = "affine/hpair";
    OPS[OP_XOR_USER].ty = TY_INT, OPS[OP_XOR_USER].op = xr, OPS[OP_XOR_USER].commute = 1;
    OPS[OP_XOR_USER].name = "userxor/int";
    OPS[OP_MINLOC].ty = TY_2INT, OPS[OP_MINLOC].op = MPI_MINLOC, OPS[OP_MINLOC].commute = 1;
    OPS[OP_MINLOC].name = "minloc/2int";
    OPS[OP_SUM_PAIR].ty = TY_PAIR, OPS[OP_SUM_PAIR].op = MPI_SUM, OPS[OP_SUM_PAIR].commute = 1;
    OPS[OP_SUM_PAIR].name = "sum/pair";   /* a predefined op on a derived contiguous type */
}

/* Input item idx of rank r for an operation. */
static long red_in(int opi, int r, long idx, int salt)
{
    if (opi == OP_MINLOC)
        return idx % 2 == 0 ? (r * 7 + (idx / 2) * 3 + salt) % 5 : r * 1000 + idx / 2;
    if (opi == OP_AFF_PAIR || opi == OP_AFF_HPAIR)
        return idx % 2 == 0 ? 2 * ((r * 13 + idx * 5 + salt) % 97) + 1 : (r * 31 + idx * 3 + salt * 7) % 1009;
    return ((r + 1) * 37 + idx * 11 + salt * 101) % 199 - 99;
}

/* lo := lo op hi, one element (per items) at a time; lo is the lower rank. */
static void red_combine(int opi, long *lo, const long *hi)
{
    switch (opi) {
    case OP_SUM_INT:
        lo[0] = (int32_t)((uint32_t)lo[0] + (uint32_t)hi[0]);
        break;
    case OP_SUM_DBL:
        lo[0] += hi[0];
        break;
    case OP_MAX_HOLEY:
        for (int j = 0; j < 2; j++)
            lo[j] = lo[j] > hi[j] ? lo[j] : hi[j];
        break;
    case OP_AFF_PAIR:
    case OP_AFF_HPAIR: {
        uint32_t a = (uint32_t)lo[0] * (uint32_t)hi[0];
        uint32_t b = (uint32_t)lo[1] * (uint32_t)hi[0] + (uint32_t)hi[1];
        lo[0] = (int32_t)a;
        lo[1] = (int32_t)b;
        break;
    }
    case OP_XOR_USER:
        lo[0] ^= hi[0];
        break;
    case OP_SUM_PAIR:
        for (int j = 0; j < 2; j++)
            lo[j] = (int32_t)((uint32_t)lo[j] + (uint32_t)hi[j]);
        break;
    case OP_MINLOC:
        if (hi[0] < lo[0] || (hi[0] == lo[0] && hi[1] < lo[1])) {
            lo[0] = hi[0];
            lo[1] = hi[1];
        }
        break;
    }
}

/* The reduction over ranks in [r0, r1) (in rank order) of element e of the
 * inputs, whose items start at idx0 in each rank's vector; into out[per]. */
static void red_ref(int opi, int r0, int r1, long idx0, int salt, long *out)
{
    int per = TY[OPS[opi].ty].per;
    long x[2];
    for (int j = 0; j < per; j++)
        out[j] = red_in(opi, r0, idx0 + j, salt);
    for (int r = r0 + 1; r < r1; r++) {
        for (int j = 0; j < per; j++)
            x[j] = red_in(opi, r, idx0 + j, salt);
        red_combine(opi, out, x);
    }
}

/* ---------------------------------------------------------------- jobs */

enum {
    K_BARRIER, K_BCAST, K_GATHER, K_GATHERV, K_SCATTER, K_SCATTERV, K_ALLGATHER, K_ALLGATHERV,
    K_ALLTOALL, K_ALLTOALLV, K_ALLTOALLW, K_REDUCE, K_ALLREDUCE, K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK, K_SCAN, K_EXSCAN, NK
};
static const char *const knames[NK] = {
    "barrier", "bcast", "gather", "gatherv", "scatter", "scatterv", "allgather", "allgatherv",
    "alltoall", "alltoallv", "alltoallw", "reduce", "allreduce", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan"};

enum { HOW_BLOCK, HOW_NB, HOW_PERS };
static const char *const hownames[] = {"blocking", "nonblocking", "persistent"};

typedef struct job {
    int kind;
    MPI_Comm comm;
    const char *cname;
    int me, p;
    int root, inplace;
    int sty, rty;     /* data movement: the two sides' types */
    int opi;          /* reductions */
    long n;           /* elements: of sty per block, or of the op's type per vector/block */
    void *sbuf, *rbuf;
    long sbytes, rbytes;
    int *scounts, *sdispls, *rcounts, *rdispls;
    MPI_Datatype *stypes, *rtypes;
    MPI_Request req;
    char what[200];
} job_t;

/* Value of item k of the block that rank src sends to rank dst. */
static long mv(int src, int dst, long k, int salt)
{
    return (long)((src * 7919u + dst * 104729u + (unsigned long)k * 31u + salt * 131u) % 1000003u);
}

static long items_of(int ty, long n)
{
    return n * TY[ty].per;
}

/* v collectives: items rank src sends to rank dst (even, so that both
 * sides' types divide it; some are zero). */
static long v_items(const job_t *j, int src, int dst)
{
    long n2 = 2 * ((j->n + 1) / 2);
    switch (j->kind) {
    case K_GATHERV:
    case K_ALLGATHERV:
        return n2 * ((src + 1) % 3);
    case K_SCATTERV:
        return n2 * ((dst + 1) % 3);
    default: /* alltoallv/w: symmetric when in place, as the standard needs */
        return j->inplace ? n2 * ((src + dst) % 3) : n2 * ((src + 2 * dst) % 3);
    }
}

/* Displacements (in elements of type ty) of p blocks laid out in reverse
 * rank order with a gap of `gap` elements before each; returns the total. */
static long rev_layout(int p, const int *counts, int gap, int *displs)
{
    long d = 0;
    for (int r = p - 1; r >= 0; r--) {
        d += gap;
        displs[r] = (int)d;
        d += counts[r];
    }
    return d + gap;
}

/* Alltoallw: the types a pair uses (same signature, different layouts). */
static int w_sty(int a, int b)
{
    return (a + b) % 2 ? TY_HOLEY : TY_INT;
}
static int w_rty(int a, int b)
{
    return (a + b) % 2 ? TY_PAIR : TY_INT;
}

static bool is_red(int k)
{
    return k >= K_REDUCE;
}

static void job_prep(job_t *j)
{
    MPI_OK(MPI_Comm_rank(j->comm, &j->me));
    MPI_OK(MPI_Comm_size(j->comm, &j->p));
    int p = j->p, me = j->me;
    bool root = me == j->root;
    const ty_t *S = &TY[j->sty], *R = &TY[j->rty];
    long items = items_of(j->sty, j->n);
    j->sbuf = j->rbuf = NULL;
    j->sbytes = j->rbytes = 0;
    switch (j->kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        j->rbytes = root ? j->n * S->ext : items / R->per * R->ext;
        j->rbuf = alloc_buf(j->rbytes);
        break;
    case K_GATHER:
    case K_ALLGATHER:
        j->sbytes = j->n * S->ext;
        j->sbuf = alloc_buf(j->sbytes);
        if (root || j->kind == K_ALLGATHER) {
            j->rbytes = p * (items / R->per) * R->ext;
            j->rbuf = alloc_buf(j->rbytes);
        }
        break;
    case K_SCATTER:
        j->rbytes = items / R->per * R->ext;
        j->rbuf = alloc_buf(j->rbytes);
        if (root) {
            j->sbytes = p * j->n * S->ext;
            j->sbuf = alloc_buf(j->sbytes);
        }
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        j->sbytes = v_items(j, me, 0) / S->per * S->ext;
        j->sbuf = alloc_buf(j->sbytes);
        if (root || j->kind == K_ALLGATHERV) {
            j->rcounts = malloc(p * sizeof(int));
            j->rdispls = malloc(p * sizeof(int));
            for (int r = 0; r < p; r++)
                j->rcounts[r] = (int)(v_items(j, r, 0) / R->per);
            j->rbytes = rev_layout(p, j->rcounts, 1, j->rdispls) * R->ext;
            j->rbuf = alloc_buf(j->rbytes);
        }
        break;
    case K_SCATTERV:
        j->rbytes = v_items(j, 0, me) / R->per * R->ext;
        j->rbuf = alloc_buf(j->rbytes);
        if (root) {
            j->scounts = malloc(p * sizeof(int));
            j->sdispls = malloc(p * sizeof(int));
            for (int r = 0; r < p; r++)
                j->scounts[r] = (int)(v_items(j, 0, r) / S->per);
            j->sbytes = rev_layout(p, j->scounts, 1, j->sdispls) * S->ext;
            j->sbuf = alloc_buf(j->sbytes);
        }
        break;
    case K_ALLTOALL:
        j->sbytes = p * j->n * S->ext;
        j->rbytes = p * (items / R->per) * R->ext;
        j->sbuf = alloc_buf(j->sbytes);
        j->rbuf = alloc_buf(j->rbytes);
        break;
    case K_ALLTOALLV:
        j->scounts = malloc(p * sizeof(int));
        j->sdispls = malloc(p * sizeof(int));
        j->rcounts = malloc(p * sizeof(int));
        j->rdispls = malloc(p * sizeof(int));
        for (int r = 0; r < p; r++) {
            j->scounts[r] = (int)(v_items(j, me, r) / (j->inplace ? R->per : S->per));
            j->rcounts[r] = (int)(v_items(j, r, me) / R->per);
        }
        j->sbytes = rev_layout(p, j->scounts, 1, j->sdispls) * S->ext;
        j->rbytes = rev_layout(p, j->rcounts, 2, j->rdispls) * R->ext;
        j->sbuf = alloc_buf(j->sbytes);
        j->rbuf = alloc_buf(j->rbytes);
        break;
    case K_ALLTOALLW: {
        j->scounts = malloc(p * sizeof(int));
        j->sdispls = malloc(p * sizeof(int));
        j->rcounts = malloc(p * sizeof(int));
        j->rdispls = malloc(p * sizeof(int));
        j->stypes = malloc(p * sizeof(MPI_Datatype));
        j->rtypes = malloc(p * sizeof(MPI_Datatype));
        long sd = 0, rd = 0;
        for (int r = p - 1; r >= 0; r--) {
            int st = j->inplace ? w_rty(me, r) : w_sty(me, r), rt = w_rty(me, r);
            j->stypes[r] = TY[st].t;
            j->rtypes[r] = TY[rt].t;
            j->scounts[r] = (int)(v_items(j, me, r) / TY[st].per);
            j->rcounts[r] = (int)(v_items(j, r, me) / TY[rt].per);
            sd += 4;
            j->sdispls[r] = (int)sd;
            sd += j->scounts[r] * TY[st].ext;
            rd += 8;
            j->rdispls[r] = (int)rd;
            rd += j->rcounts[r] * TY[rt].ext;
        }
        j->sbytes = sd + 4;
        j->rbytes = rd + 8;
        j->sbuf = alloc_buf(j->sbytes);
        j->rbuf = alloc_buf(j->rbytes);
        break;
    }
    case K_REDUCE:
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN: {
        const ty_t *T = &TY[OPS[j->opi].ty];
        j->sbytes = j->n * T->ext;
        j->sbuf = alloc_buf(j->sbytes);
        if (root || j->kind != K_REDUCE) {
            j->rbytes = j->n * T->ext;
            j->rbuf = alloc_buf(j->rbytes);
        }
        break;
    }
    case K_REDUCE_SCATTER:
    case K_REDUCE_SCATTER_BLOCK: {
        const ty_t *T = &TY[OPS[j->opi].ty];
        j->rcounts = malloc(p * sizeof(int));
        long total = 0;
        for (int r = 0; r < p; r++) {
            j->rcounts[r] = (int)(j->kind == K_REDUCE_SCATTER_BLOCK ? j->n : j->n * ((r + 1) % 3));
            total += j->rcounts[r];
        }
        j->sbytes = total * T->ext;
        j->sbuf = alloc_buf(j->sbytes);
        j->rbytes = (j->inplace ? total : j->rcounts[me]) * T->ext;
        j->rbuf = alloc_buf(j->rbytes);
        break;
    }
    }
}

static void job_release(job_t *j)
{
    free(j->sbuf);
    free(j->rbuf);
    free(j->scounts);
    free(j->sdispls);
    free(j->rcounts);
    free(j->rdispls);
    free(j->stypes);
    free(j->rtypes);
    j->sbuf = j->rbuf = NULL;
    j->scounts = j->sdispls = j->rcounts = j->rdispls = NULL;
    j->stypes = j->rtypes = NULL;
}

/* Fills the inputs (and sentinels everywhere else) for data set `salt`. */
static void job_fill(job_t *j, int salt)
{
    int p = j->p, me = j->me;
    bool root = me == j->root;
    const ty_t *S = &TY[j->sty], *R = &TY[j->rty];
    long items = items_of(j->sty, j->n);
    if (j->sbuf)
        memset(j->sbuf, sentinel, (size_t)(j->sbytes > 0 ? j->sbytes : 1));
    if (j->rbuf)
        memset(j->rbuf, sentinel, (size_t)(j->rbytes > 0 ? j->rbytes : 1));
    switch (j->kind) {
    case K_BARRIER:
        break;
    case K_BCAST:
        if (root)
            for (long k = 0; k < items; k++)
                put(j->sty, j->rbuf, k, mv(j->root, 0, k, salt));
        break;
    case K_GATHER:
    case K_ALLGATHER: {
        int dst = j->kind == K_GATHER ? j->root : 0;
        for (long k = 0; k < items; k++)
            put(j->sty, j->sbuf, k, mv(me, dst, k, salt));
        if (j->inplace && j->rbuf) {
            char *blk = (char *)j->rbuf + me * (items / R->per) * R->ext;
            for (long k = 0; k < items; k++)
                put(j->rty, blk, k, mv(me, dst, k, salt));
        }
        break;
    }
    case K_SCATTER:
        if (root)
            for (int r = 0; r < p; r++)
                for (long k = 0; k < items; k++)
                    put(j->sty, (char *)j->sbuf + r * j->n * S->ext, k, mv(j->root, r, k, salt));
        break;
    case K_GATHERV:
    case K_ALLGATHERV: {
        long mine = v_items(j, me, 0);
        for (long k = 0; k < mine; k++)
            put(j->sty, j->sbuf, k, mv(me, 0, k, salt));
        if (j->inplace && j->rbuf)
            for (long k = 0; k < mine; k++)
                put(j->rty, (char *)j->rbuf + j->rdispls[me] * R->ext, k, mv(me, 0, k, salt));
        break;
    }
    case K_SCATTERV:
        if (root)
            for (int r = 0; r < p; r++)
                for (long k = 0; k < v_items(j, 0, r); k++)
                    put(j->sty, (char *)j->sbuf + j->sdispls[r] * S->ext, k, mv(j->root, r, k, salt));
        break;
    case K_ALLTOALL:
        for (int r = 0; r < p; r++) {
            if (j->inplace) {
                for (long k = 0; k < items; k++)
                    put(j->rty, (char *)j->rbuf + r * (items / R->per) * R->ext, k, mv(me, r, k, salt));
            } else {
                for (long k = 0; k < items; k++)
                    put(j->sty, (char *)j->sbuf + r * j->n * S->ext, k, mv(me, r, k, salt));
            }
        }
        break;
    case K_ALLTOALLV:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < v_items(j, me, r); k++) {
                if (j->inplace)
                    put(j->rty, (char *)j->rbuf + j->rdispls[r] * R->ext, k, mv(me, r, k, salt));
                else
                    put(j->sty, (char *)j->sbuf + j->sdispls[r] * S->ext, k, mv(me, r, k, salt));
            }
        break;
    case K_ALLTOALLW:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < v_items(j, me, r); k++) {
                if (j->inplace)
                    put(w_rty(me, r), (char *)j->rbuf + j->rdispls[r], k, mv(me, r, k, salt));
                else
                    put(w_sty(me, r), (char *)j->sbuf + j->sdispls[r], k, mv(me, r, k, salt));
            }
        break;
    default: { /* reductions: the input vector, in sbuf or (in place) rbuf */
        int ty = OPS[j->opi].ty;
        long nitems = j->sbytes / TY[ty].ext * TY[ty].per;
        void *in = j->inplace && j->rbuf ? j->rbuf : j->sbuf;
        for (long k = 0; k < nitems; k++)
            put(ty, in, k, red_in(j->opi, me, k, salt));
        break;
    }
    }
}

static void job_call(job_t *j, int how)
{
    MPI_Comm comm = j->comm;
    MPI_Request *rq = &j->req;
    MPI_Info info = MPI_INFO_NULL;
    bool root = j->me == j->root;
    const ty_t *S = &TY[j->sty], *R = &TY[j->rty];
    long items = items_of(j->sty, j->n);
    const void *sb = j->inplace ? MPI_IN_PLACE : j->sbuf;
    switch (j->kind) {
    case K_BARRIER:
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Barrier(comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ibarrier(comm, rq));
        else
            MPI_OK(MPI_Barrier_init(comm, info, rq));
        break;
    case K_BCAST: {
        int cnt = (int)(root ? j->n : items / R->per);
        MPI_Datatype t = root ? S->t : R->t;
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Bcast(j->rbuf, cnt, t, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ibcast(j->rbuf, cnt, t, j->root, comm, rq));
        else
            MPI_OK(MPI_Bcast_init(j->rbuf, cnt, t, j->root, comm, info, rq));
        break;
    }
    case K_GATHER: {
        /* Receive arguments are not significant off the root: pass junk. */
        int rc = root ? (int)(items / R->per) : 0;
        MPI_Datatype rt = root ? R->t : MPI_DATATYPE_NULL;
        const void *s = root ? sb : j->sbuf;
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Gather(s, (int)j->n, S->t, j->rbuf, rc, rt, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Igather(s, (int)j->n, S->t, j->rbuf, rc, rt, j->root, comm, rq));
        else
            MPI_OK(MPI_Gather_init(s, (int)j->n, S->t, j->rbuf, rc, rt, j->root, comm, info, rq));
        break;
    }
    case K_SCATTER: {
        int sc = root ? (int)j->n : 0;
        MPI_Datatype st = root ? S->t : MPI_DATATYPE_NULL;
        void *r = root && j->inplace ? MPI_IN_PLACE : j->rbuf;
        int rc = (int)(items / R->per);
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Scatter(j->sbuf, sc, st, r, rc, R->t, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Iscatter(j->sbuf, sc, st, r, rc, R->t, j->root, comm, rq));
        else
            MPI_OK(MPI_Scatter_init(j->sbuf, sc, st, r, rc, R->t, j->root, comm, info, rq));
        break;
    }
    case K_ALLGATHER: {
        int rc = (int)(items / R->per);
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Allgather(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Iallgather(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm, rq));
        else
            MPI_OK(MPI_Allgather_init(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm, info, rq));
        break;
    }
    case K_GATHERV: {
        int sc = (int)(v_items(j, j->me, 0) / S->per);
        MPI_Datatype rt = root ? R->t : MPI_DATATYPE_NULL;
        const void *s = root ? sb : j->sbuf;
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Gatherv(s, sc, S->t, j->rbuf, j->rcounts, j->rdispls, rt, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Igatherv(s, sc, S->t, j->rbuf, j->rcounts, j->rdispls, rt, j->root, comm, rq));
        else
            MPI_OK(MPI_Gatherv_init(s, sc, S->t, j->rbuf, j->rcounts, j->rdispls, rt, j->root, comm, info, rq));
        break;
    }
    case K_ALLGATHERV: {
        int sc = (int)(v_items(j, j->me, 0) / S->per);
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Allgatherv(sb, sc, S->t, j->rbuf, j->rcounts, j->rdispls, R->t, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Iallgatherv(sb, sc, S->t, j->rbuf, j->rcounts, j->rdispls, R->t, comm, rq));
        else
            MPI_OK(MPI_Allgatherv_init(sb, sc, S->t, j->rbuf, j->rcounts, j->rdispls, R->t, comm, info, rq));
        break;
    }
    case K_SCATTERV: {
        MPI_Datatype st = root ? S->t : MPI_DATATYPE_NULL;
        void *r = root && j->inplace ? MPI_IN_PLACE : j->rbuf;
        int rc = (int)(v_items(j, 0, j->me) / R->per);
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Scatterv(j->sbuf, j->scounts, j->sdispls, st, r, rc, R->t, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Iscatterv(j->sbuf, j->scounts, j->sdispls, st, r, rc, R->t, j->root, comm, rq));
        else
            MPI_OK(MPI_Scatterv_init(j->sbuf, j->scounts, j->sdispls, st, r, rc, R->t, j->root, comm, info, rq));
        break;
    }
    case K_ALLTOALL: {
        int rc = (int)(items / R->per);
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Alltoall(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ialltoall(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm, rq));
        else
            MPI_OK(MPI_Alltoall_init(sb, (int)j->n, S->t, j->rbuf, rc, R->t, comm, info, rq));
        break;
    }
    case K_ALLTOALLV:
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Alltoallv(sb, j->scounts, j->sdispls, S->t, j->rbuf, j->rcounts, j->rdispls, R->t, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ialltoallv(sb, j->scounts, j->sdispls, S->t, j->rbuf, j->rcounts, j->rdispls, R->t, comm,
                                  rq));
        else
            MPI_OK(MPI_Alltoallv_init(sb, j->scounts, j->sdispls, S->t, j->rbuf, j->rcounts, j->rdispls, R->t,
                                      comm, info, rq));
        break;
    case K_ALLTOALLW:
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Alltoallw(sb, j->scounts, j->sdispls, j->stypes, j->rbuf, j->rcounts, j->rdispls,
                                 j->rtypes, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ialltoallw(sb, j->scounts, j->sdispls, j->stypes, j->rbuf, j->rcounts, j->rdispls,
                                  j->rtypes, comm, rq));
        else
            MPI_OK(MPI_Alltoallw_init(sb, j->scounts, j->sdispls, j->stypes, j->rbuf, j->rcounts, j->rdispls,
                                      j->rtypes, comm, info, rq));
        break;
    case K_REDUCE: {
        MPI_Datatype t = TY[OPS[j->opi].ty].t;
        MPI_Op op = OPS[j->opi].op;
        const void *s = root ? sb : j->sbuf;
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Reduce(s, j->rbuf, (int)j->n, t, op, j->root, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ireduce(s, j->rbuf, (int)j->n, t, op, j->root, comm, rq));
        else
            MPI_OK(MPI_Reduce_init(s, j->rbuf, (int)j->n, t, op, j->root, comm, info, rq));
        break;
    }
    case K_ALLREDUCE:
    case K_SCAN:
    case K_EXSCAN:
    case K_REDUCE_SCATTER_BLOCK: {
        MPI_Datatype t = TY[OPS[j->opi].ty].t;
        MPI_Op op = OPS[j->opi].op;
        int n = (int)j->n;
#define RED3(F, IF)                                                                           \
    do {                                                                                      \
        if (how == HOW_BLOCK)                                                                 \
            MPI_OK(F(sb, j->rbuf, n, t, op, comm));                                           \
        else if (how == HOW_NB)                                                               \
            MPI_OK(IF(sb, j->rbuf, n, t, op, comm, rq));                                      \
        else                                                                                  \
            MPI_OK(F##_init(sb, j->rbuf, n, t, op, comm, info, rq));                          \
    } while (0)
        if (j->kind == K_ALLREDUCE)
            RED3(MPI_Allreduce, MPI_Iallreduce);
        else if (j->kind == K_SCAN)
            RED3(MPI_Scan, MPI_Iscan);
        else if (j->kind == K_EXSCAN)
            RED3(MPI_Exscan, MPI_Iexscan);
        else
            RED3(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block);
#undef RED3
        break;
    }
    case K_REDUCE_SCATTER: {
        MPI_Datatype t = TY[OPS[j->opi].ty].t;
        MPI_Op op = OPS[j->opi].op;
        if (how == HOW_BLOCK)
            MPI_OK(MPI_Reduce_scatter(sb, j->rbuf, j->rcounts, t, op, comm));
        else if (how == HOW_NB)
            MPI_OK(MPI_Ireduce_scatter(sb, j->rbuf, j->rcounts, t, op, comm, rq));
        else
            MPI_OK(MPI_Reduce_scatter_init(sb, j->rbuf, j->rcounts, t, op, comm, info, rq));
        break;
    }
    }
}

/* Builds the expected image of the receive buffer and compares. */
static void job_check(job_t *j, int salt)
{
    int p = j->p, me = j->me;
    bool root = me == j->root;
    const ty_t *S = &TY[j->sty], *R = &TY[j->rty];
    long items = items_of(j->sty, j->n);
    char what[300];
    snprintf(what, sizeof what, "%s, data set %d", j->what, salt);
    if (!j->rbuf && j->kind != K_SCATTER)
        return;
    void *exp = alloc_buf(j->rbytes);
    long cmp_bytes = j->rbytes;
    switch (j->kind) {
    case K_BCAST:
        for (long k = 0; k < items; k++)
            put(root ? j->sty : j->rty, exp, k, mv(j->root, 0, k, salt));
        break;
    case K_GATHER:
    case K_ALLGATHER: {
        int dst = j->kind == K_GATHER ? j->root : 0;
        for (int r = 0; r < p; r++)
            for (long k = 0; k < items; k++)
                put(j->rty, (char *)exp + r * (items / R->per) * R->ext, k, mv(r, dst, k, salt));
        break;
    }
    case K_SCATTER:
        if (root && j->inplace) {
            /* Nothing received; the send buffer must be untouched. */
            free(exp);
            exp = alloc_buf(j->sbytes);
            for (int r = 0; r < p; r++)
                for (long k = 0; k < items; k++)
                    put(j->sty, (char *)exp + r * j->n * S->ext, k, mv(j->root, r, k, salt));
            compare(j->sbuf, exp, j->sbytes, what);
            free(exp);
            return;
        }
        for (long k = 0; k < items; k++)
            put(j->rty, exp, k, mv(j->root, me, k, salt));
        break;
    case K_GATHERV:
    case K_ALLGATHERV:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < v_items(j, r, 0); k++)
                put(j->rty, (char *)exp + j->rdispls[r] * R->ext, k, mv(r, 0, k, salt));
        break;
    case K_SCATTERV:
        if (root && j->inplace) {
            free(exp);
            return;
        }
        for (long k = 0; k < v_items(j, 0, me); k++)
            put(j->rty, exp, k, mv(j->root, me, k, salt));
        break;
    case K_ALLTOALL:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < items; k++)
                put(j->rty, (char *)exp + r * (items / R->per) * R->ext, k, mv(r, me, k, salt));
        break;
    case K_ALLTOALLV:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < v_items(j, r, me); k++)
                put(j->rty, (char *)exp + j->rdispls[r] * R->ext, k, mv(r, me, k, salt));
        break;
    case K_ALLTOALLW:
        for (int r = 0; r < p; r++)
            for (long k = 0; k < v_items(j, r, me); k++)
                put(w_rty(me, r), (char *)exp + j->rdispls[r], k, mv(r, me, k, salt));
        break;
    default: { /* reductions */
        int ty = OPS[j->opi].ty, per = TY[ty].per;
        long res[2];
        long nel = j->n, base = 0;
        int r0 = 0, r1 = p;
        if (j->kind == K_SCAN)
            r1 = me + 1;
        if (j->kind == K_EXSCAN) {
            if (me == 0) {
                free(exp);
                return;   /* undefined at rank 0 */
            }
            r1 = me;
        }
        if (j->kind == K_REDUCE_SCATTER || j->kind == K_REDUCE_SCATTER_BLOCK) {
            for (int r = 0; r < me; r++)
                base += j->rcounts[r];
            nel = j->rcounts[me];
            /* In place, only the first block is defined afterwards. */
            cmp_bytes = nel * TY[ty].ext;
        }
        for (long e = 0; e < nel; e++) {
            red_ref(j->opi, r0, r1, (base + e) * per, salt, res);
            for (int q = 0; q < per; q++)
                put(ty, exp, e * per + q, res[q]);
        }
        if (j->inplace && j->kind == K_REDUCE_SCATTER && cmp_bytes > 0) {
            /* holes past the last element of the block are not ours */
        }
        break;
    }
    }
    compare(j->rbuf, exp, cmp_bytes, what);
    free(exp);
}

static void describe(job_t *j, int how)
{
    int ext = is_red(j->kind);
    snprintf(j->what, sizeof j->what, "%s %s on %s (size %d), n=%ld, %s%s%s, root %d%s", hownames[how],
             knames[j->kind], j->cname, j->p, j->n, ext ? OPS[j->opi].name : TY[j->sty].name,
             ext ? "" : "->", ext ? "" : TY[j->rty].name, j->root, j->inplace ? ", in place" : "");
}

static void run_job(job_t *j, int how)
{
    njobs++;
    ncalls += how == HOW_PERS ? 3 : 1;
    job_prep(j);
    describe(j, how);
    if (how == HOW_PERS) {
        job_call(j, HOW_PERS);
        for (int s = 0; s < 3; s++) {
            job_fill(j, s);
            MPI_OK(MPI_Start(&j->req));
            MPI_OK(MPI_Wait(&j->req, MPI_STATUS_IGNORE));
            job_check(j, s);
        }
        MPI_OK(MPI_Request_free(&j->req));
    } else {
        job_fill(j, 0);
        job_call(j, how);
        if (how == HOW_NB)
            MPI_OK(MPI_Wait(&j->req, MPI_STATUS_IGNORE));
        job_check(j, 0);
    }
    job_release(j);
}

/* ---------------------------------------------------------------- drivers */

static bool rooted(int k)
{
    return k == K_BCAST || k == K_GATHER || k == K_GATHERV || k == K_SCATTER || k == K_SCATTERV ||
           k == K_REDUCE;
}

static bool has_in_place(int k)
{
    return k != K_BCAST && k != K_BARRIER;
}

/* Type pairs for data movement: same type, holes, a pair with the same
 * signature but different layouts, doubles, a leading gap. */
static const int ty_pairs[][2] = {{TY_INT, TY_INT},       {TY_HOLEY, TY_HOLEY}, {TY_HOLEY, TY_INT},
                                  {TY_DOUBLE, TY_DOUBLE}, {TY_GAP, TY_GAP}};

typedef struct {
    MPI_Comm comm;
    const char *name;
} comm_t;

static void test_kind(int k, comm_t *comms, int ncomms)
{
    /* Counts in elements of the send type (or of the op's type): 0, 1, 7,
     * about 16 KiB, and the large case once per communicator. */
    static const long counts[] = {0, 1, 7, 2051};
    int seq = 0;
    if (k == K_BARRIER) {
        for (int c = 0; c < ncomms; c++)
            for (int how = 0; how < 3; how++) {
                job_t j = {.kind = K_BARRIER, .comm = comms[c].comm, .cname = comms[c].name};
                run_job(&j, how);
            }
        return;
    }
    for (int c = 0; c < ncomms; c++) {
        int p;
        MPI_OK(MPI_Comm_size(comms[c].comm, &p));
        int roots[3] = {0, p - 1, p / 2}, nroots = rooted(k) ? 3 : 1;
        int nvar = is_red(k) ? NOP : (int)(sizeof ty_pairs / sizeof ty_pairs[0]);
        for (int v = 0; v < nvar; v++) {
            for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                for (int ip = 0; ip < (has_in_place(k) ? 2 : 1); ip++) {
                    seq++;
                    for (int ri = 0; ri < nroots; ri++) {
                        for (int how = 0; how < 3; how++) {
                            /* Quick mode: one root and one way of calling per
                             * combination, varied across combinations. */
                            if (!full && (how != seq % 3 || ri != (seq / 3) % nroots))
                                continue;
                            job_t j = {.kind = k, .comm = comms[c].comm, .cname = comms[c].name,
                                       .root = roots[ri], .inplace = ip, .n = counts[ci]};
                            if (is_red(k)) {
                                j.opi = v;
                                j.sty = j.rty = OPS[v].ty;
                                /* 2051 elements of 8 bytes: about 16 KiB */
                                if (counts[ci] == 2051 && TY[OPS[v].ty].ext == 4)
                                    j.n = 4100;
                            } else {
                                j.sty = ty_pairs[v][0];
                                j.rty = ty_pairs[v][1];
                                if (counts[ci] == 2051 && TY[j.sty].ext == 4)
                                    j.n = 4100;
                                if (counts[ci] == 2051 && TY[j.sty].ext == 20)
                                    j.n = 820;   /* 16 KiB of extent */
                            }
                            run_job(&j, how);
                        }
                    }
                }
            }
        }
        /* Large: about 1 MiB moved in all, once per communicator, MPI_INT or
         * the commutative sum (and once the non-commutative op). */
        for (int ip = 0; ip < (has_in_place(k) ? 2 : 1); ip++) {
            job_t j = {.kind = k, .comm = comms[c].comm, .cname = comms[c].name, .root = p - 1,
                       .inplace = ip, .sty = TY_INT, .rty = TY_INT, .opi = OP_SUM_INT};
            long total = 262144;
            bool per_block = k == K_GATHER || k == K_SCATTER || k == K_ALLGATHER || k == K_ALLTOALL ||
                             k == K_GATHERV || k == K_SCATTERV || k == K_ALLGATHERV || k == K_ALLTOALLV ||
                             k == K_ALLTOALLW || k == K_REDUCE_SCATTER || k == K_REDUCE_SCATTER_BLOCK;
            j.n = per_block ? total / p : total;
            if (k == K_ALLTOALLV || k == K_ALLTOALLW)
                j.n /= p;
            run_job(&j, ip ? HOW_NB : HOW_BLOCK);
            if (is_red(k) && ip == 0) {
                job_t q = j;
                q.opi = OP_AFF_PAIR;
                q.sty = q.rty = TY_PAIR;
                q.n = j.n / 2;
                run_job(&q, HOW_PERS);
            }
            /* Blocks of 48 KiB (Alltoall: 48 KiB / p), between half of a
             * shared slot and the whole of it (one round through the whole
             * slot). */
            if (per_block && k != K_REDUCE_SCATTER && k != K_REDUCE_SCATTER_BLOCK) {
                job_t m = j;
                m.n = 12288;
                if (k == K_ALLTOALL || k == K_ALLTOALLV || k == K_ALLTOALLW)
                    m.n /= p;
                run_job(&m, ip ? HOW_PERS : HOW_BLOCK);
            }
        }
    }
}

/* Several nonblocking collectives of kind k outstanding at once, on
 * different communicators and with different arguments, completed in an
 * order that changes from round to round. */
static void test_outstanding(int k, comm_t *comms, int ncomms)
{
    enum { NJ = 5 };
    for (int round = 0; round < 4; round++) {
        job_t jobs[NJ];
        memset(jobs, 0, sizeof jobs);
        for (int i = 0; i < NJ; i++) {
            job_t *j = &jobs[i];
            int p;
            j->kind = k;
            j->comm = comms[(i + round) % ncomms].comm;
            j->cname = comms[(i + round) % ncomms].name;
            MPI_OK(MPI_Comm_size(j->comm, &p));
            j->root = (i * 3 + round) % p;
            j->inplace = has_in_place(k) && (i + round) % 2;
            j->n = (i % 3 == 2) ? 2000 : 1 + i * 5 + round;
            if (is_red(k)) {
                j->opi = (i + round) % NOP;
                j->sty = j->rty = OPS[j->opi].ty;
            } else {
                int v = (i + round) % 4;
                j->sty = ty_pairs[v][0];
                j->rty = ty_pairs[v][1];
            }
            job_prep(j);
            describe(j, HOW_NB);
            njobs++;
            ncalls++;
            job_fill(j, i);
            job_call(j, HOW_NB);
        }
        if (round == 0) {
            for (int i = NJ - 1; i >= 0; i--)
                MPI_OK(MPI_Wait(&jobs[i].req, MPI_STATUS_IGNORE));
        } else if (round == 1) {
            MPI_Request rq[NJ];
            for (int i = 0; i < NJ; i++)
                rq[i] = jobs[i].req;
            for (int left = NJ; left > 0; left--) {
                int idx;
                MPI_OK(MPI_Waitany(NJ, rq, &idx, MPI_STATUS_IGNORE));
                CHECK(idx != MPI_UNDEFINED, "Waitany found nothing to wait for");
            }
            for (int i = 0; i < NJ; i++)
                jobs[i].req = rq[i];
        } else if (round == 2) {
            /* Test them in a rotating order until all are done. */
            int done = 0, flags[NJ] = {0};
            for (int it = 0; done < NJ; it++) {
                int i = (it * 2 + wrank) % NJ;
                if (flags[i])
                    continue;
                MPI_OK(MPI_Test(&jobs[i].req, &flags[i], MPI_STATUS_IGNORE));
                done += flags[i];
            }
        } else {
            MPI_Request rq[NJ];
            for (int i = 0; i < NJ; i++)
                rq[i] = jobs[NJ - 1 - i].req;
            MPI_OK(MPI_Waitall(NJ, rq, MPI_STATUSES_IGNORE));
        }
        for (int i = 0; i < NJ; i++) {
            job_check(&jobs[i], i);
            job_release(&jobs[i]);
        }
    }
}

/* One nonblocking collective of every kind outstanding at once, on the
 * three communicators in turn, completed last to first. */
static void test_mixed(comm_t *comms, int ncomms)
{
    job_t jobs[NK];
    memset(jobs, 0, sizeof jobs);
    for (int k = 0; k < NK; k++) {
        job_t *j = &jobs[k];
        int p;
        j->kind = k;
        j->comm = comms[k % ncomms].comm;
        j->cname = comms[k % ncomms].name;
        MPI_OK(MPI_Comm_size(j->comm, &p));
        j->root = k % p;
        j->inplace = has_in_place(k) && k % 2;
        j->n = 3 + k * 50;
        j->opi = k % NOP;
        j->sty = j->rty = is_red(k) ? OPS[j->opi].ty : ty_pairs[k % 4][0];
        if (!is_red(k))
            j->rty = ty_pairs[k % 4][1];
        job_prep(j);
        describe(j, HOW_NB);
        job_fill(j, k);
        job_call(j, HOW_NB);
        njobs++;
        ncalls++;
    }
    for (int k = NK - 1; k >= 0; k--) {
        MPI_OK(MPI_Wait(&jobs[k].req, MPI_STATUS_IGNORE));
        job_check(&jobs[k], k);
        job_release(&jobs[k]);
    }
    /* A pending nonblocking collective whose request is freed completes on
     * its own (the schedule goes with the request). */
    MPI_Request r;
    MPI_OK(MPI_Ibarrier(comms[0].comm, &r));
    MPI_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "Request_free left the handle");
    MPI_OK(MPI_Barrier(comms[0].comm));
}

/* Arguments every rank gets wrong in the same way are refused with the
 * right error class (under MPI_ERRORS_RETURN). */
static void test_errors(void)
{
    int x[8] = {0}, y[8 * 64] = {0};
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Bcast(x, 1, MPI_INT, wsize, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allreduce(x, x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_BUFFER, MPI_Allgather(x, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_OP, MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TYPE, MPI_Allreduce(x, y, 1, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_TRUNCATE, MPI_Alltoall(x, 1, MPI_INT, y, 2, MPI_INT, MPI_COMM_WORLD));
    MPI_FAILS(MPI_ERR_COUNT, MPI_Allreduce(x, y, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MPI_Request r;
    MPI_FAILS(MPI_ERR_ROOT, MPI_Ibcast(x, 1, MPI_INT, -3, MPI_COMM_WORLD, &r));
    MPI_FAILS(MPI_ERR_ROOT, MPI_Gather_init(x, 1, MPI_INT, y, 1, MPI_INT, wsize, MPI_COMM_WORLD,
                                            MPI_INFO_NULL, &r));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    /* Still in step: a collective after the errors works. */
    x[0] = wrank;
    MPI_OK(MPI_Allreduce(x, y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y[0] == wsize * (wsize - 1) / 2, "sum of ranks %d", y[0]);
}

/* Exported by the library for its tools and tests. */
const char *halo_tool_coll_forced(const char *coll);

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: coll_algos COLL|all ALGORITHM|auto [quick|full]\n");
        return 2;
    }
    const char *coll = argv[1], *algo = argv[2];
    full = argc > 3 && !strcmp(argv[3], "full");
    char var[96];
    if (strcmp(algo, "auto") && strcmp(coll, "all")) {
        snprintf(var, sizeof var, "HALO_%s_ALGORITHM", coll);
        for (char *q = var; *q; q++)
            if (*q >= 'a' && *q <= 'z')
                *q = (char)(*q - 'a' + 'A');
        setenv(var, algo, 1);
    }
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &wrank));
    sentinel = 0xA5 ^ ((wrank % 8) << 4);
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &wsize));
    types_init();
    ops_init();
    if (strcmp(algo, "auto") && strcmp(coll, "all")) {
        const char *f = halo_tool_coll_forced(coll);
        CHECK(f && !strcmp(f, algo), "%s=%s did not take (the library forces %s)", var, algo, f ? f : "nothing");
    }

    comm_t comms[3];
    int ncomms = 0;
    comms[ncomms++] = (comm_t){MPI_COMM_WORLD, "world"};
    MPI_Comm rev, par;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &rev));
    /* Persistent collectives on "reversed" number their starts like
     * nonblocking calls (the communicator asserts that they start in one
     * order everywhere); on the others they are matched by their init calls
     * and shared-memory algorithms work in a region of their own. */
    MPI_Info strict;
    MPI_OK(MPI_Info_create(&strict));
    MPI_OK(MPI_Info_set(strict, "mpi_assert_strict_persistent_collective_ordering", "true"));
    MPI_OK(MPI_Comm_set_info(rev, strict));
    MPI_OK(MPI_Info_free(&strict));
    comms[ncomms++] = (comm_t){rev, "reversed"};
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &par));
    comms[ncomms++] = (comm_t){par, "parity"};

    int ran = 0;
    for (int k = 0; k < NK; k++) {
        if (strcmp(coll, "all") && strcmp(coll, knames[k]))
            continue;
        test_kind(k, comms, full ? ncomms : 2);
        test_outstanding(k, comms, ncomms);
        ran++;
    }
    CHECK(ran > 0 || !strcmp(coll, "errors"), "no collective called %s", coll);
    if (!strcmp(coll, "all"))
        test_mixed(comms, ncomms);
    if (!strcmp(coll, "errors") || !strcmp(coll, "all"))
        test_errors();

    MPI_OK(MPI_Comm_free(&rev));
    MPI_OK(MPI_Comm_free(&par));
    MPI_OK(MPI_Op_free(&OPS[OP_AFF_PAIR].op));
    MPI_OK(MPI_Op_free(&OPS[OP_XOR_USER].op));
    MPI_OK(MPI_Type_free(&TY[TY_HOLEY].t));
    MPI_OK(MPI_Type_free(&TY[TY_HPAIR].t));
    MPI_OK(MPI_Type_free(&TY[TY_GAP].t));
    MPI_OK(MPI_Type_free(&TY[TY_PAIR].t));
    MPI_OK(MPI_Finalize());
    if (wrank == 0)
        printf("coll_algos %s %s: ok (%ld checks of %ld calls)\n", coll, algo, njobs, ncalls);
    return 0;
}
