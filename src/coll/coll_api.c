/* The collective MPI functions: Barrier, Bcast, Gather(v), Scatter(v),
 * Allgather(v), Alltoall(v,w), Reduce, Allreduce, Reduce_scatter(_block),
 * Scan, Exscan; blocking, nonblocking and persistent, with their
 * large-count twins; on intracommunicators and (all but Scan and Exscan)
 * on intercommunicators, whose schedules come from inter_*.c. The
 * neighborhood collectives have their entry points in neighbor_api.c and
 * come through here too (halo_coll_do).
 *
 * Each entry point fills a halo_coll_args_t and calls coll_do, which
 * checks what the binding layer could not (root, datatypes, operation,
 * in-place rules, matching block sizes), picks the algorithm
 * (coll_select.c), and builds its schedule. Blocking calls run it;
 * nonblocking ones hand it to a request; persistent ones build it once, at
 * initialization and rerun it, with the next sequence number, at every start.
 * Building reads the caller's count and displacement arrays and never
 * again, so nothing of them is kept. A pending request keeps references on
 * the user datatypes and operation its schedule uses (the user may free
 * them meanwhile). */
#include "coll/coll.h"

#include "coll/select.h"
#include "core/errors.h"
#include "core/info.h"
#include "pt2pt/pt2pt.h"

#include <stddef.h>
#include <string.h>

typedef halo_coll_args_t coll_args_t;

enum {
    RUN_BLOCKING = HALO_COLL_RUN_BLOCKING,
    RUN_NONBLOCKING = HALO_COLL_RUN_NONBLOCKING,
    RUN_PERSISTENT = HALO_COLL_RUN_PERSISTENT
};

/* ---------------------------------------------------------------- references */

/* What a request of a collective built for it holds besides the schedule:
 * references to the user objects the schedule names, and for a persistent
 * request the schedule compiled for its starts (or NULL). */
typedef struct coll_refs {
    int n, cap;
    halo_obj_t **objs;
    halo_sched_prog_t *prog;
} coll_refs_t;

static void refs_add(coll_refs_t *r, void *handle)
{
    if (!handle || (uintptr_t)handle < HALO_PREDEF_LIMIT)
        return;
    halo_obj_t *o = handle;
    for (int i = 0; i < r->n; i++)
        if (r->objs[i] == o)
            return;
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4;
        r->objs = halo_realloc(r->objs, (size_t)r->cap * sizeof *r->objs);
    }
    halo_obj_ref(o);
    r->objs[r->n++] = o;
}

static void refs_release(void *p)
{
    coll_refs_t *r = p;
    for (int i = 0; i < r->n; i++) {
        halo_obj_t *o = r->objs[i];
        if (o->kind == HALO_KIND_DTYPE)
            halo_dtype_release((halo_dtype_t *)o);
        else if (halo_obj_unref(o))
            halo_obj_free(o);
    }
    free(r->objs);
    free(r->prog);
    free(r);
}

/* The user objects a schedule names: its steps' datatypes and operations. */
static coll_refs_t *refs_of(const halo_sched_t *s)
{
    coll_refs_t *r = halo_calloc(1, sizeof *r);
    for (int i = 0; i < s->nsteps; i++) {
        refs_add(r, s->steps[i].type);
        refs_add(r, s->steps[i].type2);
        refs_add(r, s->steps[i].op);
    }
    return r;
}

/* ---------------------------------------------------------------- checks */

static int check_root(halo_comm_t *c, int root)
{
    if (root < 0 || root >= c->size)
        return halo_err(MPI_ERR_ROOT, "(root=%d): root must be a rank of the communicator (size %d)",
                        root, c->size);
    return MPI_SUCCESS;
}

/* A datatype a collective can use: a valid handle, committed. */
static bool type_usable(MPI_Datatype t)
{
    const halo_dtype_t *dt = t != MPI_DATATYPE_NULL ? halo_dtype_get(t) : NULL;
    return dt && (dt->flags & HALO_DT_COMMITTED);
}

