/* Derived datatype constructors.
 *
 * Every constructor reduces to a list of "pieces": a child type repeated
 * `count` times from a displacement. The builder lays the children's runs
 * end to end into the new type's block list (merging runs that touch),
 * computes the bounds by the standard's rules, and records the envelope
 * and contents exactly as the constructor was called. */
#include "datatype/dtype.h"

#include "binding/api_gen.h"
#include "core/attr.h"
#include "core/errors.h"

typedef struct piece {
    MPI_Count disp;      /* bytes */
    halo_dtype_t *child;
    MPI_Count count;     /* children laid one extent apart */
} piece_t;

typedef struct blist {
    halo_dt_block_t *v;
    MPI_Count n, cap;
    MPI_Count pos;
} blist_t;

static void blist_add(blist_t *b, MPI_Count off, MPI_Count len)
{
    if (len == 0)
        return;
    if (b->n > 0) {
        halo_dt_block_t *last = &b->v[b->n - 1];
        if (last->off + last->len == off) {
            last->len += len;
            b->pos += len;
            return;
        }
    }
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        b->v = halo_realloc(b->v, (size_t)b->cap * sizeof *b->v);
    }
    b->v[b->n++] = (halo_dt_block_t){off, len, b->pos};
    b->pos += len;
}

static MPI_Count align_of_basic(MPI_Datatype t)
{
    halo_dtype_t *b = halo_dtype_ptr(t);
    MPI_Count a = b->size;
    if (b->flags & HALO_DT_PAIR)
        a = b->extent - (b->extent > b->size ? b->extent - b->size : 0);
    /* Complex types align like their parts. */
    if (t == MPI_C_FLOAT_COMPLEX || t == MPI_CXX_FLOAT_COMPLEX || t == MPI_COMPLEX || t == MPI_COMPLEX8)
        a = 4;
    if (t == MPI_C_DOUBLE_COMPLEX || t == MPI_CXX_DOUBLE_COMPLEX || t == MPI_DOUBLE_COMPLEX ||
        t == MPI_COMPLEX16 || t == MPI_2DOUBLE_PRECISION)
        a = 8;
    if (t == MPI_C_LONG_DOUBLE_COMPLEX || t == MPI_CXX_LONG_DOUBLE_COMPLEX || t == MPI_COMPLEX32)
        a = 16;
    if (t == MPI_2INT || t == MPI_2INTEGER || t == MPI_2REAL || t == MPI_FLOAT_INT || t == MPI_SHORT_INT)
        a = 4;
    if (t == MPI_DOUBLE_INT || t == MPI_LONG_INT)
        a = 8;
    if (t == MPI_LONG_DOUBLE_INT)
        a = 16;
    if (a > 16)
        a = 16;
    if (a < 1)
        a = 1;
    return a;
}

/* Largest alignment among the basic types a type is made of (struct
 * padding). Stored nowhere: recomputed from the contents when needed. */
static MPI_Count type_align(halo_dtype_t *t)
{
    if (t->flags & HALO_DT_PREDEFINED)
        return align_of_basic(halo_dtype_handle(t));
    MPI_Count a = 1;
    for (int i = 0; i < t->nd; i++) {
        MPI_Count c = type_align(halo_dtype_ptr(t->types[i]));
        if (c > a)
            a = c;
    }
    return a;
}

