/* Process topologies: Cartesian grids, graphs and distributed graphs
 * attached to communicators, with their queries. Ranks are never
 * reordered (the standard allows keeping them). */
#include "binding/api_gen.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/errors.h"
#include "core/info.h"

struct halo_topo {
    int kind;               /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH */
    int ndims;              /* Cartesian */
    int *dims, *periods;
    int nnodes, nedges;     /* graph: index and edges as given */
    int *index, *edges;
    int indegree, outdegree;  /* distributed graph, this process's view */
    int *sources, *sourceweights, *destinations, *destweights;
    int weighted;
};

static int *dup_ints(const int *v, int n)
{
    int *w = halo_malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    if (n > 0)
        memcpy(w, v, (size_t)n * sizeof(int));
    return w;
}

void halo_topo_free(halo_topo_t *t)
{
    free(t->dims);
    free(t->periods);
    free(t->index);
    free(t->edges);
    free(t->sources);
    free(t->sourceweights);
    free(t->destinations);
    free(t->destweights);
    free(t);
}

halo_topo_t *halo_topo_dup(const halo_topo_t *t)
{
    halo_topo_t *n = halo_malloc(sizeof *n);
    *n = *t;
    n->dims = dup_ints(t->dims, t->ndims);
    n->periods = dup_ints(t->periods, t->ndims);
    n->index = dup_ints(t->index, t->nnodes);
    n->edges = dup_ints(t->edges, t->nedges);
    n->sources = dup_ints(t->sources, t->indegree);
    n->sourceweights = dup_ints(t->sourceweights, t->indegree);
    n->destinations = dup_ints(t->destinations, t->outdegree);
    n->destweights = dup_ints(t->destweights, t->outdegree);
    return n;
}

int halo_api_topo_test(MPI_Comm comm, int *status)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int topo_of(MPI_Comm comm, int kind, halo_topo_t **t_p)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    if (!c->topo || c->topo->kind != kind)
        return halo_err(MPI_ERR_TOPOLOGY, ": the communicator has no %s topology",
                        kind == MPI_CART ? "Cartesian" : kind == MPI_GRAPH ? "graph" : "distributed graph");
    *t_p = c->topo;
    return MPI_SUCCESS;
}

/* A new communicator of the first n ranks of old (ranks kept), sharing a
 * freshly agreed context; ranks n.. get MPI_COMM_NULL. */
