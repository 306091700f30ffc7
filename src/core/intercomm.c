/* Intercommunicators: creation from two intracommunicators' leaders or
 * from two groups, splitting and subsetting, merging, duplication, and the
 * remote-group queries.
 *
 * An intercommunicator's `world` array lists the REMOTE group's world
 * ranks, so point-to-point (which addresses peers through comm->world and
 * stamps messages with comm->rank) works unchanged: a destination rank is a
 * remote rank, and a receiver matches the sender's rank in its own group,
 * which is the receiver's remote rank. Each intercommunicator also carries
 * two hidden intracommunicators that it owns:
 *   - `local`, over its local group, on the group sub-context of the same
 *     context id, for the blocking collectives its own operations need;
 *   - the bridge, over both groups (the group whose first member has the
 *     lower world rank first), on sub-context BRIDGE_SUB, on which the
 *     collectives of the intercommunicator run (src/coll/inter_*.c): one
 *     schedule can name every process of both groups. It hangs off the
 *     local view's `local` field, which an intracommunicator does not use
 *     otherwise (halo_intercomm_bridge).
 * Leaders talk to each other on the intercommunicator's collective
 * sub-context, with tags of their own. */
#include "binding/api_gen.h"
#include "binding/binding.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "pt2pt/pt2pt.h"
#include "transport/sock.h"

/* Tags of the leaders' exchanges on the collective sub-context, far above
 * the collective sequence numbers that share it. */
#define LEADER_TAG_CTX 0x7fffff01
#define LEADER_TAG_HIGH 0x7fffff02
#define LEADER_TAG_BARRIER 0x7fffff03
#define LEADER_TAG_SPLIT 0x7fffff04
#define LEADER_TAG_CREATE 0x7fffff05
#define MERGE_TAG 0x7ffffff0

/* The sub-context of the bridges' traffic: the one of the four that
 * comm.h leaves unnamed (P2P, COLL and GROUP are taken). */
#define BRIDGE_SUB 3u

/* Blocking send/receive between leaders on a given context. */
static int leader_sendrecv(halo_comm_t *c, uint32_t ctx, int peer, int tag, const void *sbuf,
                           MPI_Count scount, void *rbuf, MPI_Count rcount, MPI_Datatype type)
{
    halo_request_t *rr, *sr;
    halo_dtype_t *dt = halo_dtype_ptr(type);
    halo_irecv(rbuf, rcount, dt, peer, tag, c, ctx, &rr);
    halo_isend(sbuf, scount, dt, peer, tag, c, ctx, HALO_MODE_STANDARD, &sr);
    halo_req_wait_raw(sr);
    halo_req_wait_raw(rr);
    int rc = rr->status.MPI_ERROR ? rr->status.MPI_ERROR : sr->status.MPI_ERROR;
    halo_req_free(sr);
    halo_req_free(rr);
    return rc;
}

/* The intracommunicator over an intercommunicator's local group. */
static halo_comm_t *local_view(halo_comm_t *inter)
{
    halo_comm_t *l = halo_obj_alloc(HALO_KIND_COMM);
    if (!l)
        halo_fatal("out of communicator objects");
    l->ctx = inter->ctx;
    l->group = inter->group;
    halo_obj_ref(l->group);
    l->world = l->group->world;
    l->size = l->group->size;
    l->peer_size = l->group->size;
    l->rank = l->group->rank;
    l->coll_sub = HALO_CTX_GROUP;
    l->errh = inter->errh;
    halo_obj_ref(l->errh);
    l->match[HALO_CTX_P2P] = NULL;
    l->match[HALO_CTX_COLL] = halo_match_get(inter->ctx | HALO_CTX_GROUP, l->size);
    /* Never a user handle: the intercommunicator owns it. */
    l->hdr.flags |= HALO_OBJ_USER_FREED;
    return l;
}

/* The intracommunicator over both groups. Both sides order it alike: the
 * group whose first member has the lower world rank comes first (the
 * groups are disjoint, so the two first members differ). */