static halo_dtype_t *build(const piece_t *p, MPI_Count n, int combiner, int pad_struct)
{
    halo_dtype_t *t = halo_obj_alloc(HALO_KIND_DTYPE);
    if (!t)
        halo_fatal("out of datatype objects");
    t->combiner = combiner;
    blist_t bl = {0};
    MPI_Count size = 0;
    bool have = false, have_true = false;
    MPI_Count lb = 0, ub = 0, tlb = 0, tub = 0;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    bool mixed = false;
    MPI_Count align = 1;
    for (MPI_Count i = 0; i < n; i++) {
        halo_dtype_t *c = p[i].child;
        MPI_Count cnt = p[i].count;
        if (cnt <= 0)
            continue;
        size += cnt * c->size;
        for (int e = 0; e < 2; e++) {
            MPI_Count base = p[i].disp + (e ? (cnt - 1) * c->extent : 0);
            if (!have || base + c->lb < lb)
                lb = base + c->lb;
            if (!have || base + c->ub > ub)
                ub = base + c->ub;
            have = true;
            if (c->size > 0) {
                if (!have_true || base + c->true_lb < tlb)
                    tlb = base + c->true_lb;
                if (!have_true || base + c->true_ub > tub)
                    tub = base + c->true_ub;
                have_true = true;
            }
        }
        if (c->size > 0) {
            if (basic == MPI_DATATYPE_NULL && !mixed)
                basic = c->basic;
            if (c->basic != basic)
                mixed = true;
        }
        if (pad_struct) {
            MPI_Count a = type_align(c);
            if (a > align)
                align = a;
        }
        /* Runs of this piece: a child that is one run as long as its extent
         * repeats into one run. */
        if (c->nblocks == 1 && c->blocks[0].len == c->extent) {
            blist_add(&bl, p[i].disp + c->blocks[0].off, cnt * c->extent);
        } else {
            for (MPI_Count k = 0; k < cnt; k++)
                for (MPI_Count b = 0; b < c->nblocks; b++)
                    blist_add(&bl, p[i].disp + k * c->extent + c->blocks[b].off, c->blocks[b].len);
        }
    }
    if (pad_struct && have) {
        MPI_Count ext = ub - lb;
        if (ext % align)
            ub += align - ext % align;
    }
    t->size = size;
    t->lb = have ? lb : 0;
    t->ub = have ? ub : 0;
    t->extent = t->ub - t->lb;
    t->true_lb = have_true ? tlb : 0;
    t->true_ub = have_true ? tub : 0;
    t->basic = mixed ? MPI_DATATYPE_NULL : basic;
    t->basic_count = (t->basic != MPI_DATATYPE_NULL && size > 0) ? size / halo_dtype_ptr(t->basic)->size : 0;
    if (size == 0)
        t->basic_count = 0;
    if (bl.n == 1) {
        t->one_block = bl.v[0];
        t->blocks = &t->one_block;
        free(bl.v);
    } else {
        t->blocks = bl.v;
    }
    t->nblocks = bl.n;
    if (bl.n == 0) {
        t->one_block = (halo_dt_block_t){0, 0, 0};
        t->blocks = &t->one_block;
        t->nblocks = 1;
    }
    if (t->nblocks == 1 && t->blocks[0].off == 0 && t->blocks[0].len == size && size == t->extent &&
        t->lb == 0)
        t->flags |= HALO_DT_CONTIG;
    if (size == 0 && t->extent == 0)
        t->flags |= HALO_DT_CONTIG;
    return t;
}

/* Records the envelope and contents and takes references on the types. */
static void record(halo_dtype_t *t, int ni, const int *ints, int na, const MPI_Aint *aints, int nc,
                   const MPI_Count *counts, int nd, const MPI_Datatype *types)
{
    t->ni = ni;
    t->na = na;
    t->nc = nc;
    t->nd = nd;
    if (ni) {
        t->ints = halo_malloc((size_t)ni * sizeof(int));
        memcpy(t->ints, ints, (size_t)ni * sizeof(int));
    }
    if (na) {
        t->aints = halo_malloc((size_t)na * sizeof(MPI_Aint));
        memcpy(t->aints, aints, (size_t)na * sizeof(MPI_Aint));
    }
    if (nc) {
        t->counts = halo_malloc((size_t)nc * sizeof(MPI_Count));
        memcpy(t->counts, counts, (size_t)nc * sizeof(MPI_Count));
    }
    if (nd) {
        t->types = halo_malloc((size_t)nd * sizeof(MPI_Datatype));
        memcpy(t->types, types, (size_t)nd * sizeof(MPI_Datatype));
        for (int i = 0; i < nd; i++)
            halo_obj_ref(halo_dtype_ptr(types[i]));
    }
}

static int check_old(MPI_Datatype t, const char *arg, halo_dtype_t **out)
{
    if (t == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(%s=MPI_DATATYPE_NULL): a datatype is required", arg);
    *out = halo_dtype_get(t);
    if (!*out)
        return halo_err(MPI_ERR_TYPE, "(%s=%p): not a valid datatype", arg, (void *)t);
    return MPI_SUCCESS;
}

static int check_count(MPI_Count c, const char *arg)
{
    if (c < 0)
        return halo_err(MPI_ERR_COUNT, "(%s=%lld): must be non-negative", arg, (long long)c);
    return MPI_SUCCESS;
}

static int out(halo_dtype_t *t, MPI_Datatype *newtype)
{
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- contiguous, vector */

static int contiguous(MPI_Count count, MPI_Datatype old, MPI_Datatype *newtype, int big)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")))
        return rc;
    piece_t p = {0, o, count};
    halo_dtype_t *t = build(&p, 1, MPI_COMBINER_CONTIGUOUS, 0);
    int ci = (int)count;
    if (big)
        record(t, 0, NULL, 0, NULL, 1, &count, 1, &old);
    else
        record(t, 1, &ci, 0, NULL, 0, NULL, 1, &old);
    return out(t, newtype);
}

int halo_api_type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, newtype, 0);
}
int halo_api_type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, newtype, 1);
}

