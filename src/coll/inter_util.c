/* Collectives on intercommunicators: the dispatch, and the pieces the
 * builders share (an intracommunicator algorithm run over the local group
 * inside a bridge schedule; the local broadcast and reduction).
 *
 * Each collective is one schedule on the intercommunicator's bridge, with
 * one tag taken from the bridge's sequence number: both groups call the
 * collectives of an intercommunicator in the same order, so the numbers
 * agree on both sides. Phases follow one another in rounds (a local
 * reduction, the leaders' exchange, a local broadcast), so the messages
 * between any two processes are posted in the same order on both sides. */
#include "coll/algos.h"
#include "coll/select.h"
#include "core/errors.h"

void halo_inter_local_phase(halo_coll_build_fn_t *build, const halo_coll_args_t *a, const halo_inter_t *x,
                            halo_sched_t **s_p, int base, int *next_p)
{
    int first = (*s_p)->nsteps;
    build(a, x->local, s_p);
    halo_sched_t *s = *s_p;
    int next = base;
    for (int i = first; i < s->nsteps; i++) {
        halo_step_t *st = &s->steps[i];
        if (st->kind == HALO_STEP_SEND || st->kind == HALO_STEP_RECV)
            st->peer = halo_inter_lr(x, st->peer);
        st->round += base;
        if (st->round + 1 > next)
            next = st->round + 1;
    }
    if (next > s->nrounds)
        s->nrounds = next;
    *next_p = next;
}

int halo_inter_local_bcast(const halo_inter_t *x, halo_sched_t **s_p, int base, void *buf,
                           MPI_Count count, MPI_Datatype type, int *next_p)
{
    halo_coll_args_t b = {.kind = HALO_COLL_BCAST, .rbuf = buf, .count = count, .type = type, .root = 0};
    /* A message-passing algorithm: the schedule runs on the bridge, whose
     * shared-memory region is not the local group's. */
    const halo_coll_algo_t *al = halo_coll_select_flat(&b, x->local);
    if (!al)
        return halo_err(MPI_ERR_INTERN, ": no usable bcast algorithm for the local group");
    halo_inter_local_phase(al->build, &b, x, s_p, base, next_p);
    return MPI_SUCCESS;
}

/* Rank v receives the partial results of v + 1, v + 2, v + 4, ... below
 * its lowest set bit (each the reduction over a run of ranks just above
 * the ones it holds), puts its own on the left, and sends the result to
 * v - lowbit(v): rank order holds for any operation. The first reduction
 * reads the send buffer; two scratch vectors take turns after it. */
void halo_inter_local_reduce(const halo_inter_t *x, halo_sched_t **s_p, const void *sbuf, MPI_Count count,
                             MPI_Datatype type, MPI_Op op, halo_bref_t *res_p, int *next_p)
{
    int p = x->p, v = x->me;
    int low = 1;
    while (low < p && !(v & low))
        low <<= 1;
    int children = 0;
    for (int mask = 1; mask < low && v + mask < p; mask <<= 1)
        children++;
    halo_bref_t acc = halo_addr(sbuf), spare[2];
    if (children > 0)
        spare[0] = halo_sched_span(s_p, count, type);
    if (children > 1)
        spare[1] = halo_sched_span(s_p, count, type);
    int round = 0;
    for (int mask = 1, k = 0; mask < low && v + mask < p; mask <<= 1, round++, k ^= 1) {
        halo_bref_t t = spare[k];
        halo_sched_recv(s_p, round, t, count, type, halo_inter_lr(x, v + mask));
        halo_sched_reduce(s_p, round, acc, t, count, type, op);   /* t = acc op t */
        acc = t;
    }
    if (v != 0)
        halo_sched_send(s_p, round++, acc, count, type, halo_inter_lr(x, v - low));
    *res_p = acc;
    *next_p = round;
}

/* The builder of each collective (Scan and Exscan have none). */
static halo_inter_build_fn_t *const builders[HALO_COLL_NKINDS] = {
    [HALO_COLL_BARRIER] = halo_inter_barrier,
    [HALO_COLL_BCAST] = halo_inter_bcast,
    [HALO_COLL_GATHER] = halo_inter_gather,
    [HALO_COLL_GATHERV] = halo_inter_gather,
    [HALO_COLL_SCATTER] = halo_inter_scatter,
    [HALO_COLL_SCATTERV] = halo_inter_scatter,
    [HALO_COLL_ALLGATHER] = halo_inter_allgather,
    [HALO_COLL_ALLGATHERV] = halo_inter_allgatherv,
    [HALO_COLL_ALLTOALL] = halo_inter_alltoall,
    [HALO_COLL_ALLTOALLV] = halo_inter_alltoall,
    [HALO_COLL_ALLTOALLW] = halo_inter_alltoall,
    [HALO_COLL_REDUCE] = halo_inter_reduce,
    [HALO_COLL_ALLREDUCE] = halo_inter_allreduce,
    [HALO_COLL_REDUCE_SCATTER] = halo_inter_reduce_scatter,
    [HALO_COLL_REDUCE_SCATTER_BLOCK] = halo_inter_reduce_scatter,
};

int halo_inter_build(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    if (a->kind == HALO_COLL_SCAN || a->kind == HALO_COLL_EXSCAN)
        return halo_err(MPI_ERR_COMM, "(comm): MPI_%s is not defined on intercommunicators",
                        a->kind == HALO_COLL_SCAN ? "Scan" : "Exscan");
    if ((unsigned)a->kind >= HALO_COLL_NKINDS || !builders[a->kind])
        return halo_err(MPI_ERR_INTERN, ": unknown collective %d", (int)a->kind);
    halo_inter_t x = {.local = c->local, .p = c->size, .q = c->remote_group->size, .me = c->rank};
    /* The bridge's order (core/intercomm.c): the group whose first member
     * has the lower world rank comes first. */
    bool local_first = halo_proc_gpid(c->group->world[0]) < halo_proc_gpid(c->remote_group->world[0]);
    x.loff = local_first ? 0 : x.q;
    x.roff = local_first ? x.p : 0;
    return builders[a->kind](a, &x, s_p);
}
