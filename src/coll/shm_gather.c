/* Gather and Gatherv through shared memory: every member packs its block
 * into its slot, chunk by chunk (two halves), and the root unpacks each
 * member's chunks into their places in its receive buffer.
 *
 * Cost: per chunk of 32 KiB, two flag transfers of latency; each member
 * copies its block in, the root copies p - 1 blocks out; no message. Any
 * datatypes, in place at the root. One node.
 *
 * shm_linear (Gatherv): each block goes the way the Gather table would
 * send a block of its size (halo_coll_block_by_shm), through the slot or
 * as a message straight into place (as linear does). Root and member both
 * know a block's size, so they agree without a word, where no rank but
 * the root knows the sizes of the others' blocks: small blocks pay no
 * message, large ones no copy through the slots. A member that sends a
 * message raises its flag to DONE before sending, so that the root, which
 * waits for every flag before it posts its receives, never waits for it. */
#include "coll/algos.h"
#include "coll/select.h"
#include "coll/shm.h"

static int gather_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool by_block)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;
    MPI_Aint rext = me == root ? halo_type_extent(a->rtype) : 0;
    if (me == root && a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype,
                        halo_addr((char *)a->rbuf + halo_ag_displ(a, me) * rext), halo_ag_count(a, me),
                        a->rtype);
    if (nm == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    if (me != root) {
        MPI_Count n = a->scount * halo_type_size(a->stype), nk = halo_shm_nchunks(n);
        if (by_block && !halo_coll_block_by_shm(HALO_COLL_GATHER, c, n)) {
            halo_shm_wait_prev(s_p, 0);
            halo_shm_set(s_p, 0, HALO_SHM_DONE);
            halo_sched_send(s_p, 1, halo_addr(a->sbuf), a->scount, a->stype, root);
            return MPI_SUCCESS;
        }
        for (MPI_Count k = 0; k < nk; k++) {
            int r = (int)k;
            if (k == 0)
                halo_shm_wait_prev(s_p, r);
            if (k >= 2)   /* the root has copied chunk k - 2 out of this half */
                halo_shm_wait(s_p, r, root, (int)k - 1);
            halo_sched_pack(s_p, r, halo_addr(a->sbuf), a->scount, a->stype, k * HALO_CSHM_HALF,
                            halo_shm_chunk_bytes(n, k),
                            halo_shm_block(me, n, (k % 2) * HALO_CSHM_HALF));
            halo_shm_set(s_p, r, k == nk - 1 ? HALO_SHM_DONE : (int)k + 1);
        }
        return MPI_SUCCESS;
    }
    /* Members are communicator ranks here (one node). */
    bool *msg = by_block ? halo_calloc((size_t)nm, sizeof *msg) : NULL;
    MPI_Count rsize = halo_type_size(a->rtype), rounds = 1;
    for (int j = 0; j < nm; j++) {
        MPI_Count bytes = halo_ag_count(a, j) * rsize;
        if (j == me)
            continue;
        if (msg && !halo_coll_block_by_shm(HALO_COLL_GATHER, c, bytes)) {
            msg[j] = true;
            halo_sched_recv(s_p, 0, halo_addr((char *)a->rbuf + halo_ag_displ(a, j) * rext),
                            halo_ag_count(a, j), a->rtype, j);
        } else if (halo_shm_nchunks(bytes) > rounds) {
            rounds = halo_shm_nchunks(bytes);
        }
    }
    for (MPI_Count k = 0; k < rounds; k++) {
        int r = (int)k;
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        halo_shm_wait(s_p, r, HALO_SHM_ALL, (int)k + 1);
        for (int j = 0; j < nm; j++) {
            MPI_Count cnt = halo_ag_count(a, j), len = halo_shm_chunk_bytes(cnt * rsize, k);
            if (j == me || len == 0 || (msg && msg[j]))
                continue;
            halo_bref_t from = halo_shm_block(j, cnt * rsize, (k % 2) * HALO_CSHM_HALF);
            halo_sched_unpack(s_p, r, from, k * HALO_CSHM_HALF, len,
                              halo_addr((char *)a->rbuf + halo_ag_displ(a, j) * rext), cnt, a->rtype);
        }
        halo_shm_set(s_p, r, k == rounds - 1 ? HALO_SHM_DONE : (int)k + 1);
    }
    free(msg);
    return MPI_SUCCESS;
}

int halo_gather_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return gather_shm(a, c, s_p, false);
}

int halo_gatherv_shm_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return gather_shm(a, c, s_p, true);
}
