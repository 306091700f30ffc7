/* Matching queues (rules in match.h) and the table of contexts. */
#include "pt2pt/match.h"

/* The table of contexts: chained buckets, a power of two of them, doubled
 * whenever the entries outnumber the buckets, so that a lookup (every
 * receive start and every arriving packet makes one) stays short however
 * many communicators the application holds (three contexts each). */
static halo_match_t **buckets;
static unsigned nbuckets_log2, nentries;

static inline unsigned bucket_of(uint32_t ctx)
{
    return (ctx * 2654435761u) >> (32 - nbuckets_log2);
}

halo_match_t *halo_match_last;

halo_match_t *halo_match_lookup(uint32_t ctx)
{
    if (!buckets)
        return NULL;
    for (halo_match_t *m = buckets[bucket_of(ctx)]; m; m = m->hnext)
        if (m->ctx == ctx)
            return halo_match_last = m;
    return NULL;
}

static void table_grow(void)
{
    halo_match_t **old = buckets;
    unsigned nold = old ? 1u << nbuckets_log2 : 0;
    nbuckets_log2 = old ? nbuckets_log2 + 1 : 8;
    buckets = halo_calloc((size_t)1 << nbuckets_log2, sizeof *buckets);
    for (unsigned i = 0; i < nold; i++) {
        while (old[i]) {
            halo_match_t *m = old[i];
            old[i] = m->hnext;
            unsigned b = bucket_of(m->ctx);
            m->hnext = buckets[b];
            buckets[b] = m;
        }
    }
    free(old);
}

halo_match_t *halo_match_get(uint32_t ctx, int nsrc)
{
    halo_match_t *m = halo_match_find(ctx);
    if (!m) {
        if (!buckets || nentries >= 1u << nbuckets_log2)
            table_grow();
        m = halo_calloc(1, sizeof *m);
        m->ctx = ctx;
        unsigned b = bucket_of(ctx);
        m->hnext = buckets[b];
        buckets[b] = m;
        nentries++;
    }
    if (nsrc > m->nsrc) {
        m->by_src = halo_realloc(m->by_src, (size_t)nsrc * sizeof *m->by_src);
        memset(m->by_src + m->nsrc, 0, (size_t)(nsrc - m->nsrc) * sizeof *m->by_src);
        m->nsrc = nsrc;
    }
    if (nsrc > 0)
        m->refs++;
    return m;
}

void halo_match_release(uint32_t ctx)
{
    halo_match_t *m = halo_match_find(ctx);
    if (!m || --m->refs > 0)
        return;
    halo_match_t **pp = &buckets[bucket_of(ctx)];
    while (*pp != m)
        pp = &(*pp)->hnext;
    *pp = m->hnext;
    nentries--;
    if (halo_match_last == m)
        halo_match_last = NULL;
    while (m->uq_head) {
        halo_unexp_t *u = m->uq_head;
        m->uq_head = u->next;
        HALO_COUNT_ADD(halo_match_nunexp, -1);
        halo_unexp_free(u);
    }
    free(m->by_src);
    free(m);
}

static void rlist_append(halo_rlist_t *l, halo_request_t *r)
{
    r->next = NULL;
    r->prev = l->tail;
    if (l->tail)
        l->tail->next = r;
    else
        l->head = r;
    l->tail = r;
}

static void rlist_remove(halo_rlist_t *l, halo_request_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        l->head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        l->tail = r->prev;
    r->next = r->prev = NULL;
}

static halo_request_t *rlist_first_tag(halo_rlist_t *l, int tag)
{
    for (halo_request_t *r = l->head; r; r = r->next)
        if (halo_tag_match(r->tag, tag))
            return r;
    return NULL;
}

int halo_match_nposted;
long halo_match_nunexp;
uint64_t halo_match_unexp_total;

halo_request_t *halo_match_posted(halo_match_t *m, int src, int tag)
{
    halo_request_t *a = NULL, *b = rlist_first_tag(&m->any, tag);
    if (src >= 0 && src < m->nsrc)
        a = rlist_first_tag(&m->by_src[src], tag);
    if (a && (!b || a->order < b->order)) {
        rlist_remove(&m->by_src[src], a);
        HALO_COUNT_ADD(halo_match_nposted, -1);
        return a;
    }
    if (b) {
        rlist_remove(&m->any, b);
        HALO_COUNT_ADD(halo_match_nposted, -1);
    }
    return b;
}

void halo_match_post(halo_match_t *m, halo_request_t *r)
{
    HALO_COUNT_ADD(halo_match_nposted, 1);
    r->order = ++m->order;
    if (r->peer == MPI_ANY_SOURCE)
        rlist_append(&m->any, r);
    else
        rlist_append(&m->by_src[r->peer], r);
}

bool halo_match_unpost(halo_match_t *m, halo_request_t *r)
{
    halo_rlist_t *l = r->peer == MPI_ANY_SOURCE ? &m->any : &m->by_src[r->peer];
    for (halo_request_t *x = l->head; x; x = x->next) {
        if (x == r) {
            rlist_remove(l, r);
            HALO_COUNT_ADD(halo_match_nposted, -1);
            return true;
        }
    }
    return false;
}

static void unexp_unlink(halo_match_t *m, halo_unexp_t *u)
{
    HALO_COUNT_ADD(halo_match_nunexp, -1);
    if (u->prev)
        u->prev->next = u->next;
    else
        m->uq_head = u->next;
    if (u->next)
        u->next->prev = u->prev;
    else
        m->uq_tail = u->prev;
    u->next = u->prev = NULL;
}

halo_unexp_t *halo_match_unexp(halo_match_t *m, int source, int tag, bool take)
{
    for (halo_unexp_t *u = m->uq_head; u; u = u->next) {
        if ((source == MPI_ANY_SOURCE || source == u->src) && halo_tag_match(tag, u->tag)) {
            if (take)
                unexp_unlink(m, u);
            return u;
        }
    }
    return NULL;
}

halo_unexp_t *halo_match_unexp_of_send(halo_match_t *m, int src_world, uint64_t sreq)
{
    for (halo_unexp_t *u = m->uq_head; u; u = u->next) {
        if (u->src_world == src_world && u->sreq == sreq &&
            (u->type == HALO_PKT_RTS || (u->flags & HALO_PKT_F_SYNC))) {
            unexp_unlink(m, u);
            return u;
        }
    }
    return NULL;
}

void halo_match_unexp_add(halo_match_t *m, halo_unexp_t *u)
{
    HALO_COUNT_ADD(halo_match_nunexp, 1);
    HALO_COUNT_ADD(halo_match_unexp_total, 1);
    u->next = NULL;
    u->prev = m->uq_tail;
    if (m->uq_tail)
        m->uq_tail->next = u;
    else
        m->uq_head = u;
    m->uq_tail = u;
}

void halo_unexp_free(halo_unexp_t *u)
{
    free(u->data);
    free(u);
}
