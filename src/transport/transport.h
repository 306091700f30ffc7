/* The contract between point-to-point and the byte movers.
 *
 * A transport moves packets (a fixed header plus a payload) between
 * processes, in order per (sender, receiver) pair, and gives the receiver
 * single-copy access to a sender's memory for rendezvous. Matching stays
 * above, in pt2pt, so MPI_ANY_SOURCE needs nothing from a transport.
 *
 * Transports: self (packets to this process), shm (processes of this node).
 * The network transport (UCX) will implement the same contract.
 *
 * A lower layer calls up only through the handler it was given at init. */
#ifndef HALO_TRANSPORT_TRANSPORT_H
#define HALO_TRANSPORT_TRANSPORT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sys/uio.h>

#include "core/halo.h"

enum halo_pkt_type {
    HALO_PKT_EAGER = 1,   /* a whole message in the payload */
    HALO_PKT_RTS,         /* rendezvous request: data stays at the sender (aux = address) */
    HALO_PKT_ACK,         /* synchronous send matched (sreq names the send) */
    HALO_PKT_FIN,         /* rendezvous data read, sender buffer released */
    HALO_PKT_CTS,         /* receiver cannot read sender memory: push the data (aux = receiver token) */
    HALO_PKT_DATA,        /* a pushed chunk (aux = receiver token, sreq = offset) */
    HALO_PKT_SPLIT,       /* receiver reads the first part; asks the sender to write the rest
                           * (payload: halo_split_t) */
    HALO_PKT_WDONE,       /* sender wrote its part (aux = receiver token) */
    HALO_PKT_COLL_ERR,    /* the sender's collective (ctx, tag) failed (aux = its error class) */
    HALO_PKT_CANCEL,      /* drop the message of send sreq if still unmatched (aux = its context) */
    HALO_PKT_CANCEL_ANS,  /* answer to CANCEL (sreq as asked; aux = 1 when it was dropped) */
    HALO_PKT_RMA_WRITE,   /* one-sided, without single-copy access: write the payload's data
                           * into the runs it lists (bytes = number of runs; sreq = origin's
                           * token) */
    HALO_PKT_RMA_READ,    /* the same, reading: answer with the runs' bytes (aux = their packed
                           * offset at the origin) */
    HALO_PKT_RMA_ANS,     /* answer to RMA_WRITE and RMA_READ (sreq, aux as asked; READ: the data) */
};

/* Payload of HALO_PKT_SPLIT: the sender writes bytes [off, end) of the
 * message to the receiver's address raddr (which holds byte off). */
typedef struct halo_split {
    uint64_t raddr;
    uint64_t off, end;
    uint64_t rtoken;
} halo_split_t;

enum {
    HALO_PKT_F_SYNC = 1,  /* synchronous mode: acknowledge the match */
    HALO_PKT_F_PUSH = 2,  /* RTS of data in short runs at the sender (aux = 0): the
                           * receiver answers CTS and the sender packs it into DATA */
    HALO_PKT_F_RUNS = 4,  /* RTS of data in a few long runs at the sender: the payload
                           * lists them (struct iovec each, in packed order, aux = 0) */
};
/* RTS, bits 3-7 of the flags: k mod 32 when the sender posted this message
 * while k earlier rendezvous sends of the same range were still being read
 * (a linear Bcast's root); the receiver then starts its read elsewhere in
 * the range than the others do (pt2pt/protocol.c, rdv_first_byte). */
#define HALO_PKT_READER_SHIFT 3
#define HALO_PKT_READER_MAX 31

typedef struct halo_pkt_hdr {
    uint8_t type;
    uint8_t flags;
    uint16_t spare;
    uint32_t ctx;        /* context id (with its sub-context bits) */
    int32_t src;         /* sender's rank in the communicator */
    int32_t tag;
    uint64_t bytes;      /* size of the whole message */
    uint64_t sreq;       /* sender's token for replies (DATA: offset) */
    uint64_t aux;        /* RTS: sender address; CTS, DATA: receiver's token */
} halo_pkt_hdr_t;

