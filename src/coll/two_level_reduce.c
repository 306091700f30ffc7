/* Reduce in two levels: each node group reduces to its leader through
 * shared memory, the leaders reduce over the network to the leader of the
 * root's node, which hands the result to the root if the root is not
 * itself.
 *
 * Cost: a shared-memory reduce on each node ((p/nodes - 1) n g at the
 * leader), the leaders' reduce over the nodes (by the tuning table), and
 * one message of n bytes when the root is not a leader. Operations that
 * do not commute only when each node holds a block of consecutive ranks
 * (HALO_ALG_NODE_ORDER): the order is then kept. Several nodes. */
#include "coll/two_level.h"

int halo_reduce_two_level(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int root = a->root, rnode = t->leader_of[root], rleader = t->leaders[rnode];
    bool leader = t->me == 0, am_root = c->rank == root;
    const void *in = am_root && a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    /* The node's result, at its leader. */
    void *node_out = NULL;
    if (leader)
        node_out = am_root ? a->rbuf : halo_sched_tmp(s_p, a->count, a->type);
    int round = halo_shm_reduce_steps(s_p, 0, t->nlocal, t->me, 0, halo_addr(in), halo_addr(node_out),
                                      a->count, a->type, a->op);
    halo_coll_args_t la = *a;
    la.root = rnode;
    la.sbuf = t->leader_me == rnode ? MPI_IN_PLACE : node_out;
    la.rbuf = node_out;
    int rc = halo_two_level_leaders(s_p, &round, c, &la);
    if (rleader != root) {
        if (c->rank == rleader)
            halo_sched_send(s_p, round, halo_addr(node_out), a->count, a->type, root);
        else if (am_root)
            halo_sched_recv(s_p, round, halo_addr(a->rbuf), a->count, a->type, rleader);
    }
    return rc;
}
