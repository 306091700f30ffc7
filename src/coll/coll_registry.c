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

#include "core/halo.h"

#define ALG(coll, name, fn, restr, cost) {HALO_COLL_##coll, name, fn, restr, cost}

const halo_coll_algo_t halo_coll_algos[] = {
    ALG(BARRIER, "dissemination", halo_barrier_dissemination, 0, "ceil(lg p) a"),

    ALG(BCAST, "binomial", halo_bcast_binomial, 0, "lg p (a + n b)"),
    ALG(BCAST, "scatter_allgather", halo_bcast_scatter_allgather, 0, "(lg p + p) a + 2n b"),
    ALG(BCAST, "pipeline", halo_bcast_pipeline, 0, "(p + s) (a + n/s b), s segments"),

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
    ALG(ALLGATHERV, "ring", halo_allgatherv_ring, 0, "(p-1) a + n b"),
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

    /* Shared-memory (HALO_ALG_ONE_NODE) and two-level (HALO_ALG_MULTI_NODE)
     * algorithms: none yet. */
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

bool halo_coll_comm_one_node(halo_comm_t *c)
{
    if (!halo_world.procs || !c)
        return true;
    int node = halo_world.procs[c->world[0]].node;
    for (int i = 1; i < c->size; i++)
        if (halo_world.procs[c->world[i]].node != node)
            return false;
    return true;
}

const char *halo_coll_algo_unusable_at(const halo_coll_algo_t *al, int p, bool commute, bool one_node)
{
    unsigned r = al->restrictions;
    if ((r & HALO_ALG_POF2) && !halo_is_pof2(p))
        return "the communicator size is not a power of two";
    if ((r & HALO_ALG_COMMUTATIVE) && !commute)
        return "the operation is not commutative";
    if ((r & HALO_ALG_ONE_NODE) && !one_node)
        return "the communicator spans several nodes";
    if ((r & HALO_ALG_MULTI_NODE) && one_node)
        return "the communicator is on one node";
    return NULL;
}

const char *halo_coll_algo_unusable(const halo_coll_algo_t *al, const halo_coll_args_t *a,
                                    halo_comm_t *c)
{
    bool commute = !a->op || a->op == MPI_OP_NULL || halo_op_commutes(a->op);
    bool one_node = (al->restrictions & (HALO_ALG_ONE_NODE | HALO_ALG_MULTI_NODE))
                        ? halo_coll_comm_one_node(c) : true;
    return halo_coll_algo_unusable_at(al, c->size, commute, one_node);
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
