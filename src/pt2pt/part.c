/* Partitioned point-to-point (MPI_Psend_init, MPI_Precv_init, MPI_Pready*,
 * MPI_Parrived).
 *
 * A partitioned request is a persistent request of kind HALO_REQ_PART whose
 * private part_t counts the partitions marked ready. Once every partition
 * of the sender is ready in an epoch (between MPI_Start and completion), the
 * whole buffer (partitions * count elements) leaves as one ordinary message
 * on the communicator's partitioned sub-context (HALO_CTX_PART), so it never
 * matches a plain send or receive with the same tag. The receiver posts the
 * matching receive at its MPI_Start; every partition arrives with that
 * message, and MPI_Parrived answers for all of them at once.
 *
 * Because the data travels as one message, the two sides may partition it
 * differently: only the total size (partitions * count * type size) must
 * agree. A receiver that gets more data than it has room for completes with
 * MPI_ERR_TRUNCATE, one that gets less with MPI_ERR_COUNT, each naming both
 * sizes.
 *
 * Matching follows the order of the init calls, as the standard has it:
 * the k-th MPI_Psend_init to (dest, tag) on a communicator pairs with the
 * k-th MPI_Precv_init from (source, tag) there, whatever order the two
 * sides start them in, and stays paired for every epoch. Each side counts
 * its inits per (peer, tag) and gives the pair's messages a wire tag of
 * their own on the partitioned sub-context: the user's tag for the first,
 * and after it negative tags, which no user tag can be: -(2 + 2^16 tag + k
 * mod 2^16) for tags below 2^14 (65535 live pairs per tag before one
 * shares the user's tag again), -(2 + 2^30 + 16 (tag - 2^14) + k mod 16)
 * for tags below 2^26. Pairs that share a wire tag (k equal modulo the
 * spread, or any two on a tag of 2^26 and above) match in the order they
 * are started. */
#include "pt2pt/pt2pt.h"

#include "binding/binding.h"
#include "core/errors.h"
#include "pt2pt/match.h"
#include "progress/progress.h"

typedef struct part {
    int is_send;
    int wire_tag;          /* the tag the pair's messages carry (see above) */
    int partitions;
    int nready;            /* sender: partitions marked ready this epoch */
    MPI_Count total;       /* elements in the whole buffer */
    MPI_Count bytes;       /* packed bytes of the whole buffer */
    uint8_t *ready;        /* sender: per partition, marked ready this epoch */
} part_t;

static void part_free(void *p)
{
    part_t *pt = p;
    free(pt->ready);
    free(pt);
}

/* Inits counted per (direction, peer, tag) on a communicator. */
typedef struct part_ord {
    int is_send, peer, tag;
    uint64_t n;
} part_ord_t;

typedef struct halo_part_ords {
    part_ord_t *v;
    int n, cap;
} halo_part_ords_t;


static int next_wire_tag(halo_comm_t *c, int is_send, int peer, int tag)
{
    halo_part_ords_t *o = c->part_ords;
    if (!o)
        o = c->part_ords = halo_calloc(1, sizeof *o);
    part_ord_t *e = NULL;
    for (int i = 0; i < o->n && !e; i++)
        if (o->v[i].is_send == is_send && o->v[i].peer == peer && o->v[i].tag == tag)
            e = &o->v[i];
    if (!e) {
        if (o->n == o->cap) {
            o->cap = o->cap ? 2 * o->cap : 8;
            o->v = halo_realloc(o->v, (size_t)o->cap * sizeof *o->v);
        }
        e = &o->v[o->n++];
        *e = (part_ord_t){is_send, peer, tag, 0};
    }
    uint64_t k = e->n++;
    int64_t id;
    if (tag < (1 << 14) && k % 65536 != 0)
        id = ((int64_t)tag << 16) + (int64_t)(k % 65536);
    else if (tag >= (1 << 14) && tag < (1 << 26) && k % 16 != 0)
        id = (1ll << 30) + 16 * (int64_t)(tag - (1 << 14)) + (int64_t)(k % 16);
    else
        return tag;
    return (int)-(2 + id);
}

