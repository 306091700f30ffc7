/* Moving data with a type's program: pack, unpack (both resumable at any
 * packed byte), iovec generation, and type-to-type copies. Addresses are
 * computed in uintptr_t so that MPI_BOTTOM (a NULL buffer) with absolute
 * displacements is well defined. */
#include "core/cpu.h"
#include "datatype/dtype.h"

#define MV_NAME(name) name
#include "datatype/movers.h"

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

/* Whether the derived types move through the AVX2 build of the movers
 * (pack_avx2.c). On the AMD EPYC host, packing a vector of 256-byte blocks
 * at twice the block's stride reached 86-91% of memcpy at 1 MiB in 32-byte
 * registers against 72-80% in 16-byte ones, and 512-byte blocks at 16 MiB
 * (streaming) 81-97% against 62-67% (a test program of the kernels alone,
 * best of five, 2026-11-25; halo-bench figures in docs/performance.md). */
static bool movers_avx2;

int halo_dt_movers_avx2(int avx2)
{
#if defined(HALO_DT_AVX2)
    /* Written only when it changes: ranks' threads read it unlocked, and
     * a later halo_dtype_init (a new session) sets the same value. */
    bool want = avx2 && halo_cpu_avx2();
    if (avx2 >= 0 && want != movers_avx2)
        movers_avx2 = want;
#else
    (void)avx2;
#endif
    return movers_avx2;
}

MPI_Count halo_dt_pack(const void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                       void *dst, MPI_Count len)
{
    if (!clamp(count, dt, pos, &len))
        return 0;
    if (halo_dt_contig(dt)) {
        memcpy(dst, (const void *)((uintptr_t)buf + (uintptr_t)pos), (size_t)len);
        return len;
    }
    bool stream = len >= NT_MIN && pack_streams(dt);
#if defined(HALO_DT_AVX2)
    if (movers_avx2) {
        halo_dt_pack_avx2((uintptr_t)buf, dt, pos, len, dst, stream);
        return len;
    }
#endif
    pack_range((uintptr_t)buf, dt, pos, len, dst, stream);
    return len;
}

MPI_Count halo_dt_unpack(void *buf, MPI_Count count, const halo_dtype_t *dt, MPI_Count pos,
                         const void *src, MPI_Count len)
{
    if (!clamp(count, dt, pos, &len))
        return 0;
    if (halo_dt_contig(dt)) {
        memcpy((void *)((uintptr_t)buf + (uintptr_t)pos), src, (size_t)len);
        return len;
    }
    bool stream = len >= NT_MIN;   /* the scattered side: every shape streams */
#if defined(HALO_DT_AVX2)
    if (movers_avx2) {
        halo_dt_unpack_avx2((uintptr_t)buf, dt, pos, len, src, stream);
        return len;
    }
#endif
    unpack_range((uintptr_t)buf, dt, pos, len, src, stream);
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
        for (MPI_Count j = halo_dt_find_pos(&bl->pos, sizeof *bl, n->count, skip); len > 0; j++) {
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
        for (MPI_Count j = halo_dt_find_pos(&e->pos, sizeof *e, n->count, skip); len > 0; j++) {
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
