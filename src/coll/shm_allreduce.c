/* Allreduce through shared memory, every member reducing everything: each
 * member copies its vector into its slot, then each reduces all slots into
 * its own receive buffer, in member order.
 *
 * Cost: per chunk of a slot, n copied in and (L - 1) n reduced by every
 * member, two flag transfers of latency, no message. Latency-optimal: the
 * choice for small vectors (the reduction work grows as L n per member).
 * Any operation, commutative or not; elements keep their layout in the
 * slots (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_shm_fold_steps(halo_sched_t **s_p, int round, int me, int nfold, halo_bref_t in, MPI_Count count,
                        MPI_Count d0, MPI_Count d1, halo_bref_t out, MPI_Datatype type, MPI_Op op)
{
    halo_shm_use(s_p);
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, count, type, HALO_CSHM_SLOT);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = round + 2 * (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        /* In: everyone has reduced the previous chunk out of the slots. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 2 * (int)k);
        halo_sched_copy(s_p, r, halo_bref_add(in, first * ch.extent), len, type,
                        halo_shm_elem(&ch, me, 0, 0), len, type);
        halo_shm_set(s_p, r, 2 * (int)k + 1);
        /* My elements of this chunk, once the chunks of the members I fold
         * (all of them, or those below nfold for Scan and Exscan) are in.
         * A member with no element here (its reduce-scatter block lies
         * elsewhere) or nothing to fold (member 0 of an exscan) does not
         * wait: its slot is rewritten only after everyone has passed this
         * chunk (the wait above, or the next epoch's wait_prev). */
        MPI_Count lo = first > d0 ? first : d0, hi = first + len < d1 ? first + len : d1;
        if (hi > lo && nfold > 0) {
            if (nfold > 1 || me >= nfold)
                halo_shm_wait(s_p, r + 1, halo_shm_below(nfold), 2 * (int)k + 1);
            halo_shm_fold(s_p, r + 1, nfold, 0, lo - first, hi - lo, &ch,
                          halo_bref_add(out, (lo - d0) * ch.extent), type, op);
        }
        halo_shm_set(s_p, r + 1, k == ch.n - 1 ? HALO_SHM_DONE : 2 * (int)k + 2);
    }
    return round + 2 * (int)ch.n;
}

int halo_shm_allreduce_steps(halo_sched_t **s_p, int round, int nmembers, int me, halo_bref_t in,
                             halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    if (count == 0)
        return round;
    if (nmembers == 1) {
        halo_sched_copy(s_p, round, in, count, type, out, count, type);
        return round + 1;
    }
    return halo_shm_fold_steps(s_p, round, me, nmembers, in, count, 0, count, out, type, op);
}

int halo_allreduce_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_shm_allreduce_steps(s_p, 0, t->nlocal, t->me, halo_addr(in), halo_addr(a->rbuf), a->count, a->type,
                             a->op);
    return MPI_SUCCESS;
}
