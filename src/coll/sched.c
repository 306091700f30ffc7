/* The schedule engine (format in sched.h). Completions of a round's
 * messages arrive through request callbacks; the last one advances the
 * schedule, which may post the next round from inside a transport's poll. */
#include "coll/sched.h"

#include "core/errors.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"

#define SCHED_INITIAL_STEPS 16

int32_t halo_sched_next_tag(halo_comm_t *comm)
{
    int32_t tag = (int32_t)(comm->coll_seq & 0x7fffffff);
    if (!comm->coll_tag_fixed)
        comm->coll_seq++;
    return tag;
}

halo_sched_t *halo_sched_new_tagged(halo_comm_t *comm, int32_t tag)
{
    size_t bytes = sizeof(halo_sched_t) + SCHED_INITIAL_STEPS * sizeof(halo_step_t);
    halo_sched_t *s = halo_calloc(1, bytes);
    s->bytes = bytes;
    s->capsteps = SCHED_INITIAL_STEPS;
    s->cur_round = -1;
    s->comm = halo_comm_handle(comm);
    s->ctx = comm->ctx | comm->coll_sub;
    s->tag = tag;
    s->scratch_off = bytes;
    return s;
}

halo_sched_t *halo_sched_new(halo_comm_t *comm)
{
    return halo_sched_new_tagged(comm, halo_sched_next_tag(comm));
}

/* Grows the allocation, keeping steps then scratch; scratch offsets are
 * relative to the scratch area's start, so they survive the move. */
static void sched_grow(halo_sched_t **s_p, int need_steps, uint64_t need_scratch)
{
    halo_sched_t *s = *s_p;
    int cap = s->capsteps;
    while (cap < need_steps)
        cap *= 2;
    uint64_t scratch = s->scratch_bytes > need_scratch ? s->scratch_bytes : need_scratch;
    uint64_t off = (sizeof(halo_sched_t) + (uint64_t)cap * sizeof(halo_step_t) + 63) & ~63ull;
    uint64_t bytes = off + scratch;
    halo_sched_t *n = halo_malloc(bytes + 64);
    memcpy(n, s, sizeof(halo_sched_t) + (size_t)s->nsteps * sizeof(halo_step_t));
    if (s->scratch_bytes)
        memcpy((char *)n + off, (char *)s + s->scratch_off, s->scratch_bytes);
    n->capsteps = cap;
    n->scratch_off = off;
    n->scratch_bytes = scratch;
    n->bytes = bytes;
    free(s);
    *s_p = n;
}

int64_t halo_sched_scratch(halo_sched_t **s_p, uint64_t bytes)
{
    halo_sched_t *s = *s_p;
    uint64_t at = (s->scratch_bytes + 63) & ~63ull;
    sched_grow(s_p, s->nsteps, at + bytes);
    return (int64_t)at;
}

static halo_step_t *add_step(halo_sched_t **s_p, int kind, int round)
{
    if ((*s_p)->nsteps == (*s_p)->capsteps)
        sched_grow(s_p, (*s_p)->nsteps + 1, (*s_p)->scratch_bytes);
    halo_sched_t *s = *s_p;
    halo_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->round = round;
    if (round + 1 > s->nrounds)
        s->nrounds = round + 1;
    return st;
}

void halo_sched_send(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer)
{
    halo_step_t *st = add_step(s_p, HALO_STEP_SEND, round);
    st->a = buf;
    st->count = count;
    st->type = type;
    st->peer = peer;
}

void halo_sched_recv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer)
{
    halo_step_t *st = add_step(s_p, HALO_STEP_RECV, round);
    st->a = buf;
    st->count = count;
    st->type = type;
    st->peer = peer;
}

void halo_sched_copy(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count scount,
                     MPI_Datatype stype, halo_bref_t dst, MPI_Count dcount, MPI_Datatype dtype)
{
    halo_step_t *st = add_step(s_p, HALO_STEP_COPY, round);
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
    halo_step_t *st = add_step(s_p, HALO_STEP_REDUCE, round);
    st->a = in;
    st->b = inout;
    st->count = count;
    st->type = type;
    st->op = op;
}

static inline void *resolve(halo_sched_t *s, halo_bref_t b)
{
    if (b.scratch)
        return (char *)s + s->scratch_off + b.at;
    return (void *)(intptr_t)b.at;
}

static void sched_advance(halo_sched_t *s);

static void msg_done(halo_request_t *r)
{
    halo_sched_t *s = r->cb_arg;
    if (r->status.MPI_ERROR != MPI_SUCCESS && s->error == MPI_SUCCESS)
        s->error = r->status.MPI_ERROR;
    halo_req_free(r);
    s->pending--;
    if (s->pending == 0)
        sched_advance(s);
}

