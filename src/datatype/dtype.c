/* Predefined datatypes, the life cycle of type objects, and element
 * counting over signatures. */
#include "datatype/dtype.h"

#include <complex.h>

#include "core/attr.h"
#include "datatype/prog.h"

typedef struct predef_desc {
    uintptr_t handle;
    const char *name;
    MPI_Count size;
    MPI_Count extent;
    MPI_Count align;
    /* pair types: the second (index) part */
    MPI_Count run2_off, run2_len;
    uint32_t extra_flags;
} predef_desc_t;

#define C(h, T) (uintptr_t)h, #h, sizeof(T), sizeof(T), _Alignof(T), 0, 0, 0
#define F(h, n, a) (uintptr_t)h, #h, n, n, a, 0, 0, 0
#define PAIR(h, T1, T2)                                                                           \
    (uintptr_t)h, #h, sizeof(T1) + sizeof(T2), sizeof(struct { T1 a; T2 b; }),                    \
        _Alignof(struct { T1 a; T2 b; }), offsetof(struct { T1 a; T2 b; }, b), sizeof(T2), HALO_DT_PAIR

static const predef_desc_t predefs[] = {
    {C(MPI_AINT, MPI_Aint)},
    {C(MPI_COUNT, MPI_Count)},
    {C(MPI_OFFSET, MPI_Offset)},
    {F(MPI_PACKED, 1, 1)},
    {C(MPI_SHORT, short)},
    {C(MPI_INT, int)},
    {C(MPI_LONG, long)},
    /* The standard's table names MPI_LONG_LONG_INT, with MPI_LONG_LONG as
     * its synonym, and MPI_C_COMPLEX, with MPI_C_FLOAT_COMPLEX: one handle
     * each in the ABI, named as the table does. */
    {(uintptr_t)MPI_LONG_LONG, "MPI_LONG_LONG_INT", sizeof(long long), sizeof(long long),
     _Alignof(long long), 0, 0, 0},
    {C(MPI_UNSIGNED_SHORT, unsigned short)},
    {C(MPI_UNSIGNED, unsigned)},
    {C(MPI_UNSIGNED_LONG, unsigned long)},
    {C(MPI_UNSIGNED_LONG_LONG, unsigned long long)},
    {C(MPI_FLOAT, float)},
    {(uintptr_t)MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", sizeof(float complex), sizeof(float complex),
     _Alignof(float complex), 0, 0, 0},
    {C(MPI_CXX_FLOAT_COMPLEX, float complex)},
    {C(MPI_DOUBLE, double)},
    {C(MPI_C_DOUBLE_COMPLEX, double complex)},
    {C(MPI_CXX_DOUBLE_COMPLEX, double complex)},
    {F(MPI_LOGICAL, 4, 4)},
    {F(MPI_INTEGER, 4, 4)},
    {F(MPI_REAL, 4, 4)},
    {F(MPI_COMPLEX, 8, 4)},
    {F(MPI_DOUBLE_PRECISION, 8, 8)},
    {F(MPI_DOUBLE_COMPLEX, 16, 8)},
    {F(MPI_CHARACTER, 1, 1)},
    {C(MPI_LONG_DOUBLE, long double)},
    {C(MPI_C_LONG_DOUBLE_COMPLEX, long double complex)},
    {C(MPI_CXX_LONG_DOUBLE_COMPLEX, long double complex)},
    {PAIR(MPI_FLOAT_INT, float, int)},
    {PAIR(MPI_DOUBLE_INT, double, int)},
    {PAIR(MPI_LONG_INT, long, int)},
    {PAIR(MPI_2INT, int, int)},
    {PAIR(MPI_SHORT_INT, short, int)},
    {PAIR(MPI_LONG_DOUBLE_INT, long double, int)},
    {PAIR(MPI_2REAL, float, float)},
    {PAIR(MPI_2DOUBLE_PRECISION, double, double)},
    {PAIR(MPI_2INTEGER, int, int)},
    {C(MPI_C_BOOL, _Bool)},
    {F(MPI_CXX_BOOL, 1, 1)},
    {C(MPI_WCHAR, wchar_t)},
    {F(MPI_INT8_T, 1, 1)},
    {F(MPI_UINT8_T, 1, 1)},
    {C(MPI_CHAR, char)},
    {C(MPI_SIGNED_CHAR, signed char)},
    {C(MPI_UNSIGNED_CHAR, unsigned char)},
    {F(MPI_BYTE, 1, 1)},
    {F(MPI_INT16_T, 2, 2)},
    {F(MPI_UINT16_T, 2, 2)},
    {F(MPI_INT32_T, 4, 4)},
    {F(MPI_UINT32_T, 4, 4)},
    {C(MPI_INT64_T, int64_t)},
    {C(MPI_UINT64_T, uint64_t)},
    {F(MPI_LOGICAL1, 1, 1)},
    {F(MPI_INTEGER1, 1, 1)},
    {F(MPI_LOGICAL2, 2, 2)},
    {F(MPI_INTEGER2, 2, 2)},
    {F(MPI_REAL2, 2, 2)},
    {F(MPI_LOGICAL4, 4, 4)},
    {F(MPI_INTEGER4, 4, 4)},
    {F(MPI_REAL4, 4, 4)},
    {F(MPI_COMPLEX4, 4, 2)},
    {F(MPI_LOGICAL8, 8, 8)},
    {F(MPI_INTEGER8, 8, 8)},
    {F(MPI_REAL8, 8, 8)},
    {F(MPI_COMPLEX8, 8, 4)},
    {F(MPI_LOGICAL16, 16, 16)},
    {F(MPI_INTEGER16, 16, 16)},
    {F(MPI_REAL16, 16, 16)},
    {F(MPI_COMPLEX16, 16, 8)},
    {F(MPI_COMPLEX32, 32, 16)},
    /* The bound markers MPI-3.0 removed (declared at the end of mpi.h): no
     * data, extent 0, only a marked lower or upper bound. */
    {(uintptr_t)MPI_LB, "MPI_LB", 0, 0, 1, 0, 0, HALO_DT_LB_MARKED},
    {(uintptr_t)MPI_UB, "MPI_UB", 0, 0, 1, 0, 0, HALO_DT_UB_MARKED},
};