static int check_type(MPI_Datatype t, const char *arg)
{
    if (type_usable(t))
        return MPI_SUCCESS;
    if (t == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(%s=MPI_DATATYPE_NULL): a datatype is required", arg);
    if (!halo_dtype_get(t))
        return halo_err(MPI_ERR_TYPE, "(%s=%p): not a valid datatype", arg, (void *)t);
    return halo_err(MPI_ERR_TYPE, "(%s): the datatype is not committed", arg);
}

static int check_count(MPI_Count n, const char *arg)
{
    if (n < 0)
        return halo_err(MPI_ERR_COUNT, "(%s=%lld): must be non-negative", arg, (long long)n);
    return MPI_SUCCESS;
}

static int check_counts(int p, const MPI_Count *n, const char *arg)
{
    if (!n && p > 0)
        return halo_err(MPI_ERR_COUNT, "(%s=NULL): an array of counts is required", arg);
    for (int i = 0; i < p; i++)
        if (n[i] < 0)
            return halo_err(MPI_ERR_COUNT, "(%s[%d]=%lld): must be non-negative", arg, i, (long long)n[i]);
    return MPI_SUCCESS;
}

/* The entry's name ("sendtypes[3]") is only made for the message of an
 * entry that fails: formatting it for every entry cost a small Alltoallw
 * a fifth of its time. */
static int check_types(int p, const MPI_Datatype *t, const char *arg)
{
    if (!t && p > 0)
        return halo_err(MPI_ERR_TYPE, "(%s=NULL): an array of datatypes is required", arg);
    for (int i = 0; i < p; i++) {
        if (type_usable(t[i]))
            continue;
        char name[48];
        snprintf(name, sizeof name, "%s[%d]", arg, i);
        int rc = check_type(t[i], name);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}

static int no_in_place_recv(const void *rbuf)
{
    if (rbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): only sendbuf may be MPI_IN_PLACE");
    return MPI_SUCCESS;
}

static int same_bytes(MPI_Count sc, MPI_Datatype st, MPI_Count rc, MPI_Datatype rt, const char *what)
{
    MPI_Count sb = sc * halo_dtype_ptr(st)->size, rb = rc * halo_dtype_ptr(rt)->size;
    if (sb != rb)
        return halo_err(MPI_ERR_TRUNCATE, "(%s): the block is %lld bytes on the sending side and %lld on "
                        "the receiving side; they must be equal", what, (long long)sb, (long long)rb);
    return MPI_SUCCESS;
}

/* Set when the arguments' error is buffers that alias. Such an error is
 * this rank's alone and costs no communication: the call returns it
 * without telling the others or using up a collective sequence number,
 * so a program that repeats the call correctly (the root of a Reduce, say,
 * whose other ranks did their part) still matches the others' messages,
 * as in MPICH. Other argument errors are told to the others (coll_do). */
static HALO_TLS bool alias_error;

static int alias_err(const void *sbuf, const void *rbuf, bool overlap)
{
    alias_error = true;
    if (overlap)
        return halo_err(MPI_ERR_BUFFER, "(sendbuf=%p, recvbuf=%p): the send and receive buffers overlap; "
                        "use MPI_IN_PLACE", sbuf, rbuf);
    return halo_err(MPI_ERR_BUFFER, "(sendbuf=recvbuf=%p): buffers must differ; use MPI_IN_PLACE", rbuf);
}

/* A send buffer that is the receive buffer (rather than MPI_IN_PLACE) is
 * an aliasing error when the block carries data. */
static int no_alias(const void *sbuf, MPI_Count sc, MPI_Datatype st, const void *rbuf)
{
    if (sbuf == rbuf && sbuf != MPI_BOTTOM && sbuf != MPI_IN_PLACE && sc * halo_dtype_ptr(st)->size > 0)
        return alias_err(sbuf, rbuf, false);
    return MPI_SUCCESS;
}

/* Reductions: datatype, operation, and buffers that must not alias. */
static int check_reduction(const void *sbuf, const void *rbuf, MPI_Count count, MPI_Datatype type,
                           MPI_Op op, bool rbuf_used)
{
    int rc;
    if ((rc = check_count(count, "count")) || (rc = check_type(type, "datatype")))
        return rc;
    if ((rc = halo_op_check(op, halo_dtype_ptr(type), "op")))
        return rc;
    if (rbuf_used && sbuf == rbuf && count > 0 && sbuf != MPI_BOTTOM)
        return alias_err(sbuf, rbuf, false);
    return MPI_SUCCESS;
}

static int check_displs(int n, const MPI_Aint *d, const char *arg)
{
    if (!d && n > 0)
        return halo_err(MPI_ERR_ARG, "(%s=NULL): an array of displacements is required", arg);
    return MPI_SUCCESS;
}

/* Neighborhood collectives: the communicator's topology gives the number
 * of blocks (indegree receives, outdegree sends); MPI_IN_PLACE is not
 * defined for them. Block sizes are not compared: the two ends of a block
 * are different processes (or the two ends of different blocks). */
static int check_neighbor(const coll_args_t *a, halo_comm_t *c)
{
    int in = 0, out = 0, rc;
    if ((rc = halo_topo_degrees(c, &in, &out)))
        return rc;
    if (a->sbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(sendbuf=MPI_IN_PLACE): not allowed in neighborhood collectives");
    if (a->rbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): not allowed in neighborhood collectives");
    switch (a->kind) {
    case HALO_COLL_NEIGHBOR_ALLGATHER:
    case HALO_COLL_NEIGHBOR_ALLTOALL:
        if ((rc = check_count(a->scount, "sendcount")) || (rc = check_type(a->stype, "sendtype")) ||
            (rc = check_count(a->rcount, "recvcount")))
            return rc;
        return check_type(a->rtype, "recvtype");
    case HALO_COLL_NEIGHBOR_ALLGATHERV:
        if ((rc = check_count(a->scount, "sendcount")) || (rc = check_type(a->stype, "sendtype")) ||
            (rc = check_counts(in, a->rcounts, "recvcounts")) ||
            (rc = check_displs(in, a->rdispls, "displs")))
            return rc;
        return check_type(a->rtype, "recvtype");
    case HALO_COLL_NEIGHBOR_ALLTOALLV:
    case HALO_COLL_NEIGHBOR_ALLTOALLW:
        if ((rc = check_counts(out, a->scounts, "sendcounts")) ||
            (rc = check_displs(out, a->sdispls, "sdispls")) ||
            (rc = check_counts(in, a->rcounts, "recvcounts")) ||
            (rc = check_displs(in, a->rdispls, "rdispls")))
            return rc;
        if (a->kind == HALO_COLL_NEIGHBOR_ALLTOALLV) {
            if ((rc = check_type(a->stype, "sendtype")))
                return rc;
            return check_type(a->rtype, "recvtype");
        }
        if ((rc = check_types(out, a->stypes, "sendtypes")))
            return rc;
        return check_types(in, a->rtypes, "recvtypes");
    default:
        break;
    }
    return halo_err(MPI_ERR_INTERN, ": unknown collective %d", (int)a->kind);
}

static int check_args_each(const coll_args_t *a, halo_comm_t *c)
{
    int p = c->size, me = c->rank, rc = MPI_SUCCESS;
    bool root = false;
    switch (a->kind) {
    case HALO_COLL_BARRIER:
        return MPI_SUCCESS;
    case HALO_COLL_BCAST:
        if ((rc = check_root(c, a->root)) || (rc = check_count(a->count, "count")))
            return rc;
        return check_type(a->type, "datatype");
    case HALO_COLL_GATHER:
    case HALO_COLL_GATHERV:
        if ((rc = check_root(c, a->root)))
            return rc;
        root = me == a->root;
        if (!root && a->sbuf == MPI_IN_PLACE)
            return halo_err(MPI_ERR_BUFFER, "(sendbuf=MPI_IN_PLACE): only the root may gather in place");
        if (a->sbuf != MPI_IN_PLACE &&
            ((rc = check_count(a->scount, "sendcount")) || (rc = check_type(a->stype, "sendtype"))))
            return rc;
        if (!root)
            return MPI_SUCCESS;
        if ((rc = no_in_place_recv(a->rbuf)) || (rc = check_type(a->rtype, "recvtype")))
            return rc;
        if (a->kind == HALO_COLL_GATHER) {
            if ((rc = check_count(a->rcount, "recvcount")))
                return rc;
            if (a->sbuf != MPI_IN_PLACE &&
                (rc = same_bytes(a->scount, a->stype, a->rcount, a->rtype, "sendcount, recvcount")))
                return rc;
            return no_alias(a->sbuf, a->scount, a->stype, a->rbuf);
        }
        if ((rc = check_counts(p, a->rcounts, "recvcounts")))
            return rc;
        if (a->sbuf != MPI_IN_PLACE &&
            (rc = same_bytes(a->scount, a->stype, a->rcounts[me], a->rtype, "sendcount, recvcounts[root]")))
            return rc;
        return no_alias(a->sbuf, a->scount, a->stype, a->rbuf);
    case HALO_COLL_SCATTER:
    case HALO_COLL_SCATTERV:
        if ((rc = check_root(c, a->root)))
            return rc;
        root = me == a->root;
        if (!root && a->rbuf == MPI_IN_PLACE)
            return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): only the root may scatter in place");
        if (a->rbuf != MPI_IN_PLACE &&
            ((rc = check_count(a->rcount, "recvcount")) || (rc = check_type(a->rtype, "recvtype"))))
            return rc;
        if (!root)
            return MPI_SUCCESS;
        if (a->sbuf == MPI_IN_PLACE)
            return halo_err(MPI_ERR_BUFFER, "(sendbuf=MPI_IN_PLACE): the root scatters in place with "
                            "recvbuf=MPI_IN_PLACE");
        if ((rc = check_type(a->stype, "sendtype")))
            return rc;
        if (a->kind == HALO_COLL_SCATTER) {
            if ((rc = check_count(a->scount, "sendcount")))
                return rc;
            if (a->rbuf != MPI_IN_PLACE &&
                (rc = same_bytes(a->scount, a->stype, a->rcount, a->rtype, "sendcount, recvcount")))
                return rc;
            return a->rbuf != MPI_IN_PLACE ? no_alias(a->sbuf, a->scount, a->stype, a->rbuf) : MPI_SUCCESS;
        }
        if ((rc = check_counts(p, a->scounts, "sendcounts")))
            return rc;
        if (a->rbuf != MPI_IN_PLACE &&
            (rc = same_bytes(a->scounts[me], a->stype, a->rcount, a->rtype, "sendcounts[root], recvcount")))
            return rc;
        return a->rbuf != MPI_IN_PLACE ? no_alias(a->sbuf, a->scounts[me], a->stype, a->rbuf) : MPI_SUCCESS;
    case HALO_COLL_ALLGATHER:
    case HALO_COLL_ALLGATHERV:
        if ((rc = no_in_place_recv(a->rbuf)) || (rc = check_type(a->rtype, "recvtype")))
            return rc;
        if (a->kind == HALO_COLL_ALLGATHER ? (rc = check_count(a->rcount, "recvcount"))
                                           : (rc = check_counts(p, a->rcounts, "recvcounts")))
            return rc;
        if (a->sbuf == MPI_IN_PLACE)
            return MPI_SUCCESS;
        if ((rc = check_count(a->scount, "sendcount")) || (rc = check_type(a->stype, "sendtype")))
            return rc;
        if ((rc = same_bytes(a->scount, a->stype, a->rcounts ? a->rcounts[me] : a->rcount, a->rtype,
                             a->rcounts ? "sendcount, recvcounts[rank]" : "sendcount, recvcount")))
            return rc;
        return no_alias(a->sbuf, a->scount, a->stype, a->rbuf);
    case HALO_COLL_ALLTOALL:
        if ((rc = no_in_place_recv(a->rbuf)) || (rc = check_type(a->rtype, "recvtype")) ||
            (rc = check_count(a->rcount, "recvcount")))
            return rc;
        if (a->sbuf == MPI_IN_PLACE)
            return MPI_SUCCESS;
        if ((rc = check_count(a->scount, "sendcount")) || (rc = check_type(a->stype, "sendtype")))
            return rc;
        if ((rc = same_bytes(a->scount, a->stype, a->rcount, a->rtype, "sendcount, recvcount")))
            return rc;
        return no_alias(a->sbuf, a->scount, a->stype, a->rbuf);
    case HALO_COLL_ALLTOALLV:
    case HALO_COLL_ALLTOALLW:
        if ((rc = no_in_place_recv(a->rbuf)) || (rc = check_counts(p, a->rcounts, "recvcounts")))
            return rc;
        if (a->kind == HALO_COLL_ALLTOALLV ? (rc = check_type(a->rtype, "recvtype"))
                                           : (rc = check_types(p, a->rtypes, "recvtypes")))
            return rc;
        if (a->sbuf == MPI_IN_PLACE)
            return MPI_SUCCESS;
        if ((rc = check_counts(p, a->scounts, "sendcounts")))
            return rc;
        return a->kind == HALO_COLL_ALLTOALLV ? check_type(a->stype, "sendtype")
                                              : check_types(p, a->stypes, "sendtypes");
    case HALO_COLL_REDUCE:
        if ((rc = check_root(c, a->root)))
            return rc;
        root = me == a->root;
        if (root && (rc = no_in_place_recv(a->rbuf)))
            return rc;
        if (!root && a->sbuf == MPI_IN_PLACE)
            return halo_err(MPI_ERR_BUFFER, "(sendbuf=MPI_IN_PLACE): only the root may reduce in place");
        return check_reduction(a->sbuf, a->rbuf, a->count, a->type, a->op, root);
    case HALO_COLL_ALLREDUCE:
    case HALO_COLL_SCAN:
    case HALO_COLL_EXSCAN:
    case HALO_COLL_REDUCE_SCATTER_BLOCK:
        if ((rc = no_in_place_recv(a->rbuf)))
            return rc;
        return check_reduction(a->sbuf, a->rbuf, a->count, a->type, a->op, true);
    case HALO_COLL_REDUCE_SCATTER:
        if ((rc = no_in_place_recv(a->rbuf)) || (rc = check_counts(p, a->rcounts, "recvcounts")))
            return rc;
        MPI_Count total = 0;
        for (int i = 0; i < p; i++)
            total += a->rcounts[i];
        return check_reduction(a->sbuf, a->rbuf, total, a->type, a->op, true);
    case HALO_COLL_NEIGHBOR_ALLGATHER:
    case HALO_COLL_NEIGHBOR_ALLGATHERV:
    case HALO_COLL_NEIGHBOR_ALLTOALL:
    case HALO_COLL_NEIGHBOR_ALLTOALLV:
    case HALO_COLL_NEIGHBOR_ALLTOALLW:
        return check_neighbor(a, c);
    case HALO_COLL_NKINDS:
        break;
    }
    return halo_err(MPI_ERR_INTERN, ": unknown collective %d", (int)a->kind);
}

/* ---- send and receive buffers that overlap
 *
 * The standard forbids aliasing an argument the call writes: a send
 * buffer inside the receive buffer is an error (MPI_IN_PLACE says it), not
 * only the same address (no_alias). Each block is taken as a byte range
 * when it is one (a contiguous type, or one element of a type with a
 * single run); blocks with holes are not compared, since data interleaved
 * with another buffer's is legal. */
typedef struct span {
    uintptr_t lo, hi;
} span_t;

static bool span_of(const void *buf, MPI_Aint off, MPI_Count count, MPI_Datatype type, span_t *s)
{
    if (buf == MPI_IN_PLACE || count <= 0)
        return false;
    halo_dtype_t *dt = halo_dtype_ptr(type);
    if (dt->size <= 0)
        return false;
    uintptr_t base = (uintptr_t)buf + (uintptr_t)off;
    if (halo_dt_contig(dt)) {
        s->lo = base;
        s->hi = base + (uintptr_t)(count * dt->size);
        return true;
    }
    if (count == 1 && dt->nruns == 1) {
        s->lo = base + (uintptr_t)dt->true_lb;
        s->hi = s->lo + (uintptr_t)dt->size;
        return true;
    }
    return false;
}

static int span_cmp(const void *x, const void *y)
{
    uintptr_t a = ((const span_t *)x)->lo, b = ((const span_t *)y)->lo;
    return a < b ? -1 : a > b;
}

/* Whether a range of s meets a range of r (sorts both). */
static bool spans_meet(span_t *s, int ns, span_t *r, int nr)
{
    if (!ns || !nr)
        return false;
    span_t hs = s[0], hr = r[0];
    for (int i = 1; i < ns; i++) {
        hs.lo = s[i].lo < hs.lo ? s[i].lo : hs.lo;
        hs.hi = s[i].hi > hs.hi ? s[i].hi : hs.hi;
    }
    for (int i = 1; i < nr; i++) {
        hr.lo = r[i].lo < hr.lo ? r[i].lo : hr.lo;
        hr.hi = r[i].hi > hr.hi ? r[i].hi : hr.hi;
    }
    if (hs.hi <= hr.lo || hr.hi <= hs.lo)
        return false;   /* the usual case: two separate buffers */
    qsort(s, (size_t)ns, sizeof *s, span_cmp);
    qsort(r, (size_t)nr, sizeof *r, span_cmp);
    /* A range that ends before the other list's current one starts meets
     * none of that list's later ones either. */
    for (int i = 0, j = 0; i < ns && j < nr;) {
        if (s[i].hi <= r[j].lo)
            i++;
        else if (r[j].hi <= s[i].lo)
            j++;
        else
            return true;
    }
    return false;
}

/* Adds block i of a v or w form (or the whole buffer) to list l. */
static void add_span(span_t *l, int *n, const void *buf, MPI_Aint off, MPI_Count count, MPI_Datatype type)
{
    if (span_of(buf, off, count, type, &l[*n]))
        (*n)++;
}

/* The send side's and the receive side's blocks of this rank's call. */
static void call_spans(const coll_args_t *a, int p, int me, span_t *s, int *ns, span_t *r, int *nr)
{
    *ns = *nr = 0;
    switch (a->kind) {
    case HALO_COLL_GATHER:
    case HALO_COLL_ALLGATHER:
        add_span(s, ns, a->sbuf, 0, a->scount, a->stype);
        add_span(r, nr, a->rbuf, 0, (MPI_Count)p * a->rcount, a->rtype);
        break;
    case HALO_COLL_GATHERV:
    case HALO_COLL_ALLGATHERV: {
        if (!a->rdispls || !a->rcounts)
            break;
        MPI_Aint rext = halo_type_extent(a->rtype);
        add_span(s, ns, a->sbuf, 0, a->scount, a->stype);
        for (int i = 0; i < p; i++)
            add_span(r, nr, a->rbuf, a->rdispls[i] * rext, a->rcounts[i], a->rtype);
        break;
    }
    case HALO_COLL_SCATTER:
        add_span(s, ns, a->sbuf, 0, (MPI_Count)p * a->scount, a->stype);
        add_span(r, nr, a->rbuf, 0, a->rcount, a->rtype);
        break;
    case HALO_COLL_SCATTERV: {
        if (!a->sdispls || !a->scounts)
            break;
        MPI_Aint sext = halo_type_extent(a->stype);
        for (int i = 0; i < p; i++)
            add_span(s, ns, a->sbuf, a->sdispls[i] * sext, a->scounts[i], a->stype);
        add_span(r, nr, a->rbuf, 0, a->rcount, a->rtype);
        break;
    }
    case HALO_COLL_ALLTOALL:
        add_span(s, ns, a->sbuf, 0, (MPI_Count)p * a->scount, a->stype);
        add_span(r, nr, a->rbuf, 0, (MPI_Count)p * a->rcount, a->rtype);
        break;
    case HALO_COLL_ALLTOALLV: {
        if (!a->sdispls || !a->scounts || !a->rdispls || !a->rcounts)
            break;
        MPI_Aint sext = halo_type_extent(a->stype), rext = halo_type_extent(a->rtype);
        for (int i = 0; i < p; i++) {
            add_span(s, ns, a->sbuf, a->sdispls[i] * sext, a->scounts[i], a->stype);
            add_span(r, nr, a->rbuf, a->rdispls[i] * rext, a->rcounts[i], a->rtype);
        }
        break;
    }
    case HALO_COLL_ALLTOALLW:   /* displacements in bytes */
        if (!a->sdispls || !a->scounts || !a->rdispls || !a->rcounts || !a->stypes || !a->rtypes)
            break;
        for (int i = 0; i < p; i++) {
            add_span(s, ns, a->sbuf, a->sdispls[i], a->scounts[i], a->stypes[i]);
            add_span(r, nr, a->rbuf, a->rdispls[i], a->rcounts[i], a->rtypes[i]);
        }
        break;
    case HALO_COLL_REDUCE:
    case HALO_COLL_ALLREDUCE:
    case HALO_COLL_SCAN:
    case HALO_COLL_EXSCAN:
        add_span(s, ns, a->sbuf, 0, a->count, a->type);
        add_span(r, nr, a->rbuf, 0, a->count, a->type);
        break;
    case HALO_COLL_REDUCE_SCATTER_BLOCK:
        add_span(s, ns, a->sbuf, 0, (MPI_Count)p * a->count, a->type);
        add_span(r, nr, a->rbuf, 0, a->count, a->type);
        break;
    case HALO_COLL_REDUCE_SCATTER: {
        MPI_Count total = 0;
        for (int i = 0; i < p; i++)
            total += a->rcounts[i];
        add_span(s, ns, a->sbuf, 0, total, a->type);
        add_span(r, nr, a->rbuf, 0, a->rcounts[me], a->type);
        break;
    }
    default:
        break;
    }
}

/* MPI_ERR_BUFFER when a send block and a receive block of this rank's call
 * share bytes. Only where both sides are used here: the root of a rooted
 * call, everyone otherwise, neither side MPI_IN_PLACE. */
static int no_overlap(const coll_args_t *a, halo_comm_t *c)
{
    int p = c->size, me = c->rank;
    switch (a->kind) {
    case HALO_COLL_GATHER:
    case HALO_COLL_GATHERV:
    case HALO_COLL_SCATTER:
    case HALO_COLL_SCATTERV:
    case HALO_COLL_REDUCE:
        if (me != a->root)
            return MPI_SUCCESS;
        break;
    case HALO_COLL_ALLGATHER:
    case HALO_COLL_ALLGATHERV:
    case HALO_COLL_ALLTOALL:
    case HALO_COLL_ALLTOALLV:
    case HALO_COLL_ALLTOALLW:
    case HALO_COLL_ALLREDUCE:
    case HALO_COLL_SCAN:
    case HALO_COLL_EXSCAN:
    case HALO_COLL_REDUCE_SCATTER:
    case HALO_COLL_REDUCE_SCATTER_BLOCK:
        break;
    default:
        return MPI_SUCCESS;
    }
    if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE)
        return MPI_SUCCESS;
    enum { STACK = 16 };
    span_t stack[2 * STACK], *s = stack, *r = stack + STACK;
    if (p > STACK) {
        s = halo_malloc(2 * (size_t)p * sizeof *s);
        r = s + p;
    }
    int ns, nr;
    call_spans(a, p, me, s, &ns, r, &nr);
    bool meet = spans_meet(s, ns, r, nr);
    if (s != stack)
        free(s);
    if (meet)
        return alias_err(a->sbuf, a->rbuf, true);
    return MPI_SUCCESS;
}

static int check_args(const coll_args_t *a, halo_comm_t *c)
{
    int rc = check_args_each(a, c);
    return rc ? rc : no_overlap(a, c);
}

/* Intercommunicators (MPI 5.0 chapter 6): root is MPI_ROOT at the root,
 * MPI_PROC_NULL in the rest of its group, the root's rank in the remote
 * group elsewhere; arrays that name processes are by remote rank (except
 * Reduce_scatter's, by local rank); MPI_IN_PLACE is never allowed, and
 * block sizes are not compared (the two ends are in different processes). */
enum { INTER_ROOT, INTER_IDLE, INTER_OTHER };

static int inter_role(halo_comm_t *c, int root, int *role_p)
{
    if (root == MPI_ROOT)
        *role_p = INTER_ROOT;
    else if (root == MPI_PROC_NULL)
        *role_p = INTER_IDLE;
    else if (root >= 0 && root < c->remote_group->size)
        *role_p = INTER_OTHER;
    else
        return halo_err(MPI_ERR_ROOT, "(root=%d): on an intercommunicator, root must be MPI_ROOT, "
                        "MPI_PROC_NULL or a rank of the remote group (size %d)", root, c->remote_group->size);
    return MPI_SUCCESS;
}

static int inter_not_in_place(const void *buf, const char *arg)
{
    if (buf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(%s=MPI_IN_PLACE): not allowed on an intercommunicator", arg);
    return MPI_SUCCESS;
}

/* sendbuf, sendcount(s), sendtype(s) */
static int inter_send_side(const coll_args_t *a, int n)
{
    int rc;
    if ((rc = inter_not_in_place(a->sbuf, "sendbuf")))
        return rc;
    if (a->kind == HALO_COLL_ALLTOALLW) {
        if ((rc = check_counts(n, a->scounts, "sendcounts")))
            return rc;
        return check_types(n, a->stypes, "sendtypes");
    }
    if (a->kind == HALO_COLL_SCATTERV || a->kind == HALO_COLL_ALLTOALLV)
        rc = check_counts(n, a->scounts, "sendcounts");
    else
        rc = check_count(a->scount, "sendcount");
    if (rc)
        return rc;
    return check_type(a->stype, "sendtype");
}

/* recvbuf, recvcount(s), recvtype(s) */
static int inter_recv_side(const coll_args_t *a, int n)
{
    int rc;
    if ((rc = inter_not_in_place(a->rbuf, "recvbuf")))
        return rc;
    if (a->kind == HALO_COLL_ALLTOALLW) {
        if ((rc = check_counts(n, a->rcounts, "recvcounts")))
            return rc;
        return check_types(n, a->rtypes, "recvtypes");
    }
    if (a->kind == HALO_COLL_GATHERV || a->kind == HALO_COLL_ALLGATHERV || a->kind == HALO_COLL_ALLTOALLV)
        rc = check_counts(n, a->rcounts, "recvcounts");
    else
        rc = check_count(a->rcount, "recvcount");
    if (rc)
        return rc;
    return check_type(a->rtype, "recvtype");
}

static int check_args_inter(const coll_args_t *a, halo_comm_t *c)
{
    int q = c->remote_group->size, role = INTER_OTHER, rc;
    switch (a->kind) {
    case HALO_COLL_BARRIER:
        return MPI_SUCCESS;
    case HALO_COLL_BCAST:
        if ((rc = inter_role(c, a->root, &role)) || role == INTER_IDLE ||
            (rc = check_count(a->count, "count")))
            return rc;
        return check_type(a->type, "datatype");
    case HALO_COLL_GATHER:
    case HALO_COLL_GATHERV:
        if ((rc = inter_role(c, a->root, &role)) || role == INTER_IDLE)
            return rc;
        return role == INTER_ROOT ? inter_recv_side(a, q) : inter_send_side(a, q);
    case HALO_COLL_SCATTER:
    case HALO_COLL_SCATTERV:
        if ((rc = inter_role(c, a->root, &role)) || role == INTER_IDLE)
            return rc;
        return role == INTER_ROOT ? inter_send_side(a, q) : inter_recv_side(a, q);
    case HALO_COLL_ALLGATHER:
    case HALO_COLL_ALLGATHERV:
    case HALO_COLL_ALLTOALL:
    case HALO_COLL_ALLTOALLV:
    case HALO_COLL_ALLTOALLW:
        if ((rc = inter_send_side(a, q)))
            return rc;
        return inter_recv_side(a, q);
    case HALO_COLL_REDUCE:
        if ((rc = inter_role(c, a->root, &role)) || role == INTER_IDLE)
            return rc;
        if (role == INTER_ROOT) {   /* the root's sendbuf is not significant */
            if ((rc = inter_not_in_place(a->rbuf, "recvbuf")))
                return rc;
            return check_reduction(NULL, a->rbuf, a->count, a->type, a->op, true);
        }
        if ((rc = inter_not_in_place(a->sbuf, "sendbuf")))
            return rc;
        return check_reduction(a->sbuf, NULL, a->count, a->type, a->op, false);
    case HALO_COLL_ALLREDUCE:
    case HALO_COLL_REDUCE_SCATTER_BLOCK:
    case HALO_COLL_REDUCE_SCATTER: {
        if ((rc = inter_not_in_place(a->sbuf, "sendbuf")) || (rc = inter_not_in_place(a->rbuf, "recvbuf")))
            return rc;
        MPI_Count total = a->count;
        if (a->kind == HALO_COLL_REDUCE_SCATTER) {
            if ((rc = check_counts(c->size, a->rcounts, "recvcounts")))
                return rc;
            total = 0;
            for (int i = 0; i < c->size; i++)
                total += a->rcounts[i];
        }
        return check_reduction(a->sbuf, a->rbuf, total, a->type, a->op, true);
    }
    case HALO_COLL_SCAN:
    case HALO_COLL_EXSCAN:   /* not defined here: halo_inter_build refuses them */
    case HALO_COLL_NEIGHBOR_ALLGATHER:   /* refused by coll_do (no topology here) */
    case HALO_COLL_NEIGHBOR_ALLGATHERV:
    case HALO_COLL_NEIGHBOR_ALLTOALL:
    case HALO_COLL_NEIGHBOR_ALLTOALLV:
    case HALO_COLL_NEIGHBOR_ALLTOALLW:
    case HALO_COLL_NKINDS:
        break;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- running */

/* Builds the schedule of a collective on intercommunicator c: on its
 * bridge, with a tag of the bridge's sequence (inter_util.c). */
static int build_inter(const coll_args_t *a, halo_comm_t *c, int lane, halo_sched_t **s_p)
{
    int rc;
    if (halo_error_checking && (rc = check_args_inter(a, c)))
        return rc;
    *s_p = halo_sched_new(halo_intercomm_bridge(c), lane);
    return halo_inter_build(a, c, s_p);
}

static bool strict_persistent_order(const halo_comm_t *c)
{
    const char *v = c->info ? halo_info_lookup(c->info, "mpi_assert_strict_persistent_collective_ordering")
                            : NULL;
    return v && !strcmp(v, "true");
}

/* ---------------------------------------------------------------- kept schedules */

/* A blocking collective made again with the same arguments (a solver's
 * Allreduce of one residual, a time step's Bcast) reruns the schedule it
 * built last time instead of choosing and building anew, which took a
 * third of a small call's time. A nonblocking one starts its kept
 * schedule again under a new request, as a persistent request's start
 * does, once the request of the last such call has been freed: until
 * then the schedule is lent to that request (a second identical call
 * meanwhile builds its own). Only calls whose schedule depends on
 * nothing but the arguments kept here qualify: predefined datatypes and
 * operation (a freed user type's handle may come back naming another
 * type; Alltoallw's type arrays included) on a communicator with state of
 * its own. The count, displacement and type arrays significant at this
 * rank are kept and compared entry by entry, since they may change under
 * the same address: p entries each, or for the neighborhood collectives
 * an entry per destination (send arrays) and per source (receive arrays)
 * of the communicator's topology, which never changes. */
#define KEEP_MAX 8
#define KEEP_BYTES_MAX ((uint64_t)1 << 20)   /* largest schedule allocation kept */

/* Entries of a call's send arrays (scounts, sdispls, stypes) and of its
 * receive arrays. */
typedef struct {
    int s, r;
} arr_len_t;

static arr_len_t arr_len(const halo_comm_t *c, int kind)
{
    arr_len_t n = {c->size, c->size};
    if (halo_coll_is_neighbor(kind) && c->topo && !c->is_inter)
        halo_topo_degrees((halo_comm_t *)c, &n.r, &n.s);
    return n;
}

typedef struct kept {
    coll_args_t a;
    int how;           /* RUN_BLOCKING or RUN_NONBLOCKING */
    bool lent;         /* nonblocking: s belongs to a request not yet freed */
    halo_sched_t *s;
    halo_sched_prog_t *prog;   /* s compiled (halo_sched_compile), or NULL */
    int64_t *arrays;   /* a's arrays (arr_len entries each) in the order
                        * scounts, sdispls, rcounts, rdispls, stypes, rtypes
                        * (absent ones skipped) */
} kept_t;

typedef struct halo_coll_keep {
    kept_t e[KEEP_MAX];
    int n;
    int next;   /* the entry to replace when full */
    int8_t last[HALO_COLL_NKINDS];   /* by kind: the entry found last, plus one (0: none) */
} halo_coll_keep_t;

static bool predef(const void *handle)
{
    return (uintptr_t)handle < HALO_PREDEF_LIMIT;
}

/* Whether every entry of a type array is predefined (a NULL array is). */
static bool predef_types(const MPI_Datatype *v, int p)
{
    if (v)
        for (int i = 0; i < p; i++)
            if (!predef(v[i]))
                return false;
    return true;
}

/* The arrays a call passes are those significant at this rank, every
 * other one NULL (the API entries drop the rest: significant_arrays), so
 * a kept call compares all of them. */
static bool keepable(const coll_args_t *a, const halo_comm_t *c)
{
    if (c->is_inter || c->coll_tag_fixed)
        return false;
    arr_len_t n = arr_len(c, a->kind);
    if (!(predef_types(a->stypes, n.s) && predef_types(a->rtypes, n.r)))
        return false;
    return predef(a->stype) && predef(a->rtype) && predef(a->type) && predef(a->op);
}

/* Calls f(array, entries) on each of a's count, displacement and type
 * arrays that is present, in the order of kept_t's copies. */
#define FOR_ARRAYS(a, n, f)                                                                                \
    do {                                                                                                  \
        if ((a)->scounts)                                                                                 \
            f((a)->scounts, (n).s);                                                                       \
        if ((a)->sdispls)                                                                                 \
            f((a)->sdispls, (n).s);                                                                       \
        if ((a)->rcounts)                                                                                 \
            f((a)->rcounts, (n).r);                                                                       \
        if ((a)->rdispls)                                                                                 \
            f((a)->rdispls, (n).r);                                                                       \
        if ((a)->stypes)                                                                                  \
            f((a)->stypes, (n).s);                                                                        \
        if ((a)->rtypes)                                                                                  \
            f((a)->rtypes, (n).r);                                                                        \
    } while (0)

/* An array entry as kept: counts and displacements by value, predefined
 * types by handle. */
#define KEY(v) _Generic((v), MPI_Datatype: (int64_t)(intptr_t)(v), default: (int64_t)(v))

/* same_args compares these eleven fields before the arrays. */
_Static_assert(offsetof(coll_args_t, scounts) == 2 * sizeof(int) + 9 * sizeof(void *),
               "a field of halo_coll_args_t is missing from same_args");

static bool same_args(const kept_t *k, const coll_args_t *y, arr_len_t n)
{
    /* Every field up to the arrays, then which arrays are there and their
     * contents: a caller may fill a new array each time, or change one
     * under the same address. Field by field, not memcmp: y was just
     * written on the caller's stack, and a wide load across several of
     * those stores cannot take its bytes from them, so it would wait for
     * every store before it to leave the core, the shared-memory flag
     * that ended the last collective among them. */
    const coll_args_t *x = &k->a;
    if (x->kind != y->kind || x->root != y->root || x->sbuf != y->sbuf || x->rbuf != y->rbuf ||
        x->scount != y->scount || x->rcount != y->rcount || x->count != y->count || x->stype != y->stype ||
        x->rtype != y->rtype || x->type != y->type || x->op != y->op)
        return false;
    if (!k->arrays)   /* kept without arrays */
        return !y->scounts && !y->sdispls && !y->rcounts && !y->rdispls && !y->stypes && !y->rtypes;
    if (!x->scounts != !y->scounts || !x->sdispls != !y->sdispls || !x->rcounts != !y->rcounts ||
        !x->rdispls != !y->rdispls || !x->stypes != !y->stypes || !x->rtypes != !y->rtypes)
        return false;
    const int64_t *kv = k->arrays;
    bool same = true;
#define SAME(arr, p)                                                                                       \
    do {                                                                                                  \
        for (int i = 0; i < (p) && same; i++)                                                             \
            same = kv[i] == KEY((arr)[i]);                                                                \
        kv += (p);                                                                                        \
    } while (0)
    FOR_ARRAYS(y, n, SAME);
#undef SAME
    return same;
}

/* Whether entry e can serve a call made `how` with arguments a now. */
static bool keep_fits(const kept_t *e, int how, const coll_args_t *a, arr_len_t n)
{
    return e->s && e->how == how && !e->lent && same_args(e, a, n);
}

/* The kept entry of a call with these arguments, or NULL. */
static kept_t *keep_find(halo_comm_t *c, int how, const coll_args_t *a)
{
    halo_coll_keep_t *k = c->coll_keep;
    if (!k)
        return NULL;
    /* The entry this kind found last first: a loop of Barrier and Bcast
     * finds each at once. */
    int hint = k->last[a->kind] - 1;
    arr_len_t n = arr_len(c, a->kind);
    if (hint >= 0 && keep_fits(&k->e[hint], how, a, n))
        return &k->e[hint];
    for (int i = 0; i < k->n; i++)
        if (i != hint && keep_fits(&k->e[i], how, a, n)) {
            k->last[a->kind] = (int8_t)(i + 1);
            return &k->e[i];
        }
    return NULL;
}

/* Empties an entry; its schedule goes with it unless a request has it. */
static void keep_drop(kept_t *e)
{
    if (!e->lent)
        halo_sched_free(e->s);
    e->s = NULL;
    e->lent = false;
    free(e->prog);
    e->prog = NULL;
    free(e->arrays);
    e->arrays = NULL;
}

/* Reruns a kept entry's schedule; it stays kept (arguments and arrays
 * as they are) if the run succeeds, and is dropped if it fails. */
static int keep_rerun(kept_t *e)
{
    halo_sched_t *s = e->s;
    e->s = NULL;   /* not found by a call made while it runs */
    int rc = e->prog ? halo_sched_rerun_prog(s, e->prog) : halo_sched_rerun(s);
    e->s = s;
    if (rc != MPI_SUCCESS)
        keep_drop(e);
    return rc;
}

/* A new request running a schedule built for it or lent by an entry. */
static halo_request_t *coll_request(halo_comm_t *c, halo_sched_t *s, coll_refs_t *refs,
                                    MPI_Request *request)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_COLL, c);
    halo_status_empty(&r->status);
    r->sched = s;
    if (refs) {
        r->priv = refs;
        r->priv_free = refs_release;
    }
    *request = (MPI_Request)r;
    return r;
}

static long long kept_starts;   /* nonblocking calls that started a kept schedule */

long long halo_coll_kept_starts(void)
{
    return kept_starts;
}

/* Starts a kept nonblocking schedule under a new request, with the next
 * nonblocking sequence number, as a persistent request's start does. */
static int keep_start(halo_comm_t *c, kept_t *e, MPI_Request *request)
{
    halo_sched_t *s = e->s;
    kept_starts++;
    halo_sched_reset(s);
    halo_sched_renumber(s);
    e->lent = true;
    halo_request_t *r = coll_request(c, s, NULL, request);
    if (e->prog)
        halo_sched_start_prog(s, r, e->prog);
    else
        halo_sched_start(s, r);
    return MPI_SUCCESS;
}

void halo_coll_sched_release(halo_comm_t *c, halo_sched_t *s)
{
    /* A lent schedule is still its entry's (a replaced entry lets go of
     * it), and no other entry can hold the same allocation meanwhile. */
    halo_coll_keep_t *k = c ? c->coll_keep : NULL;
    if (k)
        for (int i = 0; i < k->n; i++) {
            kept_t *e = &k->e[i];
            if (e->s != s || !e->lent)
                continue;
            e->lent = false;
            if (s->error == MPI_SUCCESS && !s->aborted)
                return;   /* kept for the next identical call */
            keep_drop(e);
            return;
        }
    halo_sched_free(s);   /* not lent, or its entry was replaced meanwhile */
}

/* Keeps s, built for a call made `how` with arguments a, for the next
 * identical call: at once for a blocking call that has run; for a
 * nonblocking one from the end of the request it is about to run under. */
static void keep_put(halo_comm_t *c, int how, const coll_args_t *a, halo_sched_t *s)
{
    halo_coll_keep_t *k = c->coll_keep;
    if (!k)
        k = c->coll_keep = halo_calloc(1, sizeof *k);
    int slot = -1;
    for (int i = 0; i < k->n && slot < 0; i++)
        if (!k->e[i].s)
            slot = i;
    if (slot < 0 && k->n < KEEP_MAX)
        slot = k->n++;
    if (slot < 0) {
        slot = k->next;
        k->next = (k->next + 1) % KEEP_MAX;
    }
    kept_t *e = &k->e[slot];
    keep_drop(e);
    e->a = *a;
    e->how = how;
    e->s = s;
    e->lent = how == RUN_NONBLOCKING;
    e->prog = halo_sched_compile(s);
    arr_len_t n = arr_len(c, a->kind);
    size_t entries = 0;
    int narr = 0;
#define COUNT(arr, p) (narr++, entries += (size_t)(p))
    FOR_ARRAYS(a, n, COUNT);
#undef COUNT
    if (narr) {
        int64_t *kv = e->arrays = halo_malloc((entries ? entries : 1) * sizeof(int64_t));
#define COPY(arr, p)                                                                                       \
    do {                                                                                                  \
        for (int i = 0; i < (p); i++)                                                                     \
            kv[i] = KEY((arr)[i]);                                                                        \
        kv += (p);                                                                                        \
    } while (0)
        FOR_ARRAYS(a, n, COPY);
#undef COPY
    }
}

/* After a blocking run of a keepable call: keeps its schedule for the next
 * call with these arguments, or frees it if the call failed. */
static int keep_or_free(halo_comm_t *c, const coll_args_t *a, halo_sched_t *s, int rc)
{
    if (rc == MPI_SUCCESS)
        keep_put(c, RUN_BLOCKING, a, s);
    else
        halo_sched_free(s);
    return rc;
}

void halo_coll_keep_free(halo_comm_t *c)
{
    halo_coll_keep_t *k = c->coll_keep;
    if (!k)
        return;
    for (int i = 0; i < k->n; i++)
        keep_drop(&k->e[i]);   /* a lent schedule stays with its request */
    free(k);
    c->coll_keep = NULL;
}

static int coll_build_run(int how, const coll_args_t *a, halo_comm_t *c, MPI_Request *request);

/* A blocking call kept from before reruns its schedule at once; everything
 * else chooses and builds (coll_build_run, kept out of line so that the
 * rerun does not pay for its frame). */
static int coll_do(int how, const coll_args_t *a, halo_comm_t *c, MPI_Request *request)
{
    if (how != RUN_PERSISTENT && c->coll_keep) {
        /* The same arguments passed the checks at the kept call, and were
         * keepable then: same_args compares everything keepable looks at
         * but the communicator's constant kind. */
        kept_t *e = keep_find(c, how, a);
        if (e)
            return how == RUN_BLOCKING ? keep_rerun(e) : keep_start(c, e, request);
    }
    return coll_build_run(how, a, c, request);
}

static __attribute__((noinline)) int coll_build_run(int how, const coll_args_t *a, halo_comm_t *c,
                                                    MPI_Request *request)
{
    /* HALO_ERROR_CHECKING=0 skips the argument checks here as in the
     * binding layer. */
    int rc;
    halo_sched_t *s = NULL;
    bool neighbor = halo_coll_is_neighbor(a->kind);
    halo_comm_t *tc = c->is_inter ? halo_intercomm_bridge(c) : c;   /* whose tags the call takes */
    /* Persistent collectives match in the order of their init calls (MPI
     * 4), so each takes its number at init and keeps it: every start sends
     * under the same tag (starts of one request follow each other, so
     * their messages between two ranks cannot cross), and its
     * shared-memory steps work in a region of its own, with epochs from
     * its own count of starts (coll/shm.h). Where the communicator asserts
     * mpi_assert_strict_persistent_collective_ordering (starts in the same
     * order everywhere), a start numbers itself like a nonblocking call
     * instead and uses the communicator's region. */
    bool by_init = how == RUN_PERSISTENT && !strict_persistent_order(c);
    bool keep = how != RUN_PERSISTENT && keepable(a, c);
    int checked = -1;   /* check_args' result once called here */
    if (keep)
        checked = halo_error_checking ? check_args(a, c) : MPI_SUCCESS;
    int lane = how == RUN_BLOCKING                 ? HALO_LANE_BLOCKING
               : how == RUN_PERSISTENT && !by_init ? HALO_LANE_NONE
                                                   : HALO_LANE_NONBLOCKING;
    if (c->is_inter && !neighbor) {
        rc = build_inter(a, c, lane, &s);
    } else if ((rc = checked >= 0        ? checked
                     : halo_error_checking ? check_args(a, c)
                     : neighbor          ? halo_topo_degrees(c, NULL, NULL)   /* nothing to run on without */
                                         : MPI_SUCCESS)) {
        s = NULL;
    } else {
        const halo_coll_algo_t *al = halo_coll_select(a, c);
        if (!al)
            rc = halo_err(MPI_ERR_INTERN, ": no usable %s algorithm", halo_coll_kind_name(a->kind));
        else {
            s = halo_sched_new(c, lane);
            rc = al->build(a, c, &s);
        }
    }
    if (rc != MPI_SUCCESS) {
        /* The other ranks may be in this collective already: they learn
         * that it failed here instead of waiting for us (a persistent
         * collective only fails when started). Not for aliased buffers
         * (alias_error). */
        if (how != RUN_PERSISTENT && !(alias_error && !s))
            halo_sched_fail_call(tc, s, lane, rc);
        alias_error = false;
        halo_sched_free(s);
        return rc;
    }
    s->kind = (int32_t)a->kind;
    s->seq_fixed = by_init;
    /* A schedule with a large scratch area (or buffers of its own) is not
     * kept: building is nothing beside moving that much data, and a
     * communicator would hold KEEP_MAX of them. */
    if (s->bytes + s->owned_bytes > KEEP_BYTES_MAX)
        keep = false;
    if (how == RUN_BLOCKING)
        return keep ? keep_or_free(c, a, s, halo_sched_run_keep(s)) : halo_sched_run(s);
    /* A kept schedule's types and operation are predefined: it needs no
     * references. */
    coll_refs_t *refs = keep ? NULL : refs_of(s);
    halo_request_t *r = coll_request(c, s, refs, request);
    if (how == RUN_NONBLOCKING) {
        if (keep)
            keep_put(c, RUN_NONBLOCKING, a, s);
        halo_sched_start(s, r);
    } else {
        refs->prog = halo_sched_compile(s);
        r->persistent = 1;
        r->active = 0;
        atomic_store(&r->cc, 0);
    }
    return MPI_SUCCESS;
}

int halo_coll_do(int how, const halo_coll_args_t *a, halo_comm_t *c, MPI_Request *request)
{
    return coll_do(how, a, c, request);
}

int halo_coll_start(halo_request_t *r)
{
    halo_sched_reset(r->sched);
    if (!r->sched->seq_fixed)
        halo_sched_renumber(r->sched);
    atomic_store_explicit(&r->cc, 1, memory_order_relaxed);   /* no fence: see halo_req_complete */
    halo_status_empty(&r->status);
    const coll_refs_t *refs = r->priv;
    if (refs->prog)
        halo_sched_start_prog(r->sched, r, refs->prog);
    else
        halo_sched_start(r->sched, r);
    return MPI_SUCCESS;
}

/* The int forms of the v and w collectives widen their arrays (p entries
 * each; NULL stays NULL) and share the large-count path. */
MPI_Count *halo_coll_widen_counts(int p, const int *v, MPI_Count *stack)
{
    if (!v)
        return NULL;
    MPI_Count *w = stack && p <= HALO_COLL_WIDEN_STACK ? stack : halo_malloc((size_t)(p ? p : 1) * sizeof *w);
    for (int i = 0; i < p; i++)
        w[i] = v[i];
    return w;
}

MPI_Aint *halo_coll_widen_displs(int p, const int *v, MPI_Aint *stack)
{
    if (!v)
        return NULL;
    MPI_Aint *w = stack && p <= HALO_COLL_WIDEN_STACK ? stack : halo_malloc((size_t)(p ? p : 1) * sizeof *w);
    for (int i = 0; i < p; i++)
        w[i] = v[i];
    return w;
}

/* Which of a v or w call's arrays this rank reads: the send side's
 * unless it scatters without being the root or sends in place, the
 * receive side's unless it gathers without being the root. The others may
 * be anything, NULL included. */
static void significant_arrays(const coll_args_t *a, const halo_comm_t *c, bool *want_s, bool *want_r)
{
    bool root = c->is_inter ? a->root == MPI_ROOT : c->rank == a->root;
    *want_s = a->kind != HALO_COLL_SCATTERV || root;
    *want_r = a->kind != HALO_COLL_GATHERV || root;
    if (a->sbuf == MPI_IN_PLACE && (a->kind == HALO_COLL_ALLTOALLV || a->kind == HALO_COLL_ALLTOALLW))
        *want_s = false;
}

static int run_widened(int how, coll_args_t *a, MPI_Comm comm, MPI_Request *request, const int *sc,
                       const int *sd, const int *rc, const int *rd)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    /* Arrays have an entry by rank; on an intercommunicator, by remote
     * rank, except Reduce_scatter's counts (by local rank). */
    int p = c->is_inter && a->kind != HALO_COLL_REDUCE_SCATTER ? c->remote_group->size : c->size;
    bool want_s, want_r;
    significant_arrays(a, c, &want_s, &want_r);
    MPI_Count cs[2][HALO_COLL_WIDEN_STACK];
    MPI_Aint ds[2][HALO_COLL_WIDEN_STACK];
    MPI_Count *scounts = want_s ? halo_coll_widen_counts(p, sc, cs[0]) : NULL;
    MPI_Count *rcounts = want_r ? halo_coll_widen_counts(p, rc, cs[1]) : NULL;
    MPI_Aint *sdispls = want_s ? halo_coll_widen_displs(p, sd, ds[0]) : NULL;
    MPI_Aint *rdispls = want_r ? halo_coll_widen_displs(p, rd, ds[1]) : NULL;
    a->scounts = scounts;
    a->sdispls = sdispls;
    a->rcounts = rcounts;
    a->rdispls = rdispls;
    if (!want_s)
        a->stypes = NULL;
    int rcode = coll_do(how, a, c, request);
    if (p > HALO_COLL_WIDEN_STACK) {
        free(scounts);
        free(rcounts);
        free(sdispls);
        free(rdispls);
    }
    return rcode;
}

/* The large-count v and w forms: their arrays as given, those not
 * significant here dropped. */
static int run_arrays(int how, coll_args_t *a, MPI_Comm comm, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    bool want_s, want_r;
    significant_arrays(a, c, &want_s, &want_r);
    if (!want_s) {
        a->scounts = NULL;
        a->sdispls = NULL;
        a->stypes = NULL;
    }
    if (!want_r) {
        a->rcounts = NULL;
        a->rdispls = NULL;
        a->rtypes = NULL;
    }
    return coll_do(how, a, c, request);
}

static int run(int how, const coll_args_t *a, MPI_Comm comm, MPI_Request *request)
{
    return coll_do(how, a, halo_comm_ptr(comm), request);
}

/* ---------------------------------------------------------------- internal (coll.h) */

int halo_coll_barrier(halo_comm_t *c)
{
    coll_args_t a = {.kind = HALO_COLL_BARRIER};
    return coll_do(RUN_BLOCKING, &a, c, NULL);
}

int halo_coll_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c)
{
    coll_args_t a = {.kind = HALO_COLL_BCAST, .rbuf = buf, .count = count, .type = type, .root = root};
    return coll_do(RUN_BLOCKING, &a, c, NULL);
}

