/* The schedule engine (format in sched.h). Completions of a round's
 * messages arrive through request callbacks; the last one advances the
 * schedule, which may post the next round from inside a transport's poll. */
#include "coll/sched.h"

#include "coll/algos.h"
#include "coll/op_predef.h"
#include "coll/select.h"
#include "coll/shm.h"
#include "core/errors.h"
#include "progress/progress.h"
#include "pt2pt/match.h"
#include "pt2pt/pt2pt.h"
#include "transport/transport.h"

#define SCHED_INITIAL_STEPS 16

uint64_t halo_sched_next_seq(halo_comm_t *comm, int lane)
{
    if (comm->coll_tag_fixed)
        return comm->coll_seq;
    if (lane == HALO_LANE_NONE)
        return 0;   /* a placeholder: the schedule is numbered when it starts */
    uint64_t *n = lane == HALO_LANE_NONBLOCKING ? &comm->coll_nbseq : &comm->coll_seq;
    return 2 * (*n)++ + (uint64_t)lane;
}

/* Allocations of schedules freed last, for the next calls: up to
 * SCHED_CACHE of at most SCHED_CACHE_BYTES (a small blocking collective
 * builds and frees one each call, and the allocator took a tenth of its
 * time), and the largest one above that up to SCHED_BIG_MAX (scratch of
 * large vectors: a fresh allocation of a megabyte costs its page faults on
 * every call, ten times the reduction it serves). Steps are cleared as
 * they are added, so only the header is cleared on reuse. A schedule's
 * `bytes` is its allocation's size. */
#define SCHED_CACHE 4
#define SCHED_CACHE_BYTES (64 * 1024)
#define SCHED_BIG_MAX (64ull << 20)
static halo_sched_t *sched_cache[SCHED_CACHE];
static int sched_cached;
static halo_sched_t *sched_big;

/* A cached allocation of at least `bytes`, or NULL. */
static halo_sched_t *sched_cache_take(uint64_t bytes)
{
    if (bytes > SCHED_CACHE_BYTES) {
        halo_sched_t *s = sched_big;
        if (!s || s->bytes < bytes)
            return NULL;
        sched_big = NULL;
        return s;
    }
    for (int i = sched_cached - 1; i >= 0; i--) {
        halo_sched_t *s = sched_cache[i];
        if (s->bytes >= bytes) {
            sched_cache[i] = sched_cache[--sched_cached];
            return s;
        }
    }
    return NULL;
}

/* Keeps s's allocation for reuse, or frees it. */
static void sched_cache_put(halo_sched_t *s)
{
    if (s->bytes <= SCHED_CACHE_BYTES) {
        if (sched_cached < SCHED_CACHE)
            sched_cache[sched_cached++] = s;
        else
            free(s);
    } else if (s->bytes <= SCHED_BIG_MAX && (!sched_big || sched_big->bytes < s->bytes)) {
        free(sched_big);
        sched_big = s;
    } else {
        free(s);
    }
}

halo_sched_t *halo_sched_new(halo_comm_t *comm, int lane)
{
    size_t bytes = sizeof(halo_sched_t) + SCHED_INITIAL_STEPS * sizeof(halo_step_t);
    halo_sched_t *s = sched_cache_take(bytes);
    if (s) {
        bytes = s->bytes;
        memset(s, 0, sizeof *s);
    } else {
        s = halo_calloc(1, bytes);
    }
    s->bytes = bytes;
    s->capsteps = SCHED_INITIAL_STEPS;
    s->cur_round = -1;
    s->kind = -1;
    s->comm = halo_comm_handle(comm);
    s->ctx = comm->ctx | comm->coll_sub;
    s->seq = halo_sched_next_seq(comm, lane);
    s->tag = halo_seq_tag(s->seq);
    s->scratch_off = bytes;
    return s;
}

void halo_sched_renumber(halo_sched_t *s)
{
    s->seq = halo_sched_next_seq(halo_comm_ptr(s->comm), HALO_LANE_NONBLOCKING);
    s->tag = halo_seq_tag(s->seq);
}

/* Makes room for need_steps steps and need_scratch bytes of scratch.
 * Scratch offsets are relative to the scratch area's start, and nothing
 * is written into scratch while a schedule is built (its steps fill it
 * when they run), so the area can move and its contents need no copy;
 * the allocation only changes when it is too small. */
static void sched_grow(halo_sched_t **s_p, int need_steps, uint64_t need_scratch)
{
    halo_sched_t *s = *s_p;
    int cap = s->capsteps;
    while (cap < need_steps)
        cap *= 2;
    uint64_t scratch = s->scratch_bytes > need_scratch ? s->scratch_bytes : need_scratch;
    uint64_t off = (sizeof(halo_sched_t) + (uint64_t)cap * sizeof(halo_step_t) + 63) & ~63ull;
    uint64_t bytes = off + scratch;
    if (bytes > s->bytes) {
        halo_sched_t *n = sched_cache_take(bytes);
        if (!n) {
            n = halo_malloc(bytes);
            n->bytes = bytes;
        }
        uint64_t nbytes = n->bytes;
        memcpy(n, s, sizeof(halo_sched_t) + (size_t)s->nsteps * sizeof(halo_step_t));
        n->bytes = nbytes;
        sched_cache_put(s);
        *s_p = s = n;
    }
    s->capsteps = cap;
    s->scratch_off = off;
    s->scratch_bytes = scratch;
}

