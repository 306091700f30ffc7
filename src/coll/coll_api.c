/* The collective MPI functions of the foundation: Barrier, Bcast, Allreduce,
 * Allgather, blocking, nonblocking and persistent. Each checks what the
 * binding layer could not (root, op, in-place rules), builds the schedule
 * of its algorithm, and runs it or hands it to a request. */
#include "coll/coll.h"

#include "coll/algos.h"
#include "core/errors.h"
#include "pt2pt/pt2pt.h"

/* What to build: a collective's arguments, kept by persistent requests so
 * each start builds a fresh schedule with a fresh sequence number. */
typedef enum { COLL_BARRIER = 1, COLL_BCAST, COLL_ALLREDUCE, COLL_ALLGATHER, COLL_ALLGATHERV } coll_kind_t;

typedef struct coll_args {
    coll_kind_t kind;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int root;
    /* v-collectives: per-rank counts and displacements, copied (persistent
     * requests outlive the caller's arrays' promise). */
    MPI_Count *rcounts;
    MPI_Aint *rdispls;
} coll_args_t;

static int build(const coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    *s_p = halo_sched_new(c);
    switch (a->kind) {
    case COLL_BARRIER:
        return halo_barrier_dissemination(c, s_p);
    case COLL_BCAST:
        return halo_bcast_binomial(a->rbuf, a->rcount, a->rtype, a->root, c, s_p);
    case COLL_ALLREDUCE:
        return halo_allreduce_recursive_doubling(a->sbuf, a->rbuf, a->rcount, a->rtype, a->op, c, s_p);
    case COLL_ALLGATHER:
        return halo_allgather_ring(a->sbuf, a->scount, a->stype, a->rbuf, a->rcount, a->rtype, c, s_p);
    case COLL_ALLGATHERV:
        return halo_allgatherv_ring(a->sbuf, a->scount, a->stype, a->rbuf, a->rcounts, a->rdispls, a->rtype,
                                    c, s_p);
    }
    return MPI_ERR_INTERN;
}

static void args_free(coll_args_t *a)
{
    free(a->rcounts);
    free(a->rdispls);
}

static void args_release(void *p)
{
    args_free(p);
    free(p);
}

static int run_blocking(coll_args_t *a, halo_comm_t *c)
{
    halo_sched_t *s;
    int rc = build(a, c, &s);
    args_free(a);
    if (rc != MPI_SUCCESS) {
        halo_sched_free(s);
        return rc;
    }
    return halo_sched_run(s);
}

static int start_nonblocking(coll_args_t *a, halo_comm_t *c, MPI_Request *request)
{
    halo_sched_t *s;
    int rc = build(a, c, &s);
    args_free(a);
    if (rc != MPI_SUCCESS) {
        halo_sched_free(s);
        return rc;
    }
    halo_request_t *r = halo_req_alloc(HALO_REQ_COLL, c);
    halo_status_empty(&r->status);
    r->sched = s;
    *request = (MPI_Request)r;
    halo_sched_start(s, r);
    return MPI_SUCCESS;
}

