/* Point-to-point: requests, matching, and the eager/rendezvous protocols.
 *
 * The path of one message (see docs/architecture.md):
 *   MPI_Isend -> halo_isend: a request; small messages become one EAGER
 *   packet handed to the transport (packed straight into shared memory);
 *   large ones an RTS packet carrying the buffer's address.
 *   Receiver: the transport's poll calls halo_pt2pt_on_packet; matching looks
 *   at the posted receives of the packet's context (by source, then the
 *   wildcard list, the earlier posting wins); without a match the packet
 *   waits in the unexpected queue. A matched EAGER packet is unpacked into
 *   the receive buffer; a matched RTS is read from the sender's memory
 *   (CMA) and answered with FIN, which completes the send. */
#ifndef HALO_PT2PT_PT2PT_H
#define HALO_PT2PT_PT2PT_H

#include "core/comm.h"
#include "datatype/dtype.h"
#include "transport/transport.h"

struct halo_sched;

typedef enum halo_req_kind {
    HALO_REQ_SEND = 1,
    HALO_REQ_RECV,
    HALO_REQ_SENDRECV,   /* Isendrecv(_replace): two internal requests */
    HALO_REQ_COLL,       /* a collective schedule */
    HALO_REQ_GREQ,       /* generalized request */
    HALO_REQ_NULL,       /* completes at once (MPI_PROC_NULL peers) */
    HALO_REQ_PART,       /* partitioned send or receive (pt2pt/part.c) */
} halo_req_kind_t;

typedef enum halo_send_mode {
    HALO_MODE_STANDARD = 0,
    HALO_MODE_SYNC,
    HALO_MODE_READY,
    HALO_MODE_BUFFERED,
    /* Standard mode whose data always goes by rendezvous, however small:
     * a collective's root sending blocks to many receivers that share the
     * CPUs lets each receiver copy its own (coll/sched.h, halo_sched_send_rdv). */
    HALO_MODE_RDV,
} halo_send_mode_t;

/* Where a send stands in its protocol. */
enum {
    HALO_SEND_QUEUED = 0,  /* waiting for room in the transport */
    HALO_SEND_POSTED,      /* its packet left; waiting for ACK/FIN/CTS */
    HALO_SEND_PUSHING,     /* pushing DATA chunks after a CTS */
};

typedef struct halo_request halo_request_t;
typedef void halo_req_cb_fn_t(halo_request_t *r);
/* Events of a request's user hook: a persistent request starts; a
 * partitioned send is about to read its buffer (its last partition is
 * ready); the request completes; it goes away. */
enum { HALO_REQ_HOOK_START, HALO_REQ_HOOK_READ, HALO_REQ_HOOK_DONE, HALO_REQ_HOOK_FREE };

struct halo_request {
    halo_obj_t hdr;
    uint8_t kind;
    uint8_t persistent;    /* made by an *_init call */
    uint8_t active;        /* persistent: started and not yet completed by a wait or test */
    uint8_t user_freed;    /* MPI_Request_free while pending: release at completion */
    uint8_t mode;          /* halo_send_mode_t */
    uint8_t internal;      /* never seen by the user (collective steps) */
    uint8_t send_state;
    uint8_t cancelled;
    uint8_t rdv_counted;   /* send: counted in its peer's outstanding rendezvous sends */
    uint8_t push_back;     /* send: pushing its chunks from the last to the first */
    uint8_t consumed;      /* receive: this rank reads the data at once (a reduction
                            * follows), so a rendezvous is not split (protocol.c) */
    uint8_t cancel_asked;  /* send: MPI_Cancel asked the receiver to drop it */
    _Atomic int cc;        /* completions still to come; 0 = complete */
    MPI_Status status;
    halo_comm_t *comm;
    uint32_t ctx;          /* context the message travels on */
    void *buf;
    MPI_Count count;
    halo_dtype_t *dtype;
    int peer;              /* rank in comm (or a wildcard) */
    int tag;
    int peer_world;
    MPI_Count bytes;       /* send: message size; receive: capacity */
    MPI_Count pushed;      /* send, push fallback: bytes sent; receive: bytes landed */
    MPI_Count push_limit;  /* push fallback: bytes the receiver takes */
    uint64_t push_token;   /* push fallback: receiver's token */
    uint64_t order;        /* posting order (wildcard matching) */
    halo_request_t *next, *prev;
    void *pack_buf;        /* packed copy: non-contiguous rendezvous, buffered sends */
    struct iovec *runs;    /* rendezvous send in a few long runs: their list (RTS payload) */
    int nruns;
    halo_req_cb_fn_t *done_cb;   /* internal requests: called at completion */
    void *cb_arg;
    intptr_t cb_val;
    struct halo_sched *sched;
    void *priv;                  /* owned by the layer that made the request */
    void (*priv_free)(void *priv);
    halo_request_t *sub[2];      /* SENDRECV parts */
    void *replace_buf;           /* Isendrecv_replace: packed receive area */
    /* A layer above the core told at each start of a persistent request,
     * at each completion and when the request goes away (HALO_REQ_HOOK_*):
     * the array sections of the Fortran binding (fortran/f08ts.c). */
    void (*user_hook)(halo_request_t *r, int event);
    void *user_hook_arg;
    /* generalized requests */
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
};