int64_t halo_sched_scratch(halo_sched_t **s_p, uint64_t bytes)
{
    halo_sched_t *s = *s_p;
    uint64_t at = (s->scratch_bytes + 63) & ~63ull;
    sched_grow(s_p, s->nsteps, at + bytes);
    return (int64_t)at;
}

halo_step_t *halo_sched_add(halo_sched_t **s_p, int kind, int round)
{
    if ((*s_p)->nsteps == (*s_p)->capsteps)
        sched_grow(s_p, (*s_p)->nsteps + 1, (*s_p)->scratch_bytes);
    halo_sched_t *s = *s_p;
    halo_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    round += s->round_base;
    st->kind = kind;
    st->round = round;
    st->phase = s->build_phase;
    if (round + 1 > s->nrounds)
        s->nrounds = round + 1;
    return st;
}

void halo_sched_send(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_SEND, round);
    (*s_p)->nmsgs++;
    st->a = buf;
    st->count = count;
    st->type = type;
    st->peer = (*s_p)->peer_map ? (*s_p)->peer_map[peer] : peer;
}

void halo_sched_send_rdv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                         MPI_Datatype type, int peer)
{
    halo_sched_send(s_p, round, buf, count, type, peer);
    (*s_p)->steps[(*s_p)->nsteps - 1].rdv = 1;
}

void halo_sched_recv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_RECV, round);
    (*s_p)->nmsgs++;
    st->a = buf;
    st->count = count;
    st->type = type;
    st->peer = (*s_p)->peer_map ? (*s_p)->peer_map[peer] : peer;
}

void halo_sched_copy(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count scount,
                     MPI_Datatype stype, halo_bref_t dst, MPI_Count dcount, MPI_Datatype dtype)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_COPY, round);
    st->a = src;
    st->count = scount;
    st->type = stype;
    st->b = dst;
    st->count2 = dcount;
    st->type2 = dtype;
}

void halo_sched_reduce(halo_sched_t **s_p, int round, halo_bref_t in, halo_bref_t inout,
                       MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_REDUCE, round);
    st->a = in;
    st->b = inout;
    st->count = count;
    st->type = type;
    st->op = op;
    /* The receives that land in either operand are read at once: their
     * rendezvous stays whole (halo_irecv_consumed). */
    halo_sched_t *s = *s_p;
    for (int j = s->nsteps - 2; j >= 0; j--) {
        halo_step_t *rv = &s->steps[j];
        if (rv->kind == HALO_STEP_RECV && (halo_bref_same(rv->a, in) || halo_bref_same(rv->a, inout)))
            rv->consumed = 1;
    }
}

void halo_sched_pack(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count pos, MPI_Count len, halo_bref_t dst)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_PACK, round);
    st->a = buf;
    st->count = count;
    st->type = type;
    st->pos = pos;
    st->count2 = len;
    st->b = dst;
}

void halo_sched_unpack(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count pos, MPI_Count len,
                       halo_bref_t buf, MPI_Count count, MPI_Datatype type)
{
    halo_step_t *st = halo_sched_add(s_p, HALO_STEP_UNPACK, round);
    st->a = buf;
    st->count = count;
    st->type = type;
    st->pos = pos;
    st->count2 = len;
    st->b = src;
}

void halo_sched_cma(halo_sched_t **s_p, int round, bool write, halo_bref_t published, int peer,
                    MPI_Count pos, halo_bref_t local, MPI_Count len)
{
    halo_step_t *st = halo_sched_add(s_p, write ? HALO_STEP_CMA_WRITE : HALO_STEP_CMA_READ, round);
    st->a = published;
    st->b = local;
    st->peer = peer;
    st->pos = pos;
    st->count2 = len;
}

void *halo_sched_tmp(halo_sched_t **s_p, MPI_Count count, MPI_Datatype type)
{
    halo_sched_t *s = *s_p;
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count span = count > 0 ? (count - 1) * dt->extent + (dt->true_ub - dt->true_lb) : 0;
    char *p = halo_malloc((size_t)(span > 0 ? span : 1));
    s->owned = halo_realloc(s->owned, (size_t)(s->nowned + 1) * sizeof *s->owned);
    s->owned[s->nowned++] = p;
    s->owned_bytes += (uint64_t)(span > 0 ? span : 1);
    return p - dt->true_lb;
}

/* Where references of kind `kind` (HALO_BREF_*) start in phase `phase` of
 * this run: 0 for absolute addresses, the scratch area, the phase's
 * channel slots or flag lines (halo_shm_begin sets those bases). */
static inline uintptr_t bref_base(const halo_sched_t *s, int phase, int kind)
{
    switch (kind) {
    case HALO_BREF_SCRATCH:
        return (uintptr_t)s + (uintptr_t)s->scratch_off;
    case HALO_BREF_SLOT:
        return (uintptr_t)s->shm_data[phase];
    case HALO_BREF_LINE:   /* past the flag word */
        return (uintptr_t)s->shm_ctl[phase] + 8;
    default:
        return 0;
    }
}

/* The offset of reference b from its kind's base (bref_base). */
static inline int64_t bref_offset(halo_bref_t b)
{
    switch (b.scratch) {
    case HALO_BREF_SLOT:
        return (int64_t)b.owner * HALO_CSHM_SLOT + b.at;
    case HALO_BREF_LINE:
        return (int64_t)b.owner * HALO_CSHM_CTL_BYTES + b.at;
    default:
        return b.at;
    }
}

static inline void *resolve(halo_sched_t *s, const halo_step_t *st, halo_bref_t b)
{
    return (void *)(bref_base(s, st->phase, b.scratch) + (uintptr_t)bref_offset(b));
}