void halo_part_comm_gone(halo_comm_t *c)
{
    halo_part_ords_t *o = c->part_ords;
    if (!o)
        return;
    free(o->v);
    free(o);
    c->part_ords = NULL;
}

static int part_init(int is_send, const void *buf, int partitions, MPI_Count count,
                     MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    (void)info;
    if (partitions < 0)
        return halo_err(MPI_ERR_ARG, "(partitions=%d): the number of partitions must not be negative",
                        partitions);
    if (!is_send && peer == MPI_ANY_SOURCE)
        return halo_err(MPI_ERR_RANK, "(source=MPI_ANY_SOURCE): partitioned receives name their source");
    if (!is_send && tag == MPI_ANY_TAG)
        return halo_err(MPI_ERR_TAG, "(tag=MPI_ANY_TAG): partitioned receives name their tag");
    if (count > 0 && partitions > INT64_MAX / count)
        return halo_err(MPI_ERR_COUNT, "(partitions=%d, count=%lld): the buffer is too large", partitions,
                        (long long)count);
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_dtype_t *dt = halo_dtype_ptr(datatype);
    if (!c->match[HALO_CTX_PART])
        c->match[HALO_CTX_PART] = halo_match_get(c->ctx | HALO_CTX_PART, c->peer_size);
    part_t *pt = halo_calloc(1, sizeof *pt);
    pt->is_send = is_send;
    pt->wire_tag = peer == MPI_PROC_NULL ? tag : next_wire_tag(c, is_send, peer, tag);
    pt->partitions = partitions;
    pt->total = (MPI_Count)partitions * count;
    pt->bytes = pt->total * dt->size;
    if (is_send)
        pt->ready = halo_calloc((size_t)(partitions ? partitions : 1), 1);
    halo_request_t *r = halo_req_alloc(HALO_REQ_PART, c);
    r->persistent = 1;
    r->active = 0;
    r->buf = (void *)buf;
    r->count = count;
    r->dtype = dt;
    halo_obj_ref(dt);
    r->peer = peer;
    r->tag = tag;
    r->ctx = c->ctx | HALO_CTX_PART;
    r->priv = pt;
    r->priv_free = part_free;
    /* Inactive: complete, with an empty status. */
    atomic_store(&r->cc, 0);
    halo_status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int halo_api_psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                        int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(1, buf, partitions, count, datatype, dest, tag, comm, info, request);
}

int halo_api_precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                        int source, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return part_init(0, buf, partitions, count, datatype, source, tag, comm, info, request);
}

/* The epoch's message completed: the partitioned request completes with
 * its status. */
static void inner_done(halo_request_t *inner)
{
    halo_request_t *r = inner->cb_arg;
    part_t *pt = r->priv;
    MPI_Status st = inner->status;
    halo_req_free(inner);
    if (!pt->is_send)
        st.MPI_TAG = r->tag;   /* the user's tag, not the wire tag */
    if (!pt->is_send && st.MPI_ERROR == MPI_SUCCESS && halo_status_bytes(&st) != pt->bytes)
        st.MPI_ERROR = halo_err(MPI_ERR_COUNT, ": the partitioned send carried %lld bytes, the "
                                "partitioned receive expects %lld (the total sizes must agree)",
                                (long long)halo_status_bytes(&st), (long long)pt->bytes);
    else if (!pt->is_send && halo_err_class_of(st.MPI_ERROR) == MPI_ERR_TRUNCATE)
        st.MPI_ERROR = halo_err(MPI_ERR_TRUNCATE, ": the partitioned send carried more than the "
                                "%lld bytes of the partitioned receive (the total sizes must agree)",
                                (long long)pt->bytes);
    r->status = st;
    halo_req_complete(r);
}

