/* Eager and rendezvous protocols, the packet handler, and the queue of
 * packets waiting for room in a transport.
 *
 * Eager (message <= the transport's eager limit): one EAGER packet; a
 * standard send completes when it leaves, a synchronous one when the ACK of
 * its match comes back.
 * Rendezvous: an RTS says where the send data lies: one range (a
 * contiguous type, or a packed copy of one with many long runs), or the
 * list of a few long runs; the receiver, once matched, reads it in place
 * (CMA) and sends FIN. When it may not read the sender's memory, or when
 * the sender's type has short runs (RTS flag PUSH), it sends CTS instead
 * and the sender packs DATA chunks into the transport's buffers. */
#include "pt2pt/match.h"

#include "core/config.h"
#include "core/cpu.h"
#include "core/errors.h"
#include "core/mpit.h"
#include "progress/progress.h"
#include "rma/win.h"

/* Rendezvous shapes (rdv_shape): runs averaging under RUN_MIN bytes are
 * packed, at least RUN_LONG bytes (and at most RUNS_MAX of them) read in
 * place; RDV_IOV iovecs a side per single-copy call. */
#define RUN_MIN 512
#define RUN_LONG 16384
#define RUNS_MAX 1024
#define PUSH_MAX (256 * 1024)
#define RDV_IOV 256

HALO_CFG_INT(cfg_split_min, "HALO_SPLIT_MIN", -1,
             "rendezvous messages at least this large are copied by both sides at once (the "
             "receiver reads the first half, the sender writes the second); 0 disables; -1: "
             "32768 on Intel processors, else 16384");

HALO_CFG_INT(cfg_stagger_min, "HALO_STAGGER_MIN", 262144,
             "a rendezvous message at least this large whose range other receivers are reading "
             "too (a linear Bcast) is read from a point of its own first; 0 disables");

/* HALO_SPLIT_MIN unless set. A split costs a round trip of control packets
 * and a system call on the sender, and leaves the second half modified in
 * the sender's cache; where a line crosses between cores slowly (a Xeon of
 * the Sapphire Rapids family, 64 ns) that outweighs halving the copy below
 * 24 KiB (2 ranks, 16 KiB, split against not: latency 1.47 us against
 * 1.28-1.30, Bcast 1.51 against 1.09-1.12, Scatter 1.67 against 1.17-1.19;
 * from 32 KiB the split wins, latency 1.79 against 2.03-2.06); on an AMD
 * EPYC it wins from 16 KiB (20 KiB 2.60 us against 3.21). */
static long split_min;   /* set at halo_pt2pt_init */
static long stagger_min;
static MPI_Count last_read_first;   /* halo_pt2pt_last_read_first */
static long long rdv_sends;         /* halo_pt2pt_rdv_sends */

static long split_min_default(void)
{
    long v = halo_cfg_get(&cfg_split_min);
    if (v < 0)
        v = halo_cpu() == HALO_CPU_INTEL ? 32768 : 16384;
    return v;
}

/* Packets waiting for room, in one FIFO; a pass skips destinations that are
 * still full, which keeps each pair's packets in order. */
enum { PEND_CTRL = 1, PEND_SEND, PEND_PUSH };

typedef struct pend {
    struct pend *next;
    int dst;
    int what;
    halo_pkt_hdr_t hdr;
    halo_request_t *r;
    size_t len;                 /* control payload */
    char payload[sizeof(halo_split_t)];
} pend_t;

static pend_t *pend_head, *pend_tail;
static int *pend_count;     /* queued packets per destination (world rank) */
/* Rendezvous sends to each world rank not yet complete: while we send to
 * a peer, its core is busy copying our data, so a message from it is not
 * split (the split asks the sender to copy half; with both cores copying
 * already, that only adds packets and kernel calls: bidirectional
 * bandwidth at 64 KiB-1 MiB was 10-13 GB/s split, 16-20 not; one message
 * each way, as in Alltoall or Allgather at 2 ranks, three alternations,
 * 64 KiB 9.5-10.7 us unsplit against 11.8-14.9 split, 128 KiB 16-17.6
 * against 17.5-28, equal from 512 KiB). A ring step of more ranks sends
 * to another rank than it receives from, and still splits. */
static int *rdv_out;
static int rdv_out_total;
static int unexp_rts;       /* rendezvous messages waiting in the unexpected queues */

static void rdv_out_done(halo_request_t *r)
{
    if (r->rdv_counted) {
        r->rdv_counted = 0;
        rdv_out[r->peer_world]--;
        rdv_out_total--;
    }
}

/* Whether to split a rendezvous copy from src between both sides. With a
 * core each: unless we stream several messages to src ourselves. With more
 * ranks than cores no core is idle and a split waits for the sender to be
 * scheduled (two pairs on two cores, 64 KiB ping-pong: 10-11 us whole,
 * 17-23 split; Scatter of 1 MiB to 8 ranks 253 us against 860), so only a
 * receiver that is the bottleneck splits: more large messages for it
 * posted or waiting, no more than one send of its own in flight (Gather's
 * root: 1 MiB from 4 ranks, 170 us split, 300 not). */
static bool rdv_split(int src_world)
{
    /* A sender bound to our CPU copies its half only when we stop copying
     * ours (8 ranks on 2 cores bound round robin, mbw_mr pairs sharing a
     * CPU, 64 KiB-1 MiB: 12.2-20.5 GB/s split against 14.0-28.5). */
    if (halo_tr_shares_cpu(src_world))
        return false;
    if (!halo_progress_oversubscribed())
        return rdv_out[src_world] == 0;
    return halo_match_nposted + unexp_rts >= 1 && rdv_out_total < 2;
}
static uint64_t *blocked;   /* destinations found full during one pass */

