/* Context-id agreements that are not one blocking allreduce over the
 * parent (see context.c for the rules every agreement follows):
 *
 *  - among a group only (MPI_Comm_create_group): the members send their
 *    candidates to the group's first member, which answers with the
 *    maximum. Messages travel on the parent's group sub-context in the
 *    parent's rank numbering, tagged with the user's tag, so successive
 *    calls over different (overlapping) groups cannot take each other's
 *    messages: between two processes they are in call order.
 *  - without blocking (MPI_Comm_idup): a nonblocking allreduce (a schedule)
 *    whose completion settles the id and fills in the new communicator,
 *    then completes the user's request. */
#include "coll/algos.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/errors.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"

/* ---------------------------------------------------------------- group only */

static int exchange_with_leader(halo_comm_t *parent, const int *pr, int n, int tag, uint32_t *val,
                                int combine_and)
{
    uint32_t ctx = parent->ctx | HALO_CTX_GROUP;
    halo_dtype_t *u32 = halo_dtype_ptr(MPI_UINT32_T);
    halo_request_t *r;
    if (parent->rank != pr[0]) {
        uint32_t mine = *val;
        halo_isend(&mine, 1, u32, pr[0], tag, parent, ctx, HALO_MODE_STANDARD, &r);
        halo_req_wait_raw(r);
        halo_req_free(r);
        halo_irecv(val, 1, u32, pr[0], tag, parent, ctx, &r);
        halo_req_wait_raw(r);
        int rc = r->status.MPI_ERROR;
        halo_req_free(r);
        return rc;
    }
    uint32_t acc = *val;
    for (int i = 1; i < n; i++) {
        uint32_t v = 0;
        halo_irecv(&v, 1, u32, pr[i], tag, parent, ctx, &r);
        halo_req_wait_raw(r);
        halo_req_free(r);
        acc = combine_and ? (acc && v) : (v > acc ? v : acc);
    }
    for (int i = 1; i < n; i++) {
        halo_isend(&acc, 1, u32, pr[i], tag, parent, ctx, HALO_MODE_STANDARD, &r);
        halo_req_wait_raw(r);
        halo_req_free(r);
    }
    *val = acc;
    return MPI_SUCCESS;
}

int halo_context_alloc_group(halo_comm_t *parent, halo_group_t *group, int tag, uint32_t *ctx_p)
{
    int n = group->size;
    int *pr = halo_malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        pr[i] = halo_group_rank_of(parent->group, group->world[i]);
    int rc;
    for (int attempt = 0;; attempt++) {
        uint32_t mine = halo_context_propose(attempt), agreed = mine;
        if ((rc = exchange_with_leader(parent, pr, n, tag, &agreed, 0)) ||
            (rc = halo_context_check(agreed))) {
            halo_context_unreserve(mine);
            break;
        }
        uint32_t ok = halo_context_try(agreed, mine);
        uint32_t all_ok = ok;
        if ((rc = exchange_with_leader(parent, pr, n, tag, &all_ok, 1)))
            break;
        if (all_ok) {
            *ctx_p = agreed << HALO_CTX_SHIFT;
            break;
        }
        if (ok)
            halo_context_untake(agreed);
    }
    free(pr);
    return rc;
}

/* ---------------------------------------------------------------- nonblocking dup */

/* The rounds of the agreement run over `agree`, a view of the parent (of an
 * intercommunicator: of its bridge over both groups, see intercomm.c) that
 * takes its tag from one collective sequence number of that communicator,
 * reserved when the call is made: operations started meanwhile (blocking or
 * not, from other threads too) have other numbers, so each rank pairs the
 * rounds' messages the same way whatever it does between them. Rounds of
 * one agreement share the tag; between two processes they are in order. */
typedef struct idup {
    halo_comm_t *old, *newc;
    halo_request_t *user;      /* what the user waits on */
    halo_comm_t agree;         /* the view the rounds run on */
    uint32_t cand[2];          /* [0]: candidate (MAX); [1]: may I take it (LAND) */
    uint32_t out[2];
    int phase;                 /* 0: agreeing on the maximum; 1: confirming */
    int attempt;               /* failed confirmations so far */
} idup_t;

static void idup_round(idup_t *st);

static void idup_finish(idup_t *st, int err, uint32_t agreed)
{
    halo_comm_t *old = st->old;
    if (err == MPI_SUCCESS) {
        if (old->is_inter)
            halo_intercomm_adopt(st->newc, old->remote_group, agreed << HALO_CTX_SHIFT);
        else
            halo_comm_setup(st->newc, old->group, agreed << HALO_CTX_SHIFT);
    }
    st->user->status.MPI_ERROR = err;
    halo_req_complete(st->user);
    free(st);
}