static void sched_advance(halo_sched_t *s);
static void flag_failed(halo_sched_t *s, int rank);

/* ---------------------------------------------------------------- failures */

typedef struct failed {
    uint32_t ctx;
    int32_t tag, src, errclass;
} failed_t;

static failed_t *failed;     /* collectives known to have failed (this rank or a peer) */
static int nfailed, capfailed;
static halo_sched_t **running;
static int nrunning, caprunning;

static failed_t *failed_find(uint32_t ctx, int tag)
{
    for (int i = 0; i < nfailed; i++)
        if (failed[i].ctx == ctx && failed[i].tag == tag)
            return &failed[i];
    return NULL;
}

static void failed_add(uint32_t ctx, int tag, int src, int errclass)
{
    if (failed_find(ctx, tag))
        return;
    if (nfailed == capfailed) {
        capfailed = capfailed ? 2 * capfailed : 8;
        failed = halo_realloc(failed, (size_t)capfailed * sizeof *failed);
    }
    failed[nfailed++] = (failed_t){ctx, tag, src, errclass};
}

static void notify(halo_comm_t *c, uint32_t ctx, int tag, int code)
{
    int errclass = halo_err_class_of(code);
    failed_add(ctx, tag, c->rank, errclass);
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            halo_pt2pt_send_coll_err(c->world[r], ctx, tag, c->rank, errclass);
}

static void running_remove(halo_sched_t *s)
{
    for (int i = 0; i < nrunning; i++)
        if (running[i] == s) {
            running[i] = running[--nrunning];
            return;
        }
}

static void running_add(halo_sched_t *s)
{
    if (nrunning == caprunning) {
        caprunning = caprunning ? 2 * caprunning : 16;
        running = halo_realloc(running, (size_t)caprunning * sizeof *running);
    }
    running[nrunning++] = s;
}

static void inflight_add(halo_sched_t *s, halo_request_t *r)
{
    if (s->ninflight == s->capinflight) {
        s->capinflight = s->capinflight ? 2 * s->capinflight : 8;
        s->inflight = halo_realloc(s->inflight, (size_t)s->capinflight * sizeof *s->inflight);
    }
    s->inflight[s->ninflight++] = r;
}

static void inflight_remove(halo_sched_t *s, halo_request_t *r)
{
    for (int i = 0; i < s->ninflight; i++)
        if (s->inflight[i] == r) {
            s->inflight[i] = s->inflight[--s->ninflight];
            return;
        }
}

/* Stops a schedule: nothing new is posted, receives nobody matched yet
 * are withdrawn, messages under way may finish (their buffers stay valid
 * until then), and the schedule completes when they have. */
static void sched_abort(halo_sched_t *s, int origin)
{
    if (s->aborted || s->done)
        return;
    s->aborted = 1;
    s->fail_rank = origin;
    for (int i = 0; i < s->ninflight;) {
        halo_request_t *r = s->inflight[i];
        halo_match_t *m = r->kind == HALO_REQ_RECV ? halo_match_find(r->ctx) : NULL;
        if (m && halo_match_unpost(m, r)) {
            s->inflight[i] = s->inflight[--s->ninflight];
            halo_req_free(r);
            s->pending--;
        } else {
            i++;
        }
    }
    halo_pt2pt_drop_unexpected(s->ctx, s->tag);
    if (s->shm_waiting) {
        halo_shm_unwatch(s);
        s->shm_waiting = 0;
        s->pending--;
    }
    if (s->uses_shm)
        halo_shm_abort(s, origin);
    if (s->pending == 0)
        sched_advance(s);
}

/* This rank failed in the collective: record the error, tell the others,
 * stop. */
static void sched_fail(halo_sched_t *s, int code)
{
    if (s->error == MPI_SUCCESS)
        s->error = code;
    halo_comm_t *c = halo_comm_ptr(s->comm);
    if (!failed_find(s->ctx, s->tag))
        notify(c, s->ctx, s->tag, code);
    sched_abort(s, c->rank);
}

static int remote_error(const halo_sched_t *s, const failed_t *f)
{
    char what[MPI_MAX_ERROR_STRING];
    int len;
    halo_err_string(f->errclass, what, &len);
    const char *name = s->kind >= 0 && s->kind < HALO_COLL_NKINDS ? halo_coll_kind_name(s->kind) : "collective";
    return halo_err(MPI_ERR_OTHER, "(%s, collective number %d of the communicator): rank %d failed in it: %s",
                    name, (int)s->tag, (int)f->src, what);
}

static void peer_failed(uint32_t ctx, int tag, int src, int errclass)
{
    failed_add(ctx, tag, src, errclass);
    for (int i = 0; i < nrunning; i++) {
        halo_sched_t *s = running[i];
        if (s->ctx == ctx && s->tag == tag && !s->aborted) {
            if (s->error == MPI_SUCCESS)
                s->error = remote_error(s, failed_find(ctx, tag));
            sched_abort(s, src);
            return;
        }
    }
}

static bool is_failed(uint32_t ctx, int tag)
{
    return nfailed > 0 && failed_find(ctx, tag) != NULL;
}

void halo_sched_init(void)
{
    halo_pt2pt_coll_hooks(peer_failed, is_failed);
}

void halo_sched_fail_call(halo_comm_t *c, const halo_sched_t *s, int lane, int code)
{
    uint64_t seq = s ? s->seq : halo_sched_next_seq(c, lane);
    notify(c, c->ctx | c->coll_sub, halo_seq_tag(seq), code);
    /* Raise this rank's flags past the call, as if it had run: the other
     * ranks may have run it through shared memory, and their next use of
     * those channels waits for every member to be done with it. */
    if (!c->coll_tag_fixed)
        halo_shm_skip(c, seq);
}

