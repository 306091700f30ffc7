/* Gather, binomial tree.
 *
 * Ranks renumbered relative to the root: relative rank r gathers the blocks
 * of its subtree, ranks r .. r + lowbit(r) - 1, from its children r + 2^j
 * (2^j < lowbit(r)), packed in relative order in scratch, then hands the
 * whole subtree to its parent r - lowbit(r) in one message. The root
 * unpacks into the receive buffer in two pieces (relative order wraps
 * around at rank p - 1). Leaves send straight from the send buffer.
 * Cost: lg p * alpha + n * (p-1)/p * beta, plus the copies of the relay
 * ranks. Any p, any datatypes (blocks move as packed bytes), in place at
 * the root. Latency-optimal: the choice for small blocks. */
#include "coll/algos.h"

int halo_gather_binomial(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    int rel = (me - root + p) % p;
    MPI_Count bs = me == root ? a->rcount * halo_type_size(a->rtype) : a->scount * halo_type_size(a->stype);
    int low = 1;   /* lowest set bit of rel; >= p at the root */
    while (low < p && !(rel & low))
        low <<= 1;
    int sub = low < p - rel ? low : p - rel;   /* ranks in my subtree */
    int parent = (rel - low + root + p) % p;
    if (rel != 0 && sub == 1) {
        halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, parent);
        return MPI_SUCCESS;
    }
    /* The receive arguments mean something at the root only. */
    halo_bref_t rb = halo_addr(a->rbuf);
    MPI_Aint rblk = rel == 0 ? (MPI_Aint)a->rcount * halo_type_extent(a->rtype) : 0;
    if (rel == 0 && a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype,
                        halo_bref_add(rb, (int64_t)root * rblk), a->rcount, a->rtype);
    if (p == 1)
        return MPI_SUCCESS;
    halo_bref_t S = halo_scr(halo_sched_scratch(s_p, (uint64_t)(sub * bs)));
    for (int m = 1; m < low && rel + m < p; m <<= 1) {
        int cnt = m < p - rel - m ? m : p - rel - m;
        halo_sched_recv(s_p, 0, halo_bref_add(S, (int64_t)(m * bs)), cnt * bs, MPI_BYTE,
                        (rel + m + root) % p);
    }
    if (rel != 0) {
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, S, bs, MPI_BYTE);
        halo_sched_send(s_p, 1, S, sub * bs, MPI_BYTE, parent);
        return MPI_SUCCESS;
    }
    /* Relative 1 .. p-root-1 are ranks root+1 .. p-1; the rest 0 .. root-1. */
    int n1 = p - root - 1;
    halo_sched_copy(s_p, 1, halo_bref_add(S, (int64_t)bs), n1 * bs, MPI_BYTE,
                    halo_bref_add(rb, (int64_t)(root + 1) * rblk), n1 * a->rcount, a->rtype);
    halo_sched_copy(s_p, 1, halo_bref_add(S, (int64_t)((n1 + 1) * bs)), root * bs, MPI_BYTE, rb,
                    root * a->rcount, a->rtype);
    return MPI_SUCCESS;
}