static void pend_add(int dst, int what, const halo_pkt_hdr_t *hdr, halo_request_t *r)
{
    pend_t *p = halo_malloc(sizeof *p);
    p->next = NULL;
    p->dst = dst;
    p->what = what;
    if (hdr)
        p->hdr = *hdr;
    p->r = r;
    p->len = 0;
    if (pend_tail)
        pend_tail->next = p;
    else
        pend_head = p;
    pend_tail = p;
    pend_count[dst]++;
}

/* Takes p, found at *pp behind `last` (NULL at the head), out of the queue. */
static void pend_remove(pend_t **pp, pend_t *p, pend_t *last)
{
    *pp = p->next;
    if (pend_tail == p)
        pend_tail = last;
    pend_count[p->dst]--;
    free(p);
}

static void fill_from_request(void *arg, void *dst, size_t len)
{
    halo_request_t *r = arg;
    halo_dt_pack(r->buf, r->count, r->dtype, 0, dst, (MPI_Count)len);
}

/* Pushes alternate in direction (see HALO_PKT_CTS below): flipped at each. */
static uint8_t push_turn;

/* Packed position of the next chunk of len bytes that r pushes. */
static MPI_Count push_pos(const halo_request_t *r, size_t len)
{
    return r->push_back ? r->push_limit - r->pushed - (MPI_Count)len : r->pushed;
}

static void fill_push(void *arg, void *dst, size_t len)
{
    halo_request_t *r = arg;
    MPI_Count pos = push_pos(r, len);
    if (r->pack_buf)
        memcpy(dst, (char *)r->pack_buf + pos, len);
    else
        halo_dt_pack(r->buf, r->count, r->dtype, pos, dst, (MPI_Count)len);
}

static void send_ctrl_payload(int dst, int type, uint64_t sreq, uint64_t aux, uint64_t bytes,
                              const void *payload, size_t len)
{
    halo_pkt_hdr_t h = {.type = (uint8_t)type, .sreq = sreq, .aux = aux, .bytes = bytes};
    if (pend_count[dst] == 0 && halo_tr_send(dst, &h, payload, len, NULL, NULL) == HALO_TR_OK)
        return;
    pend_add(dst, PEND_CTRL, &h, NULL);
    if (len)
        memcpy(pend_tail->payload, payload, len);
    pend_tail->len = len;
}

static void send_ctrl(int dst, int type, uint64_t sreq, uint64_t aux, uint64_t bytes)
{
    send_ctrl_payload(dst, type, sreq, aux, bytes, NULL, 0);
}

/* Sends the first packet of r; returns false when there was no room. */
static bool send_first(halo_request_t *r, const halo_pkt_hdr_t *h)
{
    int rc;
    if (h->type == HALO_PKT_EAGER && halo_dt_contig(r->dtype))
        rc = halo_tr_send(r->peer_world, h, r->buf, (size_t)r->bytes, NULL, NULL);
    else if (h->type == HALO_PKT_EAGER)
        rc = halo_tr_send(r->peer_world, h, NULL, (size_t)r->bytes, fill_from_request, r);
    else if (h->flags & HALO_PKT_F_RUNS)
        rc = halo_tr_send(r->peer_world, h, r->runs, (size_t)r->nruns * sizeof *r->runs, NULL, NULL);
    else
        rc = halo_tr_send(r->peer_world, h, NULL, 0, NULL, NULL);
    if (rc != HALO_TR_OK)
        return false;
    r->send_state = HALO_SEND_POSTED;
    if (h->type == HALO_PKT_EAGER && !(h->flags & HALO_PKT_F_SYNC))
        halo_req_complete(r);
    return true;
}

/* Pushes DATA chunks of r until done or out of room; true when done.
 * Chunks pushed count as progress (*moved_p), so a sender in the middle of
 * a long push keeps polling instead of going to sleep. */
static bool push_some(halo_request_t *r, int *moved_p)
{
    size_t chunk = halo_tr_chunk_max(r->peer_world);
    while (r->pushed < r->push_limit) {
        size_t n = (size_t)(r->push_limit - r->pushed);
        if (n > chunk)
            n = chunk;
        halo_pkt_hdr_t h = {.type = HALO_PKT_DATA, .sreq = (uint64_t)push_pos(r, n),
                            .aux = r->push_token, .bytes = (uint64_t)r->push_limit};
        if (halo_tr_send(r->peer_world, &h, NULL, n, fill_push, r) != HALO_TR_OK)
            return false;
        r->pushed += (MPI_Count)n;
        if (moved_p)
            (*moved_p)++;
    }
    rdv_out_done(r);
    halo_req_complete(r);
    return true;
}

static int pend_poll(void)
{
    if (!pend_head)
        return 0;
    int n = 0;
    size_t words = ((size_t)halo_world.nprocs + 63) / 64;
    memset(blocked, 0, words * sizeof *blocked);
    pend_t **pp = &pend_head, *last = NULL;
    while (*pp) {
        pend_t *p = *pp;
        bool done;
        if (blocked[p->dst / 64] & (1ull << (p->dst % 64))) {
            done = false;
        } else {
            switch (p->what) {
            case PEND_CTRL:
                done = halo_tr_send(p->dst, &p->hdr, p->payload, p->len, NULL, NULL) == HALO_TR_OK;
                break;
            case PEND_SEND:
                done = send_first(p->r, &p->hdr);
                break;
            default:
                done = push_some(p->r, &n);
                break;
            }
            if (!done)
                blocked[p->dst / 64] |= 1ull << (p->dst % 64);
        }
        if (done) {
            pend_remove(pp, p, last);
            n++;
        } else {
            last = p;
            pp = &p->next;
        }
    }
    return n;
}