static int comm_prefix(halo_comm_t *old, int n, MPI_Comm *newcomm, halo_comm_t **c_p)
{
    if (old->is_inter)
        return halo_err(MPI_ERR_COMM, ": process topologies need an intracommunicator");
    uint32_t ctx;
    int rc = halo_context_alloc(old, &ctx);
    if (rc)
        return rc;
    *c_p = NULL;
    if (old->rank >= n) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    halo_group_t *g = halo_group_new(n, old->world);
    halo_comm_t *c = halo_comm_create_local(g, ctx, old);
    halo_group_release(g);
    *c_p = c;
    *newcomm = (MPI_Comm)c;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- Cartesian */

/* The largest r with r^e <= m (m >= 1, e >= 1). */
static int int_root(int m, int e)
{
    int r = 1;
    for (int step = 1 << 15; step > 0; step >>= 1) {
        long long p = 1, c = r + step;
        int i = 0;
        while (i < e && p <= m) {
            p *= c;
            i++;
        }
        if (i == e && p <= m)
            r += step;
    }
    return r;
}

/* Depth-first search over factorizations of n into k factors, each at most
 * `max` (so the factors come out non-increasing). Keeps in best the one with
 * the smallest spread (largest minus smallest factor); of those, the one
 * whose smallest factor is largest, then the next smallest, and so on
 * (best[0] == 0 means none yet). */
typedef struct {
    const int *divs;   /* the divisors of the number factored, decreasing */
    int ndivs;
} divisors_t;

static void balanced_factors(const divisors_t *dv, int n, int k, int max, int depth, int *cur,
                             int *best)
{
    int nf = depth + k;
    if (k == 1) {
        if (n > max)
            return;
        cur[depth] = n;
        int better = best[0] == 0;
        if (!better) {
            int sc = cur[0] - cur[nf - 1], sb = best[0] - best[nf - 1];
            better = sc < sb;
            for (int i = nf - 1; sc == sb && i >= 0; i--) {
                if (cur[i] != best[i]) {
                    better = cur[i] > best[i];
                    break;
                }
            }
        }
        if (better)
            memcpy(best, cur, (size_t)nf * sizeof(int));
        return;
    }
    for (int j = 0; j < dv->ndivs; j++) {
        int d = dv->divs[j];
        if (d > max || n % d)
            continue;
        /* The largest factor left is at least the k-th root of what is left. */
        long p = 1;
        for (int i = 0; i < k && p < n; i++)
            p *= d;
        if (p < n)
            break;
        /* The smallest factor is at most the (k-1)-th root of n / d (or d
         * itself when it is the last but one): a lower bound of the spread. */
        if (best[0] != 0) {
            int top = depth > 0 ? cur[0] : d;
            int low = int_root(n / d, k - 1);
            if (low > d)
                low = d;
            if (top - low > best[0] - best[nf - 1])
                continue;
        }
        cur[depth] = d;
        balanced_factors(dv, n / d, k - 1, d, depth + 1, cur, best);
    }
}

static int dims_create(int nnodes, int ndims, int dims[])
{
    if (ndims < 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be non-negative", ndims);
    if (nnodes <= 0)
        return halo_err(MPI_ERR_ARG, "(nnodes=%d): must be positive", nnodes);
    long fixed = 1;
    int free_dims = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return halo_err(MPI_ERR_DIMS, "(dims[%d]=%d): must be non-negative", i, dims[i]);
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            free_dims++;
    }
    if (nnodes % fixed)
        return halo_err(MPI_ERR_DIMS, ": nnodes=%d is not a multiple of the fixed dimensions' product %ld",
                        nnodes, fixed);
    int rest = (int)(nnodes / fixed);
    if (free_dims == 0) {
        if (rest != 1)
            return halo_err(MPI_ERR_DIMS, ": the fixed dimensions multiply to %ld, not nnodes=%d", fixed, nnodes);
        return MPI_SUCCESS;
    }
    /* The most balanced factorization: of all ways to write `rest` as a
     * product of free_dims factors in non-increasing order, one with the
     * smallest spread between its largest and smallest factor; of those the
     * one with the largest smallest factor (then the next smallest...). */
    int *f = halo_calloc((size_t)free_dims, sizeof(int));
    int *cur = halo_calloc((size_t)free_dims, sizeof(int));
    f[0] = 0;
    int ndivs = 0;
    for (int d = 1; (long)d * d <= rest; d++)
        if (rest % d == 0)
            ndivs += d * d == rest ? 1 : 2;
    int *divs = halo_malloc((size_t)ndivs * sizeof(int));
    for (int d = 1, lo = ndivs, hi = -1; (long)d * d <= rest; d++) {
        if (rest % d)
            continue;
        divs[--lo] = d;   /* small divisors fill the back, large the front */
        if (d * d != rest)
            divs[++hi] = rest / d;
    }
    divisors_t dv = {divs, ndivs};
    balanced_factors(&dv, rest, free_dims, rest, 0, cur, f);
    free(divs);
    free(cur);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}

int halo_api_dims_create(int nnodes, int ndims, int dims[])
{
    return dims_create(nnodes, ndims, dims);
}

int halo_api_cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
                         MPI_Comm *comm_cart)
{
    (void)reorder;
    *comm_cart = MPI_COMM_NULL;   /* what a failed call leaves */
    halo_comm_t *old = halo_comm_ptr(comm_old);
    if (old->is_inter)
        return halo_err(MPI_ERR_COMM, ": Cartesian topologies need an intracommunicator");
    if (ndims < 0)
        return halo_err(MPI_ERR_DIMS, "(ndims=%d): must be non-negative", ndims);
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return halo_err(MPI_ERR_DIMS, "(dims[%d]=%d): must be positive", i, dims[i]);
        n *= dims[i];
    }
    if (n > old->size)
        return halo_err(MPI_ERR_DIMS, ": the grid has %ld processes, the communicator only %d", n, old->size);
    halo_comm_t *c;
    int rc = comm_prefix(old, (int)n, comm_cart, &c);
    if (rc || !c)
        return rc;
    halo_topo_t *t = halo_calloc(1, sizeof *t);
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = dup_ints(dims, ndims);
    t->periods = dup_ints(periods, ndims);
    for (int i = 0; i < ndims; i++)
        t->periods[i] = periods[i] != 0;
    c->topo = t;
    return MPI_SUCCESS;
}