static int vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride_bytes, MPI_Datatype old,
                  MPI_Datatype *newtype, int combiner, const int *ints, int ni, const MPI_Aint *aints,
                  int na, const MPI_Count *counts, int nc)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")) || (rc = check_count(blocklength, "blocklength")))
        return rc;
    piece_t *p = halo_malloc((size_t)(count ? count : 1) * sizeof *p);
    for (MPI_Count i = 0; i < count; i++)
        p[i] = (piece_t){i * stride_bytes, o, blocklength};
    halo_dtype_t *t = build(p, count, combiner, 0);
    free(p);
    record(t, ni, ints, na, aints, nc, counts, 1, &old);
    return out(t, newtype);
}

int halo_api_type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    halo_dtype_t *o = halo_dtype_get(oldtype);
    int ints[3] = {count, blocklength, stride};
    return vector(count, blocklength, (MPI_Count)stride * (o ? o->extent : 0), oldtype, newtype,
                  MPI_COMBINER_VECTOR, ints, 3, NULL, 0, NULL, 0);
}
int halo_api_type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    halo_dtype_t *o = halo_dtype_get(oldtype);
    MPI_Count c[3] = {count, blocklength, stride};
    return vector(count, blocklength, stride * (o ? o->extent : 0), oldtype, newtype,
                  MPI_COMBINER_VECTOR, NULL, 0, NULL, 0, c, 3);
}
int halo_api_type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                 MPI_Datatype *newtype)
{
    int ints[2] = {count, blocklength};
    return vector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_HVECTOR, ints, 2, &stride, 1,
                  NULL, 0);
}
int halo_api_type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blocklength, stride};
    return vector(count, blocklength, stride, oldtype, newtype, MPI_COMBINER_HVECTOR, NULL, 0, NULL, 0, c, 3);
}

/* ---------------------------------------------------------------- indexed family */

/* blens == NULL: every block has length blen0. Displacements in elements
 * of oldtype (disp_elems) or bytes. */
static int indexed(MPI_Count count, const MPI_Count *blens, MPI_Count blen0, const MPI_Count *disps,
                   int disp_bytes, MPI_Datatype old, MPI_Datatype *newtype, int combiner,
                   const int *ints, int ni, const MPI_Aint *aints, int na, const MPI_Count *counts, int nc)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")))
        return rc;
    piece_t *p = halo_malloc((size_t)(count ? count : 1) * sizeof *p);
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Count bl = blens ? blens[i] : blen0;
        if (bl < 0) {
            free(p);
            return halo_err(MPI_ERR_ARG, "(array_of_blocklengths[%lld]=%lld): must be non-negative",
                            (long long)i, (long long)bl);
        }
        p[i] = (piece_t){disp_bytes ? disps[i] : disps[i] * o->extent, o, bl};
    }
    halo_dtype_t *t = build(p, count, combiner, 0);
    free(p);
    record(t, ni, ints, na, aints, nc, counts, 1, &old);
    return out(t, newtype);
}

static MPI_Count *widen_int(int n, const int *v)
{
    MPI_Count *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

static MPI_Count *widen_aint(int n, const MPI_Aint *v)
{
    MPI_Count *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    for (int i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

int halo_api_type_indexed(int count, const int bl[], const int disp[], MPI_Datatype oldtype,
                          MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%d): must be non-negative", count);
    MPI_Count *b = widen_int(count, bl), *d = widen_int(count, disp);
    int *ints = halo_malloc((size_t)(2 * count + 1) * sizeof(int));
    ints[0] = count;
    memcpy(ints + 1, bl, (size_t)count * sizeof(int));
    memcpy(ints + 1 + count, disp, (size_t)count * sizeof(int));
    int rc = indexed(count, b, 0, d, 0, oldtype, newtype, MPI_COMBINER_INDEXED, ints, 2 * count + 1,
                     NULL, 0, NULL, 0);
    free(b);
    free(d);
    free(ints);
    return rc;
}

int halo_api_type_indexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[],
                            MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    MPI_Count *c = halo_malloc((size_t)(2 * count + 1) * sizeof(MPI_Count));
    c[0] = count;
    memcpy(c + 1, bl, (size_t)count * sizeof(MPI_Count));
    memcpy(c + 1 + count, disp, (size_t)count * sizeof(MPI_Count));
    int rc = indexed(count, bl, 0, disp, 0, oldtype, newtype, MPI_COMBINER_INDEXED, NULL, 0, NULL, 0, c,
                     (int)(2 * count + 1));
    free(c);
    return rc;
}

int halo_api_type_create_hindexed(int count, const int bl[], const MPI_Aint disp[], MPI_Datatype oldtype,
                                  MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%d): must be non-negative", count);
    MPI_Count *b = widen_int(count, bl), *d = widen_aint(count, disp);
    int *ints = halo_malloc((size_t)(count + 1) * sizeof(int));
    ints[0] = count;
    memcpy(ints + 1, bl, (size_t)count * sizeof(int));
    int rc = indexed(count, b, 0, d, 1, oldtype, newtype, MPI_COMBINER_HINDEXED, ints, count + 1, disp,
                     count, NULL, 0);
    free(b);
    free(d);
    free(ints);
    return rc;
}

