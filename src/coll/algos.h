/* Collective algorithms: each builds a schedule (coll/sched.h) and lives in
 * a file of its own whose header comment gives its cost model, in the
 * usual alpha (latency), beta (time per byte), gamma (reduction time per
 * byte) terms, and its restrictions. */
#ifndef HALO_COLL_ALGOS_H
#define HALO_COLL_ALGOS_H

#include "coll/sched.h"

int halo_barrier_dissemination(halo_comm_t *c, halo_sched_t **s_p);
int halo_bcast_binomial(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c,
                        halo_sched_t **s_p);
int halo_allreduce_recursive_doubling(const void *sbuf, void *rbuf, MPI_Count count,
                                      MPI_Datatype type, MPI_Op op, halo_comm_t *c,
                                      halo_sched_t **s_p);
int halo_allgather_ring(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c, halo_sched_t **s_p);

int halo_allgatherv_ring(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                         const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype,
                         halo_comm_t *c, halo_sched_t **s_p);

#endif
