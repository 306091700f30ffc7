/* Shared-memory transport: rings and cells in one segment per node (layout
 * and channel rules in shm.h). */
#include "transport/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/config.h"
#include "core/cpu.h"
#include "pmi.h"
#include "progress/progress.h"

#define ALIGN64(x) (((x) + 63) & ~(size_t)63)
#define REC_BYTES(len) ALIGN64(sizeof(shm_rec_t) + (len))

/* Record numbers count 1, 2, ... 2^32 - 1, then 1 again: never 0, the
 * number of a cleared line, or after 2^32 records between a pair the
 * consumer would take a cleared line for the record it waits for. */
static inline uint32_t rec_next(uint32_t n)
{
    return n == UINT32_MAX ? 1 : n + 1;
}

typedef struct shm_peer {
    uint32_t send_seq;        /* next pair sequence number to send */
    uint32_t recv_seq;        /* next one expected */
    int8_t ring;              /* producer side: 0 not claimed, 1 claimed, -1 over the cap */
    uint64_t head;            /* producer: bytes written into my ring toward the peer */
    uint64_t tail_seen;       /* producer: last consumer tail read */
    uint32_t nrec;            /* producer: number of the last record written (rec_next) */
    uint64_t cleared;         /* producer: every line in [head, cleared) reads as no record */
    uint64_t ctail;           /* consumer: bytes consumed from the peer's ring to me */
    uint32_t cnrec;           /* consumer: number of the last record consumed */
    int8_t cma;               /* 0 untried, 1 works, -1 refused */
    int8_t rx_mapped;         /* consumer: the peer's ring toward me is mapped here */
    uint32_t nsent;           /* producer: packets sent before the ring was claimed */
    uint64_t reach;           /* producer: furthest end of a record in its lap (halo_shm_ring_reach) */
    struct shm_ring *tx;      /* producer: my ring toward the peer */
} shm_peer_t;

static struct {
    char *base;
    size_t size;
    int nlocal, me;
    shm_seg_t *seg;
    shm_rank_t *ranks;
    _Atomic uint64_t *bitmaps;   /* per receiver: senders holding a ring */
    shm_peer_t *peers;           /* by local rank */
    int *ring_senders;           /* consumer: local ranks with a ring toward me */
    int nring_senders;
    int ring_count_seen;         /* ring_epoch when the list was built */
    halo_pkt_handler_fn_t *handler;
    int cma_enabled;
    size_t eager_max;
    uint64_t ring_bytes, ring_mask;  /* seg->ring_bytes, and it minus one */
    size_t ring_stride;              /* bytes from one ring to the next */
    uint32_t ring_after;         /* cfg_ring_after */
    /* My free cells, most recently returned on top: a sender reuses the
     * cell it used last, whose lines and pages are warm, instead of going
     * round the whole pool. */
    uint64_t free_cells[HALO_SHM_NCELLS];
    int nfree;
} shm;

HALO_CFG_INT(cfg_cma, "HALO_CMA", 1,
             "use process_vm_readv (CMA) for single-copy rendezvous and collectives; 0 forces the "
             "push fallback and the collectives through the shared slots");
HALO_CFG_INT(cfg_ring_after, "HALO_SHM_RING_AFTER", 8,
             "packets a rank sends to a peer through its cells before it claims a ring toward "
             "that peer (rings are for pairs that talk often; each costs the receiver pages)");
HALO_CFG_INT(cfg_rec_start, "HALO_SHM_REC_START", 0,
             "number the rings' records from this value (for tests: a value near 4294967295 "
             "makes every ring's record numbers wrap within its first records)");
HALO_CFG_INT(cfg_eager, "HALO_SHM_EAGER_MAX", -1,
             "largest message sent eagerly through shared memory, in bytes; larger ones use "
             "rendezvous; -1: 2048 on Intel processors when every rank has a core and single-copy "
             "reads work, else 16384");

HALO_CFG_INT(cfg_ring_bytes, "HALO_SHM_RING_BYTES", -1,
             "bytes of each ring between two ranks (a power of two, 4096 to 16777216); -1: "
             "262144 with up to 16 ranks on the node and room for them in /dev/shm, else 16384");

/* The rings' size. A stream of small messages runs through a ring at the
 * pace of the consumer's copy; where the ring is small, the producer
 * writes lines the consumer's core has just read and still holds, and on a
 * Xeon of the Sapphire Rapids family under KVM that costs the stream most
 * of its speed: 2 KiB records between two pinned processes (the probe in
 * docs/performance.md, "Rings of 256 KiB") move 6 GB/s through rings up to
 * 160 KiB and 16 GB/s through rings from 192 KiB; Halo's 2-rank bandwidth
 * at 2 KiB 4.0 GB/s with 16 KiB or 128 KiB rings, 11 GB/s with 256 KiB.
 * A ring's pages count only once its pair has claimed it, but then the
 * whole ring is populated: with many ranks on a node, small rings keep
 * that bounded (docs/performance.md, "Resources"), and the node's first
 * rank also takes small ones where /dev/shm is short (halo_shm_create). */
size_t halo_shm_ring_bytes(int nlocal)
{
    long v = halo_cfg_get(&cfg_ring_bytes);
    if (v >= 4096 && v <= (16l << 20) && (v & (v - 1)) == 0)
        return (size_t)v;
    static bool warned;
    if (v != -1 && !warned) {
        warned = true;
        halo_warn("HALO_SHM_RING_BYTES=%ld is not a power of two from 4096 to 16777216; using the "
                  "default", v);
    }
    return nlocal <= HALO_SHM_RING_LARGE_UPTO ? HALO_SHM_RING_LARGE : HALO_SHM_RING_SMALL;
}

