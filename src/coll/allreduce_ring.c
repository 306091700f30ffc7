/* Allreduce, ring: reduce-scatter around a ring, then allgather around it.
 *
 * The vector is cut in p blocks. In step k of the first phase every rank
 * sends block (me - k) to its right neighbour and reduces the block
 * (me - k - 1) coming from its left into its own copy; after p - 1 steps
 * rank me holds block (me + 1) fully reduced. The second phase circulates
 * the reduced blocks the same way, straight into the receive buffer.
 * Cost: 2 (p-1) * alpha + 2 n (p-1)/p * beta + n (p-1)/p * gamma. Any p;
 * commutative operations only (each block is reduced in ring order, which
 * starts at a different rank for each block). In place or not.
 * Bandwidth-optimal with one message in flight per link: the choice for
 * large vectors. */
#include "coll/algos.h"

int halo_allreduce_ring(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Aint ext = halo_type_extent(type);
    halo_bref_t rb = halo_addr(a->rbuf);
    bool in_place = a->sbuf == MPI_IN_PLACE;
    if (p == 1 || count == 0) {
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, rb, count, type);
        return MPI_SUCCESS;
    }
    /* Not in place, each block arriving in the first phase lands in the
     * receive buffer and our block is reduced into it from the send
     * buffer; our own block is sent from there and comes back reduced in
     * the second phase, so nothing is copied first. In place, blocks
     * arrive in one block of scratch, laid out like the largest one. */
    halo_bref_t sb0 = in_place ? rb : halo_addr(a->sbuf);
    halo_bref_t tmp = {0};
    if (in_place)
        tmp = halo_sched_span(s_p, halo_block_start(count, p, 1), type);
    int right = (me + 1) % p, left = (me - 1 + p) % p;
    int round = 1;
    for (int k = 0; k < p - 1; k++, round++) {
        int sb = (me - k + p) % p, rbk = (me - k - 1 + p) % p;
        MPI_Count ss = halo_block_start(count, p, sb), sn = halo_block_start(count, p, sb + 1) - ss;
        MPI_Count rs = halo_block_start(count, p, rbk), rn = halo_block_start(count, p, rbk + 1) - rs;
        halo_bref_t dst = halo_bref_add(rb, (int64_t)(rs * ext));
        halo_sched_send(s_p, round, halo_bref_add(k == 0 ? sb0 : rb, (int64_t)(ss * ext)), sn, type, right);
        if (in_place) {
            halo_sched_recv(s_p, round, tmp, rn, type, left);
            halo_sched_reduce(s_p, round, tmp, dst, rn, type, a->op);
        } else {
            halo_sched_recv(s_p, round, dst, rn, type, left);
            halo_sched_reduce(s_p, round, halo_bref_add(sb0, (int64_t)(rs * ext)), dst, rn, type, a->op);
        }
    }
    for (int k = 0; k < p - 1; k++, round++) {
        int sb = (me + 1 - k + p) % p, rbk = (me - k + p) % p;
        MPI_Count ss = halo_block_start(count, p, sb), sn = halo_block_start(count, p, sb + 1) - ss;
        MPI_Count rs = halo_block_start(count, p, rbk), rn = halo_block_start(count, p, rbk + 1) - rs;
        halo_sched_send(s_p, round, halo_bref_add(rb, (int64_t)(ss * ext)), sn, type, right);
        halo_sched_recv(s_p, round, halo_bref_add(rb, (int64_t)(rs * ext)), rn, type, left);
    }
    return MPI_SUCCESS;
}