static halo_comm_t *bridge_view(halo_comm_t *inter)
{
    halo_group_t *a = inter->group, *b = inter->remote_group;
    if (halo_proc_gpid(b->world[0]) < halo_proc_gpid(a->world[0])) {
        halo_group_t *t = a;
        a = b;
        b = t;
    }
    int n = a->size + b->size;
    int *w = halo_malloc((size_t)n * sizeof(int));
    memcpy(w, a->world, (size_t)a->size * sizeof(int));
    memcpy(w + a->size, b->world, (size_t)b->size * sizeof(int));
    halo_group_t *g = halo_group_new(n, w);
    free(w);
    halo_comm_t *m = halo_obj_alloc(HALO_KIND_COMM);
    if (!m)
        halo_fatal("out of communicator objects");
    m->ctx = inter->ctx;
    m->group = g;
    m->world = g->world;
    m->size = n;
    m->peer_size = n;
    m->rank = g->rank;
    m->coll_sub = BRIDGE_SUB;
    m->errh = inter->errh;
    halo_obj_ref(m->errh);
    m->match[HALO_CTX_P2P] = NULL;
    m->match[HALO_CTX_COLL] = halo_match_get(inter->ctx | BRIDGE_SUB, n);
    m->hdr.flags |= HALO_OBJ_USER_FREED;
    return m;
}

halo_comm_t *halo_intercomm_bridge(halo_comm_t *inter)
{
    return inter->local->local;
}

/* Frees a view made by local_view or bridge_view. */
static void view_free(halo_comm_t *v)
{
    /* The collectives run over the view (a merge's broadcast, an
     * intercommunicator collective's local part) left their kept schedules
     * and shared region on it. */
    halo_coll_comm_free(v);
    halo_match_release(v->ctx | v->coll_sub);
    halo_group_release(v->group);
    halo_errhandler_release(v->errh);
    halo_obj_free(v);
}

void halo_intercomm_destroy(halo_comm_t *c)
{
    if (c->local) {
        halo_comm_t *l = c->local;
        c->local = NULL;
        if (l->local)
            view_free(l->local);
        l->local = NULL;
        view_free(l);
    }
}

/* Builds the intercommunicator object over local and remote groups. */
void halo_intercomm_adopt(halo_comm_t *c, halo_group_t *remote, uint32_t ctx)
{
    c->ctx = ctx;
    c->is_inter = 1;
    c->remote_group = remote;
    halo_obj_ref(remote);
    c->world = remote->world;
    c->size = c->group->size;
    c->rank = c->group->rank;
    c->peer_size = remote->size;
    c->coll_sub = HALO_CTX_COLL;
    c->match[HALO_CTX_P2P] = halo_match_get(ctx | HALO_CTX_P2P, remote->size);
    c->match[HALO_CTX_COLL] = halo_match_get(ctx | HALO_CTX_COLL, remote->size);
    c->local = local_view(c);
    c->local->local = bridge_view(c);
}

halo_comm_t *halo_intercomm_new(halo_group_t *local, halo_group_t *remote, uint32_t ctx,
                               struct halo_errhandler *errh)
{
    halo_comm_t *c = halo_obj_alloc(HALO_KIND_COMM);
    if (!c)
        halo_fatal("out of communicator objects");
    c->group = local;
    halo_obj_ref(local);
    c->errh = errh;
    halo_obj_ref(errh);
    halo_intercomm_adopt(c, remote, ctx);
    return c;
}

/* Agrees on a context id unused by every member of both groups: each side
 * takes the maximum of its members' next unused ids, the leaders exchange
 * theirs, and everyone adopts the larger. (`leader_ctx` is the context the
 * leaders talk on; `peer` the remote leader's rank there.) */
