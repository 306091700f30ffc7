/* What halo_info reports about this build: the functions it does not
 * implement yet and the configuration variables it reads; and, for the
 * tests, what the transport knows of a peer's placement. Exported for the
 * tools only (not part of the MPI interface). */
#include "binding/binding.h"
#include "coll/coll.h"
#include "coll/sched.h"
#include "core/config.h"
#include "core/halo.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

static int entry_supported(int i)
{
    const halo_api_entry_t *e = &halo_api_table[i];
    if (e->impl != e->dflt)
        return 1;
    return e->twin >= 0 && halo_api_table[e->twin].impl != halo_api_table[e->twin].dflt;
}

HALO_EXPORT int halo_tool_api_count(void)
{
    return halo_api_table_len;
}

HALO_EXPORT const char *halo_tool_api_name(int i)
{
    return (i >= 0 && i < halo_api_table_len) ? halo_api_table[i].name : NULL;
}

HALO_EXPORT int halo_tool_api_supported(int i)
{
    return (i >= 0 && i < halo_api_table_len) ? entry_supported(i) : 0;
}

HALO_EXPORT void halo_tool_config_print(FILE *out)
{
    for (halo_cfg_t *const *v = halo_cfg_begin(); v < halo_cfg_end(); v++) {
        halo_cfg_t *c = *v;
        if (c->type == HALO_CFG_T_INT)
            fprintf(out, "%-24s = %-10ld (default %ld) %s\n", c->name, halo_cfg_get(c), c->dflt, c->help);
        else
            fprintf(out, "%-24s = %-10s (default %s) %s\n", c->name, halo_cfg_get_str(c), c->dflt_str,
                    c->help);
    }
}

/* Whether rank `world` of MPI_COMM_WORLD and this process are bound to one
 * and the same CPU (then a rendezvous copy is not split between them). */
HALO_EXPORT int halo_tool_shares_cpu(int world)
{
    return world >= 0 && world < halo_world.size ? halo_tr_shares_cpu(world) : 0;
}

/* Whether every rank of this job on this node is bound to one CPU (the
 * tuning rules' "bound"). */
HALO_EXPORT int halo_tool_node_bound(void)
{
    return halo_tr_node_bound();
}

/* Where this process's last single-copy read of a rendezvous message
 * began, in packed bytes (0: from the start; a receiver among several of
 * one range starts elsewhere). */
HALO_EXPORT long long halo_tool_last_read_first(void)
{
    return halo_pt2pt_last_read_first();
}

/* How far this process's small-message records reached into its ring
 * toward rank `world` of MPI_COMM_WORLD since the last call, in bytes from
 * the ring's start, and the ring's size (-1: no ring toward it). */
HALO_EXPORT long long halo_tool_ring_reach(int world, long long *ring_bytes)
{
    *ring_bytes = 0;
    return world >= 0 && world < halo_world.size ? halo_tr_ring_reach(world, ring_bytes) : -1;
}

/* How many sends this process has started by rendezvous (the others went
 * eagerly), so that a test can tell which way a message went. */
HALO_EXPORT long long halo_tool_rdv_sends(void)
{
    return halo_pt2pt_rdv_sends();
}

/* Whether every rank of this node reads the others' memory in one copy
 * (process_vm_readv allowed and not turned off by HALO_CMA=0). */
HALO_EXPORT int halo_tool_cma_node(void)
{
    return halo_tr_cma_node();
}

/* How many nonblocking collectives of this process started the schedule
 * kept from an identical earlier call instead of building one. */
HALO_EXPORT long long halo_tool_coll_kept_starts(void)
{
    return halo_coll_kept_starts();
}

/* How many nonblocking and persistent collectives of this process started
 * through their schedule's compiled form (a kept or persistent schedule
 * with shared-memory steps only); *finished: how many of those ran to
 * their end inside the starting call. */
HALO_EXPORT long long halo_tool_coll_prog_starts(long long *finished)
{
    long long starts;
    halo_sched_prog_counts(&starts, finished);
    return starts;
}
