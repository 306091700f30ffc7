/* Buffered sends. A buffered send copies its data into the attached buffer
 * (of the communicator, else of the session it derives from, else of the
 * process) and sends the copy with an
 * internal request; the copy's space returns to the buffer when that send
 * completes. MPI_BUFFER_AUTOMATIC makes the library allocate each copy. */
#include "pt2pt/pt2pt.h"

#include "core/errors.h"
#include "progress/progress.h"

typedef struct bseg {
    struct bseg *next;
    MPI_Count off, len;
} bseg_t;

typedef struct bbuf {
    char *base;
    MPI_Count size;
    int automatic;
    int attached;
    bseg_t *used;      /* in-use segments, sorted by offset */
    int pending;       /* sends whose copies are still in use */
    halo_request_t **flushes;   /* MPI_Buffer_iflush requests waiting for pending == 0 */
    int nflushes;
} bbuf_t;

/* The buffer of a communicator or a session, found by the object's
 * address. */
typedef struct comm_bbuf {
    struct comm_bbuf *next;
    const void *key;
    bbuf_t b;
} comm_bbuf_t;

static bbuf_t proc_buf;
static comm_bbuf_t *comm_bufs;

static bbuf_t *comm_buffer(const void *key)
{
    for (comm_bbuf_t *cb = comm_bufs; cb; cb = cb->next)
        if (cb->key == key)
            return &cb->b;
    return NULL;
}

static bbuf_t *buffer_for(halo_comm_t *c)
{
    bbuf_t *b = comm_buffer(c);
    if (!b && c->session)
        b = comm_buffer(c->session);
    return b ? b : &proc_buf;
}

/* First fit: offset of a free range of len bytes, or -1. */
static MPI_Count bbuf_alloc(bbuf_t *b, MPI_Count len)
{
    MPI_Count at = 0;
    bseg_t **pp = &b->used;
    while (*pp) {
        if ((*pp)->off - at >= len)
            break;
        at = (*pp)->off + (*pp)->len;
        pp = &(*pp)->next;
    }
    if (at + len > b->size)
        return -1;
    bseg_t *s = halo_malloc(sizeof *s);
    s->off = at;
    s->len = len;
    s->next = *pp;
    *pp = s;
    return at;
}

static void bbuf_release(bbuf_t *b, MPI_Count off)
{
    for (bseg_t **pp = &b->used; *pp; pp = &(*pp)->next) {
        if ((*pp)->off == off) {
            bseg_t *s = *pp;
            *pp = s->next;
            free(s);
            return;
        }
    }
}

static void copy_sent(halo_request_t *r)
{
    bbuf_t *b = (bbuf_t *)r->cb_arg;
    if (b->automatic)
        free((void *)r->cb_val);
    else
        bbuf_release(b, (MPI_Count)r->cb_val);
    b->pending--;
    halo_req_free(r);
    if (b->pending == 0 && b->nflushes) {
        for (int i = 0; i < b->nflushes; i++)
            halo_req_complete(b->flushes[i]);
        free(b->flushes);
        b->flushes = NULL;
        b->nflushes = 0;
    }
}