/* Status fields kept in MPI_internal: bytes received (64 bits) and the
 * cancelled flag. */
static inline void halo_status_set_bytes(MPI_Status *s, MPI_Count n)
{
    s->MPI_internal[0] = (int)(uint32_t)((uint64_t)n & 0xffffffffu);
    s->MPI_internal[1] = (int)(uint32_t)((uint64_t)n >> 32);
}
static inline MPI_Count halo_status_bytes(const MPI_Status *s)
{
    return (MPI_Count)(((uint64_t)(uint32_t)s->MPI_internal[1] << 32) | (uint32_t)s->MPI_internal[0]);
}
static inline void halo_status_set_cancelled(MPI_Status *s, int c) { s->MPI_internal[2] = c; }
static inline int halo_status_cancelled(const MPI_Status *s) { return s->MPI_internal[2]; }
static inline void halo_status_empty(MPI_Status *s)
{
    s->MPI_SOURCE = MPI_ANY_SOURCE;
    s->MPI_TAG = MPI_ANY_TAG;
    s->MPI_ERROR = MPI_SUCCESS;
    halo_status_set_bytes(s, 0);
    halo_status_set_cancelled(s, 0);
}
/* The standard's empty status (what a null or inactive request completes
 * with): MPI_ERROR too is set, to MPI_SUCCESS. MPI_STATUS_IGNORE is fine. */
static inline void halo_status_empty_out(MPI_Status *s)
{
    if (s != MPI_STATUS_IGNORE)
        halo_status_empty(s);
}
/* Same fields but MPI_ERROR, which single-completion calls on real
 * operations never write (MPI_PROC_NULL receives and probes, sends). */
static inline void halo_status_blank_out(MPI_Status *s)
{
    if (s == MPI_STATUS_IGNORE)
        return;
    int err = s->MPI_ERROR;
    halo_status_empty(s);
    s->MPI_ERROR = err;
}
/* Hands a request's status to the user: every field but MPI_ERROR, which
 * only the multiple-completion calls set (and only when they return
 * MPI_ERR_IN_STATUS). */
static inline void halo_status_out(MPI_Status *dst, const MPI_Status *src)
{
    if (dst == MPI_STATUS_IGNORE)
        return;
    int err = dst->MPI_ERROR;
    *dst = *src;
    dst->MPI_ERROR = err;
}

void halo_pt2pt_init(void);
void halo_pt2pt_finalize(void);
/* Packed byte at which this process's last single-copy read of a
 * rendezvous message began (0: in order; see rdv_reader in protocol.c). */
long long halo_pt2pt_last_read_first(void);
/* Sends this process has started by rendezvous (an RTS), for the tests. */
long long halo_pt2pt_rdv_sends(void);

static inline halo_request_t *halo_req_ptr(MPI_Request r)
{
    return (halo_request_t *)r;
}
/* validated, or NULL */
static inline halo_request_t *halo_req_get(MPI_Request r)
{
    return halo_obj_lookup(HALO_KIND_REQUEST, r);
}

/* One request object shared by every send that completed inside its
 * call (an eager send that found room): the call needs no request of its
 * own, and finishing it only clears the user's handle. */
extern halo_request_t *halo_req_sent;
halo_request_t *halo_req_alloc(halo_req_kind_t kind, halo_comm_t *comm);
/* A request on comm that is complete already, its status empty with
 * MPI_ERROR set to `error` (buffered sends, flushes with nothing pending,
 * a session's send that left at once). */