static int agree_ctx_two_sides(halo_comm_t *local, int local_leader, halo_comm_t *leader_comm,
                               uint32_t leader_ctx, int peer, int tag, uint32_t *ctx_p)
{
    uint32_t mine;
    int rc = halo_context_alloc(local, &mine);
    if (rc)
        return rc;
    uint32_t theirs = 0, agreed = mine;
    if (local->rank == local_leader) {
        rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, &mine, 1, &theirs, 1, MPI_UINT32_T);
        if (rc)
            return rc;
        agreed = mine > theirs ? mine : theirs;
    }
    rc = halo_coll_bcast(&agreed, 1, MPI_UINT32_T, local_leader, local);
    if (rc)
        return rc;
    /* Our own candidate stays used (ids are never reused); claim the
     * agreed one (above every member's counter on both sides). */
    if (agreed != mine)
        halo_context_claim(agreed);
    *ctx_p = agreed;
    return MPI_SUCCESS;
}

/* Exchanges a list of processes (`n` world ranks at the local leader)
 * between the leaders and gives every member of the local group the remote
 * list, as a group. The lists travel as identities, so the two groups may
 * belong to different jobs and name processes the other side has not met
 * (MPI_Intercomm_create over the intercommunicator of a spawn): those
 * enter the process table. When the two groups together span more than
 * one job, every member of both readies the socket transport before any
 * of them returns. */
static int exchange_worlds(halo_comm_t *local, int local_leader, halo_comm_t *leader_comm,
                           uint32_t leader_ctx, int peer, int tag, int n, const int *world,
                           halo_group_t **remote_p)
{
    int rn = 0;
    int rc = MPI_SUCCESS;
    bool leader = local->rank == local_leader;
    if (leader)
        rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, &n, 1, &rn, 1, MPI_INT);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(&rn, 1, MPI_INT, local_leader, local);
    if (rc)
        return rc;
    halo_proc_ident_t *remote = halo_malloc((size_t)(rn > 0 ? rn : 1) * sizeof *remote);
    if (leader) {
        halo_proc_ident_t *mine = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof *mine);
        for (int i = 0; i < n; i++)
            mine[i] = (halo_proc_ident_t){.gpid = halo_proc_gpid(world[i]), .pid = halo_proc_pid_any(world[i])};
        rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, mine, (MPI_Count)n * (MPI_Count)sizeof *mine,
                             remote, (MPI_Count)rn * (MPI_Count)sizeof *remote, MPI_BYTE);
        free(mine);
    }
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(remote, (MPI_Count)rn * (MPI_Count)sizeof *remote, MPI_BYTE, local_leader, local);
    if (rc) {
        free(remote);
        return rc;
    }
    int *wr = halo_malloc((size_t)(rn > 0 ? rn : 1) * sizeof *wr);
    bool other_job = false;
    for (int i = 0; i < rn; i++) {
        wr[i] = halo_proc_add(remote[i].gpid, remote[i].pid);
        other_job |= wr[i] >= halo_world.size;
    }
    free(remote);
    for (int i = 0; i < local->size; i++)
        other_job |= local->group->world[i] >= halo_world.size;
    if (other_job) {
        /* Every member listens before any member of either side returns and
         * sends: the local members, then the leaders swap a word, then the
         * leader tells its members. */
        rc = halo_dynproc_reach();
        int rc2 = halo_coll_barrier(local);
        rc = rc ? rc : rc2;
        int token = 0, theirs = 0;
        if (rc == MPI_SUCCESS && leader)
            rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, &token, 1, &theirs, 1, MPI_INT);
        if (rc == MPI_SUCCESS)
            rc = halo_coll_bcast(&theirs, 1, MPI_INT, local_leader, local);
    }
    if (rc == MPI_SUCCESS)
        *remote_p = halo_group_new(rn, wr);
    free(wr);
    return rc;
}

/* Exchanges the groups' world ranks between leaders and spreads them. */
static int exchange_groups(halo_comm_t *local, int local_leader, halo_comm_t *leader_comm,
                           uint32_t leader_ctx, int peer, int tag, halo_group_t **remote_p)
{
    return exchange_worlds(local, local_leader, leader_comm, leader_ctx, peer, tag, local->size,
                           local->group->world, remote_p);
}

