/* MPI_Comm_split_type by hardware levels, checked against sysfs read here
 * (each rank's CPU: the one it is bound to, else none):
 * - HW_GUIDED and RESOURCE_GUIDED with each level Halo names ("hwthread",
 *   "core", "l1cache", "l2cache", "l3cache", "numanode", "package",
 *   "mpi_shared_memory"), aliases ("socket", "pu") and hwloc's names
 *   ("hwloc://NUMANode", ...): a bound rank's communicator holds exactly the
 *   ranks whose CPUs lie in the same object of that level (this file's own
 *   reading of sysfs decides), in the order of the keys; an unknown name
 *   gives MPI_COMM_NULL everywhere;
 * - RESOURCE_GUIDED with mpi_pset_name: mpi://WORLD every rank, mpi://SELF
 *   each alone, an unknown set MPI_COMM_NULL;
 * - HW_UNGUIDED: MPI_COMM_NULL, or a strictly smaller communicator whose
 *   level comes back in the info object, whose members share that level's
 *   object, and which no rank outside it shares; repeated on the result
 *   (the standard's loop down the levels) until MPI_COMM_NULL, each step
 *   smaller than the last. */
#include "mpitest.h"

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static int my_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}

static int read_str(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)n, f);
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* What names the object of level that holds cpu, as a string read from
 * sysfs ("" when unknown): two CPUs share the object when the strings
 * agree. */
static void object_name(const char *level, int cpu, char *out, size_t n)
{
    char path[256];
    out[0] = '\0';
    if (cpu < 0)
        return;
    if (!strcmp(level, "hwthread") || !strcmp(level, "pu")) {
        snprintf(out, n, "%d", cpu);
        return;
    }
    if (!strcmp(level, "mpi_shared_memory")) {
        snprintf(out, n, "node");
        return;
    }
    if (!strcmp(level, "core")) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
        read_str(path, out, n);
        return;
    }
    if (!strcmp(level, "package") || !strcmp(level, "socket")) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
        read_str(path, out, n);
        return;
    }
    if (!strcmp(level, "numanode")) {
        for (int node = 0; node < 64; node++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/node%d", cpu, node);
            FILE *f = fopen(path, "r");   /* a link to the node's directory */
            if (f) {
                fclose(f);
                snprintf(out, n, "%d", node);
                return;
            }
        }
        return;
    }
    int want = level[1] - '0';   /* l1cache, l2cache, l3cache */
    for (int i = 0; i < 8; i++) {
        char buf[64], type[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, i);
        if (read_str(path, buf, sizeof buf) != 0)
            return;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, i);
        if (atoi(buf) != want || read_str(path, type, sizeof type) != 0 || !strcmp(type, "Instruction"))
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, i);
        read_str(path, out, n);
        return;
    }
}

/* The world ranks of comm, in its order; n gets its size (0 for null). */
static void members_of(MPI_Comm comm, int *out, int *n)
{
    *n = 0;
    if (comm == MPI_COMM_NULL)
        return;
    MPI_Group g, wg;
    MPI_OK(MPI_Comm_group(comm, &g));
    MPI_OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
    MPI_OK(MPI_Group_size(g, n));
    int idx[256];
    for (int i = 0; i < *n; i++)
        idx[i] = i;
    MPI_OK(MPI_Group_translate_ranks(g, *n, idx, wg, out));
    MPI_OK(MPI_Group_free(&g));
    MPI_OK(MPI_Group_free(&wg));
}

static int cpus[256];   /* every rank's CPU (or -1), gathered once */

/* Whether world rank r's CPU lies in the same object of level as mine
 * (neither unknown). */
static bool same_object(const char *level, int r)
{
    char a[64], b[64];
    object_name(level, cpus[rank], a, sizeof a);
    object_name(level, cpus[r], b, sizeof b);
    return a[0] && b[0] && !strcmp(a, b);
}

/* MPI_COMM_WORLD split by split_type with one info key set, keys in
 * reverse world order. */
static MPI_Comm split_with(int split_type, const char *key, const char *value)
{
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, key, value));
    MPI_Comm c;
    MPI_OK(MPI_Comm_split_type(MPI_COMM_WORLD, split_type, size - rank, info, &c));
    MPI_OK(MPI_Info_free(&info));
    return c;
}

