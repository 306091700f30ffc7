/* The point-to-point MPI functions: send modes, receive, sendrecv, and
 * persistent requests. Arguments were checked in the binding layer (comm,
 * counts, datatype, ranks, tags). */
#include "pt2pt/match.h"

#include "core/errors.h"
#include "progress/progress.h"

bool halo_send_now(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag,
                   halo_comm_t *comm, uint32_t ctx);

static inline uint32_t p2p_ctx(halo_comm_t *c)
{
    return c->ctx | HALO_CTX_P2P;
}

static int finish_internal(halo_request_t *r, MPI_Status *status)
{
    int rc = r->status.MPI_ERROR;
    halo_status_out(status, &r->status);
    halo_req_free(r);
    return rc;
}

/* A blocking send through a request on the stack: started, waited for,
 * its packed copy and run list given back. */
static int send_wait(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag, halo_comm_t *c,
                     int mode)
{
    halo_request_t sr;
    halo_req_stack_init(&sr, HALO_REQ_SEND, buf, count, dt, dest, tag, c, p2p_ctx(c), mode);
    int rc = halo_req_start(&sr);
    if (rc == MPI_SUCCESS) {
        halo_req_wait_raw(&sr);
        rc = sr.status.MPI_ERROR;
    }
    halo_pack_buf_put(sr.pack_buf);
    free(sr.runs);
    return rc;
}

static int send_mode(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                     MPI_Comm comm, int mode)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_dtype_t *dt = halo_dtype_ptr(type);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (mode != HALO_MODE_SYNC && mode != HALO_MODE_BUFFERED &&
        halo_send_now(buf, count, dt, dest, tag, c, p2p_ctx(c)))
        return MPI_SUCCESS;
    if (mode == HALO_MODE_BUFFERED) {
        MPI_Request h;
        int rc = halo_ibsend(buf, count, type, dest, tag, comm, &h);
        if (h != MPI_REQUEST_NULL)
            halo_req_free(halo_req_ptr(h));
        return rc;
    }
    return send_wait(buf, count, dt, dest, tag, c, mode);
}

static int isend_mode(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                      MPI_Comm comm, int mode, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t *r;
    /* An eager send that leaves at once is complete: no request of its own. */
    if (dest != MPI_PROC_NULL && mode != HALO_MODE_SYNC &&
        halo_send_now(buf, count, halo_dtype_ptr(type), dest, tag, c, p2p_ctx(c))) {
        if (!c->session) {
            *request = (MPI_Request)halo_req_sent;
            return MPI_SUCCESS;
        }
        /* On a session's communicator the request names it, complete: the
         * completion calls check that their requests share one session. */
        *request = (MPI_Request)halo_req_completed(c, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    int rc = halo_isend(buf, count, halo_dtype_ptr(type), dest, tag, c, p2p_ctx(c), mode, &r);
    if (rc != MPI_SUCCESS) {
        halo_req_free(r);
        return rc;
    }
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_STANDARD);
}
int halo_api_send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_STANDARD);
}
int halo_api_ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_SYNC);
}
int halo_api_rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_READY);
}
int halo_api_bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_BUFFERED);
}

int halo_api_isend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_STANDARD, request);
}
int halo_api_isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_STANDARD, request);
}
int halo_api_issend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_SYNC, request);
}
int halo_api_irsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, HALO_MODE_READY, request);
}

static int recv_common(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                       MPI_Comm comm, MPI_Status *status)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t r;
    halo_req_stack_init(&r, HALO_REQ_RECV, buf, count, halo_dtype_ptr(type), source, tag, c,
                        p2p_ctx(c), HALO_MODE_STANDARD);
    halo_req_start(&r);
    halo_req_wait_raw(&r);
    halo_status_out(status, &r.status);
    return r.status.MPI_ERROR;
}

int halo_api_recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                    MPI_Comm comm, MPI_Status *status)
{
    return recv_common(buf, count, datatype, source, tag, comm, status);
}
int halo_api_recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                  MPI_Status *status)
{
    return recv_common(buf, count, datatype, source, tag, comm, status);
}

static int irecv_common(void *buf, MPI_Count count, MPI_Datatype type, int source, int tag,
                        MPI_Comm comm, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t *r;
    int rc = halo_irecv(buf, count, halo_dtype_ptr(type), source, tag, c, p2p_ctx(c), &r);
    if (rc != MPI_SUCCESS) {
        halo_req_free(r);
        return rc;
    }
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    return irecv_common(buf, count, datatype, source, tag, comm, request);
}
int halo_api_irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    return irecv_common(buf, count, datatype, source, tag, comm, request);
}

/* ---------------------------------------------------------------- sendrecv */