int halo_api_intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader,
                              int tag, MPI_Comm *newintercomm)
{
    halo_comm_t *lc = halo_comm_ptr(local_comm);
    if (lc->is_inter)
        return halo_err(MPI_ERR_COMM, "(local_comm): must be an intracommunicator");
    if (local_leader < 0 || local_leader >= lc->size)
        return halo_err(MPI_ERR_RANK, "(local_leader=%d): not a rank of local_comm (size %d)", local_leader,
                        lc->size);
    halo_comm_t *pc = NULL;
    if (lc->rank == local_leader) {
        pc = halo_comm_get(peer_comm);
        if (!pc)
            return halo_err(MPI_ERR_COMM, "(peer_comm=%p): the local leader needs a valid peer communicator",
                            (void *)peer_comm);
        if (remote_leader < 0 || remote_leader >= pc->peer_size)
            return halo_err(MPI_ERR_RANK, "(remote_leader=%d): not a rank of peer_comm", remote_leader);
        if (tag < 0)
            return halo_err(MPI_ERR_TAG, "(tag=%d): must be non-negative", tag);
    }
    uint32_t pctx = pc ? (pc->ctx | HALO_CTX_P2P) : 0;
    halo_group_t *remote = NULL;
    int rc = exchange_groups(lc, local_leader, pc, pctx, remote_leader, tag, &remote);
    if (rc)
        return rc;
    for (int i = 0; i < remote->size; i++) {
        if (halo_group_rank_of(lc->group, remote->world[i]) != MPI_UNDEFINED) {
            halo_group_release(remote);
            return halo_err(MPI_ERR_COMM, ": the local and remote groups overlap (world rank %d is in both)",
                            remote->world[i]);
        }
    }
    uint32_t ctx;
    rc = agree_ctx_two_sides(lc, local_leader, pc, pctx, remote_leader, tag, &ctx);
    if (rc) {
        halo_group_release(remote);
        return rc;
    }
    halo_comm_t *c = halo_intercomm_new(lc->group, remote, ctx, lc->errh);
    halo_group_release(remote);
    *newintercomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

/* Duplicates an intercommunicator: same groups, a new context id agreed
 * across both (the leaders, rank 0 of each group, talk on the old one). */
int halo_intercomm_dup(halo_comm_t *old, halo_comm_t **new_p)
{
    uint32_t ctx;
    int rc = agree_ctx_two_sides(old->local, 0, old, old->ctx | HALO_CTX_COLL, 0, LEADER_TAG_CTX, &ctx);
    if (rc)
        return rc;
    *new_p = halo_intercomm_new(old->group, old->remote_group, ctx, old->errh);
    return MPI_SUCCESS;
}

int halo_api_intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    halo_comm_t *ic = halo_comm_ptr(intercomm);
    if (!ic->is_inter)
        return halo_err(MPI_ERR_COMM, "(intercomm): must be an intercommunicator");
    halo_comm_t *l = ic->local;
    /* The group with high = false comes first; on a tie, the group whose
     * leader has the lower identity (world rank, within one job). */
    uint64_t mine[2] = {high != 0, halo_proc_gpid(ic->group->world[0])}, theirs[2] = {0, 0};
    int rc = MPI_SUCCESS;
    if (l->rank == 0)
        rc = leader_sendrecv(ic, ic->ctx | HALO_CTX_COLL, 0, LEADER_TAG_HIGH, mine, 2, theirs, 2,
                             MPI_UINT64_T);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(theirs, 2, MPI_UINT64_T, 0, l);
    if (rc)
        return rc;
    bool local_first = mine[0] != theirs[0] ? mine[0] < theirs[0] : mine[1] < theirs[1];
    halo_group_t *a = local_first ? ic->group : ic->remote_group;
    halo_group_t *b = local_first ? ic->remote_group : ic->group;
    int n = a->size + b->size;
    int *w = halo_malloc((size_t)n * sizeof(int));
    memcpy(w, a->world, (size_t)a->size * sizeof(int));
    memcpy(w + a->size, b->world, (size_t)b->size * sizeof(int));
    halo_group_t *g = halo_group_new(n, w);
    free(w);
    /* Agree on the id over the merged group itself, through a temporary
     * intracommunicator on the intercommunicator's group sub-context with a
     * tag of its own. */
    halo_comm_t tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.hdr.kind = HALO_KIND_COMM;
    tmp.hdr.flags = HALO_OBJ_LIVE;
    atomic_store(&tmp.hdr.ref, 1);
    tmp.ctx = ic->ctx;
    tmp.group = g;
    tmp.world = g->world;
    tmp.size = tmp.peer_size = g->size;
    tmp.rank = g->rank;
    tmp.coll_sub = HALO_CTX_GROUP;
    tmp.coll_seq = MERGE_TAG;
    tmp.coll_tag_fixed = 1;
    tmp.errh = ic->errh;
    halo_match_get(ic->ctx | HALO_CTX_GROUP, g->size);
    uint32_t ctx;
    rc = halo_context_alloc(&tmp, &ctx);
    halo_match_release(ic->ctx | HALO_CTX_GROUP);
    if (rc) {
        halo_group_release(g);
        return rc;
    }
    halo_comm_t *c = halo_comm_create_local(g, ctx, ic);
    halo_group_release(g);
    *newintracomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

int halo_api_comm_remote_size(MPI_Comm comm, int *size)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    if (!c->is_inter)
        return halo_err(MPI_ERR_COMM, ": not an intercommunicator");
    *size = c->remote_group->size;
    return MPI_SUCCESS;
}

