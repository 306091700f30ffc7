/* Allgather and Allgatherv by single-copy reads (cma): every member
 * publishes in its flag line where its block lies and raises its flag to
 * 1; it copies its own block into place meanwhile, then reads every other
 * member's block straight from that member's memory (process_vm_readv)
 * into its receive buffer, raises its flag to DONE and waits until every
 * member is done, since the others read its block until then.
 *
 * A member publishes its send buffer (in place: its block of the receive
 * buffer, which no read of the call writes) when the block is one run of
 * bytes, else a packed copy it makes first. A receive block that is not
 * one run goes through the scratch area.
 *
 * Cost: two flag transfers, p - 1 system calls per member, each block read
 * once by each other member, all at once; no copy through the slots and
 * none of a rendezvous message's packets (linear's choice above the eager
 * size). With more ranks than cores a member that is not running holds up
 * every other one twice: the choice where every rank has a core. One node,
 * where the node's ranks may read each other's memory (HALO_ALG_CMA). */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

int halo_allgather_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;   /* one node: members are ranks */
    bool in_place = a->sbuf == MPI_IN_PLACE;
    MPI_Aint rext = halo_type_extent(a->rtype);
    MPI_Count rsize = halo_type_size(a->rtype);
    char *mine = (char *)a->rbuf + halo_ag_displ(a, me) * rext;
    const char *in = in_place ? mine : a->sbuf;
    MPI_Count in_count = in_place ? halo_ag_count(a, me) : a->scount;
    MPI_Datatype in_type = in_place ? a->rtype : a->stype;
    /* Every member sees the same counts, so all take the flag steps or none. */
    bool any = false;
    for (int j = 0; j < nm && !any; j++)
        any = halo_ag_count(a, j) > 0;
    if (nm == 1 || !any) {
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(in), in_count, in_type, halo_addr(mine), halo_ag_count(a, me), a->rtype);
        return MPI_SUCCESS;
    }
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    halo_shm_publish_bytes(s_p, 0, me, in, in_count, in_type, in_count * halo_type_size(in_type), false);
    if (!in_place)   /* while the others read */
        halo_sched_copy(s_p, 0, halo_addr(in), in_count, in_type, halo_addr(mine), halo_ag_count(a, me), a->rtype);
    halo_shm_wait(s_p, 1, HALO_SHM_ALL, 1);
    for (int k = 1; k < nm; k++) {   /* from me + 1 on, so that not all read one member first */
        int j = (me + k) % nm;
        MPI_Count cnt = halo_ag_count(a, j);
        if (cnt > 0)
            halo_shm_cma_block(s_p, 1, false, j, t->local[j], 0, (char *)a->rbuf + halo_ag_displ(a, j) * rext,
                               cnt, a->rtype, cnt * rsize);
    }
    halo_shm_set(s_p, 1, HALO_SHM_DONE);
    halo_shm_wait(s_p, 2, HALO_SHM_ALL, HALO_SHM_DONE);   /* nobody reads this member's block any more */
    return MPI_SUCCESS;
}
