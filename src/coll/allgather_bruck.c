/* Allgather and Allgatherv, Bruck's algorithm.
 *
 * Blocks are kept packed in scratch in rotated order (position j holds the
 * block of rank me + j). In step k (distance d = 2^k) every rank sends its
 * first min(d, p - d) blocks to rank me - d and receives as many from rank
 * me + d, placing them at position d; after ceil(lg p) steps it holds all
 * p blocks and unrotates them into the receive buffer. Every rank knows
 * every count, so every message's size is known on both sides.
 * Cost: ceil(lg p) * alpha + n * (p-1)/p * beta, plus one copy of n. Any p;
 * in place or not. Latency-optimal for any p: the choice for small blocks
 * when p is not a power of two. */
#include "coll/algos.h"

int halo_allgather_bruck(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count tsize = halo_type_size(a->rtype);
    int64_t ext = (int64_t)halo_type_extent(a->rtype);
    halo_bref_t rb = halo_addr(a->rbuf);
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype,
                        halo_bref_add(rb, halo_ag_displ(a, me) * ext), halo_ag_count(a, me), a->rtype);
    if (p == 1)
        return MPI_SUCCESS;
    MPI_Count *off = halo_malloc((size_t)(p + 1) * sizeof(MPI_Count));
    off[0] = 0;
    for (int j = 0; j < p; j++)
        off[j + 1] = off[j] + halo_ag_count(a, (me + j) % p) * tsize;
    halo_bref_t S = halo_scr(halo_sched_scratch(s_p, (uint64_t)off[p]));
    halo_sched_copy(s_p, 0, halo_bref_add(rb, halo_ag_displ(a, me) * ext), halo_ag_count(a, me),
                    a->rtype, S, off[1], MPI_BYTE);
    int round = 1;
    for (int d = 1; d < p; d *= 2, round++) {
        int cnt = d < p - d ? d : p - d;
        halo_sched_send(s_p, round, S, off[cnt], MPI_BYTE, (me - d + p) % p);
        halo_sched_recv(s_p, round, halo_bref_add(S, off[d]), off[d + cnt] - off[d], MPI_BYTE, (me + d) % p);
    }
    if (!a->rcounts) {
        /* Regular layout: positions 1 .. p-me-1 are ranks me+1 .. p-1, side by
         * side in the receive buffer, and the rest ranks 0 .. me-1. */
        int n1 = p - me - 1;
        halo_sched_copy(s_p, round, halo_bref_add(S, off[1]), off[n1 + 1] - off[1], MPI_BYTE,
                        halo_bref_add(rb, (int64_t)(me + 1) * a->rcount * ext), n1 * a->rcount, a->rtype);
        halo_sched_copy(s_p, round, halo_bref_add(S, off[n1 + 1]), off[p] - off[n1 + 1], MPI_BYTE, rb,
                        me * a->rcount, a->rtype);
    } else {
        for (int j = 1; j < p; j++) {
            int r = (me + j) % p;
            halo_sched_copy(s_p, round, halo_bref_add(S, off[j]), off[j + 1] - off[j], MPI_BYTE,
                            halo_bref_add(rb, a->rdispls[r] * ext), a->rcounts[r], a->rtype);
        }
    }
    free(off);
    return MPI_SUCCESS;
}