/* Called by a transport for every packet that arrives, in order per sender.
 * `payload` is valid only during the call. */
typedef void halo_pkt_handler_fn_t(int src_world, const halo_pkt_hdr_t *hdr, const void *payload,
                                   size_t len);

/* Writes the payload of a packet into dst (at most len bytes); lets the
 * pt2pt layer pack straight into a transport's buffer. */
typedef void halo_pkt_fill_fn_t(void *arg, void *dst, size_t len);

enum {
    HALO_TR_OK = 0,
    HALO_TR_AGAIN = 1,    /* no room now; try again after progress */
};

int halo_tr_init(halo_pkt_handler_fn_t *handler);
void halo_tr_finalize(void);

/* Largest payload an eager packet to dst may carry (asked by every send:
 * inline, from halo_tr_eager_other, which halo_tr_init sets). */
#define HALO_TR_SELF_EAGER_MAX ((size_t)64 * 1024)
extern size_t halo_tr_eager_other;
static inline size_t halo_tr_eager_max(int dst_world)
{
    return dst_world == halo_world.rank ? HALO_TR_SELF_EAGER_MAX : halo_tr_eager_other;
}
/* Largest payload any packet to dst may carry (pushed chunks). */
size_t halo_tr_chunk_max(int dst_world);

/* Sends one packet; the payload is produced by fill(arg, dst, len) (or
 * copied from `payload` when fill is NULL). HALO_TR_AGAIN when there is no
 * room; nothing was sent then. Inline down to the shared-memory transport,
 * the path of every small message. */
int halo_tr_send_self(const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                      halo_pkt_fill_fn_t *fill, void *fill_arg);
_Noreturn void halo_tr_unreachable(int dst_world);
/* Packets to a process off this node's segment: another job's (sockets). */
int halo_tr_send_far(int dst_world, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                     halo_pkt_fill_fn_t *fill, void *fill_arg);
int halo_shm_send(int peer, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                  halo_pkt_fill_fn_t *fill, void *arg);
/* The pid of a rank of this node's segment (0 when not known). */
int32_t halo_shm_pid(int local_rank);
static inline int halo_tr_send(int dst_world, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                               halo_pkt_fill_fn_t *fill, void *fill_arg)
{
    if (dst_world == halo_world.rank)
        return halo_tr_send_self(hdr, payload, len, fill, fill_arg);
    if (HALO_UNLIKELY(halo_world.procs[dst_world].node != halo_world.node))
        return halo_tr_send_far(dst_world, hdr, payload, len, fill, fill_arg);
    return halo_shm_send(halo_world.procs[dst_world].local_rank, hdr, payload, len, fill, fill_arg);
}

/* Reads `len` bytes at the sender's address raddr into the local iovecs:
 * 0 on success, -1 when the sender's memory cannot be read directly (the
 * caller then asks for the data to be pushed with HALO_PKT_CTS). */
int halo_tr_read(int src_world, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);

/* The same from a sender's scattered runs: the local and remote iovecs
 * (at most 1024 each) cover the same number of bytes; 0 or -1 as above. */
int halo_tr_readv(int src_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                  int nremote);
/* The same the other way: the local bytes into the receiver's runs. */
int halo_tr_writev(int dst_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                   int nremote);
/* Writes `len` bytes from the local iovecs to the receiver's address raddr:
 * 0 on success, -1 when its memory cannot be written directly. */
int halo_tr_write(int dst_world, const struct iovec *local, int nlocal, uint64_t raddr, size_t len);
/* Has a single-copy access to this peer's memory worked already? */
int halo_tr_single_copy_ok(int world);
/* Whether this peer and this process are both bound to one and the same
 * CPU (then neither copies while the other runs). */
int halo_tr_shares_cpu(int world);
/* The CPU this rank of the node is bound to (mpiexec binds round robin),
 * -1 when it may run on several or sits on another node; every rank sees
 * the same answer for it. */
int halo_tr_bound_cpu(int world);
/* Whether every rank of this job on this node is bound to one CPU (the
 * same answer on all of them; computed once). */