int halo_api_cartdim_get(MPI_Comm comm, int *ndims)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

static void coords_of(const halo_topo_t *t, int rank, int coords[])
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

int halo_api_cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    if (maxdims < t->ndims)
        return halo_err(MPI_ERR_ARG, "(maxdims=%d): the grid has %d dimensions", maxdims, t->ndims);
    int *c = halo_malloc((size_t)(t->ndims + 1) * sizeof(int));
    coords_of(t, halo_comm_ptr(comm)->rank, c);
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = c[i];
    }
    free(c);
    return MPI_SUCCESS;
}

int halo_api_cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i];
        if (t->periods[i]) {
            x %= t->dims[i];
            if (x < 0)
                x += t->dims[i];
        } else if (x < 0 || x >= t->dims[i]) {
            return halo_err(MPI_ERR_ARG, "(coords[%d]=%d): outside a non-periodic dimension of size %d", i,
                            coords[i], t->dims[i]);
        }
        r = r * t->dims[i] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

int halo_api_cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    halo_comm_t *c = halo_comm_ptr(comm);
    if (rank < 0 || rank >= c->size)
        return halo_err(MPI_ERR_RANK, "(rank=%d): not a rank of the communicator (size %d)", rank, c->size);
    if (maxdims < t->ndims)
        return halo_err(MPI_ERR_ARG, "(maxdims=%d): the grid has %d dimensions", maxdims, t->ndims);
    coords_of(t, rank, coords);
    return MPI_SUCCESS;
}

int halo_api_cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    if (direction < 0 || direction >= t->ndims)
        return halo_err(MPI_ERR_ARG, "(direction=%d): the grid has %d dimensions", direction, t->ndims);
    halo_comm_t *c = halo_comm_ptr(comm);
    int *coords = halo_malloc((size_t)(t->ndims + 1) * sizeof(int));
    coords_of(t, c->rank, coords);
    int me = coords[direction], d = t->dims[direction];
    for (int s = 0; s < 2; s++) {
        int x = me + (s ? disp : -disp);
        int *out = s ? rank_dest : rank_source;
        if (t->periods[direction]) {
            x %= d;
            if (x < 0)
                x += d;
        } else if (x < 0 || x >= d) {
            *out = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = x;
        int r = 0;
        for (int i = 0; i < t->ndims; i++)
            r = r * t->dims[i] + coords[i];
        *out = r;
        coords[direction] = me;
    }
    free(coords);
    return MPI_SUCCESS;
}

int halo_api_cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_CART, &t);
    if (rc)
        return rc;
    halo_comm_t *c = halo_comm_ptr(comm);
    int *coords = halo_malloc((size_t)(t->ndims + 1) * sizeof(int));
    coords_of(t, c->rank, coords);
    /* Color: the coordinates that are dropped; key: rank order is kept by
     * the split (old rank breaks ties). */
    int color = 0, nd = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i])
            nd++;
        else
            color = color * t->dims[i] + coords[i];
    }
    rc = halo_api_comm_split(comm, color, 0, newcomm);
    if (rc == MPI_SUCCESS && *newcomm != MPI_COMM_NULL) {
        halo_topo_t *s = halo_calloc(1, sizeof *s);
        s->kind = MPI_CART;
        s->ndims = nd;
        s->dims = halo_malloc((size_t)(nd + 1) * sizeof(int));
        s->periods = halo_malloc((size_t)(nd + 1) * sizeof(int));
        for (int i = 0, k = 0; i < t->ndims; i++) {
            if (remain_dims[i]) {
                s->dims[k] = t->dims[i];
                s->periods[k] = t->periods[i];
                k++;
            }
        }
        halo_comm_ptr(*newcomm)->topo = s;
    }
    free(coords);
    return rc;
}

