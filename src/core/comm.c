/* Communicators: the predefined ones, creation (dup, split, create,
 * create_group), comparison, names, hints, and freeing. */
#include "core/comm.h"

#include <strings.h>

#include "binding/api_gen.h"
#include "coll/coll.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/hw_levels.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

halo_comm_t halo_comm_world, halo_comm_self;

int halo_group_compare(const halo_group_t *a, const halo_group_t *b);
void halo_topo_free(halo_topo_t *t);
halo_topo_t *halo_topo_dup(const halo_topo_t *t);

void halo_comm_setup(halo_comm_t *c, halo_group_t *group, uint32_t ctx)
{
    c->ctx = ctx;
    c->group = group;
    c->world = group->world;
    c->size = group->size;
    c->peer_size = group->size;
    c->rank = group->rank;
    c->coll_sub = HALO_CTX_COLL;
    c->match[HALO_CTX_P2P] = halo_match_get(ctx | HALO_CTX_P2P, c->size);
    c->match[HALO_CTX_COLL] = halo_match_get(ctx | HALO_CTX_COLL, c->size);
    c->match[HALO_CTX_GROUP] = halo_match_get(ctx | HALO_CTX_GROUP, c->size);
}

void halo_comm_init(void)
{
    halo_obj_kind_setup(HALO_KIND_COMM, sizeof(halo_comm_t), 1u << 18);
    int *w = halo_malloc((size_t)halo_world.size * sizeof(int));
    for (int i = 0; i < halo_world.size; i++)
        w[i] = i;
    halo_group_t *gw = halo_group_new(halo_world.size, w);
    free(w);
    int me = halo_world.rank;
    halo_group_t *gs = halo_group_new(1, &me);

    memset(&halo_comm_world, 0, sizeof halo_comm_world);
    memset(&halo_comm_self, 0, sizeof halo_comm_self);
    halo_obj_predef(HALO_KIND_COMM, (uintptr_t)MPI_COMM_WORLD, &halo_comm_world.hdr);
    halo_obj_predef(HALO_KIND_COMM, (uintptr_t)MPI_COMM_SELF, &halo_comm_self.hdr);
    halo_comm_setup(&halo_comm_world, gw, 1u << HALO_CTX_SHIFT);
    halo_comm_setup(&halo_comm_self, gs, 2u << HALO_CTX_SHIFT);
    halo_comm_world.errh = halo_errhandler_fatal();
    halo_comm_self.errh = halo_errhandler_fatal();
    snprintf(halo_comm_world.name, sizeof halo_comm_world.name, "MPI_COMM_WORLD");
    snprintf(halo_comm_self.name, sizeof halo_comm_self.name, "MPI_COMM_SELF");
}

static void comm_destroy(halo_comm_t *c)
{
    halo_bsend_comm_gone(c);
    halo_coll_comm_free(c);
    halo_part_comm_gone(c);
    halo_intercomm_destroy(c);
    halo_match_release(c->ctx | HALO_CTX_P2P);
    halo_match_release(c->ctx | HALO_CTX_COLL);
    if (c->match[HALO_CTX_GROUP])
        halo_match_release(c->ctx | HALO_CTX_GROUP);
    if (c->match[HALO_CTX_PART])
        halo_match_release(c->ctx | HALO_CTX_PART);
    c->match[HALO_CTX_PART] = NULL;
    halo_group_release(c->group);
    if (c->remote_group)
        halo_group_release(c->remote_group);
    halo_errhandler_release(c->errh);
    halo_info_release(c->info);
    if (c->topo)
        halo_topo_free(c->topo);
    c->topo = NULL;
}

void halo_comm_finalize(void)
{
    halo_attr_delete_all(HALO_KIND_COMM, &halo_comm_world, &halo_comm_world.attrs);
    comm_destroy(&halo_comm_world);
    comm_destroy(&halo_comm_self);
}