int halo_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                        halo_comm_t *c)
{
    coll_args_t a = {.kind = HALO_COLL_ALLREDUCE, .sbuf = sbuf, .rbuf = rbuf, .count = count,
                     .type = type, .op = op};
    return coll_do(RUN_BLOCKING, &a, c, NULL);
}

int halo_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c)
{
    coll_args_t a = {.kind = HALO_COLL_ALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype,
                     .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return coll_do(RUN_BLOCKING, &a, c, NULL);
}

int halo_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
                         const int *displs, MPI_Datatype rtype, halo_comm_t *c)
{
    coll_args_t a = {.kind = HALO_COLL_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,
                     .rbuf = rbuf, .rtype = rtype};
    return run_widened(RUN_BLOCKING, &a, halo_comm_handle(c), NULL, NULL, NULL, rcounts, displs);
}

void halo_coll_init(void)
{
    halo_coll_select_init();
    halo_sched_init();
}

/* ---------------------------------------------------------------- MPI API */

/* Barrier */
int halo_api_barrier(MPI_Comm comm)
{
    coll_args_t a = {.kind = HALO_COLL_BARRIER};
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = {.kind = HALO_COLL_BARRIER};
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = {.kind = HALO_COLL_BARRIER};
    return run(RUN_PERSISTENT, &a, comm, request);
}

