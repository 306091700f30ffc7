/* Allreduce on an intercommunicator.
 *
 * Each group reduces its vectors to its leader in rank order (a binomial
 * tree), the leaders swap the results, each into its receive buffer, and
 * each leader broadcasts the other group's result over its own group (by
 * the algorithm the tables choose). Cost: ceil(lg p) (alpha + n beta + n
 * gamma) + alpha + n beta + a local broadcast of n bytes. Any operation. */
#include "coll/algos.h"

int halo_inter_allreduce(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    halo_bref_t acc;
    int round;
    halo_inter_local_reduce(x, s_p, a->sbuf, a->count, a->type, a->op, &acc, &round);
    if (x->me == 0) {
        halo_sched_send(s_p, round, acc, a->count, a->type, halo_inter_rr(x, 0));
        halo_sched_recv(s_p, round, halo_addr(a->rbuf), a->count, a->type, halo_inter_rr(x, 0));
        round++;
    }
    return halo_inter_local_bcast(x, s_p, round, a->rbuf, a->count, a->type, &round);
}