static size_t ring_stride(size_t ring_bytes)
{
    return sizeof(shm_ring_t) + ring_bytes;
}

static size_t seg_size_rings(int nlocal, size_t ring_bytes)
{
    size_t n = (size_t)nlocal;
    size_t words = (n + 63) / 64;
    size_t cell_stride = ALIGN64(sizeof(shm_cell_t) + HALO_SHM_CELL_PAYLOAD);
    size_t off = 4096;
    off += ALIGN64(n * sizeof(shm_rank_t));
    off += ALIGN64(n * words * sizeof(uint64_t));
    off = (off + 4095) & ~(size_t)4095;
    off += n * HALO_SHM_NCELLS * cell_stride;
    off = (off + 4095) & ~(size_t)4095;
    off += n * n * ring_stride(ring_bytes);
    return off;
}

size_t halo_shm_seg_size(int nlocal)
{
    return seg_size_rings(nlocal, halo_shm_ring_bytes(nlocal));
}

static void seg_format_rings(void *base, int nlocal, size_t ring_bytes);

void halo_shm_seg_format(void *base, int nlocal)
{
    seg_format_rings(base, nlocal, halo_shm_ring_bytes(nlocal));
}

static void seg_format_rings(void *base, int nlocal, size_t ring_bytes)
{
    size_t n = (size_t)nlocal;
    size_t words = (n + 63) / 64;
    shm_seg_t *seg = base;
    seg->nlocal = (uint32_t)nlocal;
    seg->cell_stride = (uint32_t)ALIGN64(sizeof(shm_cell_t) + HALO_SHM_CELL_PAYLOAD);
    seg->size = seg_size_rings(nlocal, ring_bytes);
    seg->ring_bytes = ring_bytes;
    size_t off = 4096;
    seg->off_ranks = off;
    off += ALIGN64(n * sizeof(shm_rank_t));
    seg->off_bitmaps = off;
    off += ALIGN64(n * words * sizeof(uint64_t));
    off = (off + 4095) & ~(size_t)4095;
    seg->off_cells = off;
    off += n * HALO_SHM_NCELLS * seg->cell_stride;
    off = (off + 4095) & ~(size_t)4095;
    seg->off_rings = off;
    atomic_store(&seg->attached, 0);
    /* The magic goes last: attachers check it. */
    atomic_thread_fence(memory_order_release);
    seg->magic = HALO_SHM_MAGIC;
}

/* ------------------------------------------------------------ queues
 *
 * Many producers, one consumer, linked by segment offsets. A producer swaps
 * itself in as the tail, then links from the previous tail (or sets the head
 * if the queue was empty). The consumer, on taking what looks like the last
 * cell, clears the head and tries to swing the tail back to empty; if a
 * producer got in between, it waits for that producer's link. */

static inline shm_cell_t *cell_at(char *base, uint64_t off)
{
    return (shm_cell_t *)(base + off);
}

void halo_shm_q_push(char *base, shm_queue_t *q, uint64_t off)
{
    atomic_store_explicit(&cell_at(base, off)->next, 0, memory_order_relaxed);
    uint64_t prev = atomic_exchange(&q->tail, off);
    if (prev == 0)
        atomic_store(&q->head, off);
    else
        atomic_store(&cell_at(base, prev)->next, off);
}

uint64_t halo_shm_q_pop(char *base, shm_queue_t *q)
{
    uint64_t h = atomic_load(&q->head);
    if (h == 0)
        return 0;
    shm_cell_t *c = cell_at(base, h);
    uint64_t nx = atomic_load(&c->next);
    if (nx) {
        atomic_store(&q->head, nx);
        return h;
    }
    atomic_store(&q->head, 0);
    uint64_t expect = h;
    if (atomic_compare_exchange_strong(&q->tail, &expect, 0))
        return h;
    /* A producer swapped the tail after h and is about to link it. */
    for (int spins = 0; (nx = atomic_load(&c->next)) == 0; spins++) {
        if (spins > 64)
            sched_yield();
    }
    atomic_store(&q->head, nx);
    return h;
}

/* ------------------------------------------------------------ helpers */

static inline shm_ring_t *ring_of(int sender, int receiver)
{
    return (shm_ring_t *)(shm.base + shm.seg->off_rings +
                          ((size_t)sender * (size_t)shm.nlocal + (size_t)receiver) * shm.ring_stride);
}

static inline uint64_t cell_off(int owner, int i)
{
    return shm.seg->off_cells + ((size_t)owner * HALO_SHM_NCELLS + (size_t)i) * shm.seg->cell_stride;
}

