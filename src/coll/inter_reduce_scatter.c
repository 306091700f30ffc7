/* Reduce_scatter and Reduce_scatter_block on an intercommunicator.
 *
 * Each group reduces its vectors to its leader in rank order (a binomial
 * tree), the leaders swap the results, and each leader scatters the other
 * group's result over its own group in the blocks its group asked for
 * (only this side knows how its vector is cut). Cost: ceil(lg p) (alpha +
 * n beta + n gamma) + alpha + n beta + (p - 1) alpha + n beta, n the
 * whole vector. Any operation. */
#include "coll/algos.h"

int halo_inter_reduce_scatter(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    int p = x->p;
    MPI_Count total = 0;
    for (int i = 0; i < p; i++)
        total += halo_rs_count(a, i);
    halo_bref_t acc;
    int round;
    halo_inter_local_reduce(x, s_p, a->sbuf, total, a->type, a->op, &acc, &round);
    if (x->me != 0) {
        halo_sched_recv(s_p, round, halo_addr(a->rbuf), halo_rs_count(a, x->me), a->type, halo_inter_lr(x, 0));
        return MPI_SUCCESS;
    }
    halo_bref_t other = halo_sched_span(s_p, total, a->type);
    halo_sched_send(s_p, round, acc, total, a->type, halo_inter_rr(x, 0));
    halo_sched_recv(s_p, round, other, total, a->type, halo_inter_rr(x, 0));
    halo_sched_copy(s_p, round, other, halo_rs_count(a, 0), a->type, halo_addr(a->rbuf), halo_rs_count(a, 0),
                    a->type);
    MPI_Aint ext = halo_type_extent(a->type);
    MPI_Count start = halo_rs_count(a, 0);
    for (int i = 1; i < p; i++) {
        halo_sched_send(s_p, round + 1, halo_bref_add(other, (int64_t)start * ext), halo_rs_count(a, i), a->type,
                        halo_inter_lr(x, i));
        start += halo_rs_count(a, i);
    }
    return MPI_SUCCESS;
}
