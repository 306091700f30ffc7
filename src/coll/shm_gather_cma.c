/* Gather by single-copy writes (cma): the root publishes in its flag line
 * where the p blocks go, raises its flag to 1, copies its own block, and
 * waits until every member is done; member j writes its block straight
 * into the root's memory (process_vm_writev) at block j and raises its
 * flag to DONE.
 *
 * The root publishes its receive buffer itself when the p blocks are one
 * run of bytes, else a staging area it unpacks the members' blocks from
 * once they are in; a member whose buffer is not one run packs it into its
 * scratch area first.
 *
 * Cost: two flag transfers, one system call per member, each block copied
 * once, by its member, all at once (where the root reading them would take
 * them one after the other); no copy through the slots, and none of a
 * rendezvous message's packets (linear's choice for blocks above the eager
 * size at two ranks). In place at the root. One node, where the node's
 * ranks may write each other's memory (HALO_ALG_CMA). */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

int halo_gather_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;   /* one node: members are ranks */
    bool is_root = me == root;
    MPI_Count blk = is_root ? a->rcount * halo_type_size(a->rtype) : a->scount * halo_type_size(a->stype);
    MPI_Aint rext = is_root ? halo_type_extent(a->rtype) : 0;
    char *rbuf = a->rbuf;
    bool shm = nm > 1 && blk > 0;
    char *staging = NULL;
    if (shm) {
        halo_shm_use(s_p);
        halo_shm_wait_prev(s_p, 0);
        if (!is_root) {
            halo_shm_wait(s_p, 1, root, 1);
            halo_shm_cma_block(s_p, 1, true, root, t->local[root], (MPI_Count)me * blk, (void *)a->sbuf,
                               a->scount, a->stype, blk);
            halo_shm_set(s_p, 1, HALO_SHM_DONE);
            return MPI_SUCCESS;
        }
        MPI_Count off;
        const char *pub;
        if (halo_dt_one_run(halo_dtype_ptr(a->rtype), a->rcount * nm, &off)) {
            pub = rbuf + off;
        } else {
            staging = halo_sched_tmp(s_p, blk * nm, MPI_BYTE);
            pub = staging;
        }
        halo_shm_publish(s_p, 0, me, pub);
    }
    if (is_root && a->sbuf != MPI_IN_PLACE)   /* while the members write */
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype,
                        halo_addr(rbuf + (MPI_Aint)me * a->rcount * rext), a->rcount, a->rtype);
    if (!shm)
        return MPI_SUCCESS;
    halo_shm_wait(s_p, 1, HALO_SHM_ALL, HALO_SHM_DONE);   /* every block is in */
    if (staging)
        for (int j = 0; j < nm; j++)
            if (j != me)
                halo_sched_unpack(s_p, 1, halo_addr(staging + (MPI_Aint)j * blk), 0, blk,
                                  halo_addr(rbuf + (MPI_Aint)j * a->rcount * rext), a->rcount, a->rtype);
    halo_shm_set(s_p, 1, HALO_SHM_DONE);
    return MPI_SUCCESS;
}
