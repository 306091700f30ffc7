/* Broadcast, linear: the root sends the whole message to every other rank,
 * all p - 1 sends posted at once; the others receive one message.
 *
 * Cost: (p - 1) * alpha at the root, and n * beta for each receiver, all
 * in parallel where messages are read in place (a large message here is
 * read by its receiver straight from the root's buffer): the receivers copy
 * at once from one source that stays in cache, where a tree copies each
 * byte lg p times in sequence. Any p, any datatype. The choice for large
 * messages among ranks of one node, the more so with more ranks than
 * cores (every rank copies once, nobody waits for a parent that is not
 * running). */
#include "coll/algos.h"

int halo_bcast_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    if (me != root) {
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->count, a->type, root);
        return MPI_SUCCESS;
    }
    for (int k = 1; k < p; k++)
        halo_sched_send(s_p, 0, halo_addr(a->rbuf), a->count, a->type, (me + k) % p);
    return MPI_SUCCESS;
}
