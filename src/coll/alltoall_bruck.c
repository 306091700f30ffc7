/* Alltoall, Bruck's algorithm.
 *
 * Blocks go packed into scratch, rotated so that position i holds the
 * block for rank me + i. In step k (distance d = 2^k) every rank sends to
 * me + d, in one message, the blocks whose position has bit k set, and
 * receives as many from me - d into the same positions. After ceil(lg p)
 * steps position i holds the block that rank me - i sent to this rank, and
 * a last pass unpacks them into the receive buffer.
 * Cost: ceil(lg p) * (alpha + (n/2) * beta), n = p * block bytes, plus
 * local copies of about n per step. Any p; in place or not (the input is
 * copied out before anything is received). Latency-optimal: the choice for
 * small blocks on many ranks; the data volume grows with lg p, so large
 * blocks should go pairwise. */
#include "coll/algos.h"

int halo_alltoall_bruck(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    const void *src = in_place ? a->rbuf : a->sbuf;
    MPI_Count scnt = in_place ? a->rcount : a->scount;
    MPI_Datatype st = in_place ? a->rtype : a->stype;
    MPI_Count bs = scnt * halo_type_size(st);
    int64_t sblk = (int64_t)(scnt * halo_type_extent(st));
    int64_t rblk = (int64_t)(a->rcount * halo_type_extent(a->rtype));
    halo_bref_t sb = halo_addr(src), rb = halo_addr(a->rbuf);
    if (p == 1) {
        if (!in_place)
            halo_sched_copy(s_p, 0, sb, scnt, st, rb, a->rcount, a->rtype);
        return MPI_SUCCESS;
    }
    halo_bref_t A = halo_scr(halo_sched_scratch(s_p, (uint64_t)(p * bs)));
    int half = (p + 1) / 2;
    halo_bref_t T = halo_scr(halo_sched_scratch(s_p, (uint64_t)(half * bs)));
    halo_bref_t R = halo_scr(halo_sched_scratch(s_p, (uint64_t)(half * bs)));
    /* Round 0: rotate (blocks me .. p-1, then 0 .. me-1). */
    halo_sched_copy(s_p, 0, halo_bref_add(sb, me * sblk), (p - me) * scnt, st, A, (p - me) * bs, MPI_BYTE);
    halo_sched_copy(s_p, 0, sb, me * scnt, st, halo_bref_add(A, (p - me) * bs), me * bs, MPI_BYTE);
    int round = 0;
    for (int d = 1; d < p; d *= 2) {
        /* Pack in the previous round's local steps, exchange in this one,
         * unpack in its local steps. */
        int n = 0;
        for (int i = 1; i < p; i++)
            if (i & d)
                halo_sched_copy(s_p, round, halo_bref_add(A, i * bs), bs, MPI_BYTE,
                                halo_bref_add(T, (n++) * bs), bs, MPI_BYTE);
        round++;
        halo_sched_send(s_p, round, T, n * bs, MPI_BYTE, (me + d) % p);
        halo_sched_recv(s_p, round, R, n * bs, MPI_BYTE, (me - d + p) % p);
        n = 0;
        for (int i = 1; i < p; i++)
            if (i & d)
                halo_sched_copy(s_p, round, halo_bref_add(R, (n++) * bs), bs, MPI_BYTE,
                                halo_bref_add(A, i * bs), bs, MPI_BYTE);
    }
    for (int i = 0; i < p; i++) {
        int from = (me - i + p) % p;
        halo_sched_copy(s_p, round, halo_bref_add(A, i * bs), bs, MPI_BYTE,
                        halo_bref_add(rb, from * rblk), a->rcount, a->rtype);
    }
    return MPI_SUCCESS;
}
