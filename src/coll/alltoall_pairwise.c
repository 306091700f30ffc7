/* Alltoall, Alltoallv and Alltoallw, pairwise exchange.
 *
 * p - 1 steps; in step k every rank sends to one rank and receives from
 * another: to and from rank ^ k when p is a power of two (the pairs are
 * symmetric), else to rank + k and from rank - k. Each step is one
 * message each way, straight from the send buffer into the receive buffer
 * with the user's datatypes. In place, the blocks to send are first copied
 * out of the receive buffer into scratch (an Alltoall whose copies would
 * exceed HALO_COLL_SCRATCH_MAX swaps its blocks pair by pair instead:
 * alltoall_inplace_pairs.c).
 * Cost: (p - 1) * (alpha + b * beta), b the block size (per-rank sums for
 * the v and w forms). Any p, any datatypes. Bandwidth-friendly (one
 * message in flight each way, no congestion): the choice for large blocks. */
#include "coll/algos.h"

int halo_alltoall_pairwise(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    halo_bref_t *stg = NULL;
    MPI_Count *bytes = NULL;
    halo_bref_t sbuf, rbuf;
    MPI_Count scnt, rcnt;
    MPI_Datatype st, rt;
    if (in_place && halo_a2a_in_place_too_big(a, c))
        return halo_alltoall_inplace_pairs(a, c, s_p);
    int round = 0;
    if (in_place) {
        stg = halo_malloc((size_t)p * sizeof *stg);
        bytes = halo_malloc((size_t)p * sizeof *bytes);
        halo_a2a_stage_in_place(a, c, s_p, round++, stg, bytes);
    } else {
        halo_a2a_send_block(a, p, me, &sbuf, &scnt, &st);
        halo_a2a_recv_block(a, p, me, &rbuf, &rcnt, &rt);
        halo_sched_copy(s_p, round, sbuf, scnt, st, rbuf, rcnt, rt);
    }
    bool pof2 = halo_is_pof2(p);
    for (int k = 1; k < p; k++, round++) {
        int dst = pof2 ? me ^ k : (me + k) % p;
        int src = pof2 ? me ^ k : (me - k + p) % p;
        if (in_place)
            halo_sched_send(s_p, round, stg[dst], bytes[dst], MPI_BYTE, dst);
        else {
            halo_a2a_send_block(a, p, dst, &sbuf, &scnt, &st);
            halo_sched_send(s_p, round, sbuf, scnt, st, dst);
        }
        halo_a2a_recv_block(a, p, src, &rbuf, &rcnt, &rt);
        halo_sched_recv(s_p, round, rbuf, rcnt, rt, src);
    }
    free(stg);
    free(bytes);
    return MPI_SUCCESS;
}