void halo_sched_comm_gone(halo_comm_t *c)
{
    uint32_t id = c->ctx >> HALO_CTX_SHIFT;
    for (int i = 0; i < nfailed;) {
        if (failed[i].ctx >> HALO_CTX_SHIFT == id)
            failed[i] = failed[--nfailed];
        else
            i++;
    }
}

/* ---------------------------------------------------------------- running */

static void msg_done(halo_request_t *r)
{
    halo_sched_t *s = r->cb_arg;
    inflight_remove(s, r);
    int rc = r->status.MPI_ERROR;
    halo_req_free(r);
    if (rc != MPI_SUCCESS)
        sched_fail(s, rc);
    s->pending--;
    if (s->pending == 0)
        sched_advance(s);
}

static void sched_finish(halo_sched_t *s)
{
    running_remove(s);
    s->done = 1;
    if (s->owner) {
        halo_request_t *r = s->owner;
        r->status.MPI_ERROR = s->error;
        halo_req_complete(r);
    }
}

/* A single-copy step: the peer's address from its flag line, then one
 * process_vm_readv or _writev. A node that turns out to refuse it after
 * all (a security module, where halo_tr_cma_node could not tell) fails
 * the collective with a message saying how to avoid it. */
static int run_cma(halo_sched_t *s, const halo_step_t *st)
{
    if (st->count2 == 0)
        return MPI_SUCCESS;
    uint64_t raddr;
    memcpy(&raddr, resolve(s, st, st->a), sizeof raddr);
    raddr += (uint64_t)st->pos;
    struct iovec l = {resolve(s, st, st->b), (size_t)st->count2};
    int world = halo_comm_ptr(s->comm)->world[st->peer];
    int rc = st->kind == HALO_STEP_CMA_WRITE ? halo_tr_write(world, &l, 1, raddr, l.iov_len)
                                             : halo_tr_read(world, &l, 1, raddr, l.iov_len);
    if (rc == 0)
        return MPI_SUCCESS;
    bool w = st->kind == HALO_STEP_CMA_WRITE;
    return halo_err(MPI_ERR_OTHER,
                    ": the kernel refused a single-copy %s of rank %d's memory (process_vm_%s); "
                    "HALO_CMA=0 makes the collectives do without",
                    w ? "write" : "read", st->peer, w ? "writev" : "readv");
}

static int run_local(halo_sched_t *s, const halo_step_t *st)
{
    if (st->flat) {
        char *a = (char *)resolve(s, st, st->a) + st->off_a, *b = (char *)resolve(s, st, st->b) + st->off_b;
        if (st->kind == HALO_STEP_REDUCE)
            halo_op_kernel_run(st->kernel, a, b, (size_t)st->flat);
        else if (st->kind == HALO_STEP_UNPACK)
            memcpy(a, b, (size_t)st->flat);
        else
            memcpy(b, a, (size_t)st->flat);
        return MPI_SUCCESS;
    }
    switch (st->kind) {
    case HALO_STEP_COPY:
        halo_dt_copy(resolve(s, st, st->a), st->count, halo_dtype_ptr(st->type), resolve(s, st, st->b),
                     st->count2, halo_dtype_ptr(st->type2));
        return MPI_SUCCESS;
    case HALO_STEP_REDUCE:
        return halo_op_apply(st->op, halo_dtype_ptr(st->type), resolve(s, st, st->a), resolve(s, st, st->b),
                             st->count);
    case HALO_STEP_PACK:
        halo_dt_pack(resolve(s, st, st->a), st->count, halo_dtype_ptr(st->type), st->pos,
                     resolve(s, st, st->b), st->count2);
        return MPI_SUCCESS;
    case HALO_STEP_UNPACK:
        halo_dt_unpack(resolve(s, st, st->a), st->count, halo_dtype_ptr(st->type), st->pos,
                       resolve(s, st, st->b), st->count2);
        return MPI_SUCCESS;
    case HALO_STEP_SHM_SET:
        halo_shm_set_run(s, st);
        return MPI_SUCCESS;
    case HALO_STEP_CMA_READ:
    case HALO_STEP_CMA_WRITE:
        return run_cma(s, st);
    default:
        return MPI_SUCCESS;
    }
}

/* Posts the messages of the next round, or runs local steps and moves on,
 * until a round has messages in flight or the schedule is done. */