int halo_api_type_create_hindexed_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    MPI_Count *c = halo_malloc((size_t)(2 * count + 1) * sizeof(MPI_Count));
    c[0] = count;
    memcpy(c + 1, bl, (size_t)count * sizeof(MPI_Count));
    memcpy(c + 1 + count, disp, (size_t)count * sizeof(MPI_Count));
    int rc = indexed(count, bl, 0, disp, 1, oldtype, newtype, MPI_COMBINER_HINDEXED, NULL, 0, NULL, 0, c,
                     (int)(2 * count + 1));
    free(c);
    return rc;
}

int halo_api_type_create_indexed_block(int count, int blocklength, const int disp[], MPI_Datatype oldtype,
                                       MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%d): must be non-negative", count);
    if (blocklength < 0)
        return halo_err(MPI_ERR_ARG, "(blocklength=%d): must be non-negative", blocklength);
    MPI_Count *d = widen_int(count, disp);
    int *ints = halo_malloc((size_t)(count + 2) * sizeof(int));
    ints[0] = count;
    ints[1] = blocklength;
    memcpy(ints + 2, disp, (size_t)count * sizeof(int));
    int rc = indexed(count, NULL, blocklength, d, 0, oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK, ints,
                     count + 2, NULL, 0, NULL, 0);
    free(d);
    free(ints);
    return rc;
}

int halo_api_type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disp[],
                                         MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    MPI_Count *c = halo_malloc((size_t)(count + 2) * sizeof(MPI_Count));
    c[0] = count;
    c[1] = blocklength;
    memcpy(c + 2, disp, (size_t)count * sizeof(MPI_Count));
    int rc = indexed(count, NULL, blocklength, disp, 0, oldtype, newtype, MPI_COMBINER_INDEXED_BLOCK,
                     NULL, 0, NULL, 0, c, (int)(count + 2));
    free(c);
    return rc;
}

int halo_api_type_create_hindexed_block(int count, int blocklength, const MPI_Aint disp[],
                                        MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%d): must be non-negative", count);
    if (blocklength < 0)
        return halo_err(MPI_ERR_ARG, "(blocklength=%d): must be non-negative", blocklength);
    MPI_Count *d = widen_aint(count, disp);
    int ints[2] = {count, blocklength};
    int rc = indexed(count, NULL, blocklength, d, 1, oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK, ints,
                     2, disp, count, NULL, 0);
    free(d);
    return rc;
}

int halo_api_type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength, const MPI_Count disp[],
                                          MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    MPI_Count *c = halo_malloc((size_t)(count + 2) * sizeof(MPI_Count));
    c[0] = count;
    c[1] = blocklength;
    memcpy(c + 2, disp, (size_t)count * sizeof(MPI_Count));
    int rc = indexed(count, NULL, blocklength, disp, 1, oldtype, newtype, MPI_COMBINER_HINDEXED_BLOCK,
                     NULL, 0, NULL, 0, c, (int)(count + 2));
    free(c);
    return rc;
}

/* ---------------------------------------------------------------- struct */

static int create_struct(MPI_Count count, const MPI_Count *bl, const MPI_Count *disp,
                         const MPI_Datatype *types, MPI_Datatype *newtype, const int *ints, int ni,
                         const MPI_Aint *aints, int na, const MPI_Count *counts, int nc)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    piece_t *p = halo_malloc((size_t)(count ? count : 1) * sizeof *p);
    for (MPI_Count i = 0; i < count; i++) {
        halo_dtype_t *o;
        char arg[64];
        snprintf(arg, sizeof arg, "array_of_types[%lld]", (long long)i);
        int rc = check_old(types[i], arg, &o);
        if (rc == MPI_SUCCESS && bl[i] < 0)
            rc = halo_err(MPI_ERR_ARG, "(array_of_blocklengths[%lld]=%lld): must be non-negative",
                          (long long)i, (long long)bl[i]);
        if (rc) {
            free(p);
            return rc;
        }
        p[i] = (piece_t){disp[i], o, bl[i]};
    }
    halo_dtype_t *t = build(p, count, MPI_COMBINER_STRUCT, 1);
    free(p);
    record(t, ni, ints, na, aints, nc, counts, (int)count, types);
    return out(t, newtype);
}

