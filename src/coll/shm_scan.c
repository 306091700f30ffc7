/* Scan and Exscan through shared memory: each member copies its vector
 * into its slot, chunk by chunk, and member i reduces the slots of members
 * 0 .. i (Scan) or 0 .. i - 1 (Exscan) into its receive buffer, in member
 * order.
 *
 * Cost: per chunk of a slot, n copied in by every member and up to
 * (L - 1) n reduced by the last one, two flag transfers of latency, no
 * message: every member has its result after one exchange instead of
 * waiting for the chain; member i waits only for the members before it
 * (member 0 of a Scan and of an Exscan for none). Latency-optimal, the
 * choice for small vectors (the reduction work grows as i n at member i).
 * Any operation, commutative or not; in place or not (each member's input
 * is in its slot before anything is written); Exscan leaves member 0's
 * receive buffer alone. Elements keep their layout in the slots
 * (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "core/errors.h"

bool halo_shm_scan_trivial(const halo_coll_args_t *a, int nmembers, bool exclusive, halo_sched_t **s_p)
{
    if (a->count == 0)
        return true;
    if (nmembers > 1)
        return false;
    if (!exclusive && a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->count, a->type, halo_addr(a->rbuf), a->count, a->type);
    return true;
}

static int scan_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool exclusive)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t ib = halo_addr(in), out = halo_addr(a->rbuf);
    int nfold = exclusive ? me : me + 1;   /* members whose inputs make my result */
    if (halo_shm_scan_trivial(a, nm, exclusive, s_p))
        return MPI_SUCCESS;
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, a->count, a->type, HALO_CSHM_SLOT);
    if (2 * ch.n > HALO_SHM_MAX_STEP)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): too large for the shared-memory scan", (long long)a->count);
    halo_shm_fold_steps(s_p, 0, me, nfold, ib, a->count, 0, a->count, out, a->type, a->op);
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
