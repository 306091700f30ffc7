/* Allreduce through shared memory by reduce-scatter then allgather: each
 * member copies its vector into its slot; member i reduces part i of every
 * slot (in member order) into its receive buffer and publishes it in part i
 * of its own slot; then every member copies the other parts out.
 *
 * Cost: per chunk of a slot, n copied in, (L - 1) n / L reduced and
 * (L - 1) n / L copied out by every member, three flag transfers of
 * latency, no message: the reduction work is shared, the choice for
 * larger vectors. Any operation, commutative or not; elements keep their
 * layout in the slots (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_shm_allreduce_rsag_steps(halo_sched_t **s_p, int round, int nmembers, int me, halo_bref_t in,
                                  halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    if (nmembers == 1 || count < nmembers)
        return halo_shm_allreduce_steps(s_p, round, nmembers, me, in, out, count, type, op);
    halo_shm_use(s_p);
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, count, type, HALO_CSHM_SLOT);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = round + 3 * (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        halo_bref_t o = halo_bref_add(out, first * ch.extent);
        /* In: everyone has copied the previous chunk's parts out. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 3 * (int)k);
        halo_sched_copy(s_p, r, halo_bref_add(in, first * ch.extent), len, type,
                        halo_shm_elem(&ch, me, 0, 0), len, type);
        halo_shm_set(s_p, r, 3 * (int)k + 1);
        /* My part: reduce, then publish it where my own input was (only I
         * read that part of my slot). */
        MPI_Count lo = halo_block_start(len, nmembers, me), hi = halo_block_start(len, nmembers, me + 1);
        halo_shm_wait(s_p, r + 1, HALO_SHM_ALL, 3 * (int)k + 1);
        halo_shm_fold(s_p, r + 1, nmembers, 0, lo, hi - lo, &ch, halo_bref_add(o, lo * ch.extent), type, op);
        if (hi > lo)
            halo_sched_copy(s_p, r + 1, halo_bref_add(o, lo * ch.extent), hi - lo, type,
                            halo_shm_elem(&ch, me, 0, lo), hi - lo, type);
        halo_shm_set(s_p, r + 1, 3 * (int)k + 2);
        /* The other parts. */
        halo_shm_wait(s_p, r + 2, HALO_SHM_ALL, 3 * (int)k + 2);
        for (int j = 0; j < nmembers; j++) {
            MPI_Count jl = halo_block_start(len, nmembers, j), jh = halo_block_start(len, nmembers, j + 1);
            if (j != me && jh > jl)
                halo_sched_copy(s_p, r + 2, halo_shm_elem(&ch, j, 0, jl), jh - jl, type,
                                halo_bref_add(o, jl * ch.extent), jh - jl, type);
        }
        halo_shm_set(s_p, r + 2, k == ch.n - 1 ? HALO_SHM_DONE : 3 * (int)k + 3);
    }
    return round + 3 * (int)ch.n;
}

int halo_allreduce_shm_rsag(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_shm_allreduce_rsag_steps(s_p, 0, t->nlocal, t->me, halo_addr(in), halo_addr(a->rbuf), a->count,
                                  a->type, a->op);
    return MPI_SUCCESS;
}
