/* Moving data with a type's program: pack, unpack (both resumable at any
 * packed byte), iovec generation, and type-to-type copies. Addresses are
 * computed in uintptr_t so that MPI_BOTTOM (a NULL buffer) with absolute
 * displacements is well defined. */
#include "datatype/dtype.h"

/* Index of the run holding packed position `pos` of a list. */
static MPI_Count find_block(const halo_dt_block_t *bl, MPI_Count n, MPI_Count pos)
{
    MPI_Count lo = 0, hi = n - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (bl[mid].pos <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static MPI_Count find_ent(const halo_dt_ent_t *e, MPI_Count n, MPI_Count pos)
{
    MPI_Count lo = 0, hi = n - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (e[mid].pos <= pos)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

#define W(name) pk_##name
#define PF_RW 0
#define MOVE(a, pk, n) memcpy((pk), (const void *)(a), (n))
#define MOVEK(a, pk, K) memcpy((pk), (const void *)(a), K)
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef PF_RW

#define PF_RW 1
#define W(name) up_##name
#define MOVE(a, pk, n) memcpy((void *)(a), (pk), (n))
#define MOVEK(a, pk, K) memcpy((void *)(a), (pk), K)
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef PF_RW

/* Calls that move at least this many bytes write with non-temporal stores
 * (runs of 64 bytes and more): the data does not fit in cache anyway, and
 * streaming stores save reading every destination line before writing it,
 * which strided copies pay on top of the lines the prefetcher fetches for
 * nothing. Smaller calls (pipeline chunks, whose data the peer reads next)
 * keep ordinary stores. */
#define NT_MIN ((MPI_Count)16 << 20)

#if defined(__SSE2__)
#include <emmintrin.h>

static inline void nt_copy(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* Streaming stores only for whole, aligned lines: a line written
     * partly by them is flushed piecemeal, far slower than caching it. */
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (n < head + 64) {
        halo_copy(d, s, n);
        return;
    }
    halo_copy_lt64(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i x0 = _mm_loadu_si128((const __m128i *)s), x1 = _mm_loadu_si128((const __m128i *)(s + 16));
        __m128i x2 = _mm_loadu_si128((const __m128i *)(s + 32)), x3 = _mm_loadu_si128((const __m128i *)(s + 48));
        _mm_stream_si128((__m128i *)d, x0);
        _mm_stream_si128((__m128i *)(d + 16), x1);
        _mm_stream_si128((__m128i *)(d + 32), x2);
        _mm_stream_si128((__m128i *)(d + 48), x3);
    }
    halo_copy_lt64(d, s, n);
}
#define NT_FENCE() _mm_sfence()
#else
#define nt_copy memcpy
#define NT_FENCE() ((void)0)
#endif

/* Runs shorter than 64 bytes cannot fill whole lines: ordinary stores.
 * Runs of whole lines are moved whole (WHOLE_RUNS), so that a run that
 * does not start on a line streams all the lines it covers entirely. */
#undef WHOLE_RUNS
#define WHOLE_RUNS 1
#define PF_RW 0
#define W(name) pkn_##name
#define MOVE(a, pk, n) ((n) >= 64 ? nt_copy((pk), (const void *)(a), (n)) : (void)memcpy((pk), (const void *)(a), (n)))
#define MOVEK(a, pk, K) ((K) >= 64 ? nt_copy((pk), (const void *)(a), K) : (void)memcpy((pk), (const void *)(a), K))
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK

#undef PF_RW
#define PF_RW 1
#define W(name) upn_##name
#define MOVE(a, pk, n) ((n) >= 64 ? nt_copy((void *)(a), (pk), (n)) : (void)memcpy((void *)(a), (pk), (n)))
#define MOVEK(a, pk, K) ((K) >= 64 ? nt_copy((void *)(a), (pk), K) : (void)memcpy((void *)(a), (pk), K))
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef PF_RW
#undef WHOLE_RUNS

/* Whether packing NT_MIN bytes or more streams its stores: where the
 * source is nearly dense, or comes in runs of 64 to 1024 bytes, whole
 * lines, which the walk prefetches in software (walk.h). Measured on the
 * AMD EPYC host (halo-bench pack_vector, pack_subarray2d/3d at 16 to 64
 * MiB, three to four runs alternated with the build before each change):
 * 256-byte blocks at twice the block's stride 9.4-10.7 GB/s prefetched
 * and streaming against 6.4-7.0 with neither (78-84% of memcpy at
 * 64 MiB, from 49-56%) and 7.1-9.1 prefetched with ordinary stores; 1 KiB
 * blocks 6.2-6.8 against 4.4-5.7; 4 KiB blocks, not prefetched,
 * 10.5-11.5 with ordinary stores against 7.7-8.4 streaming (the strided
 * reads and the hardware's prefetches compete with the write-combining
 * buffers), and so do long runs: a 2-D subarray of 16 KiB rows 11.7-12.9
 * with ordinary stores at 16 MiB against 9.8-10.3 streaming (11.3-12.1
 * against 12.2-12.9 at 64 MiB), 8 KiB blocks 10.4-11.2 against 8.5-9.1;
 * a 3-D interior (98% dense) 131-148% of memcpy streaming against
 * 88-131%. Unpacking streams for every shape (its stores are the
 * scattered side). */
static inline bool pack_streams(const halo_dtype_t *dt)
{
    if (dt->nruns <= 0)
        return false;
    MPI_Count span = dt->true_ub - dt->true_lb, run = dt->size / dt->nruns;
    return 10 * dt->size >= 9 * span || (run >= 64 && run <= 1024 && run % 64 == 0);
}

/* Clamps [pos, pos + *len_p) to the data; false when nothing is left. */
static inline bool clamp(MPI_Count count, const halo_dtype_t *dt, MPI_Count pos, MPI_Count *len_p)
{
    MPI_Count total = count * dt->size;
    if (pos >= total || *len_p <= 0)
        return false;
    if (*len_p > total - pos)
        *len_p = total - pos;
    return true;
}

MPI_Count halo_dt_flat_range(const halo_dtype_t *dt, MPI_Count count, MPI_Count pos, MPI_Count len,
                             MPI_Count *off_p)
{
    MPI_Count off;
    if (!clamp(count, dt, pos, &len) || !halo_dt_one_run(dt, count, &off))
        return 0;
    *off_p = off + pos;
    return len;
}

MPI_Count halo_dt_pack(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                       void *dst, MPI_Count len)
{
    if (!clamp(count, dt, pos, &len))
        return 0;
    if (halo_dt_contig(dt)) {
        memcpy(dst, (const void *)((uintptr_t)buf + (uintptr_t)pos), (size_t)len);
    } else if (len >= NT_MIN && pack_streams(dt)) {
        pkn_top((uintptr_t)buf, dt, pos, len, dst);
        NT_FENCE();
    } else {
        pk_top((uintptr_t)buf, dt, pos, len, dst);
    }
    return len;
}

MPI_Count halo_dt_unpack(void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                         const void *src, MPI_Count len)
{
    if (!clamp(count, dt, pos, &len))
        return 0;
    if (halo_dt_contig(dt)) {
        memcpy((void *)((uintptr_t)buf + (uintptr_t)pos), src, (size_t)len);
    } else if (len >= NT_MIN) {
        upn_top((uintptr_t)buf, dt, pos, len, (unsigned char *)src);
        NT_FENCE();
    } else {
        up_top((uintptr_t)buf, dt, pos, len, (unsigned char *)src);
    }
    return len;
}

/* ---------------------------------------------------------------- iovecs */

typedef struct iovw {
    struct iovec *iov;
    int n, max;
    MPI_Count done;
} iovw_t;

/* Adds a run; false when the array is full (the run is then not taken). */
static bool iv_emit(iovw_t *w, uintptr_t a, MPI_Count len)
{
    if (w->n > 0 && (uintptr_t)w->iov[w->n - 1].iov_base + w->iov[w->n - 1].iov_len == a) {
        w->iov[w->n - 1].iov_len += (size_t)len;
    } else {
        if (w->n == w->max)
            return false;
        w->iov[w->n].iov_base = (void *)a;
        w->iov[w->n].iov_len = (size_t)len;
        w->n++;
    }
    w->done += len;
    return true;
}

static bool iv_part(const halo_dt_prog_t *p, const halo_dt_node_t *n, uintptr_t base, MPI_Count skip,
                    MPI_Count len, iovw_t *w)
{
    uintptr_t b = base + (uintptr_t)n->off;
    switch (n->kind) {
    case HALO_DT_RUN:
        return iv_emit(w, b + (uintptr_t)skip, len);
    case HALO_DT_LOOP: {
        const halo_dt_node_t *c = &p->nodes[n->child];
        MPI_Count cs = c->size, i = skip / cs, r = skip % cs;
        if (c->kind == HALO_DT_RUN) {
            uintptr_t a = b + (uintptr_t)c->off;
            for (; len > 0; i++, r = 0) {
                MPI_Count m = cs - r < len ? cs - r : len;
                if (!iv_emit(w, a + (uintptr_t)(i * n->stride + r), m))
                    return false;
                len -= m;
            }
            return true;
        }
        for (; len > 0; i++, r = 0) {
            MPI_Count m = cs - r < len ? cs - r : len;
            if (!iv_part(p, c, b + (uintptr_t)(i * n->stride), r, m, w))
                return false;
            len -= m;
        }
        return true;
    }
    case HALO_DT_BLOCKS: {
        const halo_dt_block_t *bl = p->blk + n->first;
        for (MPI_Count j = find_block(bl, n->count, skip); len > 0; j++) {
            MPI_Count s = skip - bl[j].pos, m = bl[j].len - s < len ? bl[j].len - s : len;
            if (!iv_emit(w, b + (uintptr_t)(bl[j].off + s), m))
                return false;
            len -= m;
            skip += m;
        }
        return true;
    }
    default: {
        const halo_dt_ent_t *e = p->ent + n->first;
        for (MPI_Count j = find_ent(e, n->count, skip); len > 0; j++) {
            const halo_dt_node_t *c = &p->nodes[e[j].node];
            MPI_Count s = skip - e[j].pos, m = c->size - s < len ? c->size - s : len;
            if (!iv_part(p, c, b, s, m, w))
                return false;
            len -= m;
            skip += m;
        }
        return true;
    }
    }
}

int halo_dt_iov(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count *pos_p,
                MPI_Count limit, struct iovec *iov, int maxiov)
{
    MPI_Count pos = *pos_p, len = limit - pos;
    if (maxiov <= 0 || !clamp(count, dt, pos, &len))
        return 0;
    uintptr_t b = (uintptr_t)buf;
    MPI_Count off;
    if (halo_dt_one_run(dt, count, &off)) {
        iov[0].iov_base = (void *)(b + (uintptr_t)(off + pos));
        iov[0].iov_len = (size_t)len;
        *pos_p = pos + len;
        return 1;
    }
    const halo_dt_prog_t *p = &dt->prog;
    const halo_dt_node_t *r = &p->nodes[p->root];
    MPI_Count sz = dt->size, e = pos / sz, s = pos % sz;
    iovw_t w = {iov, 0, maxiov, 0};
    while (len > 0) {
        MPI_Count m = sz - s < len ? sz - s : len;
        MPI_Count before = w.done;
        bool more = iv_part(p, r, b + (uintptr_t)(e * dt->extent), s, m, &w);
        len -= w.done - before;
        if (!more)
            break;
        e++;
        s = 0;
    }
    *pos_p = pos + w.done;
    return w.n;
}

/* ---------------------------------------------------------------- copies */

/* Both sides scattered: through a bounce buffer that stays in cache (out
 * of line, so that the contiguous copies do not set up its stack). */
static __attribute__((noinline)) void copy_scattered(const void *src, MPI_Count scount, const halo_dtype_t *stype,
                                                     void *dst, MPI_Count dcount, const halo_dtype_t *dtype,
                                                     MPI_Count n)
{
    _Alignas(64) unsigned char tmp[16384];
    for (MPI_Count pos = 0; pos < n;) {
        MPI_Count chunk = n - pos < (MPI_Count)sizeof tmp ? n - pos : (MPI_Count)sizeof tmp;
        halo_dt_pack(src, scount, stype, pos, tmp, chunk);
        halo_dt_unpack(dst, dcount, dtype, pos, tmp, chunk);
        pos += chunk;
    }
}

MPI_Count halo_dt_copy(const void *src, MPI_Count scount, const halo_dtype_t *stype, void *dst,
                       MPI_Count dcount, const halo_dtype_t *dtype)
{
    MPI_Count sbytes = scount * stype->size, dbytes = dcount * dtype->size;
    MPI_Count n = sbytes < dbytes ? sbytes : dbytes;
    if (n == 0)
        return 0;
    if (halo_dt_contig(stype) && halo_dt_contig(dtype)) {
        memcpy(dst, src, (size_t)n);
        return n;
    }
    MPI_Count off;
    if (halo_dt_one_run(stype, scount, &off)) {
        halo_dt_unpack(dst, dcount, dtype, 0, (const void *)((uintptr_t)src + (uintptr_t)off), n);
        return n;
    }
    if (halo_dt_one_run(dtype, dcount, &off)) {
        halo_dt_pack(src, scount, stype, 0, (void *)((uintptr_t)dst + (uintptr_t)off), n);
        return n;
    }
    copy_scattered(src, scount, stype, dst, dcount, dtype, n);
    return n;
}
