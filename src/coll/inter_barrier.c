/* Barrier on an intercommunicator.
 *
 * Each group meets (a dissemination barrier over the local group), the two
 * leaders swap an empty message, and each leader releases its group (a
 * binomial broadcast of nothing): a leader hears from the other only once
 * all of that group has arrived, so nobody leaves before every process of
 * both groups has.
 * Cost: (2 ceil(lg p) + 1) alpha, p the larger group. */
#include "coll/algos.h"

int halo_inter_barrier(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    static char none;   /* zero bytes go to and from here */
    int round;
    halo_inter_local_phase(halo_barrier_dissemination, a, x, s_p, 0, &round);
    if (x->me == 0) {
        halo_sched_send(s_p, round, halo_addr(&none), 0, MPI_BYTE, halo_inter_rr(x, 0));
        halo_sched_recv(s_p, round, halo_addr(&none), 0, MPI_BYTE, halo_inter_rr(x, 0));
    }
    halo_coll_args_t b = {.kind = HALO_COLL_BCAST, .rbuf = &none, .count = 0, .type = MPI_BYTE, .root = 0};
    halo_inter_local_phase(halo_bcast_binomial, &b, x, s_p, round + 1, &round);
    return MPI_SUCCESS;
}