halo_comm_t *halo_comm_create_local(halo_group_t *group, uint32_t ctx, halo_comm_t *parent)
{
    halo_comm_t *c = halo_obj_alloc(HALO_KIND_COMM);
    if (!c)
        halo_fatal("out of communicator objects");
    halo_obj_ref(group);
    halo_comm_setup(c, group, ctx);
    c->errh = parent->errh;
    c->session = parent->session;
    halo_obj_ref(c->errh);
    return c;
}

void halo_comm_release(halo_comm_t *c)
{
    if (!halo_obj_unref(c))
        return;
    halo_chk_comm_forget(halo_comm_handle(c));
    comm_destroy(c);
    halo_obj_free(c);
}

/* ---------------------------------------------------------------- queries */

int halo_api_comm_size(MPI_Comm comm, int *size)
{
    *size = halo_comm_ptr(comm)->size;
    return MPI_SUCCESS;
}

int halo_api_comm_rank(MPI_Comm comm, int *rank)
{
    *rank = halo_comm_ptr(comm)->rank;
    return MPI_SUCCESS;
}

int halo_api_comm_test_inter(MPI_Comm comm, int *flag)
{
    *flag = halo_comm_ptr(comm)->is_inter;
    return MPI_SUCCESS;
}

int halo_api_comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    halo_comm_t *a = halo_comm_ptr(comm1), *b = halo_comm_ptr(comm2);
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    /* Objects of two different sessions may not meet in one call (MPI 4.0,
     * the Sessions Model). */
    if (a->session && b->session && a->session != b->session)
        return halo_err(MPI_ERR_COMM, ": comm1 and comm2 come from different sessions");
    if (a->is_inter != b->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int g = halo_group_compare(a->group, b->group);
    if (a->is_inter) {
        /* Both groups must match, in the same roles. */
        int r = halo_group_compare(a->remote_group, b->remote_group);
        if (r == MPI_UNEQUAL || g == MPI_UNEQUAL)
            g = MPI_UNEQUAL;
        else if (r == MPI_SIMILAR)
            g = MPI_SIMILAR;
    }
    *result = g == MPI_IDENT ? MPI_CONGRUENT : g;
    return MPI_SUCCESS;
}

int halo_api_comm_set_name(MPI_Comm comm, const char *name)
{
    if (!name)
        return halo_err(MPI_ERR_ARG, "(name=NULL): a name is required");
    halo_comm_t *c = halo_comm_ptr(comm);
    snprintf(c->name, sizeof c->name, "%s", name);
    return MPI_SUCCESS;
}

int halo_api_comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    if (comm == MPI_COMM_NULL) {
        snprintf(name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        *resultlen = (int)strlen(name);
        return MPI_SUCCESS;
    }
    halo_comm_t *c = halo_comm_get(comm);
    if (!c)
        return halo_err(MPI_ERR_COMM, "(comm=%p): not a valid communicator", (void *)comm);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

/* The hints a communicator keeps: the assertions of the standard, which
 * Halo accepts (and may rely on later). Other keys are ignored, so
 * MPI_Comm_get_info does not return them. NULL when none is present. */
static const char *const comm_hint_keys[] = {
    "mpi_assert_no_any_tag",      "mpi_assert_no_any_source",
    "mpi_assert_exact_length",    "mpi_assert_allow_overtaking",
};

halo_info_t *halo_comm_hints(const halo_info_t *in)
{
    if (!in)
        return NULL;
    halo_info_t *out = NULL;
    for (size_t k = 0; k < HALO_ARRAY_LEN(comm_hint_keys); k++) {
        const char *v = halo_info_lookup(in, comm_hint_keys[k]);
        if (!v)
            continue;
        if (!out && !(out = halo_info_new()))
            return NULL;
        halo_info_set(out, comm_hint_keys[k], v);
    }
    return out;
}

int halo_api_comm_set_info(MPI_Comm comm, MPI_Info info)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
    if (!in)
        return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    halo_info_t *copy = halo_comm_hints(in);
    halo_info_release(c->info);
    c->info = copy;
    return MPI_SUCCESS;
}

