/* Derived datatype constructors.
 *
 * Each constructor builds the new type's program from its children's
 * programs (datatype/prog.h: loops stay loops, so a vector costs a few
 * nodes whatever its count), computes the bounds by the standard's rules,
 * and records the envelope and contents exactly as the constructor was
 * called (MPI 5.0, Type_get_envelope/Type_get_contents tables).
 *
 * Bounds. lb is the lowest displacement of the type map and ub the highest
 * end, except that explicit markers win: a resized, subarray or darray
 * type carries lb and ub markers, and a type built from marked children
 * takes its lb (ub) from the markers alone. A struct without ub markers is
 * padded so that its extent is a multiple of the largest alignment of its
 * basic types. An empty type map has no bounds (lb = ub = 0). */
#include "datatype/prog.h"

#include "binding/api_gen.h"
#include "core/attr.h"
#include "core/errors.h"

/* ---------------------------------------------------------------- helpers */

typedef struct bnd {
    bool lo_set, hi_set;
    MPI_Count lo, hi;
} bnd_t;

static void bnd_lo(bnd_t *b, MPI_Count v)
{
    if (!b->lo_set || v < b->lo)
        b->lo = v;
    b->lo_set = true;
}

static void bnd_hi(bnd_t *b, MPI_Count v)
{
    if (!b->hi_set || v > b->hi)
        b->hi = v;
    b->hi_set = true;
}

/* Bounds of n >= 1 instances of c, extent apart, from disp. */
static void inst_range(const halo_dtype_t *c, MPI_Count disp, MPI_Count n, MPI_Count *lo, MPI_Count *hi)
{
    MPI_Count span = (n - 1) * c->extent;
    *lo = disp + c->lb + (span < 0 ? span : 0);
    *hi = disp + c->ub + (span > 0 ? span : 0);
}

/* Whether instances of c bring an lb (ub) into a type map: data does, and
 * so do markers even without data. */
static bool has_lb(const halo_dtype_t *c)
{
    return c->size > 0 || (c->flags & HALO_DT_LB_MARKED);
}
static bool has_ub(const halo_dtype_t *c)
{
    return c->size > 0 || (c->flags & HALO_DT_UB_MARKED);
}

/* Adds instances of a single child type (all constructors but struct). */
static void bnd_add(bnd_t *b, const halo_dtype_t *c, MPI_Count lo, MPI_Count hi)
{
    if (has_lb(c))
        bnd_lo(b, lo);
    if (has_ub(c))
        bnd_hi(b, hi);
}

static halo_dtype_t *dt_new(int combiner)
{
    halo_dtype_t *t = halo_obj_alloc(HALO_KIND_DTYPE);
    if (!t)
        halo_fatal("out of datatype objects");
    t->combiner = combiner;
    t->prog.root = -1;
    return t;
}

