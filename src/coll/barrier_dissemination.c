/* Barrier, dissemination algorithm.
 *
 * Round k: send an empty message to (rank + 2^k) mod p and receive one from
 * (rank - 2^k) mod p; after ceil(lg p) rounds every rank has heard, directly
 * or not, from every other.
 * Cost: ceil(lg p) * alpha. Any p. */
#include "coll/algos.h"

int halo_barrier_dissemination(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    (void)a;
    int p = c->size, me = c->rank;
    int round = 0;
    for (int dist = 1; dist < p; dist *= 2, round++) {
        halo_sched_send(s_p, round, halo_addr(NULL), 0, MPI_BYTE, (me + dist) % p);
        halo_sched_recv(s_p, round, halo_addr(NULL), 0, MPI_BYTE, (me - dist + p) % p);
    }
    return MPI_SUCCESS;
}