static void futex_wake_all(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* After publishing a packet: wake the receiver if it announced that it
 * sleeps. The fence pairs with the waiter's (progress.c): either it sees
 * our packet, or we see its flag. It is the publisher's fence of
 * transport.h, only a compiler barrier where membarrier allows: a full
 * fence waits for the record's line to reach this core before the next
 * send may start, which serialises a window of small sends on the line's
 * trip between the cores. */
static inline void ring_doorbell(int peer)
{
    shm_rank_t *r = &shm.ranks[peer];
    halo_tr_publish_fence();
    if (atomic_load_explicit(&r->sleeping, memory_order_relaxed)) {
        atomic_fetch_add(&r->doorbell, 1);
        futex_wake_all(&r->doorbell);
    }
}

/* Wakes those of the local ranks that sleep; the caller has fenced after
 * its store (one fence for the whole list). */
void halo_shm_wake_fenced_list(const int *peers, int n)
{
    for (int i = 0; i < n; i++) {
        shm_rank_t *r = &shm.ranks[peers[i]];
        if (atomic_load_explicit(&r->sleeping, memory_order_relaxed)) {
            atomic_fetch_add(&r->doorbell, 1);
            futex_wake_all(&r->doorbell);
        }
    }
}

/* ------------------------------------------------------------ init */

static void seg_name(char *name, size_t n)
{
    char node[32];
    snprintf(node, sizeof node, "n%d", halo_world.node);
    halo_shm_name(name, n, halo_world.kvsname, node);
}

int halo_shm_fd_trusted(int fd, char *why, size_t n)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(why, n, "fstat: %s", strerror(errno));
        return -1;
    }
    if (st.st_uid != geteuid()) {
        snprintf(why, n, "it belongs to uid %u, not to this job's uid %u", (unsigned)st.st_uid,
                 (unsigned)geteuid());
        return -1;
    }
    if (st.st_mode & 077) {
        snprintf(why, n, "its mode is %03o: others may read or write it (Halo's are 600)",
                 (unsigned)(st.st_mode & 0777));
        return -1;
    }
    return 0;
}

/* Step 1, on the node's first rank, before the job-wide fence: create and
 * size the segment (mode 0600: only this user's processes get in). */
int halo_shm_create(void)
{
    char name[300];
    seg_name(name, sizeof name);
    /* Large rings only where /dev/shm could hold the segment twice over
     * were every page of it touched (a container's 64 MiB /dev/shm and 16
     * ranks: 80 MiB), so that heavy traffic cannot run the file system
     * out of pages under the ranks' feet; the other ranks take the size
     * from the segment. */
    int nlocal = halo_world.local_size;
    size_t ring_bytes = halo_shm_ring_bytes(nlocal);
    struct statvfs sv;
    if (ring_bytes > HALO_SHM_RING_SMALL && halo_cfg_get(&cfg_ring_bytes) == -1 && statvfs(HALO_SHM_DIR, &sv) == 0 &&
        (uint64_t)sv.f_bavail * (uint64_t)sv.f_frsize / 2 < (uint64_t)seg_size_rings(nlocal, ring_bytes))
        ring_bytes = HALO_SHM_RING_SMALL;
    size_t size = seg_size_rings(nlocal, ring_bytes);
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* Left over by a crashed job of the same name: replace it. */
        shm_unlink(name);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0) {
        halo_warn("cannot create shared memory segment /dev/shm%s: %s", name, strerror(errno));
        return -1;
    }
    if (ftruncate(fd, (off_t)size) != 0) {
        halo_warn("cannot size shared memory segment /dev/shm%s to %zu bytes: %s", name, size,
                  strerror(errno));
        close(fd);
        shm_unlink(name);
        return -1;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        halo_warn("cannot map shared memory segment of %zu bytes: %s", size, strerror(errno));
        shm_unlink(name);
        return -1;
    }
    seg_format_rings(p, nlocal, ring_bytes);
    shm.base = p;
    shm.size = size;
    return 0;
}

/* Step 2, on every rank of the node, after the fence: attach. */
static int seg_attach(void)
{
    char name[300];
    seg_name(name, sizeof name);
    if (!shm.base) {
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0) {
            halo_warn("cannot open shared memory segment /dev/shm%s: %s", name, strerror(errno));
            return -1;
        }
        char why[160];
        if (halo_shm_fd_trusted(fd, why, sizeof why) != 0)
            halo_fatal("refusing shared memory segment /dev/shm%s: %s", name, why);
        /* Its size as the node's first rank made it (the rings' size is
         * that rank's choice). */
        struct stat st;
        if (fstat(fd, &st) != 0) {
            halo_warn("cannot size shared memory segment /dev/shm%s: %s", name, strerror(errno));
            close(fd);
            return -1;
        }
        if (st.st_size < 4096) {
            halo_warn("shared memory segment /dev/shm%s is too small (%lld bytes)", name, (long long)st.st_size);
            close(fd);
            return -1;
        }
        size_t size = (size_t)st.st_size;
        void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED) {
            halo_warn("cannot map shared memory segment of %zu bytes: %s", size, strerror(errno));
            return -1;
        }
        shm.base = p;
        shm.size = size;
        if (((shm_seg_t *)p)->magic != HALO_SHM_MAGIC) {
            halo_warn("shared memory segment /dev/shm%s is not formatted", name);
            return -1;
        }
    }
    shm.seg = (shm_seg_t *)shm.base;
    uint64_t rb = shm.seg->ring_bytes;
    if (shm.seg->size != shm.size || shm.seg->nlocal != (uint32_t)shm.nlocal || rb < 4096 || (rb & (rb - 1)) ||
        seg_size_rings(shm.nlocal, rb) != shm.size) {
        halo_warn("shared memory segment /dev/shm%s: laid out for %u ranks and %llu bytes, not for this "
                  "node's %d ranks", name, shm.seg->nlocal, (unsigned long long)shm.seg->size, shm.nlocal);
        return -1;
    }
    shm.ring_bytes = shm.seg->ring_bytes;
    shm.ring_mask = shm.ring_bytes - 1;
    shm.ring_stride = ring_stride(shm.ring_bytes);
    /* The last rank to attach removes the name: from then on nothing can be
     * left behind in /dev/shm, whatever happens to the job. */
    if (atomic_fetch_add(&shm.seg->attached, 1) + 1 == (uint32_t)shm.nlocal)
        shm_unlink(name);
    return 0;
}

static const uint64_t cma_probe = 0x48616c6f434d4121ull;

