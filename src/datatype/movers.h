/* The movers of datatype/pack.c, instantiated once per translation unit
 * that includes this file with MV_NAME(name) defined (the unit's prefix on
 * every name it defines):
 *   pk_top, up_top     pack and unpack with ordinary stores,
 *   pkn_top, upn_top   the same writing whole lines with streaming stores
 *                      (x86 with SSE2; elsewhere ordinary stores),
 * all resumable at any packed byte (walk.h), and pack_range and
 * unpack_range, which call one or the other. pack.c builds them for the
 * baseline instruction set and pack_avx2.c again with AVX2, so that lines
 * move in 32-byte registers on processors that have them (pack.c chooses
 * at start-up). NT_MIN comes along for the callers. No include guard: a
 * template. */
/* One 64-byte line with ordinary stores: in 32-byte registers where the
 * unit is built for AVX2 (GCC's generic tuning would expand a memcpy of 64
 * bytes into 16-byte moves even then). */
#if defined(__AVX2__)
#include <immintrin.h>
static inline void MV_NAME(line)(void *dst, const void *src)
{
    __m256i x0 = _mm256_loadu_si256((const __m256i *)src);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)((const unsigned char *)src + 32));
    _mm256_storeu_si256((__m256i *)dst, x0);
    _mm256_storeu_si256((__m256i *)((unsigned char *)dst + 32), x1);
}
#else
static inline void MV_NAME(line)(void *dst, const void *src)
{
    memcpy(dst, src, 64);
}
#endif

#define W(name) MV_NAME(pk_##name)
#define PF_RW 0
#define MOVEL(a, pk) MV_NAME(line)((pk), (const void *)(a))
#define MOVE(a, pk, n) memcpy((pk), (const void *)(a), (n))
#define MOVEK(a, pk, K) memcpy((pk), (const void *)(a), K)
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef MOVEL
#undef PF_RW

#define PF_RW 1
#define W(name) MV_NAME(up_##name)
#define MOVE(a, pk, n) memcpy((void *)(a), (pk), (n))
#define MOVEK(a, pk, K) memcpy((void *)(a), (pk), K)
#define MOVEL(a, pk) MV_NAME(line)((void *)(a), (pk))
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef MOVEL
#undef PF_RW

/* Calls that move at least this many bytes write with non-temporal stores
 * (runs of 64 bytes and more): the data does not fit in cache anyway, and
 * streaming stores save reading every destination line before writing it,
 * which strided copies pay on top of the lines the prefetcher fetches for
 * nothing. Smaller calls (pipeline chunks, whose data the peer reads next)
 * keep ordinary stores. */
#define NT_MIN ((MPI_Count)16 << 20)

#if defined(__SSE2__)
#include <immintrin.h>

/* One aligned line with streaming stores, in the widest registers the
 * translation unit is built for. */
static inline void MV_NAME(nt_line)(unsigned char *d, const unsigned char *s)
{
#if defined(__AVX2__)
    __m256i x0 = _mm256_loadu_si256((const __m256i *)s), x1 = _mm256_loadu_si256((const __m256i *)(s + 32));
    _mm256_stream_si256((__m256i *)d, x0);
    _mm256_stream_si256((__m256i *)(d + 32), x1);
#else
    __m128i x0 = _mm_loadu_si128((const __m128i *)s), x1 = _mm_loadu_si128((const __m128i *)(s + 16));
    __m128i x2 = _mm_loadu_si128((const __m128i *)(s + 32)), x3 = _mm_loadu_si128((const __m128i *)(s + 48));
    _mm_stream_si128((__m128i *)d, x0);
    _mm_stream_si128((__m128i *)(d + 16), x1);
    _mm_stream_si128((__m128i *)(d + 32), x2);
    _mm_stream_si128((__m128i *)(d + 48), x3);
#endif
}

static inline void MV_NAME(nt_copy)(void *dst, const void *src, size_t n)
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
    /* Four lines a turn: a block of 256 bytes is one turn, no loop. */
    for (; n >= 256; n -= 256, d += 256, s += 256) {
        MV_NAME(nt_line)(d, s);
        MV_NAME(nt_line)(d + 64, s + 64);
        MV_NAME(nt_line)(d + 128, s + 128);
        MV_NAME(nt_line)(d + 192, s + 192);
    }
    for (; n >= 64; n -= 64, d += 64, s += 64)
        MV_NAME(nt_line)(d, s);
    halo_copy_lt64(d, s, n);
}
#define NT_FENCE() _mm_sfence()
#else
static inline void MV_NAME(nt_copy)(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#define NT_FENCE() ((void)0)
#endif

/* Runs shorter than 64 bytes cannot fill whole lines: ordinary stores.
 * Runs of whole lines are moved whole (WHOLE_RUNS), so that a run that
 * does not start on a line streams all the lines it covers entirely. */
#undef WHOLE_RUNS
#define WHOLE_RUNS 1
#define PF_RW 0
#define W(name) MV_NAME(pkn_##name)
#define MOVE(a, pk, n) ((n) >= 64 ? MV_NAME(nt_copy)((pk), (const void *)(a), (n)) : (void)memcpy((pk), (const void *)(a), (n)))
#define MOVEK(a, pk, K) ((K) >= 64 ? MV_NAME(nt_copy)((pk), (const void *)(a), K) : (void)memcpy((pk), (const void *)(a), K))
#define MOVEL(a, pk) MOVEK(a, pk, 64)
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef MOVEL

#undef PF_RW
#define PF_RW 1
#define W(name) MV_NAME(upn_##name)
#define MOVE(a, pk, n) ((n) >= 64 ? MV_NAME(nt_copy)((void *)(a), (pk), (n)) : (void)memcpy((void *)(a), (pk), (n)))
#define MOVEK(a, pk, K) ((K) >= 64 ? MV_NAME(nt_copy)((void *)(a), (pk), K) : (void)memcpy((void *)(a), (pk), K))
#define MOVEL(a, pk) MOVEK(a, pk, 64)
#include "datatype/walk.h"
#undef W
#undef MOVE
#undef MOVEK
#undef MOVEL
#undef PF_RW
#undef WHOLE_RUNS

/* Packs (unpacks) the packed bytes [pos, pos + len) of the derived type
 * dt at buf, clamped to the data by the caller; `stream`: with the movers
 * that stream their stores, then a fence so that the bytes are visible
 * to whoever is told next. */
static inline void MV_NAME(pack_range)(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len,
                                       void *dst, bool stream)
{
    if (stream) {
        MV_NAME(pkn_top)(buf, dt, pos, len, dst);
        NT_FENCE();
    } else {
        MV_NAME(pk_top)(buf, dt, pos, len, dst);
    }
}

static inline void MV_NAME(unpack_range)(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len,
                                         const void *src, bool stream)
{
    if (stream) {
        MV_NAME(upn_top)(buf, dt, pos, len, (unsigned char *)src);
        NT_FENCE();
    } else {
        MV_NAME(up_top)(buf, dt, pos, len, (unsigned char *)src);
    }
}