int halo_api_sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                        int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    /* Both halves on the stack (the call returns only once both have
     * completed), and the send without a request when it leaves at once. */
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t rr;
    halo_req_stack_init(&rr, HALO_REQ_RECV, recvbuf, recvcount, halo_dtype_ptr(recvtype), source, recvtag,
                        c, p2p_ctx(c), HALO_MODE_STANDARD);
    halo_req_start(&rr);
    int src = MPI_SUCCESS;
    halo_dtype_t *sdt = halo_dtype_ptr(sendtype);
    if (dest != MPI_PROC_NULL && !halo_send_now(sendbuf, sendcount, sdt, dest, sendtag, c, p2p_ctx(c)))
        src = send_wait(sendbuf, sendcount, sdt, dest, sendtag, c, HALO_MODE_STANDARD);
    halo_req_wait_raw(&rr);
    halo_status_out(status, &rr.status);
    return src != MPI_SUCCESS ? src : rr.status.MPI_ERROR;
}

static int packed_scratch(halo_dtype_t *dt, MPI_Count count, void **buf_p)
{
    size_t n = (size_t)(count * dt->size);
    *buf_p = malloc(n ? n : 1);
    if (!*buf_p)
        return halo_err(MPI_ERR_NO_MEM, ": cannot allocate %zu bytes for a replace buffer", n);
    return MPI_SUCCESS;
}

int halo_api_sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                int sendtag, int source, int recvtag, MPI_Comm comm,
                                MPI_Status *status)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    halo_dtype_t *bytes = halo_dtype_ptr(MPI_BYTE);
    void *tmp;
    int rc = packed_scratch(dt, count, &tmp);
    if (rc)
        return rc;
    halo_request_t *rr, *sr;
    MPI_Count nbytes = count * dt->size;
    halo_irecv(tmp, nbytes, bytes, source, recvtag, c, p2p_ctx(c), &rr);
    halo_isend(buf, count, dt, dest, sendtag, c, p2p_ctx(c), HALO_MODE_STANDARD, &sr);
    halo_req_wait_raw(sr);
    halo_req_wait_raw(rr);
    int src = finish_internal(sr, MPI_STATUS_IGNORE);
    MPI_Status st;
    int rrc = finish_internal(rr, &st);
    MPI_Count got = halo_status_bytes(&st);
    halo_dt_unpack(buf, count, dt, 0, tmp, got);
    free(tmp);
    halo_status_out(status, &st);
    return src != MPI_SUCCESS ? src : rrc;
}

/* Isendrecv: a parent request completed by its two internal parts. */
static void part_done(halo_request_t *part)
{
    halo_request_t *parent = part->cb_arg;
    halo_req_complete(parent);
}

static void sendrecv_finish(halo_request_t *parent)
{
    halo_request_t *sr = parent->sub[0], *rr = parent->sub[1];
    parent->status = rr->status;
    if (sr->status.MPI_ERROR != MPI_SUCCESS && rr->status.MPI_ERROR == MPI_SUCCESS)
        parent->status.MPI_ERROR = sr->status.MPI_ERROR;
    if (parent->replace_buf) {
        halo_dt_unpack(parent->buf, parent->count, parent->dtype, 0, parent->replace_buf,
                       halo_status_bytes(&rr->status));
    }
    halo_req_free(sr);
    halo_req_free(rr);
    parent->sub[0] = parent->sub[1] = NULL;
    parent->done_cb = NULL;
    if (parent->user_freed)
        halo_req_free(parent);
}

static void parent_done(halo_request_t *parent)
{
    sendrecv_finish(parent);
}

static int isendrecv_common(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                            MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
                            halo_request_t *parent, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t *rr, *sr;
    atomic_store(&parent->cc, 2);
    parent->done_cb = parent_done;
    halo_status_empty(&parent->status);
    int rc = halo_irecv(recvbuf, recvcount, halo_dtype_ptr(recvtype), source, recvtag, c,
                        p2p_ctx(c), &rr);
    rr->internal = 1;
    rr->cb_arg = parent;
    parent->sub[1] = rr;
    /* A part that already completed must still count for the parent. */
    if (halo_req_done(rr))
        halo_req_complete(parent);
    else
        rr->done_cb = part_done;
    if (rc == MPI_SUCCESS)
        rc = halo_isend(sendbuf, sendcount, halo_dtype_ptr(sendtype), dest, sendtag, c,
                        p2p_ctx(c), HALO_MODE_STANDARD, &sr);
    else
        sr = halo_req_alloc(HALO_REQ_NULL, c);
    sr->internal = 1;
    sr->cb_arg = parent;
    parent->sub[0] = sr;
    if (halo_req_done(sr))
        halo_req_complete(parent);
    else
        sr->done_cb = part_done;
    *request = (MPI_Request)parent;
    return rc;
}

int halo_api_isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    halo_request_t *parent = halo_req_alloc(HALO_REQ_SENDRECV, halo_comm_ptr(comm));
    return isendrecv_common(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                            recvtype, source, recvtag, comm, parent, request);
}