/* Whether this rank can count on single-copy access to its node's ranks,
 * from the configuration, the kernel's ptrace policy and the system call
 * filter. Yama's ptrace_scope 1 allows it only towards processes that
 * declare a tracer: every rank declares the process that started it (our
 * mpiexec, Hydra's proxy, slurmstepd), which Yama lets in together with
 * all its descendants, the job's other ranks on this node; never any
 * process (PR_SET_PTRACER_ANY), and nothing for an orphan, whose parent is
 * init, the ancestor of every process. A read from this process itself
 * finds a kernel without the call or a filter that refuses it; whether
 * the declaration covers the other ranks, cma_verdict checks. */
static int cma_rank_check(void)
{
    if (!halo_cfg_get(&cfg_cma))
        return 0;
    int scope = 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1)
            scope = 0;
        fclose(f);
    }
    if (scope >= 2)
        return 0;
    if (scope == 1) {
        pid_t launcher = getppid();
        if (launcher <= 1 || prctl(PR_SET_PTRACER, (unsigned long)launcher, 0, 0, 0) != 0)
            return 0;
    }
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)&cma_probe, sizeof cma_probe};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof got && got == cma_probe;
}

/* This rank's verdict for the node (halo_shm_cma_node): its own check, and
 * a read of its neighbour's probe word, which finds a peer outside the
 * reach of our declaration (a rank started through a wrapper process of
 * its own, under Yama) or a filter that refuses other processes only. The
 * neighbour publishes its probe right after attaching, whatever its own
 * verdict, so the wait ends. */
static int cma_verdict(int mine)
{
    if (!mine || shm.nlocal < 2)
        return mine;
    const shm_rank_t *nb = &shm.ranks[(shm.me + 1) % shm.nlocal];
    while (!atomic_load_explicit(&nb->probe_set, memory_order_acquire))
        sched_yield();
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)nb->probe, sizeof got};
    return process_vm_readv(nb->pid, &l, 1, &r, 1, 0) == (ssize_t)sizeof got && got == cma_probe;
}

static int cma_rank(void)
{
    static int known = -1;
    if (known < 0)
        known = cma_rank_check();
    return known;
}

/* Whether single-copy access holds between all of this node's ranks, so
 * that the collectives that read and write other members' buffers
 * (HALO_ALG_CMA) are chosen alike everywhere, even where one rank runs
 * with another HALO_CMA or under a filter of its own: the conjunction of
 * every rank's verdict, which each writes into its line of the segment
 * right after attaching it (1 no, 2 yes). Every rank of the node is past
 * the launcher's fence by then, so a verdict not written yet is about to
 * be. Without a segment (a rank alone on its node) its own verdict. */
int halo_shm_cma_node(void)
{
    static int node = -1;
    if (node >= 0)
        return node;
    int v = cma_rank();
    if (!shm.ranks)
        return v;
    for (int r = 0; r < shm.nlocal && v; r++) {
        int32_t x;
        while ((x = atomic_load_explicit(&shm.ranks[r].cma, memory_order_acquire)) == 0)
            sched_yield();
        v = x == 2;
    }
    node = v;
    return node;
}

/* The eager limit unless HALO_SHM_EAGER_MAX says. An eager message is
 * copied twice, into a cell and out of it on the other core; a rendezvous
 * is copied once, by the receiver from the sender's buffer, after a round
 * trip of control packets. Where a line just written by one core is slow
 * to read from another (64 ns on a Xeon of the Sapphire Rapids family
 * under KVM, against 30 on an AMD EPYC), the second copy of an eager
 * message costs more than the round trip from 2 KiB (one way, 2 ranks:
 * 4 KiB 1.31-1.67 us eager against 0.94-0.99, 8 KiB 2.1-2.2 against
 * 1.0-1.1, 16 KiB 3.5-3.7 against 1.6; bandwidth at 8 and 16 KiB 1.3 and
 * 1.5 times as high), so eager packets stop at the ring's records there.
 * With more ranks than cores a rendezvous waits for the receiver to be
 * scheduled before the sender can go on (multi-pair latency at 4 ranks,
 * 4-16 KiB: 1.5-1.9 times as long), and without single-copy reads it
 * pushes through the same cells after a round trip: eager up to 16 KiB
 * then, and on other processors (docs/performance.md). */
static size_t eager_default(int cma)
{
    if (cma && !halo_progress_oversubscribed() && halo_cpu() == HALO_CPU_INTEL)
        return HALO_SHM_RING_MAX;
    return 16384;
}

/* The one CPU this process may run on (mpiexec binds by default), or -1. */
static int32_t bound_cpu(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) != 1)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            return c;
    return -1;
}

