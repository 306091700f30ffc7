/* Reduce on an intercommunicator.
 *
 * The remote group reduces its vectors to its leader in rank order (a
 * binomial tree, halo_inter_local_reduce), and the leader sends the result
 * to the root (MPI_ROOT); the rest of the root's group (MPI_PROC_NULL)
 * does nothing. Cost: ceil(lg q) (alpha + n beta + n gamma) + alpha + n
 * beta. Any operation. */
#include "coll/algos.h"

int halo_inter_reduce(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    if (a->root == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (a->root == MPI_ROOT) {
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->count, a->type, halo_inter_rr(x, 0));
        return MPI_SUCCESS;
    }
    halo_bref_t acc;
    int round;
    halo_inter_local_reduce(x, s_p, a->sbuf, a->count, a->type, a->op, &acc, &round);
    if (x->me == 0)
        halo_sched_send(s_p, round, acc, a->count, a->type, halo_inter_rr(x, a->root));
    return MPI_SUCCESS;
}
