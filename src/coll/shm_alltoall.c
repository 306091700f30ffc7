/* Alltoall through shared memory: every member packs chunk k of each of its
 * p - 1 send blocks into its slot (the half of the slot cut in p parts, one
 * per destination), then unpacks from every other member's slot the part
 * meant for it.
 *
 * Cost: per round, two flag transfers of latency; each member copies its
 * n bytes in and n out, in chunks of 32 KiB / p per destination (in one
 * round of up to 64 KiB / p when the blocks fit that); no message. Any
 * datatypes, in place. One node; Alltoall only (the v and w
 * forms have block sizes that no member knows all of, and the rounds must
 * agree: shm_alltoallv.c sends their small blocks in one round and the
 * others as messages). With more than 512 members on the node (chunks
 * under 64 bytes) it falls back to the pairwise exchange. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_alltoall_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    MPI_Count part = (HALO_CSHM_HALF / nm) & ~(MPI_Count)63;
    if (part < 64)
        return halo_alltoall_pairwise(a, c, s_p);
    bool in_place = a->sbuf == MPI_IN_PLACE;
    MPI_Datatype st = in_place ? a->rtype : a->stype;
    MPI_Count sc = in_place ? a->rcount : a->scount;
    const char *sbuf = in_place ? (const char *)a->rbuf : (const char *)a->sbuf;
    MPI_Aint sext = halo_type_extent(st), rext = halo_type_extent(a->rtype);
#define SB(j) halo_addr(sbuf + (MPI_Aint)(j) * sc * sext)
#define RB(j) halo_addr((char *)a->rbuf + (MPI_Aint)(j) * a->rcount * rext)
    if (!in_place)
        halo_sched_copy(s_p, 0, SB(me), sc, st, RB(me), a->rcount, a->rtype);
    if (nm == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    MPI_Count n = sc * halo_type_size(st);
    MPI_Count rounds = n > 0 ? (n + part - 1) / part : 1;
    /* An exchange that fits the whole slot goes in one round: the halves
     * are there for a pipeline (a member packs round k + 1 while the
     * others unpack round k), and each round costs two flag waits, each a
     * round of process switches where ranks outnumber the cores (8 KiB at
     * 8 ranks, 16 KiB at 4). Larger blocks in rounds of the whole slot one
     * after the other, tried with ranks outnumbering the cores: half as
     * many rounds, still behind linear's messages (8 ranks, 16 KiB: 46 us
     * against 39). */
    MPI_Count whole = (HALO_CSHM_SLOT / nm) & ~(MPI_Count)63;
    if (rounds > 1 && n <= whole) {
        part = whole;
        rounds = 1;
    }
    /* Blocks for all members that fit together in the spare bytes of the
     * flag line travel there (8-byte aligned each). */
    MPI_Count lpart = (n + 7) & ~(MPI_Count)7;
    bool line = n > 0 && lpart * nm <= HALO_SHM_LINE_BYTES;
    if (line) {
        part = lpart;
        rounds = 1;
    }
#define OUT(j) (line ? halo_line(me, (j) * part) : halo_slot(me, half + (j) * part))
#define IN(j) (line ? halo_line(j, me * part) : halo_slot(j, half + me * part))
    for (MPI_Count k = 0; k < rounds; k++) {
        int r = 2 * (int)k;
        int64_t half = (k % 2) * HALO_CSHM_HALF;
        MPI_Count pos = k * part, len = n - pos < part ? n - pos : part;
        if (k == 0)
            halo_shm_wait_prev(s_p, r);
        else if (k >= 2)
            halo_shm_wait(s_p, r, HALO_SHM_ALL, 2 * (int)k - 2);
        for (int j = 0; j < nm; j++)
            if (j != me && len > 0)
                halo_sched_pack(s_p, r, SB(j), sc, st, pos, len, OUT(j));
        halo_shm_set(s_p, r, 2 * (int)k + 1);
        halo_shm_wait(s_p, r + 1, HALO_SHM_ALL, 2 * (int)k + 1);
        for (int j = 0; j < nm; j++)
            if (j != me && len > 0)
                halo_sched_unpack(s_p, r + 1, IN(j), pos, len, RB(j), a->rcount,
                                  a->rtype);
        halo_shm_set(s_p, r + 1, k == rounds - 1 ? HALO_SHM_DONE : 2 * (int)k + 2);
    }
#undef SB
#undef RB
#undef OUT
#undef IN
    return MPI_SUCCESS;
}