halo_request_t *halo_req_completed(halo_comm_t *comm, int error);
void halo_req_free(halo_request_t *r);
/* Buffers for packed copies of sends, from a small cache of freed ones;
 * put(NULL) does nothing, drain frees the cache (finalize). */
void *halo_pack_buf_get(size_t bytes);
void halo_pack_buf_put(void *buf);
void halo_pack_buf_drain(void);
/* One completion of r arrived (a request may wait for several). */
void halo_req_complete(halo_request_t *r);
static inline bool halo_req_done(const halo_request_t *r)
{
    return atomic_load_explicit(&r->cc, memory_order_acquire) == 0;
}
/* Waits for r (without freeing it). */
void halo_req_wait_raw(halo_request_t *r);

/* Nonblocking send and receive on a given context (the collective layer
 * uses ctx | HALO_CTX_COLL). The request is returned in *req_p. */
int halo_isend(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag,
               halo_comm_t *comm, uint32_t ctx, int mode, halo_request_t **req_p);
int halo_irecv(void *buf, MPI_Count count, halo_dtype_t *dt, int source, int tag,
               halo_comm_t *comm, uint32_t ctx, halo_request_t **req_p);
/* The same for data that this rank reads as soon as it lands (a collective
 * step that reduces it): never split between both sides. */
int halo_irecv_consumed(void *buf, MPI_Count count, halo_dtype_t *dt, int source, int tag,
                        halo_comm_t *comm, uint32_t ctx, halo_request_t **req_p);
/* MPI_Cancel of a send that has not completed (protocol.c). */
void halo_send_cancel(halo_request_t *r);
/* (Re)starts a persistent or prepared request. */
int halo_req_start(halo_request_t *r);
/* Prepares a request on a blocking call's stack (start it with
 * halo_req_start, wait until complete, read its status; never free it). */
void halo_req_stack_init(halo_request_t *r, int kind, const void *buf, MPI_Count count,
                         halo_dtype_t *dt, int peer, int tag, halo_comm_t *comm, uint32_t ctx, int mode);

/* Matching state per context. */
struct halo_match *halo_match_get(uint32_t ctx, int nsrc);
void halo_match_release(uint32_t ctx);

/* Finishing a request the user waited on or tested: fills the status,
 * frees a non-persistent request (and sets *handle to MPI_REQUEST_NULL).
 * Returns the request's error code. */
int halo_req_finish(MPI_Request *handle, MPI_Status *status);

/* Failed collectives (coll/sched.c gives these to point-to-point, which
 * calls up through them only):
 *  - peer_failed: a COLL_ERR packet arrived: rank src (of the communicator)
 *    failed in the collective (ctx, tag) with error class errclass;
 *  - is_failed: whether (ctx, tag) is a collective that failed here, whose
 *    messages that arrive unmatched are dropped. */
typedef void halo_coll_peer_failed_fn_t(uint32_t ctx, int tag, int src, int errclass);
typedef bool halo_coll_is_failed_fn_t(uint32_t ctx, int tag);
void halo_pt2pt_coll_hooks(halo_coll_peer_failed_fn_t *peer_failed, halo_coll_is_failed_fn_t *is_failed);
/* Tells process dst_world that this process (rank src of the
 * communicator) failed in the collective (ctx, tag). */
void halo_pt2pt_send_coll_err(int dst_world, uint32_t ctx, int tag, int src, int errclass);
/* Drops the unexpected messages of (ctx, tag): a rendezvous sender is told
 * its message was taken (FIN), so that it completes. */
void halo_pt2pt_drop_unexpected(uint32_t ctx, int tag);

/* Starts a partitioned request (MPI_Start). */
int halo_part_start(halo_request_t *r);
/* Forgets a communicator's counts of partitioned inits (it goes away). */
void halo_part_comm_gone(halo_comm_t *c);

int halo_ibsend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm, MPI_Request *request);
void halo_bsend_comm_gone(halo_comm_t *c);
void halo_bsend_session_gone(const void *session);
void halo_bsend_flush_process(void);
void halo_bsend_finalize(void);
/* Buffers attached to a communicator or a session (the object's address is
 * the key); `what` names the object in error messages. */
int halo_bsend_attach_key(const void *key, void *buffer, MPI_Count size, const char *what);
int halo_bsend_detach_key(const void *key, void *buffer_addr, MPI_Count *size, const char *what);
int halo_bsend_flush_key(const void *key);
int halo_bsend_iflush_key(const void *key, MPI_Request *request);

#endif