int halo_api_comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    if (!c->is_inter)
        return halo_err(MPI_ERR_COMM, ": not an intercommunicator");
    halo_obj_ref(c->remote_group);
    *group = (MPI_Group)halo_obj_handle(c->remote_group);
    return MPI_SUCCESS;
}

/* Barrier over both groups: each group meets, the leaders meet, each group
 * meets again (nobody leaves before both leaders have arrived). */
int halo_intercomm_barrier(halo_comm_t *c)
{
    int rc = halo_coll_barrier(c->local);
    char none;
    if (rc == MPI_SUCCESS && c->local->rank == 0)
        rc = leader_sendrecv(c, c->ctx | HALO_CTX_COLL, 0, LEADER_TAG_BARRIER, &none, 0, &none, 0, MPI_BYTE);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_barrier(c->local);
    return rc;
}

/* ---------------------------------------------------------------- split and create */

typedef struct key_rank {
    int key, rank;
} key_rank_t;

static int cmp_key_rank(const void *a, const void *b)
{
    const key_rank_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank - y->rank;
}

/* The members of g whose (color, key) pair in ck (by rank in g) has the
 * given color, ordered by key, then by rank in g. */
static halo_group_t *color_group(const halo_group_t *g, const int *ck, int color)
{
    key_rank_t *v = halo_malloc((size_t)g->size * sizeof *v);
    int n = 0;
    for (int i = 0; i < g->size; i++)
        if (ck[2 * i] == color)
            v[n++] = (key_rank_t){ck[2 * i + 1], i};
    qsort(v, (size_t)n, sizeof *v, cmp_key_rank);
    int *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    for (int i = 0; i < n; i++)
        w[i] = g->world[v[i].rank];
    halo_group_t *r = halo_group_new(n, w);
    free(w);
    free(v);
    return r;
}

/* MPI_Comm_split of an intercommunicator: every process learns the colors
 * and keys of both groups (a local allgather, the leaders swap the tables,
 * a local broadcast), one context id is agreed across both groups for all
 * the new intercommunicators (they are disjoint), and each process builds
 * the one of its color, if both groups have a member of that color. */
