/* Hardware levels of this node, read from Linux's sysfs: what
 * MPI_Comm_split_type's MPI_COMM_TYPE_HW_GUIDED and _UNGUIDED split by. */
#ifndef HALO_CORE_HW_LEVELS_H
#define HALO_CORE_HW_LEVELS_H

#include <sched.h>   /* cpu_set_t: the build defines _GNU_SOURCE */

/* From the widest to the narrowest; each object of a level lies inside one
 * object of every wider level. */
enum {
    HALO_HW_NODE,       /* "mpi_shared_memory" (also "host") */
    HALO_HW_PACKAGE,    /* "package" ("socket") */
    HALO_HW_NUMA,       /* "numanode" ("numa") */
    HALO_HW_L3,         /* "l3cache" */
    HALO_HW_L2,         /* "l2cache" */
    HALO_HW_L1,         /* "l1cache" (the data cache) */
    HALO_HW_CORE,       /* "core" */
    HALO_HW_THREAD,     /* "hwthread" ("pu") */
    HALO_HW_NLEVELS
};

/* The level's name as mpi_hw_resource_type gives it. */
const char *halo_hw_level_name(int level);
/* The level a name (or one of the aliases above, or hwloc's name of the
 * type, as "hwloc://NUMANode"; case does not matter) means, or -1. */
int halo_hw_level_of_name(const char *name);
/* The object of the level that holds logical CPU cpu (a number unique on
 * the node among that level's objects), or -1 when the CPU or the level is
 * unknown. The node level's object is 0. */
int halo_hw_object(int level, int cpu);
/* The object of the level that holds every CPU of the set, or -1 when they
 * lie in several (or one is unknown). */
int halo_hw_object_of_set(int level, const cpu_set_t *set);

#endif