static halo_dtype_t predef_objs[HALO_ARRAY_LEN(predefs)];
static halo_dt_block_t pair_blocks[HALO_ARRAY_LEN(predefs)][2];

void halo_dtype_init(void)
{
    halo_obj_kind_setup(HALO_KIND_DTYPE, sizeof(halo_dtype_t), 1u << 22);
    halo_dt_movers_avx2(1);
    for (size_t i = 0; i < HALO_ARRAY_LEN(predefs); i++) {
        const predef_desc_t *d = &predefs[i];
        halo_dtype_t *t = &predef_objs[i];
        halo_dt_prog_free(&t->prog);
        memset(t, 0, sizeof *t);
        t->flags = HALO_DT_COMMITTED | HALO_DT_PREDEFINED | d->extra_flags;
        t->combiner = MPI_COMBINER_NAMED;
        t->size = d->size;
        t->lb = 0;
        t->ub = t->extent = d->extent;
        t->true_lb = 0;
        t->true_ub = (d->extra_flags & HALO_DT_PAIR) ? d->run2_off + d->run2_len : d->size;
        t->basic = (MPI_Datatype)d->handle;
        t->basic_count = 1;
        t->nelem = d->size == 0 ? 0 : (d->extra_flags & HALO_DT_PAIR) ? 2 : 1;
        t->align = d->align;
        halo_dt_build_t b;
        hb_init(&b);
        int32_t root;
        MPI_Count first = d->size - d->run2_len;
        if ((d->extra_flags & HALO_DT_PAIR) && first != d->run2_off) {
            pair_blocks[i][0] = (halo_dt_block_t){0, first, 0};
            pair_blocks[i][1] = (halo_dt_block_t){d->run2_off, d->run2_len, first};
            t->nblocks = 2;
            t->blocks = pair_blocks[i];
            int32_t parts[2] = {hb_run(&b, 0, first), hb_run(&b, d->run2_off, d->run2_len)};
            root = hb_list(&b, parts, 2);
        } else if (d->size == 0) {
            t->basic = MPI_DATATYPE_NULL;
            t->basic_count = 0;
            root = -1;
        } else {
            t->nblocks = 1;
            t->one_block = (halo_dt_block_t){0, d->size, 0};
            t->blocks = &t->one_block;
            root = hb_run(&b, 0, d->size);
        }
        hb_finish(&b, root, &t->prog);
        halo_dt_finish(t);
        snprintf(t->name, sizeof t->name, "%s", d->name);
        halo_obj_predef(HALO_KIND_DTYPE, d->handle, &t->hdr);
        t->ext32_size = halo_dt_ext32_size_predef(t);
    }
    halo_dt_f90_reset();
    halo_dt_api_anchor();
}

