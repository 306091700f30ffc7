/* Reduce_scatter and Reduce_scatter_block through shared memory: each
 * member copies its whole vector into its slot, chunk by chunk; member i
 * reduces, in member order, the part of the chunk that falls in its own
 * block (elements disp[i] .. disp[i + 1] of the vector) straight into its
 * receive buffer.
 *
 * Cost: per chunk of a slot, n copied in by every member and n / L
 * reduced L - 1 times by each (blocks of equal counts), two flag transfers
 * of latency, no message (one for a member whose block is empty: it
 * leaves once its vector is in). Any operation, commutative or not (x_0
 * op x_1 op ... op x_{L-1}); any counts, zeros included; in place or not (a
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
    halo_shm_fold_steps(s_p, 0, me, nm, ib, total, d0, d1, out, type, a->op);
    return MPI_SUCCESS;
}
