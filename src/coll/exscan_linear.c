/* Exscan, linear (a chain).
 *
 * Rank 1's result is rank 0's input; rank i > 1 receives its result from
 * rank i-1 and sends rank i+1 that result with its own input on the right.
 * Rank 0's receive buffer is left alone (the standard leaves it undefined).
 * Cost: (p - 1) * (alpha + n * beta + n * gamma) along the chain. Any p,
 * any operation; in place or not. The choice for two or three ranks. */
#include "coll/algos.h"

int halo_exscan_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    halo_bref_t rb = halo_addr(a->rbuf);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    if (me == 0) {
        if (p > 1)
            halo_sched_send(s_p, 0, halo_addr(in), count, type, 1);
        return MPI_SUCCESS;
    }
    if (me == p - 1) {
        halo_sched_recv(s_p, 0, rb, count, type, me - 1);
        return MPI_SUCCESS;
    }
    /* next = result op input: the input is copied first (round 0 has no
     * messages), so the partial result can land straight in rb, which
     * may hold the input. */
    halo_bref_t next = halo_sched_span(s_p, count, type);
    halo_sched_copy(s_p, 0, halo_addr(in), count, type, next, count, type);
    halo_sched_recv(s_p, 1, rb, count, type, me - 1);
    halo_sched_reduce(s_p, 1, rb, next, count, type, a->op);
    halo_sched_send(s_p, 2, next, count, type, me + 1);
    return MPI_SUCCESS;
}