void halo_dtype_finalize(void)
{
    halo_dt_f90_free_all();
}

halo_dtype_t *halo_dtype_get(MPI_Datatype t)
{
    return halo_obj_lookup(HALO_KIND_DTYPE, t);
}

void halo_dtype_release(halo_dtype_t *dt)
{
    if (!halo_obj_unref(dt))
        return;
    halo_attr_delete_all(HALO_KIND_DTYPE, dt, &dt->attrs);
    if (dt->blocks != &dt->one_block)
        free(dt->blocks);
    halo_dt_prog_free(&dt->prog);
    free(dt->sig);
    for (int i = 0; i < dt->nd; i++) {
        halo_dtype_t *c = halo_dtype_ptr(dt->types[i]);
        if (c && !(c->flags & HALO_DT_PREDEFINED))
            halo_dtype_release(c);
    }
    free(dt->ints);
    free(dt->aints);
    free(dt->counts);
    free(dt->types);
    halo_obj_free(dt);
}

static void *dup_array(const void *src, size_t n, size_t elem)
{
    if (n == 0)
        return NULL;
    void *d = halo_malloc(n * elem);
    memcpy(d, src, n * elem);
    return d;
}

halo_dtype_t *halo_dt_clone(halo_dtype_t *o)
{
    halo_dtype_t *t = halo_obj_alloc(HALO_KIND_DTYPE);
    if (!t)
        halo_fatal("out of datatype objects");
    halo_obj_t hdr = t->hdr;
    *t = *o;
    t->hdr = hdr;
    t->attrs = NULL;
    t->name[0] = '\0';
    halo_dt_prog_copy(&t->prog, &o->prog);
    if (o->blocks == &o->one_block)
        t->blocks = &t->one_block;
    else
        t->blocks = dup_array(o->blocks, (size_t)o->nblocks, sizeof *o->blocks);
    t->sig = dup_array(o->sig, (size_t)o->nsig, sizeof *o->sig);
    t->ints = dup_array(o->ints, (size_t)o->ni, sizeof *o->ints);
    t->aints = dup_array(o->aints, (size_t)o->na, sizeof *o->aints);
    t->counts = dup_array(o->counts, (size_t)o->nc, sizeof *o->counts);
    t->types = dup_array(o->types, (size_t)o->nd, sizeof *o->types);
    for (int i = 0; i < t->nd; i++)
        halo_obj_ref(halo_dtype_ptr(t->types[i]));
    return t;
}

/* ---------------------------------------------------------------- elements */

/* Bytes of the value part of a pair type (its first basic element). */
static MPI_Count pair_value_size(const halo_dtype_t *t)
{
    const halo_dtype_t *p = t;
    if (!(p->flags & HALO_DT_PREDEFINED))
        p = halo_dtype_ptr(t->basic);
    for (size_t i = 0; i < HALO_ARRAY_LEN(predefs); i++)
        if (&predef_objs[i] == p)
            return predefs[i].size - predefs[i].run2_len;
    return p->size / 2;
}

