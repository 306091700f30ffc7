/* Intercommunicators: creation from two intracommunicators' leaders,
 * merging, duplication, and the remote-group queries.
 *
 * An intercommunicator's `world` array lists the REMOTE group's world
 * ranks, so point-to-point (which addresses peers through comm->world and
 * stamps messages with comm->rank) works unchanged: a destination rank is a
 * remote rank, and a receiver matches the sender's rank in its own group,
 * which is the receiver's remote rank. Each intercommunicator also carries
 * an intracommunicator over its local group (`local`), on the group
 * sub-context of the same context id, for the collectives its own
 * operations need. Leaders talk to each other on the intercommunicator's
 * collective sub-context. */
#include "binding/api_gen.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "pt2pt/pt2pt.h"

/* Tags of the leaders' exchanges on the collective sub-context, far above
 * the collective sequence numbers that share it. */
#define LEADER_TAG_CTX 0x7fffff01
#define LEADER_TAG_HIGH 0x7fffff02
#define LEADER_TAG_BARRIER 0x7fffff03
#define MERGE_TAG 0x7ffffff0

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

void halo_intercomm_destroy(halo_comm_t *c)
{
    if (c->local) {
        halo_comm_t *l = c->local;
        c->local = NULL;
        halo_match_release(l->ctx | HALO_CTX_GROUP);
        halo_group_release(l->group);
        halo_errhandler_release(l->errh);
        halo_obj_free(l);
    }
}

/* Builds the intercommunicator object over local and remote groups. */
static halo_comm_t *inter_new(halo_group_t *local, halo_group_t *remote, uint32_t ctx,
                              struct halo_errhandler *errh)
{
    halo_comm_t *c = halo_obj_alloc(HALO_KIND_COMM);
    if (!c)
        halo_fatal("out of communicator objects");
    c->ctx = ctx;
    c->is_inter = 1;
    c->group = local;
    halo_obj_ref(local);
    c->remote_group = remote;
    halo_obj_ref(remote);
    c->world = remote->world;
    c->size = local->size;
    c->rank = local->rank;
    c->peer_size = remote->size;
    c->coll_sub = HALO_CTX_COLL;
    c->errh = errh;
    halo_obj_ref(errh);
    c->match[HALO_CTX_P2P] = halo_match_get(ctx | HALO_CTX_P2P, remote->size);
    c->match[HALO_CTX_COLL] = halo_match_get(ctx | HALO_CTX_COLL, remote->size);
    c->local = local_view(c);
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
    if (agreed != mine) {
        /* Our own candidate was not taken: give it back, and claim the
         * agreed one (above every member's counter on both sides). */
        halo_context_free(mine);
        halo_context_claim(agreed);
    }
    *ctx_p = agreed;
    return MPI_SUCCESS;
}

/* Exchanges the groups' world ranks between leaders and spreads them. */
static int exchange_groups(halo_comm_t *local, int local_leader, halo_comm_t *leader_comm,
                           uint32_t leader_ctx, int peer, int tag, halo_group_t **remote_p)
{
    int n = local->size, rn = 0;
    int rc = MPI_SUCCESS;
    if (local->rank == local_leader)
        rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, &n, 1, &rn, 1, MPI_INT);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(&rn, 1, MPI_INT, local_leader, local);
    if (rc)
        return rc;
    int *remote = halo_malloc((size_t)(rn > 0 ? rn : 1) * sizeof(int));
    if (local->rank == local_leader)
        rc = leader_sendrecv(leader_comm, leader_ctx, peer, tag, local->group->world, n, remote, rn, MPI_INT);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(remote, rn, MPI_INT, local_leader, local);
    if (rc == MPI_SUCCESS)
        *remote_p = halo_group_new(rn, remote);
    free(remote);
    return rc;
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
    halo_comm_t *c = inter_new(lc->group, remote, ctx, lc->errh);
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
    *new_p = inter_new(old->group, old->remote_group, ctx, old->errh);
    return MPI_SUCCESS;
}

int halo_api_intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    halo_comm_t *ic = halo_comm_ptr(intercomm);
    if (!ic->is_inter)
        return halo_err(MPI_ERR_COMM, "(intercomm): must be an intercommunicator");
    halo_comm_t *l = ic->local;
    /* The group with high = false comes first; on a tie, the group whose
     * leader has the lower world rank. */
    int mine[2] = {high != 0, ic->group->world[0]}, theirs[2] = {0, 0};
    int rc = MPI_SUCCESS;
    if (l->rank == 0)
        rc = leader_sendrecv(ic, ic->ctx | HALO_CTX_COLL, 0, LEADER_TAG_HIGH, mine, 2, theirs, 2, MPI_INT);
    if (rc == MPI_SUCCESS)
        rc = halo_coll_bcast(theirs, 2, MPI_INT, 0, l);
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