/* Completes a new type from its built program, bounds and signature. */
static void dt_done(halo_dtype_t *t, halo_dt_build_t *b, int32_t root, const bnd_t *bd, uint32_t markers,
                    int nsig, const halo_dt_sig_t *sig)
{
    t->size = root >= 0 ? hb_node(b, root)->size : 0;
    hb_finish(b, root, &t->prog);
    /* A bound that nothing sets is 0: only a map of markers alone has one
     * side unset ({(lb, 10)} has extent -10, as in MPICH). */
    t->lb = bd->lo_set ? bd->lo : 0;
    t->ub = bd->hi_set ? bd->hi : 0;
    t->extent = t->ub - t->lb;
    t->flags |= markers;
    if (t->size > 0)
        halo_dt_prog_bounds(&t->prog, &t->true_lb, &t->true_ub);
    else
        t->true_lb = t->true_ub = 0;
    t->sig = halo_malloc((size_t)(nsig > 0 ? nsig : 1) * sizeof *t->sig);
    t->nsig = 0;
    bool mixed = false;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    t->align = 1;
    for (int i = 0; i < nsig; i++) {
        const halo_dtype_t *c = sig[i].type;
        if (c->align > t->align)
            t->align = c->align;
        if (sig[i].reps == 0)
            continue;
        t->sig[t->nsig++] = sig[i];
        t->nelem += sig[i].reps * c->nelem;
        t->ext32_size += sig[i].reps * c->ext32_size;
        if (c->size > 0) {
            if (basic == MPI_DATATYPE_NULL && !mixed)
                basic = c->basic;
            if (c->basic != basic || c->basic == MPI_DATATYPE_NULL)
                mixed = true;
        }
    }
    t->basic = mixed ? MPI_DATATYPE_NULL : basic;
    t->basic_count = t->basic != MPI_DATATYPE_NULL ? t->size / halo_dtype_ptr(t->basic)->size : 0;
    halo_dt_finish(t);
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

static MPI_Count *widen_int(MPI_Count n, const int *v)
{
    MPI_Count *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    for (MPI_Count i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

static MPI_Count *widen_aint(MPI_Count n, const MPI_Aint *v)
{
    MPI_Count *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    for (MPI_Count i = 0; i < n; i++)
        w[i] = v[i];
    return w;
}

/* ---------------------------------------------------------------- contiguous, vector */

/* count blocks of blocklength instances of old, stride_bytes apart. */
static halo_dtype_t *strided(halo_dtype_t *o, MPI_Count count, MPI_Count blocklength, MPI_Count stride_bytes,
                             int combiner)
{
    halo_dtype_t *t = dt_new(combiner);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t inner = hb_loop(&b, 0, blocklength, o->extent, hb_import(&b, o));
    int32_t root = hb_loop(&b, 0, count, stride_bytes, inner);
    bnd_t bd = {0};
    uint32_t markers = 0;
    if (count > 0 && blocklength > 0) {
        MPI_Count lo, hi, span = (count - 1) * stride_bytes;
        inst_range(o, 0, blocklength, &lo, &hi);
        bnd_add(&bd, o, lo + (span < 0 ? span : 0), hi + (span > 0 ? span : 0));
        markers = o->flags & (HALO_DT_LB_MARKED | HALO_DT_UB_MARKED);
    }
    halo_dt_sig_t sig = {o, count * blocklength};
    dt_done(t, &b, root, &bd, markers, 1, &sig);
    return t;
}

static int contiguous(MPI_Count count, MPI_Datatype old, MPI_Datatype *newtype, int big)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")))
        return rc;
    halo_dtype_t *t = strided(o, 1, count, 0, MPI_COMBINER_CONTIGUOUS);
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

/* stride in elements of oldtype (elem_stride) or in bytes. */
static int vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, int elem_stride, MPI_Datatype old,
                  MPI_Datatype *newtype, int combiner, const int *ints, int ni, const MPI_Aint *aints,
                  int na, const MPI_Count *counts, int nc)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")) || (rc = check_count(blocklength, "blocklength")))
        return rc;
    halo_dtype_t *t = strided(o, count, blocklength, elem_stride ? stride * o->extent : stride, combiner);
    record(t, ni, ints, na, aints, nc, counts, 1, &old);
    return out(t, newtype);
}

int halo_api_type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int ints[3] = {count, blocklength, stride};
    return vector(count, blocklength, stride, 1, oldtype, newtype, MPI_COMBINER_VECTOR, ints, 3, NULL, 0,
                  NULL, 0);
}
int halo_api_type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride, MPI_Datatype oldtype,
                           MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blocklength, stride};
    return vector(count, blocklength, stride, 1, oldtype, newtype, MPI_COMBINER_VECTOR, NULL, 0, NULL, 0, c, 3);
}
int halo_api_type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                                 MPI_Datatype *newtype)
{
    int ints[2] = {count, blocklength};
    return vector(count, blocklength, stride, 0, oldtype, newtype, MPI_COMBINER_HVECTOR, ints, 2, &stride, 1,
                  NULL, 0);
}
int halo_api_type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    MPI_Count c[3] = {count, blocklength, stride};
    return vector(count, blocklength, stride, 0, oldtype, newtype, MPI_COMBINER_HVECTOR, NULL, 0, NULL, 0, c, 3);
}

/* ---------------------------------------------------------------- indexed family */

/* Block i: blens[i] (or blen0 when blens is NULL) instances of old from
 * displacement disps[i], in elements of old or in bytes. */