int halo_tr_node_bound(void);
/* For the tests: how far this process's records reached into its ring
 * toward `world` since the last call, bytes from the ring's start (-1: no
 * ring toward it); the ring's size in *ring_bytes. */
long long halo_tr_ring_reach(int world, long long *ring_bytes);
/* Whether every rank of this node may read and write the others' memory
 * directly (halo_tr_read, halo_tr_write), as far as can be told before
 * trying: the same answer on every rank of the node (transport/shm.c;
 * decided at the first call, with or without a shared segment). */
int halo_tr_cma_node(void);

/* Polls every transport once; returns the number of packets handled. */
int halo_tr_poll(void);
/* Delivers the packets this process sent itself so far (those the
 * handlers queue meanwhile wait for the next poll). */
int halo_tr_poll_self(void);

/* Publisher side of the doorbell's lost-wakeup protocol (progress.c) for
 * shared-memory collectives' flags (halo_tr_wake_targets_ring) and this process's
 * own threads: after a store that a sleeping rank may wait for, before
 * reading whether it sleeps. A full fence, or only a compiler barrier where this process
 * registered for membarrier's global expedited command: a rank about to
 * sleep then forces a barrier on every running rank (halo_tr_sleep_fence),
 * which is rare, instead of every publication paying for one (the fence
 * waits for the flag's line to reach the peer: a tenth of an 8-byte
 * Bcast's time at its root). HALO_MEMBARRIER=0 keeps full fences. */
extern bool halo_tr_light_fence;
static inline void halo_tr_publish_fence(void)
{
    if (halo_tr_light_fence)
        atomic_signal_fence(memory_order_seq_cst);
    else
        atomic_thread_fence(memory_order_seq_cst);
}
/* Sleeper side, after announcing the sleep and before the last look: 0
 * when every store published before this call is visible to our next
 * loads; -1 when that cannot be guaranteed (then do not sleep). */
int halo_tr_sleep_fence(void);

/* The doorbell of this process: wait policy (progress/wait.c) sleeps on it,
 * senders ring it. */
_Atomic uint32_t *halo_tr_doorbell(void);
_Atomic uint32_t *halo_tr_sleeping(void);
int halo_tr_doorbell_shared(void);   /* futex on shared memory (no PRIVATE flag) */
/* Where a thread about to sleep writes the doorbell's value it sleeps on. */
_Atomic uint32_t *halo_tr_slept_on(void);
/* Whether a process is asleep on its doorbell: it announced its sleep, and
 * nobody rang since (a process woken but not yet running keeps its
 * announcement a while). */
static inline bool halo_tr_asleep(const _Atomic uint32_t *doorbell, const _Atomic uint32_t *sleeping,
                                  const _Atomic uint32_t *slept_on)
{
    return atomic_load_explicit(sleeping, memory_order_relaxed) != 0 &&
           atomic_load_explicit(doorbell, memory_order_relaxed) == atomic_load_explicit(slept_on, memory_order_relaxed);
}
/* Processes of this job on the node asleep on their doorbells now: they
 * said so and nobody rang since (a snapshot; those of other jobs are not
 * seen). */
int halo_tr_node_sleepers(void);
void halo_tr_ring_self(void);        /* wake threads of this process that sleep */
/* After a store that other processes of this node may wait for (a
 * shared-memory collective's flag), the sleepers among them are woken.
 * halo_tr_wake_targets writes to `targets` those of `worlds` (world ranks)
 * that can be woken so (this process and ranks on other nodes skipped) and
 * returns how many; halo_tr_wake_targets_ring, after the store, fences and
 * rings the doorbells of those that sleep. */
int halo_tr_wake_targets(const int *worlds, int n, int *targets);
void halo_tr_wake_targets_ring(const int *targets, int n);
/* A shared-memory segment this job opened by name: 0 when it belongs to
 * this user and nobody else may read or write it (mode 0600 or stricter);
 * otherwise -1 with the reason in why (someone else made the name first:
 * the job must not use it). */
int halo_shm_fd_trusted(int fd, char *why, size_t n);

#endif
