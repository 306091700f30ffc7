/* Reduce_scatter and Reduce_scatter_block, pairwise exchange.
 *
 * p - 1 steps; in step k every rank sends rank me + k the part of its
 * vector that belongs to it and receives from rank me - k that rank's
 * contribution to its own block. Contributions arrive from me - 1, me - 2,
 * ..., 0, then p - 1, p - 2, ..., me + 1: each of the two runs is
 * accumulated with the new (lower) contribution on the left, and the two
 * are combined at the end, so the result is in rank order.
 * A commutative operation, not in place, accumulates straight in the
 * receive buffer instead.
 * Cost: (p - 1) * alpha + n (p-1)/p * (beta + gamma). Any p, any operation
 * (non-commutative too), any counts; in place or not. Bandwidth-friendly
 * (one message each way per step): the choice for large vectors and for
 * non-commutative operations. */
#include "coll/algos.h"

int halo_reduce_scatter_pairwise(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    MPI_Aint ext = halo_type_extent(type);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t ib = halo_addr(in), rb = halo_addr(a->rbuf);
    MPI_Count *disp = halo_malloc((size_t)(p + 1) * sizeof(MPI_Count));
    disp[0] = 0;
    for (int i = 0; i < p; i++)
        disp[i + 1] = disp[i] + halo_rs_count(a, i);
    MPI_Count mine = halo_rs_count(a, me);
    if (p == 1) {
        if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, ib, mine, type, rb, mine, type);
        free(disp);
        return MPI_SUCCESS;
    }
    halo_bref_t own = halo_bref_add(ib, (int64_t)(disp[me] * ext));
    /* A commutative operation, not in place, accumulates in rb: the first
     * contribution lands there and ours and the later ones are reduced into
     * it. Otherwise lo holds ranks src .. me and hi ranks src .. p-1 once
     * the sources wrap. */
    bool direct = a->sbuf != MPI_IN_PLACE && halo_op_commutes(op);
    halo_bref_t lo = {0}, hi = {0}, tmp = {0};
    if (!direct) {
        lo = halo_sched_span(s_p, mine, type);
        hi = halo_sched_span(s_p, mine, type);
        halo_sched_copy(s_p, 0, own, mine, type, lo, mine, type);
    }
    if (!direct || p > 2)
        tmp = halo_sched_span(s_p, mine, type);
    bool have_hi = false;
    int round = 1;
    for (int k = 1; k < p; k++, round++) {
        int dst = (me + k) % p, src = (me - k + p) % p;
        halo_sched_send(s_p, round, halo_bref_add(ib, (int64_t)(disp[dst] * ext)), halo_rs_count(a, dst),
                        type, dst);
        if (direct) {
            halo_sched_recv(s_p, round, k == 1 ? rb : tmp, mine, type, src);
            halo_sched_reduce(s_p, round, k == 1 ? own : tmp, rb, mine, type, op);
        } else if (src < me) {
            halo_sched_recv(s_p, round, tmp, mine, type, src);
            halo_sched_reduce(s_p, round, tmp, lo, mine, type, op);
        } else if (!have_hi) {
            halo_sched_recv(s_p, round, hi, mine, type, src);
            have_hi = true;
        } else {
            halo_sched_recv(s_p, round, tmp, mine, type, src);
            halo_sched_reduce(s_p, round, tmp, hi, mine, type, op);
        }
    }
    if (have_hi) {
        halo_sched_reduce(s_p, round, lo, hi, mine, type, op);
        halo_sched_copy(s_p, round, hi, mine, type, rb, mine, type);
    } else if (!direct) {
        halo_sched_copy(s_p, round, lo, mine, type, rb, mine, type);
    }
    free(disp);
    return MPI_SUCCESS;
}