/* Bcast */
#define BCAST_ARGS {.kind = HALO_COLL_BCAST, .rbuf = buf, .count = count, .type = type, .root = root}
int halo_api_bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    coll_args_t a = BCAST_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ibcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    coll_args_t a = BCAST_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_bcast_init_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = BCAST_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}

/* Gather, Scatter, Allgather, Alltoall: the same arguments. */
#define BLOCK_ARGS(k)                                                                         \
    {.kind = (k), .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf,               \
     .rcount = rcount, .rtype = rtype, .root = root}
#define BLOCK_PARAMS                                                                          \
    const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf, MPI_Count rcount,     \
        MPI_Datatype rtype

int halo_api_gather_c(BLOCK_PARAMS, int root, MPI_Comm comm)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_GATHER);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_igather_c(BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_GATHER);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_gather_init_c(BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_GATHER);
    return run(RUN_PERSISTENT, &a, comm, request);
}

int halo_api_scatter_c(BLOCK_PARAMS, int root, MPI_Comm comm)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_SCATTER);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_iscatter_c(BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = BLOCK_ARGS(HALO_COLL_SCATTER);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_scatter_init_c(BLOCK_PARAMS, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_SCATTER);
    return run(RUN_PERSISTENT, &a, comm, request);
}

int halo_api_allgather_c(BLOCK_PARAMS, MPI_Comm comm)
{
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLGATHER);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_iallgather_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLGATHER);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_allgather_init_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLGATHER);
    return run(RUN_PERSISTENT, &a, comm, request);
}

