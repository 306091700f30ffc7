/* Allgatherv, ring.
 *
 * The ring of allgather_ring.c with a block size and place per rank: in
 * step k every rank forwards to its right neighbour the block it received
 * in step k-1 (its own first).
 * Cost: (p - 1) * alpha + (n - n_own) * beta, n the gathered size; a large
 * block delays the steps it travels through. Any p; in place or not. */
#include "coll/algos.h"

int halo_allgatherv_ring(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    int64_t ext = (int64_t)halo_type_extent(a->rtype);
    const MPI_Count *rcounts = a->rcounts;
    const MPI_Aint *displs = a->rdispls;
    halo_bref_t rb = halo_addr(a->rbuf);
    int round = 0;
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, round++, halo_addr(a->sbuf), a->scount, a->stype,
                        halo_bref_add(rb, displs[me] * ext), rcounts[me], a->rtype);
    int right = (me + 1) % p, left = (me - 1 + p) % p;
    for (int k = 0; k < p - 1; k++, round++) {
        int sblock = (me - k + p) % p;
        int rblock = (me - k - 1 + p) % p;
        halo_sched_send(s_p, round, halo_bref_add(rb, displs[sblock] * ext), rcounts[sblock], a->rtype, right);
        halo_sched_recv(s_p, round, halo_bref_add(rb, displs[rblock] * ext), rcounts[rblock], a->rtype, left);
    }
    return MPI_SUCCESS;
}
