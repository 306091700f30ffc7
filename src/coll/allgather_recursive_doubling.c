/* Allgather, recursive doubling.
 *
 * In step k (distance 2^k) every rank exchanges with rank ^ 2^k the 2^k
 * blocks it holds so far, which sit side by side in the receive buffer, so
 * each exchange is one message of the receive datatype, in place in the
 * receive buffer.
 * Cost: lg p * alpha + n * (p-1)/p * beta. Power-of-two p only; in place
 * or not. Latency-optimal with the least data moved: the choice for small
 * and medium blocks when p is a power of two. */
#include "coll/algos.h"

int halo_allgather_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    int64_t blk = (int64_t)(a->rcount * halo_type_extent(a->rtype));
    halo_bref_t rb = halo_addr(a->rbuf);
    int round = 0;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    /* Not in place, the first exchange sends the own block from the send
     * buffer and copies it into place after that round's messages (later
     * rounds send it from there). */
    if (!in_place && p == 1)
        halo_sched_copy(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, halo_bref_add(rb, me * blk),
                        a->rcount, a->rtype);
    for (int mask = 1; mask < p; mask <<= 1, round++) {
        int peer = me ^ mask;
        int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        if (mask == 1 && !in_place) {
            halo_sched_send(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, peer);
            halo_sched_copy(s_p, round, halo_addr(a->sbuf), a->scount, a->stype, halo_bref_add(rb, me * blk),
                            a->rcount, a->rtype);
        } else {
            halo_sched_send(s_p, round, halo_bref_add(rb, mine * blk), mask * a->rcount, a->rtype, peer);
        }
        halo_sched_recv(s_p, round, halo_bref_add(rb, theirs * blk), mask * a->rcount, a->rtype, peer);
    }
    return MPI_SUCCESS;
}