int halo_api_isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                                 int sendtag, int source, int recvtag, MPI_Comm comm,
                                 MPI_Request *request)
{
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    halo_request_t *parent = halo_req_alloc(HALO_REQ_SENDRECV, halo_comm_ptr(comm));
    int rc = packed_scratch(dt, count, &parent->replace_buf);
    if (rc) {
        halo_req_free(parent);
        return rc;
    }
    parent->buf = buf;
    parent->count = count;
    parent->dtype = dt;
    halo_obj_ref(dt);
    return isendrecv_common(buf, count, datatype, dest, sendtag, parent->replace_buf,
                            count * dt->size, MPI_BYTE, source, recvtag, comm, parent, request);
}

/* ---------------------------------------------------------------- persistent */

static int persistent_init(halo_req_kind_t kind, const void *buf, MPI_Count count,
                           MPI_Datatype type, int peer, int tag, MPI_Comm comm, int mode,
                           MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_request_t *r = halo_req_alloc(kind, c);
    r->persistent = 1;
    r->active = 0;
    r->buf = (void *)buf;
    r->count = count;
    r->dtype = halo_dtype_ptr(type);
    halo_obj_ref(r->dtype);
    r->peer = peer;
    r->tag = tag;
    r->ctx = p2p_ctx(c);
    r->mode = (uint8_t)mode;
    atomic_store(&r->cc, 0);
    halo_status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_send_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return persistent_init(HALO_REQ_SEND, buf, count, datatype, dest, tag, comm, HALO_MODE_STANDARD, request);
}
int halo_api_ssend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return persistent_init(HALO_REQ_SEND, buf, count, datatype, dest, tag, comm, HALO_MODE_SYNC, request);
}
int halo_api_rsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return persistent_init(HALO_REQ_SEND, buf, count, datatype, dest, tag, comm, HALO_MODE_READY, request);
}
int halo_api_bsend_init_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request *request)
{
    return persistent_init(HALO_REQ_SEND, buf, count, datatype, dest, tag, comm, HALO_MODE_BUFFERED, request);
}
int halo_api_recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Request *request)
{
    return persistent_init(HALO_REQ_RECV, buf, count, datatype, source, tag, comm, HALO_MODE_STANDARD, request);
}

int halo_bsend_start(halo_request_t *r);
int halo_coll_start(halo_request_t *r);

static int start_one(MPI_Request h)
{
    halo_request_t *r = halo_req_get(h);
    if (!r || !r->persistent)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a persistent request", (void *)h);
    if (r->active)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): request is already active", (void *)h);
    r->active = 1;
    if (r->user_hook)
        r->user_hook(r, HALO_REQ_HOOK_START);
    if (r->kind == HALO_REQ_COLL)
        return halo_coll_start(r);
    if (r->kind == HALO_REQ_PART)
        return halo_part_start(r);
    if (r->kind == HALO_REQ_SEND && r->mode == HALO_MODE_BUFFERED)
        return halo_bsend_start(r);
    return halo_req_start(r);
}

int halo_api_start(MPI_Request *request)
{
    return start_one(*request);
}

int halo_api_startall(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = start_one(array_of_requests[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- counts */

int halo_api_get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    MPI_Count bytes = halo_status_bytes(status);
    if (dt->size == 0)
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    else if (bytes % dt->size)
        *count = MPI_UNDEFINED;
    else
        *count = bytes / dt->size;
    return MPI_SUCCESS;
}

int halo_api_get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    /* Exact: pair types count two, and MPI_UNDEFINED when the data ends
     * inside a basic element. */
    *count = halo_dt_elements(halo_dtype_ptr(datatype), halo_status_bytes(status));
    return MPI_SUCCESS;
}

int halo_api_get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return halo_api_get_elements_c(status, datatype, count);
}

/* ---------------------------------------------------------------- status setters */

int halo_api_status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    halo_status_set_bytes(status, halo_dt_elements_bytes(halo_dtype_ptr(datatype), count));
    return MPI_SUCCESS;
}
int halo_api_status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return halo_api_status_set_elements_c(status, datatype, count);
}
int halo_api_status_set_cancelled(MPI_Status *status, int flag)
{
    halo_status_set_cancelled(status, flag != 0);
    return MPI_SUCCESS;
}
int halo_api_test_cancelled(const MPI_Status *status, int *flag)
{
    *flag = halo_status_cancelled(status);
    return MPI_SUCCESS;
}
int halo_api_status_set_source(MPI_Status *status, int source) { status->MPI_SOURCE = source; return MPI_SUCCESS; }
int halo_api_status_set_tag(MPI_Status *status, int tag) { status->MPI_TAG = tag; return MPI_SUCCESS; }
int halo_api_status_set_error(MPI_Status *status, int err) { status->MPI_ERROR = err; return MPI_SUCCESS; }
int halo_api_status_get_source(const MPI_Status *status, int *source) { *source = status->MPI_SOURCE; return MPI_SUCCESS; }
int halo_api_status_get_tag(const MPI_Status *status, int *tag) { *tag = status->MPI_TAG; return MPI_SUCCESS; }
int halo_api_status_get_error(const MPI_Status *status, int *err) { *err = status->MPI_ERROR; return MPI_SUCCESS; }