int halo_api_alltoall_c(BLOCK_PARAMS, MPI_Comm comm)
{
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLTOALL);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ialltoall_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLTOALL);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_alltoall_init_c(BLOCK_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    int root = 0;
    coll_args_t a = BLOCK_ARGS(HALO_COLL_ALLTOALL);
    return run(RUN_PERSISTENT, &a, comm, request);
}

/* Gatherv */
#define GATHERV_ARGS                                                                          \
    {.kind = HALO_COLL_GATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, \
     .rcounts = rcounts, .rdispls = displs, .rtype = rtype, .root = root}
#define GATHERV_INT_ARGS                                                                      \
    {.kind = HALO_COLL_GATHERV, .sbuf = sbuf, .scount = scount, .stype = stype, .rbuf = rbuf, \
     .rtype = rtype, .root = root}

int halo_api_gatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                       const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
                       MPI_Comm comm)
{
    coll_args_t a = GATHERV_ARGS;
    return run_arrays(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_igatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, int root,
                        MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = GATHERV_ARGS;
    return run_arrays(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_gatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                            const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                            int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = GATHERV_ARGS;
    return run_arrays(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                     const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm)
{
    coll_args_t a = GATHERV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, NULL, NULL, rcounts, displs);
}
int halo_api_igatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                      const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = GATHERV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, NULL, NULL, rcounts, displs);
}
int halo_api_gatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = GATHERV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, NULL, NULL, rcounts, displs);
}

