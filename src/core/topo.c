/* Process topologies attached to communicators. The Cartesian functions
 * arrive with the collectives work; until then a communicator carries no
 * topology and these keep the communicator code independent of them. */
#include "core/comm.h"

struct halo_topo {
    int kind;
};

void halo_topo_free(halo_topo_t *t)
{
    free(t);
}

halo_topo_t *halo_topo_dup(const halo_topo_t *t)
{
    halo_topo_t *n = halo_malloc(sizeof *n);
    *n = *t;
    return n;
}
