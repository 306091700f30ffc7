/* Reduce through shared memory: every member copies its vector into its
 * slot, chunk by chunk (two halves), and the root reduces the slots into
 * its receive buffer in member order.
 *
 * Cost: n bytes copied in by each member in parallel, (L - 1) n reduced by
 * the root: two flag transfers of latency per chunk, no message. Any
 * operation, commutative or not (the order is x_0 op x_1 op ... op x_{L-1});
 * elements keep their layout in the slots (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_shm_reduce_steps(halo_sched_t **s_p, int round, int nmembers, int me, int root, halo_bref_t in,
                          halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    if (count == 0)
        return round;
    if (nmembers == 1) {
        halo_sched_copy(s_p, round, in, count, type, out, count, type);
        return round + 1;
    }
    halo_shm_use(s_p);
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, count, type, HALO_CSHM_HALF);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = round + (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        int64_t at = (k % 2) * HALO_CSHM_HALF;
        int step = k == ch.n - 1 ? HALO_SHM_DONE : (int)k + 1;
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        if (me == root)
            halo_shm_wait(s_p, r, HALO_SHM_ALL, (int)k + 1);
        else if (k >= 2)   /* the root has reduced chunk k - 2 out of this half */
            halo_shm_wait(s_p, r, root, (int)k - 1);
        halo_sched_copy(s_p, r, halo_bref_add(in, first * ch.extent), len, type,
                        halo_shm_elem(&ch, me, at, 0), len, type);
        if (me == root)
            halo_shm_fold(s_p, r, nmembers, at, 0, len, &ch, halo_bref_add(out, first * ch.extent), type, op);
        halo_shm_set(s_p, r, step);
    }
    return round + (int)ch.n;
}

int halo_reduce_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_shm_reduce_steps(s_p, 0, t->nlocal, t->me, a->root, halo_addr(in), halo_addr(a->rbuf), a->count,
                          a->type, a->op);
    return MPI_SUCCESS;
}