static int indexed(MPI_Count count, const MPI_Count *blens, MPI_Count blen0, const MPI_Count *disps,
                   int disp_bytes, MPI_Datatype old, MPI_Datatype *newtype, int combiner,
                   const int *ints, int ni, const MPI_Aint *aints, int na, const MPI_Count *counts, int nc)
{
    halo_dtype_t *o;
    int rc = check_old(old, "oldtype", &o);
    if (rc || (rc = check_count(count, "count")))
        return rc;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Count bl = blens ? blens[i] : blen0;
        if (bl < 0)
            return halo_err(MPI_ERR_ARG, "(%s[%lld]=%lld): must be non-negative",
                            blens ? "array_of_blocklengths" : "blocklength", (long long)(blens ? i : 0),
                            (long long)bl);
    }
    halo_dtype_t *t = dt_new(combiner);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t croot = hb_import(&b, o);
    bnd_t bd = {0};
    MPI_Count reps = 0, ext = o->extent;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Count bl = blens ? blens[i] : blen0, lo, hi;
        if (bl == 0)
            continue;
        inst_range(o, disp_bytes ? disps[i] : disps[i] * ext, bl, &lo, &hi);
        bnd_add(&bd, o, lo, hi);
        reps += bl;
    }
    int32_t root = -1;
    const halo_dt_node_t *cr = croot >= 0 ? hb_node(&b, croot) : NULL;
    if (cr && cr->kind == HALO_DT_RUN && cr->size == ext) {
        /* Contiguous old type: every block is one run. */
        MPI_Count *off = halo_malloc((size_t)(count ? count : 1) * sizeof *off);
        MPI_Count *len = halo_malloc((size_t)(count ? count : 1) * sizeof *len);
        MPI_Count c0 = cr->off;
        for (MPI_Count i = 0; i < count; i++) {
            off[i] = (disp_bytes ? disps[i] : disps[i] * ext) + c0;
            len[i] = (blens ? blens[i] : blen0) * ext;
        }
        root = hb_runs(&b, off, len, count);
        free(off);
        free(len);
    } else if (croot >= 0) {
        int32_t *nodes = halo_malloc((size_t)(count ? count : 1) * sizeof *nodes);
        for (MPI_Count i = 0; i < count; i++)
            nodes[i] = hb_loop(&b, disp_bytes ? disps[i] : disps[i] * ext, blens ? blens[i] : blen0, ext, croot);
        root = hb_list(&b, nodes, count);
        free(nodes);
    }
    uint32_t markers = reps > 0 ? o->flags & (HALO_DT_LB_MARKED | HALO_DT_UB_MARKED) : 0;
    halo_dt_sig_t sig = {o, reps};
    dt_done(t, &b, root, &bd, markers, 1, &sig);
    record(t, ni, ints, na, aints, nc, counts, 1, &old);
    return out(t, newtype);
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
    halo_dtype_t **tv = halo_malloc((size_t)(count ? count : 1) * sizeof *tv);
    bool lbm = false, ubm = false;
    for (MPI_Count i = 0; i < count; i++) {
        char arg[64];
        snprintf(arg, sizeof arg, "array_of_types[%lld]", (long long)i);
        int rc = check_old(types[i], arg, &tv[i]);
        if (rc == MPI_SUCCESS && bl[i] < 0)
            rc = halo_err(MPI_ERR_ARG, "(array_of_blocklengths[%lld]=%lld): must be non-negative",
                          (long long)i, (long long)bl[i]);
        if (rc) {
            free(tv);
            return rc;
        }
        if (bl[i] > 0) {
            lbm |= (tv[i]->flags & HALO_DT_LB_MARKED) != 0;
            ubm |= (tv[i]->flags & HALO_DT_UB_MARKED) != 0;
        }
    }
    halo_dtype_t *t = dt_new(MPI_COMBINER_STRUCT);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t *nodes = halo_malloc((size_t)(count ? count : 1) * sizeof *nodes);
    halo_dt_sig_t *sig = halo_malloc((size_t)(count ? count : 1) * sizeof *sig);
    bnd_t bd = {0};
    for (MPI_Count i = 0; i < count; i++) {
        halo_dtype_t *c = tv[i];
        nodes[i] = bl[i] > 0 ? hb_loop(&b, disp[i], bl[i], c->extent, hb_import(&b, c)) : -1;
        sig[i] = (halo_dt_sig_t){c, bl[i]};
        if (bl[i] == 0)
            continue;
        MPI_Count lo, hi;
        inst_range(c, disp[i], bl[i], &lo, &hi);
        if (lbm ? (c->flags & HALO_DT_LB_MARKED) != 0 : has_lb(c))
            bnd_lo(&bd, lo);
        if (ubm ? (c->flags & HALO_DT_UB_MARKED) != 0 : has_ub(c))
            bnd_hi(&bd, hi);
    }
    int32_t root = hb_list(&b, nodes, count);
    free(nodes);
    MPI_Count align = 1;
    for (MPI_Count i = 0; i < count; i++)
        if (bl[i] > 0 && tv[i]->align > align)
            align = tv[i]->align;
    if (!ubm && bd.lo_set && bd.hi_set) {
        MPI_Count ext = bd.hi - bd.lo, r = ext % align;
        if (r)
            bd.hi += align - r;
    }
    uint32_t markers = (lbm ? HALO_DT_LB_MARKED : 0) | (ubm ? HALO_DT_UB_MARKED : 0);
    dt_done(t, &b, root, &bd, markers, (int)count, sig);
    free(sig);
    free(tv);
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
    halo_dtype_t *t = dt_new(MPI_COMBINER_RESIZED);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t root = hb_import(&b, o);
    bnd_t bd = {true, true, lb, lb + extent};
    halo_dt_sig_t sig = {o, 1};
    dt_done(t, &b, root, &bd, HALO_DT_LB_MARKED | HALO_DT_UB_MARKED, 1, &sig);
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
    /* The same layout and committed state; contents: the old type. */
    halo_dtype_t *t = halo_dt_clone(o);
    for (int i = 0; i < t->nd; i++)
        halo_dtype_release(halo_dtype_ptr(t->types[i]));
    free(t->ints);
    free(t->aints);
    free(t->counts);
    free(t->types);
    t->ints = NULL;
    t->aints = NULL;
    t->counts = NULL;
    t->types = NULL;
    t->combiner = MPI_COMBINER_DUP;
    t->flags = o->flags & (HALO_DT_CONTIG | HALO_DT_COMMITTED | HALO_DT_PAIR | HALO_DT_LB_MARKED |
                           HALO_DT_UB_MARKED);
    free(t->sig);
    t->sig = halo_malloc(sizeof *t->sig);
    t->sig[0] = (halo_dt_sig_t){o, 1};
    t->nsig = 1;
    record(t, 0, NULL, 0, NULL, 0, NULL, 1, &oldtype);
    rc = halo_attr_copy_all(HALO_KIND_DTYPE, o, o->attrs, &t->attrs);
    if (rc) {
        /* A copy callback failed: the copies made so far are deleted and
         * the caller gets MPI_DATATYPE_NULL with the callback's error. */
        halo_attr_delete_all(HALO_KIND_DTYPE, t, &t->attrs);
        halo_dtype_release(t);
        *newtype = MPI_DATATYPE_NULL;
        return rc;
    }
    return out(t, newtype);
}