int halo_shm_init(halo_pkt_handler_fn_t *handler)
{
    shm.handler = handler;
    shm.nlocal = halo_world.local_size;
    shm.me = halo_world.local_rank;
    shm.cma_enabled = (int)halo_cfg_get(&cfg_cma);
    int cma = cma_rank();   /* also declares this rank traceable where Yama asks for it */
    long after = halo_cfg_get(&cfg_ring_after);
    shm.ring_after = after < 0 ? 0 : (uint32_t)after;
    if (seg_attach() != 0)
        return -1;
    shm.ranks = (shm_rank_t *)(shm.base + shm.seg->off_ranks);
    shm_rank_t *mine = &shm.ranks[shm.me];
    mine->pid = (int32_t)getpid();
    mine->cpu = bound_cpu();
    mine->probe = (uint64_t)(uintptr_t)&cma_probe;
    atomic_store_explicit(&mine->probe_set, 1, memory_order_release);
    cma = cma_verdict(cma);
    atomic_store_explicit(&mine->cma, cma ? 2 : 1, memory_order_release);
    long eager = halo_cfg_get(&cfg_eager);
    shm.eager_max = eager >= 0 ? (size_t)eager : eager_default(cma);
    if (shm.eager_max > HALO_SHM_CELL_PAYLOAD)
        shm.eager_max = HALO_SHM_CELL_PAYLOAD;
    shm.bitmaps = (_Atomic uint64_t *)(shm.base + shm.seg->off_bitmaps);
    shm.peers = halo_calloc((size_t)shm.nlocal, sizeof *shm.peers);
    long start = halo_cfg_get(&cfg_rec_start);
    uint32_t rec_start = start > 0 && start < (long)UINT32_MAX ? (uint32_t)start : 0;
    for (int i = 0; i < shm.nlocal; i++) {
        shm.peers[i].tx = ring_of(shm.me, i);
        shm.peers[i].cleared = shm.ring_bytes;  /* the ring's pages start zero */
        shm.peers[i].nrec = shm.peers[i].cnrec = rec_start;
    }
    shm.ring_senders = halo_calloc((size_t)shm.nlocal, sizeof(int));
    /* Cells are not touched before their first use (their owner is set
     * then): writing each at start cost every rank a page per cell, 128 KiB
     * of shared memory whether it ever sent a large message or not. */
    for (int i = HALO_SHM_NCELLS - 1; i >= 0; i--)
        shm.free_cells[shm.nfree++] = cell_off(shm.me, i);
    return 0;
}

void halo_shm_finalize(void)
{
    if (shm.base)
        munmap(shm.base, shm.size);
    free(shm.peers);
    free(shm.ring_senders);
    memset(&shm, 0, sizeof shm);
}

int halo_shm_active(void)
{
    return shm.base != NULL;
}

int halo_shm_shares_cpu(int local_rank)
{
    if (!shm.base || local_rank < 0 || local_rank >= shm.nlocal || local_rank == shm.me)
        return 0;
    const shm_rank_t *r = &shm.ranks[local_rank];
    int32_t mine = shm.ranks[shm.me].cpu;
    return mine >= 0 && atomic_load_explicit(&r->probe_set, memory_order_acquire) && r->cpu == mine;
}

int halo_shm_bound_cpu(int local_rank)
{
    if (!shm.base || local_rank < 0 || local_rank >= shm.nlocal)
        return -1;
    const shm_rank_t *r = &shm.ranks[local_rank];
    /* It publishes its CPU while it attaches, before its MPI_Init returns
     * (a rank met in a collective gets there soon). */
    while (!atomic_load_explicit(&r->probe_set, memory_order_acquire))
        sched_yield();
    return r->cpu;
}

int halo_shm_node_bound(void)
{
    static int bound = -1;
    if (bound >= 0)
        return bound;
    if (!shm.base)
        return 0;
    bound = 1;
    for (int r = 0; r < shm.nlocal && bound; r++)
        bound = halo_shm_bound_cpu(r) >= 0;
    return bound;
}

int32_t halo_shm_pid(int local_rank)
{
    if (!shm.base || local_rank < 0 || local_rank >= shm.nlocal)
        return 0;
    shm_rank_t *r = &shm.ranks[local_rank];
    return atomic_load_explicit(&r->probe_set, memory_order_acquire) ? r->pid : 0;
}

size_t halo_shm_eager_max(void)
{
    return shm.eager_max;
}

_Atomic uint32_t *halo_shm_doorbell(void)
{
    return &shm.ranks[shm.me].doorbell;
}

_Atomic uint32_t *halo_shm_sleeping(void)
{
    return &shm.ranks[shm.me].sleeping;
}

_Atomic uint32_t *halo_shm_slept_on(void)
{
    return &shm.ranks[shm.me].slept_on;
}

/* The node's ranks asleep on their doorbells (halo_tr_asleep). */
int halo_shm_sleepers(void)
{
    int n = 0;
    for (int r = 0; shm.ranks && r < shm.nlocal; r++)
        n += halo_tr_asleep(&shm.ranks[r].doorbell, &shm.ranks[r].sleeping, &shm.ranks[r].slept_on);
    return n;
}

/* ------------------------------------------------------------ send */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Maps the pages of a ring into this process at once, before its first
 * record: one call instead of a page fault per page in the middle of the
 * traffic. On this project's VM a fresh page costs 3-5 us either way, but
 * a fault taken while the peer waits for the record stalls both ranks:
 * the first laps of an 8-byte stream took 15-27 us a window of 64
 * messages instead of 3.5. Write for the sender, read for the receiver; a
 * kernel without the advice (before 5.14) refuses it and the pages fault
 * in on use as before. */