static void sched_advance(halo_sched_t *s)
{
    if (s->in_advance)
        return;
    s->in_advance = 1;
    while (s->pending == 0 && !s->done) {
        if (s->aborted) {
            /* Completing the owner may free the schedule (a request the
             * user freed while pending): touch nothing after. */
            s->in_advance = 0;
            sched_finish(s);
            return;
        }
        /* Local steps of the round that just finished its messages. */
        int i = s->first_step;
        if (s->cur_round >= 0) {
            for (; i < s->nsteps && s->steps[i].round == s->cur_round; i++) {
                int rc = run_local(s, &s->steps[i]);
                if (rc != MPI_SUCCESS) {
                    sched_fail(s, rc);
                    break;
                }
            }
        }
        if (s->aborted)
            continue;
        s->first_step = i;
        s->cur_round++;
        if (s->cur_round >= s->nrounds) {
            s->in_advance = 0;
            sched_finish(s);
            return;
        }
        /* Post the messages of the new round. One count is held until all
         * are posted (a receive can complete while we post), and one while
         * flags are awaited (the shared-memory hook checks them and drops
         * it). */
        bool flags = false;
        if (s->uses_shm) {
            int rank = -1, r = halo_shm_round_ready(s, &rank);
            if (r < 0) {
                flag_failed(s, rank);
                continue;
            }
            flags = r == 0;
        }
        s->pending = 1 + (flags ? 1 : 0);
        if (flags) {
            s->shm_waiting = 1;
            halo_shm_watch(s);
        }
        halo_comm_t *comm = halo_comm_ptr(s->comm);
        for (int j = s->first_step; j < s->nsteps && s->steps[j].round == s->cur_round && !s->aborted; j++) {
            halo_step_t *st = &s->steps[j];
            halo_request_t *r;
            int rc;
            if (st->kind == HALO_STEP_SEND)
                rc = halo_isend(resolve(s, st, st->a), st->count, halo_dtype_ptr(st->type), st->peer,
                                s->tag, comm, s->ctx, st->rdv ? HALO_MODE_RDV : HALO_MODE_STANDARD, &r);
            else if (st->kind == HALO_STEP_RECV)
                rc = (st->consumed ? halo_irecv_consumed : halo_irecv)(resolve(s, st, st->a), st->count,
                                                                       halo_dtype_ptr(st->type), st->peer,
                                                                       s->tag, comm, s->ctx, &r);
            else
                continue;
            if (rc != MPI_SUCCESS && !halo_req_done(r)) {
                /* Refused before it was posted (no memory to pack it):
                 * nobody else knows the request. */
                halo_req_free(r);
                sched_fail(s, rc);
                continue;
            }
            s->pending++;
            r->internal = 1;
            r->cb_arg = s;
            if (halo_req_done(r)) {
                msg_done(r);
            } else {
                inflight_add(s, r);
                r->done_cb = msg_done;
            }
        }
        s->pending--;
    }
    s->in_advance = 0;
}

/* A member of the node group raised its flag to ABORT for this collective:
 * it failed, and its message saying so may not be here yet. */
static void flag_failed(halo_sched_t *s, int rank)
{
    if (s->error == MPI_SUCCESS) {
        const failed_t *f = failed_find(s->ctx, s->tag);
        failed_t g = {s->ctx, s->tag, rank, MPI_ERR_OTHER};
        s->error = remote_error(s, f ? f : &g);
    }
    sched_abort(s, rank);
}

void halo_sched_flags_ready(halo_sched_t *s, int failed_rank)
{
    s->shm_waiting = 0;
    if (failed_rank >= 0) {
        s->pending--;
        flag_failed(s, failed_rank);
        return;
    }
    s->pending--;
    if (s->pending == 0)
        sched_advance(s);
}

/* Order of steps when running: by round, a round's flag waits first (they
 * are all checked before anything of the round runs), then in the order
 * they were added. */
