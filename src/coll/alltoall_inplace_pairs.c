/* Alltoall in place with bounded scratch: symmetric pairs, chunk by chunk.
 *
 * Staging an in-place Alltoall (copying the p - 1 blocks to send out of
 * the receive buffer first) takes scratch of (p - 1) / p of the buffer;
 * for a buffer that fills most of memory there is no room for that. Here
 * the ranks meet in symmetric pairs instead (a round-robin tournament:
 * partner me ^ t for a power-of-two p; otherwise (t - me) mod p over the
 * odd p or p - 1 first ranks, the rank left without a partner meeting the
 * last rank when p is even), and each pair swaps its two blocks in chunks
 * of half of HALO_COLL_SCRATCH_MAX, at least 64 bytes and at most 4 MiB:
 * a chunk of the block for the partner is sent from where it lies (packed
 * into scratch first when the type is not contiguous), the partner's chunk
 * arrives in scratch and is copied over the sent one once the send has
 * completed. Scratch: two chunks (one for a contiguous type). Both sides
 * of a pair cut the same block size, so they send the same number of
 * messages in the same order.
 *
 * Cost: p - 1 (p if odd) sequential pair exchanges of n/p bytes each, in
 * ceil(n / (p chunk)) messages each way, plus one local copy of every
 * received byte: slower than the staged forms for small blocks (no two
 * exchanges overlap), as fast for large ones, where copies dominate. Any
 * p, any datatypes; Alltoall only (the v and w forms' block sizes differ
 * between ranks, so ranks could not agree on the switch). Chosen by the
 * linear and pairwise exchanges when their staging would exceed
 * HALO_COLL_SCRATCH_MAX. */
#include "coll/algos.h"

/* The partner of `me` in tournament round t (0 <= t < pair_rounds(p)),
 * or -1 if it sits this round out. */
static int pair_partner(int p, int me, int t)
{
    if (halo_is_pof2(p))
        return me ^ (t + 1);
    int m = p % 2 ? p : p - 1;   /* odd */
    if (me == m)                 /* the last rank of an even p */
        return (int)((long)t * (p / 2) % m);
    int q = ((t - me) % m + m) % m;
    if (q == me)
        return p % 2 ? -1 : m;
    return q;
}

static int pair_rounds(int p)
{
    return halo_is_pof2(p) ? p - 1 : p % 2 ? p : p - 1;
}

int halo_alltoall_inplace_pairs(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count n = a->rcount;
    MPI_Datatype t = a->rtype;
    MPI_Count bytes = n * halo_type_size(t);
    if (p == 1 || bytes == 0)
        return MPI_SUCCESS;
    bool contig = halo_dt_contig(halo_dtype_ptr(t));
    MPI_Count chunk = halo_coll_scratch_max() / 2;
    chunk = chunk < 64 ? 64 : chunk > (4 << 20) ? (4 << 20) : chunk;
    if (chunk > bytes)
        chunk = bytes;
    halo_bref_t in = halo_scr(halo_sched_scratch(s_p, (uint64_t)chunk));
    halo_bref_t out = contig ? in : halo_scr(halo_sched_scratch(s_p, (uint64_t)chunk));
    /* Round r sends and receives one chunk; its local steps put the
     * received chunk in place and pack the next chunk to send. */
    int round = 0;
    for (int tr = 0; tr < pair_rounds(p); tr++) {
        int j = pair_partner(p, me, tr);
        if (j < 0)
            continue;
        halo_bref_t blk;
        MPI_Count bn;
        MPI_Datatype bt;
        halo_a2a_recv_block(a, p, j, &blk, &bn, &bt);
        for (MPI_Count pos = 0; pos < bytes; pos += chunk) {
            MPI_Count len = bytes - pos < chunk ? bytes - pos : chunk;
            if (contig) {
                halo_bref_t at = halo_bref_add(blk, (int64_t)pos);
                halo_sched_send(s_p, round + 1, at, len, MPI_BYTE, j);
                halo_sched_recv(s_p, round + 1, in, len, MPI_BYTE, j);
                halo_sched_copy(s_p, round + 1, in, len, MPI_BYTE, at, len, MPI_BYTE);
            } else {
                halo_sched_pack(s_p, round, blk, bn, bt, pos, len, out);
                halo_sched_send(s_p, round + 1, out, len, MPI_BYTE, j);
                halo_sched_recv(s_p, round + 1, in, len, MPI_BYTE, j);
                halo_sched_unpack(s_p, round + 1, in, pos, len, blk, bn, bt);
            }
            round++;
        }
    }
    return MPI_SUCCESS;
}
