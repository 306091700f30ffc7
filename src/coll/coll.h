/* Collectives as the rest of the library calls them (blocking, on internal
 * objects), and the start hook of persistent collective requests. */
#ifndef HALO_COLL_COLL_H
#define HALO_COLL_COLL_H

#include "coll/sched.h"

void halo_coll_init(void);

int halo_coll_barrier(halo_comm_t *c);
int halo_coll_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c);
int halo_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op, halo_comm_t *c);
int halo_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c);

int halo_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rtype, halo_comm_t *c);

#endif
