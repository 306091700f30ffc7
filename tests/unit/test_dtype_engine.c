/* The datatype engine against a reference that walks type maps element by
 * element.
 *
 * Random type trees (nesting depth up to 4) are built with every
 * constructor: contiguous, vector and hvector (negative strides too),
 * indexed, hindexed, indexed_block, hindexed_block, struct, resized (lb
 * moved, extent grown or shrunk), subarray in C and Fortran order, darray
 * (block, cyclic, cyclic(k), none), dup. Next to each MPI type the test
 * keeps its own description of the constructor call and derives the type
 * map from it by the standard's definitions, without looking at the
 * library's internals. For each type and a few counts it checks:
 *   - size, extent, lb, true extent against the reference;
 *   - pack against the reference packing, whole and in random chunks
 *     (resuming at any byte);
 *   - unpack, whole and in chunks, leaving bytes outside the map untouched;
 *   - iovecs, in batches of a random size, cover exactly the map;
 *   - unpack (and halo_dt_copy) into a different type of the same
 *     signature (a struct of the same basic elements at other places);
 *   - Get_elements for every prefix of the packed data (exact, or
 *     MPI_UNDEFINED inside a basic element), and its inverse;
 *   - external32 against the reference encoding (each basic element
 *     byte-reversed), and the round trip back.
 * Plus a type whose map is huge (a vector of 10^7 doubles): its program
 * stays a few nodes and it packs from any position. */
#include <float.h>

#include "binding/api_gen.h"
#include "datatype/dtype.h"
#include "unit.h"

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static long rr(long lo, long hi) /* inclusive */
{
    return lo + (long)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ---------------------------------------------------------------- leaves */

typedef struct leaf {
    MPI_Datatype t;
    long size, extent, align;
    long p2off, p1len, p2len;   /* pairs: value [0, p1len), index [p2off, p2off + p2len) */
} leaf_t;

static const leaf_t leaves[] = {
    {MPI_CHAR, 1, 1, 1, 0, 1, 0},
    {MPI_SHORT, 2, 2, 2, 0, 2, 0},
    {MPI_INT, 4, 4, 4, 0, 4, 0},
    {MPI_FLOAT, 4, 4, 4, 0, 4, 0},
    {MPI_DOUBLE, 8, 8, 8, 0, 8, 0},
    {MPI_LONG_LONG, 8, 8, 8, 0, 8, 0},
    {MPI_2INT, 8, 8, 4, 4, 4, 4},
    {MPI_DOUBLE_INT, 12, 16, 8, 8, 8, 4},
    {MPI_SHORT_INT, 6, 8, 4, 4, 2, 4},
};
#define NLEAVES ((int)(sizeof leaves / sizeof leaves[0]))

/* ---------------------------------------------------------------- reference types */

enum { R_LEAF, R_CONTIG, R_VECTOR, R_HVECTOR, R_INDEXED, R_HINDEXED, R_IBLOCK, R_HIBLOCK, R_STRUCT,
       R_RESIZED, R_SUBARRAY, R_DARRAY, R_DUP, R_NKINDS };

typedef struct rt rt_t;
struct rt {
    int kind;
    MPI_Datatype t;
    const leaf_t *leaf;
    int count, bl;
    long stride;
    int *bls;
    long *disps;
    rt_t **kids;   /* struct: count kids; others: kids[0] */
    long rlb, rext;
    int ndims, order, size, rank;
    int gs[3], sub[3], st[3], dist[3], darg[3], ps[3];
    /* derived reference properties */
    long lb, ub, tlb, tub, tsize, align;
    bool lbm, ubm;
};

/* A basic element of a type map: a leaf at a displacement. */
typedef struct ent {
    long disp;
    const leaf_t *leaf;
} ent_t;

typedef struct map {
    ent_t *v;
    long n, cap;
} map_t;

static void map_add(map_t *m, long disp, const leaf_t *l)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->v = realloc(m->v, (size_t)m->cap * sizeof *m->v);
    }
    m->v[m->n++] = (ent_t){disp, l};
}

static void typemap(const rt_t *r, long base, map_t *m);

static long ext_of(const rt_t *r)
{
    return r->ub - r->lb;
}


static void darray_owned_coords(const rt_t *r, int *coord)
{
    for (int i = r->ndims - 1, k = r->rank; i >= 0; i--) {
        coord[i] = k % r->ps[i];
        k /= r->ps[i];
    }
}