static void check_guided(int split_type)
{
    /* Each name, and the level this file reads it as. */
    const char *names[] = {"hwthread", "core", "l1cache", "l2cache", "l3cache", "numanode",
                           "package", "mpi_shared_memory", "socket", "pu", "hwloc://NUMANode",
                           "hwloc://Core", "hwloc://L2Cache", "hwloc://PU", "hwloc://Package"};
    const char *levels[] = {"hwthread", "core", "l1cache", "l2cache", "l3cache", "numanode",
                            "package", "mpi_shared_memory", "package", "hwthread", "numanode",
                            "core", "l2cache", "hwthread", "package"};
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        MPI_Comm c = split_with(split_type, "mpi_hw_resource_type", names[l]);
        int got[256], n;
        members_of(c, got, &n);
        bool node = !strcmp(levels[l], "mpi_shared_memory");
        char mine[64];
        object_name(levels[l], cpus[rank], mine, sizeof mine);
        if (!node && !mine[0]) {
            /* A rank with no known object (not bound to one CPU) gets none. */
            CHECK(c == MPI_COMM_NULL, "%s: rank with no object got %d ranks", levels[l], n);
            continue;
        }
        /* Want: the ranks with my object, by descending world rank (keys). */
        int want[256], nw = 0;
        for (int r = size - 1; r >= 0; r--)
            if (node || same_object(levels[l], r))
                want[nw++] = r;
        CHECK(n == nw, "%s: %d ranks, want %d", levels[l], n, nw);
        for (int i = 0; i < n && i < nw; i++)
            CHECK(got[i] == want[i], "%s: member %d is world rank %d, want %d", levels[l], i, got[i], want[i]);
        if (c != MPI_COMM_NULL) {
            int sum = 0, one = 1;   /* and it carries traffic */
            MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
            CHECK_INT(sum, nw);
            MPI_OK(MPI_Comm_free(&c));
        }
    }
    MPI_Comm c = split_with(split_type, "mpi_hw_resource_type", "halo_no_such_level");
    CHECK(c == MPI_COMM_NULL, "an unknown level gave a communicator");
}

/* RESOURCE_GUIDED by process set: mpi://WORLD holds every rank (in key
 * order), mpi://SELF each alone, an unknown set none. */
static void check_psets(void)
{
    const char *psets[] = {"mpi://WORLD", "mpi://SELF", "mpi://halo_no_such_set"};
    for (int p = 0; p < 3; p++) {
        MPI_Comm c = split_with(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_pset_name", psets[p]);
        int got[256], n;
        members_of(c, got, &n);
        if (p == 2) {
            CHECK(c == MPI_COMM_NULL, "%s gave %d ranks", psets[p], n);
            continue;
        }
        int want = p == 0 ? size : 1;
        CHECK(n == want && got[0] == (p == 0 ? size - 1 : rank), "%s: %d ranks, first %d", psets[p], n, got[0]);
        int sum = 0, one = 1;
        MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c));
        CHECK_INT(sum, want);
        MPI_OK(MPI_Comm_free(&c));
    }
}

/* Down the levels as the standard's example does; returns the steps that
 * gave a communicator. */
static int check_unguided(void)
{
    MPI_Comm parent = MPI_COMM_WORLD;
    int parent_members[256], np = size, steps = 0;
    for (int i = 0; i < size; i++)
        parent_members[i] = i;
    for (;;) {
        CHECK(steps < 10, "HW_UNGUIDED went 10 levels down");
        MPI_Info info;
        MPI_OK(MPI_Info_create(&info));
        MPI_Comm c;
        int prank;
        MPI_OK(MPI_Comm_rank(parent, &prank));
        MPI_OK(MPI_Comm_split_type(parent, MPI_COMM_TYPE_HW_UNGUIDED, prank, info, &c));
        char level[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        MPI_OK(MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, level, &flag));
        MPI_OK(MPI_Info_free(&info));
        if (parent != MPI_COMM_WORLD)
            MPI_OK(MPI_Comm_free(&parent));
        if (c == MPI_COMM_NULL)
            return steps;
        int got[256], n;
        members_of(c, got, &n);
        CHECK(flag && level[0], "step %d: no mpi_hw_resource_type in the info", steps);
        CHECK(n < np, "step %d: %d ranks, not fewer than the parent's %d", steps, n, np);
        /* Members: exactly the parent's ranks with my object of that level. */
        int want = 0;
        for (int i = 0; i < np; i++) {
            int r = parent_members[i];
            bool in = false;
            for (int k = 0; k < n; k++)
                in |= got[k] == r;
            bool same = !strcmp(level, "mpi_shared_memory") || same_object(level, r);
            CHECK(in == same, "step %d (%s): world rank %d member %d, same object %d", steps, level, r, in, same);
            want += same;
        }
        CHECK_INT(n, want);
        parent = c;
        np = n;
        memcpy(parent_members, got, sizeof(int) * (size_t)n);
        steps++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size <= 256, "at most 256 ranks");
    int cpu = my_cpu();
    MPI_OK(MPI_Allgather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, MPI_COMM_WORLD));
    check_guided(MPI_COMM_TYPE_HW_GUIDED);
    check_guided(MPI_COMM_TYPE_RESOURCE_GUIDED);
    check_psets();
    int steps = check_unguided();
    /* With ranks bound to CPUs of two different cores, a level splits them. */
    bool two_cores = false;
    for (int r = 0; r < size; r++)
        two_cores |= cpus[r] >= 0 && cpus[rank] >= 0 && !same_object("core", r);
    if (two_cores)
        CHECK(steps >= 1, "ranks on different cores, but HW_UNGUIDED split nothing");
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (rank == 0)
        printf("core_split_hw: ok\n");
    return 0;
}
