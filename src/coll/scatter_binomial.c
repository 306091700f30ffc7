/* Scatter, binomial tree.
 *
 * The mirror of gather_binomial.c: the root packs the send buffer in
 * relative rank order into scratch and hands each child its subtree's
 * blocks in one message, largest subtree first; each relay rank keeps its
 * own block and forwards the rest the same way. Leaves receive straight
 * into the receive buffer.
 * Cost: lg p * alpha + n * (p-1)/p * beta, plus the copies of the relay
 * ranks. Any p, any datatypes (blocks move as packed bytes), in place at
 * the root. Latency-optimal: the choice for small blocks. */
#include "coll/algos.h"

int halo_scatter_binomial(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    int rel = (me - root + p) % p;
    MPI_Count bs = me == root ? a->scount * halo_type_size(a->stype) : a->rcount * halo_type_size(a->rtype);
    int low = 1;
    while (low < p && !(rel & low))
        low <<= 1;
    int sub = low < p - rel ? low : p - rel;
    int parent = (rel - low + root + p) % p;
    if (rel != 0 && sub == 1) {
        halo_sched_recv(s_p, 0, halo_addr(a->rbuf), a->rcount, a->rtype, parent);
        return MPI_SUCCESS;
    }
    /* The send arguments mean something at the root only. */
    halo_bref_t sb = halo_addr(a->sbuf);
    MPI_Aint sblk = rel == 0 ? (MPI_Aint)a->scount * halo_type_extent(a->stype) : 0;
    if (rel == 0 && a->rbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_bref_add(sb, (int64_t)root * sblk), a->scount, a->stype,
                        halo_addr(a->rbuf), a->rcount, a->rtype);
    if (p == 1)
        return MPI_SUCCESS;
    halo_bref_t S = halo_scr(halo_sched_scratch(s_p, (uint64_t)(sub * bs)));
    if (rel == 0) {
        int n1 = p - root - 1;
        halo_sched_copy(s_p, 0, halo_bref_add(sb, (int64_t)(root + 1) * sblk), n1 * a->scount,
                        a->stype, halo_bref_add(S, (int64_t)bs), n1 * bs, MPI_BYTE);
        halo_sched_copy(s_p, 0, sb, root * a->scount, a->stype,
                        halo_bref_add(S, (int64_t)((n1 + 1) * bs)), root * bs, MPI_BYTE);
    } else {
        halo_sched_recv(s_p, 0, S, sub * bs, MPI_BYTE, parent);
        halo_sched_copy(s_p, 0, S, bs, MPI_BYTE, halo_addr(a->rbuf), a->rcount, a->rtype);
    }
    int top = 1;
    while (top * 2 < low && top * 2 < p)
        top *= 2;
    for (int m = top; m >= 1; m >>= 1) {
        if (m < low && rel + m < p) {
            int cnt = m < p - rel - m ? m : p - rel - m;
            halo_sched_send(s_p, 1, halo_bref_add(S, (int64_t)(m * bs)), cnt * bs, MPI_BYTE,
                            (rel + m + root) % p);
        }
    }
    return MPI_SUCCESS;
}
