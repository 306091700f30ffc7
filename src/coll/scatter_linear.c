/* Scatter and Scatterv, linear.
 *
 * The root sends every rank its block straight from the send buffer with
 * the send datatype, all p-1 sends posted at once; the others receive one
 * message; where ranks outnumber the cores, blocks from 4 KiB go by
 * rendezvous once they add up to more than 24 KiB (halo_coll_fanout_rdv).
 * Cost: (p - 1) * alpha + n * beta at the root (the sends overlap). Any p,
 * any datatypes, in place at the root. The only algorithm for Scatterv;
 * for Scatter, the choice for large blocks. */
#include "coll/algos.h"

int halo_scatter_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    if (me != root) {
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->rcount, a->rtype, root);
        return MPI_SUCCESS;
    }
    MPI_Aint ext = halo_type_extent(a->stype);
    for (int k = 1; k <= p; k++) {
        int i = (me + k) % p;
        MPI_Count cnt = a->scounts ? a->scounts[i] : a->scount;
        MPI_Aint displ = a->sdispls ? a->sdispls[i] : (MPI_Aint)i * (MPI_Aint)a->scount;
        halo_bref_t at = halo_bref_add(halo_addr(a->sbuf), (int64_t)displ * ext);
        if (i != me && halo_coll_fanout_rdv(cnt * halo_type_size(a->stype), p - 1))
            halo_sched_send_rdv(s_p, 0, at, cnt, a->stype, i);
        else if (i != me)
            halo_sched_send(s_p, 0, at, cnt, a->stype, i);
        else if (a->rbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, at, cnt, a->stype, halo_addr(a->rbuf), a->rcount, a->rtype);
    }
    return MPI_SUCCESS;
}