/* Blocking eager send without a request, when the packet can leave now:
 * returns true when sent. */
bool halo_send_now(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag,
                   halo_comm_t *comm, uint32_t ctx)
{
    int w = comm->world[dest];
    MPI_Count bytes = count * dt->size;
    if ((size_t)bytes > halo_tr_eager_max(w) || pend_count[w] != 0)
        return false;
    halo_pkt_hdr_t h = {.type = HALO_PKT_EAGER, .ctx = ctx, .src = comm->rank, .tag = tag,
                        .bytes = (uint64_t)bytes};
    if (halo_dt_contig(dt))
        return halo_tr_send(w, &h, buf, (size_t)bytes, NULL, NULL) == HALO_TR_OK;
    halo_request_t tmp = {.buf = (void *)buf, .count = count, .dtype = dt};
    return halo_tr_send(w, &h, NULL, (size_t)bytes, fill_from_request, &tmp) == HALO_TR_OK;
}

int halo_isend(const void *buf, MPI_Count count, halo_dtype_t *dt, int dest, int tag,
               halo_comm_t *comm, uint32_t ctx, int mode, halo_request_t **req_p)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_SEND, comm);
    *req_p = r;
    r->buf = (void *)buf;
    r->count = count;
    r->dtype = dt;
    halo_obj_ref(dt);
    r->peer = dest;
    r->tag = tag;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
    return halo_req_start(r);
}

/* How a rendezvous send of a type that is not one run travels (measured
 * with vectors of 64 B to 64 KiB blocks, 64 KiB to 4 MiB, into contiguous
 * and vector receives, two ranks of one node): short runs are pushed
 * (an iovec costs the kernel about as much as copying 512 bytes); long
 * ones (16 KiB and more; each remote run costs a page lookup) are read
 * in place from their list; in between, up to 256 KiB is pushed (two
 * cores copy at once), and above it a packed copy is read with CMA (which
 * a contiguous receive splits between both cores). */
enum { RDV_PUSH, RDV_RUNS, RDV_PACK };

/* (count, dt) of `bytes` in runs of under RUN_MIN bytes on average: moved
 * by packing, on either side. */
static bool short_runs(const halo_dtype_t *dt, MPI_Count count, MPI_Count bytes)
{
    return halo_dt_iov_count(dt, count) > bytes / RUN_MIN;
}

static int rdv_shape(const halo_request_t *r)
{
    MPI_Count runs = halo_dt_iov_count(r->dtype, r->count);
    if (short_runs(r->dtype, r->count, r->bytes))
        return RDV_PUSH;
    if (runs <= r->bytes / RUN_LONG && runs <= RUNS_MAX)
        return RDV_RUNS;
    return r->bytes <= PUSH_MAX ? RDV_PUSH : RDV_PACK;
}

/* Lists the runs of a rendezvous send of shape RDV_RUNS (at most RUNS_MAX)
 * in r->runs, kept for the next start of a persistent send. */
static bool list_runs(halo_request_t *r)
{
    struct iovec *v = halo_malloc(RUNS_MAX * sizeof *v);
    MPI_Count pos = 0;
    int n = halo_dt_iov(r->buf, r->count, r->dtype, &pos, r->bytes, v, RUNS_MAX);
    if (pos != r->bytes || n == 0) {
        free(v);
        return false;
    }
    r->runs = halo_realloc(v, (size_t)n * sizeof *v);
    r->nruns = n;
    return true;
}

/* Readers of one range at once. Receivers that read the same pages of a
 * sender at the same moment slow each other down: the kernel pins each
 * page for each reader, and readers that start together stay in step,
 * so every page's pin count bounces between their cores (3 ranks, linear
 * Bcast of 4 MiB, the two receivers on two cores: 1.0 ms each, against
 * 0.45 for one receiver alone; 0.6 with the starts spread). The sender
 * numbers the rendezvous sends of one range it posts while the earlier
 * ones are still out to other receivers (a linear Bcast's root posts p - 1
 * at once; messages to one receiver are read one after the other), and the
 * k-th reader starts at the fraction {k x 0.618...} of the range (the
 * golden ratio's steps: any number of readers lands spread out), reading
 * the rest after. The first reader (k = 0), and every message of a
 * range sent alone, reads in order: a second call costs a
 * single reader 3% at 256 KiB. */
static int rdv_reader(uint64_t addr, int dst)
{
    static uint64_t last_addr;
    static int last_dst = -1, k;
    if (addr == 0 || rdv_out_total == 0 || addr != last_addr)
        k = 0;
    else if (dst != last_dst)
        k = k < HALO_PKT_READER_MAX ? k + 1 : 1;
    last_addr = addr;
    last_dst = dst;
    return k;
}

/* Where the receiver's read of `limit` bytes starts (see rdv_reader): 0,
 * or a page boundary inside the range. */
static MPI_Count rdv_first_byte(int flags, MPI_Count limit, const struct iovec *runs, halo_dtype_t *type)
{
    int k = flags >> HALO_PKT_READER_SHIFT;
    if (k == 0 || stagger_min <= 0 || limit < stagger_min || runs || !halo_dt_contig(type))
        return 0;
    double f = (double)k * 0.6180339887498949;
    f -= (double)(long)f;
    return (MPI_Count)((double)limit * f) & ~(MPI_Count)4095;
}

