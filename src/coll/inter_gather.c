/* Gather and Gatherv on an intercommunicator, linear.
 *
 * Every process of the remote group sends its block straight to the root
 * (MPI_ROOT), which receives them all at once into place; the rest of the
 * root's group (MPI_PROC_NULL) does nothing. Gathering in the remote group
 * first would need a staging buffer at its leader and save only latency.
 * Cost: (q - 1) alpha + q n beta at the root, q the remote group's size and
 * n one block. Any datatypes. */
#include "coll/algos.h"

int halo_inter_gather(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, halo_inter_rr(x, a->root));
        return MPI_SUCCESS;
    }
    MPI_Aint ext = halo_type_extent(a->rtype);
    for (int j = 0; j < x->q; j++) {
        halo_bref_t b = halo_bref_add(halo_addr(a->rbuf), (int64_t)halo_ag_displ(a, j) * ext);
        halo_sched_recv(s_p, 0, b, halo_ag_count(a, j), a->rtype, halo_inter_rr(x, j));
    }
    return MPI_SUCCESS;
}
