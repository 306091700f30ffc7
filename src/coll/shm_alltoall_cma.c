/* Alltoall by single-copy reads (cma): every member publishes in its flag
 * line where its p send blocks lie, packed one after the other, and raises
 * its flag to 1; it copies its own block meanwhile, then reads block `me`
 * of every other member straight from that member's memory
 * (process_vm_readv), raises its flag to DONE and waits until every member
 * is done, since the others read its send buffer until then.
 *
 * A member publishes its send buffer itself when the p blocks are one run
 * of bytes, else a packed copy it makes first; in place, always a packed
 * copy of the receive buffer (the reads overwrite it), or, when that copy
 * would take more than HALO_COLL_SCRATCH_MAX, the pairwise swaps of
 * alltoall_inplace_pairs.c. A receive buffer
 * that is not one run takes each block through the scratch area.
 *
 * Cost: two flag transfers, p - 1 system calls per member, each block
 * copied once, by its receiver; none of a rendezvous message's packets
 * (linear's choice above the eager size). With more ranks than cores a
 * member that is not running holds up every other one twice, where a
 * pair's rendezvous goes as soon as its two ranks run: the choice where
 * every rank has a core. One node, where the node's ranks may read each
 * other's memory (HALO_ALG_CMA). */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

int halo_alltoall_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;   /* one node: members are ranks */
    bool in_place = a->sbuf == MPI_IN_PLACE;
    if (in_place && halo_a2a_in_place_too_big(a, c))   /* the copy would pass the scratch bound */
        return halo_alltoall_inplace_pairs(a, c, s_p);
    MPI_Aint rext = halo_type_extent(a->rtype);
    MPI_Count blk = a->rcount * halo_type_size(a->rtype);
    char *rbuf = a->rbuf;
    if (nm == 1 || blk == 0) {
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, halo_addr(rbuf), a->rcount, a->rtype);
        return MPI_SUCCESS;
    }
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    if (in_place)   /* a copy: the reads overwrite the buffer */
        halo_shm_publish_bytes(s_p, 0, me, rbuf, a->rcount * nm, a->rtype, blk * nm, true);
    else
        halo_shm_publish_bytes(s_p, 0, me, a->sbuf, a->scount * nm, a->stype, blk * nm, false);
    if (!in_place)   /* while the others read */
        halo_sched_copy(s_p, 0, halo_addr((const char *)a->sbuf + (MPI_Aint)me * a->scount * halo_type_extent(a->stype)),
                        a->scount, a->stype, halo_addr(rbuf + (MPI_Aint)me * a->rcount * rext), a->rcount, a->rtype);
    halo_shm_wait(s_p, 1, HALO_SHM_ALL, 1);
    for (int k = 1; k < nm; k++) {   /* from me + 1 on, so that not all read one member first */
        int j = (me + k) % nm;
        halo_shm_cma_block(s_p, 1, false, j, t->local[j], (MPI_Count)me * blk,
                           rbuf + (MPI_Aint)j * a->rcount * rext, a->rcount, a->rtype, blk);
    }
    halo_shm_set(s_p, 1, HALO_SHM_DONE);
    halo_shm_wait(s_p, 2, HALO_SHM_ALL, HALO_SHM_DONE);   /* nobody reads this member's blocks any more */
    return MPI_SUCCESS;
}
