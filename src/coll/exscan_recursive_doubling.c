/* Exscan, recursive doubling.
 *
 * As scan_recursive_doubling.c, but the result leaves out the rank's own
 * input: it starts empty and takes the first lower partner's partial as
 * it is, then puts later lower partials on its left. Rank 0 never has a
 * lower partner, and its receive buffer is left alone.
 * Cost: ceil(lg p) * (alpha + n * beta + 2 n * gamma). Any p, any
 * operation; in place or not. The choice for small and medium vectors. */
#include "coll/algos.h"

int halo_exscan_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    bool commute = halo_op_commutes(op);
    halo_bref_t rb = halo_addr(a->rbuf);
    if (p == 1)
        return MPI_SUCCESS;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    /* Round 0 (local): partial = input (rb may hold it and gets written). */
    halo_bref_t partial = halo_sched_span(s_p, count, type);
    halo_bref_t tmp = halo_sched_span(s_p, count, type);
    halo_sched_copy(s_p, 0, halo_addr(in), count, type, partial, count, type);
    bool have = false;
    int round = 1;
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = me ^ mask;
        if (peer >= p)
            continue;
        halo_sched_send(s_p, round, partial, count, type, peer);
        halo_sched_recv(s_p, round, tmp, count, type, peer);
        if (peer < me) {
            if (have)
                halo_sched_reduce(s_p, round, tmp, rb, count, type, op);
            else
                halo_sched_copy(s_p, round, tmp, count, type, rb, count, type);
            have = true;
            halo_sched_reduce(s_p, round, tmp, partial, count, type, op);
        } else if (commute) {
            halo_sched_reduce(s_p, round, tmp, partial, count, type, op);
        } else {
            halo_sched_reduce(s_p, round, partial, tmp, count, type, op);
            halo_bref_t t = partial;
            partial = tmp;
            tmp = t;
        }
        round++;
    }
    return MPI_SUCCESS;
}