/* Every round pair confirms: other agreements of this process (nonblocking,
 * or blocking in other threads) may have taken the agreed id meanwhile. */
static void idup_done(halo_request_t *r)
{
    idup_t *st = r->cb_arg;
    int err = r->status.MPI_ERROR;
    halo_req_free(r);
    if (err == MPI_SUCCESS && st->phase == 0)
        err = halo_context_check(st->out[0]);
    if (err != MPI_SUCCESS) {
        if (st->phase == 0)
            halo_context_unreserve(st->cand[0]);
        idup_finish(st, err, 0);
        return;
    }
    if (st->phase == 0) {
        uint32_t agreed = st->out[0];
        st->cand[1] = halo_context_try(agreed, st->cand[0]);
        st->cand[0] = agreed;
        st->phase = 1;
        idup_round(st);
        return;
    }
    uint32_t agreed = st->cand[0];
    if (!st->out[1]) {
        if (st->cand[1])
            halo_context_untake(agreed);
        st->phase = 0;
        st->attempt++;
        idup_round(st);
        return;
    }
    idup_finish(st, MPI_SUCCESS, agreed);
}

/* Starts the next nonblocking allreduce of the agreement. */
static void idup_round(idup_t *st)
{
    halo_coll_args_t a = {.kind = HALO_COLL_ALLREDUCE, .count = 1, .type = MPI_UINT32_T};
    if (st->phase == 0) {
        st->cand[0] = halo_context_propose(st->attempt);
        a.sbuf = &st->cand[0];
        a.rbuf = &st->out[0];
        a.op = MPI_MAX;
    } else {
        a.sbuf = &st->cand[1];
        a.rbuf = &st->out[1];
        a.op = MPI_LAND;
    }
    halo_sched_t *s = halo_sched_new(&st->agree, HALO_LANE_NONBLOCKING);
    halo_allreduce_recursive_doubling(&a, &st->agree, &s);
    halo_request_t *r = halo_req_alloc(HALO_REQ_COLL, st->old);
    r->internal = 1;
    halo_status_empty(&r->status);
    r->sched = s;
    r->cb_arg = st;
    r->done_cb = idup_done;
    halo_sched_start(s, r);
}

/* Sets up st->agree (see idup_t). */
static void idup_view(idup_t *st)
{
    halo_comm_t *base = st->old->is_inter ? halo_intercomm_bridge(st->old) : st->old;
    halo_comm_t *v = &st->agree;
    v->hdr.kind = HALO_KIND_COMM;
    v->hdr.flags = HALO_OBJ_LIVE;
    atomic_store(&v->hdr.ref, 1);
    v->ctx = base->ctx;
    v->coll_sub = base->coll_sub;
    v->errh = base->errh;
    v->group = base->group;
    v->world = base->world;
    v->size = base->size;
    v->peer_size = base->peer_size;
    v->rank = base->rank;
    v->coll_seq = halo_sched_next_seq(base, HALO_LANE_NONBLOCKING);
    v->coll_tag_fixed = 1;
}

int halo_comm_idup_start(halo_comm_t *old, struct halo_info *info, halo_comm_t **newcomm_p,
                         MPI_Request *request)
{
    halo_comm_t *c = halo_obj_alloc(HALO_KIND_COMM);
    if (!c)
        return halo_err(MPI_ERR_NO_MEM, ": out of communicator objects");
    /* Group, sizes and matching state are set when the id is agreed; the
     * error handler and hints now. */
    halo_obj_ref(old->group);
    c->group = old->group;
    c->size = old->size;
    c->peer_size = old->peer_size;
    c->rank = old->rank;
    c->world = old->world;
    c->coll_sub = HALO_CTX_COLL;
    c->errh = old->errh;
    halo_obj_ref(c->errh);
    c->info = info == old->info ? (info ? halo_info_dup(info) : NULL) : halo_comm_hints(info);
    idup_t *st = halo_calloc(1, sizeof *st);
    st->old = old;
    st->newc = c;
    st->user = halo_req_alloc(HALO_REQ_NULL, old);
    halo_status_empty(&st->user->status);
    idup_view(st);
    *request = (MPI_Request)st->user;
    *newcomm_p = c;
    idup_round(st);
    return MPI_SUCCESS;
}
