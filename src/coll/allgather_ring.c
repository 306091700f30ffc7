/* Allgather, ring.
 *
 * In step k every rank sends to its right neighbour the block it received
 * in step k-1 (its own block first) and receives the next block from its
 * left neighbour.
 * Cost: (p - 1) * (alpha + (n/p) * beta), n the gathered size. Any p; in
 * place or not. Blocks move with the receive datatype, straight from and
 * into the receive buffer. Bandwidth-optimal: the choice for large blocks. */
#include "coll/algos.h"

int halo_allgather_ring(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    int64_t blk = (int64_t)(a->rcount * halo_type_extent(a->rtype));
    halo_bref_t rb = halo_addr(a->rbuf);
    int round = 0;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    /* Not in place, the own block leaves from the send buffer in step 0 and
     * is copied into place after that step's messages (never sent again):
     * the neighbour reads it while this rank receives, instead of after a
     * copy that dirtied it in this core's cache. */
    if (!in_place && p == 1)
        halo_sched_copy(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, halo_bref_add(rb, me * blk),
                        a->rcount, a->rtype);
    int right = (me + 1) % p, left = (me - 1 + p) % p;
    for (int k = 0; k < p - 1; k++, round++) {
        int sblock = (me - k + p) % p;
        int rblock = (me - k - 1 + p) % p;
        if (k == 0 && !in_place) {
            halo_sched_send(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, right);
            halo_sched_copy(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, halo_bref_add(rb, me * blk),
                            a->rcount, a->rtype);
        } else {
            halo_sched_send(s_p, round, halo_bref_add(rb, sblock * blk), a->rcount, a->rtype, right);
        }
        halo_sched_recv(s_p, round, halo_bref_add(rb, rblock * blk), a->rcount, a->rtype, left);
    }
    return MPI_SUCCESS;
}
