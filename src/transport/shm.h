/* The shared-memory transport's internals, shared with its unit tests.
 *
 * One segment per node and job, created by the node's first rank, attached
 * by the others, and unlinked as soon as every rank has attached (so a crash
 * leaves nothing in /dev/shm; mpiexec removes it too if a crash comes first).
 *
 * Two channels per (sender, receiver) pair, kept in order by a sequence
 * number per pair:
 *  - a ring: a single-producer single-consumer byte ring per pair, claimed
 *    after the first HALO_SHM_RING_AFTER packets of the pair went through
 *    cells (its pages are only touched then), up to a cap of rings per
 *    receiver; records of at most HALO_SHM_RING_MAX payload bytes;
 *  - cells: each rank owns a pool of large cells; a sender fills one of its
 *    own and pushes it on the receiver's lock-free queue (many producers,
 *    one consumer); the receiver hands it back on the owner's free queue.
 * Small packets take the ring; larger eager packets, and everything when the
 * ring is full or over the cap, take a cell. Above the eager limit, data
 * moves by rendezvous: the receiver reads the sender's buffer with
 * process_vm_readv (CMA), or asks the sender to push it through cells. */
#ifndef HALO_TRANSPORT_SHM_H
#define HALO_TRANSPORT_SHM_H

#include "transport/transport.h"

#define HALO_SHM_MAGIC 0x68616c6f73686d31ull  /* "haloshm1" */
/* Bytes of each ring: large where few ranks share the node, small where
 * many do (halo_shm_ring_bytes; HALO_SHM_RING_BYTES sets it). */
#define HALO_SHM_RING_SMALL (16 * 1024)
#define HALO_SHM_RING_LARGE (256 * 1024)
#define HALO_SHM_RING_LARGE_UPTO 16           /* ranks on the node that get large rings */
/* A producer whose records have all been consumed when it crosses into
 * the next HALO_SHM_RING_LAP bytes of a larger ring starts again from the
 * ring's start: a pair that waits for each message keeps to the ring's
 * first lines, a stream runs through all of it (shm.c, ring_send). */
#define HALO_SHM_RING_LAP HALO_SHM_RING_SMALL
#define HALO_SHM_RING_MAX 2048                /* payload bytes of one ring record */
#define HALO_SHM_RING_CAP 64                  /* rings per receiver */
#define HALO_SHM_NCELLS 32                    /* cells per rank */
#define HALO_SHM_CELL_PAYLOAD (32 * 1024)

enum { SHM_REC_PKT = 1, SHM_REC_SKIP = 2 };

typedef struct shm_rec {
    _Atomic uint32_t rseq;   /* record number (never 0: shm.c rec_next), stored last (release) */
    uint32_t len;            /* payload bytes */
    uint32_t seq;            /* pair sequence number */
    uint32_t kind;
    halo_pkt_hdr_t hdr;
} shm_rec_t;

typedef struct shm_cell {
    _Atomic uint64_t next;   /* queue link: segment offset, 0 = none */
    int32_t owner;           /* local rank whose pool it belongs to */
    int32_t src;             /* local rank of the sender */
    uint32_t seq;
    uint32_t len;
    halo_pkt_hdr_t hdr;
    char payload[];
} shm_cell_t;

typedef struct shm_queue {
    _Atomic uint64_t head HALO_ALIGNED(HALO_CACHELINE);
    _Atomic uint64_t tail HALO_ALIGNED(HALO_CACHELINE);
} shm_queue_t;

typedef struct shm_rank {
    /* Doorbell line: the futex word and the "sleeping" flag of the
     * lost-wakeup protocol (progress/wait.c). */
    _Atomic uint32_t doorbell HALO_ALIGNED(HALO_CACHELINE);
    _Atomic uint32_t sleeping;
    _Atomic uint32_t slept_on;   /* the doorbell's value when a thread last went to sleep */
    int32_t pid;
    _Atomic int32_t cma;    /* this rank's single-copy verdict: 0 not yet, 1 no, 2 yes (shm.c) */
    _Atomic int32_t probe_set;  /* pid, cpu and probe are written (release) */
    int32_t cpu;            /* the one CPU this rank may run on, or -1 */
    uint64_t probe;         /* address, in this rank's memory, of a word its neighbour
                             * reads to check single-copy access (shm.c, cma_verdict) */
    shm_queue_t recvq;      /* cells sent to this rank */
    shm_queue_t freeq;      /* this rank's cells, handed back */
    _Atomic int32_t nrings HALO_ALIGNED(HALO_CACHELINE);  /* rings claimed toward this rank */
    /* Bumped after a sender's bit is set in the receiver's bitmap: a
     * receiver that sees a new value rescans and is sure to find the bit. */
    _Atomic int32_t ring_epoch;
} shm_rank_t;

/* A ring: its tail's line, then seg->ring_bytes of records. */
typedef struct shm_ring {
    _Atomic uint64_t tail HALO_ALIGNED(HALO_CACHELINE);  /* bytes consumed (consumer writes) */
    char data[] HALO_ALIGNED(HALO_CACHELINE);
} shm_ring_t;

typedef struct shm_seg {
    uint64_t magic;
    uint32_t nlocal;
    uint32_t cell_stride;
    uint64_t size;
    uint64_t ring_bytes;     /* bytes of each ring's records, a power of two */
    uint64_t off_ranks, off_bitmaps, off_cells, off_rings;
    _Atomic uint32_t attached;
} shm_seg_t;

/* Layout helpers (used by the unit tests to build a segment in memory). */
size_t halo_shm_ring_bytes(int nlocal);
size_t halo_shm_seg_size(int nlocal);
void halo_shm_seg_format(void *base, int nlocal);

/* The queue primitives over a segment base. */
void halo_shm_q_push(char *base, shm_queue_t *q, uint64_t off);
uint64_t halo_shm_q_pop(char *base, shm_queue_t *q);

#endif