int halo_intercomm_split(halo_comm_t *c, int color, int key, MPI_Comm *newcomm)
{
    halo_comm_t *l = c->local;
    int p = c->size, q = c->remote_group->size;
    int mine[2] = {color, key};
    int *lck = halo_malloc((size_t)p * 2 * sizeof(int));
    int *rck = halo_malloc((size_t)q * 2 * sizeof(int));
    uint32_t ctx = 0;
    int rc = halo_coll_allgather(mine, 2, MPI_INT, lck, 2, MPI_INT, l);
    if (rc == MPI_SUCCESS && l->rank == 0)
        rc = leader_sendrecv(c, c->ctx | HALO_CTX_COLL, 0, LEADER_TAG_SPLIT, lck, 2 * p, rck, 2 * q, MPI_INT);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(rck, 2 * q, MPI_INT, 0, l);
    if (rc == MPI_SUCCESS)
        rc = agree_ctx_two_sides(l, 0, c, c->ctx | HALO_CTX_COLL, 0, LEADER_TAG_CTX, &ctx);
    *newcomm = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS) {
        if (color != MPI_UNDEFINED) {
            halo_group_t *lg = color_group(c->group, lck, color);
            halo_group_t *rg = color_group(c->remote_group, rck, color);
            if (rg->size > 0)
                *newcomm = (MPI_Comm)halo_intercomm_new(lg, rg, ctx, c->errh);
            halo_group_release(lg);
            halo_group_release(rg);
        }
    }
    free(lck);
    free(rck);
    return rc;
}

/* MPI_Comm_create of an intercommunicator: g is a subgroup of the local
 * group (checked by the caller); the leaders swap the two subgroups, and
 * the members of both get an intercommunicator between them. */
int halo_intercomm_create_sub(halo_comm_t *c, halo_group_t *g, MPI_Comm *newcomm)
{
    halo_comm_t *l = c->local;
    halo_group_t *rg = NULL;
    *newcomm = MPI_COMM_NULL;
    int rc = exchange_worlds(l, 0, c, c->ctx | HALO_CTX_COLL, 0, LEADER_TAG_CREATE, g->size, g->world, &rg);
    if (rc)
        return rc;
    uint32_t ctx;
    rc = agree_ctx_two_sides(l, 0, c, c->ctx | HALO_CTX_COLL, 0, LEADER_TAG_CTX, &ctx);
    if (rc == MPI_SUCCESS) {
        if (g->size > 0 && rg->size > 0 && g->rank != MPI_UNDEFINED)
            *newcomm = (MPI_Comm)halo_intercomm_new(g, rg, ctx, c->errh);
    }
    halo_group_release(rg);
    return rc;
}

/* ---------------------------------------------------------------- from groups */

/* The tags of the exchanges that create a communicator from groups with a
 * given stringtag: FNV-1a hashes folded to 30 bits, with bit 30 set, so
 * that they stay above MPI_COMM_WORLD's collective sequence numbers (on
 * the collective sub-context) and below the fixed tags 0x7fffff00 and up. Concurrent
 * creations over one group must use stringtags whose tags differ; the
 * same stringtag may be reused once a creation has returned. */
static int32_t reserved_tag(uint64_t h64)
{
    uint32_t h = (uint32_t)(h64 ^ (h64 >> 32)) & 0x3fffffffu;
    if (h >= 0x3fffff00u)
        h -= 0x100u;
    return (int32_t)(0x40000000u | h);
}

/* The tag of the leaders' exchange of MPI_Intercomm_create_from_groups
 * (world ranks on MPI_COMM_WORLD's collective sub-context). */
static int32_t stringtag_tag(const char *stringtag)
{
    return reserved_tag(halo_fnv1a(HALO_FNV_BASIS, stringtag, strlen(stringtag)));
}

/* A temporary intracommunicator over a group g of MPI_COMM_WORLD (which
 * includes the caller), for the agreements of the *_from_group(s)
 * functions: on MPI_COMM_WORLD's group sub-context, with one tag for all
 * its collectives. Not in the slab, so never a valid user handle. The
 * matching state of that sub-context is kept from the first use on: an
 * early message of the next creation must not be dropped with it.
 *
 * Packets carry the sender's rank in the group, and every such agreement
 * shares the sub-context, so the tag also hashes the group's members:
 * a process in two groups created with one stringtag (a node's group,
 * then the group of the nodes' roots) must not take a message of the
 * second agreement, sent by its rank 1 there, for one of the first from
 * its rank 1 here. Both ends of an agreement name the same group, hence
 * the same tag. */