static int send_start(halo_request_t *r)
{
    halo_comm_t *comm = r->comm;
    r->peer_world = comm->world[r->peer];
    r->bytes = r->count * r->dtype->size;
    r->send_state = HALO_SEND_QUEUED;
    halo_pkt_hdr_t h = {.ctx = r->ctx, .src = comm->rank, .tag = r->tag,
                        .bytes = (uint64_t)r->bytes, .sreq = (uint64_t)(uintptr_t)r};
    if ((size_t)r->bytes <= halo_tr_eager_max(r->peer_world) && (r->mode != HALO_MODE_RDV || r->bytes == 0)) {
        h.type = HALO_PKT_EAGER;
        if (r->mode == HALO_MODE_SYNC)
            h.flags = HALO_PKT_F_SYNC;
    } else {
        h.type = HALO_PKT_RTS;
        MPI_Count off;
        int shape = RDV_PACK;
        if (halo_dt_one_run(r->dtype, r->count, &off)) {
            /* one run of bytes (a contiguous type, a plane of a subarray):
             * the receiver reads it in place */
            h.aux = (uint64_t)((uintptr_t)r->buf + (uintptr_t)off);
        } else if ((shape = rdv_shape(r)) == RDV_PUSH) {
            /* packed chunk by chunk straight into the transport's buffers
             * when the receiver asks, and unpacked from there, so the two
             * sides copy at the same time and nothing is copied a third
             * time */
            h.flags |= HALO_PKT_F_PUSH;
        } else if (r->runs || (shape == RDV_RUNS && list_runs(r))) {
            /* a few long runs: the receiver reads them in place */
            h.flags |= HALO_PKT_F_RUNS;
        } else {
            /* a persistent send keeps its buffer from the last start */
            if (!r->pack_buf)
                r->pack_buf = halo_pack_buf_get((size_t)r->bytes);
            if (!r->pack_buf)
                return halo_err(MPI_ERR_NO_MEM, ": cannot allocate %lld bytes to pack a send",
                                (long long)r->bytes);
            halo_dt_pack(r->buf, r->count, r->dtype, 0, r->pack_buf, r->bytes);
            h.aux = (uint64_t)(uintptr_t)r->pack_buf;
        }
        h.flags |= (uint8_t)(rdv_reader(h.aux, r->peer_world) << HALO_PKT_READER_SHIFT);
        rdv_sends++;
        r->rdv_counted = 1;
        rdv_out[r->peer_world]++;
        rdv_out_total++;
    }
    if (pend_count[r->peer_world] == 0 && send_first(r, &h))
        return MPI_SUCCESS;
    pend_add(r->peer_world, PEND_SEND, &h, r);
    return MPI_SUCCESS;
}

/* Where a rendezvous message lies at the sender: one range at `addr`, or
 * the list of runs its RTS carried, read in order from a cursor. */
typedef struct {
    uint64_t addr;
    const struct iovec *v;
    int n, i;          /* runs, and the one the cursor is in */
    size_t off;        /* bytes of run i already read */
} rdv_src_t;

/* Packed position reached after at most `max` more runs from the cursor at
 * pos (a read must not take more remote iovecs than that). */
static MPI_Count rdv_reach(const rdv_src_t *s, MPI_Count pos, int max)
{
    if (!s->v)
        return INT64_MAX;
    for (int j = s->i; j < s->n && j < s->i + max; j++)
        pos += (MPI_Count)(s->v[j].iov_len - (j == s->i ? s->off : 0));
    return pos;
}

/* Reads the next `len` bytes of the message (packed position pos) into the
 * local iovecs; 0, or -1 when the sender's memory cannot be read. */
static int rdv_read(int src_world, rdv_src_t *s, MPI_Count pos, const struct iovec *local, int nlocal,
                    size_t len)
{
    if (!s->v)
        return halo_tr_read(src_world, local, nlocal, s->addr + (uint64_t)pos, len);
    struct iovec rem[RDV_IOV];
    int nr = 0;
    while (len > 0 && s->i < s->n && nr < RDV_IOV) {
        size_t m = s->v[s->i].iov_len - s->off;
        if (m > len)
            m = len;
        rem[nr].iov_base = (char *)s->v[s->i].iov_base + s->off;
        rem[nr++].iov_len = m;
        len -= m;
        s->off += m;
        if (s->off == s->v[s->i].iov_len) {
            s->i++;
            s->off = 0;
        }
    }
    return halo_tr_readv(src_world, local, nlocal, rem, nr);
}

/* Moves a matched message into the receive request r. `len` is the
 * payload's length (eager data, or an RTS's list of runs). */
