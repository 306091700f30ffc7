/* Groups: ordered sets of processes, named by their rank in MPI_COMM_WORLD. */
#ifndef HALO_CORE_GROUP_H
#define HALO_CORE_GROUP_H

#include "core/obj.h"

typedef struct halo_group {
    halo_obj_t hdr;
    int size;
    int rank;        /* this process's rank in the group, or MPI_UNDEFINED */
    int *world;      /* world rank of each member */
    bool far;        /* some member belongs to another job (halo_world.procs: HALO_NODE_FAR) */
    const void *session;  /* the session it derives from (a key, never dereferenced), or NULL */
} halo_group_t;

/* Live groups with processes of other jobs (far members). */
extern int halo_group_far_live;

void halo_group_init(void);
void halo_group_finalize(void);
/* A new group of n members (world ranks copied from `world`). */
halo_group_t *halo_group_new(int n, const int *world);
void halo_group_release(halo_group_t *g);
static inline halo_group_t *halo_group_ptr(MPI_Group g)
{
    return (halo_group_t *)halo_obj_fast(g);
}
/* Rank in g of a world rank, or MPI_UNDEFINED. */
int halo_group_rank_of(const halo_group_t *g, int world_rank);
extern halo_group_t halo_group_empty;

#endif
