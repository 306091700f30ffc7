/* Transport selection: packets to this process take the self path, packets
 * to a process of this node the shared-memory one. The doorbell lives in the
 * shared segment when there is one, else in this process. */
#include "transport/transport.h"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/config.h"
#include "core/lock.h"
#include "pmi.h"
#include "transport/sock.h"

HALO_CFG_INT(cfg_membarrier, "HALO_MEMBARRIER", 1,
             "1: publishers of doorbell-watched stores skip their fence and a rank going to sleep "
             "issues membarrier(GLOBAL_EXPEDITED) instead (where the kernel has it); 0: full fences");

int halo_shm_create(void);
int halo_shm_init(halo_pkt_handler_fn_t *handler);
void halo_shm_finalize(void);
int halo_shm_active(void);
size_t halo_shm_eager_max(void);
size_t halo_shm_max_payload(void);
int halo_shm_poll(void);
int halo_shm_read(int peer, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);
int halo_shm_write(int peer, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);
int halo_shm_readv(int peer, const struct iovec *local, int nlocal, const struct iovec *remote,
                   int nremote);
int halo_shm_writev(int peer, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote);
int halo_shm_cma_ok(int peer);
int halo_shm_shares_cpu(int peer);
int halo_shm_bound_cpu(int local_rank);
int halo_shm_node_bound(void);
long long halo_shm_ring_reach(int local_rank, long long *ring_bytes);
int halo_shm_cma_node(void);
void halo_shm_wake_fenced_list(const int *peers, int n);
_Atomic uint32_t *halo_shm_doorbell(void);
_Atomic uint32_t *halo_shm_sleeping(void);
int halo_shm_sleepers(void);
_Atomic uint32_t *halo_shm_slept_on(void);

/* Packets to self wait in a FIFO until the next poll, so a handler never
 * runs inside the send that produced its packet. */
typedef struct self_pkt {
    struct self_pkt *next;
    halo_pkt_hdr_t hdr;
    size_t len;
    char payload[];
} self_pkt_t;

static struct {
    halo_pkt_handler_fn_t *handler;
    self_pkt_t *head, *tail;
    _Atomic uint32_t doorbell, sleeping, slept_on;   /* used when there is no segment */
    int shm;
} tr;

size_t halo_tr_eager_other;

bool halo_tr_light_fence;
static bool membarrier_global;   /* MEMBARRIER_CMD_GLOBAL_EXPEDITED works here */

/* Light publisher fences need the kernel to offer the global expedited
 * command (a sleeper calls it) and this process to be registered for it
 * (so that the sleeper's barrier reaches it); a process whose registration
 * failed keeps full fences, and sleepers call membarrier whenever the
 * command exists, so any mix on one node stays correct. */
static void fences_init(void)
{
    long cmds = halo_cfg_get(&cfg_membarrier) ? syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0) : -1;
    membarrier_global = cmds > 0 && (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
                        (cmds & MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED);
    halo_tr_light_fence =
        membarrier_global && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0;
}

int halo_tr_sleep_fence(void)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!membarrier_global)
        return 0;
    return syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0 ? 0 : -1;
}

int halo_tr_init(halo_pkt_handler_fn_t *handler)
{
    fences_init();
    tr.handler = handler;
    halo_sock_set_handler(handler);
    tr.head = tr.tail = NULL;
    tr.shm = 0;
    /* Every rank takes part in the fence, whether its node needs a segment
     * or not, so the fences match across the job. */
    int create_rc = 0;
    if (halo_world.local_size > 1 && halo_world.local_rank == 0)
        create_rc = halo_shm_create();
    if (halo_world.size > 1 && halo_pmi_fence() != 0)
        return -1;
    if (create_rc != 0)
        return -1;
    if (halo_world.local_size > 1) {
        if (halo_shm_init(handler) != 0)
            return -1;
        tr.shm = 1;
        halo_tr_eager_other = halo_shm_eager_max();
    }
    return 0;
}

