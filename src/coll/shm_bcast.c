/* Broadcast through shared memory: the root packs the message into its
 * slot, chunk by chunk (two halves, so that it fills one while the others
 * copy the other out), and the members unpack each chunk from there.
 *
 * Cost: n bytes copied in by the root, n out by each member, in parallel
 * chunk by chunk; two flag transfers of latency per chunk of
 * HALO_CSHM_HALF bytes; no message. Up to HALO_SHM_LINE_BYTES the data
 * travels in the root's flag line. Any datatype (moves packed bytes, so
 * the members' types only need the root's signature). One node. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "core/errors.h"

int halo_shm_bcast_steps(halo_sched_t **s_p, int round, int nmembers, int me, int root, halo_bref_t buf,
                         MPI_Count count, MPI_Datatype type)
{
    MPI_Count n = count * halo_type_size(type);
    if (nmembers == 1 || n == 0)
        return round;
    halo_shm_use(s_p);
    MPI_Count nk = (n + HALO_CSHM_HALF - 1) / HALO_CSHM_HALF;
    for (MPI_Count k = 0; k < nk; k++) {
        int r = round + (int)k;
        MPI_Count pos = k * HALO_CSHM_HALF, len = n - pos < HALO_CSHM_HALF ? n - pos : HALO_CSHM_HALF;
        halo_bref_t half = halo_shm_block(root, n, (k % 2) * HALO_CSHM_HALF);
        /* Chunk k raises the flag to k + 1; the last one to DONE. */
        int step = k == nk - 1 ? HALO_SHM_DONE : (int)k + 1;
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        if (me == root) {
            if (k >= 2)   /* everyone has copied chunk k - 2 out of this half */
                halo_shm_wait(s_p, r, HALO_SHM_ALL, (int)k - 1);
            halo_sched_pack(s_p, r, buf, count, type, pos, len, half);
        } else {
            halo_shm_wait(s_p, r, root, (int)k + 1);
            halo_sched_unpack(s_p, r, half, pos, len, buf, count, type);
        }
        halo_shm_set(s_p, r, step);
    }
    return round + (int)nk;
}

int halo_bcast_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    if ((a->count * halo_type_size(a->type) + HALO_CSHM_HALF - 1) / HALO_CSHM_HALF > HALO_SHM_MAX_STEP)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): too large for the shared-memory broadcast",
                        (long long)a->count);
    halo_shm_bcast_steps(s_p, 0, t->nlocal, t->me, a->root, halo_addr(a->rbuf), a->count, a->type);
    return MPI_SUCCESS;
}
