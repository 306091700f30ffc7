/* Request objects: allocation, completion, and the finishing step shared by
 * the Wait and Test families. */
#include "pt2pt/pt2pt.h"

#include "binding/binding.h"
#include "coll/coll.h"
#include "core/errors.h"
#include "progress/progress.h"

halo_request_t *halo_req_sent;

/* Packed copies of non-contiguous rendezvous sends come from a small cache
 * of freed buffers: a fresh buffer of a few hundred KiB costs a page fault
 * per 4 KiB on every send (the allocator hands such sizes back to the
 * kernel when they are freed), which took longer than packing itself. At
 * most PACK_CACHE_MAX buffers and PACK_CACHE_BYTES bytes stay cached. */
#define PACK_CACHE_MAX 16
#define PACK_CACHE_BYTES (32u << 20)

typedef struct pack_hdr {
    size_t cap;
    struct pack_hdr *next;
    _Alignas(64) unsigned char data[];
} pack_hdr_t;

static pack_hdr_t *pack_cache;
static int pack_cached;
static size_t pack_cached_bytes;

void *halo_pack_buf_get(size_t bytes)
{
    pack_hdr_t **best = NULL;
    for (pack_hdr_t **pp = &pack_cache; *pp; pp = &(*pp)->next)
        if ((*pp)->cap >= bytes && (*pp)->cap / 2 <= bytes && (!best || (*pp)->cap < (*best)->cap))
            best = pp;
    if (best) {
        pack_hdr_t *h = *best;
        *best = h->next;
        pack_cached--;
        pack_cached_bytes -= h->cap;
        return h->data;
    }
    pack_hdr_t *h = malloc(sizeof *h + bytes);
    if (!h)
        return NULL;
    h->cap = bytes;
    return h->data;
}

void halo_pack_buf_put(void *buf)
{
    if (!buf)
        return;
    pack_hdr_t *h = (pack_hdr_t *)((unsigned char *)buf - offsetof(pack_hdr_t, data));
    if (pack_cached == PACK_CACHE_MAX || pack_cached_bytes + h->cap > PACK_CACHE_BYTES) {
        free(h);
        return;
    }
    h->next = pack_cache;
    pack_cache = h;
    pack_cached++;
    pack_cached_bytes += h->cap;
}

void halo_pack_buf_drain(void)
{
    while (pack_cache) {
        pack_hdr_t *h = pack_cache;
        pack_cache = h->next;
        free(h);
    }
    pack_cached = 0;
    pack_cached_bytes = 0;
}

void halo_req_init(void)
{
    halo_req_sent = halo_obj_alloc(HALO_KIND_REQUEST);
    halo_req_sent->kind = HALO_REQ_NULL;
    atomic_store(&halo_req_sent->cc, 0);
    halo_status_empty(&halo_req_sent->status);
}

halo_request_t *halo_req_alloc(halo_req_kind_t kind, halo_comm_t *comm)
{
    halo_request_t *r = halo_obj_alloc_sized(HALO_KIND_REQUEST, sizeof *r);
    if (!r)
        halo_fatal("out of request objects");
    r->kind = (uint8_t)kind;
    r->comm = comm;
    if (comm)
        halo_obj_ref(comm);
    atomic_store_explicit(&r->cc, 1, memory_order_relaxed);
    return r;
}

halo_request_t *halo_req_completed(halo_comm_t *comm, int error)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_NULL, comm);
    halo_status_empty(&r->status);
    r->status.MPI_ERROR = error;
    halo_req_complete(r);
    return r;
}

void halo_req_free(halo_request_t *r)
{
    if (r == halo_req_sent)
        return;
    if (r->user_hook)
        r->user_hook(r, HALO_REQ_HOOK_FREE);
    if (r->sched)   /* before the communicator, which may keep it */
        halo_coll_sched_release(r->comm, r->sched);
    if (r->comm)
        halo_comm_release(r->comm);
    if (r->dtype)
        halo_dtype_release(r->dtype);
    if (r->pack_buf)
        halo_pack_buf_put(r->pack_buf);
    if (r->runs)
        free(r->runs);
    if (r->replace_buf)
        free(r->replace_buf);
    if (r->priv_free)
        r->priv_free(r->priv);
    halo_obj_free(r);
}

void halo_req_complete(halo_request_t *r)
{
    /* Every change of a request's count is made under the library's lock
     * (core/lock.h), so a load and a store suffice; a waiter that reads it
     * without the lock sees 0 only after all else the completion wrote. A
     * locked subtraction would wait here for the stores before it (a flag
     * in shared memory another core is reading) to leave the core: a
     * tenth of a small nonblocking collective. */
    int cc = atomic_load_explicit(&r->cc, memory_order_relaxed);
    atomic_store_explicit(&r->cc, cc - 1, memory_order_release);
    if (cc != 1)
        return;
    if (r->user_hook)
        r->user_hook(r, HALO_REQ_HOOK_DONE);
    if (r->done_cb)
        r->done_cb(r);
    else if (r->user_freed && !r->persistent)
        halo_req_free(r);
}

static bool req_is_done(void *arg)
{
    return halo_req_done(arg);
}

void halo_req_wait_raw(halo_request_t *r)
{
    if (!halo_req_done(r))
        halo_progress_wait(req_is_done, r);
}

int halo_req_finish(MPI_Request *handle, MPI_Status *status)
{
    halo_request_t *r = halo_req_ptr(*handle);
    int rc;
    if (r == halo_req_sent) {
        halo_status_blank_out(status);
        *handle = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    if (r->kind == HALO_REQ_GREQ) {
        MPI_Status st;
        halo_status_empty(&st);
        st.MPI_ERROR = r->status.MPI_ERROR;
        rc = r->query_fn(r->extra_state, &st);
        if (rc == MPI_SUCCESS)
            rc = st.MPI_ERROR == MPI_SUCCESS ? r->status.MPI_ERROR : st.MPI_ERROR;
        halo_status_out(status, &st);
        if (!r->persistent) {
            int frc = r->free_fn(r->extra_state);
            if (rc == MPI_SUCCESS)
                rc = frc;
            halo_req_free(r);
            *handle = MPI_REQUEST_NULL;
        }
        return rc;
    }
    rc = r->status.MPI_ERROR;
    halo_status_out(status, &r->status);
    if (rc != MPI_SUCCESS && r->comm)
        halo_err_redirect_comm(halo_comm_handle(r->comm));
    if (r->persistent) {
        r->active = 0;
    } else {
        halo_req_free(r);
        *handle = MPI_REQUEST_NULL;
    }
    return rc;
}