/* ---------------------------------------------------------------- subarray, darray */

/* The indices a process owns along one dimension, as node-building steps:
 * `nfull` blocks of `blk` indices, `gap` indices apart, from `start`, then
 * (when rem > 0) `rem` indices from `last`. */
typedef struct dim_sel {
    MPI_Count start, blk, nfull, gap;
    MPI_Count last, rem;
} dim_sel_t;

static MPI_Count sel_count(const dim_sel_t *s)
{
    return s->nfull * s->blk + s->rem;
}

/* Builds the selection of an array of dims gsizes (storage order `order`),
 * resized to the whole array: lb 0, extent prod(gsizes) * extent(old). */
static halo_dtype_t *build_selection(int ndims, const MPI_Count *gsizes, const dim_sel_t *sel, int order,
                                     halo_dtype_t *o, int combiner)
{
    halo_dtype_t *t = dt_new(combiner);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t node = hb_import(&b, o);
    MPI_Count stride = o->extent, reps = 1;
    /* From the fastest-varying dimension out. */
    for (int k = ndims - 1; k >= 0; k--) {
        int d = order == MPI_ORDER_C ? k : ndims - 1 - k;
        const dim_sel_t *s = &sel[d];
        int32_t parts[2];
        parts[0] = hb_loop(&b, s->start * stride, s->nfull, s->gap * stride, hb_loop(&b, 0, s->blk, stride, node));
        parts[1] = hb_loop(&b, s->last * stride, s->rem, stride, node);
        node = hb_list(&b, parts, 2);
        stride *= gsizes[d];
        reps *= sel_count(s);
    }
    bnd_t bd = {true, true, 0, stride};
    halo_dt_sig_t sig = {o, reps};
    dt_done(t, &b, node, &bd, HALO_DT_LB_MARKED | HALO_DT_UB_MARKED, 1, &sig);
    return t;
}

