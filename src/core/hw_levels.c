/* Hardware levels from sysfs (see hw_levels.h). The table is read once, at
 * the first question: for each online CPU, the object that holds it at
 * each level, named by the lowest CPU number the object holds (packages
 * by their physical id, NUMA nodes by their number): numbers that differ
 * between objects of one level, which is all a split needs. Where sysfs
 * says nothing (a container that hides it), the level is unknown. */
#include "core/hw_levels.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_CPUS CPU_SETSIZE

static short table[HALO_HW_NLEVELS][MAX_CPUS];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The first name of a level is the one Halo gives back; hwloc's type names
 * (Machine, Package, NUMANode, L3Cache, Core, PU, ...) are among the
 * others, compared without case and with or without "hwloc://". */
static const struct {
    const char *name;
    int level;
} names[] = {
    {"mpi_shared_memory", HALO_HW_NODE}, {"host", HALO_HW_NODE},       {"machine", HALO_HW_NODE},
    {"package", HALO_HW_PACKAGE},        {"socket", HALO_HW_PACKAGE},  {"numanode", HALO_HW_NUMA},
    {"numa", HALO_HW_NUMA},              {"l3cache", HALO_HW_L3},      {"l2cache", HALO_HW_L2},
    {"l1cache", HALO_HW_L1},             {"core", HALO_HW_CORE},       {"hwthread", HALO_HW_THREAD},
    {"pu", HALO_HW_THREAD},
};

const char *halo_hw_level_name(int level)
{
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].level == level)
            return names[i].name;
    return "unknown";
}

int halo_hw_level_of_name(const char *name)
{
    if (!name)
        return -1;
    if (!strncasecmp(name, "hwloc://", 8))
        name += 8;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcasecmp(names[i].name, name))
            return names[i].level;
    return -1;
}

static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *ok = fgets(buf, (int)n, f);
    fclose(f);
    return ok ? 0 : -1;
}

/* The lowest CPU of a list such as "0-3,8", or -1. */
static int list_first(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || v < 0 || v >= MAX_CPUS ? -1 : (int)v;
}

/* Sets level[c] = v for every CPU c of a list such as "0-3,8,10-11" that
 * the table knows (an online CPU). */
static void list_mark(const char *s, short *level, short v)
{
    while (*s && *s != '\n') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s)
            return;
        s = end;
        if (*s == '-') {
            b = strtol(s + 1, &end, 10);
            s = end;
        }
        for (long c = a < 0 ? 0 : a; c <= b && c < MAX_CPUS; c++)
            if (table[HALO_HW_NODE][c] == 0)
                level[c] = v;
        if (*s == ',')
            s++;
    }
}

static void read_table(void)
{
    char path[256], buf[4096];
    for (int l = 0; l < HALO_HW_NLEVELS; l++)
        for (int c = 0; c < MAX_CPUS; c++)
            table[l][c] = -1;
    for (int c = 0; c < MAX_CPUS; c++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
        if (read_line(path, buf, sizeof buf) != 0)
            continue;   /* no such CPU (or offline, or hidden) */
        table[HALO_HW_NODE][c] = 0;
        table[HALO_HW_THREAD][c] = (short)c;
        table[HALO_HW_PACKAGE][c] = (short)atoi(buf);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
        if (read_line(path, buf, sizeof buf) == 0)
            table[HALO_HW_CORE][c] = (short)list_first(buf);
        for (int i = 0; i < 8; i++) {
            char type[32];
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, i);
            if (read_line(path, buf, sizeof buf) != 0)
                break;
            int level = atoi(buf);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, i);
            if (read_line(path, type, sizeof type) != 0 || !strncmp(type, "Instruction", 11))
                continue;
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", c, i);
            if (read_line(path, buf, sizeof buf) != 0)
                continue;
            int at = level == 1 ? HALO_HW_L1 : level == 2 ? HALO_HW_L2 : level == 3 ? HALO_HW_L3 : -1;
            if (at >= 0)
                table[at][c] = (short)list_first(buf);
        }
    }
    /* Each NUMA node's list once. */
    for (int n = 0, last = -1; n < 1024 && n <= last + 64; n++) {   /* holes in the numbers, not long ones */
        snprintf(path, sizeof path, "/sys/devices/system/node/node%d/cpulist", n);
        if (read_line(path, buf, sizeof buf) != 0)
            continue;
        last = n;
        list_mark(buf, table[HALO_HW_NUMA], (short)n);
    }
}

int halo_hw_object(int level, int cpu)
{
    if (level < 0 || level >= HALO_HW_NLEVELS || cpu < 0 || cpu >= MAX_CPUS)
        return -1;
    pthread_once(&once, read_table);
    return table[level][cpu];
}

int halo_hw_object_of_set(int level, const cpu_set_t *set)
{
    int obj = -1;
    for (int c = 0; c < MAX_CPUS; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int o = halo_hw_object(level, c);
        if (o < 0 || (obj >= 0 && o != obj))
            return -1;
        obj = o;
    }
    return obj;
}
