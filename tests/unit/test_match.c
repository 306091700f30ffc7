/* Matching queues: earliest posting wins between a source's bin and the
 * wildcard list; tags and MPI_ANY_TAG; unexpected messages in arrival
 * order; removal of posted receives (cancel). */
#include "pt2pt/match.h"
#include "unit.h"

static halo_request_t reqs[16];

static halo_request_t *post(halo_match_t *m, int i, int src, int tag)
{
    halo_request_t *r = &reqs[i];
    memset(r, 0, sizeof *r);
    r->peer = src;
    r->tag = tag;
    halo_match_post(m, r);
    return r;
}

static halo_unexp_t *unexp(int src, int tag)
{
    halo_unexp_t *u = calloc(1, sizeof *u);
    u->src = src;
    u->tag = tag;
    return u;
}

int main(void)
{
    halo_match_t *m = halo_match_get(0x1234, 4);
    UCHECK(m != NULL);
    UCHECK(halo_match_find(0x1234) == m);
    UCHECK(halo_match_find(0x9999) == NULL);

    /* Source bin vs wildcard list: the earlier posting wins. */
    halo_request_t *a = post(m, 0, MPI_ANY_SOURCE, 5);
    halo_request_t *b = post(m, 1, 2, 5);
    UCHECK(halo_match_posted(m, 2, 5) == a);
    UCHECK(halo_match_posted(m, 2, 5) == b);
    UCHECK(halo_match_posted(m, 2, 5) == NULL);

    b = post(m, 2, 2, 5);
    a = post(m, 3, MPI_ANY_SOURCE, 5);
    UCHECK(halo_match_posted(m, 2, 5) == b);
    UCHECK(halo_match_posted(m, 3, 5) == a);

    /* Tags: exact, wildcard; a receive for another tag is skipped, not taken. */
    halo_request_t *t7 = post(m, 4, 1, 7);
    halo_request_t *tany = post(m, 5, 1, MPI_ANY_TAG);
    UCHECK(halo_match_posted(m, 1, 8) == tany);
    UCHECK(halo_match_posted(m, 1, 8) == NULL);
    UCHECK(halo_match_posted(m, 1, 7) == t7);

    /* Posted receives from other sources are not matched. */
    post(m, 6, 0, 1);
    UCHECK(halo_match_posted(m, 1, 1) == NULL);
    UCHECK(halo_match_unpost(m, &reqs[6]));
    UCHECK(!halo_match_unpost(m, &reqs[6]));
    UCHECK(halo_match_posted(m, 0, 1) == NULL);

    /* Unexpected queue: arrival order, wildcards, take vs peek. */
    halo_match_unexp_add(m, unexp(1, 10));
    halo_match_unexp_add(m, unexp(2, 11));
    halo_match_unexp_add(m, unexp(1, 12));
    halo_unexp_t *u = halo_match_unexp(m, 1, MPI_ANY_TAG, false);
    UCHECK(u && u->tag == 10);
    u = halo_match_unexp(m, MPI_ANY_SOURCE, 11, true);
    UCHECK(u && u->src == 2);
    halo_unexp_free(u);
    u = halo_match_unexp(m, 1, 12, true);
    UCHECK(u && u->tag == 12);
    halo_unexp_free(u);
    u = halo_match_unexp(m, MPI_ANY_SOURCE, MPI_ANY_TAG, true);
    UCHECK(u && u->tag == 10);
    halo_unexp_free(u);
    UCHECK(halo_match_unexp(m, MPI_ANY_SOURCE, MPI_ANY_TAG, false) == NULL);

    /* Growing the source bins keeps what was posted. */
    halo_request_t *keep = post(m, 7, 3, 2);
    halo_match_get(0x1234, 64);
    UCHECK(halo_match_posted(m, 3, 2) == keep);
    post(m, 8, 60, 2);
    UCHECK(halo_match_posted(m, 60, 2) == &reqs[8]);

    halo_match_release(0x1234);
    halo_match_release(0x1234);
    UCHECK(halo_match_find(0x1234) == NULL);
    UNIT_DONE();
}