static int init_persistent(const coll_args_t *a, halo_comm_t *c, MPI_Request *request)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_COLL, c);
    r->persistent = 1;
    r->active = 0;
    coll_args_t *copy = halo_malloc(sizeof *copy);
    *copy = *a;
    r->priv = copy;
    r->priv_free = args_release;
    atomic_store(&r->cc, 0);
    halo_status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_coll_start(halo_request_t *r)
{
    if (r->sched) {
        halo_sched_free(r->sched);
        r->sched = NULL;
    }
    halo_sched_t *s;
    int rc = build(r->priv, r->comm, &s);
    if (rc != MPI_SUCCESS) {
        halo_sched_free(s);
        return rc;
    }
    atomic_store(&r->cc, 1);
    halo_status_empty(&r->status);
    r->sched = s;
    halo_sched_start(s, r);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- checks */

static int check_root(halo_comm_t *c, int root)
{
    if (root < 0 || root >= c->size)
        return halo_err(MPI_ERR_ROOT, "(root=%d): root must be a rank of the communicator (size %d)",
                        root, c->size);
    return MPI_SUCCESS;
}

static int check_type(MPI_Datatype t, const char *arg)
{
    if (t == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(%s=MPI_DATATYPE_NULL): a datatype is required", arg);
    halo_dtype_t *dt = halo_dtype_get(t);
    if (!dt)
        return halo_err(MPI_ERR_TYPE, "(%s=%p): not a valid datatype", arg, (void *)t);
    if (!(dt->flags & HALO_DT_COMMITTED))
        return halo_err(MPI_ERR_TYPE, "(%s): the datatype is not committed", arg);
    return MPI_SUCCESS;
}

static int check_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op)
{
    int rc = check_type(type, "datatype");
    if (rc)
        return rc;
    if ((rc = halo_op_check(op, halo_dtype_ptr(type), "op")))
        return rc;
    if (sbuf == rbuf && count > 0 && sbuf != MPI_BOTTOM)
        return halo_err(MPI_ERR_BUFFER, "(sendbuf=recvbuf=%p): buffers must differ; use MPI_IN_PLACE", rbuf);
    if (rbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): only sendbuf may be MPI_IN_PLACE");
    return MPI_SUCCESS;
}

static int check_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           MPI_Count rcount, MPI_Datatype rtype)
{
    int rc = check_type(rtype, "recvtype");
    if (rc)
        return rc;
    if (rbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): only sendbuf may be MPI_IN_PLACE");
    if (sbuf != MPI_IN_PLACE) {
        if ((rc = check_type(stype, "sendtype")))
            return rc;
        if (scount * halo_dtype_ptr(stype)->size != rcount * halo_dtype_ptr(rtype)->size)
            return halo_err(MPI_ERR_TRUNCATE,
                            "(sendcount=%lld, recvcount=%lld): each rank's block must have the "
                            "same size in bytes on both sides", (long long)scount, (long long)rcount);
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- internal */

int halo_coll_barrier(halo_comm_t *c)
{
    coll_args_t a = {.kind = COLL_BARRIER};
    return run_blocking(&a, c);
}

int halo_coll_bcast(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c)
{
    coll_args_t a = {.kind = COLL_BCAST, .rbuf = buf, .rcount = count, .rtype = type, .root = root};
    return run_blocking(&a, c);
}

int halo_coll_allreduce(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op, halo_comm_t *c)
{
    coll_args_t a = {.kind = COLL_ALLREDUCE, .sbuf = sbuf, .rbuf = rbuf, .rcount = count,
                     .rtype = type, .op = op};
    return run_blocking(&a, c);
}

int halo_coll_allgather(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                        MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c)
{
    coll_args_t a = {.kind = COLL_ALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype,
                     .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return run_blocking(&a, c);
}

/* ---------------------------------------------------------------- MPI API */

static int intra_only(halo_comm_t *c)
{
    if (c->is_inter)
        return halo_err(MPI_ERR_UNSUPPORTED_OPERATION,
                        ": collectives on intercommunicators are not supported by Halo yet");
    return MPI_SUCCESS;
}

int halo_api_barrier(MPI_Comm comm)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = intra_only(c);
    return rc ? rc : halo_coll_barrier(c);
}

int halo_api_ibarrier(MPI_Comm comm, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    coll_args_t a = {.kind = COLL_BARRIER};
    int rc = intra_only(c);
    return rc ? rc : start_nonblocking(&a, c, request);
}

int halo_api_barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    halo_comm_t *c = halo_comm_ptr(comm);
    coll_args_t a = {.kind = COLL_BARRIER};
    int rc = intra_only(c);
    return rc ? rc : init_persistent(&a, c, request);
}

static int bcast_args(void *buf, MPI_Count count, MPI_Datatype type, int root, halo_comm_t *c,
                      coll_args_t *a)
{
    int rc = intra_only(c);
    if (rc || (rc = check_root(c, root)) || (rc = check_type(type, "datatype")))
        return rc;
    *a = (coll_args_t){.kind = COLL_BCAST, .rbuf = buf, .rcount = count, .rtype = type, .root = root};
    return MPI_SUCCESS;
}

int halo_api_bcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = bcast_args(buf, count, type, root, c, &a);
    return rc ? rc : run_blocking(&a, c);
}

