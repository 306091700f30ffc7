/* Broadcast in two levels: on the root's node the root broadcasts through
 * shared memory; the node leaders then broadcast over the network from the
 * root's leader; on every other node the leader broadcasts through shared
 * memory.
 *
 * Cost: the leaders' broadcast over the nodes (by the tuning table) plus
 * one shared-memory broadcast on each node (copy in, copy out per chunk).
 * Any datatype. Several nodes. */
#include "coll/two_level.h"

int halo_bcast_two_level(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int rnode = t->leader_of[a->root];
    halo_bref_t buf = halo_addr(a->rbuf);
    halo_coll_args_t la = *a;
    la.root = rnode;
    int round = 0, rc;
    if (t->leader_of[c->rank] == rnode) {
        round = halo_shm_bcast_steps(s_p, 0, t->nlocal, t->me, t->member_of[a->root], buf, a->count, a->type);
        rc = halo_two_level_leaders(s_p, &round, c, &la);
    } else {
        rc = halo_two_level_leaders(s_p, &round, c, &la);
        halo_shm_bcast_steps(s_p, round, t->nlocal, t->me, 0, buf, a->count, a->type);
    }
    return rc;
}
