/* Broadcast, pipelined chain.
 *
 * The ranks form a chain from the root (relative rank r receives from r-1
 * and sends to r+1) and the message moves down it in segments of
 * HALO_BCAST_SEGMENT bytes: in each round a rank receives segment k while
 * it forwards segment k-1, so with s segments every link is busy after
 * the first p-1 rounds.
 * Cost: (p - 2 + s) * (alpha + (n/s) * beta); for large n about
 * n * beta + (p + s) * alpha. Any p, any datatype (moved as bytes: packed
 * through scratch when the type is not contiguous). The choice for very
 * large messages, where n * beta dominates; poor for small ones. */
#include "coll/algos.h"

#include "core/config.h"

HALO_CFG_INT(cfg_bcast_segment, "HALO_BCAST_SEGMENT", 32768,
             "segment size in bytes of the pipelined-chain broadcast (same on every rank)");

int halo_bcast_pipeline(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, root = a->root;
    MPI_Count n = a->count * halo_type_size(a->type);
    if (p == 1 || n == 0)
        return MPI_SUCCESS;
    MPI_Count seg = halo_cfg_get(&cfg_bcast_segment);
    if (seg < 1024)
        seg = 1024;
    if (seg < (n + 4095) / 4096)   /* at most 4096 segments: the schedule stays small */
        seg = (n + 4095) / 4096;
    MPI_Count nseg = (n + seg - 1) / seg;
    int rel = (c->rank - root + p) % p;
    int prev = (rel - 1 + root + p) % p, next = (rel + 1 + root) % p;
    halo_bref_t buf = halo_sched_stage(s_p, 0, a->rbuf, a->count, a->type, rel == 0);
    /* Round 0 packs at the root. Round k >= 1: receive segment k-1 from
     * the previous rank, forward segment k-2 (the root, which receives
     * nothing, sends segment k-1). */
    int lag = rel == 0 ? 1 : 2;
    MPI_Count k;
    for (k = 1; k <= nseg + 1; k++) {
        MPI_Count r = k - 1, f = k - lag;
        if (rel > 0 && r < nseg) {
            MPI_Count len = r == nseg - 1 ? n - r * seg : seg;
            halo_sched_recv(s_p, (int)k, halo_bref_add(buf, (int64_t)(r * seg)), len, MPI_BYTE, prev);
        }
        if (rel < p - 1 && f >= 0 && f < nseg) {
            MPI_Count len = f == nseg - 1 ? n - f * seg : seg;
            halo_sched_send(s_p, (int)k, halo_bref_add(buf, (int64_t)(f * seg)), len, MPI_BYTE, next);
        }
    }
    if (rel != 0)
        halo_sched_unstage(s_p, (int)k, buf, a->rbuf, a->count, a->type);
    return MPI_SUCCESS;
}