static void ring_populate(shm_ring_t *ring, int write)
{
    /* madvise wants a range that starts on a page of the system's size
     * (64 KiB on some ARM kernels: a 4 KiB rounding would be refused). */
    long sz = sysconf(_SC_PAGESIZE);
    const uintptr_t pg = sz > 0 ? (uintptr_t)sz : 4096;
    uintptr_t a = (uintptr_t)ring & ~(pg - 1);
    uintptr_t e = ((uintptr_t)ring + shm.ring_stride + pg - 1) & ~(pg - 1);
    (void)madvise((void *)a, e - a, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
}

/* Whether this rank sends to peer through a ring; claims one when it has
 * sent enough packets through cells (ring_claim_new, out of line: the
 * path of every small message only reads p->ring). */
static __attribute__((noinline)) int ring_claim_new(int peer)
{
    shm_peer_t *p = &shm.peers[peer];
    if (p->nsent < shm.ring_after) {
        p->nsent++;
        return 0;
    }
    shm_rank_t *r = &shm.ranks[peer];
    if (atomic_fetch_add(&r->nrings, 1) >= HALO_SHM_RING_CAP) {
        atomic_fetch_sub(&r->nrings, 1);
        p->ring = -1;
        return 0;
    }
    ring_populate(p->tx, 1);
    /* The ring's first record slot must read as empty; the pages are fresh
     * (zero) unless a previous job of this node used them, which cannot
     * happen since the segment is new. Publish the ring to the receiver. */
    size_t words = ((size_t)shm.nlocal + 63) / 64;
    atomic_fetch_or(&shm.bitmaps[(size_t)peer * words + (size_t)shm.me / 64], 1ull << (shm.me % 64));
    atomic_fetch_add_explicit(&r->ring_epoch, 1, memory_order_release);
    p->ring = 1;
    return 1;
}

static inline int ring_claim(int peer)
{
    int8_t ring = shm.peers[peer].ring;
    return ring ? ring > 0 : ring_claim_new(peer);
}

/* Marks the lines of the ring at positions [p->cleared, upto) as holding
 * no record (their record number 0), so that stale bytes of an earlier lap
 * cannot look like the next record to the consumer. */
static void ring_clear(shm_peer_t *p, uint64_t upto)
{
    for (uint64_t x = p->cleared; x < upto; x += HALO_CACHELINE)
        atomic_store_explicit(&((shm_rec_t *)(p->tx->data + (x & shm.ring_mask)))->rseq, 0,
                              memory_order_relaxed);
    if (upto > p->cleared)
        p->cleared = upto;
}

/* Whether the consumer has taken every record of the ring. */
static inline bool ring_drained(shm_peer_t *p, shm_ring_t *ring)
{
    if (p->tail_seen == p->head)
        return true;
    p->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
    return p->tail_seen == p->head;
}

/* How far past its last record the producer keeps the ring cleared. */
#define RING_CLEAR_AHEAD 1024

static int ring_send(int peer, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                     halo_pkt_fill_fn_t *fill, void *arg)
{
    shm_peer_t *p = &shm.peers[peer];
    shm_ring_t *ring = p->tx;
    const uint64_t rb = shm.ring_bytes;
    size_t need = REC_BYTES(len);
    uint64_t pos = p->head & (rb - 1);
    size_t skip = 0;
    if (pos + need > rb) {
        skip = (size_t)(rb - pos);
    } else if (((pos ^ (pos + need)) & ~(uint64_t)(HALO_SHM_RING_LAP - 1)) && rb > HALO_SHM_RING_LAP &&
               ring_drained(p, ring)) {
        /* Crossing into the next HALO_SHM_RING_LAP bytes with every record
         * consumed: start again from the ring's start. Lines of the rest
         * of this lap are never read now, and the next lap clears them
         * before its records get there. */
        skip = (size_t)(rb - pos);
        if (p->cleared < p->head + skip)
            p->cleared = p->head + skip;
    }
    /* Room for the skip, the record, and the line after it, which must
     * read as empty when the record is published (the consumer looks
     * there next). */
    uint64_t end = p->head + skip + need;
    uint64_t want = end + HALO_CACHELINE;
    if (want - p->tail_seen > rb) {
        p->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
        if (want - p->tail_seen > rb)
            return HALO_TR_AGAIN;
    }
    /* Normally the line after the record was cleared by an earlier send,
     * after its publication: a store to a line the consumer has read
     * waits for the consumer's core to give the line up, and ahead of the
     * publication it would hold the record back by that trip. */
    if (p->cleared < want)
        ring_clear(p, want);
    if (skip) {
        shm_rec_t *s = (shm_rec_t *)(ring->data + pos);
        s->kind = SHM_REC_SKIP;
        p->nrec = rec_next(p->nrec);
        atomic_store_explicit(&s->rseq, p->nrec, memory_order_release);
        p->head += skip;
        pos = 0;
    }
    shm_rec_t *rec = (shm_rec_t *)(ring->data + pos);
    if (pos + need > p->reach)
        p->reach = pos + need;
    /* The record's first line last, its stores together: the consumer
     * polls that line, and a look of its between two stores there costs
     * the line two more trips between the cores (2-rank latency at 512 B
     * to 2 KiB 0.81-0.87 of header-first, 11 interleaved rounds). */
    const size_t in_first = HALO_CACHELINE - sizeof *rec;
    if (len) {
        if (fill) {
            fill(arg, rec + 1, len);
        } else if (len > in_first) {
            halo_copy((char *)(rec + 1) + in_first, (const char *)payload + in_first, len - in_first);
            halo_copy_lt64(rec + 1, payload, in_first);
        } else {
            halo_copy_lt64(rec + 1, payload, len);
        }
    }
    rec->len = (uint32_t)len;
    rec->seq = p->send_seq++;
    rec->kind = SHM_REC_PKT;
    rec->hdr = *hdr;
    p->nrec = rec_next(p->nrec);
    atomic_store_explicit(&rec->rseq, p->nrec, memory_order_release);
    p->head = end;
    /* Clear ahead for the sends to come, off their path; only lines the
     * consumer has finished with (below its tail plus one lap). */
    uint64_t ahead = end + RING_CLEAR_AHEAD;
    if (p->cleared < ahead) {
        if (ahead - p->tail_seen > rb)
            p->tail_seen = atomic_load_explicit(&ring->tail, memory_order_acquire);
        ring_clear(p, ahead - p->tail_seen > rb ? p->tail_seen + rb : ahead);
    }
    return HALO_TR_OK;
}

static __attribute__((noinline)) int cell_send(int peer, const halo_pkt_hdr_t *hdr, const void *payload,
                                               size_t len, halo_pkt_fill_fn_t *fill, void *arg)
{
    shm_rank_t *mine = &shm.ranks[shm.me];
    /* Cells handed back since the last send go on top of the stack (the
     * queue gives them oldest first). */
    while (atomic_load_explicit(&mine->freeq.head, memory_order_acquire) != 0) {
        uint64_t back = halo_shm_q_pop(shm.base, &mine->freeq);
        if (!back)
            break;
        shm.free_cells[shm.nfree++] = back;
    }
    if (shm.nfree == 0)
        return HALO_TR_AGAIN;
    uint64_t off = shm.free_cells[--shm.nfree];
    shm_cell_t *c = cell_at(shm.base, off);
    c->owner = shm.me;
    c->src = shm.me;
    c->seq = shm.peers[peer].send_seq++;
    c->len = (uint32_t)len;
    c->hdr = *hdr;
    if (len) {
        if (fill)
            fill(arg, c->payload, len);
        else
            memcpy(c->payload, payload, len);
    }
    halo_shm_q_push(shm.base, &shm.ranks[peer].recvq, off);
    return HALO_TR_OK;
}

/* For the tests: how far into its ring toward local_rank this rank has
 * written records since the last call (bytes from the ring's start; -1:
 * no ring claimed toward it), and the ring's size. */
long long halo_shm_ring_reach(int local_rank, long long *ring_bytes)
{
    *ring_bytes = (long long)shm.ring_bytes;
    shm_peer_t *p = &shm.peers[local_rank];
    if (p->ring <= 0)
        return -1;
    long long r = (long long)p->reach;
    p->reach = 0;
    return r;
}

size_t halo_shm_max_payload(void)
{
    return HALO_SHM_CELL_PAYLOAD;
}

int halo_shm_send(int peer, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                  halo_pkt_fill_fn_t *fill, void *arg)
{
    int rc = HALO_TR_AGAIN;
    if (len <= HALO_SHM_RING_MAX && ring_claim(peer))
        rc = ring_send(peer, hdr, payload, len, fill, arg);
    if (rc != HALO_TR_OK)
        rc = cell_send(peer, hdr, payload, len, fill, arg);
    if (rc == HALO_TR_OK)
        ring_doorbell(peer);
    return rc;
}

/* ------------------------------------------------------------ receive */

static void refresh_ring_senders(void)
{
    size_t words = ((size_t)shm.nlocal + 63) / 64;
    int n = 0;
    for (size_t w = 0; w < words; w++) {
        uint64_t bits = atomic_load(&shm.bitmaps[(size_t)shm.me * words + w]);
        while (bits) {
            int b = __builtin_ctzll(bits);
            bits &= bits - 1;
            int peer = (int)(w * 64) + b;
            shm.ring_senders[n++] = peer;
            if (!shm.peers[peer].rx_mapped) {
                ring_populate(ring_of(peer, shm.me), 0);
                shm.peers[peer].rx_mapped = 1;
            }
        }
    }
    shm.nring_senders = n;
}

static int has_ring_from(int peer)
{
    size_t words = ((size_t)shm.nlocal + 63) / 64;
    uint64_t w = atomic_load_explicit(&shm.bitmaps[(size_t)shm.me * words + (size_t)peer / 64],
                                      memory_order_acquire);
    return (w >> (peer % 64)) & 1;
}

/* Handles the peer's ring records in order, up to (not including) the
 * first whose pair sequence number is not the next expected one: that
 * message is then still in the cell queue. */
static int drain_ring(int peer, uint32_t stop_seq, int bounded)
{
    shm_peer_t *p = &shm.peers[peer];
    shm_ring_t *ring = ring_of(peer, shm.me);
    const uint64_t rb = shm.ring_bytes;
    int n = 0;
    for (;;) {
        if (bounded && p->recv_seq == stop_seq)
            break;
        shm_rec_t *rec = (shm_rec_t *)(ring->data + (p->ctail & (rb - 1)));
        if (atomic_load_explicit(&rec->rseq, memory_order_acquire) != rec_next(p->cnrec))
            break;
        if (rec->kind == SHM_REC_SKIP) {
            p->ctail += rb - (p->ctail & (rb - 1));
            p->cnrec = rec_next(p->cnrec);
            atomic_store_explicit(&ring->tail, p->ctail, memory_order_release);
            continue;
        }
        if (rec->seq != p->recv_seq)
            break;
        /* The payload's lines beyond the first come from the sender's
         * cache: ask for them now, so that they cross while the packet
         * is matched. */
        for (size_t o = HALO_CACHELINE; o < sizeof *rec + rec->len; o += HALO_CACHELINE)
            __builtin_prefetch((const char *)rec + o, 0, 3);
        p->recv_seq++;
        shm.handler(halo_world.local_ranks[peer], &rec->hdr, rec + 1, rec->len);
        p->ctail += REC_BYTES(rec->len);
        p->cnrec = rec_next(p->cnrec);
        atomic_store_explicit(&ring->tail, p->ctail, memory_order_release);
        n++;
    }
    return n;
}

int halo_shm_poll(void)
{
    shm_rank_t *mine = &shm.ranks[shm.me];
    int n = 0;
    int epoch = atomic_load_explicit(&mine->ring_epoch, memory_order_acquire);
    if (epoch != shm.ring_count_seen) {
        shm.ring_count_seen = epoch;
        refresh_ring_senders();
    }
    for (int i = 0; i < shm.nring_senders; i++)
        n += drain_ring(shm.ring_senders[i], 0, 0);
    for (;;) {
        if (atomic_load_explicit(&mine->recvq.head, memory_order_acquire) == 0)
            break;
        uint64_t off = halo_shm_q_pop(shm.base, &mine->recvq);
        if (!off)
            break;
        shm_cell_t *c = cell_at(shm.base, off);
        shm_peer_t *p = &shm.peers[c->src];
        if (c->seq != p->recv_seq) {
            /* Earlier messages of this sender went through its ring; they
             * are visible, since the sender wrote them before this cell. */
            if (has_ring_from(c->src))
                n += drain_ring(c->src, c->seq, 1);
            if (c->seq != p->recv_seq)
                halo_fatal("shared memory: message from local rank %d out of order (seq %u, expected %u)",
                           c->src, c->seq, p->recv_seq);
        }
        p->recv_seq++;
        shm.handler(halo_world.local_ranks[c->src], &c->hdr, c->payload, c->len);
        int owner = c->owner;
        halo_shm_q_push(shm.base, &shm.ranks[owner].freeq, off);
        /* The owner may sleep waiting for a free cell (a long push). */
        if (owner != shm.me)
            ring_doorbell(owner);
        n++;
        /* Records of this sender queued behind the cell may follow at once. */
        if (has_ring_from(c->src))
            n += drain_ring(c->src, 0, 0);
    }
    return n;
}

/* ------------------------------------------------------------ CMA */

/* A failed first single-copy call that means "not allowed here" (ptrace
 * rules, seccomp, no CMA in the kernel) rather than a fault: the peer is
 * then marked and its data pushed instead. */
static bool cma_refused(shm_peer_t *p, int err)
{
    if (err != EPERM && err != ENOSYS && err != EACCES)
        return false;
    p->cma = -1;
    return true;
}

/* Moves `len` bytes between the local iovecs and the peer's contiguous
 * range at raddr, with process_vm_readv (write = 0) or process_vm_writev. */
static int cma_move(int peer, const struct iovec *local, int nlocal, uint64_t raddr, size_t len, int write)
{
    shm_peer_t *p = &shm.peers[peer];
    if (!shm.cma_enabled || p->cma < 0)
        return -1;
    pid_t pid = shm.ranks[peer].pid;
    struct iovec liov[64];
    int li = 0;
    size_t lskip = 0, done = 0;
    while (done < len) {
        /* Up to 64 local iovecs from where we are. */
        int n = 0;
        size_t batch = 0;
        for (int i = li; i < nlocal && n < 64 && done + batch < len; i++) {
            size_t skip = (i == li) ? lskip : 0;
            size_t l = local[i].iov_len - skip;
            if (l > len - done - batch)
                l = len - done - batch;
            liov[n].iov_base = (char *)local[i].iov_base + skip;
            liov[n].iov_len = l;
            batch += l;
            n++;
        }
        struct iovec riov = {(void *)(uintptr_t)(raddr + done), batch};
        ssize_t got = write ? process_vm_writev(pid, liov, (unsigned long)n, &riov, 1, 0)
                            : process_vm_readv(pid, liov, (unsigned long)n, &riov, 1, 0);
        if (got <= 0) {
            if (done == 0 && cma_refused(p, errno))
                return -1;
            halo_fatal("%s to local rank %d (pid %d) failed after %zu of %zu bytes: %s",
                       write ? "process_vm_writev" : "process_vm_readv", peer, (int)pid, done, len,
                       strerror(errno));
        }
        p->cma = 1;
        done += (size_t)got;
        size_t adv = (size_t)got;
        while (adv > 0 && li < nlocal) {
            size_t avail = local[li].iov_len - lskip;
            if (adv < avail) {
                lskip += adv;
                adv = 0;
            } else {
                adv -= avail;
                li++;
                lskip = 0;
            }
        }
    }
    return 0;
}

/* process_vm_readv or writev between local and remote runs of equal
 * total length: 0, or -1 when the peer's memory may not be reached. */
static int cma_movev(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote,
                     int write)
{
    shm_peer_t *p = &shm.peers[peer];
    if (!shm.cma_enabled || p->cma < 0)
        return -1;
    size_t len = 0;
    for (int i = 0; i < nlocal; i++)
        len += local[i].iov_len;
    pid_t pid = shm.ranks[peer].pid;
    ssize_t got = write ? process_vm_writev(pid, local, (unsigned long)nlocal, remote, (unsigned long)nremote, 0)
                        : process_vm_readv(pid, local, (unsigned long)nlocal, remote, (unsigned long)nremote, 0);
    if (got < 0 && cma_refused(p, errno))
        return -1;
    if (got < 0 || (size_t)got != len)
        halo_fatal("%s of %d runs %s local rank %d (pid %d) moved %zd of %zu bytes: %s",
                   write ? "process_vm_writev" : "process_vm_readv", nremote, write ? "to" : "from", peer,
                   (int)pid, got, len, got < 0 ? strerror(errno) : "short");
    p->cma = 1;
    return 0;
}

int halo_shm_readv(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    return cma_movev(peer, local, nlocal, remote, nremote, 0);
}

int halo_shm_writev(int peer, const struct iovec *local, int nlocal, const struct iovec *remote, int nremote)
{
    return cma_movev(peer, local, nlocal, remote, nremote, 1);
}

int halo_shm_read(int peer, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    return cma_move(peer, local, nlocal, raddr, len, 0);
}

int halo_shm_write(int peer, const struct iovec *local, int nlocal, uint64_t raddr, size_t len)
{
    return cma_move(peer, local, nlocal, raddr, len, 1);
}

int halo_shm_cma_ok(int peer)
{
    return shm.cma_enabled && shm.peers[peer].cma > 0;
}