void halo_tr_finalize(void)
{
    while (tr.head) {
        self_pkt_t *p = tr.head;
        tr.head = p->next;
        free(p);
    }
    tr.tail = NULL;
    halo_sock_finalize();
    if (tr.shm)
        halo_shm_finalize();
    tr.shm = 0;
}

/* A process of another job: its memory is not read or written across. */
static inline bool far(int world)
{
    return halo_world.procs[world].node != halo_world.node;
}

size_t halo_tr_chunk_max(int dst_world)
{
    if (dst_world == halo_world.rank)
        return HALO_TR_SELF_EAGER_MAX;
    if (far(dst_world))
        return HALO_SOCK_CHUNK_MAX;
    return halo_shm_max_payload();
}

static inline int local_of(int world)
{
    return halo_world.procs[world].local_rank;
}

int halo_tr_send_far(int dst_world, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                     halo_pkt_fill_fn_t *fill, void *fill_arg)
{
    if (halo_world.procs[dst_world].node != HALO_NODE_FAR)
        halo_tr_unreachable(dst_world);
    return halo_sock_send(dst_world, hdr, payload, len, fill, fill_arg);
}

_Noreturn void halo_tr_unreachable(int dst_world)
{
    halo_fatal("no transport reaches rank %d on another node (the network transport is not "
               "built yet)", dst_world);
}

int halo_tr_send_self(const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                      halo_pkt_fill_fn_t *fill, void *fill_arg)
{
    self_pkt_t *p = halo_malloc(sizeof *p + len);
    p->next = NULL;
    p->hdr = *hdr;
    p->len = len;
    if (len) {
        if (fill)
            fill(fill_arg, p->payload, len);
        else
            memcpy(p->payload, payload, len);
    }
    if (tr.tail)
        tr.tail->next = p;
    else
        tr.head = p;
    tr.tail = p;
    if (halo_lock_enabled)
        halo_tr_ring_self();
    return HALO_TR_OK;
}

int halo_tr_read(int src_world, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    if (src_world == halo_world.rank) {
        const char *src = (const char *)(uintptr_t)raddr;
        for (int i = 0; i < nlocal && len > 0; i++) {
            size_t n = local[i].iov_len < len ? local[i].iov_len : len;
            memcpy(local[i].iov_base, src, n);
            src += n;
            len -= n;
        }
        return 0;
    }
    if (far(src_world)) {
        struct iovec r = {(void *)(uintptr_t)raddr, len};
        return halo_sock_readv(src_world, local, nlocal, &r, 1);
    }
    return halo_shm_read(local_of(src_world), local, nlocal, raddr, len);
}

/* Within this process: copies between two iovec lists that cover the same
 * bytes (into the remote ones when to_remote), two cursors over the lists,
 * one memcpy per overlap. */
static void iov_copy(const struct iovec *local, int nlocal, const struct iovec *remote, int nremote, int to_remote)
{
    size_t lo = 0, ro = 0;
    for (int i = 0, j = 0; i < nlocal && j < nremote;) {
        size_t l = local[i].iov_len - lo, r = remote[j].iov_len - ro, n = l < r ? l : r;
        char *lp = (char *)local[i].iov_base + lo, *rp = (char *)remote[j].iov_base + ro;
        if (n)
            memcpy(to_remote ? rp : lp, to_remote ? lp : rp, n);
        lo += n;
        ro += n;
        if (lo == local[i].iov_len) {
            i++;
            lo = 0;
        }
        if (ro == remote[j].iov_len) {
            j++;
            ro = 0;
        }
    }
}

int halo_tr_readv(int src_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                  int nremote)
{
    if (src_world == halo_world.rank) {
        iov_copy(local, nlocal, remote, nremote, 0);
        return 0;
    }
    if (far(src_world))
        return halo_sock_readv(src_world, local, nlocal, remote, nremote);
    return halo_shm_readv(local_of(src_world), local, nlocal, remote, nremote);
}

int halo_tr_writev(int dst_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                   int nremote)
{
    if (dst_world == halo_world.rank) {
        iov_copy(local, nlocal, remote, nremote, 1);
        return 0;
    }
    if (far(dst_world))
        return -1;
    return halo_shm_writev(local_of(dst_world), local, nlocal, remote, nremote);
}

