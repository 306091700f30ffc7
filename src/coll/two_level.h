/* Two-level collectives (two_level_*.c): a node-level part through shared
 * memory, a network part among the node leaders. */
#ifndef HALO_COLL_TWO_LEVEL_H
#define HALO_COLL_TWO_LEVEL_H

#include "coll/algos.h"
#include "coll/shm.h"

/* Adds, for a leader, the steps of the leaders' algorithm for `a` (whose
 * root, if any, is a leader index) from *round_p on, and moves *round_p
 * past them; nothing for the other ranks. */
int halo_two_level_leaders(halo_sched_t **s_p, int *round_p, halo_comm_t *c, const halo_coll_args_t *a);

#endif
