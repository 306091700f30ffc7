/* Scatter and Scatterv through shared memory: the root packs each member's
 * block into that member's slot, chunk by chunk (two halves), and each
 * member unpacks its own.
 *
 * Cost: per chunk of 32 KiB, two flag transfers of latency; the root
 * copies p - 1 blocks in, each member its block out; no message. Any
 * datatypes, in place at the root. One node. When the p - 1 blocks of a
 * Scatter fit together in the spare bytes of the root's flag line, they
 * travel there (one line moves per member, as a small Bcast's), not in
 * each member's own line, which the root would have to take from the
 * member and the member take back.
 *
 * shm_linear (Scatterv): each block goes the way the Scatter table would
 * send a block of its size (halo_coll_block_by_shm), through the slot or
 * as a message straight from its place (as linear does); root and member
 * agree on it from the block's size, which both know. The root sends its
 * messages after the slots are filled, so the members served through the
 * slots do not wait for the large blocks, and copies its own block last
 * when it sends any; a member that receives a message
 * raises its flag to DONE first, since the root may wait for its flag
 * before it sends. */
#include "coll/algos.h"
#include "coll/select.h"
#include "coll/shm.h"

static int scatter_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool by_block)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;
    MPI_Aint sext = me == root ? halo_type_extent(a->stype) : 0;
#define SCOUNT(j) (a->scounts ? a->scounts[j] : a->scount)
#define SDISPL(j) (a->sdispls ? a->sdispls[j] : (MPI_Aint)(j) * (MPI_Aint)a->scount)
    bool own = me == root && a->rbuf != MPI_IN_PLACE;
#define OWN_COPY(round)                                                                           \
    halo_sched_copy(s_p, (round), halo_addr((const char *)a->sbuf + SDISPL(me) * sext), SCOUNT(me), \
                    a->stype, halo_addr(a->rbuf), a->rcount, a->rtype)
    if (own && (!by_block || nm == 1))
        OWN_COPY(0);
    if (nm == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    /* Scatter's blocks all have one size, which every member knows: when
     * they fit the root's line together, member j's sits at its index
     * among the others (Scatterv's members know their own size only). */
    bool uniform = a->kind == HALO_COLL_SCATTER;
    MPI_Count each = !uniform ? 0 : me == root ? a->scount * halo_type_size(a->stype)
                                              : a->rcount * halo_type_size(a->rtype);
    bool in_root_line = uniform && each > 0 && (nm - 1) * each <= HALO_SHM_LINE_BYTES;
#define ROOT_LINE(j) halo_line(root, ((j) - ((j) > root)) * each)
    if (me != root) {
        MPI_Count n = a->rcount * halo_type_size(a->rtype), nk = halo_shm_nchunks(n);
        if (by_block && !halo_coll_block_by_shm(HALO_COLL_SCATTER, c, n)) {
            halo_shm_wait_prev(s_p, 0);
            halo_shm_set(s_p, 0, HALO_SHM_DONE);
            halo_sched_recv(s_p, 1, halo_addr(a->rbuf), a->rcount, a->rtype, root);
            return MPI_SUCCESS;
        }
        for (MPI_Count k = 0; k < nk; k++) {
            int r = (int)k;
            if (k == 0)
                halo_shm_wait_prev(s_p, r);
            halo_shm_wait(s_p, r, root, (int)k + 1);
            halo_bref_t from = in_root_line ? ROOT_LINE(me) : halo_shm_block(me, n, (k % 2) * HALO_CSHM_HALF);
            halo_sched_unpack(s_p, r, from, k * HALO_CSHM_HALF, halo_shm_chunk_bytes(n, k),
                              halo_addr(a->rbuf), a->rcount, a->rtype);
            halo_shm_set(s_p, r, k == nk - 1 ? HALO_SHM_DONE : (int)k + 1);
        }
        return MPI_SUCCESS;
    }
    /* Members are communicator ranks here (one node). */
    bool *msg = by_block ? halo_calloc((size_t)nm, sizeof *msg) : NULL;
    MPI_Count ssize = halo_type_size(a->stype), rounds = 1;
    for (int j = 0; j < nm; j++) {
        MPI_Count bytes = SCOUNT(j) * ssize;
        if (j == me)
            continue;
        if (msg && !halo_coll_block_by_shm(HALO_COLL_SCATTER, c, bytes))
            msg[j] = true;
        else if (halo_shm_nchunks(bytes) > rounds)
            rounds = halo_shm_nchunks(bytes);
    }
    for (MPI_Count k = 0; k < rounds; k++) {
        int r = (int)k;
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        if (k >= 2)   /* every member has copied chunk k - 2 out of this half */
            halo_shm_wait(s_p, r, HALO_SHM_ALL, (int)k - 1);
        for (int j = 0; j < nm; j++) {
            MPI_Count len = halo_shm_chunk_bytes(SCOUNT(j) * ssize, k);
            if (j == me || len == 0 || (msg && msg[j]))
                continue;
            halo_bref_t to = in_root_line ? ROOT_LINE(j)
                                          : halo_shm_block(j, SCOUNT(j) * ssize, (k % 2) * HALO_CSHM_HALF);
            halo_sched_pack(s_p, r, halo_addr((const char *)a->sbuf + SDISPL(j) * sext), SCOUNT(j), a->stype,
                            k * HALO_CSHM_HALF, len, to);
        }
        halo_shm_set(s_p, r, k == rounds - 1 ? HALO_SHM_DONE : (int)k + 1);
    }
    bool sends = false;
    for (int j = 0; msg && j < nm; j++)
        if (msg[j]) {
            (halo_coll_fanout_rdv(SCOUNT(j) * ssize, nm - 1) ? halo_sched_send_rdv : halo_sched_send)(
                s_p, (int)rounds, halo_addr((const char *)a->sbuf + SDISPL(j) * sext), SCOUNT(j), a->stype, j);
            sends = true;
        }
    /* Scatterv: the root's own block is copied after its messages are
     * out, so that no receiver waits for that copy (2 ranks, 1 MiB:
     * 125-138 us copied first). */
    if (own && by_block)
        OWN_COPY(sends ? (int)rounds : 0);
    free(msg);
#undef SCOUNT
#undef SDISPL
#undef ROOT_LINE
#undef OWN_COPY
    return MPI_SUCCESS;
}

int halo_scatter_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scatter_shm(a, c, s_p, false);
}

int halo_scatterv_shm_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scatter_shm(a, c, s_p, true);
}