/* Hands the message of r to the inner request the transfer call made
 * (rc: that call's result; when it failed, r completes with the error). */
static int watch(halo_request_t *r, halo_request_t *inner, int rc)
{
    if (rc != MPI_SUCCESS) {
        r->status.MPI_ERROR = rc;
        halo_req_complete(r);
        return rc;
    }
    inner->internal = 1;
    inner->cb_arg = r;
    if (halo_req_done(inner))
        inner_done(inner);
    else
        inner->done_cb = inner_done;
    return MPI_SUCCESS;
}

/* Every partition of the epoch is ready (or the request has none): the
 * message leaves. */
static int part_send(halo_request_t *r)
{
    part_t *pt = r->priv;
    if (r->peer == MPI_PROC_NULL) {
        halo_req_complete(r);
        return MPI_SUCCESS;
    }
    if (r->user_hook)
        r->user_hook(r, HALO_REQ_HOOK_READ);
    halo_request_t *inner = NULL;
    int rc = halo_isend(r->buf, pt->total, r->dtype, r->peer, pt->wire_tag, r->comm, r->ctx,
                        HALO_MODE_STANDARD, &inner);
    return watch(r, inner, rc);
}

int halo_part_start(halo_request_t *r)
{
    part_t *pt = r->priv;
    atomic_store_explicit(&r->cc, 1, memory_order_relaxed);
    halo_status_empty(&r->status);
    if (r->peer == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        if (pt->is_send && pt->partitions > 0) {
            /* Still counts the partitions, so that Pready's checks hold. */
            memset(pt->ready, 0, (size_t)pt->partitions);
            pt->nready = 0;
            return MPI_SUCCESS;
        }
        halo_req_complete(r);
        return MPI_SUCCESS;
    }
    if (pt->is_send) {
        memset(pt->ready, 0, (size_t)pt->partitions);
        pt->nready = 0;
        /* No partition to wait for: the (empty) message leaves now. */
        return pt->partitions == 0 ? part_send(r) : MPI_SUCCESS;
    }
    halo_request_t *inner = NULL;
    int rc = halo_irecv(r->buf, pt->total, r->dtype, r->peer, pt->wire_tag, r->comm, r->ctx, &inner);
    return watch(r, inner, rc);
}

/* ---------------------------------------------------------------- Pready */

/* An error of a call on a partitioned request goes to its communicator's
 * handler. */
static int on_comm(halo_request_t *r, int rc)
{
    if (rc != MPI_SUCCESS)
        halo_err_redirect_comm(halo_comm_handle(r->comm));
    return rc;
}

static int send_request(MPI_Request request, halo_request_t **r_p)
{
    halo_request_t *r = halo_req_get(request);
    if (!r || r->kind != HALO_REQ_PART)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a partitioned request", (void *)request);
    part_t *pt = r->priv;
    if (!pt->is_send)
        return on_comm(r, halo_err(MPI_ERR_REQUEST, "(request): a partitioned receive; partitions are "
                                   "made ready on the sending side"));
    if (!r->active)
        return on_comm(r, halo_err(MPI_ERR_REQUEST, "(request): the request is not started (call "
                                   "MPI_Start first)"));
    *r_p = r;
    return MPI_SUCCESS;
}

/* A partition of the request not yet ready in this epoch. */
static bool partition_open(const part_t *pt, int partition)
{
    return partition >= 0 && partition < pt->partitions && !pt->ready[partition];
}

static int check_partition(const part_t *pt, int partition, const char *arg)
{
    if (partition < 0 || partition >= pt->partitions)
        return halo_err(MPI_ERR_ARG, "(%s=%d): not a partition of the request (it has %d)", arg, partition,
                        pt->partitions);
    if (pt->ready[partition])
        return halo_err(MPI_ERR_ARG, "(%s=%d): the partition is already ready in this epoch", arg,
                        partition);
    return MPI_SUCCESS;
}

