/* Scatter and Scatterv on an intercommunicator, linear.
 *
 * The root (MPI_ROOT) sends block j straight to remote rank j, all at
 * once; the rest of the root's group (MPI_PROC_NULL) does nothing.
 * Cost: (q - 1) alpha + q n beta at the root, q the remote group's size and
 * n one block. Any datatypes. */
#include "coll/algos.h"

int halo_inter_scatter(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root != MPI_ROOT) {
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->rcount, a->rtype, halo_inter_rr(x, a->root));
        return MPI_SUCCESS;
    }
    MPI_Aint ext = halo_type_extent(a->stype);
    for (int j = 0; j < x->q; j++) {
        MPI_Count n = a->scounts ? a->scounts[j] : a->scount;
        MPI_Aint d = a->sdispls ? a->sdispls[j] : (MPI_Aint)j * (MPI_Aint)a->scount;
        halo_bref_t b = halo_bref_add(halo_addr(a->sbuf), (int64_t)d * ext);
        halo_sched_send(s_p, 0, b, n, a->stype, halo_inter_rr(x, j));
    }
    return MPI_SUCCESS;
}
