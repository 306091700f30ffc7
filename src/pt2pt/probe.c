/* Probe and matched probe: look at (or take) the first unexpected message
 * that matches, progressing until one arrives for the blocking forms. */
#include "pt2pt/match.h"

#include "core/errors.h"
#include "progress/progress.h"

void halo_recv_from_unexp(halo_request_t *r, halo_unexp_t *u);

typedef struct halo_message {
    halo_obj_t hdr;
    halo_unexp_t *u;
    halo_comm_t *comm;
} halo_message_t;

typedef struct probe_arg {
    halo_match_t *m;
    int source, tag;
    bool take;
    halo_unexp_t *found;
} probe_arg_t;

static bool probe_ready(void *arg)
{
    probe_arg_t *p = arg;
    p->found = halo_match_unexp(p->m, p->source, p->tag, p->take);
    return p->found != NULL;
}

static void fill_status(const halo_unexp_t *u, MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = u->src;
    status->MPI_TAG = u->tag;
    halo_status_set_bytes(status, (MPI_Count)u->bytes);
    halo_status_set_cancelled(status, 0);
}

static void proc_null_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    halo_status_blank_out(status);
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
}

static int do_probe(int source, int tag, MPI_Comm comm, int blocking, bool take, int *flag,
                    halo_unexp_t **u_p, MPI_Status *status)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    probe_arg_t p = {halo_match_find(c->ctx | HALO_CTX_P2P), source, tag, take, NULL};
    if (blocking) {
        halo_progress_wait(probe_ready, &p);
    } else if (!probe_ready(&p)) {
        halo_progress_poll();
        probe_ready(&p);
    }
    if (flag)
        *flag = p.found != NULL;
    if (p.found)
        fill_status(p.found, status);
    if (u_p)
        *u_p = p.found;
    return MPI_SUCCESS;
}

int halo_api_probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    return do_probe(source, tag, comm, 1, false, NULL, NULL, status);
}

int halo_api_iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    return do_probe(source, tag, comm, 0, false, flag, NULL, status);
}

static MPI_Message new_message(halo_unexp_t *u, MPI_Comm comm)
{
    halo_message_t *msg = halo_obj_alloc(HALO_KIND_MESSAGE);
    msg->u = u;
    msg->comm = halo_comm_ptr(comm);
    halo_obj_ref(msg->comm);
    return (MPI_Message)msg;
}

int halo_api_mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    halo_unexp_t *u;
    do_probe(source, tag, comm, 1, true, NULL, &u, status);
    *message = new_message(u, comm);
    return MPI_SUCCESS;
}

int halo_api_improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                     MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        *message = MPI_MESSAGE_NO_PROC;
        return MPI_SUCCESS;
    }
    halo_unexp_t *u;
    do_probe(source, tag, comm, 0, true, flag, &u, status);
    *message = *flag ? new_message(u, comm) : MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
}

static int message_take(MPI_Message *message, halo_message_t **msg_p)
{
    if (*message == MPI_MESSAGE_NO_PROC) {
        *msg_p = NULL;
        return MPI_SUCCESS;
    }
    halo_message_t *msg = halo_obj_lookup(HALO_KIND_MESSAGE, *message);
    if (!msg)
        return halo_err(MPI_ERR_REQUEST, "(message=%p): not a valid message handle", (void *)*message);
    *msg_p = msg;
    return MPI_SUCCESS;
}

int halo_api_imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                      MPI_Request *request)
{
    halo_message_t *msg = NULL;
    int rc = message_take(message, &msg);
    if (rc)
        return rc;
    halo_request_t *r = halo_req_alloc(HALO_REQ_RECV, msg ? msg->comm : NULL);
    r->buf = buf;
    r->count = count;
    r->dtype = halo_dtype_ptr(datatype);
    halo_obj_ref(r->dtype);
    r->bytes = count * r->dtype->size;
    halo_status_empty(&r->status);
    if (!msg) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        halo_req_complete(r);
    } else {
        r->peer = msg->u->src;
        r->tag = msg->u->tag;
        halo_recv_from_unexp(r, msg->u);
        halo_unexp_free(msg->u);
        halo_comm_release(msg->comm);
        halo_obj_free(msg);
    }
    *message = MPI_MESSAGE_NULL;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                     MPI_Status *status)
{
    MPI_Request req;
    int rc = halo_api_imrecv_c(buf, count, datatype, message, &req);
    if (rc)
        return rc;
    halo_request_t *r = halo_req_ptr(req);
    halo_req_wait_raw(r);
    return halo_req_finish(&req, status);
}
