/* Groups and every group operation of the standard. */
#include "core/group.h"

#include "binding/api_gen.h"
#include "core/comm.h"
#include "core/errors.h"

halo_group_t halo_group_empty;
int halo_group_far_live;

void halo_group_init(void)
{
    halo_obj_kind_setup(HALO_KIND_GROUP, sizeof(halo_group_t), 1u << 20);
    halo_group_empty.size = 0;
    halo_group_empty.rank = MPI_UNDEFINED;
    halo_group_empty.world = NULL;
    halo_obj_predef(HALO_KIND_GROUP, (uintptr_t)MPI_GROUP_EMPTY, &halo_group_empty.hdr);
}

void halo_group_finalize(void)
{
}

halo_group_t *halo_group_new(int n, const int *world)
{
    if (n == 0) {
        halo_obj_ref(&halo_group_empty);
        return &halo_group_empty;
    }
    halo_group_t *g = halo_obj_alloc(HALO_KIND_GROUP);
    if (!g)
        halo_fatal("out of group objects");
    g->size = n;
    g->world = halo_malloc((size_t)n * sizeof(int));
    memcpy(g->world, world, (size_t)n * sizeof(int));
    g->rank = MPI_UNDEFINED;
    g->far = false;
    for (int i = 0; i < n; i++) {
        if (world[i] == halo_world.rank)
            g->rank = i;
        if (world[i] >= halo_world.size)
            g->far = true;
    }
    halo_group_far_live += g->far;
    return g;
}

void halo_group_release(halo_group_t *g)
{
    if (!halo_obj_unref(g))
        return;
    halo_group_far_live -= g->far;
    free(g->world);
    halo_obj_free(g);
}

int halo_group_rank_of(const halo_group_t *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world_rank)
            return i;
    return MPI_UNDEFINED;
}

/* For each world rank, its position in g plus one (0: not in g). */
static int *world_index(const halo_group_t *g)
{
    int *ix = halo_calloc((size_t)halo_world.nprocs, sizeof(int));
    for (int i = 0; i < g->size; i++)
        ix[g->world[i]] = i + 1;
    return ix;
}

static halo_group_t *group_arg(MPI_Group h)
{
    return halo_obj_lookup(HALO_KIND_GROUP, h);
}

#define GROUP_CHECK(h, g)                                                                     \
    halo_group_t *g = group_arg(h);                                                           \
    if (!g)                                                                                   \
        return halo_err(MPI_ERR_GROUP, "(" #h "=%p): %s", (void *)h,                          \
                        h == MPI_GROUP_NULL ? "MPI_GROUP_NULL is not a group" : "not a valid group")

/* A group derived from another keeps the session it came from (the empty
 * group is shared and belongs to none). */
static int out_group(halo_group_t *g, const halo_group_t *from, MPI_Group *newgroup)
{
    if (g != &halo_group_empty)
        g->session = from->session;
    *newgroup = (MPI_Group)halo_obj_handle(g);
    return MPI_SUCCESS;
}

int halo_api_group_size(MPI_Group group, int *size)
{
    GROUP_CHECK(group, g);
    *size = g->size;
    return MPI_SUCCESS;
}

int halo_api_group_rank(MPI_Group group, int *rank)
{
    GROUP_CHECK(group, g);
    *rank = g->rank;
    return MPI_SUCCESS;
}

int halo_api_group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                                   int ranks2[])
{
    GROUP_CHECK(group1, g1);
    GROUP_CHECK(group2, g2);
    if (n < 0)
        return halo_err(MPI_ERR_ARG, "(n=%d): must be non-negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return halo_err(MPI_ERR_ARG, "(%s=NULL): an array of n=%d ranks is required", !ranks1 ? "ranks1" : "ranks2",
                        n);
    int *ix = world_index(g2);
    int rc = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        if (r < 0 || r >= g1->size) {
            rc = halo_err(MPI_ERR_RANK, "(ranks1[%d]=%d): not a rank of group1 (size %d)", i, r, g1->size);
            break;
        }
        int pos = ix[g1->world[r]];
        ranks2[i] = pos ? pos - 1 : MPI_UNDEFINED;
    }
    free(ix);
    return rc;
}

int halo_group_compare(const halo_group_t *a, const halo_group_t *b)
{
    if (a->size != b->size)
        return MPI_UNEQUAL;
    bool same_order = true;
    for (int i = 0; i < a->size; i++)
        if (a->world[i] != b->world[i])
            same_order = false;
    if (same_order)
        return MPI_IDENT;
    int *ix = world_index(b);
    int result = MPI_SIMILAR;
    for (int i = 0; i < a->size; i++)
        if (!ix[a->world[i]])
            result = MPI_UNEQUAL;
    free(ix);
    return result;
}

int halo_api_group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    GROUP_CHECK(group1, g1);
    GROUP_CHECK(group2, g2);
    *result = halo_group_compare(g1, g2);
    return MPI_SUCCESS;
}

/* The three set operations: the members of g1 kept by `keep` (all, those
 * in g2, those not in g2), in g1's order, then for a union the members of
 * g2 not in g1, in g2's order. */
enum { KEEP_ALL, KEEP_IN_G2, KEEP_NOT_IN_G2 };

static halo_group_t *set_op(const halo_group_t *g1, const halo_group_t *g2, int keep, bool add_g2)
{
    int *v = halo_malloc((size_t)(g1->size + g2->size + 1) * sizeof(int));
    int n = 0;
    int *in2 = world_index(g2);
    for (int i = 0; i < g1->size; i++) {
        bool there = in2[g1->world[i]] != 0;
        if (keep == KEEP_ALL || (keep == KEEP_IN_G2) == there)
            v[n++] = g1->world[i];
    }
    free(in2);
    if (add_g2) {
        int *in1 = world_index(g1);
        for (int i = 0; i < g2->size; i++)
            if (!in1[g2->world[i]])
                v[n++] = g2->world[i];
        free(in1);
    }
    halo_group_t *g = halo_group_new(n, v);
    free(v);
    return g;
}

