/* Reduce_scatter and Reduce_scatter_block through shared memory: each
 * member copies its whole vector into its slot, chunk by chunk; member i
 * reduces, in member order, the part of the chunk that falls in its own
 * block (elements disp[i] .. disp[i + 1] of the vector) straight into its
 * receive buffer.
 *
 * Cost: per chunk of a slot, n copied in by every member and n / L
 * reduced L - 1 times by each (blocks of equal counts), two flag transfers
 * of latency, no message. Any operation, commutative or not (x_0 op x_1
 * op ... op x_{L-1}); any counts, zeros included; in place or not (a
 * member writes element x of its block only after chunk x lies in its
 * slot, and x - disp[i] <= x, so the input still to be copied in is never
 * overwritten). Elements keep their layout in the slots
 * (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "core/errors.h"

int halo_reduce_scatter_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    MPI_Datatype type = a->type;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t ib = halo_addr(in), out = halo_addr(a->rbuf);
    MPI_Count total = 0, d0 = 0;
    for (int i = 0; i < nm; i++) {
        if (i == me)
            d0 = total;
        total += halo_rs_count(a, i);
    }
    MPI_Count d1 = d0 + halo_rs_count(a, me);
    if (total == 0)
        return MPI_SUCCESS;
    if (nm == 1) {
        if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, ib, d1 - d0, type, out, d1 - d0, type);
        return MPI_SUCCESS;
    }
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, total, type, HALO_CSHM_SLOT);
    if (2 * ch.n > HALO_SHM_MAX_STEP)
        return halo_err(MPI_ERR_COUNT, ": %lld elements are too many for the shared-memory reduce-scatter",
                        (long long)total);
    halo_shm_use(s_p);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = 2 * (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        /* In: everyone has reduced its part of the previous chunk. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 2 * (int)k);
        halo_sched_copy(s_p, r, halo_bref_add(ib, first * ch.extent), len, type,
                        halo_shm_elem(&ch, me, 0, 0), len, type);
        halo_shm_set(s_p, r, 2 * (int)k + 1);
        /* My block's elements in this chunk, once every member's is in. */
        MPI_Count lo = first > d0 ? first : d0, hi = first + len < d1 ? first + len : d1;
        halo_shm_wait(s_p, r + 1, HALO_SHM_ALL, 2 * (int)k + 1);
        if (hi > lo)
            halo_shm_fold(s_p, r + 1, nm, 0, lo - first, hi - lo, &ch, halo_bref_add(out, (lo - d0) * ch.extent),
                          type, a->op);
        halo_shm_set(s_p, r + 1, k == ch.n - 1 ? HALO_SHM_DONE : 2 * (int)k + 2);
    }
    return MPI_SUCCESS;
}
