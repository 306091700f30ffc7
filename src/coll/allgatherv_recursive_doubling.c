/* Allgatherv, recursive doubling.
 *
 * As allgather_recursive_doubling.c, but the blocks' places in the receive
 * buffer are the user's displacements, so the blocks are gathered packed
 * in rank order in scratch (every rank knows every count, hence every
 * block's place) and unpacked into the receive buffer at the end.
 * Cost: lg p * alpha + n * (p-1)/p * beta, plus one copy of n. Power-of-two
 * p only; in place or not. The choice for small and medium sizes when p
 * is a power of two. */
#include "coll/algos.h"

int halo_allgatherv_recursive_doubling(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count tsize = halo_type_size(a->rtype);
    int64_t ext = (int64_t)halo_type_extent(a->rtype);
    MPI_Count *off = halo_malloc((size_t)(p + 1) * sizeof(MPI_Count));
    off[0] = 0;
    for (int i = 0; i < p; i++)
        off[i + 1] = off[i] + a->rcounts[i] * tsize;
    halo_bref_t S = halo_scr(halo_sched_scratch(s_p, (uint64_t)off[p]));
    halo_bref_t rb = halo_addr(a->rbuf);
    halo_bref_t own = halo_bref_add(rb, a->rdispls[me] * ext);
    if (a->sbuf == MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, own, a->rcounts[me], a->rtype, halo_bref_add(S, off[me]),
                        off[me + 1] - off[me], MPI_BYTE);
    else
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, halo_bref_add(S, off[me]),
                        off[me + 1] - off[me], MPI_BYTE);
    int round = 1;
    for (int mask = 1; mask < p; mask <<= 1, round++) {
        int peer = me ^ mask;
        int mine = me & ~(mask - 1), theirs = peer & ~(mask - 1);
        halo_sched_send(s_p, round, halo_bref_add(S, off[mine]), off[mine + mask] - off[mine], MPI_BYTE, peer);
        halo_sched_recv(s_p, round, halo_bref_add(S, off[theirs]), off[theirs + mask] - off[theirs],
                        MPI_BYTE, peer);
    }
    for (int i = 0; i < p; i++)
        if (i != me || a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, round, halo_bref_add(S, off[i]), off[i + 1] - off[i], MPI_BYTE,
                            halo_bref_add(rb, a->rdispls[i] * ext), a->rcounts[i], a->rtype);
    free(off);
    return MPI_SUCCESS;
}
