/* Scan and Exscan through shared memory, by parts: each member copies its
 * vector into its slot, chunk by chunk; member j then runs the scan over
 * part j of every slot, in place and in member order (slot i's part
 * becomes slot i-1's part op slot i's), and every member copies its
 * result out of the slots: its own slot for Scan, the previous member's
 * for Exscan.
 *
 * Cost: per chunk of a slot, n copied in, (L - 1) n / L reduced and n
 * copied out by every member, three flag transfers of latency, no message:
 * the (L - 1) n of reduction work that the chain does one member after the
 * other is shared evenly and done at once, and no member waits for a
 * chain of L - 1 hand-offs (each a wake-up when ranks outnumber the
 * cores). The choice for larger vectors at several members; the slots
 * form (shm) wins for small ones (two flag transfers). Any operation,
 * commutative or not (the running value always stays on the left); in
 * place or not (a member's chunk is in its slot before its result is
 * written). Exscan leaves member 0's receive buffer alone, and the last
 * member's input is never read. Elements keep their layout in the slots
 * (HALO_ALG_SHM_TYPE). One node. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "core/errors.h"

static int scan_parts(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool exclusive)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    halo_bref_t ib = halo_addr(in), out = halo_addr(a->rbuf);
    /* Slots that take part: an Exscan's result never needs the last one;
     * my result is in slot `from` (none for Exscan's member 0). */
    int nscan = exclusive ? nm - 1 : nm, from = exclusive ? me - 1 : me;
    if (halo_shm_scan_trivial(a, nm, exclusive, s_p))
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    halo_shm_chunks_t ch;
    halo_shm_chunks(&ch, a->count, a->type, HALO_CSHM_SLOT);
    if (3 * ch.n > HALO_SHM_MAX_STEP)
        return halo_err(MPI_ERR_COUNT, "(count=%lld): too large for the shared-memory scan", (long long)a->count);
    for (MPI_Count k = 0; k < ch.n; k++) {
        int r = 3 * (int)k;
        MPI_Count first = k * ch.per, len = halo_shm_chunk_len(&ch, k);
        /* In. Only I read my slot after the parts are done (Scan), or only
         * the next member (Exscan): wait for that one to have copied the
         * previous chunk out. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else if (exclusive && me + 1 < nm)
            halo_shm_wait(s_p, r, me + 1, 3 * (int)k);
        if (me < nscan)
            halo_sched_copy(s_p, r, halo_bref_add(ib, first * ch.extent), len, a->type,
                            halo_shm_elem(&ch, me, 0, 0), len, a->type);
        halo_shm_set(s_p, r, 3 * (int)k + 1);
        /* My part, scanned in place across the slots. */
        MPI_Count lo = halo_block_start(len, nm, me), hi = halo_block_start(len, nm, me + 1);
        if (hi > lo && nscan > 1) {
            halo_shm_wait(s_p, r + 1, halo_shm_below(nscan), 3 * (int)k + 1);
            for (int i = 1; i < nscan; i++)
                halo_sched_reduce(s_p, r + 1, halo_shm_elem(&ch, i - 1, 0, lo), halo_shm_elem(&ch, i, 0, lo),
                                  hi - lo, a->type, a->op);
        }
        halo_shm_set(s_p, r + 1, 3 * (int)k + 2);
        /* Out, once every part of the slot I read is done. */
        if (from >= 0) {
            halo_shm_wait(s_p, r + 2, HALO_SHM_ALL, 3 * (int)k + 2);
            halo_sched_copy(s_p, r + 2, halo_shm_elem(&ch, from, 0, 0), len, a->type,
                            halo_bref_add(out, first * ch.extent), len, a->type);
        }
        halo_shm_set(s_p, r + 2, k == ch.n - 1 ? HALO_SHM_DONE : 3 * (int)k + 3);
    }
    return MPI_SUCCESS;
}

int halo_scan_shm_parts(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_parts(a, c, s_p, false);
}

int halo_exscan_shm_parts(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_parts(a, c, s_p, true);
}
