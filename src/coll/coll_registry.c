/* The registry: every collective algorithm, once. Adding an algorithm is
 * its file plus one line here (and, if it should be chosen by default, a
 * rule in tuning_default.c). The order within a collective matters: when
 * no tuning rule applies, the first usable algorithm is taken, so each
 * collective starts with one that has no restrictions.
 *
 * Shared-memory algorithms (HALO_ALG_ONE_NODE) and two-level ones that
 * compose a node-level and a network-level algorithm (HALO_ALG_MULTI_NODE)
 * go in each collective's list like the others; their restrictions keep
 * them out of the way where they do not apply. */
#include "coll/select.h"

#include "coll/shm.h"
#include "core/halo.h"
#include "transport/transport.h"

#define ALG(coll, name, fn, restr, cost) {HALO_COLL_##coll, name, fn, restr, cost}

const halo_coll_algo_t halo_coll_algos[] = {
    ALG(BARRIER, "dissemination", halo_barrier_dissemination, 0, "ceil(lg p) a"),

    ALG(BCAST, "binomial", halo_bcast_binomial, 0, "lg p (a + n b)"),
    ALG(BCAST, "scatter_allgather", halo_bcast_scatter_allgather, 0, "(lg p + p) a + 2n b"),
    ALG(BCAST, "pipeline", halo_bcast_pipeline, 0, "(p + s) (a + n/s b), s segments"),
    ALG(BCAST, "linear", halo_bcast_linear, 0, "(p-1) a + n b per receiver, all at once"),

    ALG(GATHER, "linear", halo_gather_linear, 0, "(p-1) a + n b"),
    ALG(GATHER, "binomial", halo_gather_binomial, 0, "lg p a + n b"),
    ALG(GATHERV, "linear", halo_gather_linear, 0, "(p-1) a + n b"),

    ALG(SCATTER, "linear", halo_scatter_linear, 0, "(p-1) a + n b"),
    ALG(SCATTER, "binomial", halo_scatter_binomial, 0, "lg p a + n b"),
    ALG(SCATTERV, "linear", halo_scatter_linear, 0, "(p-1) a + n b"),

    ALG(ALLGATHER, "ring", halo_allgather_ring, 0, "(p-1) a + n b"),
    ALG(ALLGATHER, "bruck", halo_allgather_bruck, 0, "ceil(lg p) a + n b + copy n"),
    ALG(ALLGATHER, "recursive_doubling", halo_allgather_recursive_doubling, HALO_ALG_POF2,
        "lg p a + n b"),
    ALG(ALLGATHER, "linear", halo_allgather_linear, 0, "(p-1) a + n b, all at once"),
    ALG(ALLGATHERV, "ring", halo_allgatherv_ring, 0, "(p-1) a + n b"),
    ALG(ALLGATHERV, "linear", halo_allgather_linear, 0, "(p-1) a + n b, all at once"),
    ALG(ALLGATHERV, "bruck", halo_allgather_bruck, 0, "ceil(lg p) a + n b + copy n"),
    ALG(ALLGATHERV, "recursive_doubling", halo_allgatherv_recursive_doubling, HALO_ALG_POF2,
        "lg p a + n b + copy n"),

    ALG(ALLTOALL, "pairwise", halo_alltoall_pairwise, 0, "(p-1) (a + n/p b)"),
    ALG(ALLTOALL, "linear", halo_alltoall_linear, 0, "(p-1) a + n b, all at once"),
    ALG(ALLTOALL, "bruck", halo_alltoall_bruck, 0, "ceil(lg p) (a + n/2 b) + copies"),
    ALG(ALLTOALLV, "pairwise", halo_alltoall_pairwise, 0, "(p-1) (a + n/p b)"),
    ALG(ALLTOALLV, "linear", halo_alltoall_linear, 0, "(p-1) a + n b, all at once"),
    ALG(ALLTOALLW, "pairwise", halo_alltoall_pairwise, 0, "(p-1) (a + n/p b)"),
    ALG(ALLTOALLW, "linear", halo_alltoall_linear, 0, "(p-1) a + n b, all at once"),

    ALG(REDUCE, "binomial", halo_reduce_binomial, 0, "lg p (a + n b + n g)"),
    ALG(REDUCE, "rabenseifner", halo_reduce_rabenseifner, 0, "2 lg p a + 2n b + n g"),

    ALG(ALLREDUCE, "recursive_doubling", halo_allreduce_recursive_doubling, 0,
        "lg p (a + n b + n g)"),
    ALG(ALLREDUCE, "rabenseifner", halo_allreduce_rabenseifner, 0, "2 lg p a + 2n b + n g"),
    ALG(ALLREDUCE, "ring", halo_allreduce_ring, HALO_ALG_COMMUTATIVE, "2(p-1) a + 2n b + n g"),

    ALG(REDUCE_SCATTER, "pairwise", halo_reduce_scatter_pairwise, 0, "(p-1) a + n (b + g)"),
    ALG(REDUCE_SCATTER, "recursive_halving", halo_reduce_scatter_recursive_halving,
        HALO_ALG_COMMUTATIVE, "lg p a + n (b + g)"),
    ALG(REDUCE_SCATTER_BLOCK, "pairwise", halo_reduce_scatter_pairwise, 0, "(p-1) a + n (b + g)"),
    ALG(REDUCE_SCATTER_BLOCK, "recursive_halving", halo_reduce_scatter_recursive_halving,
        HALO_ALG_COMMUTATIVE, "lg p a + n (b + g)"),

    ALG(SCAN, "recursive_doubling", halo_scan_recursive_doubling, 0, "lg p (a + n b + 2n g)"),
    ALG(SCAN, "linear", halo_scan_linear, 0, "(p-1) (a + n b + n g)"),
    ALG(EXSCAN, "recursive_doubling", halo_exscan_recursive_doubling, 0, "lg p (a + n b + 2n g)"),
    ALG(EXSCAN, "linear", halo_exscan_linear, 0, "(p-1) (a + n b + n g)"),
    ALG(SCAN, "pipeline", halo_scan_pipeline, 0, "(p + s) (a + n/s (b + g)), s segments"),
    ALG(EXSCAN, "pipeline", halo_exscan_pipeline, 0, "(p + s) (a + n/s (b + g)), s segments"),

    /* Neighborhood collectives: d_in receives and d_out sends, of n bytes. */
#define NEIGHBOR_COST "max(d_in, d_out) a + (d_in + d_out) n b, all at once"
    ALG(NEIGHBOR_ALLGATHER, "linear", halo_neighbor_linear, 0, NEIGHBOR_COST),
    ALG(NEIGHBOR_ALLGATHERV, "linear", halo_neighbor_linear, 0, NEIGHBOR_COST),
    ALG(NEIGHBOR_ALLTOALL, "linear", halo_neighbor_linear, 0, NEIGHBOR_COST),
    ALG(NEIGHBOR_ALLTOALLV, "linear", halo_neighbor_linear, 0, NEIGHBOR_COST),
    ALG(NEIGHBOR_ALLTOALLW, "linear", halo_neighbor_linear, 0, NEIGHBOR_COST),
#undef NEIGHBOR_COST

    /* Shared memory: flags and data in the node group's region, no messages. */
    ALG(BARRIER, "shm", halo_barrier_shm, HALO_ALG_ONE_NODE, "1 flag transfer, L (L-1) lines"),
    ALG(BARRIER, "shm_fan", halo_barrier_shm_fan, HALO_ALG_ONE_NODE, "2 flag transfers, 2 (L-1) lines"),
    ALG(BCAST, "shm", halo_bcast_shm, HALO_ALG_ONE_NODE,
        "per 32K chunk: 2 flag transfers + copy in, copy out"),
    ALG(BCAST, "cma", halo_bcast_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + one read of n per member, straight from the root"),
    ALG(REDUCE, "shm", halo_reduce_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 32K chunk: 2 flag transfers + copy in + (p-1) n g at root"),
    ALG(ALLREDUCE, "shm", halo_allreduce_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 2 flag transfers + copy in + (p-1) n g"),
    ALG(ALLREDUCE, "shm_rsag", halo_allreduce_shm_rsag, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 3 flag transfers + copy in + (p-1)/p n (g + copy)"),
    ALG(ALLREDUCE, "cma", halo_allreduce_cma, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE | HALO_ALG_CMA,
        "2 flag transfers + (p-1)/p n (read + g + write), 2(p-1) system calls per 128K of part"),
    ALG(REDUCE_SCATTER, "shm", halo_reduce_scatter_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 2 flag transfers + copy in + (p-1) n/p g"),
    ALG(REDUCE_SCATTER_BLOCK, "shm", halo_reduce_scatter_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 2 flag transfers + copy in + (p-1) n/p g"),
    ALG(SCAN, "shm", halo_scan_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 2 flag transfers + copy in + up to (p-1) n g"),
    ALG(EXSCAN, "shm", halo_exscan_shm, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 2 flag transfers + copy in + up to (p-2) n g"),
    ALG(SCAN, "shm_parts", halo_scan_shm_parts, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 3 flag transfers + copy in + (p-1)/p n g + copy out"),
    ALG(EXSCAN, "shm_parts", halo_exscan_shm_parts, HALO_ALG_ONE_NODE | HALO_ALG_SHM_TYPE,
        "per 64K chunk: 3 flag transfers + copy in + (p-2)/p n g + copy out"),
    ALG(GATHER, "shm", halo_gather_shm, HALO_ALG_ONE_NODE, "per 32K chunk: 2 flag transfers + copy in, p-1 copies out"),
    ALG(GATHER, "cma", halo_gather_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + each member writes its block straight into the root's buffer"),
    ALG(GATHERV, "shm", halo_gather_shm, HALO_ALG_ONE_NODE, "per 32K chunk: 2 flag transfers + copy in, p-1 copies out"),
    ALG(GATHERV, "shm_linear", halo_gatherv_shm_linear, HALO_ALG_ONE_NODE,
        "each block as Gather's table sends its size: shm, else linear's message"),
    ALG(SCATTER, "shm", halo_scatter_shm, HALO_ALG_ONE_NODE, "per 32K chunk: 2 flag transfers + p-1 copies in, copy out"),
    ALG(SCATTER, "cma", halo_scatter_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + each member reads its block straight from the root's buffer"),
    ALG(SCATTERV, "shm", halo_scatter_shm, HALO_ALG_ONE_NODE, "per 32K chunk: 2 flag transfers + p-1 copies in, copy out"),
    ALG(SCATTERV, "shm_linear", halo_scatterv_shm_linear, HALO_ALG_ONE_NODE,
        "each block as Scatter's table sends its size: shm, else linear's message"),
    ALG(ALLGATHER, "shm", halo_allgather_shm, HALO_ALG_ONE_NODE,
        "per 32K chunk: 2 flag transfers + copy in, p-1 copies out"),
    ALG(ALLGATHERV, "shm", halo_allgather_shm, HALO_ALG_ONE_NODE,
        "per 32K chunk: 2 flag transfers + copy in, p-1 copies out"),
    ALG(ALLGATHER, "cma", halo_allgather_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + each member reads every other block straight from its owner"),
    ALG(ALLGATHERV, "cma", halo_allgather_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + each member reads every other block straight from its owner"),
    ALG(ALLTOALL, "shm", halo_alltoall_shm, HALO_ALG_ONE_NODE,
        "per 32K/p per destination (one round up to 64K/p): 2 flag transfers + n copied in, n out"),
    ALG(ALLTOALL, "cma", halo_alltoall_cma, HALO_ALG_ONE_NODE | HALO_ALG_CMA,
        "2 flag transfers + each member reads its blocks straight from their senders"),
    ALG(ALLTOALLV, "shm_linear", halo_alltoallv_shm_linear, HALO_ALG_ONE_NODE,
        "each block as Alltoall's table sends its size (shm within 64K/p), else linear's message"),
    ALG(ALLTOALLW, "shm_linear", halo_alltoallv_shm_linear, HALO_ALG_ONE_NODE,
        "each block as Alltoall's table sends its size (shm within 64K/p), else linear's message"),

    /* Two levels: shared memory on each node, the network among node leaders. */
    ALG(BARRIER, "two_level", halo_barrier_two_level, HALO_ALG_MULTI_NODE,
        "2 flag transfers + leaders' barrier"),
    ALG(BCAST, "two_level", halo_bcast_two_level, HALO_ALG_MULTI_NODE,
        "leaders' bcast + shm bcast per node"),
    ALG(REDUCE, "two_level", halo_reduce_two_level,
        HALO_ALG_MULTI_NODE | HALO_ALG_SHM_TYPE | HALO_ALG_NODE_ORDER,
        "shm reduce per node + leaders' reduce (+ n b to a root that is no leader)"),
    ALG(ALLREDUCE, "two_level", halo_allreduce_two_level,
        HALO_ALG_MULTI_NODE | HALO_ALG_SHM_TYPE | HALO_ALG_NODE_ORDER,
        "shm reduce per node + leaders' allreduce + shm bcast per node"),
};
const int halo_coll_nalgos = (int)HALO_ARRAY_LEN(halo_coll_algos);

static const char *const kind_names[HALO_COLL_NKINDS] = {
    [HALO_COLL_BARRIER] = "barrier",
    [HALO_COLL_BCAST] = "bcast",
    [HALO_COLL_GATHER] = "gather",
    [HALO_COLL_GATHERV] = "gatherv",
    [HALO_COLL_SCATTER] = "scatter",
    [HALO_COLL_SCATTERV] = "scatterv",
    [HALO_COLL_ALLGATHER] = "allgather",
    [HALO_COLL_ALLGATHERV] = "allgatherv",
    [HALO_COLL_ALLTOALL] = "alltoall",
    [HALO_COLL_ALLTOALLV] = "alltoallv",
    [HALO_COLL_ALLTOALLW] = "alltoallw",
    [HALO_COLL_REDUCE] = "reduce",
    [HALO_COLL_ALLREDUCE] = "allreduce",
    [HALO_COLL_REDUCE_SCATTER] = "reduce_scatter",
    [HALO_COLL_REDUCE_SCATTER_BLOCK] = "reduce_scatter_block",
    [HALO_COLL_SCAN] = "scan",
    [HALO_COLL_EXSCAN] = "exscan",
    [HALO_COLL_NEIGHBOR_ALLGATHER] = "neighbor_allgather",
    [HALO_COLL_NEIGHBOR_ALLGATHERV] = "neighbor_allgatherv",
    [HALO_COLL_NEIGHBOR_ALLTOALL] = "neighbor_alltoall",
    [HALO_COLL_NEIGHBOR_ALLTOALLV] = "neighbor_alltoallv",
    [HALO_COLL_NEIGHBOR_ALLTOALLW] = "neighbor_alltoallw",
};

const char *halo_coll_kind_name(halo_coll_kind_t k)
{
    return (k >= 0 && k < HALO_COLL_NKINDS) ? kind_names[k] : "?";
}

int halo_coll_kind_from_name(const char *name)
{
    for (int k = 0; k < HALO_COLL_NKINDS; k++)
        if (!strcmp(kind_names[k], name))
            return k;
    return -1;
}

const halo_coll_algo_t *halo_coll_algo_find(halo_coll_kind_t k, const char *name)
{
    for (int i = 0; i < halo_coll_nalgos; i++)
        if (halo_coll_algos[i].coll == k && !strcmp(halo_coll_algos[i].name, name))
            return &halo_coll_algos[i];
    return NULL;
}

void halo_coll_facts(const halo_coll_args_t *a, halo_comm_t *c, halo_coll_facts_t *f)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    f->p = c->size;
    f->ppn = t->max_local;
    f->one_node = t->one_node;
    f->node_blocks = t->node_blocks;
    f->commute = !a->op || a->op == MPI_OP_NULL || halo_op_commutes(a->op);
    f->shm_type = true;
    f->flat = false;
    f->oversub = halo_coll_node_oversubscribed();
    f->cma = halo_tr_cma_node();
    f->bound = halo_tr_node_bound();
    if (a->op && a->op != MPI_OP_NULL) {
        halo_dtype_t *dt = halo_dtype_ptr(a->type);
        f->shm_type = dt->extent > 0 && dt->true_ub - dt->true_lb <= HALO_CSHM_HALF;
    }
    /* Members from another job share no segment and no memory with this
     * one's: message-passing algorithms only, as between node leaders. */
    if (c->group->far || (c->is_inter && c->remote_group->far)) {
        f->ppn = 1;
        f->one_node = false;
        f->shm_type = false;
        f->flat = true;
        f->oversub = false;
        f->cma = false;
        f->bound = false;
    }
}

const char *halo_coll_algo_unusable(const halo_coll_algo_t *al, const halo_coll_facts_t *f)
{
    unsigned r = al->restrictions;
    if ((r & HALO_ALG_POF2) && !halo_is_pof2(f->p))
        return "the communicator size is not a power of two";
    if ((r & HALO_ALG_COMMUTATIVE) && !f->commute)
        return "the operation is not commutative";
    if ((r & HALO_ALG_ONE_NODE) && !f->one_node)
        return "the communicator spans several nodes";
    if ((r & HALO_ALG_MULTI_NODE) && f->one_node)
        return "the communicator is on one node";
    if ((r & (HALO_ALG_ONE_NODE | HALO_ALG_MULTI_NODE)) && f->flat)
        return "it is node-aware, and the ranks here are node leaders";
    if ((r & HALO_ALG_NODE_ORDER) && !f->commute && !f->node_blocks)
        return "the operation is not commutative and the nodes do not hold blocks of consecutive ranks";
    if ((r & HALO_ALG_SHM_TYPE) && !f->shm_type)
        return "an element of the datatype does not fit a shared-memory chunk";
    if ((r & HALO_ALG_CMA) && !f->cma)
        return "the node's ranks may not access each other's memory (HALO_CMA=0, or the kernel's ptrace "
               "rules or system call filter refuse it)";
    return NULL;
}

void halo_coll_restrictions_str(unsigned r, char *buf, size_t len)
{
    static const struct {
        unsigned bit;
        const char *text;
    } words[] = {
        {HALO_ALG_POF2, "power-of-two p"},
        {HALO_ALG_COMMUTATIVE, "commutative op"},
        {HALO_ALG_ONE_NODE, "one node"},
        {HALO_ALG_MULTI_NODE, "several nodes"},
        {HALO_ALG_SHM_TYPE, "element fits a shared chunk"},
        {HALO_ALG_NODE_ORDER, "commutative op or ranks in node blocks"},
        {HALO_ALG_CMA, "single-copy access between the node's ranks"},
    };
    size_t n = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < HALO_ARRAY_LEN(words); i++) {
        if (!(r & words[i].bit))
            continue;
        int w = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", words[i].text);
        if (w < 0 || (size_t)w >= len - n)
            break;
        n += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, len, "none");
}