static bool basic_is_pair(const halo_dtype_t *t)
{
    return t->basic != MPI_DATATYPE_NULL && (halo_dtype_ptr(t->basic)->flags & HALO_DT_PAIR);
}

/* Basic elements in the first `bytes` (0 <= bytes <= size) packed bytes of
 * one element; inside a basic element: MPI_UNDEFINED, or the elements
 * before it when `floor`. */
static MPI_Count elems_in(const halo_dtype_t *t, MPI_Count bytes, bool floor)
{
    if (bytes <= 0)
        return 0;
    if (bytes >= t->size)
        return t->nelem;
    const MPI_Count undef = floor ? -1 : MPI_UNDEFINED;
    if (t->nsig == 0) {
        /* A basic type (predefined or from MPI_Type_create_f90_*). */
        if (t->flags & HALO_DT_PAIR) {
            MPI_Count v = pair_value_size(t);
            return bytes == v ? 1 : bytes > v ? (floor ? 1 : undef) : (floor ? 0 : undef);
        }
        return floor ? 0 : undef;
    }
    if (t->basic != MPI_DATATYPE_NULL && !basic_is_pair(t)) {
        MPI_Count bs = halo_dtype_ptr(t->basic)->size;
        if (bytes % bs && !floor)
            return undef;
        return bytes / bs;
    }
    MPI_Count n = 0;
    for (int i = 0; i < t->nsig; i++) {
        const halo_dtype_t *c = t->sig[i].type;
        MPI_Count reps = t->sig[i].reps;
        if (c->size == 0 || reps == 0)
            continue;
        if (bytes >= reps * c->size) {
            n += reps * c->nelem;
            bytes -= reps * c->size;
            if (bytes == 0)
                return n;
            continue;
        }
        MPI_Count k = bytes / c->size, r = bytes % c->size;
        n += k * c->nelem;
        if (r) {
            MPI_Count x = elems_in(c, r, floor);
            if (x == undef && !floor)
                return undef;
            n += x;
        }
        return n;
    }
    return n;
}

MPI_Count halo_dt_elements(const halo_dtype_t *dt, MPI_Count bytes)
{
    if (dt->size == 0 || bytes <= 0)
        return 0;
    MPI_Count whole = bytes / dt->size, rest = bytes % dt->size;
    MPI_Count x = elems_in(dt, rest, false);
    if (x == MPI_UNDEFINED)
        return MPI_UNDEFINED;
    return whole * dt->nelem + x;
}

MPI_Count halo_dt_elements_partial(const halo_dtype_t *dt, MPI_Count bytes)
{
    return elems_in(dt, bytes, true);
}

/* Packed bytes of the first k (0 <= k <= nelem) basic elements of one element. */
static MPI_Count bytes_of(const halo_dtype_t *t, MPI_Count k)
{
    if (k <= 0)
        return 0;
    if (k >= t->nelem)
        return t->size;
    if (t->nsig == 0)
        return (t->flags & HALO_DT_PAIR) ? pair_value_size(t) : t->size;
    if (t->basic != MPI_DATATYPE_NULL && !basic_is_pair(t))
        return k * halo_dtype_ptr(t->basic)->size;
    MPI_Count b = 0;
    for (int i = 0; i < t->nsig; i++) {
        const halo_dtype_t *c = t->sig[i].type;
        MPI_Count reps = t->sig[i].reps;
        if (c->nelem == 0 || reps == 0)
            continue;
        if (k >= reps * c->nelem) {
            b += reps * c->size;
            k -= reps * c->nelem;
            if (k == 0)
                return b;
            continue;
        }
        MPI_Count q = k / c->nelem;
        return b + q * c->size + bytes_of(c, k - q * c->nelem);
    }
    return b;
}

MPI_Count halo_dt_elements_bytes(const halo_dtype_t *dt, MPI_Count elements)
{
    if (dt->nelem == 0 || elements <= 0)
        return 0;
    MPI_Count whole = elements / dt->nelem;
    return whole * dt->size + bytes_of(dt, elements - whole * dt->nelem);
}
