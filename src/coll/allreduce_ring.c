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
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, rb, count, type);
    if (p == 1 || count == 0)
        return MPI_SUCCESS;
    /* One block of scratch, laid out like the largest block of the buffer. */
    MPI_Count bmax = halo_block_start(count, p, 1);
    halo_bref_t tmp = halo_sched_span(s_p, bmax, type);
    int right = (me + 1) % p, left = (me - 1 + p) % p;
    int round = 1;
    for (int k = 0; k < p - 1; k++, round++) {
        int sb = (me - k + p) % p, rbk = (me - k - 1 + p) % p;
        MPI_Count ss = halo_block_start(count, p, sb), sn = halo_block_start(count, p, sb + 1) - ss;
        MPI_Count rs = halo_block_start(count, p, rbk), rn = halo_block_start(count, p, rbk + 1) - rs;
        halo_sched_send(s_p, round, halo_bref_add(rb, (int64_t)(ss * ext)), sn, type, right);
        halo_sched_recv(s_p, round, tmp, rn, type, left);
        halo_sched_reduce(s_p, round, tmp, halo_bref_add(rb, (int64_t)(rs * ext)), rn, type, a->op);
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
