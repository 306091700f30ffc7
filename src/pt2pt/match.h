/* Matching queues of one context: posted receives (binned by source, plus
 * one list for MPI_ANY_SOURCE, each in posting order) and unexpected
 * messages (in arrival order). A message goes to the earliest-posted
 * receive that matches it: the head match of its source's bin and of the
 * wildcard list are compared by posting order. */
#ifndef HALO_PT2PT_MATCH_H
#define HALO_PT2PT_MATCH_H

#include "pt2pt/pt2pt.h"

typedef struct halo_unexp {
    struct halo_unexp *next, *prev;
    int src, tag;          /* ranks in the communicator */
    int src_world;
    uint8_t type, flags;   /* HALO_PKT_EAGER or HALO_PKT_RTS; HALO_PKT_F_SYNC */
    uint64_t bytes, sreq, aux;
    size_t len;            /* eager payload bytes held in data */
    char *data;
} halo_unexp_t;

typedef struct halo_rlist {
    halo_request_t *head, *tail;
} halo_rlist_t;

typedef struct halo_match {
    uint32_t ctx;
    int refs;
    struct halo_match *hnext;
    halo_rlist_t any;
    halo_rlist_t *by_src;
    int nsrc;
    halo_unexp_t *uq_head, *uq_tail;
    uint64_t order;
} halo_match_t;

/* The entry of a context, or NULL. Every receive start and every arriving
 * packet asks; the last answer is kept, since traffic mostly stays on one
 * context for a while. */
extern halo_match_t *halo_match_last;
halo_match_t *halo_match_lookup(uint32_t ctx);
static inline halo_match_t *halo_match_find(uint32_t ctx)
{
    halo_match_t *m = halo_match_last;
    return m && m->ctx == ctx ? m : halo_match_lookup(ctx);
}

/* Takes the earliest posted receive matching (src, tag), or NULL. */
halo_request_t *halo_match_posted(halo_match_t *m, int src, int tag);
/* Appends a receive to the posted queues. */
void halo_match_post(halo_match_t *m, halo_request_t *r);
/* Removes a posted receive (cancel); false when it was not there. */
bool halo_match_unpost(halo_match_t *m, halo_request_t *r);
/* Receives posted and not yet matched, on every context. */
extern int halo_match_nposted;
/* For the tools interface's performance variables (core/mpit_pvars.c):
 * messages waiting in the unexpected queues now, messages that ever
 * waited there, and messages (or announcements of large ones) that
 * arrived. Changed under the library's lock, read by tools at any time. */
extern long halo_match_nunexp;
extern uint64_t halo_match_unexp_total;
extern uint64_t halo_pt2pt_arrived;

/* First unexpected message matching (source, tag) with wildcards; removed
 * from the queue when `take`. */
halo_unexp_t *halo_match_unexp(halo_match_t *m, int source, int tag, bool take);
/* Takes the unexpected message that the send sreq of process src_world
 * sent, if it is still there and its sender still waits on it (an RTS, a
 * synchronous eager message: the only kinds whose sreq names a live
 * request), or returns NULL. */
halo_unexp_t *halo_match_unexp_of_send(halo_match_t *m, int src_world, uint64_t sreq);
void halo_match_unexp_add(halo_match_t *m, halo_unexp_t *u);
void halo_unexp_free(halo_unexp_t *u);

static inline bool halo_tag_match(int want, int got)
{
    return want == got || (want == MPI_ANY_TAG && got >= 0);
}

#endif
