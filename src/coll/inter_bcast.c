/* Broadcast on an intercommunicator.
 *
 * The root (MPI_ROOT) sends the buffer to the remote group's leader, which
 * broadcasts it over its own group by the algorithm the tables choose for
 * that group; the rest of the root's group (MPI_PROC_NULL) does nothing.
 * Cost: alpha + n beta plus the local broadcast over the remote group. */
#include "coll/algos.h"

int halo_inter_bcast(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        halo_sched_send(s_p, 0, halo_addr(a->rbuf), a->count, a->type, halo_inter_rr(x, 0));
        return MPI_SUCCESS;
    }
    if (x->me == 0)
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->count, a->type, halo_inter_rr(x, a->root));
    int next;
    return halo_inter_local_bcast(x, s_p, 1, a->rbuf, a->count, a->type, &next);
}