/* Scatterv */
#define SCATTERV_ARGS                                                                         \
    {.kind = HALO_COLL_SCATTERV, .sbuf = sbuf, .scounts = scounts, .sdispls = displs,         \
     .stype = stype, .rbuf = rbuf, .rcount = rcount, .rtype = rtype, .root = root}
#define SCATTERV_INT_ARGS                                                                     \
    {.kind = HALO_COLL_SCATTERV, .sbuf = sbuf, .stype = stype, .rbuf = rbuf, .rcount = rcount, \
     .rtype = rtype, .root = root}

int halo_api_scatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                        MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                        MPI_Comm comm)
{
    coll_args_t a = SCATTERV_ARGS;
    return run_arrays(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_iscatterv_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                         MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int root,
                         MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = SCATTERV_ARGS;
    return run_arrays(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_scatterv_init_c(const void *sbuf, const MPI_Count scounts[], const MPI_Aint displs[],
                             MPI_Datatype stype, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                             int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = SCATTERV_ARGS;
    return run_arrays(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_scatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                      void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
    coll_args_t a = SCATTERV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, scounts, displs, NULL, NULL);
}
int halo_api_iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                       void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                       MPI_Request *request)
{
    coll_args_t a = SCATTERV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, scounts, displs, NULL, NULL);
}
int halo_api_scatterv_init(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                           void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                           MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = SCATTERV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, scounts, displs, NULL, NULL);
}