static void recv_deliver(halo_request_t *r, int src_world, int type, int flags, int src, int tag,
                         uint64_t bytes, uint64_t sreq, uint64_t aux, const void *payload, size_t len)
{
    MPI_Count n = (MPI_Count)bytes < r->bytes ? (MPI_Count)bytes : r->bytes;
    r->status.MPI_SOURCE = src;
    r->status.MPI_TAG = tag;
    r->status.MPI_ERROR = MPI_SUCCESS;
    halo_status_set_bytes(&r->status, n);
    halo_status_set_cancelled(&r->status, 0);
    if ((MPI_Count)bytes > r->bytes)
        r->status.MPI_ERROR = halo_err(MPI_ERR_TRUNCATE,
            ": message of %llu bytes from rank %d (tag %d) does not fit the receive buffer "
            "(count=%lld, %lld bytes); %lld bytes were received",
            (unsigned long long)bytes, src, tag, (long long)r->count, (long long)r->bytes,
            (long long)n);
    else if (n < r->bytes && !halo_dt_contig(r->dtype) && halo_dt_elements(r->dtype, n) == MPI_UNDEFINED)
        /* A short message that stops inside a basic element of a derived
         * receive type cannot have the send's type signature. */
        r->status.MPI_ERROR = halo_err(MPI_ERR_TYPE,
            ": message of %llu bytes from rank %d (tag %d) ends inside a basic element of the receive "
            "type: the send and receive type signatures differ", (unsigned long long)bytes, src, tag);
    if (type == HALO_PKT_EAGER) {
        if (n && halo_dt_contig(r->dtype))
            halo_copy(r->buf, payload, (size_t)n);
        else if (n)
            halo_dt_unpack(r->buf, r->count, r->dtype, 0, payload, n);
        if (flags & HALO_PKT_F_SYNC)
            send_ctrl(src_world, HALO_PKT_ACK, sreq, 0, 0);
        halo_req_complete(r);
        return;
    }
    if (flags & HALO_PKT_F_PUSH) {
        r->pushed = 0;
        r->push_limit = n;
        send_ctrl(src_world, HALO_PKT_CTS, sreq, (uint64_t)(uintptr_t)r, (uint64_t)n);
        if (n == 0)
            halo_req_complete(r);
        return;
    }
    /* Rendezvous: read the sender's data in place (one range, or its list
     * of runs), iovec batch by batch. */
    rdv_src_t rs = {.addr = aux};
    if (flags & HALO_PKT_F_RUNS) {
        rs.v = payload;
        rs.n = (int)(len / sizeof(struct iovec));
    }
    MPI_Count pos = 0, off1;
    bool refused = false;
    last_read_first = 0;
    if (n > 0 && !halo_dt_one_run(r->dtype, r->count, &off1) &&
        short_runs(r->dtype, r->count, r->bytes)) {
        /* Our type has short runs (an iovec costs the kernel about as much
         * as copying that much): read through a bounce buffer that stays
         * in cache, and unpack from there, chunk by chunk. */
        static _Alignas(64) unsigned char bounce[64 * 1024];
        while (pos < n) {
            MPI_Count m = n - pos < (MPI_Count)sizeof bounce ? n - pos : (MPI_Count)sizeof bounce;
            MPI_Count reach = rdv_reach(&rs, pos, RDV_IOV);
            if (m > reach - pos)
                m = reach - pos;
            if (m <= 0)
                halo_fatal("the runs listed by rank %d end before byte %lld of %lld", src_world,
                           (long long)pos, (long long)n);
            struct iovec iov = {bounce, (size_t)m};
            if (rdv_read(src_world, &rs, pos, &iov, 1, (size_t)m) != 0) {
                refused = true;
                break;
            }
            halo_dt_unpack(r->buf, r->count, r->dtype, pos, bounce, m);
            pos += m;
        }
    } else {
        /* A large message into a contiguous buffer, from a peer whose
         * memory we have read before, is split: we ask the sender to write
         * the second half while we read the first, so both cores copy. The
         * request then waits for two completions: our read and the
         * sender's WDONE (or its pushed DATA, if it may not write our
         * memory). When, see rdv_split. Not when we read the data at
         * once ourselves (r->consumed: a reduction follows): the half the
         * sender wrote sits modified in its core's cache, and fetching it
         * from there line by line costs more than copying it here (2
         * ranks, Reduce of 16 KiB 2.97 us split against 1.37, 256 KiB 24.8
         * against 12.0, on a Xeon whose cache line crosses in 64 ns). */
        MPI_Count limit = n;
        /* The halves meet on a page boundary (a message too short to have
         * one past its middle is not split, whatever HALO_SPLIT_MIN says). */
        MPI_Count off = (n / 2 + 4095) & ~(MPI_Count)4095;
        if (split_min > 0 && n >= split_min && off < n && !rs.v && !r->consumed &&
            halo_dt_contig(r->dtype) && rdv_split(src_world) && halo_tr_single_copy_ok(src_world)) {
            halo_split_t sp = {(uint64_t)(uintptr_t)((char *)r->buf + off), (uint64_t)off, (uint64_t)n,
                               (uint64_t)(uintptr_t)r};
            atomic_fetch_add(&r->cc, 1);
            r->pushed = 0;
            r->push_limit = n - off;
            send_ctrl_payload(src_world, HALO_PKT_SPLIT, sreq, 0, 0, &sp, sizeof sp);
            limit = off;
        }
        MPI_Count first = rdv_first_byte(flags, limit, rs.v, r->dtype);
        last_read_first = first;
        if (first > 0) {
            /* [first, limit), then [0, first) (rdv_first_byte) */
            struct iovec hi = {(char *)r->buf + first, (size_t)(limit - first)}, lo = {r->buf, (size_t)first};
            if (rdv_read(src_world, &rs, first, &hi, 1, hi.iov_len) != 0) {
                if (limit != n)
                    halo_fatal("single-copy read from rank %d refused after a split", src_world);
                refused = true;
            } else if (rdv_read(src_world, &rs, 0, &lo, 1, lo.iov_len) != 0) {
                halo_fatal("single-copy read from rank %d stopped after %lld bytes", src_world,
                           (long long)(limit - first));
            } else {
                pos = limit;
            }
        }
        while (!refused && pos < limit) {
            struct iovec iov[RDV_IOV];
            MPI_Count start = pos, reach = rdv_reach(&rs, pos, RDV_IOV);
            int cnt = halo_dt_iov(r->buf, r->count, r->dtype, &pos, limit < reach ? limit : reach, iov,
                                  RDV_IOV);
            if (pos == start)
                halo_fatal("the runs listed by rank %d end before byte %lld of %lld", src_world,
                           (long long)pos, (long long)n);
            if (rdv_read(src_world, &rs, start, iov, cnt, (size_t)(pos - start)) != 0) {
                if (limit != n)
                    halo_fatal("single-copy read from rank %d refused after a split", src_world);
                pos = start;
                refused = true;
                break;
            }
        }
    }
    if (refused) {
        /* The sender's memory cannot be read: it pushes the data instead. */
        last_read_first = 0;
        if (pos != 0)
            halo_fatal("single-copy read from rank %d stopped after %lld bytes", src_world, (long long)pos);
        r->pushed = 0;
        r->push_limit = n;
        send_ctrl(src_world, HALO_PKT_CTS, sreq, (uint64_t)(uintptr_t)r, (uint64_t)n);
        return;
    }
    send_ctrl(src_world, HALO_PKT_FIN, sreq, 0, 0);
    halo_req_complete(r);
}

