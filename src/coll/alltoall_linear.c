/* Alltoall, Alltoallv and Alltoallw, linear (all nonblocking at once).
 *
 * Every rank posts its p - 1 receives and p - 1 sends in one round (to
 * rank + k and from rank - k, k = 1 .. p-1, so that not everyone starts
 * with the same peer) and copies its own block locally. In place, the
 * blocks to send are first copied out of the receive buffer into scratch
 * (an Alltoall whose copies would exceed HALO_COLL_SCRATCH_MAX swaps its
 * blocks pair by pair instead: alltoall_inplace_pairs.c).
 * Cost: about (p - 1) * alpha + p * b * beta with every message in flight
 * at once: the latencies overlap, but many messages compete for the
 * network. Any p, any datatypes. The choice for medium blocks and modest p. */
#include "coll/algos.h"

int halo_alltoall_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
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
    }
    for (int k = 1; k < p; k++) {
        int src = (me - k + p) % p;
        halo_a2a_recv_block(a, p, src, &rbuf, &rcnt, &rt);
        halo_sched_recv(s_p, round, rbuf, rcnt, rt, src);
    }
    for (int k = 1; k < p; k++) {
        int dst = (me + k) % p;
        if (in_place)
            halo_sched_send(s_p, round, stg[dst], bytes[dst], MPI_BYTE, dst);
        else {
            halo_a2a_send_block(a, p, dst, &sbuf, &scnt, &st);
            halo_sched_send(s_p, round, sbuf, scnt, st, dst);
        }
    }
    if (!in_place) {
        halo_a2a_send_block(a, p, me, &sbuf, &scnt, &st);
        halo_a2a_recv_block(a, p, me, &rbuf, &rcnt, &rt);
        halo_sched_copy(s_p, round, sbuf, scnt, st, rbuf, rcnt, rt);
    }
    free(stg);
    free(bytes);
    return MPI_SUCCESS;
}