static int step_cmp(const void *x, const void *y)
{
    const halo_step_t *a = x, *b = y;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    if (halo_step_is_wait(a) != halo_step_is_wait(b))
        return halo_step_is_wait(a) ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* One run of bytes on both sides of a copy step: its length, with the
 * runs' offsets from the steps' addresses; for a reduction, its op's loop
 * and the elements it runs over; 0 when not. */
static void flatten(halo_step_t *st)
{
    st->flat = 0;
    st->off_a = st->off_b = 0;
    if (st->kind == HALO_STEP_REDUCE) {
        size_t n;
        st->kernel = halo_op_kernel(st->op, halo_dtype_ptr(st->type), st->count, &n);
        if (st->kernel)
            st->flat = (int64_t)n;
    } else if (st->kind == HALO_STEP_COPY) {
        /* as many bytes as the smaller side holds (halo_dt_copy) */
        const halo_dtype_t *t = halo_dtype_ptr(st->type), *t2 = halo_dtype_ptr(st->type2);
        MPI_Count n = st->count * t->size, n2 = st->count2 * t2->size, off, off2;
        n = n < n2 ? n : n2;
        if (halo_dt_flat_range(t, st->count, 0, n, &off) == n &&
            halo_dt_flat_range(t2, st->count2, 0, n, &off2) == n) {
            st->flat = n;
            st->off_a = off;
            st->off_b = off2;
        }
    } else if (st->kind == HALO_STEP_PACK || st->kind == HALO_STEP_UNPACK) {
        MPI_Count off;
        st->flat = halo_dt_flat_range(halo_dtype_ptr(st->type), st->count, st->pos, st->count2, &off);
        st->off_a = st->flat ? off : 0;
    }
}

/* Before the first run: steps in running order (algorithms may add them
 * out of round order), copies made plain where they can be. */
static void sched_sort(halo_sched_t *s)
{
    if (s->sorted)
        return;
    s->sorted = 1;
    for (int j = 0; j < s->nsteps; j++) {
        s->steps[j].seq = j;
        flatten(&s->steps[j]);
    }
    int i = 1;
    while (i < s->nsteps && step_cmp(&s->steps[i - 1], &s->steps[i]) <= 0)
        i++;
    if (i < s->nsteps)
        qsort(s->steps, (size_t)s->nsteps, sizeof(halo_step_t), step_cmp);
}

static bool sched_is_done(void *arg)
{
    return ((halo_sched_t *)arg)->done != 0;
}

/* A schedule whose collective is already known to have failed (here or on
 * another rank) stops at its start with that error; returns whether it did. */
static bool failed_before(halo_sched_t *s)
{
    const failed_t *f = nfailed ? failed_find(s->ctx, s->tag) : NULL;
    if (!f)
        return false;
    s->error = remote_error(s, f);
    sched_abort(s, f->src);
    return true;
}

/* Starts a schedule: epochs, the list of running ones, a failure already
 * known. */
static void sched_begin(halo_sched_t *s)
{
    sched_sort(s);
    if (s->uses_shm)
        halo_shm_begin(s);
    running_add(s);
    if (failed_before(s))
        return;
    sched_advance(s);
}

typedef struct direct_wait {
    halo_sched_t *s;
    int ready, rank;
} direct_wait_t;

static bool direct_round_ready(void *arg)
{
    direct_wait_t *w = arg;
    w->ready = halo_shm_round_ready(w->s, &w->rank);
    return w->ready != 0;
}

/* A blocking schedule with no messages (shared-memory steps and local
 * ones) runs here, round after round, without the engine's bookkeeping:
 * no request completions to wait for, so nothing else needs to find it
 * (a member that fails raises its flags, which the waits see). About a
 * third of a small shared-memory collective's time was that bookkeeping. */
static void sched_run_direct(halo_sched_t *s)
{
    sched_sort(s);
    if (s->uses_shm)
        halo_shm_begin(s);
    if (failed_before(s))
        return;
    int i = 0;
    for (int round = 0; round < s->nrounds; round++) {
        s->cur_round = round;
        s->first_step = i;
        if (s->uses_shm) {
            direct_wait_t w = {s, 0, -1};
            if (!direct_round_ready(&w))
                halo_progress_wait_paced(direct_round_ready, &w);
            if (w.ready < 0) {
                flag_failed(s, w.rank);
                return;
            }
        }
        while (i < s->nsteps && s->steps[i].round == round && halo_step_is_wait(&s->steps[i]))
            i++;   /* they hold */
        for (; i < s->nsteps && s->steps[i].round == round; i++) {
            int rc = run_local(s, &s->steps[i]);
            if (rc != MPI_SUCCESS) {
                sched_fail(s, rc);
                return;
            }
        }
    }
    s->done = 1;
    halo_shm_prefetch_next(s);
}

int halo_sched_run_keep(halo_sched_t *s)
{
    if (s->nmsgs == 0)
        sched_run_direct(s);
    else
        sched_begin(s);
    if (!s->done)
        halo_progress_wait_paced(sched_is_done, s);
    return s->error;
}

int halo_sched_run(halo_sched_t *s)
{
    int rc = halo_sched_run_keep(s);
    halo_sched_free(s);
    return rc;
}

int halo_sched_rerun(halo_sched_t *s)
{
    halo_sched_reset(s);
    s->seq = halo_sched_next_seq(halo_comm_ptr(s->comm), HALO_LANE_BLOCKING);
    s->tag = halo_seq_tag(s->seq);
    return halo_sched_run_keep(s);
}

/* ---------------------------------------------------------------- compiled runs */

/* A schedule with no messages, kept or persistent, compiled for its
 * reruns: the flag waits with their member ranges and targets worked out,
 * the one-run copies and reductions with their addresses resolved to a
 * base (the absolute address, the scratch area, the phase's slots or flag
 * lines) plus an offset. A rerun walks this list without the engine's
 * per-round and per-step dispatch, which was most of a small call's
 * instructions. Waits of a round are checked one after the other: flags
 * only grow, so that holds the round exactly when all of them hold
 * together. A blocking rerun waits each out; a nonblocking or persistent
 * start walks the list while they hold at once, and leaves the rest to
 * the engine from the round of the first that does not. */
enum { FOP_WAIT_PREV, FOP_WAIT, FOP_SET, FOP_MEMCPY, FOP_KERNEL, FOP_STEP };

typedef struct fop {
    int16_t kind, phase;
    int16_t wa, wb;          /* memcpy, kernel: HALO_BREF_* of the source a and destination b;
                              * wait: wa, the kind of the lines to prefetch (below) */
    int32_t lo, hi, skip;    /* waits: members [lo, hi), but skip (-1: none) */
    int32_t arg;             /* wait: the flag step; kernel: the op's loop; set, step: the step's index */
    int32_t rfirst;          /* the index of the first step of the op's round */
    int64_t a, b;            /* offsets from the bases of wa and wb; wait: a, where the lines start */
    size_t n;                /* bytes (memcpy) or elements (kernel); wait: bytes to prefetch (0: none) */
} fop_t;

/* A flag wait followed by a copy or a reduction out of a slot of at most
 * this many bytes loads the slot's lines before its first look at the flag
 * and while it polls it. The member that raises the flag writes the slot
 * first, so the reader would otherwise take the flag's line and then, one
 * trip later, the data's: asked for together they cross at once (2 ranks,
 * 13 interleaved rounds: Bcast and Scatter of 64-128 bytes 0.85-0.87 of
 * the time without, Gather and Reduce 0.91-0.96, 256 bytes 0.95-0.99).
 * Beyond a few lines the loads fight the writer for lines it is still
 * filling (1 KiB Bcast 1.6 times as long when all 16 were asked for at
 * every poll) and the copy's own streaming takes over. Not with more ranks
 * than cores, where the reader's loads met the root's stores for the
 * other members (4 ranks, Scatter of 64-256 bytes 1.08-1.22 times as long). */
#define FOP_PREFETCH_MAX 256

struct halo_sched_prog {
    int32_t nphases;   /* of the steps (1 or 2) */
    int32_t nops;
    fop_t ops[];
};

/* The lines the ops after the wait at index w read first from a slot of
 * its phase, when they are few (FOP_PREFETCH_MAX): recorded in the wait. */
static void fop_wait_prefetch(const halo_sched_t *s, halo_sched_prog_t *p, int w)
{
    fop_t *op = &p->ops[w];
    int i = w + 1;
    while (i < p->nops && (p->ops[i].kind == FOP_WAIT || p->ops[i].kind == FOP_WAIT_PREV))
        i++;
    for (; i < p->nops && (p->ops[i].kind == FOP_MEMCPY || p->ops[i].kind == FOP_KERNEL); i++) {
        const fop_t *q = &p->ops[i];
        if (q->wa != HALO_BREF_SLOT || q->phase != op->phase)
            continue;
        const halo_step_t *st = &s->steps[i];   /* op i is step i */
        size_t bytes = q->kind == FOP_MEMCPY ? q->n : (size_t)(st->count * halo_type_size(st->type));
        if (bytes <= FOP_PREFETCH_MAX) {
            op->wa = HALO_BREF_SLOT;
            op->a = q->a;
            op->n = bytes;
        }
        return;
    }
}

halo_sched_prog_t *halo_sched_compile(halo_sched_t *s)
{
    if (s->nmsgs != 0 || !s->uses_shm || s->shm_phases > 2)
        return NULL;
    sched_sort(s);
    const halo_coll_topo_t *t = halo_coll_topo(halo_comm_ptr(s->comm));
    int nphases = 1;
    for (int j = 0; j < s->nsteps; j++) {
        if (s->steps[j].phase >= 2)
            return NULL;
        if (s->steps[j].phase == 1)
            nphases = 2;
    }
    halo_sched_prog_t *p = halo_malloc(sizeof *p + (size_t)s->nsteps * sizeof(fop_t));
    p->nops = 0;
    p->nphases = nphases;
    int32_t rfirst = 0;
    for (int j = 0; j < s->nsteps; j++) {
        const halo_step_t *st = &s->steps[j];
        if (j == 0 || st->round != s->steps[j - 1].round)
            rfirst = j;
        fop_t *op = &p->ops[p->nops++];
        *op = (fop_t){.phase = (int16_t)st->phase, .skip = -1, .arg = j, .rfirst = rfirst};
        switch (st->kind) {
        case HALO_STEP_SHM_WAIT:
        case HALO_STEP_SHM_WAIT_PREV:
            op->kind = st->kind == HALO_STEP_SHM_WAIT ? FOP_WAIT : FOP_WAIT_PREV;
            op->arg = (int32_t)st->pos;
            int lo, hi;
            bool several = halo_shm_wait_members(st->peer, t->nlocal, &lo, &hi);
            op->lo = lo;
            op->hi = hi;
            if (several && st->kind == HALO_STEP_SHM_WAIT)
                op->skip = t->me;   /* a member does not wait for itself */
            break;
        case HALO_STEP_SHM_SET:
            op->kind = FOP_SET;
            break;
        default:
            op->kind = FOP_STEP;
            if (!st->flat)
                break;
            op->n = (size_t)st->flat;
            if (st->kind == HALO_STEP_REDUCE) {
                op->kind = FOP_KERNEL;
                op->arg = st->kernel;
            } else {
                op->kind = FOP_MEMCPY;
            }
            /* Unpack copies from b to a; the others from a to b. */
            bool back = st->kind == HALO_STEP_UNPACK;
            halo_bref_t src = back ? st->b : st->a, dst = back ? st->a : st->b;
            int64_t src_off = back ? st->off_b : st->off_a, dst_off = back ? st->off_a : st->off_b;
            op->wa = (int16_t)src.scratch;
            op->wb = (int16_t)dst.scratch;
            op->a = bref_offset(src) + src_off;
            op->b = bref_offset(dst) + dst_off;
            break;
        }
    }
    /* Not after this member has raised its flag in the phase: then the
     * others are writing their slots at the same time (Allreduce,
     * Allgather), and loads of their lines take those lines from under
     * their stores (2 ranks, 256-byte Allreduce 1.12 times as long). */
    bool raised[2] = {false, false};
    for (int j = 0; j < p->nops && !halo_progress_oversubscribed(); j++) {
        if (p->ops[j].kind == FOP_SET)
            raised[p->ops[j].phase] = true;
        else if (p->ops[j].kind == FOP_WAIT && !raised[p->ops[j].phase])
            fop_wait_prefetch(s, p, j);
    }
    return p;
}

typedef struct fop_wait {
    const halo_sched_t *s;
    const fop_t *op;
    int ready, origin;
    const char *lines;   /* to prefetch while the flag is not there (op->n bytes) */
} fop_wait_t;

static inline void fop_prefetch(const char *p, size_t n)
{
    for (uintptr_t l = (uintptr_t)p & ~(uintptr_t)(HALO_CACHELINE - 1); l < (uintptr_t)p + n; l += HALO_CACHELINE)
        __builtin_prefetch((const void *)l, 0, 3);
}

static bool fop_wait_ready(void *arg)
{
    fop_wait_t *w = arg;
    const fop_t *op = w->op;
    w->ready = halo_shm_wait_holds(w->s, op->phase, op->kind == FOP_WAIT_PREV, op->arg, op->lo, op->hi,
                                   op->skip, &w->origin);
    if (!w->ready && w->lines)
        fop_prefetch(w->lines, op->n);
    return w->ready != 0;
}

/* Runs s through p from the start (halo_shm_begin done). Patient (a
 * blocking call), every wait is waited out; otherwise the run stops at the
 * first wait that does not hold at once. Returns PROG_DONE when the list
 * ran to its end, PROG_STOPPED when the collective failed (the failure is
 * recorded: flag_failed or sched_fail), or the index of the first step of
 * the round that could not go on. */
enum { PROG_DONE = -1, PROG_STOPPED = -2 };
static inline __attribute__((always_inline)) int prog_run(halo_sched_t *s, const halo_sched_prog_t *p,
                                                          bool patient)
{
    /* Bases by phase and HALO_BREF_* kind (the offsets are from these; a
     * phase's slots and lines are only named by its steps if it has them). */
    uintptr_t base[2][4];
    for (int k = 0; k < p->nphases; k++)
        for (int kind = HALO_BREF_ABS; kind <= HALO_BREF_LINE; kind++)
            base[k][kind] = kind < HALO_BREF_SLOT || k < s->shm_phases ? bref_base(s, k, kind) : 0;
    for (const fop_t *op = p->ops, *end = p->ops + p->nops; op < end; op++) {
        switch (op->kind) {
        case FOP_WAIT_PREV:
        case FOP_WAIT: {
            fop_wait_t w = {s, op, 0, -1, NULL};
            if (op->kind == FOP_WAIT && op->n) {
                /* asked for before the first look at the flag too: when the
                 * writer is ahead, both lines are then already on their way */
                w.lines = (const char *)(base[op->phase][op->wa] + (uintptr_t)op->a);
                fop_prefetch(w.lines, op->n);
            }
            if (!fop_wait_ready(&w)) {
                if (!patient)
                    return op->rfirst;
                halo_progress_wait_paced(fop_wait_ready, &w);
            }
            if (w.ready < 0) {
                if (!patient)
                    return op->rfirst;   /* the engine finds it again */
                flag_failed(s, w.origin);
                return PROG_STOPPED;
            }
            break;
        }
        case FOP_SET:
            halo_shm_set_run(s, &s->steps[op->arg]);
            break;
        case FOP_MEMCPY:
            halo_copy((void *)(base[op->phase][op->wb] + (uintptr_t)op->b),
                      (const void *)(base[op->phase][op->wa] + (uintptr_t)op->a), op->n);
            break;
        case FOP_KERNEL:
            halo_op_kernel_run(op->arg, (const void *)(base[op->phase][op->wa] + (uintptr_t)op->a),
                               (void *)(base[op->phase][op->wb] + (uintptr_t)op->b), op->n);
            break;
        default: {
            int rc = run_local(s, &s->steps[op->arg]);
            if (rc != MPI_SUCCESS) {
                sched_fail(s, rc);
                return PROG_STOPPED;
            }
        }
        }
    }
    return PROG_DONE;
}

int halo_sched_rerun_prog(halo_sched_t *s, const halo_sched_prog_t *p)
{
    if (nfailed)   /* a failure is known somewhere: the general path checks for this one */
        return halo_sched_rerun(s);
    halo_sched_reset(s);
    s->seq = halo_sched_next_seq(halo_comm_ptr(s->comm), HALO_LANE_BLOCKING);
    s->tag = halo_seq_tag(s->seq);
    halo_shm_begin(s);
    if (prog_run(s, p, true) == PROG_DONE) {
        s->done = 1;
        halo_shm_prefetch_next(s);
        return MPI_SUCCESS;
    }
    if (!s->done)
        halo_progress_wait_paced(sched_is_done, s);
    return s->error;
}

static long long prog_starts, prog_finished;   /* halo_sched_prog_counts */

void halo_sched_prog_counts(long long *starts, long long *finished)
{
    *starts = prog_starts;
    *finished = prog_finished;
}

void halo_sched_start_prog(halo_sched_t *s, struct halo_request *owner, const halo_sched_prog_t *p)
{
    s->owner = owner;
    if (nfailed) {   /* as in halo_sched_rerun_prog */
        sched_begin(s);
        return;
    }
    prog_starts++;
    halo_shm_begin(s);
    int at = prog_run(s, p, false);
    if (at == PROG_DONE) {
        prog_finished++;
        sched_finish(s);
        return;
    }
    if (at == PROG_STOPPED)
        return;   /* sched_fail completed the owner */
    /* The engine goes on from round R = steps[at].round, as if round R - 1
     * had just ended: nothing of R has run (a round's waits come first). */
    s->first_step = at;
    s->cur_round = s->steps[at].round - 1;
    running_add(s);
    sched_advance(s);
}

void halo_sched_start(halo_sched_t *s, struct halo_request *owner)
{
    s->owner = owner;
    sched_begin(s);
}

void halo_sched_reset(halo_sched_t *s)
{
    s->cur_round = -1;
    s->first_step = 0;
    s->pending = 0;
    s->done = 0;
    s->error = MPI_SUCCESS;
    s->in_advance = 0;
    s->shm_waiting = 0;
    s->aborted = 0;
    s->ninflight = 0;
    s->owner = NULL;
}

void halo_sched_free(halo_sched_t *s)
{
    if (!s)
        return;
    if (s->shm_waiting)
        halo_shm_unwatch(s);
    halo_shm_release(s);
    for (int i = 0; i < s->nowned; i++)
        free(s->owned[i]);
    free(s->owned);
    free(s->inflight);
    sched_cache_put(s);
}

void halo_sched_cache_drain(void)
{
    while (sched_cached > 0)
        free(sched_cache[--sched_cached]);
}
