/* A type's program: construction with simplification, compaction, the
 * queries constructors need (bounds, runs, flattening) and the commit-time
 * compilation. The layout of a program is described in dtype.h. */
#include "datatype/prog.h"

/* Regular lists of at most this many runs are inlined into one BLOCKS list
 * when a list is built from run-like pieces; beyond, they stay nested. */
#define INLINE_BLOCKS_MAX 4096
/* Commit flattens a program whose element has at most this many runs into
 * one BLOCKS list when that removes nesting. */
#define FLATTEN_MAX 64

static MPI_Count sat_mul(MPI_Count a, MPI_Count b)
{
    if (a == 0 || b == 0)
        return 0;
    if (a > INT64_MAX / b)
        return INT64_MAX;
    return a * b;
}

static MPI_Count sat_add(MPI_Count a, MPI_Count b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

/* ---------------------------------------------------------------- building */

void hb_init(halo_dt_build_t *b)
{
    memset(b, 0, sizeof *b);
    b->p.root = -1;
}

static int32_t new_node(halo_dt_build_t *b, const halo_dt_node_t *n)
{
    if (b->p.nnodes == b->cap_nodes) {
        b->cap_nodes = b->cap_nodes ? 2 * b->cap_nodes : 8;
        b->p.nodes = halo_realloc(b->p.nodes, (size_t)b->cap_nodes * sizeof *b->p.nodes);
    }
    b->p.nodes[b->p.nnodes] = *n;
    return b->p.nnodes++;
}

static MPI_Count reserve_blk(halo_dt_build_t *b, MPI_Count n)
{
    if (b->p.nblk + n > b->cap_blk) {
        while (b->p.nblk + n > b->cap_blk)
            b->cap_blk = b->cap_blk ? 2 * b->cap_blk : 16;
        b->p.blk = halo_realloc(b->p.blk, (size_t)b->cap_blk * sizeof *b->p.blk);
    }
    MPI_Count first = b->p.nblk;
    b->p.nblk += n;
    return first;
}

static MPI_Count reserve_ent(halo_dt_build_t *b, MPI_Count n)
{
    if (b->p.nent + n > b->cap_ent) {
        while (b->p.nent + n > b->cap_ent)
            b->cap_ent = b->cap_ent ? 2 * b->cap_ent : 16;
        b->p.ent = halo_realloc(b->p.ent, (size_t)b->cap_ent * sizeof *b->p.ent);
    }
    MPI_Count first = b->p.nent;
    b->p.nent += n;
    return first;
}

int32_t hb_import(halo_dt_build_t *b, const halo_dtype_t *t)
{
    const halo_dt_prog_t *s = &t->prog;
    if (s->root < 0 || t->size == 0)
        return -1;
    for (int i = 0; i < b->nimp; i++)
        if (b->imp[i].t == t)
            return b->imp[i].root;
    int32_t nbase = b->p.nnodes;
    MPI_Count bbase = reserve_blk(b, s->nblk);
    MPI_Count ebase = reserve_ent(b, s->nent);
    if (s->nblk)
        memcpy(b->p.blk + bbase, s->blk, (size_t)s->nblk * sizeof *s->blk);
    for (MPI_Count i = 0; i < s->nent; i++)
        b->p.ent[ebase + i] = (halo_dt_ent_t){s->ent[i].pos, s->ent[i].node + nbase};
    for (int32_t i = 0; i < s->nnodes; i++) {
        halo_dt_node_t n = s->nodes[i];
        if (n.kind == HALO_DT_LOOP)
            n.child += nbase;
        else if (n.kind == HALO_DT_BLOCKS)
            n.first += bbase;
        else if (n.kind == HALO_DT_LIST)
            n.first += ebase;
        new_node(b, &n);
    }
    int32_t root = s->root + nbase;
    if (b->nimp < (int)HALO_ARRAY_LEN(b->imp))
        b->imp[b->nimp++] = (struct hb_imp){t, root};
    return root;
}

int32_t hb_run(halo_dt_build_t *b, MPI_Count off, MPI_Count len)
{
    if (len <= 0)
        return -1;
    halo_dt_node_t n = {.kind = HALO_DT_RUN, .child = -1, .off = off, .size = len};
    return new_node(b, &n);
}

int32_t hb_shift(halo_dt_build_t *b, int32_t node, MPI_Count delta)
{
    if (node < 0 || delta == 0)
        return node;
    halo_dt_node_t n = b->p.nodes[node];
    n.off += delta;
    return new_node(b, &n);
}

int32_t hb_loop(halo_dt_build_t *b, MPI_Count off, MPI_Count count, MPI_Count stride, int32_t child)
{
    if (child < 0 || count <= 0)
        return -1;
    halo_dt_node_t c = b->p.nodes[child];
    if (c.size == 0)
        return -1;
    if (count == 1)
        return hb_shift(b, child, off);
    /* Instances that abut: one run. */
    if (c.kind == HALO_DT_RUN && c.size == stride)
        return hb_run(b, off + c.off, count * c.size);
    /* A loop of loops whose instances continue each other: one loop. */
    if (c.kind == HALO_DT_LOOP && stride == c.count * c.stride)
        return hb_loop(b, off + c.off, count * c.count, c.stride, c.child);
    halo_dt_node_t n = {.kind = HALO_DT_LOOP, .child = child, .off = off, .size = count * c.size,
                        .count = count, .stride = stride};
    return new_node(b, &n);
}

static bool same_shape(const halo_dt_node_t *a, const halo_dt_node_t *c)
{
    return a->kind == c->kind && a->size == c->size && a->count == c->count && a->stride == c->stride &&
           a->child == c->child && a->first == c->first;
}

int32_t hb_runs(halo_dt_build_t *b, const MPI_Count *off, const MPI_Count *len, MPI_Count n)
{
    MPI_Count first = reserve_blk(b, n);
    MPI_Count nb = 0, pos = 0;
    for (MPI_Count i = 0; i < n; i++) {
        if (len[i] <= 0)
            continue;
        halo_dt_block_t *last = nb ? &b->p.blk[first + nb - 1] : NULL;
        if (last && last->off + last->len == off[i]) {
            last->len += len[i];
        } else {
            b->p.blk[first + nb] = (halo_dt_block_t){off[i], len[i], pos};
            nb++;
        }
        pos += len[i];
    }
    b->p.nblk = first + nb;   /* give back what merging saved */
    const halo_dt_block_t *r = b->p.blk + first;
    if (nb == 0) {
        b->p.nblk = first;
        return -1;
    }
    if (nb == 1) {
        MPI_Count o0 = r[0].off, l0 = r[0].len;
        b->p.nblk = first;
        return hb_run(b, o0, l0);
    }
    /* Equal runs at equal spacing: a loop. */
    bool regular = true;
    MPI_Count d = r[1].off - r[0].off;
    for (MPI_Count i = 1; i < nb && regular; i++)
        regular = r[i].len == r[0].len && r[i].off - r[i - 1].off == d;
    if (regular) {
        MPI_Count off0 = r[0].off, len0 = r[0].len;
        b->p.nblk = first;
        return hb_loop(b, off0, nb, d, hb_run(b, 0, len0));
    }
    halo_dt_node_t nd = {.kind = HALO_DT_BLOCKS, .child = -1, .off = 0, .size = pos, .count = nb,
                         .first = first};
    return new_node(b, &nd);
}

/* The runs of run-like nodes (RUN, BLOCKS) as one list of runs. */
static int32_t list_of_runs(halo_dt_build_t *b, const int32_t *v, MPI_Count m, MPI_Count total)
{
    MPI_Count *off = halo_malloc((size_t)total * sizeof *off), *len = halo_malloc((size_t)total * sizeof *len);
    MPI_Count k = 0;
    for (MPI_Count i = 0; i < m; i++) {
        const halo_dt_node_t *n = &b->p.nodes[v[i]];
        if (n->kind == HALO_DT_RUN) {
            off[k] = n->off;
            len[k++] = n->size;
        } else {
            for (MPI_Count j = 0; j < n->count; j++) {
                off[k] = n->off + b->p.blk[n->first + j].off;
                len[k++] = b->p.blk[n->first + j].len;
            }
        }
    }
    int32_t r = hb_runs(b, off, len, k);
    free(off);
    free(len);
    return r;
}

int32_t hb_list(halo_dt_build_t *b, const int32_t *nodes, MPI_Count n)
{
    int32_t *v = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    MPI_Count m = 0;
    for (MPI_Count i = 0; i < n; i++)
        if (nodes[i] >= 0 && b->p.nodes[nodes[i]].size > 0)
            v[m++] = nodes[i];
    int32_t out = -1;
    if (m == 0)
        goto done;
    if (m == 1) {
        out = v[0];
        goto done;
    }
    /* Run-like pieces: one list of runs. */
    bool runlike = true;
    MPI_Count total = 0;
    for (MPI_Count i = 0; i < m && runlike; i++) {
        const halo_dt_node_t *c = &b->p.nodes[v[i]];
        if (c->kind == HALO_DT_RUN)
            total++;
        else if (c->kind == HALO_DT_BLOCKS)
            total += c->count;
        else
            runlike = false;
    }
    if (runlike && (total == m || total <= INLINE_BLOCKS_MAX)) {
        out = list_of_runs(b, v, m, total);
        goto done;
    }
    /* Copies of one shape at equal spacing: a loop. */
    const halo_dt_node_t *c0 = &b->p.nodes[v[0]];
    MPI_Count d = b->p.nodes[v[1]].off - c0->off;
    bool regular = true;
    for (MPI_Count i = 1; i < m && regular; i++) {
        const halo_dt_node_t *ci = &b->p.nodes[v[i]];
        regular = same_shape(ci, c0) && ci->off - b->p.nodes[v[i - 1]].off == d;
    }
    if (regular) {
        MPI_Count off0 = c0->off;
        out = hb_loop(b, off0, m, d, hb_shift(b, v[0], -off0));
        goto done;
    }
    MPI_Count first = reserve_ent(b, m), pos = 0;
    for (MPI_Count i = 0; i < m; i++) {
        b->p.ent[first + i] = (halo_dt_ent_t){pos, v[i]};
        pos += b->p.nodes[v[i]].size;
    }
    halo_dt_node_t ln = {.kind = HALO_DT_LIST, .child = -1, .off = 0, .size = pos, .count = m,
                         .first = first};
    out = new_node(b, &ln);
done:
    free(v);
    return out;
}

/* ---------------------------------------------------------------- compaction */

typedef struct compact {
    const halo_dt_prog_t *s;
    halo_dt_build_t *d;
    int32_t *nmap;
    MPI_Count *bmap, *emap;
} compact_t;

static int32_t copy_node(compact_t *c, int32_t i)
{
    if (c->nmap[i] >= 0)
        return c->nmap[i];
    halo_dt_node_t n = c->s->nodes[i];
    if (n.kind == HALO_DT_LOOP) {
        n.child = copy_node(c, n.child);
    } else if (n.kind == HALO_DT_BLOCKS) {
        if (c->bmap[n.first] < 0) {
            MPI_Count f = reserve_blk(c->d, n.count);
            memcpy(c->d->p.blk + f, c->s->blk + n.first, (size_t)n.count * sizeof *c->s->blk);
            c->bmap[n.first] = f;
        }
        n.first = c->bmap[n.first];
    } else if (n.kind == HALO_DT_LIST) {
        if (c->emap[n.first] < 0) {
            MPI_Count f = reserve_ent(c->d, n.count);
            for (MPI_Count k = 0; k < n.count; k++)
                c->d->p.ent[f + k] = c->s->ent[n.first + k];
            /* The copy of a child may grow (move) the entry array: its
             * result is stored only once the call has returned. */
            for (MPI_Count k = 0; k < n.count; k++) {
                int32_t child = copy_node(c, c->s->ent[n.first + k].node);
                c->d->p.ent[f + k].node = child;
            }
            c->emap[n.first] = f;
        }
        n.first = c->emap[n.first];
    }
    int32_t j = new_node(c->d, &n);
    c->nmap[i] = j;
    return j;
}

void hb_finish(halo_dt_build_t *b, int32_t root, halo_dt_prog_t *out)
{
    halo_dt_build_t d;
    hb_init(&d);
    if (root >= 0 && b->p.nodes[root].size > 0) {
        compact_t c = {&b->p, &d, NULL, NULL, NULL};
        c.nmap = halo_malloc((size_t)b->p.nnodes * sizeof *c.nmap);
        c.bmap = halo_malloc((size_t)(b->p.nblk ? b->p.nblk : 1) * sizeof *c.bmap);
        c.emap = halo_malloc((size_t)(b->p.nent ? b->p.nent : 1) * sizeof *c.emap);
        memset(c.nmap, 0xff, (size_t)b->p.nnodes * sizeof *c.nmap);
        memset(c.bmap, 0xff, (size_t)(b->p.nblk ? b->p.nblk : 1) * sizeof *c.bmap);
        memset(c.emap, 0xff, (size_t)(b->p.nent ? b->p.nent : 1) * sizeof *c.emap);
        d.p.root = copy_node(&c, root);
        free(c.nmap);
        free(c.bmap);
        free(c.emap);
    }
    halo_dt_prog_free(&b->p);
    /* Trim to size: programs live as long as their type. */
    if (d.p.nnodes)
        d.p.nodes = halo_realloc(d.p.nodes, (size_t)d.p.nnodes * sizeof *d.p.nodes);
    if (d.p.nblk)
        d.p.blk = halo_realloc(d.p.blk, (size_t)d.p.nblk * sizeof *d.p.blk);
    if (d.p.nent)
        d.p.ent = halo_realloc(d.p.ent, (size_t)d.p.nent * sizeof *d.p.ent);
    *out = d.p;
}

void halo_dt_prog_free(halo_dt_prog_t *p)
{
    free(p->nodes);
    free(p->blk);
    free(p->ent);
    memset(p, 0, sizeof *p);
    p->root = -1;
}

void halo_dt_prog_copy(halo_dt_prog_t *dst, const halo_dt_prog_t *src)
{
    *dst = *src;
    dst->nodes = NULL;
    dst->blk = NULL;
    dst->ent = NULL;
    if (src->nnodes) {
        dst->nodes = halo_malloc((size_t)src->nnodes * sizeof *src->nodes);
        memcpy(dst->nodes, src->nodes, (size_t)src->nnodes * sizeof *src->nodes);
    }
    if (src->nblk) {
        dst->blk = halo_malloc((size_t)src->nblk * sizeof *src->blk);
        memcpy(dst->blk, src->blk, (size_t)src->nblk * sizeof *src->blk);
    }
    if (src->nent) {
        dst->ent = halo_malloc((size_t)src->nent * sizeof *src->ent);
        memcpy(dst->ent, src->ent, (size_t)src->nent * sizeof *src->ent);
    }
}

/* ---------------------------------------------------------------- queries */

static void node_bounds(const halo_dt_prog_t *p, int32_t i, MPI_Count *lo_p, MPI_Count *hi_p)
{
    const halo_dt_node_t *n = &p->nodes[i];
    MPI_Count lo = 0, hi = 0;
    switch (n->kind) {
    case HALO_DT_RUN:
        lo = 0;
        hi = n->size;
        break;
    case HALO_DT_LOOP: {
        node_bounds(p, n->child, &lo, &hi);
        MPI_Count span = (n->count - 1) * n->stride;
        if (span < 0)
            lo += span;
        else
            hi += span;
        break;
    }
    case HALO_DT_BLOCKS:
        for (MPI_Count k = 0; k < n->count; k++) {
            const halo_dt_block_t *r = &p->blk[n->first + k];
            if (k == 0 || r->off < lo)
                lo = r->off;
            if (k == 0 || r->off + r->len > hi)
                hi = r->off + r->len;
        }
        break;
    case HALO_DT_LIST:
        for (MPI_Count k = 0; k < n->count; k++) {
            MPI_Count l, h;
            node_bounds(p, p->ent[n->first + k].node, &l, &h);
            if (k == 0 || l < lo)
                lo = l;
            if (k == 0 || h > hi)
                hi = h;
        }
        break;
    }
    *lo_p = lo + n->off;
    *hi_p = hi + n->off;
}

void halo_dt_prog_bounds(const halo_dt_prog_t *p, MPI_Count *lo_p, MPI_Count *hi_p)
{
    *lo_p = *hi_p = 0;
    if (p->root >= 0)
        node_bounds(p, p->root, lo_p, hi_p);
}

static MPI_Count node_runs(const halo_dt_prog_t *p, int32_t i)
{
    const halo_dt_node_t *n = &p->nodes[i];
    switch (n->kind) {
    case HALO_DT_RUN:
        return 1;
    case HALO_DT_LOOP:
        return sat_mul(n->count, node_runs(p, n->child));
    case HALO_DT_BLOCKS:
        return n->count;
    default: {
        MPI_Count r = 0;
        for (MPI_Count k = 0; k < n->count; k++)
            r = sat_add(r, node_runs(p, p->ent[n->first + k].node));
        return r;
    }
    }
}

MPI_Count halo_dt_prog_runs(const halo_dt_prog_t *p)
{
    return p->root < 0 ? 0 : node_runs(p, p->root);
}

typedef struct flat {
    halo_dt_block_t *out;
    MPI_Count n, max, pos;
} flat_t;

static bool flat_add(flat_t *f, MPI_Count off, MPI_Count len)
{
    if (f->n > 0 && f->out[f->n - 1].off + f->out[f->n - 1].len == off) {
        f->out[f->n - 1].len += len;
    } else {
        if (f->n == f->max)
            return false;
        f->out[f->n++] = (halo_dt_block_t){off, len, f->pos};
    }
    f->pos += len;
    return true;
}

static bool flat_node(const halo_dt_prog_t *p, int32_t i, MPI_Count base, flat_t *f)
{
    const halo_dt_node_t *n = &p->nodes[i];
    base += n->off;
    switch (n->kind) {
    case HALO_DT_RUN:
        return flat_add(f, base, n->size);
    case HALO_DT_LOOP:
        for (MPI_Count k = 0; k < n->count; k++)
            if (!flat_node(p, n->child, base + k * n->stride, f))
                return false;
        return true;
    case HALO_DT_BLOCKS:
        for (MPI_Count k = 0; k < n->count; k++)
            if (!flat_add(f, base + p->blk[n->first + k].off, p->blk[n->first + k].len))
                return false;
        return true;
    default:
        for (MPI_Count k = 0; k < n->count; k++)
            if (!flat_node(p, p->ent[n->first + k].node, base, f))
                return false;
        return true;
    }
}

MPI_Count halo_dt_prog_flatten(const halo_dt_prog_t *p, halo_dt_block_t *out, MPI_Count max)
{
    flat_t f = {out, 0, max, 0};
    if (p->root < 0)
        return 0;
    return flat_node(p, p->root, 0, &f) ? f.n : -1;
}

/* ---------------------------------------------------------------- per-type finishing */

void halo_dt_finish(halo_dtype_t *t)
{
    const halo_dt_prog_t *p = &t->prog;
    t->nruns = halo_dt_prog_runs(p);
    t->flags &= ~(uint32_t)HALO_DT_CONTIG;
    if (t->size == 0) {
        if (t->extent == 0)
            t->flags |= HALO_DT_CONTIG;
        return;
    }
    const halo_dt_node_t *r = &p->nodes[p->root];
    if (r->kind == HALO_DT_RUN && r->off == 0 && r->size == t->extent)
        t->flags |= HALO_DT_CONTIG;
}

bool halo_dt_one_run(const halo_dtype_t *dt, MPI_Count count, MPI_Count *off_p)
{
    if (dt->size == 0 || count == 0) {
        *off_p = 0;
        return true;
    }
    const halo_dt_node_t *r = &dt->prog.nodes[dt->prog.root];
    if (r->kind != HALO_DT_RUN || (count > 1 && r->size != dt->extent))
        return false;
    *off_p = r->off;
    return true;
}

MPI_Count halo_dt_iov_count(const halo_dtype_t *dt, MPI_Count count)
{
    if (halo_dt_contig(dt))
        return count > 0 && dt->size > 0 ? 1 : 0;
    return sat_mul(count, dt->nruns);
}

void halo_dt_compile(halo_dtype_t *t)
{
    if (t->flags & HALO_DT_PREDEFINED)
        return;
    halo_dt_prog_t *p = &t->prog;
    if (t->blocks == NULL && t->size > 0 && t->nruns <= HALO_DT_FLAT_MAX) {
        halo_dt_block_t *v = halo_malloc((size_t)t->nruns * sizeof *v);
        MPI_Count n = halo_dt_prog_flatten(p, v, t->nruns);
        if (n == 1) {
            t->one_block = v[0];
            t->blocks = &t->one_block;
            free(v);
        } else {
            t->blocks = v;
        }
        t->nblocks = n;
        /* Small nested programs run faster as one list of runs. */
        const halo_dt_node_t *r = &p->nodes[p->root];
        bool simple = r->kind == HALO_DT_RUN || r->kind == HALO_DT_BLOCKS ||
                      (r->kind == HALO_DT_LOOP && p->nodes[r->child].kind == HALO_DT_RUN);
        if (!simple && n >= 2 && n <= FLATTEN_MAX) {
            halo_dt_build_t b;
            hb_init(&b);
            MPI_Count first = reserve_blk(&b, n);
            memcpy(b.p.blk + first, t->blocks, (size_t)n * sizeof *b.p.blk);
            halo_dt_node_t bn = {.kind = HALO_DT_BLOCKS, .child = -1, .size = t->size, .count = n,
                                 .first = first};
            int32_t root = new_node(&b, &bn);
            halo_dt_prog_free(p);
            hb_finish(&b, root, p);
        }
    }
    if (t->size == 0) {
        t->nblocks = 0;
        t->one_block = (halo_dt_block_t){0, 0, 0};
        t->blocks = &t->one_block;
    }
}