int halo_api_cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    (void)periods;
    halo_comm_t *c = halo_comm_ptr(comm);
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return halo_err(MPI_ERR_DIMS, "(dims[%d]=%d): must be positive", i, dims[i]);
        n *= dims[i];
    }
    if (n > c->size)
        return halo_err(MPI_ERR_DIMS, ": the grid has %ld processes, the communicator only %d", n, c->size);
    *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- graphs */

int halo_api_graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                          MPI_Comm *comm_graph)
{
    (void)reorder;
    halo_comm_t *old = halo_comm_ptr(comm_old);
    if (nnodes < 0 || nnodes > old->size)
        return halo_err(MPI_ERR_ARG, "(nnodes=%d): must be between 0 and the communicator size %d", nnodes,
                        old->size);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return halo_err(MPI_ERR_ARG, "(index[%d]=%d): index must not decrease", i, index[i]);
    for (int i = 0; i < nedges; i++)
        if (edges[i] < 0 || edges[i] >= nnodes)
            return halo_err(MPI_ERR_ARG, "(edges[%d]=%d): not a node of the graph", i, edges[i]);
    halo_comm_t *c = NULL;
    int rc = comm_prefix(old, nnodes, comm_graph, &c);
    if (rc || !c)
        return rc;
    halo_topo_t *t = halo_calloc(1, sizeof *t);
    t->kind = MPI_GRAPH;
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->index = dup_ints(index, nnodes);
    t->edges = dup_ints(edges, nedges);
    c->topo = t;
    return MPI_SUCCESS;
}

int halo_api_graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc)
        return rc;
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int halo_api_graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc)
        return rc;
    for (int i = 0; i < t->nnodes && i < maxindex; i++)
        index[i] = t->index[i];
    for (int i = 0; i < t->nedges && i < maxedges; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

int halo_api_graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc)
        return rc;
    if (rank < 0 || rank >= t->nnodes)
        return halo_err(MPI_ERR_RANK, "(rank=%d): not a node of the graph", rank);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int halo_api_graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_GRAPH, &t);
    if (rc)
        return rc;
    if (rank < 0 || rank >= t->nnodes)
        return halo_err(MPI_ERR_RANK, "(rank=%d): not a node of the graph", rank);
    int first = rank ? t->index[rank - 1] : 0;
    for (int i = first, k = 0; i < t->index[rank] && k < maxneighbors; i++, k++)
        neighbors[k] = t->edges[i];
    return MPI_SUCCESS;
}

int halo_api_graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    (void)index;
    (void)edges;
    halo_comm_t *c = halo_comm_ptr(comm);
    if (nnodes < 0 || nnodes > c->size)
        return halo_err(MPI_ERR_ARG, "(nnodes=%d): must be between 0 and the communicator size %d", nnodes,
                        c->size);
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- distributed graphs */

static halo_topo_t *dist_graph_new(int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[])
{
    halo_topo_t *t = halo_calloc(1, sizeof *t);
    t->kind = MPI_DIST_GRAPH;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->sources = dup_ints(sources, indegree);
    t->destinations = dup_ints(destinations, outdegree);
    t->weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    if (t->weighted) {
        t->sourceweights = sourceweights == MPI_WEIGHTS_EMPTY ? dup_ints(NULL, 0) : dup_ints(sourceweights, indegree);
        t->destweights = destweights == MPI_WEIGHTS_EMPTY ? dup_ints(NULL, 0) : dup_ints(destweights, outdegree);
    } else {
        t->sourceweights = dup_ints(NULL, 0);
        t->destweights = dup_ints(NULL, 0);
    }
    return t;
}

static int check_neighbors(halo_comm_t *c, int n, const int v[], const char *what)
{
    if (n < 0)
        return halo_err(MPI_ERR_ARG, "(%s degree=%d): must be non-negative", what, n);
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= c->size)
            return halo_err(MPI_ERR_RANK, "(%s[%d]=%d): not a rank of the communicator", what, i, v[i]);
    return MPI_SUCCESS;
}

