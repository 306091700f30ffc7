/* Allreduce, recursive doubling.
 *
 * With p' the largest power of two <= p and r = p - p': the first 2r ranks
 * pair up, each even rank hands its vector to the odd one above it and
 * sits out. The p' remaining ranks exchange whole vectors with partners at
 * distance 1, 2, 4, ... and reduce after each exchange; then the odd ranks
 * return the result to their even partners.
 * Cost: (lg p' + 2 [if p is not a power of two]) * (alpha + n * beta + n * gamma).
 * Any p. Non-commutative operations: the lower block of ranks always goes
 * on the left of the operation, and the folding keeps rank order, so the
 * result is the reduction in rank order. In place or not. Latency-optimal:
 * the choice for small vectors. */
#include "coll/algos.h"

int halo_allreduce_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    int round = 0;
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, round++, halo_addr(a->sbuf), count, type, halo_addr(a->rbuf), count, type);
    if (p == 1 || count == 0)
        return MPI_SUCCESS;
    /* Partner data lands in scratch laid out like the user's buffer. */
    halo_bref_t tbuf = halo_sched_span(s_p, count, type);
    halo_bref_t rb = halo_addr(a->rbuf);

    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2;
    int newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            halo_sched_send(s_p, round++, rb, count, type, me + 1);
            newrank = -1;
        } else {
            halo_sched_recv(s_p, round, tbuf, count, type, me - 1);
            halo_sched_reduce(s_p, round++, tbuf, rb, count, type, op);
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            halo_sched_send(s_p, round, rb, count, type, dst);
            halo_sched_recv(s_p, round, tbuf, count, type, dst);
            if (dst < me || halo_op_commutes(op)) {
                halo_sched_reduce(s_p, round++, tbuf, rb, count, type, op);
            } else {
                /* rb = rb op tbuf: reduce into the scratch, then copy back. */
                halo_sched_reduce(s_p, round, rb, tbuf, count, type, op);
                halo_sched_copy(s_p, round++, tbuf, count, type, rb, count, type);
            }
        }
    }
    if (me < 2 * rem) {
        if (me % 2 == 1)
            halo_sched_send(s_p, round, rb, count, type, me - 1);
        else
            halo_sched_recv(s_p, round, rb, count, type, me + 1);
    }
    return MPI_SUCCESS;
}