int halo_api_type_create_struct(int count, const int bl[], const MPI_Aint disp[], const MPI_Datatype types[],
                                MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%d): must be non-negative", count);
    MPI_Count *b = widen_int(count, bl), *d = widen_aint(count, disp);
    int *ints = halo_malloc((size_t)(count + 1) * sizeof(int));
    ints[0] = count;
    memcpy(ints + 1, bl, (size_t)count * sizeof(int));
    int rc = create_struct(count, b, d, types, newtype, ints, count + 1, disp, count, NULL, 0);
    free(b);
    free(d);
    free(ints);
    return rc;
}

int halo_api_type_create_struct_c(MPI_Count count, const MPI_Count bl[], const MPI_Count disp[],
                                  const MPI_Datatype types[], MPI_Datatype *newtype)
{
    if (count < 0)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): must be non-negative", (long long)count);
    MPI_Count *c = halo_malloc((size_t)(2 * count + 1) * sizeof(MPI_Count));
    c[0] = count;
    memcpy(c + 1, bl, (size_t)count * sizeof(MPI_Count));
    memcpy(c + 1 + count, disp, (size_t)count * sizeof(MPI_Count));
    int rc = create_struct(count, bl, disp, types, newtype, NULL, 0, NULL, 0, c, (int)(2 * count + 1));
    free(c);
    return rc;
}

/* ---------------------------------------------------------------- resized, dup */

static int resized(MPI_Datatype old, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype,
                   const MPI_Aint *aints, int na, const MPI_Count *counts, int nc)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc)
        return rc;
    piece_t p = {0, o, 1};
    halo_dtype_t *t = build(&p, 1, MPI_COMBINER_RESIZED, 0);
    t->lb = lb;
    t->ub = lb + extent;
    t->extent = extent;
    t->flags &= ~(uint32_t)HALO_DT_CONTIG;
    if (t->nblocks == 1 && t->blocks[0].off == 0 && t->blocks[0].len == t->size && t->size == extent && lb == 0)
        t->flags |= HALO_DT_CONTIG;
    record(t, 0, NULL, na, aints, nc, counts, 1, &old);
    return out(t, newtype);
}

int halo_api_type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype)
{
    MPI_Aint a[2] = {lb, extent};
    return resized(oldtype, lb, extent, newtype, a, 2, NULL, 0);
}

int halo_api_type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent, MPI_Datatype *newtype)
{
    MPI_Count c[2] = {lb, extent};
    return resized(oldtype, lb, extent, newtype, NULL, 0, c, 2);
}

int halo_api_type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    halo_dtype_t *o;
    int rc = check_old(oldtype, "oldtype", &o);
    if (rc)
        return rc;
    piece_t p = {0, o, 1};
    halo_dtype_t *t = build(&p, 1, MPI_COMBINER_DUP, 0);
    t->lb = o->lb;
    t->ub = o->ub;
    t->extent = o->extent;
    t->true_lb = o->true_lb;
    t->true_ub = o->true_ub;
    t->flags = (o->flags & (HALO_DT_CONTIG | HALO_DT_COMMITTED | HALO_DT_PAIR));
    t->basic = o->basic;
    t->basic_count = o->basic_count;
    record(t, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype);
    rc = halo_attr_copy_all(HALO_KIND_DTYPE, o, o->attrs, &t->attrs);
    if (rc) {
        halo_dtype_release(t);
        return rc;
    }
    return out(t, newtype);
}

/* ---------------------------------------------------------------- subarray, darray */

/* Element offsets (in oldtype extents) of a multidimensional selection:
 * for each dimension the owned global indices, as runs; enumerated in the
 * order of the array's storage. */
typedef struct dim_sel {
    MPI_Count n;          /* runs */
    MPI_Count *start, *len;
} dim_sel_t;

static void sel_add(dim_sel_t *s, MPI_Count start, MPI_Count len)
{
    if (len <= 0)
        return;
    if (s->n > 0 && s->start[s->n - 1] + s->len[s->n - 1] == start) {
        s->len[s->n - 1] += len;
        return;
    }
    s->start = halo_realloc(s->start, (size_t)(s->n + 1) * sizeof(MPI_Count));
    s->len = halo_realloc(s->len, (size_t)(s->n + 1) * sizeof(MPI_Count));
    s->start[s->n] = start;
    s->len[s->n] = len;
    s->n++;
}

/* Builds pieces for the selection over an array of dims gsizes (storage
 * order given by `order`), then the type resized to the full array. */