int halo_api_dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                        const int sourceweights[], int outdegree, const int destinations[],
                                        const int destweights[], MPI_Info info, int reorder,
                                        MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    halo_comm_t *old = halo_comm_ptr(comm_old);
    int rc = check_neighbors(old, indegree, sources, "sources");
    if (rc || (rc = check_neighbors(old, outdegree, destinations, "destinations")))
        return rc;
    halo_comm_t *c = NULL;
    rc = comm_prefix(old, old->size, comm_dist_graph, &c);
    if (rc)
        return rc;
    c->topo = dist_graph_new(indegree, sources, sourceweights, outdegree, destinations, destweights);
    return MPI_SUCCESS;
}

/* Each process gives some edges (source -> destination); every process
 * learns its own in- and out-edges. All edge lists are gathered everywhere
 * (counts first, then the lists), then each process picks its own. */
int halo_api_dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                               const int destinations[], const int weights[], MPI_Info info, int reorder,
                               MPI_Comm *comm_dist_graph)
{
    (void)info;
    (void)reorder;
    halo_comm_t *old = halo_comm_ptr(comm_old);
    int p = old->size, me = old->rank;
    int weighted = weights != MPI_UNWEIGHTED;
    if (n < 0)
        return halo_err(MPI_ERR_ARG, "(n=%d): must be non-negative", n);
    int nedges = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= p)
            return halo_err(MPI_ERR_RANK, "(sources[%d]=%d): not a rank of the communicator", i, sources[i]);
        if (degrees[i] < 0)
            return halo_err(MPI_ERR_ARG, "(degrees[%d]=%d): must be non-negative", i, degrees[i]);
        nedges += degrees[i];
    }
    /* Triples (source, destination, weight). */
    int *mine = halo_malloc((size_t)(3 * nedges + 1) * sizeof(int));
    for (int i = 0, k = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, k++) {
            int d = destinations[k];
            if (d < 0 || d >= p) {
                free(mine);
                return halo_err(MPI_ERR_RANK, "(destinations[%d]=%d): not a rank of the communicator", k, d);
            }
            mine[3 * k] = sources[i];
            mine[3 * k + 1] = d;
            mine[3 * k + 2] = weighted && weights != MPI_WEIGHTS_EMPTY ? weights[k] : 1;
        }
    int *counts = halo_malloc((size_t)p * sizeof(int));
    int cnt = 3 * nedges;
    int rc = halo_coll_allgather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, old);
    int *displs = halo_malloc((size_t)p * sizeof(int));
    int total = 0;
    for (int i = 0; i < p; i++) {
        displs[i] = total;
        total += counts[i];
    }
    int *all = halo_malloc((size_t)(total + 1) * sizeof(int));
    if (rc == MPI_SUCCESS)
        rc = halo_coll_allgatherv(mine, cnt, MPI_INT, all, counts, displs, MPI_INT, old);
    int in = 0, out = 0;
    for (int e = 0; e < total / 3; e++) {
        if (all[3 * e + 1] == me)
            in++;
        if (all[3 * e] == me)
            out++;
    }
    int *src = halo_malloc((size_t)(in + 1) * sizeof(int)), *sw = halo_malloc((size_t)(in + 1) * sizeof(int));
    int *dst = halo_malloc((size_t)(out + 1) * sizeof(int)), *dw = halo_malloc((size_t)(out + 1) * sizeof(int));
    in = out = 0;
    for (int e = 0; e < total / 3; e++) {
        if (all[3 * e + 1] == me) {
            src[in] = all[3 * e];
            sw[in++] = all[3 * e + 2];
        }
        if (all[3 * e] == me) {
            dst[out] = all[3 * e + 1];
            dw[out++] = all[3 * e + 2];
        }
    }
    halo_comm_t *c = NULL;
    if (rc == MPI_SUCCESS)
        rc = comm_prefix(old, p, comm_dist_graph, &c);
    if (rc == MPI_SUCCESS)
        c->topo = dist_graph_new(in, src, weighted ? sw : MPI_UNWEIGHTED, out, dst, weighted ? dw : MPI_UNWEIGHTED);
    free(mine);
    free(counts);
    free(displs);
    free(all);
    free(src);
    free(sw);
    free(dst);
    free(dw);
    return rc;
}