static bool darray_owns(const rt_t *r, int d, int g, const int *coord)
{
    int P = r->ps[d];
    switch (r->dist[d]) {
    case MPI_DISTRIBUTE_NONE:
        return true;
    case MPI_DISTRIBUTE_BLOCK: {
        int b = r->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? (r->gs[d] + P - 1) / P : r->darg[d];
        return g / b == coord[d];
    }
    default: {
        int k = r->darg[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : r->darg[d];
        return (g / k) % P == coord[d];
    }
    }
}

/* Visits the elements of an ndims array in memory order, calling the
 * selection predicate; appends the selected ones. */
static void array_walk(const rt_t *r, long base, map_t *m, bool darray)
{
    const rt_t *c = r->kids[0];
    int nd = r->ndims, idx[3] = {0, 0, 0}, coord[3] = {0, 0, 0};
    int sizes[3], lo[3], hi[3];
    if (darray)
        darray_owned_coords(r, coord);
    for (int d = 0; d < nd; d++) {
        sizes[d] = r->gs[d];
        lo[d] = darray ? 0 : r->st[d];
        hi[d] = darray ? r->gs[d] : r->st[d] + r->sub[d];
    }
    /* stride of each dimension in elements */
    long stride[3];
    long s = 1;
    for (int k = 0; k < nd; k++) {
        int d = r->order == MPI_ORDER_C ? nd - 1 - k : k;
        stride[d] = s;
        s *= sizes[d];
    }
    for (int d = 0; d < nd; d++)
        idx[d] = lo[d];
    for (;;) {
        bool sel = true;
        if (darray)
            for (int d = 0; d < nd; d++)
                sel = sel && darray_owns(r, d, idx[d], coord);
        if (sel) {
            long off = 0;
            for (int d = 0; d < nd; d++)
                off += idx[d] * stride[d];
            typemap(c, base + off * ext_of(c), m);
        }
        /* next index, fastest dimension first */
        int k = 0;
        for (; k < nd; k++) {
            int d = r->order == MPI_ORDER_C ? nd - 1 - k : k;
            if (++idx[d] < hi[d])
                break;
            idx[d] = lo[d];
        }
        if (k == nd)
            break;
    }
}

static void typemap(const rt_t *r, long base, map_t *m)
{
    const rt_t *c = r->kids ? r->kids[0] : NULL;
    switch (r->kind) {
    case R_LEAF:
        map_add(m, base, r->leaf);
        break;
    case R_CONTIG:
        for (int k = 0; k < r->count; k++)
            typemap(c, base + k * ext_of(c), m);
        break;
    case R_VECTOR:
    case R_HVECTOR:
        for (int i = 0; i < r->count; i++)
            for (int j = 0; j < r->bl; j++)
                typemap(c, base + (r->kind == R_VECTOR ? r->stride * ext_of(c) : r->stride) * i + j * ext_of(c), m);
        break;
    case R_INDEXED:
    case R_HINDEXED:
    case R_IBLOCK:
    case R_HIBLOCK: {
        bool bytes = r->kind == R_HINDEXED || r->kind == R_HIBLOCK;
        for (int i = 0; i < r->count; i++) {
            int bl = (r->kind == R_INDEXED || r->kind == R_HINDEXED) ? r->bls[i] : r->bl;
            for (int j = 0; j < bl; j++)
                typemap(c, base + (bytes ? r->disps[i] : r->disps[i] * ext_of(c)) + j * ext_of(c), m);
        }
        break;
    }
    case R_STRUCT:
        for (int i = 0; i < r->count; i++)
            for (int j = 0; j < r->bls[i]; j++)
                typemap(r->kids[i], base + r->disps[i] + j * ext_of(r->kids[i]), m);
        break;
    case R_RESIZED:
    case R_DUP:
        typemap(c, base, m);
        break;
    case R_SUBARRAY:
        array_walk(r, base, m, false);
        break;
    case R_DARRAY:
        array_walk(r, base, m, true);
        break;
    }
}

/* Reference bounds, by enumerating the instances of the children. */
typedef struct rb {
    bool lo_set, hi_set;
    long lo, hi;
} rb_t;

static void rb_inst(rb_t *b, const rt_t *c, long disp, bool use_lo, bool use_hi)
{
    if (use_lo && (!b->lo_set || disp + c->lb < b->lo)) {
        b->lo = disp + c->lb;
        b->lo_set = true;
    }
    if (use_hi && (!b->hi_set || disp + c->ub > b->hi)) {
        b->hi = disp + c->ub;
        b->hi_set = true;
    }
}

static void ref_props(rt_t *r)
{
    rb_t b = {0};
    const rt_t *c = r->kids ? r->kids[0] : NULL;
    r->lbm = r->ubm = false;
    if (r->kind == R_LEAF) {
        r->lb = 0;
        r->ub = r->leaf->extent;
        r->tsize = r->leaf->size;
        r->align = r->leaf->align;
        r->tlb = 0;
        r->tub = r->leaf->p2len ? r->leaf->p2off + r->leaf->p2len : r->leaf->size;
        return;
    }
    bool clo = c && (c->tsize > 0 || c->lbm), chi = c && (c->tsize > 0 || c->ubm);
    switch (r->kind) {
    case R_CONTIG:
        for (int k = 0; k < r->count; k++)
            rb_inst(&b, c, k * ext_of(c), clo, chi);
        break;
    case R_VECTOR:
    case R_HVECTOR:
        for (int i = 0; i < r->count; i++)
            for (int j = 0; j < r->bl; j++)
                rb_inst(&b, c, (r->kind == R_VECTOR ? r->stride * ext_of(c) : r->stride) * i + j * ext_of(c), clo, chi);
        break;
    case R_INDEXED:
    case R_HINDEXED:
    case R_IBLOCK:
    case R_HIBLOCK: {
        bool bytes = r->kind == R_HINDEXED || r->kind == R_HIBLOCK;
        for (int i = 0; i < r->count; i++) {
            int bl = (r->kind == R_INDEXED || r->kind == R_HINDEXED) ? r->bls[i] : r->bl;
            for (int j = 0; j < bl; j++)
                rb_inst(&b, c, (bytes ? r->disps[i] : r->disps[i] * ext_of(c)) + j * ext_of(c), clo, chi);
        }
        break;
    }
    case R_STRUCT: {
        bool lbm = false, ubm = false;
        for (int i = 0; i < r->count; i++)
            if (r->bls[i] > 0) {
                lbm |= r->kids[i]->lbm;
                ubm |= r->kids[i]->ubm;
            }
        for (int i = 0; i < r->count; i++) {
            const rt_t *k = r->kids[i];
            bool ul = lbm ? k->lbm : (k->tsize > 0 || k->lbm), uh = ubm ? k->ubm : (k->tsize > 0 || k->ubm);
            for (int j = 0; j < r->bls[i]; j++)
                rb_inst(&b, k, r->disps[i] + j * ext_of(k), ul, uh);
        }
        long al = 1;
        for (int i = 0; i < r->count; i++)
            if (r->bls[i] > 0 && r->kids[i]->align > al)
                al = r->kids[i]->align;
        if (!ubm && b.lo_set && b.hi_set) {
            long e = b.hi - b.lo;
            if (e % al)
                b.hi += al - e % al;
        }
        r->lbm = lbm;
        r->ubm = ubm;
        break;
    }
    case R_RESIZED:
        b = (rb_t){true, true, r->rlb, r->rlb + r->rext};
        r->lbm = r->ubm = true;
        break;
    case R_DUP:
        b = (rb_t){true, true, c->lb, c->ub};
        r->lbm = c->lbm;
        r->ubm = c->ubm;
        break;
    case R_SUBARRAY:
    case R_DARRAY: {
        long n = 1;
        for (int d = 0; d < r->ndims; d++)
            n *= r->gs[d];
        b = (rb_t){true, true, 0, n * ext_of(c)};
        r->lbm = r->ubm = true;
        break;
    }
    }
    if (r->kind != R_STRUCT && r->kind != R_RESIZED && r->kind != R_DUP && r->kind != R_SUBARRAY &&
        r->kind != R_DARRAY) {
        /* single child: inherits markers when it has instances */
        bool any = b.lo_set || b.hi_set;
        r->lbm = any && c->lbm;
        r->ubm = any && c->ubm;
    }
    r->lb = b.lo_set ? b.lo : 0;
    r->ub = b.hi_set ? b.hi : 0;
    map_t m = {0};
    typemap(r, 0, &m);
    r->tsize = 0;
    r->tlb = r->tub = 0;
    for (long i = 0; i < m.n; i++) {
        long lo = m.v[i].disp, hi = m.v[i].disp + (m.v[i].leaf->p2len ? m.v[i].leaf->p2off + m.v[i].leaf->p2len
                                                                       : m.v[i].leaf->size);
        if (i == 0 || lo < r->tlb)
            r->tlb = lo;
        if (i == 0 || hi > r->tub)
            r->tub = hi;
        r->tsize += m.v[i].leaf->size;
    }
    free(m.v);
    r->align = 1;
    if (r->kind == R_STRUCT) {
        for (int i = 0; i < r->count; i++)
            if (r->kids[i]->align > r->align)
                r->align = r->kids[i]->align;
    } else {
        r->align = c->align;
    }
}

/* ---------------------------------------------------------------- random construction */

static int budget;   /* basic elements the current tree may still have */

static rt_t *new_rt(int kind)
{
    rt_t *r = calloc(1, sizeof *r);
    r->kind = kind;
    return r;
}

static long elems_of(const rt_t *r)
{
    map_t m = {0};
    typemap(r, 0, &m);
    long n = m.n;
    free(m.v);
    return n;
}

static rt_t *gen(int depth);

static rt_t *gen_leaf(void)
{
    rt_t *r = new_rt(R_LEAF);
    r->leaf = &leaves[rr(0, NLEAVES - 1)];
    r->t = r->leaf->t;
    ref_props(r);
    return r;
}

static rt_t *gen(int depth)
{
    if (depth == 0 || rr(0, 5) == 0)
        return gen_leaf();
    int kind = (int)rr(R_CONTIG, R_NKINDS - 1);
    rt_t *r = new_rt(kind);
    rt_t *c = gen(depth - 1);
    long ce = elems_of(c);
    long cext = ext_of(c) != 0 ? labs(ext_of(c)) : 1;
    int maxn = (int)(ce > 0 ? budget / ce : 8);
    if (maxn < 1)
        maxn = 1;
    if (maxn > 12)
        maxn = 12;
    r->kids = calloc(kind == R_STRUCT ? 8 : 1, sizeof *r->kids);
    r->kids[0] = c;
    int rc = MPI_SUCCESS;
    switch (kind) {
    case R_CONTIG:
        r->count = (int)rr(0, maxn);
        rc = halo_api_type_contiguous(r->count, c->t, &r->t);
        break;
    case R_VECTOR:
    case R_HVECTOR: {
        r->count = (int)rr(0, 4);
        r->bl = (int)rr(0, maxn / 4 + 1);
        long gap = rr(0, 3);
        long st = r->bl + gap;
        if (rr(0, 2) == 0)
            st = -st;
        if (kind == R_VECTOR) {
            r->stride = st;
            rc = halo_api_type_vector(r->count, r->bl, (int)st, c->t, &r->t);
        } else {
            r->stride = st * cext + (st > 0 ? rr(0, 5) : -rr(0, 5));
            rc = halo_api_type_create_hvector(r->count, r->bl, r->stride, c->t, &r->t);
        }
        break;
    }
    case R_INDEXED:
    case R_HINDEXED:
    case R_IBLOCK:
    case R_HIBLOCK: {
        r->count = (int)rr(0, 5);
        r->bls = calloc((size_t)r->count + 1, sizeof(int));
        r->disps = calloc((size_t)r->count + 1, sizeof(long));
        r->bl = (int)rr(0, 3);
        bool bytes = kind == R_HINDEXED || kind == R_HIBLOCK;
        long pos = rr(-3, 3);
        int *ib = calloc((size_t)r->count + 1, sizeof(int)), *id = calloc((size_t)r->count + 1, sizeof(int));
        MPI_Aint *ad = calloc((size_t)r->count + 1, sizeof(MPI_Aint));
        for (int i = 0; i < r->count; i++) {
            int bl = (kind == R_INDEXED || kind == R_HINDEXED) ? (int)rr(0, 3) : r->bl;
            r->bls[i] = bl;
            ib[i] = bl;
            r->disps[i] = bytes ? pos * cext + rr(0, 3) : pos;
            id[i] = (int)r->disps[i];
            ad[i] = r->disps[i];
            pos += bl + rr(0, 2);
        }
        /* sometimes descending displacements: type map order is not address order */
        if (rr(0, 3) == 0)
            for (int i = 0; i < r->count / 2; i++) {
                int j = r->count - 1 - i;
                long t = r->disps[i]; r->disps[i] = r->disps[j]; r->disps[j] = t;
                int u = r->bls[i]; r->bls[i] = r->bls[j]; r->bls[j] = u;
                if (kind == R_IBLOCK || kind == R_HIBLOCK) { r->bls[i] = r->bls[j] = r->bl; }
                ib[i] = r->bls[i]; ib[j] = r->bls[j];
                id[i] = (int)r->disps[i]; id[j] = (int)r->disps[j];
                ad[i] = r->disps[i]; ad[j] = r->disps[j];
            }
        if (kind == R_INDEXED)
            rc = halo_api_type_indexed(r->count, ib, id, c->t, &r->t);
        else if (kind == R_HINDEXED)
            rc = halo_api_type_create_hindexed(r->count, ib, ad, c->t, &r->t);
        else if (kind == R_IBLOCK)
            rc = halo_api_type_create_indexed_block(r->count, r->bl, id, c->t, &r->t);
        else
            rc = halo_api_type_create_hindexed_block(r->count, r->bl, ad, c->t, &r->t);
        free(ib);
        free(id);
        free(ad);
        break;
    }
    case R_STRUCT: {
        r->count = (int)rr(1, 4);
        r->bls = calloc(8, sizeof(int));
        r->disps = calloc(8, sizeof(long));
        int bl[8];
        MPI_Aint d[8];
        MPI_Datatype ty[8];
        long pos = rr(-8, 8);
        for (int i = 0; i < r->count; i++) {
            if (i > 0)
                r->kids[i] = gen(depth - 1);
            rt_t *k = r->kids[i];
            r->bls[i] = (int)rr(0, 3);
            long kext = ext_of(k);
            /* leave room for the instances, aligned sometimes */
            if (rr(0, 1))
                pos = (pos + 7) / 8 * 8;
            /* data of the instances starts at pos (instances go down when the extent is negative) */
            long back = kext < 0 && r->bls[i] > 1 ? (r->bls[i] - 1) * kext : 0;
            r->disps[i] = pos - back - k->tlb;
            pos = r->disps[i] + k->tub + (kext > 0 && r->bls[i] > 1 ? (r->bls[i] - 1) * kext : 0) + rr(0, 5);
            bl[i] = r->bls[i];
            d[i] = r->disps[i];
            ty[i] = k->t;
        }
        rc = halo_api_type_create_struct(r->count, bl, d, ty, &r->t);
        break;
    }
    case R_RESIZED: {
        long e = ext_of(c);
        r->rlb = c->lb + rr(-4, 4);
        r->rext = e + rr(-2, 6);
        rc = halo_api_type_create_resized(c->t, r->rlb, r->rext, &r->t);
        break;
    }
    case R_DUP:
        rc = halo_api_type_dup(c->t, &r->t);
        break;
    case R_SUBARRAY:
    case R_DARRAY: {
        r->ndims = (int)rr(1, 3);
        r->order = rr(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        int cap = maxn < 4 ? 4 : maxn;
        if (kind == R_SUBARRAY) {
            for (int d = 0; d < r->ndims; d++) {
                r->gs[d] = (int)rr(1, r->ndims == 1 ? cap : 5);
                r->sub[d] = (int)rr(1, r->gs[d]);
                r->st[d] = (int)rr(0, r->gs[d] - r->sub[d]);
            }
            rc = halo_api_type_create_subarray(r->ndims, r->gs, r->sub, r->st, r->order, c->t, &r->t);
        } else {
            r->size = 1;
            for (int d = 0; d < r->ndims; d++) {
                r->gs[d] = (int)rr(1, 7);
                r->dist[d] = (int)rr(0, 2) == 0 ? MPI_DISTRIBUTE_NONE
                           : rr(0, 1) ? MPI_DISTRIBUTE_BLOCK : MPI_DISTRIBUTE_CYCLIC;
                r->ps[d] = r->dist[d] == MPI_DISTRIBUTE_NONE ? 1 : (int)rr(1, 3);
                r->size *= r->ps[d];
                if (r->dist[d] == MPI_DISTRIBUTE_BLOCK)
                    r->darg[d] = rr(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG
                                          : (r->gs[d] + r->ps[d] - 1) / r->ps[d] + (int)rr(0, 1);
                else if (r->dist[d] == MPI_DISTRIBUTE_CYCLIC)
                    r->darg[d] = rr(0, 1) ? MPI_DISTRIBUTE_DFLT_DARG : (int)rr(1, 3);
                else
                    r->darg[d] = MPI_DISTRIBUTE_DFLT_DARG;
            }
            r->rank = (int)rr(0, r->size - 1);
            rc = halo_api_type_create_darray(r->size, r->rank, r->ndims, r->gs, r->dist, r->darg, r->ps,
                                             r->order, c->t, &r->t);
        }
        break;
    }
    }
    UCHECK_EQ(rc, MPI_SUCCESS);
    ref_props(r);
    if (rr(0, 2))
        halo_api_type_commit(&r->t);
    return r;
}

static void free_rt(rt_t *r)
{
    if (!r)
        return;
    if (r->kind != R_LEAF)
        halo_api_type_free(&r->t);
    int nk = r->kind == R_STRUCT ? r->count : (r->kind == R_LEAF ? 0 : 1);
    for (int i = 0; i < nk; i++)
        free_rt(r->kids[i]);
    free(r->kids);
    free(r->bls);
    free(r->disps);
    free(r);
}

static void dump(const rt_t *r, int ind)
{
    static const char *names[] = {"leaf", "contig", "vector", "hvector", "indexed", "hindexed", "iblock",
                                  "hiblock", "struct", "resized", "subarray", "darray", "dup"};
    fprintf(stderr, "%*s%s", ind, "", names[r->kind]);
    if (r->kind == R_LEAF) {
        fprintf(stderr, " size %ld\n", r->leaf->size);
        return;
    }
    fprintf(stderr, " count %d bl %d stride %ld lb %ld ub %ld size %ld\n", r->count, r->bl, r->stride, r->lb,
            r->ub, r->tsize);
    int nk = r->kind == R_STRUCT ? r->count : 1;
    for (int i = 0; i < nk; i++)
        dump(r->kids[i], ind + 2);
}

/* ---------------------------------------------------------------- the checks */

typedef struct run {
    long off, len;
} run_t;

/* The byte runs of a map (pairs in two parts), in map order. */
static long map_runs(const map_t *m, long count, long ext, run_t **out)
{
    run_t *v = malloc((size_t)(2 * m->n * count + 1) * sizeof *v);
    long n = 0;
    for (long k = 0; k < count; k++)
        for (long i = 0; i < m->n; i++) {
            const leaf_t *l = m->v[i].leaf;
            long d = m->v[i].disp + k * ext;
            v[n++] = (run_t){d, l->p1len ? l->p1len : l->size};
            if (l->p2len)
                v[n++] = (run_t){d + l->p2off, l->p2len};
        }
    *out = v;
    return n;
}

static int checked_types, skipped_unpack;

static void check_type(rt_t *r, long count)
{
    halo_dtype_t *dt = halo_dtype_ptr(r->t);
    UCHECK_EQ(dt->size, r->tsize);
    UCHECK_EQ(dt->lb, r->lb);
    UCHECK_EQ(dt->ub, r->ub);
    UCHECK_EQ(dt->extent, r->ub - r->lb);
    if (r->tsize > 0) {
        UCHECK_EQ(dt->true_lb, r->tlb);
        UCHECK_EQ(dt->true_ub, r->tub);
    }
    if (dt->size != r->tsize || dt->extent != r->ub - r->lb)
        return;
    map_t m = {0};
    typemap(r, 0, &m);
    long ext = r->ub - r->lb;
    run_t *runs;
    long nruns = map_runs(&m, count, ext, &runs);
    long total = count * r->tsize;
    /* The buffer: every byte the runs touch, plus margins. */
    long lo = 0, hi = 0;
    for (long i = 0; i < nruns; i++) {
        if (i == 0 || runs[i].off < lo)
            lo = runs[i].off;
        if (i == 0 || runs[i].off + runs[i].len > hi)
            hi = runs[i].off + runs[i].len;
    }
    long span = hi - lo + 64;
    unsigned char *mem = malloc((size_t)span), *dst = malloc((size_t)span), *ref = malloc((size_t)span);
    unsigned char *buf = mem + 32 - lo, *dbuf = dst + 32 - lo, *rbuf = ref + 32 - lo;
    for (long i = 0; i < span; i++)
        mem[i] = (unsigned char)rnd();
    unsigned char *want = malloc((size_t)total + 1), *got = malloc((size_t)total + 1);
    long p = 0;
    for (long i = 0; i < nruns; i++) {
        memcpy(want + p, buf + runs[i].off, (size_t)runs[i].len);
        p += runs[i].len;
    }
    UCHECK_EQ(p, total);

    /* pack, whole and in chunks */
    memset(got, 0xee, (size_t)total + 1);
    UCHECK_EQ(halo_dt_pack(buf, count, dt, 0, got, total + 5), total);
    UCHECK(memcmp(got, want, (size_t)total) == 0);
    memset(got, 0xee, (size_t)total + 1);
    for (long pos = 0; pos < total;) {
        long n = rr(1, total < 40 ? total : 40);
        long moved = halo_dt_pack(buf, count, dt, pos, got + pos, n);
        UCHECK_EQ(moved, pos + n <= total ? n : total - pos);
        pos += moved;
    }
    UCHECK(memcmp(got, want, (size_t)total) == 0);

    /* overlapping maps make unpack order-dependent: skip those */
    bool overlap = false;
    {
        unsigned char *hit = calloc((size_t)span, 1);
        for (long i = 0; i < nruns && !overlap; i++)
            for (long b = 0; b < runs[i].len; b++)
                if (hit[runs[i].off - lo + b]++)
                    overlap = true;
        free(hit);
    }
    if (!overlap) {
        for (long i = 0; i < span; i++)
            dst[i] = ref[i] = (unsigned char)(i * 7 + 3);
        long q = 0;
        for (long i = 0; i < nruns; i++) {
            memcpy(rbuf + runs[i].off, want + q, (size_t)runs[i].len);
            q += runs[i].len;
        }
        UCHECK_EQ(halo_dt_unpack(dbuf, count, dt, 0, want, total), total);
        UCHECK(memcmp(dst, ref, (size_t)span) == 0);
        for (long i = 0; i < span; i++)
            dst[i] = (unsigned char)(i * 7 + 3);
        for (long pos = 0; pos < total;) {
            long n = rr(1, 33);
            pos += halo_dt_unpack(dbuf, count, dt, pos, want + pos, n);
        }
        UCHECK(memcmp(dst, ref, (size_t)span) == 0);
    } else {
        skipped_unpack++;
    }

    /* iovecs in batches */
    {
        long pos = 0, covered = 0, w = 0;
        unsigned char *g = malloc((size_t)total + 1);
        int max = (int)rr(1, 7);
        for (int guard = 0; pos < total && guard < 1000000; guard++) {
            struct iovec iov[8];
            MPI_Count mp = pos;
            long limit = rr(0, 3) ? total : pos + rr(1, 50);
            int n = halo_dt_iov(buf, count, dt, &mp, limit, iov, max);
            UCHECK(n >= 1 && n <= max);
            long bytes = 0;
            for (int i = 0; i < n; i++) {
                memcpy(g + w, iov[i].iov_base, iov[i].iov_len);
                w += (long)iov[i].iov_len;
                bytes += (long)iov[i].iov_len;
            }
            UCHECK_EQ(mp, pos + bytes);
            UCHECK(mp <= (limit < total ? limit : total));
            covered += bytes;
            pos = mp;
            if (n < 1)
                break;
        }
        UCHECK_EQ(covered, total);
        UCHECK(memcmp(g, want, (size_t)total) == 0);
        free(g);
    }

    /* the same signature elsewhere: a struct of the same basic elements */
    long ne = m.n * count;
    if (ne > 0 && ne < 20000) {
        int *bl = malloc((size_t)ne * sizeof *bl);
        MPI_Aint *d = malloc((size_t)ne * sizeof *d);
        MPI_Datatype *ty = malloc((size_t)ne * sizeof *ty);
        long pos = 0;
        for (long i = 0; i < ne; i++) {
            const leaf_t *l = m.v[i % m.n].leaf;
            bl[i] = 1;
            ty[i] = l->t;
            pos += rr(0, 3);
            d[i] = pos;
            pos += l->extent;
        }
        MPI_Datatype s2;
        UCHECK_EQ(halo_api_type_create_struct((int)ne, bl, d, ty, &s2), MPI_SUCCESS);
        halo_dtype_t *t2 = halo_dtype_ptr(s2);
        unsigned char *b2 = calloc((size_t)pos + 16, 1);
        UCHECK_EQ(halo_dt_unpack(b2, 1, t2, 0, want, total), total);
        bool same = true;
        unsigned char *b3 = calloc((size_t)pos + 16, 1);
        UCHECK_EQ(halo_dt_copy(buf, count, dt, b3, 1, t2), total);
        for (long i = 0; i < ne; i++) {
            const leaf_t *l = m.v[i % m.n].leaf;
            long so = m.v[i % m.n].disp + (i / m.n) * ext;
            long l1 = l->p1len ? l->p1len : l->size;
            same = same && memcmp(b2 + d[i], buf + so, (size_t)l1) == 0;
            same = same && memcmp(b3 + d[i], buf + so, (size_t)l1) == 0;
            if (l->p2len) {
                same = same && memcmp(b2 + d[i] + l->p2off, buf + so + l->p2off, (size_t)l->p2len) == 0;
                same = same && memcmp(b3 + d[i] + l->p2off, buf + so + l->p2off, (size_t)l->p2len) == 0;
            }
        }
        UCHECK(same);
        /* and back: copy the struct's data into the type */
        if (!overlap) {
            for (long i = 0; i < span; i++)
                dst[i] = (unsigned char)(i * 7 + 3);
            UCHECK_EQ(halo_dt_copy(b2, 1, t2, dbuf, count, dt), total);
            UCHECK(memcmp(dst, ref, (size_t)span) == 0);
        }
        halo_api_type_free(&s2);
        free(b2);
        free(b3);
        free(bl);
        free(d);
        free(ty);
    }

    /* Get_elements for every prefix (pairs count as two elements) */
    {
        long *bound = malloc((size_t)(nruns + 2) * sizeof *bound);
        long nb = 0, acc = 0;
        bound[nb++] = 0;
        for (long i = 0; i < nruns; i++) {
            acc += runs[i].len;
            bound[nb++] = acc;
        }
        long step = total > 3000 ? total / 1000 : 1;
        for (long n = 0, j = 0; n <= total; n += step) {
            while (j < nb && bound[j] < n)
                j++;
            long want_e = (j < nb && bound[j] == n) ? j : MPI_UNDEFINED;
            MPI_Count e = halo_dt_elements(dt, n);
            if (e != want_e) {
                fprintf(stderr, "elements(%ld of %ld) = %lld, expected %ld\n", n, total, (long long)e, want_e);
                unit_failures++;
                break;
            }
        }
        for (long k = 0; k < nb; k += (nb > 2000 ? nb / 1000 : 1))
            UCHECK_EQ(halo_dt_elements_bytes(dt, k), bound[k]);
        free(bound);
    }

    /* external32: each basic element reversed (the leaves here keep their
     * size), and back */
    {
        MPI_Count esz = -1;
        UCHECK_EQ(halo_api_pack_external_size_c("external32", count, r->t, &esz), MPI_SUCCESS);
        UCHECK_EQ(esz, total);
        unsigned char *x = malloc((size_t)total + 1), *xw = malloc((size_t)total + 1);
        long q = 0;
        for (long i = 0; i < nruns; i++) {
            /* a run here is one basic value (pairs are two runs) */
            for (long b = 0; b < runs[i].len; b++)
                xw[q + b] = buf[runs[i].off + runs[i].len - 1 - b];
            q += runs[i].len;
        }
        MPI_Count pos = 0;
        UCHECK_EQ(halo_api_pack_external_c("external32", buf, count, r->t, x, total, &pos), MPI_SUCCESS);
        UCHECK_EQ(pos, total);
        UCHECK(memcmp(x, xw, (size_t)total) == 0);
        if (!overlap) {
            for (long i = 0; i < span; i++)
                dst[i] = (unsigned char)(i * 7 + 3);
            pos = 0;
            UCHECK_EQ(halo_api_unpack_external_c("external32", x, total, &pos, dbuf, count, r->t), MPI_SUCCESS);
            UCHECK(memcmp(dst, ref, (size_t)span) == 0);
        }
        free(x);
        free(xw);
    }

    checked_types++;
    free(runs);
    free(m.v);
    free(mem);
    free(dst);
    free(ref);
    free(want);
    free(got);
}

/* A vector far too long for a list of runs: a few nodes, packs anywhere. */
static void huge_vector(void)
{
    MPI_Datatype v;
    UCHECK_EQ(halo_api_type_vector(10000000, 1, 2, MPI_DOUBLE, &v), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_commit(&v), MPI_SUCCESS);
    halo_dtype_t *t = halo_dtype_ptr(v);
    UCHECK(t->prog.nnodes <= 2);
    UCHECK_EQ(t->prog.nblk, 0);
    UCHECK_EQ(t->nblocks, 0);
    UCHECK_EQ(t->size, 80000000);
    UCHECK_EQ(t->extent, (2 * 10000000 - 1) * 8);
    UCHECK_EQ(halo_dt_iov_count(t, 1), 10000000);
    double *a = malloc(sizeof(double) * 20000000);
    for (long i = 0; i < 20000000; i++)
        a[i] = (double)i;
    double out[64];
    long pos = 8L * 9999936 + 3;   /* inside a double, near the end */
    UCHECK_EQ(halo_dt_pack(a, 1, t, pos, (char *)out, 8 * 64), 8 * 64 - 3);
    double first;
    memcpy(&first, (char *)out + 5, 8);
    UCHECK(first == (double)(2 * 9999937));
    struct iovec iov[4];
    MPI_Count p = 8L * 5000000;
    UCHECK_EQ(halo_dt_iov(a, 1, t, &p, 8L * 10000000, iov, 4), 4);
    UCHECK(iov[0].iov_base == &a[10000000] && iov[3].iov_base == &a[10000006]);
    UCHECK_EQ(p, 8L * 5000004);
    free(a);
    halo_api_type_free(&v);
}

/* Calls of 16 MiB and more stream their stores, and blocks of 64 to 1024
 * bytes spread over 1 MiB and more are prefetched ahead, in groups of four
 * lines (pack.c, walk.h): a vector of nblk 320-byte blocks (five lines: a
 * group and one more) at a stride of 712 (so the blocks start at every
 * offset in a line, multiple of 8), packed whole and from an odd position
 * to an odd end, then unpacked into a cleared copy, compared byte by byte
 * with the blocks and the gaps. 60000 blocks (19.2 MB) take the streaming
 * movers, 6000 (1.9 MB) the ordinary ones with prefetches. */
static void streamed_blocks(long nblk)
{
    const long blk = 320, stride = 712;
    MPI_Datatype v;
    UCHECK_EQ(halo_api_type_vector((int)nblk, (int)blk, (int)stride, MPI_BYTE, &v), MPI_SUCCESS);
    UCHECK_EQ(halo_api_type_commit(&v), MPI_SUCCESS);
    halo_dtype_t *t = halo_dtype_ptr(v);
    long span = (nblk - 1) * stride + blk, packed = nblk * blk;
    unsigned char *src = malloc((size_t)span), *dst = malloc((size_t)span);
    unsigned char *pk = malloc((size_t)packed + 64);
    for (long i = 0; i < span; i++)
        src[i] = (unsigned char)(i * 131 + (i >> 9));
    UCHECK_EQ(halo_dt_pack(src, 1, t, 0, pk, packed), packed);
    long bad = 0;
    for (long b = 0; b < nblk; b++)
        bad += memcmp(pk + b * blk, src + b * stride, (size_t)blk) != 0;
    UCHECK_EQ(bad, 0);
    /* From an odd position to an odd end, into an odd address. */
    long from = 3 * blk + 17, len = packed - from - 29;
    memset(pk, 0, (size_t)packed + 64);
    UCHECK_EQ(halo_dt_pack(src, 1, t, from, pk + 5, len), len);
    bad = 0;
    for (long q = 0; q < len; q++) {
        long at = from + q;
        bad += pk[5 + q] != src[(at / blk) * stride + at % blk];
    }
    UCHECK_EQ(bad, 0);
    /* Back: the blocks land, the gaps stay as they were. */
    memset(dst, 0xee, (size_t)span);
    UCHECK_EQ(halo_dt_unpack(dst, 1, t, from, pk + 5, len), len);
    bad = 0;
    for (long i = 0; i < span; i++) {
        long b = i / stride, o = i % stride, at = b * blk + o;
        bool in = o < blk && at >= from && at < from + len;
        bad += dst[i] != (in ? src[i] : 0xee);
    }
    UCHECK_EQ(bad, 0);
    free(src);
    free(dst);
    free(pk);
    halo_api_type_free(&v);
}

int main(int argc, char **argv)
{
    halo_dtype_init();
    int ntrees = argc > 1 ? atoi(argv[1]) : 1500;
    if (argc > 2)
        rng_state = strtoull(argv[2], NULL, 0);
    /* Where the AVX2 movers exist (pack_avx2.c), odd trees and the second
     * pass below use them and the rest the baseline ones. */
    int avx2 = halo_dt_movers_avx2(-1);
    printf("movers: baseline%s\n", avx2 ? " and AVX2" : " only (no AVX2 here)");
    for (int i = 0; i < ntrees; i++) {
        halo_dt_movers_avx2(avx2 && i % 2);
        budget = (int)rr(4, 600);
        uint64_t seed = rng_state;
        rt_t *r = gen((int)rr(1, 4));
        int before = unit_failures;
        for (long count = 1; count <= 3; count++)
            check_type(r, count);
        if (unit_failures != before) {
            fprintf(stderr, "tree %d (seed 0x%llx) failed:\n", i, (unsigned long long)seed);
            dump(r, 2);
            if (unit_failures > 50)
                break;
        }
        free_rt(r);
    }
    for (int pass = 0; pass <= avx2; pass++) {
        UCHECK_EQ(halo_dt_movers_avx2(pass), pass);
        huge_vector();
        streamed_blocks(60000);
        streamed_blocks(6000);
    }
    printf("%d type/count pairs checked (%d with overlapping maps: unpack skipped)\n", checked_types,
           skipped_unpack);
    UNIT_DONE();
}
