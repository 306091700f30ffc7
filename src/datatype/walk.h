/* The data mover over a type's program, written once for both directions:
 * datatype/movers.h includes this file once per direction and kind of store,
 *   W(name)          the name of a function for this direction,
 *   MOVE(a, pk, n)   copy n bytes between user address a and packed pk,
 *   MOVEK(a, pk, K)  the same for a constant K (a plain load and store),
 *   MOVEL(a, pk)     the same for one 64-byte line,
 *   PF_RW            0 when user memory is read, 1 when it is written,
 *   WHOLE_RUNS       (optional, default 0) 1: runs of whole lines are moved
 *                    with one MOVE each rather than line by line (MOVEL).
 * Node offsets are applied by the function that receives the node.
 * No include guard: this is a template. */

/* Runs of K bytes far apart (a column of a matrix, a face of a 3-D array)
 * touch a new line, often a new page, each: the hardware prefetcher stops
 * at page ends, so the line PF_AHEAD runs ahead is asked for in software
 * (about 10% faster for 8-byte runs 1 KiB apart, measured on the faces
 * of a 3-D array), into every cache level: a halo exchange comes back to
 * the same lines for the ghosts next to the face it sent. */
#ifndef WHOLE_RUNS
#define WHOLE_RUNS 0
#endif

#ifndef HALO_DT_PF_AHEAD
#define HALO_DT_PF_AHEAD 32
#define HALO_DT_PF_AHEAD_BYTES 4096
#define HALO_DT_PF_LOC 3   /* into every cache level: the NTA hint slowed the unpack after a pack */
#define HALO_DT_PF_SPAN_MIN ((MPI_Count)1 << 20)
#define W_RUNS_K(K)                                                                              \
    do {                                                                                         \
        if (stride >= 256 && reps >= HALO_DT_PF_AHEAD) {                                         \
            uintptr_t ahead = (uintptr_t)(HALO_DT_PF_AHEAD * stride);                            \
            for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += (K)) {            \
                __builtin_prefetch((const void *)(a + ahead), PF_RW, HALO_DT_PF_LOC);            \
                MOVEK(a, pk, (K));                                                               \
            }                                                                                    \
        } else {                                                                                 \
            for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += (K))              \
                MOVEK(a, pk, (K));                                                               \
        }                                                                                        \
    } while (0)
#endif

/* len bytes of whole lines (len a multiple of 64) at a, four lines a turn:
 * a block of 256 bytes is one straight sequence of moves (with 32-byte
 * registers, pack_avx2.c, that is where the time of a strided copy in
 * cache goes: the loop's own instructions, not the moves). With `pf`
 * (a constant at every call), the lines `ahead` bytes on are asked for in
 * the same turn. */
static inline void W(lines)(uintptr_t a, unsigned char *pk, MPI_Count len, bool pf, uintptr_t ahead)
{
    MPI_Count o = 0;
    for (; o + 256 <= len; o += 256) {
        if (pf) {
            uintptr_t f = a + ahead + (uintptr_t)o;
            __builtin_prefetch((const void *)f, PF_RW, HALO_DT_PF_LOC);
            __builtin_prefetch((const void *)(f + 64), PF_RW, HALO_DT_PF_LOC);
            __builtin_prefetch((const void *)(f + 128), PF_RW, HALO_DT_PF_LOC);
            __builtin_prefetch((const void *)(f + 192), PF_RW, HALO_DT_PF_LOC);
        }
        MOVEL(a + (uintptr_t)o, pk + o);
        MOVEL(a + (uintptr_t)o + 64, pk + o + 64);
        MOVEL(a + (uintptr_t)o + 128, pk + o + 128);
        MOVEL(a + (uintptr_t)o + 192, pk + o + 192);
    }
    for (; o < len; o += 64) {
        if (pf)
            __builtin_prefetch((const void *)(a + ahead + (uintptr_t)o), PF_RW, HALO_DT_PF_LOC);
        MOVEL(a + (uintptr_t)o, pk + o);
    }
}

/* Asks for the len bytes of whole lines at a (a loop of prefetches alone:
 * GCC deletes one unrolled by hand as if it did nothing). */
