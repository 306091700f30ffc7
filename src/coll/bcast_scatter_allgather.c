/* Broadcast, scatter then allgather (van de Geijn).
 *
 * The message is cut in p chunks of ceil(n/p) bytes. A binomial scatter
 * (ranks relative to the root) leaves chunk r at relative rank r, then a
 * ring allgather brings every chunk everywhere. The root never receives
 * (its buffer is only read).
 * Cost: (lg p + p - 1) * alpha + 2 * n * (p-1)/p * beta. Any p, any
 * datatype: the message moves as bytes, from the buffer itself when the
 * type is contiguous, else through a packed scratch copy. Bandwidth-optimal
 * for large messages on many ranks. */
#include "coll/algos.h"

static halo_bref_t chunks(halo_bref_t buf, MPI_Count n, MPI_Count cs, int from, int to,
                          MPI_Count *bytes_p)
{
    MPI_Count lo = (MPI_Count)from * cs, hi = (MPI_Count)to * cs;
    lo = lo < n ? lo : n;
    hi = hi < n ? hi : n;
    *bytes_p = hi - lo;
    return halo_bref_add(buf, (int64_t)lo);
}

int halo_bcast_scatter_allgather(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, root = a->root;
    MPI_Count n = a->count * halo_type_size(a->type);
    if (p == 1 || n == 0)
        return MPI_SUCCESS;
    int rel = (c->rank - root + p) % p;
    /* Round 0: the root packs (non-contiguous types); messages from round 1. */
    halo_bref_t buf = halo_sched_stage(s_p, 0, a->rbuf, a->count, a->type, rel == 0);
    MPI_Count cs = (n + p - 1) / p, bytes;
    int round = 1;

    int mask = 1;
    while (mask < p) {
        if (rel & mask) {
            int hi = rel + mask < p ? rel + mask : p;
            halo_bref_t at = chunks(buf, n, cs, rel, hi, &bytes);
            halo_sched_recv(s_p, round++, at, bytes, MPI_BYTE, (rel - mask + root) % p);
            break;
        }
        mask <<= 1;
    }
    bool sent = false;
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (rel + mask < p) {
            int hi = rel + 2 * mask < p ? rel + 2 * mask : p;
            halo_bref_t at = chunks(buf, n, cs, rel + mask, hi, &bytes);
            halo_sched_send(s_p, round, at, bytes, MPI_BYTE, (rel + mask + root) % p);
            sent = true;
        }
    }
    if (sent)
        round++;

    int right = (rel + 1) % p, left = (rel - 1 + p) % p;
    for (int k = 0; k < p - 1; k++, round++) {
        int sblock = (rel - k + p) % p, rblock = (rel - k - 1 + p) % p;
        if (right != 0) {
            halo_bref_t at = chunks(buf, n, cs, sblock, sblock + 1, &bytes);
            halo_sched_send(s_p, round, at, bytes, MPI_BYTE, (right + root) % p);
        }
        if (rel != 0) {
            halo_bref_t at = chunks(buf, n, cs, rblock, rblock + 1, &bytes);
            halo_sched_recv(s_p, round, at, bytes, MPI_BYTE, (left + root) % p);
        }
    }
    if (rel != 0)
        halo_sched_unstage(s_p, round, buf, a->rbuf, a->count, a->type);
    return MPI_SUCCESS;
}
