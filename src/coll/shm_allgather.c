/* Allgather and Allgatherv through shared memory: every member packs its
 * block into its slot, chunk by chunk (two halves), then unpacks every
 * other member's chunk into its receive buffer.
 *
 * Cost: per chunk of 32 KiB (one chunk when every block fits 64 KiB), two
 * flag transfers of latency; each member copies its block in and p - 1
 * blocks out; no message. Any datatypes, in place. One node. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_allgather_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    MPI_Aint rext = halo_type_extent(a->rtype);
    MPI_Count rsize = halo_type_size(a->rtype);
    halo_bref_t mine = halo_addr((char *)a->rbuf + halo_ag_displ(a, me) * rext);
    /* The block this member contributes: its send buffer, or its place in
     * the receive buffer when in place. */
    halo_bref_t in = a->sbuf == MPI_IN_PLACE ? mine : halo_addr(a->sbuf);
    MPI_Count in_count = a->sbuf == MPI_IN_PLACE ? halo_ag_count(a, me) : a->scount;
    MPI_Datatype in_type = a->sbuf == MPI_IN_PLACE ? a->rtype : a->stype;
    if (a->sbuf != MPI_IN_PLACE)
        halo_sched_copy(s_p, 0, in, in_count, in_type, mine, halo_ag_count(a, me), a->rtype);
    if (nm == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    MPI_Count n = in_count * halo_type_size(in_type), most = 0;
    for (int j = 0; j < nm; j++)
        if (halo_ag_count(a, j) * rsize > most)
            most = halo_ag_count(a, j) * rsize;
    /* Chunks of half a slot make a pipeline of rounds, each with two flag
     * waits; blocks that all fit the whole slot go in one round, chunk
     * csz (forced, five alternations, 40-64 KiB blocks: 0.73-0.83 of the
     * time of two rounds at 3, 4 and 8 ranks on two cores, 0.94-0.95 at
     * 2). */
    const MPI_Count csz = most > HALO_CSHM_HALF && most <= HALO_CSHM_SLOT ? HALO_CSHM_SLOT : HALO_CSHM_HALF;
    MPI_Count rounds = halo_shm_nchunks_of(most, csz);
    for (MPI_Count k = 0; k < rounds; k++) {
        int r = 2 * (int)k;
        int64_t half = (k % 2) * HALO_CSHM_HALF;
        /* In: everyone has copied chunk k - 2 out of this half. */
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else if (k >= 2)
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 2 * (int)k - 2);
        MPI_Count len = halo_shm_chunk_bytes_of(n, k, csz);
        if (len > 0)
            halo_sched_pack(s_p, r, in, in_count, in_type, k * csz, len, halo_shm_block(me, n, half));
        halo_shm_set(s_p, r, 2 * (int)k + 1);
        /* Out: the others' chunks k. */
        halo_shm_wait(s_p, r + 1, HALO_SHM_ALL, 2 * (int)k + 1);
        for (int j = 0; j < nm; j++) {
            MPI_Count cnt = halo_ag_count(a, j), jl = halo_shm_chunk_bytes_of(cnt * rsize, k, csz);
            if (j != me && jl > 0)
                halo_sched_unpack(s_p, r + 1, halo_shm_block(j, cnt * rsize, half), k * csz, jl,
                                  halo_addr((char *)a->rbuf + halo_ag_displ(a, j) * rext), cnt, a->rtype);
        }
        halo_shm_set(s_p, r + 1, k == rounds - 1 ? HALO_SHM_DONE : 2 * (int)k + 2);
    }
    return MPI_SUCCESS;
}