static inline void W(pf_lines)(uintptr_t a, MPI_Count len)
{
    for (MPI_Count o = 0; o < len; o += 64)
        __builtin_prefetch((const void *)(a + (uintptr_t)o), PF_RW, HALO_DT_PF_LOC);
}

/* `reps` runs of `len` bytes, `stride` apart, from address a. */
static inline void W(runs)(uintptr_t a, MPI_Count len, MPI_Count reps, MPI_Count stride, unsigned char **pkp)
{
    unsigned char *pk = *pkp;
    if (stride == len) {
        MOVE(a, pk, (size_t)(len * reps));
        *pkp = pk + len * reps;
        return;
    }
    switch (len) {
    case 1:
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += 1)
            MOVEK(a, pk, 1);
        break;
    case 2:
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += 2)
            MOVEK(a, pk, 2);
        break;
    case 4:
        W_RUNS_K(4);
        break;
    case 8:
        W_RUNS_K(8);
        break;
    case 12:
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += 12)
            MOVEK(a, pk, 12);
        break;
    case 16:
        W_RUNS_K(16);
        break;
    case 24:
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += 24)
            MOVEK(a, pk, 24);
        break;
    case 32:
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += 32)
            MOVEK(a, pk, 32);
        break;
    default:
        if (len % 64 == 0 && len <= 1024) {
            /* mid-sized blocks: 64-byte moves inline, no call per block;
             * over a span of PF_SPAN_MIN or more, the lines of the block
             * about PF_AHEAD_BYTES on are asked for in software, to read
             * or, unpacking with ordinary stores, to write (a vector of
             * 256-byte blocks unpacked at 1 MiB: 87-97% of memcpy against
             * 73-76% without); not where streaming stores replace the
             * lines written, which the prefetch would fetch for nothing */
            MPI_Count astride = stride > 0 ? stride : -stride;
            if ((PF_RW == 0 || !WHOLE_RUNS) && reps * astride >= HALO_DT_PF_SPAN_MIN) {
                MPI_Count blocks = HALO_DT_PF_AHEAD_BYTES / astride;
                uintptr_t ahead = (uintptr_t)((blocks > 1 ? blocks : 1) * stride);
                for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += len) {
                    if (WHOLE_RUNS) {
                        W(pf_lines)(a + ahead, len);
                        MOVE(a, pk, (size_t)len);
                    } else {
                        W(lines)(a, pk, len, true, ahead);
                    }
                }
                break;
            }
            if (WHOLE_RUNS) {
                for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += len)
                    MOVE(a, pk, (size_t)len);
                break;
            }
            for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += len)
                W(lines)(a, pk, len, false, 0);
            break;
        }
        for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride, pk += len)
            MOVE(a, pk, (size_t)len);
        break;
    }
    *pkp = pk;
}

/* One run of a length known only at run time, short ones without a call. */
static inline void W(one)(uintptr_t a, MPI_Count len, unsigned char **pkp)
{
    unsigned char *pk = *pkp;
    switch (len) {
    case 1: MOVEK(a, pk, 1); break;
    case 2: MOVEK(a, pk, 2); break;
    case 4: MOVEK(a, pk, 4); break;
    case 8: MOVEK(a, pk, 8); break;
    case 16: MOVEK(a, pk, 16); break;
    default: MOVE(a, pk, (size_t)len); break;
    }
    *pkp = pk + len;
}

/* `reps` whole instances of node n, the k-th at base + k * stride. */
static void W(rep)(const halo_dt_prog_t *p, const halo_dt_node_t *n, uintptr_t base, MPI_Count reps,
                   MPI_Count stride, unsigned char **pkp)
{
    base += (uintptr_t)n->off;
    switch (n->kind) {
    case HALO_DT_RUN:
        W(runs)(base, n->size, reps, stride, pkp);
        return;
    case HALO_DT_LOOP: {
        const halo_dt_node_t *c = &p->nodes[n->child];
        if (c->kind == HALO_DT_RUN) {
            /* Two-dimensional: the common vector and subarray plane. */
            uintptr_t a = base + (uintptr_t)c->off;
            for (MPI_Count k = 0; k < reps; k++, a += (uintptr_t)stride)
                W(runs)(a, c->size, n->count, n->stride, pkp);
        } else {
            for (MPI_Count k = 0; k < reps; k++, base += (uintptr_t)stride)
                W(rep)(p, c, base, n->count, n->stride, pkp);
        }
        return;
    }
    case HALO_DT_BLOCKS: {
        const halo_dt_block_t *bl = p->blk + n->first;
        MPI_Count nb = n->count;
        for (MPI_Count k = 0; k < reps; k++, base += (uintptr_t)stride)
            for (MPI_Count j = 0; j < nb; j++)
                W(one)(base + (uintptr_t)bl[j].off, bl[j].len, pkp);
        return;
    }
    default: {
        const halo_dt_ent_t *e = p->ent + n->first;
        for (MPI_Count k = 0; k < reps; k++, base += (uintptr_t)stride)
            for (MPI_Count j = 0; j < n->count; j++)
                W(rep)(p, &p->nodes[e[j].node], base, 1, 0, pkp);
        return;
    }
    }
}

