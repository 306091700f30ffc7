/* Broadcast, binomial tree.
 *
 * With ranks renumbered relative to the root, rank r receives from r minus
 * its lowest set bit, then sends to r + 2^j for every 2^j below that bit.
 * Cost: ceil(lg p) * (alpha + n * beta). Any p, any datatype (messages use
 * the user's datatype, so nothing is packed here). */
#include "coll/algos.h"

int halo_bcast_binomial(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c,
                        halo_sched_t **s_p)
{
    int p = c->size;
    int rel = (c->rank - root + p) % p;
    int mask = 1;
    int round = 0;
    while (mask < p) {
        if (rel & mask) {
            int src = (rel - mask + root) % p;
            halo_sched_recv(s_p, round++, halo_addr(buf), count, type, src);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (rel + mask < p)
            halo_sched_send(s_p, round, halo_addr(buf), count, type, (rel + mask + root) % p);
        mask >>= 1;
    }
    return MPI_SUCCESS;
}
