/* Scan, linear (a chain).
 *
 * Rank 0's result is its input; rank i waits for rank i-1's result, puts it
 * on the left of its own input, and passes its result on to rank i+1.
 * Cost: (p - 1) * (alpha + n * beta + n * gamma) along the chain (each rank
 * does one reduction). Any p, any operation; in place or not. The choice
 * for two or three ranks, and for large vectors on few ranks. */
#include "coll/algos.h"

int halo_scan_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    halo_bref_t rb = halo_addr(a->rbuf);
    bool in_place = a->sbuf == MPI_IN_PLACE;
    if (me == 0) {
        /* the input is the result: it leaves from where it is */
        if (p > 1)
            halo_sched_send(s_p, 0, in_place ? rb : halo_addr(a->sbuf), count, type, 1);
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, rb, count, type);
        return MPI_SUCCESS;
    }
    if (!in_place && halo_op_commutes(a->op)) {
        /* the left result lands in rb and our input is reduced into it */
        halo_sched_recv(s_p, 0, rb, count, type, me - 1);
        halo_sched_reduce(s_p, 0, halo_addr(a->sbuf), rb, count, type, a->op);
    } else {
        halo_bref_t tmp = halo_sched_span(s_p, count, type);
        halo_sched_recv(s_p, 0, tmp, count, type, me - 1);
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, rb, count, type);
        halo_sched_reduce(s_p, 0, tmp, rb, count, type, a->op);
    }
    if (me < p - 1)
        halo_sched_send(s_p, 1, rb, count, type, me + 1);
    return MPI_SUCCESS;
}