/* Packed bytes [skip, skip + len) of one instance of node n at base. */
static void W(part)(const halo_dt_prog_t *p, const halo_dt_node_t *n, uintptr_t base, MPI_Count skip,
                    MPI_Count len, unsigned char **pkp)
{
    if (skip == 0 && len == n->size) {
        W(rep)(p, n, base, 1, 0, pkp);
        return;
    }
    uintptr_t b = base + (uintptr_t)n->off;
    switch (n->kind) {
    case HALO_DT_RUN:
        MOVE(b + (uintptr_t)skip, *pkp, (size_t)len);
        *pkp += len;
        return;
    case HALO_DT_LOOP: {
        const halo_dt_node_t *c = &p->nodes[n->child];
        MPI_Count cs = c->size, i = skip / cs, r = skip % cs;
        if (r) {
            MPI_Count m = cs - r < len ? cs - r : len;
            W(part)(p, c, b + (uintptr_t)(i * n->stride), r, m, pkp);
            len -= m;
            i++;
        }
        if (len >= cs) {
            MPI_Count k = len / cs;
            W(rep)(p, c, b + (uintptr_t)(i * n->stride), k, n->stride, pkp);
            i += k;
            len -= k * cs;
        }
        if (len)
            W(part)(p, c, b + (uintptr_t)(i * n->stride), 0, len, pkp);
        return;
    }
    case HALO_DT_BLOCKS: {
        const halo_dt_block_t *bl = p->blk + n->first;
        for (MPI_Count j = halo_dt_find_pos(&bl->pos, sizeof *bl, n->count, skip); len > 0; j++) {
            MPI_Count s = skip - bl[j].pos, m = bl[j].len - s < len ? bl[j].len - s : len;
            MOVE(b + (uintptr_t)(bl[j].off + s), *pkp, (size_t)m);
            *pkp += m;
            len -= m;
            skip += m;
        }
        return;
    }
    default: {
        const halo_dt_ent_t *e = p->ent + n->first;
        for (MPI_Count j = halo_dt_find_pos(&e->pos, sizeof *e, n->count, skip); len > 0; j++) {
            const halo_dt_node_t *c = &p->nodes[e[j].node];
            MPI_Count s = skip - e[j].pos, m = c->size - s < len ? c->size - s : len;
            W(part)(p, c, b, s, m, pkp);
            len -= m;
            skip += m;
        }
        return;
    }
    }
}

/* Packed bytes [pos, pos + len) of `count` elements at buf; the caller has
 * clamped the range to the data. */
static void W(top)(uintptr_t buf, const halo_dtype_t *dt, MPI_Count pos, MPI_Count len, unsigned char *pk)
{
    const halo_dt_prog_t *p = &dt->prog;
    const halo_dt_node_t *r = &p->nodes[p->root];
    MPI_Count sz = dt->size, ext = dt->extent;
    MPI_Count e = pos / sz, s = pos % sz;
    if (s) {
        MPI_Count m = sz - s < len ? sz - s : len;
        W(part)(p, r, buf + (uintptr_t)(e * ext), s, m, &pk);
        len -= m;
        e++;
    }
    if (len >= sz) {
        MPI_Count k = len / sz;
        W(rep)(p, r, buf + (uintptr_t)(e * ext), k, ext, &pk);
        e += k;
        len -= k * sz;
    }
    if (len)
        W(part)(p, r, buf + (uintptr_t)(e * ext), 0, len, &pk);
}
