/* Allgather and Allgatherv, linear: every rank sends its block to every
 * other rank and receives every other block, all 2 (p - 1) messages posted
 * at once.
 *
 * Cost: (p - 1) * alpha + (n - n_own) * beta per rank, n the gathered
 * size, with no step waiting for another: large blocks are read in place
 * by their receivers (CMA), each straight from its owner's buffer, where
 * the ring forwards every block p - 1 times in turn (and with more ranks
 * than cores every step waits for a neighbour to be scheduled). Any p,
 * in place or not. The choice for large blocks among ranks of one node. */
#include "coll/algos.h"

int halo_allgather_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    int64_t ext = (int64_t)halo_type_extent(a->rtype);
    halo_bref_t rb = halo_addr(a->rbuf);
#define CNT(i) (a->rcounts ? a->rcounts[i] : a->rcount)
#define AT(i) halo_bref_add(rb, (a->rdispls ? a->rdispls[i] : (int64_t)(i) * (int64_t)a->rcount) * ext)
    bool in_place = a->sbuf == MPI_IN_PLACE;
    for (int k = 1; k < p; k++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        if (in_place)
            halo_sched_send(s_p, 0, AT(me), CNT(me), a->rtype, to);
        else
            halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, to);
        halo_sched_recv(s_p, 0, AT(from), CNT(from), a->rtype, from);
    }
    /* The own block goes into place after the messages (its readers read
     * the send buffer meanwhile). */
    if (!in_place)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, AT(me), CNT(me), a->rtype);
#undef CNT
#undef AT
    return MPI_SUCCESS;
}
