/* Predefined datatypes and the pack/unpack/iovec engine over block lists. */
#include "datatype/dtype.h"

#include <complex.h>

#include "core/attr.h"

typedef struct predef_desc {
    uintptr_t handle;
    const char *name;
    MPI_Count size;
    MPI_Count extent;
    /* pair types: the two runs (value, index) */
    MPI_Count run2_off, run2_len;
    uint32_t extra_flags;
} predef_desc_t;

#define PAIR(T1, T2) \
    sizeof(T1) + sizeof(T2), sizeof(struct { T1 a; T2 b; }), offsetof(struct { T1 a; T2 b; }, b), sizeof(T2), HALO_DT_PAIR

static const predef_desc_t predefs[] = {
    {(uintptr_t)MPI_AINT, "MPI_AINT", sizeof(MPI_Aint), sizeof(MPI_Aint), 0, 0, 0},
    {(uintptr_t)MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count), sizeof(MPI_Count), 0, 0, 0},
    {(uintptr_t)MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset), sizeof(MPI_Offset), 0, 0, 0},
    {(uintptr_t)MPI_PACKED, "MPI_PACKED", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_SHORT, "MPI_SHORT", sizeof(short), sizeof(short), 0, 0, 0},
    {(uintptr_t)MPI_INT, "MPI_INT", sizeof(int), sizeof(int), 0, 0, 0},
    {(uintptr_t)MPI_LONG, "MPI_LONG", sizeof(long), sizeof(long), 0, 0, 0},
    {(uintptr_t)MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long), sizeof(long long), 0, 0, 0},
    {(uintptr_t)MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(short), sizeof(short), 0, 0, 0},
    {(uintptr_t)MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(int), sizeof(int), 0, 0, 0},
    {(uintptr_t)MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), sizeof(long), 0, 0, 0},
    {(uintptr_t)MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(long long), sizeof(long long), 0, 0, 0},
    {(uintptr_t)MPI_FLOAT, "MPI_FLOAT", sizeof(float), sizeof(float), 0, 0, 0},
    {(uintptr_t)MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float complex), sizeof(float complex), 0, 0, 0},
    {(uintptr_t)MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", sizeof(float complex), sizeof(float complex), 0, 0, 0},
    {(uintptr_t)MPI_DOUBLE, "MPI_DOUBLE", sizeof(double), sizeof(double), 0, 0, 0},
    {(uintptr_t)MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double complex), sizeof(double complex), 0, 0, 0},
    {(uintptr_t)MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", sizeof(double complex), sizeof(double complex), 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL, "MPI_LOGICAL", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER, "MPI_INTEGER", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_REAL, "MPI_REAL", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_COMPLEX, "MPI_COMPLEX", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16, 0, 0, 0},
    {(uintptr_t)MPI_CHARACTER, "MPI_CHARACTER", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double), 0, 0, 0},
    {(uintptr_t)MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double complex), sizeof(long double complex), 0, 0, 0},
    {(uintptr_t)MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", sizeof(long double complex), sizeof(long double complex), 0, 0, 0},
    {(uintptr_t)MPI_FLOAT_INT, "MPI_FLOAT_INT", PAIR(float, int)},
    {(uintptr_t)MPI_DOUBLE_INT, "MPI_DOUBLE_INT", PAIR(double, int)},
    {(uintptr_t)MPI_LONG_INT, "MPI_LONG_INT", PAIR(long, int)},
    {(uintptr_t)MPI_2INT, "MPI_2INT", PAIR(int, int)},
    {(uintptr_t)MPI_SHORT_INT, "MPI_SHORT_INT", PAIR(short, int)},
    {(uintptr_t)MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", PAIR(long double, int)},
    {(uintptr_t)MPI_2REAL, "MPI_2REAL", PAIR(float, float)},
    {(uintptr_t)MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", PAIR(double, double)},
    {(uintptr_t)MPI_2INTEGER, "MPI_2INTEGER", PAIR(int, int)},
    {(uintptr_t)MPI_C_BOOL, "MPI_C_BOOL", sizeof(_Bool), sizeof(_Bool), 0, 0, 0},
    {(uintptr_t)MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_WCHAR, "MPI_WCHAR", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_INT8_T, "MPI_INT8_T", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_UINT8_T, "MPI_UINT8_T", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_CHAR, "MPI_CHAR", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_BYTE, "MPI_BYTE", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_INT16_T, "MPI_INT16_T", 2, 2, 0, 0, 0},
    {(uintptr_t)MPI_UINT16_T, "MPI_UINT16_T", 2, 2, 0, 0, 0},
    {(uintptr_t)MPI_INT32_T, "MPI_INT32_T", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_UINT32_T, "MPI_UINT32_T", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_INT64_T, "MPI_INT64_T", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_UINT64_T, "MPI_UINT64_T", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL1, "MPI_LOGICAL1", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER1, "MPI_INTEGER1", 1, 1, 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL2, "MPI_LOGICAL2", 2, 2, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER2, "MPI_INTEGER2", 2, 2, 0, 0, 0},
    {(uintptr_t)MPI_REAL2, "MPI_REAL2", 2, 2, 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL4, "MPI_LOGICAL4", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER4, "MPI_INTEGER4", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_REAL4, "MPI_REAL4", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_COMPLEX4, "MPI_COMPLEX4", 4, 4, 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL8, "MPI_LOGICAL8", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER8, "MPI_INTEGER8", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_REAL8, "MPI_REAL8", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8, 0, 0, 0},
    {(uintptr_t)MPI_LOGICAL16, "MPI_LOGICAL16", 16, 16, 0, 0, 0},
    {(uintptr_t)MPI_INTEGER16, "MPI_INTEGER16", 16, 16, 0, 0, 0},
    {(uintptr_t)MPI_REAL16, "MPI_REAL16", 16, 16, 0, 0, 0},
    {(uintptr_t)MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16, 0, 0, 0},
    {(uintptr_t)MPI_COMPLEX32, "MPI_COMPLEX32", 32, 32, 0, 0, 0},
};

static halo_dtype_t predef_objs[HALO_ARRAY_LEN(predefs)];
static halo_dt_block_t pair_blocks[HALO_ARRAY_LEN(predefs)][2];

void halo_dtype_init(void)
{
    halo_obj_kind_setup(HALO_KIND_DTYPE, sizeof(halo_dtype_t), 1u << 22);
    for (size_t i = 0; i < HALO_ARRAY_LEN(predefs); i++) {
        const predef_desc_t *d = &predefs[i];
        halo_dtype_t *t = &predef_objs[i];
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
        if (d->extra_flags & HALO_DT_PAIR) {
            MPI_Count first = d->size - d->run2_len;
            if (first == d->run2_off) {
                t->nblocks = 1;
                t->one_block = (halo_dt_block_t){0, d->size, 0};
                t->blocks = &t->one_block;
            } else {
                pair_blocks[i][0] = (halo_dt_block_t){0, first, 0};
                pair_blocks[i][1] = (halo_dt_block_t){d->run2_off, d->run2_len, first};
                t->nblocks = 2;
                t->blocks = pair_blocks[i];
            }
            if (t->size == t->extent)
                t->flags |= HALO_DT_CONTIG;
        } else {
            t->nblocks = 1;
            t->one_block = (halo_dt_block_t){0, d->size, 0};
            t->blocks = &t->one_block;
            t->flags |= HALO_DT_CONTIG;
        }
        snprintf(t->name, sizeof t->name, "%s", d->name);
        halo_obj_predef(HALO_KIND_DTYPE, d->handle, &t->hdr);
    }
}

void halo_dtype_finalize(void)
{
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

/* Index of the run holding packed position `p` (0 <= p < size) of one element. */
static MPI_Count block_at(const halo_dtype_t *dt, MPI_Count p)
{
    MPI_Count lo = 0, hi = dt->nblocks - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (dt->blocks[mid].pos <= p)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Walks the runs covering packed bytes [pos, pos+len), calling the mover
 * on (address in user buffer, offset in packed stream, length). */
#define DT_WALK(buf_expr, count, dt, pos, len, MOVE)                                              \
    do {                                                                                          \
        MPI_Count total_ = (count) * (dt)->size;                                                  \
        if ((pos) >= total_)                                                                      \
            return 0;                                                                             \
        if ((len) > total_ - (pos))                                                               \
            (len) = total_ - (pos);                                                               \
        MPI_Count done_ = 0;                                                                      \
        MPI_Count elem_ = (pos) / (dt)->size;                                                     \
        MPI_Count in_ = (pos) % (dt)->size;                                                       \
        MPI_Count b_ = block_at((dt), in_);                                                       \
        while (done_ < (len)) {                                                                   \
            const halo_dt_block_t *blk_ = &(dt)->blocks[b_];                                      \
            MPI_Count skip_ = in_ - blk_->pos;                                                    \
            MPI_Count n_ = blk_->len - skip_;                                                     \
            if (n_ > (len) - done_)                                                               \
                n_ = (len) - done_;                                                               \
            char *addr_ = (char *)(buf_expr) + elem_ * (dt)->extent + blk_->off + skip_;          \
            MOVE(addr_, done_, n_);                                                               \
            done_ += n_;                                                                          \
            in_ += n_;                                                                            \
            if (in_ == blk_->pos + blk_->len) {                                                   \
                if (++b_ == (dt)->nblocks) {                                                      \
                    b_ = 0;                                                                       \
                    in_ = 0;                                                                      \
                    elem_++;                                                                      \
                }                                                                                 \
            }                                                                                     \
        }                                                                                         \
        return done_;                                                                             \
    } while (0)

MPI_Count halo_dt_pack(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                       void *dst, MPI_Count len)
{
    if (halo_dt_contig(dt)) {
        MPI_Count total = count * dt->size;
        if (pos >= total)
            return 0;
        if (len > total - pos)
            len = total - pos;
        memcpy(dst, (const char *)buf + pos, (size_t)len);
        return len;
    }
#define PACK_MOVE(a, d, n) memcpy((char *)dst + (d), (a), (size_t)(n))
    DT_WALK(buf, count, dt, pos, len, PACK_MOVE);
#undef PACK_MOVE
}

MPI_Count halo_dt_unpack(void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                         const void *src, MPI_Count len)
{
    if (halo_dt_contig(dt)) {
        MPI_Count total = count * dt->size;
        if (pos >= total)
            return 0;
        if (len > total - pos)
            len = total - pos;
        memcpy((char *)buf + pos, src, (size_t)len);
        return len;
    }
#define UNPACK_MOVE(a, d, n) memcpy((a), (const char *)src + (d), (size_t)(n))
    DT_WALK(buf, count, dt, pos, len, UNPACK_MOVE);
#undef UNPACK_MOVE
}

int halo_dt_iov(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count *pos_p,
                MPI_Count limit, struct iovec *iov, int maxiov)
{
    MPI_Count total = count * dt->size;
    if (limit < total)
        total = limit;
    MPI_Count pos = *pos_p;
    int n = 0;
    if (pos >= total || maxiov <= 0)
        return 0;
    if (halo_dt_contig(dt)) {
        iov[0].iov_base = (char *)buf + pos;
        iov[0].iov_len = (size_t)(total - pos);
        *pos_p = total;
        return 1;
    }
    MPI_Count elem = pos / dt->size;
    MPI_Count in = pos % dt->size;
    MPI_Count b = block_at(dt, in);
    while (pos < total && n < maxiov) {
        const halo_dt_block_t *blk = &dt->blocks[b];
        MPI_Count skip = in - blk->pos;
        MPI_Count len = blk->len - skip;
        if (len > total - pos)
            len = total - pos;
        char *addr = (char *)buf + elem * dt->extent + blk->off + skip;
        if (n > 0 && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == addr) {
            iov[n - 1].iov_len += (size_t)len;
        } else {
            iov[n].iov_base = addr;
            iov[n].iov_len = (size_t)len;
            n++;
        }
        pos += len;
        in += len;
        if (in == blk->pos + blk->len && ++b == dt->nblocks) {
            b = 0;
            in = 0;
            elem++;
        }
    }
    *pos_p = pos;
    return n;
}

MPI_Count halo_dt_elements(const halo_dtype_t *dt, MPI_Count bytes)
{
    if (dt->size == 0)
        return 0;
    return bytes / dt->size;
}

MPI_Count halo_dt_copy(const void *src, MPI_Count scount, const halo_dtype_t *stype, void *dst,
                       MPI_Count dcount, const halo_dtype_t *dtype)
{
    MPI_Count sbytes = scount * stype->size, dbytes = dcount * dtype->size;
    MPI_Count n = sbytes < dbytes ? sbytes : dbytes;
    if (n == 0)
        return 0;
    if (halo_dt_contig(stype)) {
        halo_dt_unpack(dst, dcount, dtype, 0, src, n);
        return n;
    }
    if (halo_dt_contig(dtype)) {
        halo_dt_pack(src, scount, stype, 0, dst, n);
        return n;
    }
    char tmp[8192];
    for (MPI_Count pos = 0; pos < n;) {
        MPI_Count chunk = n - pos < (MPI_Count)sizeof tmp ? n - pos : (MPI_Count)sizeof tmp;
        halo_dt_pack(src, scount, stype, pos, tmp, chunk);
        halo_dt_unpack(dst, dcount, dtype, pos, tmp, chunk);
        pos += chunk;
    }
    return n;
}
