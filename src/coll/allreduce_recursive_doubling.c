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
 * result is the reduction in rank order. In place or not (in place, a
 * commutative reduction whose scratch would exceed HALO_COLL_SCRATCH_MAX is
 * handed to the ring). Latency-optimal: the choice for small vectors. */
#include "coll/algos.h"

int halo_allreduce_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    bool commute = halo_op_commutes(op);
    halo_bref_t rb = halo_addr(a->rbuf);
    /* Our contribution stays in the send buffer until the first reduction
     * (or a copy) puts a partial result in rb. */
    halo_bref_t own = a->sbuf == MPI_IN_PLACE ? rb : halo_addr(a->sbuf);
    bool in_rb = a->sbuf == MPI_IN_PLACE;
    int round = 0;
    if (p == 1 || count == 0) {
        if (!in_rb)
            halo_sched_copy(s_p, round, own, count, type, rb, count, type);
        return MPI_SUCCESS;
    }
    /* In place, the partner's vector needs scratch as large as ours; where
     * that exceeds HALO_COLL_SCRATCH_MAX and the ring can serve (it takes a
     * p-th of it), the ring does. */
    if (in_rb && commute && count * halo_type_extent(type) > halo_coll_scratch_max())
        return halo_allreduce_ring(a, c, s_p);
    halo_bref_t tbuf = {0};
    bool have_tbuf = false;

    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    int rem = p - pof2;
    int newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            halo_sched_send(s_p, round++, own, count, type, me + 1);
            newrank = -1;
        } else {
            if (!in_rb && commute) {
                /* the partner's vector straight into rb, ours reduced in */
                halo_sched_recv(s_p, round, rb, count, type, me - 1);
                halo_sched_reduce(s_p, round++, own, rb, count, type, op);
            } else {
                if (!in_rb)
                    halo_sched_copy(s_p, round++, own, count, type, rb, count, type);
                tbuf = halo_sched_span(s_p, count, type);
                have_tbuf = true;
                halo_sched_recv(s_p, round, tbuf, count, type, me - 1);
                halo_sched_reduce(s_p, round++, tbuf, rb, count, type, op);
            }
            in_rb = true;
            newrank = me / 2;
        }
    } else {
        newrank = me - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int newdst = newrank ^ mask;
            int dst = newdst < rem ? newdst * 2 + 1 : newdst + rem;
            if (!in_rb && (commute || dst > me)) {
                /* first exchange, ours on the left: the partner's vector
                 * lands in rb and ours is reduced into it, no copy first */
                halo_sched_send(s_p, round, own, count, type, dst);
                halo_sched_recv(s_p, round, rb, count, type, dst);
                halo_sched_reduce(s_p, round++, own, rb, count, type, op);
                in_rb = true;
                continue;
            }
            if (!in_rb) {
                halo_sched_copy(s_p, round++, own, count, type, rb, count, type);
                in_rb = true;
            }
            if (!have_tbuf) {
                /* partner data lands in scratch laid out like the user's buffer */
                tbuf = halo_sched_span(s_p, count, type);
                have_tbuf = true;
            }
            halo_sched_send(s_p, round, rb, count, type, dst);
            halo_sched_recv(s_p, round, tbuf, count, type, dst);
            if (dst < me || commute) {
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