static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes, const MPI_Count *starts,
                    int order, MPI_Datatype old, halo_dtype_t **t_p)
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
        sel[i] = (dim_sel_t){starts[i], subsizes[i], 1, 0, 0, 0};
    *t_p = build_selection(ndims, sizes, sel, order, o, MPI_COMBINER_SUBARRAY);
    free(sel);
    return MPI_SUCCESS;
}

int halo_api_type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[],
                                  int order, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    if (ndims <= 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be positive", ndims);
    MPI_Count *s = widen_int(ndims, sizes), *ss = widen_int(ndims, subsizes), *st = widen_int(ndims, starts);
    halo_dtype_t *t;
    int rc = subarray(ndims, s, ss, st, order, oldtype, &t);
    if (rc == MPI_SUCCESS) {
        int *ints = halo_malloc((size_t)(3 * ndims + 2) * sizeof(int));
        ints[0] = ndims;
        memcpy(ints + 1, sizes, (size_t)ndims * sizeof(int));
        memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof(int));
        memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int));
        ints[3 * ndims + 1] = order;
        record(t, 3 * ndims + 2, ints, 0, NULL, 0, NULL, 1, &oldtype);
        free(ints);
        *newtype = (MPI_Datatype)t;
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
    int rc = subarray(ndims, sizes, subsizes, starts, order, oldtype, &t);
    if (rc == MPI_SUCCESS) {
        int ints[2] = {ndims, order};
        MPI_Count *c = halo_malloc((size_t)(3 * ndims) * sizeof(MPI_Count));
        memcpy(c, sizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(c + ndims, subsizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(c + 2 * ndims, starts, (size_t)ndims * sizeof(MPI_Count));
        record(t, 2, ints, 0, NULL, 3 * ndims, c, 1, &oldtype);
        free(c);
        *newtype = (MPI_Datatype)t;
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
        if (gsizes[i] <= 0)
            return halo_err(MPI_ERR_ARG, "(array_of_gsizes[%d]=%lld): must be positive", i,
                            (long long)gsizes[i]);
        nprocs *= psizes[i];
    }
    if (nprocs != size || rank < 0 || rank >= size)
        return halo_err(MPI_ERR_ARG, "(size=%d, rank=%d): the process grid has %d processes", size, rank, nprocs);
    /* Coordinates of rank in the process grid: row-major whatever the order. */
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
                sel[i] = (dim_sel_t){0, g, 1, 0, 0, 0};
            break;
        case MPI_DISTRIBUTE_BLOCK: {
            MPI_Count bs = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + P - 1) / P : dargs[i];
            if (bs <= 0 || bs * P < g) {
                rc = halo_err(MPI_ERR_ARG, "(dimension %d): block size %lld cannot cover %lld elements "
                              "on %d processes", i, (long long)bs, (long long)g, P);
                break;
            }
            MPI_Count s = (MPI_Count)c * bs, e = s + bs < g ? s + bs : g;
            sel[i] = (dim_sel_t){s < g ? s : 0, e > s ? e - s : 0, 1, 0, 0, 0};
            break;
        }
        case MPI_DISTRIBUTE_CYCLIC: {
            MPI_Count k = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            if (k <= 0) {
                rc = halo_err(MPI_ERR_ARG, "(array_of_dargs[%d]=%d): must be positive", i, dargs[i]);
                break;
            }
            /* Blocks of k from c*k, every k*P; the last one may be short. */
            MPI_Count s0 = (MPI_Count)c * k;
            MPI_Count nblocks = s0 < g ? (g - s0 + k * P - 1) / (k * P) : 0;
            MPI_Count lasts = s0 + (nblocks - 1) * k * P;
            if (nblocks > 0 && lasts + k > g)
                sel[i] = (dim_sel_t){s0, k, nblocks - 1, k * P, lasts, g - lasts};
            else
                sel[i] = (dim_sel_t){s0, k, nblocks, k * P, 0, 0};
            break;
        }
        default:
            rc = halo_err(MPI_ERR_ARG, "(array_of_distribs[%d]=%d): not a distribution", i, distribs[i]);
        }
    }
    if (rc == MPI_SUCCESS)
        *t_p = build_selection(ndims, gsizes, sel, order, o, MPI_COMBINER_DARRAY);
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