static int bsend_copy_and_send(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag,
                               halo_comm_t *c)
{
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    bbuf_t *b = buffer_for(c);
    MPI_Count bytes = count * dt->size;
    char *copy;
    intptr_t key;
    if (b->automatic) {
        copy = malloc((size_t)(bytes ? bytes : 1));
        if (!copy)
            return halo_err(MPI_ERR_NO_MEM, ": cannot allocate %lld bytes for a buffered send", (long long)bytes);
        key = (intptr_t)copy;
    } else {
        MPI_Count need = bytes + MPI_BSEND_OVERHEAD;
        MPI_Count off = b->attached ? bbuf_alloc(b, need) : -1;
        if (off < 0 && b->attached) {
            halo_progress_poll();
            off = bbuf_alloc(b, need);
        }
        if (off < 0)
            return halo_err(MPI_ERR_BUFFER,
                            ": %s buffer cannot take %lld more bytes (message of %lld bytes plus "
                            "MPI_BSEND_OVERHEAD)", b->attached ? "the attached" : "no",
                            (long long)need, (long long)bytes);
        copy = b->base + off;
        key = (intptr_t)off;
    }
    halo_dt_pack(buf, count, dt, 0, copy, bytes);
    halo_request_t *r;
    halo_isend(copy, bytes, halo_dtype_ptr(MPI_BYTE), dest, tag, c, c->ctx | HALO_CTX_P2P,
               HALO_MODE_STANDARD, &r);
    r->internal = 1;
    b->pending++;
    if (halo_req_done(r)) {
        r->cb_arg = b;
        r->cb_val = key;
        copy_sent(r);
    } else {
        r->cb_arg = b;
        r->cb_val = key;
        r->done_cb = copy_sent;
    }
    return MPI_SUCCESS;
}

int halo_ibsend(const void *buf, MPI_Count count, MPI_Datatype type, int dest, int tag,
                MPI_Comm comm, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = bsend_copy_and_send(buf, count, halo_dtype_ptr(type), dest, tag, c);
    /* A send that did not start leaves no request (one would hold the
     * communicator for good: nobody frees what an error returned). */
    *request = rc == MPI_SUCCESS ? (MPI_Request)halo_req_completed(c, rc) : MPI_REQUEST_NULL;
    return rc;
}

int halo_bsend_start(halo_request_t *r)
{
    int rc = bsend_copy_and_send(r->buf, r->count, r->dtype, r->peer, r->tag, r->comm);
    halo_status_empty(&r->status);
    r->status.MPI_ERROR = rc;
    atomic_store(&r->cc, 1);
    halo_req_complete(r);
    return rc;
}

int halo_api_ibsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                      MPI_Comm comm, MPI_Request *request)
{
    return halo_ibsend(buf, count, datatype, dest, tag, comm, request);
}

/* ---------------------------------------------------------------- attach/detach */

static int attach(bbuf_t *b, void *buffer, MPI_Count size, const char *what)
{
    if (b->attached || b->automatic)
        return halo_err(MPI_ERR_BUFFER, ": a buffer is already attached to %s", what);
    if (buffer == MPI_BUFFER_AUTOMATIC) {
        b->automatic = 1;
        return MPI_SUCCESS;
    }
    if (size < 0)
        return halo_err(MPI_ERR_ARG, "(size=%lld): size must be non-negative", (long long)size);
    b->base = buffer;
    b->size = size;
    b->attached = 1;
    b->used = NULL;
    return MPI_SUCCESS;
}

static bool bbuf_idle(void *arg)
{
    return ((bbuf_t *)arg)->pending == 0;
}

static int detach(bbuf_t *b, void *buffer_addr, MPI_Count *size, const char *what)
{
    if (!b->attached && !b->automatic)
        return halo_err(MPI_ERR_BUFFER, ": no buffer is attached to %s", what);
    halo_progress_wait(bbuf_idle, b);
    if (b->automatic) {
        *(void **)buffer_addr = MPI_BUFFER_AUTOMATIC;
        *size = 0;
    } else {
        *(void **)buffer_addr = b->base;
        *size = b->size;
    }
    memset(b, 0, sizeof *b);
    return MPI_SUCCESS;
}

int halo_api_buffer_attach_c(void *buffer, MPI_Count size)
{
    return attach(&proc_buf, buffer, size, "the process");
}

int halo_api_buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return detach(&proc_buf, buffer_addr, size, "the process");
}

int halo_api_buffer_flush(void)
{
    halo_progress_wait(bbuf_idle, &proc_buf);
    for (comm_bbuf_t *cb = comm_bufs; cb; cb = cb->next)
        halo_progress_wait(bbuf_idle, &cb->b);
    return MPI_SUCCESS;
}

