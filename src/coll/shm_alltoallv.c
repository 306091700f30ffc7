/* Alltoallv and Alltoallw, block by block (shm_linear): each block goes
 * the way the Alltoall table would send a block of its size, through
 * shared memory when that is the shm algorithm and the block fits its part
 * of the slot, else as a message, as the linear exchange sends it. The
 * sender and the receiver of a block both know its size, so they agree on
 * its way without a word, where no member knows the sizes of all blocks.
 *
 * Slots: member i's slot is cut in p parts of 64 KiB / p bytes (the whole
 * slot: there is one round), part j for member j; blocks small enough
 * that p of them fit the spare bytes of the
 * flag line travel there instead. Round 0: wait for the channel's previous
 * epoch, pack the small blocks, raise the flag to 1. Round 1: wait for
 * every member's flag, post the messages, and once they are done unpack
 * the small blocks meant for this member and raise the flag to DONE.
 *
 * Cost: two flag transfers, and each small block copied in and out; the
 * large ones as linear's messages. One node, not in place (in place, and
 * with more than 1024 members on the node, it hands the call to linear,
 * which every rank then does). */
#include "coll/algos.h"
#include "coll/select.h"
#include "coll/shm.h"

int halo_alltoallv_shm_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;   /* members are communicator ranks (one node) */
    MPI_Count part = (HALO_CSHM_SLOT / nm) & ~(MPI_Count)63;
    MPI_Count lpart = (HALO_SHM_LINE_BYTES / nm) & ~(MPI_Count)7;
    if (a->sbuf == MPI_IN_PLACE || part < 64)
        return halo_alltoall_linear(a, c, s_p);
    halo_bref_t buf, rbuf;
    MPI_Count cnt, rcnt;
    MPI_Datatype type, rtype;
    halo_a2a_send_block(a, nm, me, &buf, &cnt, &type);
    halo_a2a_recv_block(a, nm, me, &rbuf, &rcnt, &rtype);
    halo_sched_copy(s_p, 0, buf, cnt, type, rbuf, rcnt, rtype);
    if (nm == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
#define SMALL(bytes) ((bytes) <= part && halo_coll_block_by_shm(HALO_COLL_ALLTOALL, c, bytes))
    for (int k = 1; k < nm; k++) {
        int dst = (me + k) % nm;
        halo_a2a_send_block(a, nm, dst, &buf, &cnt, &type);
        MPI_Count bytes = cnt * halo_type_size(type);
        if (!SMALL(bytes))
            halo_sched_send(s_p, 1, buf, cnt, type, dst);
        else if (bytes > 0)
            halo_sched_pack(s_p, 0, buf, cnt, type, 0, bytes,
                            bytes <= lpart ? halo_line(me, dst * lpart) : halo_slot(me, dst * part));
    }
    halo_shm_set(s_p, 0, 1);
    halo_shm_wait(s_p, 1, HALO_SHM_ALL, 1);
    for (int k = 1; k < nm; k++) {
        int src = (me - k + nm) % nm;
        halo_a2a_recv_block(a, nm, src, &buf, &cnt, &type);
        MPI_Count bytes = cnt * halo_type_size(type);
        if (!SMALL(bytes))
            halo_sched_recv(s_p, 1, buf, cnt, type, src);
        else if (bytes > 0)
            halo_sched_unpack(s_p, 1, bytes <= lpart ? halo_line(src, me * lpart) : halo_slot(src, me * part),
                              0, bytes, buf, cnt, type);
    }
#undef SMALL
    halo_shm_set(s_p, 1, HALO_SHM_DONE);
    return MPI_SUCCESS;
}
