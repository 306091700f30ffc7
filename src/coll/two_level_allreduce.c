/* Allreduce in two levels: each node group reduces to its leader through
 * shared memory, the leaders allreduce over the network, and each leader
 * broadcasts the result to its group through shared memory.
 *
 * Cost: a shared-memory reduce and broadcast on each node, plus the
 * leaders' allreduce over the nodes (by the tuning table). Operations that
 * do not commute only when each node holds a block of consecutive ranks
 * (HALO_ALG_NODE_ORDER). Several nodes. */
#include "coll/two_level.h"

int halo_allreduce_two_level(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t out = halo_addr(a->rbuf);
    int round = halo_shm_reduce_steps(s_p, 0, t->nlocal, t->me, 0, halo_addr(in), out, a->count, a->type, a->op);
    halo_coll_args_t la = *a;
    la.sbuf = MPI_IN_PLACE;
    int rc = halo_two_level_leaders(s_p, &round, c, &la);
    halo_shm_next_phase(s_p);
    halo_shm_bcast_steps(s_p, round, t->nlocal, t->me, 0, out, a->count, a->type);
    return rc;
}
