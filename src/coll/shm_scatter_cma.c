/* Scatter by single-copy reads (cma): the root publishes in its flag line
 * where its p blocks lie, packed one after the other, raises its flag to
 * 1, copies its own block, and waits until every member is done; member j
 * reads block j straight from the root's memory (process_vm_readv) and
 * raises its flag to DONE.
 *
 * The root publishes its send buffer itself when the p blocks are one run
 * of bytes, else a packed copy it makes first; a member whose buffer is
 * not one run reads into its scratch area and unpacks from there.
 *
 * Cost: two flag transfers, one system call per member, each block read
 * once, by its member, all at once; no copy through the slots, and none
 * of a rendezvous message's packets (linear's choice for blocks above the
 * eager size at two ranks). In place at the root. One node, where the
 * node's ranks may read each other's memory (HALO_ALG_CMA). */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

int halo_scatter_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;   /* one node: members are ranks */
    bool is_root = me == root;
    MPI_Count blk = is_root ? a->scount * halo_type_size(a->stype) : a->rcount * halo_type_size(a->rtype);
    /* The round where the root's own block is copied: after it has
     * published, so that the members read meanwhile. */
    int own_round = -1;
    if (is_root && a->rbuf != MPI_IN_PLACE)
        own_round = 0;
    if (nm > 1 && blk > 0) {
        halo_shm_use(s_p);
        halo_shm_wait_prev(s_p, 0);
        if (is_root) {
            halo_shm_publish_bytes(s_p, 0, me, a->sbuf, a->scount * nm, a->stype, blk * nm, false);
        } else {
            halo_shm_wait(s_p, 1, root, 1);
            halo_shm_cma_block(s_p, 1, false, root, t->local[root], (MPI_Count)me * blk, a->rbuf, a->rcount,
                               a->rtype, blk);
            halo_shm_set(s_p, 1, HALO_SHM_DONE);
            return MPI_SUCCESS;
        }
    }
    if (own_round >= 0)
        halo_sched_copy(s_p, own_round,
                        halo_addr((const char *)a->sbuf + (MPI_Aint)me * a->scount * halo_type_extent(a->stype)),
                        a->scount, a->stype, halo_addr(a->rbuf), a->rcount, a->rtype);
    if (nm > 1 && blk > 0) {
        halo_shm_wait(s_p, 1, HALO_SHM_ALL, HALO_SHM_DONE);   /* every member has read its block */
        halo_shm_set(s_p, 1, HALO_SHM_DONE);
    }
    return MPI_SUCCESS;
}
