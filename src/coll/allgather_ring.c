/* Allgather, ring.
 *
 * In step k every rank sends to its right neighbour the block it received
 * in step k-1 (its own block first) and receives the next block from its
 * left neighbour.
 * Cost: (p - 1) * (alpha + (n/p) * beta), n the gathered size. Any p; in
 * place or not. Blocks move with the receive datatype, straight from and
 * into the receive buffer. */
#include "coll/algos.h"

int halo_allgather_ring(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    halo_dtype_t *rt = halo_dtype_ptr(rtype);
    int64_t blk = (int64_t)(rcount * rt->extent);
    halo_bref_t rb = halo_addr(rbuf);
    int round = 0;
    if (sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, round++, halo_addr(sbuf), scount, stype,
                        halo_bref_add(rb, me * blk), rcount, rtype);
    int right = (me + 1) % p, left = (me - 1 + p) % p;
    for (int k = 0; k < p - 1; k++, round++) {
        int sblock = (me - k + p) % p;
        int rblock = (me - k - 1 + p) % p;
        halo_sched_send(s_p, round, halo_bref_add(rb, sblock * blk), rcount, rtype, right);
        halo_sched_recv(s_p, round, halo_bref_add(rb, rblock * blk), rcount, rtype, left);
    }
    return MPI_SUCCESS;
}