void halo_group_tmp_comm(halo_comm_t *tmp, halo_group_t *g, const char *stringtag)
{
    static bool held;
    if (!held) {
        halo_match_get(halo_comm_world.ctx | HALO_CTX_GROUP, halo_comm_world.size);
        held = true;
    }
    uint64_t h = halo_fnv1a(HALO_FNV_BASIS, stringtag, strlen(stringtag) + 1);
    h = halo_fnv1a(h, g->world, (size_t)g->size * sizeof *g->world);
    memset(tmp, 0, sizeof *tmp);
    tmp->hdr.kind = HALO_KIND_COMM;
    tmp->hdr.flags = HALO_OBJ_LIVE;
    atomic_store(&tmp->hdr.ref, 1);
    tmp->ctx = halo_comm_world.ctx;
    tmp->group = g;
    tmp->world = g->world;
    tmp->size = g->size;
    tmp->peer_size = g->size;
    tmp->rank = g->rank;
    tmp->coll_sub = HALO_CTX_GROUP;
    tmp->coll_seq = (uint64_t)reserved_tag(h);
    tmp->coll_tag_fixed = 1;
    tmp->errh = halo_comm_world.errh;
    tmp->session = g->session;
}

/* The error handler argument of the *_from_group(s) functions. */
int halo_errhandler_arg(MPI_Errhandler errhandler, struct halo_errhandler **e_p)
{
    return halo_errhandler_for(errhandler, HALO_EOBJ_COMM, e_p);
}

/* MPI_Intercomm_create_from_groups, with groups of world ranks (from
 * process sets or MPI_COMM_WORLD): each group agrees on a context id over a
 * temporary communicator (halo_group_tmp_comm), and the two leaders swap
 * theirs through MPI_COMM_WORLD's collective sub-context, all with the
 * stringtag's tag. Both sides must name the same two groups and leaders;
 * that is not checked. */
int halo_api_intercomm_create_from_groups(MPI_Group local_group, int local_leader, MPI_Group remote_group,
                                          int remote_leader, const char *stringtag, MPI_Info info,
                                          MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    (void)info;
    halo_group_t *lg = halo_obj_lookup(HALO_KIND_GROUP, local_group);
    halo_group_t *rg = halo_obj_lookup(HALO_KIND_GROUP, remote_group);
    if (!lg)
        return halo_err(MPI_ERR_GROUP, "(local_group=%p): not a valid group", (void *)local_group);
    if (!rg)
        return halo_err(MPI_ERR_GROUP, "(remote_group=%p): not a valid group", (void *)remote_group);
    if (lg->rank == MPI_UNDEFINED)
        return halo_err(MPI_ERR_GROUP, "(local_group): the calling process is not in the local group");
    if (local_leader < 0 || local_leader >= lg->size)
        return halo_err(MPI_ERR_RANK, "(local_leader=%d): not a rank of local_group (size %d)", local_leader,
                        lg->size);
    if (remote_leader < 0 || remote_leader >= rg->size)
        return halo_err(MPI_ERR_RANK, "(remote_leader=%d): not a rank of remote_group (size %d)",
                        remote_leader, rg->size);
    if (!stringtag)
        return halo_err(MPI_ERR_ARG, "(stringtag=NULL): a string is required");
    halo_errhandler_t *e;
    int rc = halo_errhandler_arg(errhandler, &e);
    if (rc)
        return rc;
    for (int i = 0; i < rg->size; i++)
        if (halo_group_rank_of(lg, rg->world[i]) != MPI_UNDEFINED)
            return halo_err(MPI_ERR_GROUP, ": the local and remote groups overlap (world rank %d is in both)",
                            rg->world[i]);
    int32_t tag = stringtag_tag(stringtag);
    halo_comm_t tmp;
    halo_group_tmp_comm(&tmp, lg, stringtag);
    uint32_t ctx;
    rc = agree_ctx_two_sides(&tmp, local_leader, &halo_comm_world, halo_comm_world.ctx | HALO_CTX_COLL,
                             rg->world[remote_leader], tag, &ctx);
    if (rc)
        return rc;
    *newintercomm = (MPI_Comm)halo_intercomm_new(lg, rg, ctx, e);
    return MPI_SUCCESS;
}