int halo_api_comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_info_t *copy = halo_info_dup(c->info);
    *info_used = (MPI_Info)copy;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- creation */

static int new_comm_from_group(halo_comm_t *parent, halo_group_t *group, uint32_t ctx,
                               halo_comm_t **out_p)
{
    halo_comm_t *c = halo_comm_create_local(group, ctx, parent);
    *out_p = c;
    return MPI_SUCCESS;
}

static int dup_common(halo_comm_t *old, halo_info_t *info, MPI_Comm *newcomm)
{
    uint32_t ctx;
    halo_comm_t *c;
    int rc;
    if (old->is_inter) {
        if ((rc = halo_intercomm_dup(old, &c)))
            return rc;
    } else {
        if ((rc = halo_context_alloc(old, &ctx)))
            return rc;
        new_comm_from_group(old, old->group, ctx, &c);
    }
    c->info = info ? halo_comm_hints(info) : (old->info ? halo_info_dup(old->info) : NULL);
    if (old->topo)
        c->topo = halo_topo_dup(old->topo);
    rc = halo_attr_copy_all(HALO_KIND_COMM, old, old->attrs, &c->attrs);
    if (rc != MPI_SUCCESS) {
        halo_attr_delete_all(HALO_KIND_COMM, c, &c->attrs);
        halo_comm_release(c);
        *newcomm = MPI_COMM_NULL;
        return rc;
    }
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

int halo_api_comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    return dup_common(halo_comm_ptr(comm), NULL, newcomm);
}

/* An info argument: MPI_INFO_NULL stands for no hints. */
static int info_or_null(MPI_Info info, halo_info_t **in_p)
{
    *in_p = NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    *in_p = halo_obj_lookup(HALO_KIND_INFO, info);
    if (!*in_p)
        return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    return MPI_SUCCESS;
}

int halo_api_comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    halo_info_t *in;
    int rc = info_or_null(info, &in);
    if (rc)
        return rc;
    return dup_common(halo_comm_ptr(comm), in, newcomm);
}

/* Comm_idup: the new communicator's context is agreed without blocking
 * (comm_agree.c); attributes are copied now. Intercommunicators agree in a
 * short blocking exchange between their leaders, then the request is
 * complete at once. */
static int idup_common(MPI_Comm comm, halo_info_t *info, MPI_Comm *newcomm, MPI_Request *request)
{
    halo_comm_t *old = halo_comm_ptr(comm), *c;
    int rc = halo_comm_idup_start(old, info ? info : old->info, &c, request);
    if (rc)
        return rc;
    if (old->topo)
        c->topo = halo_topo_dup(old->topo);
    rc = halo_attr_copy_all(HALO_KIND_COMM, old, old->attrs, &c->attrs);
    *newcomm = (MPI_Comm)c;
    return rc;
}

int halo_api_comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_common(comm, NULL, newcomm, request);
}

int halo_api_comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    halo_info_t *in;
    int rc = info_or_null(info, &in);
    if (rc)
        return rc;
    return idup_common(comm, in, newcomm, request);
}

typedef struct split_entry {
    int color, key, rank;
} split_entry_t;

