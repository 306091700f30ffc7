/* The neighborhood collective MPI functions: Neighbor_allgather(v) and
 * Neighbor_alltoall(v,w), blocking, nonblocking (MPI_Ineighbor_...) and
 * persistent (..._init), with their large-count twins.
 *
 * They run as the other collectives do (halo_coll_do, coll_api.c: checks,
 * choice of algorithm, schedule), on the communicator's process topology
 * (core/topo.c); neighbor_linear.c builds the schedule. Arrays have an
 * entry per neighbor: counts and displacements of the sends per
 * destination (outdegree), of the receives per source (indegree). The int
 * forms of the v and w collectives widen theirs (Neighbor_alltoallw's
 * displacements are MPI_Aint in both forms); the int forms of the others
 * reach their _c twins through the binding. */
#include "coll/coll.h"

#include "coll/algos.h"

typedef halo_coll_args_t coll_args_t;

enum {
    RUN_BLOCKING = HALO_COLL_RUN_BLOCKING,
    RUN_NONBLOCKING = HALO_COLL_RUN_NONBLOCKING,
    RUN_PERSISTENT = HALO_COLL_RUN_PERSISTENT
};

static int run(int how, const coll_args_t *a, MPI_Comm comm, MPI_Request *request)
{
    return halo_coll_do(how, a, halo_comm_ptr(comm), request);
}

/* The int arrays (NULL: not given, or given as MPI_Aint already in
 * a->sdispls / a->rdispls) widened to the degrees of the communicator's
 * topology; without one, nothing is widened and halo_coll_do reports it. */
static int run_widened(int how, coll_args_t *a, MPI_Comm comm, MPI_Request *request, const int *sc,
                       const int *sd, const int *rc, const int *rd)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int in = 0, out = 0;
    if (!c->is_inter && c->topo)
        halo_topo_degrees(c, &in, &out);
    MPI_Count cs[2][HALO_COLL_WIDEN_STACK];
    MPI_Aint ds[2][HALO_COLL_WIDEN_STACK];
    MPI_Count *scounts = halo_coll_widen_counts(out, sc, cs[0]), *rcounts = halo_coll_widen_counts(in, rc, cs[1]);
    MPI_Aint *sdispls = halo_coll_widen_displs(out, sd, ds[0]), *rdispls = halo_coll_widen_displs(in, rd, ds[1]);
    if (scounts)
        a->scounts = scounts;
    if (rcounts)
        a->rcounts = rcounts;
    if (sdispls)
        a->sdispls = sdispls;
    if (rdispls)
        a->rdispls = rdispls;
    int code = halo_coll_do(how, a, c, request);
    if (scounts != cs[0])
        free(scounts);
    if (rcounts != cs[1])
        free(rcounts);
    if (sdispls != ds[0])
        free(sdispls);
    if (rdispls != ds[1])
        free(rdispls);
    return code;
}

/* ---------------------------------------------------------------- Neighbor_allgather, Neighbor_alltoall */

#define BLOCK_ARGS(k)                                                                         \
    {.kind = (k), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,               \
     .rcount = rcount, .rtype = rtype}
#define BLOCK_PARAMS                                                                          \
    const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,     \
        MPI_Datatype rtype

int halo_api_neighbor_allgather_c(BLOCK_PARAMS, MPI_Comm comm)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLGATHER);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ineighbor_allgather_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLGATHER);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_neighbor_allgather_init_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLGATHER);
    return run(RUN_PERSISTENT, &a, comm, request);
}

int halo_api_neighbor_alltoall_c(BLOCK_PARAMS, MPI_Comm comm)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLTOALL);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ineighbor_alltoall_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLTOALL);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_neighbor_alltoall_init_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_NEIGHBOR_ALLTOALL);
    return run(RUN_PERSISTENT, &a, comm, request);
}

/* ---------------------------------------------------------------- Neighbor_allgatherv */

#define ALLGATHERV_ARGS                                                                       \
    {.kind = HALO_COLL_NEIGHBOR_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,   \
     .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs, .rtype = rtype}