static int completed_request(halo_comm_t *c, MPI_Request *request)
{
    *request = (MPI_Request)halo_req_completed(c, MPI_SUCCESS);
    return MPI_SUCCESS;
}

/* A request that completes when every buffered send of b has completed. */
static int iflush(bbuf_t *b, halo_comm_t *c, MPI_Request *request)
{
    if (b->pending == 0)
        return completed_request(c, request);
    halo_request_t *r = halo_req_alloc(HALO_REQ_NULL, c);
    halo_status_empty(&r->status);
    b->flushes = halo_realloc(b->flushes, (size_t)(b->nflushes + 1) * sizeof *b->flushes);
    b->flushes[b->nflushes++] = r;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_buffer_iflush(MPI_Request *request)
{
    return iflush(&proc_buf, NULL, request);
}

int halo_bsend_attach_key(const void *key, void *buffer, MPI_Count size, const char *what)
{
    comm_bbuf_t *cb = NULL;
    for (comm_bbuf_t *x = comm_bufs; x; x = x->next)
        if (x->key == key)
            cb = x;
    if (!cb) {
        cb = halo_calloc(1, sizeof *cb);
        cb->key = key;
        cb->next = comm_bufs;
        comm_bufs = cb;
    }
    return attach(&cb->b, buffer, size, what);
}

int halo_bsend_detach_key(const void *key, void *buffer_addr, MPI_Count *size, const char *what)
{
    for (comm_bbuf_t **pp = &comm_bufs; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key) {
            comm_bbuf_t *cb = *pp;
            int rc = detach(&cb->b, buffer_addr, size, what);
            *pp = cb->next;
            free(cb);
            return rc;
        }
    }
    return halo_err(MPI_ERR_BUFFER, ": no buffer is attached to %s", what);
}

int halo_bsend_flush_key(const void *key)
{
    bbuf_t *b = comm_buffer(key);
    if (b)
        halo_progress_wait(bbuf_idle, b);
    return MPI_SUCCESS;
}

int halo_bsend_iflush_key(const void *key, MPI_Request *request)
{
    bbuf_t *b = comm_buffer(key);
    if (!b)
        return completed_request(NULL, request);
    return iflush(b, NULL, request);
}

int halo_api_comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return halo_bsend_attach_key(halo_comm_ptr(comm), buffer, size, "this communicator");
}

int halo_api_comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return halo_bsend_detach_key(halo_comm_ptr(comm), buffer_addr, size, "this communicator");
}

int halo_api_comm_flush_buffer(MPI_Comm comm)
{
    return halo_bsend_flush_key(halo_comm_ptr(comm));
}

int halo_api_comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    bbuf_t *b = comm_buffer(c);
    if (!b)
        return completed_request(c, request);
    return iflush(b, c, request);
}

/* Drops the buffer of a communicator or session when the object goes away,
 * once the copies in it are sent. */
void halo_bsend_key_gone(const void *key)
{
    for (comm_bbuf_t **pp = &comm_bufs; *pp; pp = &(*pp)->next) {
        if ((*pp)->key == key) {
            comm_bbuf_t *cb = *pp;
            halo_progress_wait(bbuf_idle, &cb->b);
            *pp = cb->next;
            free(cb);
            return;
        }
    }
}

void halo_bsend_comm_gone(halo_comm_t *c)
{
    halo_bsend_key_gone(c);
}

void halo_bsend_session_gone(const void *session)
{
    halo_bsend_key_gone(session);
}

/* MPI_Finalize: the process's buffered sends leave before the world model
 * ends (sessions may keep the library up). */
void halo_bsend_flush_process(void)
{
    halo_progress_wait(bbuf_idle, &proc_buf);
}

void halo_bsend_finalize(void)
{
    halo_progress_wait(bbuf_idle, &proc_buf);
    while (comm_bufs) {
        comm_bbuf_t *cb = comm_bufs;
        comm_bufs = cb->next;
        free(cb);
    }
}