/* ---------------------------------------------------------------- send cancel */

/* MPI_Cancel of a send. A send still queued here leaves the queue. One
 * whose packet left and that waits on its receiver (a rendezvous, a
 * synchronous eager send) asks the receiver with CANCEL: a message still
 * unmatched in the receiver's unexpected queue is dropped there; one
 * already matched completes as usual, uncancelled. The request counts the
 * answer as one more completion, so it outlives the answer's arrival, and
 * a wait on it returns once the receiver has answered, whatever the
 * application does next. A standard eager send completed as it left: it
 * stays sent (the standard lets a cancel fail), as does a send being
 * pushed (its receiver asked for the data). */
static void send_cancelled(halo_request_t *r)
{
    halo_status_set_cancelled(&r->status, 1);
    halo_status_set_bytes(&r->status, 0);
    rdv_out_done(r);
    halo_req_complete(r);
}

/* The receiver's side of CANCEL: true when the message was dropped. */
static bool cancel_unexpected(int src_world, uint32_t ctx, uint64_t sreq)
{
    halo_match_t *m = halo_match_find(ctx);
    halo_unexp_t *u = m ? halo_match_unexp_of_send(m, src_world, sreq) : NULL;
    if (!u)
        return false;
    if (u->type == HALO_PKT_RTS)
        unexp_rts--;
    halo_unexp_free(u);
    return true;
}

void halo_send_cancel(halo_request_t *r)
{
    if (r->cancel_asked || halo_req_done(r))
        return;
    if (r->send_state == HALO_SEND_QUEUED) {
        pend_t **pp = &pend_head, *last = NULL;
        for (pend_t *p = pend_head; p; p = p->next) {
            if (p->what == PEND_SEND && p->r == r) {
                pend_remove(pp, p, last);
                send_cancelled(r);
                return;
            }
            last = p;
            pp = &p->next;
        }
        return;
    }
    if (r->send_state != HALO_SEND_POSTED)
        return;
    r->cancel_asked = 1;
    /* To ourselves the answer is known at once: the message, delivered
     * first if still on its way, is either in our unexpected queue (dropped
     * now) or matched (the send completes). A program may test once and
     * then receive what was not cancelled. */
    if (r->peer_world == halo_world.rank) {
        halo_tr_poll_self();
        if (cancel_unexpected(r->peer_world, r->ctx, (uint64_t)(uintptr_t)r))
            send_cancelled(r);
        return;
    }
    atomic_fetch_add(&r->cc, 1);
    send_ctrl(r->peer_world, HALO_PKT_CANCEL, (uint64_t)(uintptr_t)r, r->ctx, 0);
}

/* The tools interface's events on messages (core/mpit_events.c). */
static void raise_message_event(int ev, int src, int tag, MPI_Count bytes, uint32_t ctx, bool matched)
{
    halo_t_msg_event_t e = {.source = src, .tag = tag, .bytes = bytes, .context = ctx, .matched = matched};
    halo_t_event_emit(ev, &e);
}

void halo_recv_from_unexp(halo_request_t *r, halo_unexp_t *u)
{
    if (halo_t_event_live(HALO_T_EV_UNEXPECTED_RECEIVED))
        raise_message_event(HALO_T_EV_UNEXPECTED_RECEIVED, u->src, u->tag, u->bytes, r->ctx, false);
    if (u->type == HALO_PKT_RTS)
        unexp_rts--;
    recv_deliver(r, u->src_world, u->type, u->flags, u->src, u->tag, u->bytes, u->sreq, u->aux,
                 u->data, u->len);
}

/* A blocking call's request on the caller's stack: it lives until the call
 * has waited for completion, and nothing refers to it afterwards, so it
 * takes no references and never goes back to the slab. */
void halo_req_stack_init(halo_request_t *r, int kind, const void *buf, MPI_Count count,
                         halo_dtype_t *dt, int peer, int tag, halo_comm_t *comm, uint32_t ctx, int mode)
{
    memset(r, 0, sizeof *r);
    r->kind = (uint8_t)kind;
    r->buf = (void *)buf;
    r->count = count;
    r->dtype = dt;
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->ctx = ctx;
    r->mode = (uint8_t)mode;
}

static int irecv(void *buf, MPI_Count count, halo_dtype_t *dt, int source, int tag, halo_comm_t *comm,
                 uint32_t ctx, bool consumed, halo_request_t **req_p)
{
    halo_request_t *r = halo_req_alloc(HALO_REQ_RECV, comm);
    *req_p = r;
    r->buf = buf;
    r->count = count;
    r->dtype = dt;
    halo_obj_ref(dt);
    r->peer = source;
    r->tag = tag;
    r->ctx = ctx;
    r->consumed = consumed;
    return halo_req_start(r);
}