static int cmp_split(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

static int split_common(halo_comm_t *old, int color, int key, MPI_Comm *newcomm)
{
    int p = old->size;
    int mine[2] = {color, key};
    int *all = halo_malloc((size_t)p * 2 * sizeof(int));
    int rc = halo_coll_allgather(mine, 2, MPI_INT, all, 2, MPI_INT, old);
    if (rc) {
        free(all);
        return rc;
    }
    uint32_t ctx;
    rc = halo_context_alloc(old, &ctx);
    if (rc) {
        free(all);
        return rc;
    }
    if (color == MPI_UNDEFINED) {
        free(all);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    split_entry_t *v = halo_malloc((size_t)p * sizeof *v);
    int n = 0;
    for (int i = 0; i < p; i++)
        if (all[2 * i] == color)
            v[n++] = (split_entry_t){color, all[2 * i + 1], i};
    qsort(v, (size_t)n, sizeof *v, cmp_split);
    int *w = halo_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        w[i] = old->world[v[i].rank];
    halo_group_t *g = halo_group_new(n, w);
    halo_comm_t *c;
    new_comm_from_group(old, g, ctx, &c);
    halo_group_release(g);
    free(w);
    free(v);
    free(all);
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

/* Intercommunicators (core/intercomm.c). */
int halo_intercomm_split(halo_comm_t *c, int color, int key, MPI_Comm *newcomm);
int halo_intercomm_create_sub(halo_comm_t *c, halo_group_t *g, MPI_Comm *newcomm);

int halo_api_comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    if (color < 0 && color != MPI_UNDEFINED)
        return halo_err(MPI_ERR_ARG, "(color=%d): color must be non-negative or MPI_UNDEFINED", color);
    halo_comm_t *c = halo_comm_ptr(comm);
    if (c->is_inter)
        return halo_intercomm_split(c, color, key, newcomm);
    return split_common(c, color, key, newcomm);
}

/* Whether the processes of c (both groups of an intercommunicator) are
 * all on one node. */
static bool comm_one_node(const halo_comm_t *c)
{
    const halo_group_t *gs[2] = {c->group, c->is_inter ? c->remote_group : NULL};
    for (int k = 0; k < 2 && gs[k]; k++)
        for (int i = 0; i < gs[k]->size; i++)
            if (halo_world.procs[gs[k]->world[i]].node != halo_world.node)
                return false;
    return true;
}

/* The color of the shared-memory level: the node, or, on a communicator
 * with processes of other jobs (which share no segment with this one),
 * the node and job: every member computes its own, so the groups of two
 * jobs fall apart. */
static int shared_color(const halo_comm_t *c)
{
    if (!c->group->far && !(c->is_inter && c->remote_group->far))
        return halo_world.node;
    uint64_t h = halo_fnv1a(halo_world.job_key, &halo_world.node, sizeof halo_world.node);
    return (int)(h & 0x7fffffff);
}

/* The color of an object of a hardware level below the node: apart from
 * the node's (and from other levels'). */
static int level_color(const halo_comm_t *c, int level, int obj)
{
    uint32_t k[3] = {(uint32_t)shared_color(c), (uint32_t)level, (uint32_t)obj};
    return (int)(halo_fnv1a(0x68616c6fULL, k, sizeof k) & 0x7fffffff);
}

/* The object of the level that holds world rank w, from the CPU it is
 * bound to (the shared segment tells every rank of the node), or -1:
 * not on this node, not bound to one CPU, or the level unknown. Every
 * rank of the node sees the same answers, so members agree without a
 * message. */
static int rank_object(int w, int level)
{
    if (w >= halo_world.size || halo_world.procs[w].node != halo_world.node)
        return -1;
    return halo_hw_object(level, halo_tr_bound_cpu(w));
}

/* MPI_COMM_TYPE_HW_UNGUIDED: the widest level at which this rank's
 * object holds some but not all of the group; *level_p gets it. The node
 * level counts when the group spans nodes. Below it, a rank not bound to
 * one CPU has no object (MPI_UNDEFINED). Levels nest, so the members of
 * one object all stop at the same level. */
static int unguided_color(const halo_comm_t *c, int *level_p)
{
    const halo_group_t *g = c->group;
    if (!comm_one_node(c)) {
        *level_p = HALO_HW_NODE;
        return shared_color(c);
    }
    if (c->is_inter)   /* on an intercommunicator, only the node level */
        return MPI_UNDEFINED;
    for (int level = HALO_HW_NODE + 1; level < HALO_HW_NLEVELS; level++) {
        int obj = rank_object(halo_world.rank, level);
        if (obj < 0)
            return MPI_UNDEFINED;
        int same = 0;
        for (int i = 0; i < g->size; i++)
            same += rank_object(g->world[i], level) == obj;
        if (same < g->size) {
            *level_p = level;
            return level_color(c, level, obj);
        }
    }
    return MPI_UNDEFINED;
}

int halo_api_comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int color, level = -1;
    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED:
        color = shared_color(c);
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
    case MPI_COMM_TYPE_RESOURCE_GUIDED: {
        /* The node (mpi_shared_memory), or a level below it that holds
         * every CPU this process may run on (else MPI_COMM_NULL); a name
         * Halo does not know gives MPI_COMM_NULL. RESOURCE_GUIDED also
         * takes a process set (mpi_pset_name): the processes of this job
         * for mpi://WORLD, each process alone for mpi://SELF. */
        halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
        const char *pset = split_type == MPI_COMM_TYPE_RESOURCE_GUIDED ? halo_info_lookup(in, "mpi_pset_name")
                                                                        : NULL;
        if (pset) {
            uint64_t h = halo_fnv1a(0x70736574ULL, &halo_world.job_key, sizeof halo_world.job_key);
            if (!strcasecmp(pset, "mpi://SELF"))
                h = halo_fnv1a(h, &halo_world.rank, sizeof halo_world.rank);
            color = !strcasecmp(pset, "mpi://WORLD") || !strcasecmp(pset, "mpi://SELF") ? (int)(h & 0x7fffffff)
                                                                                          : MPI_UNDEFINED;
            break;
        }
        level = halo_hw_level_of_name(halo_info_lookup(in, "mpi_hw_resource_type"));
        color = MPI_UNDEFINED;
        cpu_set_t set;
        if (level == HALO_HW_NODE) {
            color = shared_color(c);
        } else if (level > HALO_HW_NODE && sched_getaffinity(0, sizeof set, &set) == 0) {
            int obj = halo_hw_object_of_set(level, &set);
            if (obj >= 0)
                color = level_color(c, level, obj);
        }
        break;
    }
    case MPI_COMM_TYPE_HW_UNGUIDED:
        /* Computed from what every rank knows, so no agreement runs: members
         * that pass MPI_UNDEFINED go straight to the split's own collective. */
        color = unguided_color(c, &level);
        break;
    default:
        return halo_err(MPI_ERR_ARG, "(split_type=%d): not a split type of the standard", split_type);
    }
    int rc = c->is_inter ? halo_intercomm_split(c, color, key, newcomm) : split_common(c, color, key, newcomm);
    /* The unguided split names the level it took in the caller's info. */
    if (rc == MPI_SUCCESS && split_type == MPI_COMM_TYPE_HW_UNGUIDED && *newcomm != MPI_COMM_NULL && level >= 0) {
        halo_info_t *in = halo_obj_lookup(HALO_KIND_INFO, info);
        if (in)
            halo_info_set(in, "mpi_hw_resource_type", halo_hw_level_name(level));
    }
    return rc;
}