#define ALLGATHERV_INT_ARGS                                                                   \
    {.kind = HALO_COLL_NEIGHBOR_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,   \
     .rbuf = rbuf, .rtype = rtype}
#define ALLGATHERV_PARAMS_C                                                                   \
    const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, const MPI_Count rcounts[], \
        const MPI_Aint displs[], MPI_Datatype rtype
#define ALLGATHERV_PARAMS                                                                     \
    const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],        \
        const int displs[], MPI_Datatype rtype

int halo_api_neighbor_allgatherv_c(ALLGATHERV_PARAMS_C, MPI_Comm comm)
{
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ineighbor_allgatherv_c(ALLGATHERV_PARAMS_C, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_neighbor_allgatherv_init_c(ALLGATHERV_PARAMS_C, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_neighbor_allgatherv(ALLGATHERV_PARAMS, MPI_Comm comm)
{
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, NULL, NULL, rcounts, displs);
}
int halo_api_ineighbor_allgatherv(ALLGATHERV_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, NULL, NULL, rcounts, displs);
}
int halo_api_neighbor_allgatherv_init(ALLGATHERV_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, NULL, NULL, rcounts, displs);
}

/* ---------------------------------------------------------------- Neighbor_alltoallv */

#define ALLTOALLV_ARGS                                                                        \
    {.kind = HALO_COLL_NEIGHBOR_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, \
     .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype}
#define ALLTOALLV_INT_ARGS                                                                    \
    {.kind = HALO_COLL_NEIGHBOR_ALLTOALLV, .sbuf = sbuf, .stype = stype, .rbuf = rbuf, .rtype = rtype}
#define ALLTOALLV_PARAMS_C                                                                    \
    const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype, \
        void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype
#define ALLTOALLV_PARAMS                                                                      \
    const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf, \
        const int rcounts[], const int rdispls[], MPI_Datatype rtype

int halo_api_neighbor_alltoallv_c(ALLTOALLV_PARAMS_C, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLV_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ineighbor_alltoallv_c(ALLTOALLV_PARAMS_C, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLV_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_neighbor_alltoallv_init_c(ALLTOALLV_PARAMS_C, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLV_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_neighbor_alltoallv(ALLTOALLV_PARAMS, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, scounts, sdispls, rcounts, rdispls);
}
int halo_api_ineighbor_alltoallv(ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}
int halo_api_neighbor_alltoallv_init(ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}

/* ---------------------------------------------------------------- Neighbor_alltoallw */

#define ALLTOALLW_ARGS                                                                        \
    {.kind = HALO_COLL_NEIGHBOR_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls, \
     .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtypes = rtypes}
#define ALLTOALLW_INT_ARGS                                                                    \
    {.kind = HALO_COLL_NEIGHBOR_ALLTOALLW, .sbuf = sbuf, .sdispls = sdispls, .stypes = stypes, \
     .rbuf = rbuf, .rdispls = rdispls, .rtypes = rtypes}
#define ALLTOALLW_PARAMS_C                                                                    \
    const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],                    \
        const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],                   \
        const MPI_Aint rdispls[], const MPI_Datatype rtypes[]
#define ALLTOALLW_PARAMS                                                                      \
    const void *sbuf, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[], \
        void *rbuf, const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[]

int halo_api_neighbor_alltoallw_c(ALLTOALLW_PARAMS_C, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLW_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ineighbor_alltoallw_c(ALLTOALLW_PARAMS_C, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLW_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_neighbor_alltoallw_init_c(ALLTOALLW_PARAMS_C, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLW_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_neighbor_alltoallw(ALLTOALLW_PARAMS, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, scounts, NULL, rcounts, NULL);
}
int halo_api_ineighbor_alltoallw(ALLTOALLW_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, scounts, NULL, rcounts, NULL);
}
int halo_api_neighbor_alltoallw_init(ALLTOALLW_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, scounts, NULL, rcounts, NULL);
}
