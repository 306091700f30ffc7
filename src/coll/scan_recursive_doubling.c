/* Scan, recursive doubling.
 *
 * Every rank keeps two vectors: its result so far (the reduction of ranks
 * g .. me, g the first rank of its current group) and the partial
 * reduction of its whole group. In step k (distance 2^k) it swaps partials
 * with rank me ^ 2^k: from a lower partner the partial goes on the left of
 * both vectors, from a higher one on the right of the partial only.
 * Cost: ceil(lg p) * (alpha + n * beta + 2 n * gamma). Any p, any
 * operation (the groups are runs of consecutive ranks); in place or not.
 * Latency-optimal: the choice for small and medium vectors. */
#include "coll/algos.h"

int halo_scan_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    bool commute = halo_op_commutes(op);
    halo_bref_t rb = halo_addr(a->rbuf);
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, rb, count, type);
    if (p == 1)
        return MPI_SUCCESS;
    /* Round 0 (local): partial = input. Messages from round 1. */
    halo_bref_t partial = halo_sched_span(s_p, count, type);
    halo_bref_t tmp = halo_sched_span(s_p, count, type);
    halo_sched_copy(s_p, 0, rb, count, type, partial, count, type);
    int round = 1;
    for (int mask = 1; mask < p; mask <<= 1) {
        int peer = me ^ mask;
        if (peer >= p)
            continue;
        halo_sched_send(s_p, round, partial, count, type, peer);
        halo_sched_recv(s_p, round, tmp, count, type, peer);
        if (peer < me) {
            halo_sched_reduce(s_p, round, tmp, partial, count, type, op);
            halo_sched_reduce(s_p, round, tmp, rb, count, type, op);
        } else if (commute) {
            halo_sched_reduce(s_p, round, tmp, partial, count, type, op);
        } else {
            halo_sched_reduce(s_p, round, partial, tmp, count, type, op);
            halo_bref_t t = partial;   /* tmp holds the new partial */
            partial = tmp;
            tmp = t;
        }
        round++;
    }
    return MPI_SUCCESS;
}