int halo_api_comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    halo_comm_t *old = halo_comm_ptr(comm);
    halo_group_t *g = halo_obj_lookup(HALO_KIND_GROUP, group);
    if (!g)
        return halo_err(MPI_ERR_GROUP, "(group=%p): not a valid group", (void *)group);
    for (int i = 0; i < g->size; i++)
        if (halo_group_rank_of(old->group, g->world[i]) == MPI_UNDEFINED)
            return halo_err(MPI_ERR_GROUP, ": the group has a process (world rank %d) that is not in "
                            "the communicator%s", g->world[i], old->is_inter ? "'s local group" : "");
    if (old->is_inter)
        return halo_intercomm_create_sub(old, g, newcomm);
    uint32_t ctx;
    int rc = halo_context_alloc(old, &ctx);
    if (rc)
        return rc;
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    halo_comm_t *c;
    new_comm_from_group(old, g, ctx, &c);
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

int halo_api_comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    halo_comm_t *old = halo_comm_ptr(comm);
    if (old->is_inter)
        return halo_err(MPI_ERR_COMM, "(comm): MPI_Comm_create_group needs an intracommunicator");
    halo_group_t *g = halo_obj_lookup(HALO_KIND_GROUP, group);
    if (!g)
        return halo_err(MPI_ERR_GROUP, "(group=%p): not a valid group", (void *)group);
    if (tag < 0)
        return halo_err(MPI_ERR_TAG, "(tag=%d): must be non-negative", tag);
    if (g->rank == MPI_UNDEFINED)
        return halo_err(MPI_ERR_GROUP, ": the calling process is not in the group");
    for (int i = 0; i < g->size; i++)
        if (halo_group_rank_of(old->group, g->world[i]) == MPI_UNDEFINED)
            return halo_err(MPI_ERR_GROUP, ": the group has a process (world rank %d) that is not in "
                            "the communicator", g->world[i]);
    uint32_t ctx;
    int rc = halo_context_alloc_group(old, g, tag, &ctx);
    if (rc)
        return rc;
    halo_comm_t *c;
    new_comm_from_group(old, g, ctx, &c);
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