/* Marks one partition ready; the last one sends the message. */
static int mark_ready(halo_request_t *r, int partition)
{
    part_t *pt = r->priv;
    pt->ready[partition] = 1;
    if (++pt->nready < pt->partitions)
        return MPI_SUCCESS;
    return part_send(r);
}

int halo_api_pready(int partition, MPI_Request request)
{
    halo_request_t *r = NULL;
    int rc = send_request(request, &r);
    if (rc)
        return rc;
    if ((rc = check_partition(r->priv, partition, "partition")))
        return on_comm(r, rc);
    return on_comm(r, mark_ready(r, partition));
}

int halo_api_pready_range(int partition_low, int partition_high, MPI_Request request)
{
    halo_request_t *r;
    int rc = send_request(request, &r);
    if (rc)
        return rc;
    part_t *pt = r->priv;
    if (partition_low > partition_high || partition_low < 0 || partition_high >= pt->partitions)
        return on_comm(r, halo_err(MPI_ERR_ARG, "(partition_low=%d, partition_high=%d): not a range of "
                                   "the request's partitions (0 to %d)", partition_low, partition_high,
                                   pt->partitions - 1));
    /* All checked before any is marked: an error changes nothing. */
    for (int p = partition_low; p <= partition_high; p++)
        if ((rc = check_partition(pt, p, "partition")))
            return on_comm(r, rc);
    for (int p = partition_low; p <= partition_high && rc == MPI_SUCCESS; p++)
        rc = mark_ready(r, p);
    return on_comm(r, rc);
}

int halo_api_pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    halo_request_t *r;
    int rc = send_request(request, &r);
    if (rc)
        return rc;
    part_t *pt = r->priv;
    if (length < 0)
        return on_comm(r, halo_err(MPI_ERR_ARG, "(length=%d): must be non-negative", length));
    if (length > 0 && !array_of_partitions)
        return on_comm(r, halo_err(MPI_ERR_ARG, "(array_of_partitions=NULL): %d partitions expected",
                                   length));
    /* All checked before any is marked (a partition listed twice too): an
     * error changes nothing. */
    uint8_t *seen = halo_calloc((size_t)pt->partitions, 1);
    for (int i = 0; i < length && rc == MPI_SUCCESS; i++) {
        int p = array_of_partitions[i];
        if (partition_open(pt, p) && !seen[p]) {
            seen[p] = 1;
            continue;
        }
        /* The argument's name is made only for the message. */
        char arg[48];
        snprintf(arg, sizeof arg, "array_of_partitions[%d]", i);
        rc = check_partition(pt, p, arg);
        if (rc == MPI_SUCCESS)
            rc = halo_err(MPI_ERR_ARG, "(%s=%d): listed twice", arg, p);
    }
    free(seen);
    for (int i = 0; i < length && rc == MPI_SUCCESS; i++)
        rc = mark_ready(r, array_of_partitions[i]);
    return on_comm(r, rc);
}

int halo_api_parrived(MPI_Request request, int partition, int *flag)
{
    /* A null request, like an inactive one, has nothing to wait for. */
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        return MPI_SUCCESS;
    }
    halo_request_t *r = halo_req_get(request);
    if (!r || r->kind != HALO_REQ_PART)
        return halo_err(MPI_ERR_REQUEST, "(request=%p): not a partitioned request", (void *)request);
    part_t *pt = r->priv;
    if (pt->is_send)
        return on_comm(r, halo_err(MPI_ERR_REQUEST, "(request): a partitioned send; MPI_Parrived is for "
                                   "receives"));
    if (partition < 0 || partition >= pt->partitions)
        return on_comm(r, halo_err(MPI_ERR_ARG, "(partition=%d): not a partition of the request (it has "
                                   "%d)", partition, pt->partitions));
    /* An inactive request has nothing pending: its data is all there. */
    if (r->active && !halo_req_done(r))
        halo_progress_poll();
    *flag = !r->active || halo_req_done(r);
    return MPI_SUCCESS;
}