int halo_api_dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_topo_t *t = c->topo;
    if (t && t->kind == MPI_GRAPH) {
        int n = t->index[c->rank] - (c->rank ? t->index[c->rank - 1] : 0);
        *indegree = *outdegree = n;
        *weighted = 0;
        return MPI_SUCCESS;
    }
    int rc = topo_of(comm, MPI_DIST_GRAPH, &t);
    if (rc)
        return rc;
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

int halo_api_dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                                  int maxoutdegree, int destinations[], int destweights[])
{
    halo_topo_t *t = NULL;
    int rc = topo_of(comm, MPI_DIST_GRAPH, &t);
    if (rc)
        return rc;
    for (int i = 0; i < t->indegree && i < maxindegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && sourceweights != MPI_UNWEIGHTED)
            sourceweights[i] = t->sourceweights[i];
    }
    for (int i = 0; i < t->outdegree && i < maxoutdegree; i++) {
        destinations[i] = t->destinations[i];
        if (t->weighted && destweights != MPI_UNWEIGHTED)
            destweights[i] = t->destweights[i];
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- neighborhoods */

int halo_topo_degrees(halo_comm_t *c, int *indegree, int *outdegree)
{
    halo_topo_t *t = c->topo;
    if (c->is_inter)
        return halo_err(MPI_ERR_COMM, "(comm): neighborhood collectives need an intracommunicator with a "
                        "process topology, not an intercommunicator");
    if (!t)
        return halo_err(MPI_ERR_TOPOLOGY, "(comm): the communicator has no process topology (Cartesian, "
                        "graph or distributed graph), which neighborhood collectives need");
    int in, out;
    if (t->kind == MPI_CART) {
        in = out = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        in = out = t->index[c->rank] - (c->rank ? t->index[c->rank - 1] : 0);
    } else {
        in = t->indegree;
        out = t->outdegree;
    }
    if (indegree)
        *indegree = in;
    if (outdegree)
        *outdegree = out;
    return MPI_SUCCESS;
}

int halo_topo_neighbors(halo_comm_t *c, halo_neighbors_t *nb)
{
    memset(nb, 0, sizeof *nb);
    int rc = halo_topo_degrees(c, NULL, NULL);
    if (rc)
        return rc;
    halo_topo_t *t = c->topo;
    nb->kind = t->kind;
    if (t->kind == MPI_CART) {
        int n = 2 * t->ndims;
        nb->indegree = nb->outdegree = n;
        nb->sources = halo_malloc((size_t)(n + 1) * sizeof(int));
        int *coords = halo_malloc((size_t)(t->ndims + 1) * sizeof(int));
        coords_of(t, c->rank, coords);
        for (int d = 0; d < t->ndims; d++) {
            int me = coords[d];
            for (int s = 0; s < 2; s++) {
                int x = me + (s ? 1 : -1);
                if (t->periods[d])
                    x = (x + t->dims[d]) % t->dims[d];
                if (x < 0 || x >= t->dims[d]) {
                    nb->sources[2 * d + s] = MPI_PROC_NULL;
                    continue;
                }
                coords[d] = x;
                int r = 0;
                for (int i = 0; i < t->ndims; i++)
                    r = r * t->dims[i] + coords[i];
                nb->sources[2 * d + s] = r;
                coords[d] = me;
            }
        }
        free(coords);
        nb->destinations = dup_ints(nb->sources, n);
    } else if (t->kind == MPI_GRAPH) {
        int first = c->rank ? t->index[c->rank - 1] : 0, n = t->index[c->rank] - first;
        nb->indegree = nb->outdegree = n;
        nb->sources = dup_ints(t->edges + first, n);
        nb->destinations = dup_ints(t->edges + first, n);
    } else {
        nb->indegree = t->indegree;
        nb->outdegree = t->outdegree;
        nb->sources = dup_ints(t->sources, t->indegree);
        nb->destinations = dup_ints(t->destinations, t->outdegree);
    }
    return MPI_SUCCESS;
}

void halo_neighbors_free(halo_neighbors_t *nb)
{
    free(nb->sources);
    free(nb->destinations);
    nb->sources = nb->destinations = NULL;
}