/* From groups (core/intercomm.c). */
void halo_group_tmp_comm(halo_comm_t *tmp, halo_group_t *g, const char *stringtag);
int halo_errhandler_arg(MPI_Errhandler errhandler, struct halo_errhandler **e_p);

/* MPI_Comm_create_from_group, with a group of world ranks (from a session's
 * process set, or from MPI_COMM_WORLD): the members agree on a context id over a temporary
 * communicator whose collectives carry the stringtag's tag. */
int halo_api_comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                    MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    halo_group_t *g = halo_obj_lookup(HALO_KIND_GROUP, group);
    if (!g)
        return halo_err(MPI_ERR_GROUP, "(group=%p): not a valid group", (void *)group);
    if (!stringtag)
        return halo_err(MPI_ERR_ARG, "(stringtag=NULL): a string is required");
    if (g == &halo_group_empty) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (g->rank == MPI_UNDEFINED)
        return halo_err(MPI_ERR_GROUP, "(group): the calling process is not in the group");
    halo_info_t *in;
    struct halo_errhandler *e;
    int rc = info_or_null(info, &in);
    if (rc || (rc = halo_errhandler_arg(errhandler, &e)))
        return rc;
    halo_comm_t tmp;
    halo_group_tmp_comm(&tmp, g, stringtag);
    uint32_t ctx;
    rc = halo_context_alloc(&tmp, &ctx);
    if (rc)
        return rc;
    halo_comm_t *c;
    new_comm_from_group(&tmp, g, ctx, &c);
    halo_obj_ref(e);
    halo_errhandler_release(c->errh);
    c->errh = e;
    c->info = halo_comm_hints(in);
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

int halo_api_comm_free(MPI_Comm *comm)
{
    halo_comm_t *c = halo_comm_get(*comm);
    if (!c)
        return halo_err(MPI_ERR_COMM, "(comm=%p): not a valid communicator", (void *)*comm);
    if (c->hdr.flags & HALO_OBJ_PREDEFINED)
        return halo_err(MPI_ERR_COMM, "(comm=%s): predefined communicators cannot be freed", c->name);
    int rc = halo_attr_delete_all(HALO_KIND_COMM, c, &c->attrs);
    if (rc != MPI_SUCCESS)
        return rc;
    c->hdr.flags |= HALO_OBJ_USER_FREED;
    halo_chk_comm_forget(*comm);
    halo_comm_release(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int halo_api_comm_disconnect(MPI_Comm *comm)
{
    halo_comm_t *c = halo_comm_get(*comm);
    if (c && !(c->hdr.flags & HALO_OBJ_PREDEFINED)) {
        /* Disconnect waits for pending communication: a barrier does it for
         * the messages of this communicator's members. */
        int rc = c->is_inter ? halo_intercomm_barrier(c) : halo_coll_barrier(c);
        if (rc)
            return rc;
    }
    return halo_api_comm_free(comm);
}

int halo_api_get_hw_resource_info(MPI_Info *hw_info)
{
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    halo_info_set(in, "mpi_hw_resource_type", "mpi_shared_memory");
    *hw_info = (MPI_Info)in;
    return MPI_SUCCESS;
}