int halo_api_group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    GROUP_CHECK(group1, g1);
    GROUP_CHECK(group2, g2);
    return out_group(set_op(g1, g2, KEEP_ALL, true), g1, newgroup);
}

int halo_api_group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    GROUP_CHECK(group1, g1);
    GROUP_CHECK(group2, g2);
    return out_group(set_op(g1, g2, KEEP_IN_G2, false), g1, newgroup);
}

int halo_api_group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    GROUP_CHECK(group1, g1);
    GROUP_CHECK(group2, g2);
    return out_group(set_op(g1, g2, KEEP_NOT_IN_G2, false), g1, newgroup);
}

int halo_api_group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    GROUP_CHECK(group, g0);
    if (n < 0 || n > g0->size)
        return halo_err(MPI_ERR_ARG, "(n=%d): must be between 0 and the group size %d", n, g0->size);
    int *v = halo_malloc((size_t)(n + 1) * sizeof(int));
    char *seen = halo_calloc((size_t)g0->size + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g0->size || seen[ranks[i]]) {
            int r = ranks[i];
            free(v);
            free(seen);
            return halo_err(MPI_ERR_RANK, "(ranks[%d]=%d): %s", i, r,
                            (r < 0 || r >= g0->size) ? "not a rank of the group" : "appears twice");
        }
        seen[ranks[i]] = 1;
        v[i] = g0->world[ranks[i]];
    }
    halo_group_t *g = halo_group_new(n, v);
    free(v);
    free(seen);
    return out_group(g, g0, newgroup);
}

int halo_api_group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    GROUP_CHECK(group, g0);
    if (n < 0 || n > g0->size)
        return halo_err(MPI_ERR_ARG, "(n=%d): must be between 0 and the group size %d", n, g0->size);
    char *drop = halo_calloc((size_t)g0->size + 1, 1);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g0->size || drop[ranks[i]]) {
            int r = ranks[i];
            free(drop);
            return halo_err(MPI_ERR_RANK, "(ranks[%d]=%d): %s", i, r,
                            (r < 0 || r >= g0->size) ? "not a rank of the group" : "appears twice");
        }
        drop[ranks[i]] = 1;
    }
    int *v = halo_malloc((size_t)(g0->size + 1) * sizeof(int));
    int m = 0;
    for (int i = 0; i < g0->size; i++)
        if (!drop[i])
            v[m++] = g0->world[i];
    halo_group_t *g = halo_group_new(m, v);
    free(v);
    free(drop);
    return out_group(g, g0, newgroup);
}

/* Expands (first, last, stride) triplets into group ranks, checking each. */
static int expand_ranges(halo_group_t *g0, int n, int ranges[][3], int **ranks_p, int *count_p)
{
    int cap = 16, m = 0;
    int *v = halo_malloc((size_t)cap * sizeof(int));
    char *seen = halo_calloc((size_t)g0->size + 1, 1);
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g0->size || last < 0 || last >= g0->size) {
            free(v);
            free(seen);
            return halo_err(MPI_ERR_RANK, "(ranges[%d]=(%d,%d,%d)): rank outside a group of size %d",
                            i, first, last, stride, g0->size);
        }
        if (stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last)) {
            free(v);
            free(seen);
            return halo_err(MPI_ERR_ARG, "(ranges[%d]=(%d,%d,%d)): the stride never reaches the last rank",
                            i, first, last, stride);
        }
        for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (seen[r]) {
                free(v);
                free(seen);
                return halo_err(MPI_ERR_RANK, "(ranges[%d]): rank %d appears twice", i, r);
            }
            seen[r] = 1;
            if (m == cap) {
                cap *= 2;
                v = halo_realloc(v, (size_t)cap * sizeof(int));
            }
            v[m++] = r;
        }
    }
    free(seen);
    *ranks_p = v;
    *count_p = m;
    return MPI_SUCCESS;
}

int halo_api_group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    GROUP_CHECK(group, g0);
    int *ranks, m;
    int rc = expand_ranges(g0, n, ranges, &ranks, &m);
    if (rc)
        return rc;
    for (int i = 0; i < m; i++)
        ranks[i] = g0->world[ranks[i]];
    halo_group_t *g = halo_group_new(m, ranks);
    free(ranks);
    return out_group(g, g0, newgroup);
}

int halo_api_group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    GROUP_CHECK(group, g0);
    int *ranks, m;
    int rc = expand_ranges(g0, n, ranges, &ranks, &m);
    if (rc)
        return rc;
    char *drop = halo_calloc((size_t)g0->size + 1, 1);
    for (int i = 0; i < m; i++)
        drop[ranks[i]] = 1;
    free(ranks);
    int *v = halo_malloc((size_t)(g0->size + 1) * sizeof(int));
    int k = 0;
    for (int i = 0; i < g0->size; i++)
        if (!drop[i])
            v[k++] = g0->world[i];
    free(drop);
    halo_group_t *g = halo_group_new(k, v);
    free(v);
    return out_group(g, g0, newgroup);
}

int halo_api_group_free(MPI_Group *group)
{
    GROUP_CHECK(*group, g);
    if (!(g->hdr.flags & HALO_OBJ_PREDEFINED))
        halo_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

int halo_api_comm_group(MPI_Comm comm, MPI_Group *group)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_obj_ref(c->group);
    *group = (MPI_Group)halo_obj_handle(c->group);
    return MPI_SUCCESS;
}