static void sched_finish(halo_sched_t *s)
{
    s->done = 1;
    if (s->owner) {
        halo_request_t *r = s->owner;
        r->status.MPI_ERROR = s->error;
        halo_req_complete(r);
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
        /* Local steps of the round that just finished its messages. */
        int i = s->first_step;
        if (s->cur_round >= 0) {
            for (; i < s->nsteps && s->steps[i].round == s->cur_round; i++) {
                halo_step_t *st = &s->steps[i];
                int rc = MPI_SUCCESS;
                if (st->kind == HALO_STEP_COPY) {
                    halo_dt_copy(resolve(s, st->a), st->count, halo_dtype_ptr(st->type),
                                 resolve(s, st->b), st->count2, halo_dtype_ptr(st->type2));
                } else if (st->kind == HALO_STEP_REDUCE) {
                    rc = halo_op_apply(st->op, halo_dtype_ptr(st->type), resolve(s, st->a),
                                       resolve(s, st->b), st->count);
                }
                if (rc != MPI_SUCCESS && s->error == MPI_SUCCESS)
                    s->error = rc;
            }
        }
        s->first_step = i;
        s->cur_round++;
        if (s->cur_round >= s->nrounds) {
            /* Completing the owner may free the schedule (a request the
             * user freed while pending): touch nothing after. */
            s->in_advance = 0;
            sched_finish(s);
            return;
        }
        /* Post the messages of the new round. Count them all before posting
         * any, since a receive can complete while we post. */
        int n = 0;
        for (int j = s->first_step; j < s->nsteps && s->steps[j].round == s->cur_round; j++)
            if (s->steps[j].kind == HALO_STEP_SEND || s->steps[j].kind == HALO_STEP_RECV)
                n++;
        s->pending = n + 1;   /* +1 held until all are posted */
        halo_comm_t *comm = halo_comm_ptr(s->comm);
        for (int j = s->first_step; j < s->nsteps && s->steps[j].round == s->cur_round; j++) {
            halo_step_t *st = &s->steps[j];
            halo_request_t *r;
            int rc;
            if (st->kind == HALO_STEP_SEND)
                rc = halo_isend(resolve(s, st->a), st->count, halo_dtype_ptr(st->type), st->peer,
                                s->tag, comm, s->ctx, HALO_MODE_STANDARD, &r);
            else if (st->kind == HALO_STEP_RECV)
                rc = halo_irecv(resolve(s, st->a), st->count, halo_dtype_ptr(st->type), st->peer,
                                s->tag, comm, s->ctx, &r);
            else
                continue;
            if (rc != MPI_SUCCESS && !halo_req_done(r)) {
                /* Refused before it was posted (no memory to pack it):
                 * nobody else knows the request. */
                if (s->error == MPI_SUCCESS)
                    s->error = rc;
                halo_req_free(r);
                s->pending--;
                continue;
            }
            r->internal = 1;
            r->cb_arg = s;
            if (halo_req_done(r))
                msg_done(r);
            else
                r->done_cb = msg_done;
        }
        s->pending--;
    }
    s->in_advance = 0;
}

static int step_cmp(const void *x, const void *y)
{
    const halo_step_t *a = x, *b = y;
    if (a->round != b->round)
        return a->round < b->round ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* Algorithms may add steps out of round order; the engine wants each
 * round's steps together, in the order they were added. */
static void sched_sort(halo_sched_t *s)
{
    if (s->sorted)
        return;
    s->sorted = 1;
    int i = 1;
    while (i < s->nsteps && s->steps[i - 1].round <= s->steps[i].round)
        i++;
    if (i >= s->nsteps)
        return;
    for (int j = 0; j < s->nsteps; j++)
        s->steps[j].seq = j;
    qsort(s->steps, (size_t)s->nsteps, sizeof(halo_step_t), step_cmp);
}

static bool sched_is_done(void *arg)
{
    return ((halo_sched_t *)arg)->done != 0;
}

int halo_sched_run(halo_sched_t *s)
{
    sched_sort(s);
    sched_advance(s);
    if (!s->done)
        halo_progress_wait(sched_is_done, s);
    int rc = s->error;
    halo_sched_free(s);
    return rc;
}

void halo_sched_start(halo_sched_t *s, struct halo_request *owner)
{
    s->owner = owner;
    sched_sort(s);
    sched_advance(s);
}

void halo_sched_reset(halo_sched_t *s)
{
    s->cur_round = -1;
    s->first_step = 0;
    s->pending = 0;
    s->done = 0;
    s->error = MPI_SUCCESS;
    s->in_advance = 0;
    s->owner = NULL;
}

void halo_sched_free(halo_sched_t *s)
{
    free(s);
}