static halo_dtype_t *build_selection(int ndims, const MPI_Count *gsizes, dim_sel_t *sel, int order,
                                     halo_dtype_t *o, int combiner)
{
    /* Dimension visit order: slowest first. */
    int *dim = halo_malloc((size_t)ndims * sizeof(int));
    for (int i = 0; i < ndims; i++)
        dim[i] = order == MPI_ORDER_C ? i : ndims - 1 - i;
    MPI_Count *stride = halo_malloc((size_t)ndims * sizeof(MPI_Count));
    MPI_Count total = 1;
    for (int i = ndims - 1; i >= 0; i--) {
        stride[dim[i]] = total;
        total *= gsizes[dim[i]];
    }
    /* Odometer over runs of the outer dimensions and indices within them;
     * the innermost dimension contributes whole runs. */
    int inner = dim[ndims - 1];
    MPI_Count npieces = 0, cap = 16;
    piece_t *p = halo_malloc((size_t)cap * sizeof *p);
    MPI_Count *run = halo_calloc((size_t)ndims, sizeof(MPI_Count));
    MPI_Count *idx = halo_calloc((size_t)ndims, sizeof(MPI_Count));
    bool empty = false;
    for (int i = 0; i < ndims; i++)
        if (sel[i].n == 0)
            empty = true;
    while (!empty) {
        MPI_Count off = 0;
        for (int i = 0; i < ndims - 1; i++) {
            int d = dim[i];
            off += (sel[d].start[run[d]] + idx[d]) * stride[d];
        }
        for (MPI_Count r = 0; r < sel[inner].n; r++) {
            if (npieces == cap) {
                cap *= 2;
                p = halo_realloc(p, (size_t)cap * sizeof *p);
            }
            p[npieces++] = (piece_t){(off + sel[inner].start[r] * stride[inner]) * o->extent, o,
                                     sel[inner].len[r]};
        }
        /* Next position of the outer dimensions, fastest varying last. */
        int i = ndims - 2;
        for (; i >= 0; i--) {
            int d = dim[i];
            if (++idx[d] < sel[d].len[run[d]])
                break;
            idx[d] = 0;
            if (++run[d] < sel[d].n)
                break;
            run[d] = 0;
        }
        if (i < 0)
            break;
    }
    halo_dtype_t *t = build(p, npieces, combiner, 0);
    /* The selection keeps the full array as its extent. */
    t->lb = 0;
    t->ub = total * o->extent;
    t->extent = t->ub;
    t->flags &= ~(uint32_t)HALO_DT_CONTIG;
    if (t->nblocks == 1 && t->blocks[0].off == 0 && t->blocks[0].len == t->size && t->size == t->extent)
        t->flags |= HALO_DT_CONTIG;
    free(p);
    free(run);
    free(idx);
    free(dim);
    free(stride);
    return t;
}

static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                    int order, MPI_Datatype old, MPI_Datatype *newtype, halo_dtype_t **t_p)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc)
        return rc;
    if (ndims <= 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be positive", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return halo_err(MPI_ERR_ARG, "(order=%d): must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    for (int i = 0; i < ndims; i++) {
        if (sizes[i] <= 0 || subsizes[i] <= 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
            starts[i] > sizes[i] - subsizes[i])
            return halo_err(MPI_ERR_ARG, "(dimension %d: size=%lld, subsize=%lld, start=%lld): need "
                            "0 < subsize <= size and 0 <= start <= size - subsize", i,
                            (long long)sizes[i], (long long)subsizes[i], (long long)starts[i]);
    }
    dim_sel_t *sel = halo_calloc((size_t)ndims, sizeof *sel);
    for (int i = 0; i < ndims; i++)
        sel_add(&sel[i], starts[i], subsizes[i]);
    halo_dtype_t *t = build_selection(ndims, sizes, sel, order, o, MPI_COMBINER_SUBARRAY);
    for (int i = 0; i < ndims; i++) {
        free(sel[i].start);
        free(sel[i].len);
    }
    free(sel);
    *t_p = t;
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

int halo_api_type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                                  int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (ndims <= 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be positive", ndims);
    MPI_Count *s = widen_int(ndims, sizes), *ss = widen_int(ndims, subsizes), *st = widen_int(ndims, starts);
    halo_dtype_t *t;
    int rc = subarray(ndims, s, ss, st, order, oldtype, newtype, &t);
    if (rc == MPI_SUCCESS) {
        int *ints = halo_malloc((size_t)(3 * ndims + 2) * sizeof(int));
        ints[0] = ndims;
        memcpy(ints + 1, sizes, (size_t)ndims * sizeof(int));
        memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof(int));
        memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int));
        ints[3 * ndims + 1] = order;
        record(t, 3 * ndims + 2, ints, 0, NULL, 0, NULL, 1, &oldtype);
        free(ints);
    }
    free(s);
    free(ss);
    free(st);
    return rc;
}