/* One object per (combiner, parameters), kept for the life of the library:
 * the standard makes these predefined (never freed by the user, and the
 * same handle for the same parameters). */
static struct f90_cache {
    int combiner, ints[2];
    halo_dtype_t *t;
} cache[64];
static int ncache;

void halo_dt_f90_reset(void)
{
    ncache = 0;
}

void halo_dt_f90_free_all(void)
{
    for (int i = 0; i < ncache; i++)
        halo_dtype_release(cache[i].t);
    ncache = 0;
}

static int f90_type(int combiner, MPI_Datatype base, const int *ints, int ni, MPI_Datatype *newtype)
{
    for (int i = 0; i < ncache; i++) {
        if (cache[i].combiner == combiner && cache[i].ints[0] == ints[0] &&
            (ni < 2 || cache[i].ints[1] == ints[1])) {
            *newtype = (MPI_Datatype)cache[i].t;
            return MPI_SUCCESS;
        }
    }
    halo_dtype_t *o = halo_dtype_ptr(base);
    halo_dtype_t *t = dt_new(combiner);
    halo_dt_build_t b;
    hb_init(&b);
    int32_t root = hb_import(&b, o);
    bnd_t bd = {true, true, o->lb, o->ub};
    dt_done(t, &b, root, &bd, 0, 0, NULL);
    /* A basic type for signatures and reductions. */
    t->flags |= HALO_DT_COMMITTED | HALO_DT_F90;
    t->basic = base;
    t->basic_count = 1;
    t->nelem = 1;
    t->ext32_size = o->ext32_size;
    t->align = o->align;
    halo_dt_compile(t);
    record(t, ni, ints, 0, NULL, 0, NULL, 0, NULL);
    snprintf(t->name, sizeof t->name, "%s", o->name);
    if (ncache < (int)HALO_ARRAY_LEN(cache)) {
        cache[ncache].combiner = combiner;
        cache[ncache].ints[0] = ints[0];
        cache[ncache].ints[1] = ni > 1 ? ints[1] : 0;
        cache[ncache].t = t;
        ncache++;
    }
    *newtype = (MPI_Datatype)t;
    return MPI_SUCCESS;
}

int halo_api_type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    MPI_Datatype b = r < 0 ? MPI_DATATYPE_NULL : r <= 2 ? MPI_INTEGER1 : r <= 4 ? MPI_INTEGER2
                   : r <= 9 ? MPI_INTEGER4 : r <= 18 ? MPI_INTEGER8 : r <= 38 ? MPI_INTEGER16
                   : MPI_DATATYPE_NULL;
    if (b == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_ARG, "(r=%d): no integer kind has that decimal exponent range", r);
    return f90_type(MPI_COMBINER_F90_INTEGER, b, &r, 1, newtype);
}

/* The kinds of SELECTED_REAL_KIND: IEEE single, double and quad. */
static MPI_Datatype real_kind(int p, int r, int cplx)
{
    if (p == MPI_UNDEFINED)
        p = 0;
    if (r == MPI_UNDEFINED)
        r = 0;
    if (p < 0 || r < 0)
        return MPI_DATATYPE_NULL;
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