int halo_tr_write(int dst_world, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    if (dst_world == halo_world.rank) {
        char *dst = (char *)(uintptr_t)raddr;
        for (int i = 0; i < nlocal && len > 0; i++) {
            size_t n = local[i].iov_len < len ? local[i].iov_len : len;
            memcpy(dst, local[i].iov_base, n);
            dst += n;
            len -= n;
        }
        return 0;
    }
    if (far(dst_world))
        return -1;
    return halo_shm_write(local_of(dst_world), local, nlocal, raddr, len);
}

int halo_tr_single_copy_ok(int world)
{
    if (world == halo_world.rank)
        return 0;   /* no point splitting a copy within one process */
    return tr.shm && !far(world) && halo_shm_cma_ok(local_of(world));
}

int halo_tr_shares_cpu(int world)
{
    return tr.shm && world != halo_world.rank && !far(world) && halo_shm_shares_cpu(local_of(world));
}

int halo_tr_bound_cpu(int world)
{
    return tr.shm && !far(world) ? halo_shm_bound_cpu(local_of(world)) : -1;
}

int halo_tr_node_bound(void)
{
    return tr.shm ? halo_shm_node_bound() : 0;
}

long long halo_tr_ring_reach(int world, long long *ring_bytes)
{
    *ring_bytes = 0;
    if (!tr.shm || world == halo_world.rank || far(world))
        return -1;
    return halo_shm_ring_reach(local_of(world), ring_bytes);
}

int halo_tr_cma_node(void)
{
    return halo_shm_cma_node();
}

int halo_tr_poll_self(void)
{
    int n = 0;
    if (tr.head) {
        /* Take the current list; packets queued by the handlers wait for the
         * next poll. */
        self_pkt_t *p = tr.head;
        tr.head = tr.tail = NULL;
        while (p) {
            self_pkt_t *next = p->next;
            tr.handler(halo_world.rank, &p->hdr, p->payload, p->len);
            free(p);
            p = next;
            n++;
        }
    }
    return n;
}

int halo_tr_poll(void)
{
    int n = 0;
    if (tr.shm)
        n += halo_shm_poll();
    if (HALO_UNLIKELY(halo_sock_active()))
        n += halo_sock_poll();
    return n + halo_tr_poll_self();
}

_Atomic uint32_t *halo_tr_doorbell(void)
{
    return tr.shm ? halo_shm_doorbell() : &tr.doorbell;
}

_Atomic uint32_t *halo_tr_sleeping(void)
{
    return tr.shm ? halo_shm_sleeping() : &tr.sleeping;
}

_Atomic uint32_t *halo_tr_slept_on(void)
{
    return tr.shm ? halo_shm_slept_on() : &tr.slept_on;
}

int halo_tr_node_sleepers(void)
{
    if (tr.shm)
        return halo_shm_sleepers();
    return halo_tr_asleep(&tr.doorbell, &tr.sleeping, &tr.slept_on);
}

int halo_tr_doorbell_shared(void)
{
    return tr.shm;
}

void halo_tr_ring_self(void)
{
    _Atomic uint32_t *bell = halo_tr_doorbell();
    halo_tr_publish_fence();
    if (atomic_load_explicit(halo_tr_sleeping(), memory_order_relaxed)) {
        atomic_fetch_add(bell, 1);
        syscall(SYS_futex, (uint32_t *)bell, tr.shm ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, INT32_MAX,
                NULL, NULL, 0);
    }
}

int halo_tr_wake_targets(const int *worlds, int n, int *targets)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        int w = worlds[i];
        if (w != halo_world.rank && tr.shm && halo_world.procs[w].node == halo_world.node)
            targets[k++] = local_of(w);
    }
    return k;
}

void halo_tr_wake_targets_ring(const int *targets, int n)
{
    halo_tr_publish_fence();
    halo_shm_wake_fenced_list(targets, n);
}