int halo_api_type_create_subarray_c(int ndims, const MPI_Count sizes[], const MPI_Count subsizes[],
                                    const MPI_Count starts[], int order, MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    halo_dtype_t *t;
    int rc = subarray(ndims, sizes, subsizes, starts, order, oldtype, newtype, &t);
    if (rc == MPI_SUCCESS) {
        int ints[2] = {ndims, order};
        MPI_Count *c = halo_malloc((size_t)(3 * ndims) * sizeof(MPI_Count));
        memcpy(c, sizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(c + ndims, subsizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(c + 2 * ndims, starts, (size_t)ndims * sizeof(MPI_Count));
        record(t, 2, ints, 0, NULL, 3 * ndims, c, 1, &oldtype);
        free(c);
    }
    return rc;
}

static int darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                  const int *dargs, const int *psizes, int order, MPI_Datatype old, halo_dtype_t **t_p)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc)
        return rc;
    if (ndims <= 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be positive", ndims);
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)
        return halo_err(MPI_ERR_ARG, "(order=%d): must be MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
    int nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        if (psizes[i] <= 0)
            return halo_err(MPI_ERR_ARG, "(array_of_psizes[%d]=%d): must be positive", i, psizes[i]);
        nprocs *= psizes[i];
    }
    if (nprocs != size || rank < 0 || rank >= size)
        return halo_err(MPI_ERR_ARG, "(size=%d, rank=%d): the process grid has %d processes", size, rank, nprocs);
    /* Coordinates of rank in the process grid, row-major (C order). */
    int *coord = halo_malloc((size_t)ndims * sizeof(int));
    for (int i = ndims - 1, r = rank; i >= 0; i--) {
        coord[i] = r % psizes[i];
        r /= psizes[i];
    }
    dim_sel_t *sel = halo_calloc((size_t)ndims, sizeof *sel);
    for (int i = 0; i < ndims && rc == MPI_SUCCESS; i++) {
        MPI_Count g = gsizes[i];
        int P = psizes[i], c = coord[i];
        switch (distribs[i]) {
        case MPI_DISTRIBUTE_NONE:
            if (P != 1)
                rc = halo_err(MPI_ERR_ARG, "(dimension %d): MPI_DISTRIBUTE_NONE needs a process grid size of 1", i);
            else
                sel_add(&sel[i], 0, g);
            break;
        case MPI_DISTRIBUTE_BLOCK: {
            MPI_Count b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + P - 1) / P : dargs[i];
            if (b * P < g || b <= 0) {
                rc = halo_err(MPI_ERR_ARG, "(dimension %d): block size %lld cannot cover %lld elements "
                              "on %d processes", i, (long long)b, (long long)g, P);
                break;
            }
            MPI_Count s = (MPI_Count)c * b, e = s + b < g ? s + b : g;
            sel_add(&sel[i], s, e - s);
            break;
        }
        case MPI_DISTRIBUTE_CYCLIC: {
            MPI_Count k = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            if (k <= 0) {
                rc = halo_err(MPI_ERR_ARG, "(array_of_dargs[%d]=%d): must be positive", i, dargs[i]);
                break;
            }
            for (MPI_Count s = (MPI_Count)c * k; s < g; s += k * P)
                sel_add(&sel[i], s, s + k <= g ? k : g - s);
            break;
        }
        default:
            rc = halo_err(MPI_ERR_ARG, "(array_of_distribs[%d]=%d): not a distribution", i, distribs[i]);
        }
    }
    if (rc == MPI_SUCCESS)
        *t_p = build_selection(ndims, gsizes, sel, order, o, MPI_COMBINER_DARRAY);
    for (int i = 0; i < ndims; i++) {
        free(sel[i].start);
        free(sel[i].len);
    }
    free(sel);
    free(coord);
    return rc;
}

