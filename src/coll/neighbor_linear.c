/* Neighborhood collectives (Neighbor_allgather(v), Neighbor_alltoall(v,w)),
 * linear: every receive and every send in one round.
 *
 * Receive block i comes from the topology's i-th source and send block j
 * goes to its j-th destination (core/topo.c lists them); a Cartesian
 * neighbor that is MPI_PROC_NULL (the end of a non-periodic dimension)
 * gets no message, and its receive block is left as it was. Nothing is
 * copied locally: a process that is its own neighbor sends to itself, so
 * that every block takes the same path.
 *
 * The same peer may stand at several indices (a multigraph; in a
 * periodic Cartesian dimension of size 1 or 2 the -1 and +1 neighbors are
 * the same process). All messages of the call carry one tag, so they match
 * in posting order between each pair: receives are posted in source order
 * and sends in destination order, so the k-th send to a peer fills the k-th
 * receive from it. For a Cartesian topology the standard wants the block
 * sent to a dimension's -1 neighbor to land in that neighbor's +1 block,
 * and the one sent to the +1 neighbor in its -1 block: sends are posted
 * +1 first, then -1, dimension by dimension, while receives go -1 then +1.
 * Where the two neighbors differ, the order changes nothing.
 *
 * Cost, with d_in sources and d_out destinations and n bytes a block:
 * about max(d_in, d_out) * alpha + (d_in + d_out) * n * beta, every message
 * in flight at once. Any topology, any datatypes (per block for
 * Neighbor_alltoallw), zero counts (the empty messages are still sent:
 * the peer expects them). */
#include "coll/algos.h"

/* Receive block i: address, count, datatype. */
static void recv_block(const halo_coll_args_t *a, int i, halo_bref_t *buf_p, MPI_Count *count_p,
                       MPI_Datatype *type_p)
{
    halo_bref_t base = halo_addr(a->rbuf);
    switch (a->kind) {
    case HALO_COLL_NEIGHBOR_ALLGATHER:
    case HALO_COLL_NEIGHBOR_ALLTOALL:
        *buf_p = halo_bref_add(base, (int64_t)i * a->rcount * halo_type_extent(a->rtype));
        *count_p = a->rcount;
        *type_p = a->rtype;
        break;
    case HALO_COLL_NEIGHBOR_ALLGATHERV:
    case HALO_COLL_NEIGHBOR_ALLTOALLV:
        *buf_p = halo_bref_add(base, (int64_t)a->rdispls[i] * halo_type_extent(a->rtype));
        *count_p = a->rcounts[i];
        *type_p = a->rtype;
        break;
    default:   /* alltoallw: displacements in bytes, a type per block */
        *buf_p = halo_bref_add(base, (int64_t)a->rdispls[i]);
        *count_p = a->rcounts[i];
        *type_p = a->rtypes[i];
        break;
    }
}

/* Send block j. */
static void send_block(const halo_coll_args_t *a, int j, halo_bref_t *buf_p, MPI_Count *count_p,
                       MPI_Datatype *type_p)
{
    halo_bref_t base = halo_addr(a->sbuf);
    switch (a->kind) {
    case HALO_COLL_NEIGHBOR_ALLGATHER:
    case HALO_COLL_NEIGHBOR_ALLGATHERV:   /* the same block to everyone */
        *buf_p = base;
        *count_p = a->scount;
        *type_p = a->stype;
        break;
    case HALO_COLL_NEIGHBOR_ALLTOALL:
        *buf_p = halo_bref_add(base, (int64_t)j * a->scount * halo_type_extent(a->stype));
        *count_p = a->scount;
        *type_p = a->stype;
        break;
    case HALO_COLL_NEIGHBOR_ALLTOALLV:
        *buf_p = halo_bref_add(base, (int64_t)a->sdispls[j] * halo_type_extent(a->stype));
        *count_p = a->scounts[j];
        *type_p = a->stype;
        break;
    default:
        *buf_p = halo_bref_add(base, (int64_t)a->sdispls[j]);
        *count_p = a->scounts[j];
        *type_p = a->stypes[j];
        break;
    }
}

int halo_neighbor_linear(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    halo_neighbors_t nb;
    int rc = halo_topo_neighbors(c, &nb);
    if (rc)
        return rc;
    halo_bref_t buf;
    MPI_Count count;
    MPI_Datatype type;
    for (int i = 0; i < nb.indegree; i++) {
        if (nb.sources[i] == MPI_PROC_NULL)
            continue;
        recv_block(a, i, &buf, &count, &type);
        halo_sched_recv(s_p, 0, buf, count, type, nb.sources[i]);
    }
    /* Cartesian: destinations come in (-1, +1) pairs; post +1 first. */
    int swap = nb.kind == MPI_CART ? 1 : 0;
    for (int k = 0; k < nb.outdegree; k++) {
        int j = k ^ swap;
        if (nb.destinations[j] == MPI_PROC_NULL)
            continue;
        send_block(a, j, &buf, &count, &type);
        halo_sched_send(s_p, 0, buf, count, type, nb.destinations[j]);
    }
    halo_neighbors_free(&nb);
    return MPI_SUCCESS;
}