/* Allgatherv */
#define ALLGATHERV_ARGS                                                                       \
    {.kind = HALO_COLL_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,            \
     .rbuf = rbuf, .rcounts = rcounts, .rdispls = displs, .rtype = rtype}
#define ALLGATHERV_INT_ARGS                                                                   \
    {.kind = HALO_COLL_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,            \
     .rbuf = rbuf, .rtype = rtype}

int halo_api_allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                          MPI_Comm comm)
{
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_iallgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                           MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_allgatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                               const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLGATHERV_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, NULL, NULL, rcounts, displs);
}
int halo_api_iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                         const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, NULL, NULL, rcounts, displs);
}
int halo_api_allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                             MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLGATHERV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, NULL, NULL, rcounts, displs);
}

/* Alltoallv */
#define ALLTOALLV_ARGS                                                                        \
    {.kind = HALO_COLL_ALLTOALLV, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,       \
     .stype = stype, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtype = rtype}
#define ALLTOALLV_INT_ARGS                                                                    \
    {.kind = HALO_COLL_ALLTOALLV, .sbuf = sbuf, .stype = stype, .rbuf = rbuf, .rtype = rtype}
#define ALLTOALLV_PARAMS_C                                                                    \
    const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[], MPI_Datatype stype, \
        void *rbuf, const MPI_Count rcounts[], const MPI_Aint rdispls[], MPI_Datatype rtype