int halo_api_type_create_darray(int size, int rank, int ndims, const int gsizes[], const int distribs[],
                                const int dargs[], const int psizes[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    if (ndims <= 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be positive", ndims);
    MPI_Count *g = widen_int(ndims, gsizes);
    halo_dtype_t *t;
    int rc = darray(size, rank, ndims, g, distribs, dargs, psizes, order, oldtype, &t);
    free(g);
    if (rc)
        return rc;
    int *ints = halo_malloc((size_t)(4 * ndims + 4) * sizeof(int));
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, gsizes, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ndims, distribs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 2 * ndims, dargs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 3 * ndims, psizes, (size_t)ndims * sizeof(int));
    ints[4 * ndims + 3] = order;
    record(t, 4 * ndims + 4, ints, 0, NULL, 0, NULL, 1, &oldtype);
    free(ints);
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

int halo_api_type_create_darray_c(int size, int rank, int ndims, const MPI_Count gsizes[],
                                  const int distribs[], const int dargs[], const int psizes[], int order,
                                  MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    halo_dtype_t *t;
    int rc = darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, oldtype, &t);
    if (rc)
        return rc;
    int *ints = halo_malloc((size_t)(3 * ndims + 4) * sizeof(int));
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    memcpy(ints + 3, distribs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + ndims, dargs, (size_t)ndims * sizeof(int));
    memcpy(ints + 3 + 2 * ndims, psizes, (size_t)ndims * sizeof(int));
    ints[3 * ndims + 3] = order;
    record(t, 3 * ndims + 4, ints, 0, NULL, ndims, gsizes, 1, &oldtype);
    free(ints);
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- Fortran parameterized types */

static int f90_type(int combiner, MPI_Datatype base, const int *ints, int ni, MPI_Datatype *newtype)
{
    /* One cached object per (combiner, parameters): the standard makes these
     * predefined-like (never freed by the user). */
    static struct f90_cache {
        int combiner, ints[2];
        halo_dtype_t *t;
    } cache[64];
    static int ncache;
    for (int i = 0; i < ncache; i++) {
        if (cache[i].combiner == combiner && cache[i].ints[0] == ints[0] &&
            (ni < 2 || cache[i].ints[1] == ints[1])) {
            *newtype = (MPI_Datatype)cache[i].t;
            return MPI_SUCCESS;
        }
    }
    halo_dtype_t *o = halo_dtype_ptr(base);
    piece_t p = {0, o, 1};
    halo_dtype_t *t = build(&p, 1, combiner, 0);
    t->flags |= HALO_DT_COMMITTED;
    t->basic = base;
    t->basic_count = 1;
    record(t, ni, ints, 0, NULL, 0, NULL, 0, NULL);
    snprintf(t->name, sizeof t->name, "%s", o->name);
    if (ncache < (int)HALO_ARRAY_LEN(cache)) {
        cache[ncache].combiner = combiner;
        cache[ncache].ints[0] = ints[0];
        cache[ncache].ints[1] = ni > 1 ? ints[1] : 0;
        cache[ncache].t = t;
        ncache++;
        halo_obj_ref(t);   /* the cache's reference: the type outlives any free */
    }
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

int halo_api_type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    MPI_Datatype b = r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2 : r <= 9 ? MPI_INTEGER4
                   : r <= 18 ? MPI_INTEGER8 : r <= 38 ? MPI_INTEGER16 : MPI_DATATYPE_NULL;
    if (b == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_ARG, "(r=%d): no integer kind has that many decimal digits", r);
    return f90_type(MPI_COMBINER_F90_INTEGER, b, &r, 1, newtype);
}

static MPI_Datatype real_kind(int p, int r, int cplx)
{
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p <= 6 && r <= 37)
        return cplx ? MPI_COMPLEX8 : MPI_REAL4;
    if (p <= 15 && r <= 307)
        return cplx ? MPI_COMPLEX16 : MPI_REAL8;
    if (p <= 33 && r <= 4931)
        return cplx ? MPI_COMPLEX32 : MPI_REAL16;
    return MPI_DATATYPE_NULL;
}

int halo_api_type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    MPI_Datatype b = real_kind(p, r, 0);
    if (b == MPI_DATATYPE_NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return halo_err(MPI_ERR_ARG, "(p=%d, r=%d): no real kind matches", p, r);
    int ints[2] = {p, r};
    return f90_type(MPI_COMBINER_F90_REAL, b, ints, 2, newtype);
}

int halo_api_type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    MPI_Datatype b = real_kind(p, r, 1);
    if (b == MPI_DATATYPE_NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return halo_err(MPI_ERR_ARG, "(p=%d, r=%d): no complex kind matches", p, r);
    int ints[2] = {p, r};
    return f90_type(MPI_COMBINER_F90_COMPLEX, b, ints, 2, newtype);
}

/* Number of basic elements in the first `bytes` packed bytes of one
 * element of a mixed type (Get_elements after a partial receive). */
MPI_Count halo_dt_elements_partial(const halo_dtype_t *dt, MPI_Count bytes)
{
    if (dt->flags & HALO_DT_PREDEFINED)
        return bytes >= dt->size ? 1 : 0;
    if (dt->basic != MPI_DATATYPE_NULL)
        return bytes / halo_dtype_ptr(dt->basic)->size;
    /* Walk the children in type map order. */
    MPI_Count n = 0;
    for (int i = 0; i < dt->nd && bytes > 0; i++) {
        halo_dtype_t *c = halo_dtype_ptr(dt->types[i]);
        /* Struct: the i-th block length; otherwise one child type repeated. */
        MPI_Count reps;
        if (dt->combiner == MPI_COMBINER_STRUCT)
            reps = dt->nc ? dt->counts[1 + i] : dt->ints[1 + i];
        else
            reps = c->size ? dt->size / c->size : 0;
        for (MPI_Count k = 0; k < reps && bytes > 0; k++) {
            if (bytes >= c->size) {
                n += halo_dt_elements_partial(c, c->size);
                bytes -= c->size;
            } else {
                n += halo_dt_elements_partial(c, bytes);
                bytes = 0;
            }
        }
    }
    return n;
}

