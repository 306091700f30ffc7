/* Collectives as the rest of the library calls them (blocking, on internal
 * objects), and the start hook of persistent collective requests. The MPI
 * functions themselves are in coll_api.c; docs/collectives.md describes
 * the whole layer. */
#ifndef HALO_COLL_COLL_H
#define HALO_COLL_COLL_H

#include "coll/sched.h"

/* Loads the collective configuration (tuning tables, forced algorithms). */
void halo_coll_init(void);
/* Frees a communicator's collective state (node groups, shared-memory
 * region) when the communicator goes away. */
void halo_coll_comm_free(halo_comm_t *c);
/* Frees the schedules a communicator keeps for reuse. */
void halo_coll_keep_free(halo_comm_t *c);
/* The end of a collective request's schedule (request free, before the
 * request lets go of its communicator c): kept by c for the next
 * identical nonblocking call if one of c's kept entries lent it and it ran
 * without error, else freed. */
void halo_coll_sched_release(halo_comm_t *c, halo_sched_t *s);
/* How many nonblocking calls of this process started a kept schedule. */
long long halo_coll_kept_starts(void);
/* MPI_Start of a persistent collective request: reruns its schedule. */
struct halo_request;
int halo_coll_start(struct halo_request *r);

/* Runs a collective given by its arguments (coll/algos.h): checks them,
 * picks the algorithm, builds its schedule and runs it to completion
 * (BLOCKING), starts it under a new *request (NONBLOCKING), or makes an
 * inactive persistent *request (PERSISTENT). For entry points outside
 * coll_api.c (neighbor_api.c). */
struct halo_coll_args;
enum { HALO_COLL_RUN_BLOCKING, HALO_COLL_RUN_NONBLOCKING, HALO_COLL_RUN_PERSISTENT };
int halo_coll_do(int how, const struct halo_coll_args *a, halo_comm_t *c, MPI_Request *request);
/* The int arrays of the v and w collectives as MPI_Count or MPI_Aint
 * arrays of n entries (NULL for NULL): in `stack` (room for
 * HALO_COLL_WIDEN_STACK entries, or NULL) when they fit, else malloc'd;
 * the caller frees a result that is not its stack. Up to that many the
 * wide copies cost no allocation (four allocations and frees were a
 * tenth of a small Reduce_scatter). */
#define HALO_COLL_WIDEN_STACK 64
MPI_Count *halo_coll_widen_counts(int n, const int *v, MPI_Count *stack);
MPI_Aint *halo_coll_widen_displs(int n, const int *v, MPI_Aint *stack);

int halo_coll_barrier(halo_comm_t *c);
int halo_coll_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c);
int halo_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op, halo_comm_t *c);
int halo_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c);

int halo_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                         const int *rcounts, const int *displs, MPI_Datatype rtype, halo_comm_t *c);

#endif