int halo_irecv(void *buf, MPI_Count count, halo_dtype_t *dt, int source, int tag,
               halo_comm_t *comm, uint32_t ctx, halo_request_t **req_p)
{
    return irecv(buf, count, dt, source, tag, comm, ctx, false, req_p);
}

int halo_irecv_consumed(void *buf, MPI_Count count, halo_dtype_t *dt, int source, int tag,
                        halo_comm_t *comm, uint32_t ctx, halo_request_t **req_p)
{
    return irecv(buf, count, dt, source, tag, comm, ctx, true, req_p);
}

static int recv_start(halo_request_t *r)
{
    halo_status_empty(&r->status);
    r->bytes = r->count * r->dtype->size;
    if (r->peer == MPI_PROC_NULL) {
        r->status.MPI_SOURCE = MPI_PROC_NULL;
        r->status.MPI_TAG = MPI_ANY_TAG;
        halo_req_complete(r);
        return MPI_SUCCESS;
    }
    halo_match_t *m = halo_match_find(r->ctx);
    halo_unexp_t *u = halo_match_unexp(m, r->peer, r->tag, true);
    if (u) {
        halo_recv_from_unexp(r, u);
        halo_unexp_free(u);
    } else {
        halo_match_post(m, r);
    }
    return MPI_SUCCESS;
}

int halo_req_start(halo_request_t *r)
{
    atomic_store_explicit(&r->cc, 1, memory_order_relaxed);
    r->cancelled = 0;
    r->cancel_asked = 0;
    if (r->kind == HALO_REQ_SEND) {
        halo_status_empty(&r->status);
        if (r->peer == MPI_PROC_NULL) {
            r->status.MPI_SOURCE = MPI_PROC_NULL;
            halo_req_complete(r);
            return MPI_SUCCESS;
        }
        return send_start(r);
    }
    return recv_start(r);
}

/* ---------------------------------------------------------------- failed collectives */

static halo_coll_peer_failed_fn_t *coll_peer_failed;
static halo_coll_is_failed_fn_t *coll_is_failed;

void halo_pt2pt_coll_hooks(halo_coll_peer_failed_fn_t *peer_failed, halo_coll_is_failed_fn_t *is_failed)
{
    coll_peer_failed = peer_failed;
    coll_is_failed = is_failed;
}

void halo_pt2pt_send_coll_err(int dst_world, uint32_t ctx, int tag, int src, int errclass)
{
    halo_pkt_hdr_t h = {.type = HALO_PKT_COLL_ERR, .ctx = ctx, .src = src, .tag = tag,
                        .aux = (uint64_t)errclass};
    if (pend_count[dst_world] == 0 && halo_tr_send(dst_world, &h, NULL, 0, NULL, NULL) == HALO_TR_OK)
        return;
    pend_add(dst_world, PEND_CTRL, &h, NULL);
}

/* An unmatched message of a failed collective: nobody will take it. A
 * rendezvous sender is released as if it had been read. */
static void drop_message(int src_world, int type, int flags, uint64_t sreq)
{
    if (type == HALO_PKT_RTS)
        send_ctrl(src_world, HALO_PKT_FIN, sreq, 0, 0);
    else if (flags & HALO_PKT_F_SYNC)
        send_ctrl(src_world, HALO_PKT_ACK, sreq, 0, 0);
}

void halo_pt2pt_drop_unexpected(uint32_t ctx, int tag)
{
    halo_match_t *m = halo_match_find(ctx);
    if (!m)
        return;
    halo_unexp_t *u;
    while ((u = halo_match_unexp(m, MPI_ANY_SOURCE, tag, true))) {
        if (u->type == HALO_PKT_RTS)
            unexp_rts--;
        drop_message(u->src_world, u->type, u->flags, u->sreq);
        halo_unexp_free(u);
    }
}

uint64_t halo_pt2pt_arrived;

