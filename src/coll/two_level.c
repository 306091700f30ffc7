/* What the two-level algorithms (two_level_*.c) share: running a network
 * algorithm among the node leaders inside their schedule.
 *
 * A two-level collective is a node-level part through the node group's
 * shared region (coll/shm.h) and a network part among the leaders (the
 * first rank of each node group), each chosen on its own: the leaders'
 * algorithm is the one the tuning tables pick for a communicator of that
 * many ranks. It is built against a view of the communicator whose size
 * and rank are those among the leaders, with the schedule translating its
 * peers to communicator ranks and its rounds to after the node part. */
#include "coll/two_level.h"

#include "coll/select.h"
#include "core/errors.h"

int halo_two_level_leaders(halo_sched_t **s_p, int *round_p, halo_comm_t *c, const halo_coll_args_t *a)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    if (t->leader_me < 0)
        return MPI_SUCCESS;
    halo_comm_t view = *c;
    view.size = t->nleaders;
    view.rank = t->leader_me;
    const halo_coll_algo_t *al = halo_coll_select_flat(a, &view);
    if (!al)
        return halo_err(MPI_ERR_INTERN, ": no %s algorithm for the node leaders", halo_coll_kind_name(a->kind));
    (*s_p)->peer_map = t->leaders;
    (*s_p)->round_base = *round_p;
    int rc = al->build(a, &view, s_p);
    (*s_p)->peer_map = NULL;
    (*s_p)->round_base = 0;
    if ((*s_p)->nrounds > *round_p)
        *round_p = (*s_p)->nrounds;
    return rc;
}
