/* Barrier in two levels: the members of each node group tell their leader
 * through shared memory, the leaders run the network barrier, then each
 * leader releases its group.
 *
 * Cost: two flag transfers on each node plus the leaders' barrier over
 * the nodes (ceil(lg nodes) a by dissemination). Several nodes. */
#include "coll/two_level.h"

int halo_barrier_two_level(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    bool leader = t->me == 0, shared = t->nlocal > 1;
    if (shared) {
        halo_shm_use(s_p);
        halo_shm_wait_prev(s_p, 0);
        if (leader)
            halo_shm_wait(s_p, 0, HALO_SHM_ALL, 1);
        else
            halo_shm_set(s_p, 0, 1);
    }
    int round = 1;
    int rc = halo_two_level_leaders(s_p, &round, c, a);
    if (shared) {
        if (!leader)
            halo_shm_wait(s_p, round, 0, HALO_SHM_DONE);
        halo_shm_set(s_p, round, HALO_SHM_DONE);
    }
    return rc;
}
