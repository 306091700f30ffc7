/* Scan and Exscan through shared memory: each member copies its vector
 * into its slot, chunk by chunk, and member i reduces the slots of members
 * 0 .. i (Scan) or 0 .. i - 1 (Exscan) into its receive buffer, in member
 * order.
 *
 * Cost: per chunk of a slot, n copied in by every member and up to
 * (L - 1) n reduced by the last one, two flag transfers of latency, no
 * message: every member has its result after one exchange instead of
 * waiting for the chain. Latency-optimal, the choice for small vectors
 * (the reduction work grows as i n at member i). Any operation,
 * commutative or not; in place or not (each member's input is in its slot
 * before anything is written); Exscan leaves member 0's receive buffer
 * alone. Elements keep their layout in the slots (HALO_ALG_SHM_TYPE). One
 * node. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "core/errors.h"

static int scan_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool exclusive)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t ib = halo_addr(in), out = halo_addr(a->rbuf);
    int nfold = exclusive ? me : me + 1;   /* members whose inputs make my result */
    if (a->count == 0)
        return MPI_SUCCESS;
    if (nm == 1) {
        if (!exclusive && a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, ib, a->count, a->type, out, a->count, a->type);
        return MPI_SUCCESS;
    }
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, a->count, a->type, HALO_CSHM_SLOT);
    if (2 * ch.n > HALO_SHM_MAX_STEP)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): too large for the shared-memory scan", (long long)a->count);
    halo_shm_use(s_p);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = 2 * (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        /* In: everyone has reduced the previous chunk out of the slots. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 2 * (int)k);
        halo_sched_copy(s_p, r, halo_bref_add(ib, first * ch.extent), len, a->type, halo_shm_elem(&ch, me, 0, 0),
                        len, a->type);
        halo_shm_set(s_p, r, 2 * (int)k + 1);
        /* My prefix, once the members before me (and I) are in. */
        halo_shm_wait(s_p, r + 1, HALO_SHM_ALL, 2 * (int)k + 1);
        if (nfold > 0)
            halo_shm_fold(s_p, r + 1, nfold, 0, 0, len, &ch, halo_bref_add(out, first * ch.extent), a->type,
                          a->op);
        halo_shm_set(s_p, r + 1, k == ch.n - 1 ? HALO_SHM_DONE : 2 * (int)k + 2);
    }
    return MPI_SUCCESS;
}

int halo_scan_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_shm(a, c, s_p, false);
}

int halo_exscan_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_shm(a, c, s_p, true);
}
