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
    int round = 0;
    if (me > 0) {
        halo_bref_t tmp = halo_sched_span(s_p, count, type);
        halo_sched_recv(s_p, round, tmp, count, type, me - 1);
        if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, round, halo_addr(a->sbuf), count, type, rb, count, type);
        halo_sched_reduce(s_p, round++, tmp, rb, count, type, a->op);
    } else if (a->sbuf != MPI_IN_PLACE) {
        halo_sched_copy(s_p, round++, halo_addr(a->sbuf), count, type, rb, count, type);
    }
    if (me < p - 1)
        halo_sched_send(s_p, round, rb, count, type, me + 1);
    return MPI_SUCCESS;
}