static void on_packet(int src_world, const halo_pkt_hdr_t *h, const void *payload, size_t len)
{
    halo_request_t *r;
    switch (h->type) {
    case HALO_PKT_EAGER:
    case HALO_PKT_RTS: {
        halo_match_t *m = halo_match_find(h->ctx);
        if (!m)
            m = halo_match_get(h->ctx, 0);
        r = halo_match_posted(m, h->src, h->tag);
        HALO_COUNT_ADD(halo_pt2pt_arrived, 1);
        if (halo_t_event_live(HALO_T_EV_MESSAGE_ARRIVED))
            raise_message_event(HALO_T_EV_MESSAGE_ARRIVED, h->src, h->tag, h->bytes, h->ctx, r != NULL);
        if (r) {
            recv_deliver(r, src_world, h->type, h->flags, h->src, h->tag, h->bytes, h->sreq, h->aux,
                         payload, len);
            return;
        }
        if (coll_is_failed && coll_is_failed(h->ctx, h->tag)) {
            drop_message(src_world, h->type, h->flags, h->sreq);
            return;
        }
        halo_unexp_t *u = halo_malloc(sizeof *u);
        u->src = h->src;
        u->tag = h->tag;
        u->src_world = src_world;
        u->type = h->type;
        u->flags = h->flags;
        u->bytes = h->bytes;
        u->sreq = h->sreq;
        u->aux = h->aux;
        u->len = len;
        u->data = NULL;
        if (len) {
            u->data = halo_malloc(len);
            memcpy(u->data, payload, len);
        }
        if (u->type == HALO_PKT_RTS)
            unexp_rts++;
        halo_match_unexp_add(m, u);
        return;
    }
    case HALO_PKT_ACK:
        halo_req_complete((halo_request_t *)(uintptr_t)h->sreq);
        return;
    case HALO_PKT_FIN:
        /* The packed copy (if any) is freed with the request: a split
         * transfer may still be pushing from it. */
        r = (halo_request_t *)(uintptr_t)h->sreq;
        rdv_out_done(r);
        halo_req_complete(r);
        return;
    case HALO_PKT_CTS:
        r = (halo_request_t *)(uintptr_t)h->sreq;
        r->send_state = HALO_SEND_PUSHING;
        r->push_token = h->aux;
        r->push_limit = (MPI_Count)h->bytes;
        r->pushed = 0;
        /* Every other push runs from its last chunk to its first: a halo
         * exchange sends faces that share cache lines with the ghosts it
         * receives and with the next face, and the lines the last push
         * touched are the ones still in cache. */
        r->push_back = push_turn ^= 1;
        if (pend_count[r->peer_world] == 0 && push_some(r, NULL))
            return;
        pend_add(r->peer_world, PEND_PUSH, NULL, r);
        return;
    case HALO_PKT_SPLIT: {
        /* Write our part of the message into the receiver's buffer. */
        halo_split_t sp;
        memcpy(&sp, payload, sizeof sp);
        r = (halo_request_t *)(uintptr_t)h->sreq;
        /* Where the RTS said the bytes lie: a packed copy, or the one run
         * of the send type, which need not start at the buffer (a type
         * whose data lies past its lower bound). */
        const char *base = (const char *)r->pack_buf;
        MPI_Count run_off = 0;
        if (!base) {
            if (!halo_dt_one_run(r->dtype, r->count, &run_off))
                halo_fatal("rank %d asked to split a message that is not one run", src_world);
            base = (const char *)r->buf + run_off;
        }
        struct iovec iov = {(void *)(base + sp.off), (size_t)(sp.end - sp.off)};
        if (halo_tr_write(r->peer_world, &iov, 1, sp.raddr, iov.iov_len) == 0) {
            send_ctrl(r->peer_world, HALO_PKT_WDONE, 0, sp.rtoken, 0);
            return;
        }
        /* We may not write there: push our part instead. The request now
         * waits for both the pushes and the receiver's FIN. */
        atomic_fetch_add(&r->cc, 1);
        r->send_state = HALO_SEND_PUSHING;
        r->push_token = sp.rtoken;
        r->pushed = (MPI_Count)sp.off;
        r->push_back = 0;
        r->push_limit = (MPI_Count)sp.end;
        if (pend_count[r->peer_world] == 0 && push_some(r, NULL))
            return;
        pend_add(r->peer_world, PEND_PUSH, NULL, r);
        return;
    }
    case HALO_PKT_WDONE:
        halo_req_complete((halo_request_t *)(uintptr_t)h->aux);
        return;
    case HALO_PKT_CANCEL:
        send_ctrl(src_world, HALO_PKT_CANCEL_ANS, h->sreq,
                  cancel_unexpected(src_world, (uint32_t)h->aux, h->sreq), 0);
        return;
    case HALO_PKT_CANCEL_ANS:
        r = (halo_request_t *)(uintptr_t)h->sreq;
        if (h->aux)
            send_cancelled(r);   /* the completion its message will never bring */
        halo_req_complete(r);    /* the answer's own */
        return;
    case HALO_PKT_RMA_WRITE:
    case HALO_PKT_RMA_READ:
    case HALO_PKT_RMA_ANS:
        halo_rma_on_packet(src_world, h, payload, len);
        return;
    case HALO_PKT_COLL_ERR:
        if (coll_peer_failed)
            coll_peer_failed(h->ctx, h->tag, h->src, (int)h->aux);
        return;
    case HALO_PKT_DATA:
        r = (halo_request_t *)(uintptr_t)h->aux;
        halo_dt_unpack(r->buf, r->count, r->dtype, (MPI_Count)h->sreq, payload, (MPI_Count)len);
        r->pushed += (MPI_Count)len;
        if (r->pushed == r->push_limit)
            halo_req_complete(r);
        return;
    default:
        halo_fatal("unknown packet type %d from rank %d", h->type, src_world);
    }
}

long long halo_pt2pt_last_read_first(void)
{
    return (long long)last_read_first;
}

long long halo_pt2pt_rdv_sends(void)
{
    return rdv_sends;
}

void halo_req_init(void);

void halo_pt2pt_init(void)
{
    halo_obj_kind_setup(HALO_KIND_REQUEST, sizeof(halo_request_t), 1u << 24);
    halo_req_init();
    halo_obj_kind_setup(HALO_KIND_MESSAGE, 64, 1u << 20);
    /* By process: the job's ranks and room for processes of other jobs. */
    size_t nproc = (size_t)halo_world.size + HALO_FAR_MAX;
    pend_count = halo_calloc(nproc, sizeof *pend_count);
    split_min = split_min_default();
    stagger_min = halo_cfg_get(&cfg_stagger_min);
    rdv_out = halo_calloc(nproc, sizeof *rdv_out);
    blocked = halo_calloc((nproc + 63) / 64, sizeof *blocked);
    if (halo_tr_init(on_packet) != 0)
        halo_fatal("cannot start the transports");
    halo_progress_hook_add(pend_poll);
}

void halo_pt2pt_finalize(void)
{
    halo_tr_finalize();
    while (pend_head) {
        pend_t *p = pend_head;
        pend_head = p->next;
        free(p);
    }
    pend_tail = NULL;
    halo_pack_buf_drain();
    free(pend_count);
    free(rdv_out);
    free(blocked);
    pend_count = NULL;
    rdv_out = NULL;
    blocked = NULL;
}