#define ALLTOALLV_PARAMS                                                                      \
    const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void *rbuf, \
        const int rcounts[], const int rdispls[], MPI_Datatype rtype

int halo_api_alltoallv_c(ALLTOALLV_PARAMS_C, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLV_ARGS;
    return run_arrays(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ialltoallv_c(ALLTOALLV_PARAMS_C, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLV_ARGS;
    return run_arrays(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_alltoallv_init_c(ALLTOALLV_PARAMS_C, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLV_ARGS;
    return run_arrays(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_alltoallv(ALLTOALLV_PARAMS, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, scounts, sdispls, rcounts, rdispls);
}
int halo_api_ialltoallv(ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}
int halo_api_alltoallv_init(ALLTOALLV_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLV_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}

/* Alltoallw (displacements in bytes) */
#define ALLTOALLW_ARGS                                                                        \
    {.kind = HALO_COLL_ALLTOALLW, .sbuf = sbuf, .scounts = scounts, .sdispls = sdispls,       \
     .stypes = stypes, .rbuf = rbuf, .rcounts = rcounts, .rdispls = rdispls, .rtypes = rtypes}
#define ALLTOALLW_INT_ARGS                                                                    \
    {.kind = HALO_COLL_ALLTOALLW, .sbuf = sbuf, .stypes = stypes, .rbuf = rbuf, .rtypes = rtypes}
#define ALLTOALLW_PARAMS_C                                                                    \
    const void *sbuf, const MPI_Count scounts[], const MPI_Aint sdispls[],                    \
        const MPI_Datatype stypes[], void *rbuf, const MPI_Count rcounts[],                   \
        const MPI_Aint rdispls[], const MPI_Datatype rtypes[]
#define ALLTOALLW_PARAMS                                                                      \
    const void *sbuf, const int scounts[], const int sdispls[], const MPI_Datatype stypes[],  \
        void *rbuf, const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[]

int halo_api_alltoallw_c(ALLTOALLW_PARAMS_C, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLW_ARGS;
    return run_arrays(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ialltoallw_c(ALLTOALLW_PARAMS_C, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLW_ARGS;
    return run_arrays(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_alltoallw_init_c(ALLTOALLW_PARAMS_C, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLW_ARGS;
    return run_arrays(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_alltoallw(ALLTOALLW_PARAMS, MPI_Comm comm)
{
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, scounts, sdispls, rcounts, rdispls);
}
int halo_api_ialltoallw(ALLTOALLW_PARAMS, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}
int halo_api_alltoallw_init(ALLTOALLW_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = ALLTOALLW_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, scounts, sdispls, rcounts, rdispls);
}

/* Reductions: Reduce, Allreduce, Scan, Exscan, Reduce_scatter_block. */
#define RED_ARGS(k)                                                                           \
    {.kind = (k), .sbuf = sbuf, .rbuf = rbuf, .count = count, .type = type, .op = op, .root = root}
#define RED_PARAMS const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op

int halo_api_reduce_c(RED_PARAMS, int root, MPI_Comm comm)
{
    coll_args_t a = RED_ARGS(HALO_COLL_REDUCE);
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ireduce_c(RED_PARAMS, int root, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = RED_ARGS(HALO_COLL_REDUCE);
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_reduce_init_c(RED_PARAMS, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = RED_ARGS(HALO_COLL_REDUCE);
    return run(RUN_PERSISTENT, &a, comm, request);
}

#define RED_NOROOT(name, kind)                                                                \
    int halo_api_##name##_c(RED_PARAMS, MPI_Comm comm)                                        \
    {                                                                                         \
        int root = 0;                                                                         \
        coll_args_t a = RED_ARGS(kind);                                                       \
        return run(RUN_BLOCKING, &a, comm, NULL);                                             \
    }                                                                                         \
    int halo_api_i##name##_c(RED_PARAMS, MPI_Comm comm, MPI_Request *request)                 \
    {                                                                                         \
        int root = 0;                                                                         \
        coll_args_t a = RED_ARGS(kind);                                                       \
        return run(RUN_NONBLOCKING, &a, comm, request);                                       \
    }                                                                                         \
    int halo_api_##name##_init_c(RED_PARAMS, MPI_Comm comm, MPI_Info info, MPI_Request *request) \
    {                                                                                         \
        (void)info;                                                                           \
        int root = 0;                                                                         \
        coll_args_t a = RED_ARGS(kind);                                                       \
        return run(RUN_PERSISTENT, &a, comm, request);                                        \
    }

RED_NOROOT(allreduce, HALO_COLL_ALLREDUCE)
RED_NOROOT(scan, HALO_COLL_SCAN)
RED_NOROOT(exscan, HALO_COLL_EXSCAN)
RED_NOROOT(reduce_scatter_block, HALO_COLL_REDUCE_SCATTER_BLOCK)

/* Reduce_scatter */
#define RS_ARGS                                                                               \
    {.kind = HALO_COLL_REDUCE_SCATTER, .sbuf = sbuf, .rbuf = rbuf, .rcounts = rcounts,        \
     .type = type, .op = op}
#define RS_INT_ARGS {.kind = HALO_COLL_REDUCE_SCATTER, .sbuf = sbuf, .rbuf = rbuf, .type = type, .op = op}

int halo_api_reduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm)
{
    coll_args_t a = RS_ARGS;
    return run(RUN_BLOCKING, &a, comm, NULL);
}
int halo_api_ireduce_scatter_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[], MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = RS_ARGS;
    return run(RUN_NONBLOCKING, &a, comm, request);
}
int halo_api_reduce_scatter_init_c(const void *sbuf, void *rbuf, const MPI_Count rcounts[],
                                   MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    (void)info;
    coll_args_t a = RS_ARGS;
    return run(RUN_PERSISTENT, &a, comm, request);
}
int halo_api_reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                            MPI_Comm comm)
{
    coll_args_t a = RS_INT_ARGS;
    return run_widened(RUN_BLOCKING, &a, comm, NULL, NULL, NULL, rcounts, NULL);
}
int halo_api_ireduce_scatter(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a = RS_INT_ARGS;
    return run_widened(RUN_NONBLOCKING, &a, comm, request, NULL, NULL, rcounts, NULL);
}
int halo_api_reduce_scatter_init(const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type,
                                 MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a = RS_INT_ARGS;
    return run_widened(RUN_PERSISTENT, &a, comm, request, NULL, NULL, rcounts, NULL);
}