int halo_api_ibcast_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                      MPI_Request *request)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = bcast_args(buf, count, type, root, c, &a);
    return rc ? rc : start_nonblocking(&a, c, request);
}

int halo_api_bcast_init_c(void *buf, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = bcast_args(buf, count, type, root, c, &a);
    return rc ? rc : init_persistent(&a, c, request);
}

static int allreduce_args(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                          MPI_Op op, halo_comm_t *c, coll_args_t *a)
{
    int rc = intra_only(c);
    if (rc || (rc = check_allreduce(sbuf, rbuf, count, type, op)))
        return rc;
    *a = (coll_args_t){.kind = COLL_ALLREDUCE, .sbuf = sbuf, .rbuf = rbuf, .rcount = count,
                       .rtype = type, .op = op};
    return MPI_SUCCESS;
}

int halo_api_allreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allreduce_args(sbuf, rbuf, count, type, op, c, &a);
    return rc ? rc : run_blocking(&a, c);
}

int halo_api_iallreduce_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                          MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allreduce_args(sbuf, rbuf, count, type, op, c, &a);
    return rc ? rc : start_nonblocking(&a, c, request);
}

int halo_api_allreduce_init_c(const void *sbuf, void *rbuf, MPI_Count count, MPI_Datatype type,
                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allreduce_args(sbuf, rbuf, count, type, op, c, &a);
    return rc ? rc : init_persistent(&a, c, request);
}

static int allgather_args(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rtype, halo_comm_t *c, coll_args_t *a)
{
    int rc = intra_only(c);
    if (rc || (rc = check_allgather(sbuf, scount, stype, rbuf, rcount, rtype)))
        return rc;
    *a = (coll_args_t){.kind = COLL_ALLGATHER, .sbuf = sbuf, .scount = scount, .stype = stype,
                       .rbuf = rbuf, .rcount = rcount, .rtype = rtype};
    return MPI_SUCCESS;
}

int halo_api_allgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                         MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allgather_args(sbuf, scount, stype, rbuf, rcount, rtype, c, &a);
    return rc ? rc : run_blocking(&a, c);
}

int halo_api_iallgather_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allgather_args(sbuf, scount, stype, rbuf, rcount, rtype, c, &a);
    return rc ? rc : start_nonblocking(&a, c, request);
}

int halo_api_allgather_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                              MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                              MPI_Request *request)
{
    (void)info;
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allgather_args(sbuf, scount, stype, rbuf, rcount, rtype, c, &a);
    return rc ? rc : init_persistent(&a, c, request);
}

static int allgatherv_args(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype,
                           halo_comm_t *c, coll_args_t *a)
{
    int rc = intra_only(c);
    if (rc || (rc = check_type(rtype, "recvtype")))
        return rc;
    if (rbuf == MPI_IN_PLACE)
        return halo_err(MPI_ERR_BUFFER, "(recvbuf=MPI_IN_PLACE): only sendbuf may be MPI_IN_PLACE");
    for (int i = 0; i < c->size; i++)
        if (rcounts[i] < 0)
            return halo_err(MPI_ERR_COUNT, "(recvcounts[%d]=%lld): must be non-negative", i, (long long)rcounts[i]);
    if (sbuf != MPI_IN_PLACE) {
        if ((rc = check_type(stype, "sendtype")))
            return rc;
        if (scount * halo_dtype_ptr(stype)->size != rcounts[c->rank] * halo_dtype_ptr(rtype)->size)
            return halo_err(MPI_ERR_TRUNCATE, "(sendcount=%lld, recvcounts[%d]=%lld): the block sizes in "
                            "bytes differ", (long long)scount, c->rank, (long long)rcounts[c->rank]);
    }
    *a = (coll_args_t){.kind = COLL_ALLGATHERV, .sbuf = sbuf, .scount = scount, .stype = stype,
                       .rbuf = rbuf, .rtype = rtype};
    a->rcounts = halo_malloc((size_t)c->size * sizeof(MPI_Count));
    a->rdispls = halo_malloc((size_t)c->size * sizeof(MPI_Aint));
    memcpy(a->rcounts, rcounts, (size_t)c->size * sizeof(MPI_Count));
    memcpy(a->rdispls, displs, (size_t)c->size * sizeof(MPI_Aint));
    return MPI_SUCCESS;
}

