/* Allgather and Allgatherv on an intercommunicator.
 *
 * Allgather: every process sends its block to the remote group's leader,
 * which receives the q blocks of the other group straight into its receive
 * buffer; each leader then broadcasts its buffer over its own group (by the
 * algorithm the tables choose). Cost: (q - 1) alpha + q n beta at a leader,
 * plus a local broadcast of q n bytes.
 *
 * Allgatherv: the blocks lie anywhere in the receive buffer, which one
 * broadcast cannot move, so every process sends its block straight to
 * every remote process and receives theirs into place, all at once.
 * Cost: (q - 1) alpha + q (n_out + n_in) beta a process. Any datatypes. */
#include "coll/algos.h"

int halo_inter_allgather(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, halo_inter_rr(x, 0));
    if (x->me == 0) {
        MPI_Aint block = (MPI_Aint)a->rcount * halo_type_extent(a->rtype);
        for (int j = 0; j < x->q; j++)
            halo_sched_recv(s_p, 0, halo_bref_add(halo_addr(a->rbuf), (int64_t)j * block), a->rcount,
                            a->rtype, halo_inter_rr(x, j));
    }
    int next;
    return halo_inter_local_bcast(x, s_p, 1, a->rbuf, (MPI_Count)x->q * a->rcount, a->rtype, &next);
}

int halo_inter_allgatherv(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p)
{
    MPI_Aint ext = halo_type_extent(a->rtype);
    /* Start at a different remote process on each rank. */
    for (int k = 0; k < x->q; k++) {
        int j = (x->me + k) % x->q;
        halo_bref_t b = halo_bref_add(halo_addr(a->rbuf), (int64_t)a->rdispls[j] * ext);
        halo_sched_recv(s_p, 0, b, a->rcounts[j], a->rtype, halo_inter_rr(x, j));
        halo_sched_send(s_p, 0, halo_addr(a->sbuf), a->scount, a->stype, halo_inter_rr(x, j));
    }
    return MPI_SUCCESS;
}
