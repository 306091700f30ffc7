/* Broadcast, binomial tree.
 *
 * With ranks renumbered relative to the root, rank r receives from r minus
 * its lowest set bit, then sends to r + 2^j for every 2^j below that bit.
 * Cost: ceil(lg p) * (alpha + n * beta). Any p, any datatype (messages use
 * the user's datatype, so nothing is packed here). Latency-optimal: the
 * choice for small messages. */
#include "coll/algos.h"

int halo_bcast_binomial(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, root = a->root;
    int rel = (c->rank - root + p) % p;
    int mask = 1;
    int round = 0;
    while (mask < p) {
        if (rel & mask) {
            int src = (rel - mask + root) % p;
            halo_sched_recv(s_p, round++, halo_addr(a->rbuf), a->count, a->type, src);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < p)
            halo_sched_send(s_p, round, halo_addr(a->rbuf), a->count, a->type, (rel + mask + root) % p);
        mask >>= 1;
    }
    return MPI_SUCCESS;
}