/* The int forms widen their arrays, then share the large-count path. */
static void widen(int n, const int *counts, const int *displs, MPI_Count **c_p, MPI_Aint **d_p)
{
    *c_p = halo_malloc((size_t)(n ? n : 1) * sizeof(MPI_Count));
    *d_p = halo_malloc((size_t)(n ? n : 1) * sizeof(MPI_Aint));
    for (int i = 0; i < n; i++) {
        (*c_p)[i] = counts[i];
        (*d_p)[i] = displs[i];
    }
}

enum { RUN_BLOCKING, RUN_NONBLOCKING, RUN_PERSISTENT };

static int allgatherv_run(int how, const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          const MPI_Count *rcounts, const MPI_Aint *displs, MPI_Datatype rtype,
                          MPI_Comm comm, MPI_Request *request)
{
    coll_args_t a;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = allgatherv_args(sbuf, scount, stype, rbuf, rcounts, displs, rtype, c, &a);
    if (rc)
        return rc;
    if (how == RUN_BLOCKING)
        return run_blocking(&a, c);
    if (how == RUN_NONBLOCKING)
        return start_nonblocking(&a, c, request);
    return init_persistent(&a, c, request);
}

static int allgatherv_int(int how, const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          const int *rcounts, const int *displs, MPI_Datatype rtype, MPI_Comm comm,
                          MPI_Request *request)
{
    MPI_Count *cc;
    MPI_Aint *dd;
    widen(halo_comm_ptr(comm)->size, rcounts, displs, &cc, &dd);
    int rc = allgatherv_run(how, sbuf, scount, stype, rbuf, cc, dd, rtype, comm, request);
    free(cc);
    free(dd);
    return rc;
}

int halo_api_allgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                          const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return allgatherv_run(RUN_BLOCKING, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, NULL);
}
int halo_api_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                        const int displs[], MPI_Datatype rtype, MPI_Comm comm)
{
    return allgatherv_int(RUN_BLOCKING, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, NULL);
}
int halo_api_iallgatherv_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                           const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                           MPI_Comm comm, MPI_Request *request)
{
    return allgatherv_run(RUN_NONBLOCKING, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request);
}
int halo_api_iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                         const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
    return allgatherv_int(RUN_NONBLOCKING, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request);
}
int halo_api_allgatherv_init_c(const void *sbuf, MPI_Count scount, MPI_Datatype stype, void *rbuf,
                               const MPI_Count rcounts[], const MPI_Aint displs[], MPI_Datatype rtype,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    (void)info;
    return allgatherv_run(RUN_PERSISTENT, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request);
}
int halo_api_allgatherv_init(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
                             const int displs[], MPI_Datatype rtype, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    (void)info;
    return allgatherv_int(RUN_PERSISTENT, sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, request);
}

int halo_coll_allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int *rcounts,
                         const int *displs, MPI_Datatype rtype, halo_comm_t *c)
{
    return allgatherv_int(RUN_BLOCKING, sbuf, scount, stype, rbuf, rcounts, displs, rtype,
                          halo_comm_handle(c), NULL);
}

void halo_coll_init(void)
{
}
