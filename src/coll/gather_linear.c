/* Gather and Gatherv, linear.
 *
 * Every rank sends its block straight to the root, which posts all p-1
 * receives at once, each into its place in the receive buffer with the
 * receive datatype (nothing is packed).
 * Cost: (p - 1) * alpha + n * beta at the root, n the gathered size (the
 * receives overlap, so the latency term is in practice smaller). Any p, any
 * datatypes, in place at the root. The only algorithm for Gatherv (no
 * other rank knows the counts); for Gather, the choice for large blocks,
 * which relaying through a tree would only copy more. */
#include "coll/algos.h"

int halo_gather_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    if (me != root) {
        halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, root);
        return MPI_SUCCESS;
    }
    MPI_Aint ext = halo_type_extent(a->rtype);
    for (int k = 1; k <= p; k++) {
        int i = (me + k) % p;
        halo_bref_t at = halo_bref_add(halo_addr(a->rbuf), (int64_t)halo_ag_displ(a, i) * ext);
        if (i != me)
            halo_sched_recv(s_p, 0, at, halo_ag_count(a, i), a->rtype, i);
        else if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, at, halo_ag_count(a, i),
                            a->rtype);
    }
    return MPI_SUCCESS;
}
