/* Collective schedules.
 *
 * A schedule is plain data in one allocation: a header, an array of steps
 * and a scratch area. Steps name buffers either by absolute address (user
 * buffers) or by offset into the schedule's own scratch area, and peers by
 * rank in the communicator; messages carry the communicator's collective
 * sequence number as their tag. Nothing in it points into the schedule
 * itself, so a copy at another address (or in another process that can
 * address the same buffers) runs unchanged.
 *
 * Steps are grouped in rounds. A round first posts all of its sends and
 * receives; when they have all completed, it runs its local copy and reduce
 * steps, in the order they were added; then the next round starts. Steps
 * may be added in any round order (the engine sorts them once, stably). A
 * local step that must come before a round's messages goes in the round
 * before (a round may have no messages at all). Messages between two ranks
 * match in the order both sides post them (one tag per collective), so an
 * algorithm posts them in the same order on both sides.
 *
 * A blocking collective builds its schedule and waits on it; a nonblocking
 * one hands it to a request; a persistent one builds it once and reruns it
 * (halo_sched_reset) at every start. */
#ifndef HALO_COLL_SCHED_H
#define HALO_COLL_SCHED_H

#include "coll/op.h"
#include "core/comm.h"

typedef enum halo_step_kind {
    HALO_STEP_SEND = 1,
    HALO_STEP_RECV,
    HALO_STEP_COPY,     /* (a, count, type) -> (b, count2, type2) */
    HALO_STEP_REDUCE,   /* b = a op b, count elements of type */
    HALO_STEP_PACK,     /* packed bytes [pos, pos + count2) of (a, count, type) -> b */
    HALO_STEP_UNPACK,   /* b -> packed bytes [pos, pos + count2) of (a, count, type) */
    /* Shared-memory steps (coll/shm.h): a round waits for flags of other
     * members of the node group as it waits for messages; a set is a local
     * step. peer: a member index or HALO_SHM_ALL; pos: the flag step. */
    HALO_STEP_SHM_WAIT,
    HALO_STEP_SHM_WAIT_PREV,
    HALO_STEP_SHM_SET,
    /* Single-copy steps (local, like a copy): count2 bytes between the
     * local buffer b and the memory of the communicator's rank `peer`, at
     * byte pos from the address that this rank published in the spare
     * bytes of its flag line (a: halo_line(member, off), coll/shm.h).
     * The node's ranks must allow it (halo_tr_cma_node). */
    HALO_STEP_CMA_READ,   /* remote -> b */
    HALO_STEP_CMA_WRITE,  /* b -> remote */
} halo_step_kind_t;

enum {
    HALO_BREF_ABS = 0,      /* an absolute address */
    HALO_BREF_SCRATCH = 1,  /* an offset into the schedule's scratch area */
    HALO_BREF_SLOT = 2,     /* an offset into member `owner`'s slot of the collective's
                             * channel in the node group's region (coll/shm.h) */
    HALO_BREF_LINE = 3,     /* an offset into the spare bytes of member `owner`'s flag
                             * line on the collective's channel (coll/shm.h) */
};

typedef struct halo_bref {
    int32_t scratch;    /* HALO_BREF_* (1 keeps meaning "scratch") */
    int32_t owner;      /* HALO_BREF_SLOT: the member */
    int64_t at;
} halo_bref_t;

typedef struct halo_step {
    int32_t kind;
    int32_t round;
    int32_t peer;
    int32_t seq;        /* order of addition (used to sort stably by round) */
    halo_bref_t a, b;
    MPI_Count count, count2;
    MPI_Datatype type, type2;
    MPI_Op op;
    int64_t pos;        /* PACK, UNPACK: packed byte offset; SHM_*: flag step */
    int32_t phase;      /* shared-memory phase the step belongs to (coll/shm.h) */
    /* Set by the engine before the first run: a COPY, PACK or UNPACK whose
     * bytes are one run on both sides moves `flat` bytes with one memcpy,
     * from a + off_a to b + off_b (PACK, COPY) or back (UNPACK); a REDUCE
     * that is one loop of a predefined op runs that loop (`kernel`, a
     * number: coll/op_predef.h) over flat elements. flat 0: the datatype
     * engine or halo_op_apply does the step. */
    int64_t flat, off_a, off_b;
    int32_t kernel;
    int32_t consumed;   /* RECV: a later REDUCE of this rank reads the buffer */
    int32_t rdv;        /* SEND: by rendezvous whatever its size (halo_sched_send_rdv) */
} halo_step_t;

/* A shared-memory flag wait: checked before anything of its round runs
 * (the engine sorts a round's waits first), never run itself. */
static inline bool halo_step_is_wait(const halo_step_t *st)
{
    return st->kind == HALO_STEP_SHM_WAIT || st->kind == HALO_STEP_SHM_WAIT_PREV;
}

typedef struct halo_sched {
    uint64_t bytes;          /* size of the whole allocation */
    int32_t nsteps, capsteps;
    int32_t nrounds;
    int32_t cur_round;       /* running round, -1 before start */
    int32_t first_step;      /* first step of the running round */
    int32_t pending;         /* sends and receives of the round still in flight */
    int32_t done;
    int32_t error;
    int32_t in_advance;
    int32_t sorted;          /* steps are in round order */
    int32_t tag;
    uint32_t ctx;
    uint64_t seq;            /* the call's collective sequence number (tag = its low 31 bits) */
    MPI_Comm comm;
    int32_t uses_shm;        /* has shared-memory steps */
    int32_t nmsgs;           /* send and receive steps */
    int32_t shm_phases;      /* shared-memory phases: each takes an epoch at start */
    int32_t shm_waiting;     /* the running round waits on flags (watched by coll/shm.c) */
    int32_t aborted;         /* failed here or on another rank: no further rounds */
    int32_t seq_fixed;       /* persistent, matched by its init: every start keeps seq */
    struct halo_shm_region *shm_own;   /* seq_fixed: its own region (coll/shm.c), or NULL */
    int32_t fail_rank;       /* aborted: the rank that failed in it */
    int32_t kind;            /* the collective (halo_coll_kind_t), for error messages */
    int64_t shm_epoch;       /* this run's epoch for phase 0 (phase k: + k) */
    int64_t shm_prev[2];     /* per phase: the previous epoch on its channel (0: none) */
    /* Per phase, for this run (halo_shm_begin): the channel's flag line of
     * member 0, its slot, and this rank's cache of the members' flags. */
    char *shm_ctl[2], *shm_data[2];
    uint64_t *shm_seen[2];
    /* A blocking call on the communicator's region: per member, the
     * highest blocking epoch seen in its flags (coll/shm.h); else NULL. */
    uint64_t *shm_later;
    /* While building only (never read when running): peers given to
     * halo_sched_send/recv are indices into peer_map when it is set, and
     * rounds are offset by round_base. The two-level algorithms use them to
     * run another algorithm over a subset of the ranks, after their own
     * rounds. */
    const int *peer_map;
    int32_t round_base;
    int32_t build_phase;     /* phase given to the steps added now */
    /* Buffers the schedule owns (freed with it), for intermediate results
     * that algorithms composed by a two-level one pass each other as
     * addresses (the scratch area moves while a schedule is built). */
    void **owned;
    int32_t nowned;
    uint64_t owned_bytes;    /* their sizes summed */
    /* The running round's requests not yet complete (to cancel on abort). */
    struct halo_request **inflight;
    int32_t ninflight, capinflight;
    uint64_t scratch_off;    /* from the schedule's start */
    uint64_t scratch_bytes;
    struct halo_request *owner;   /* request completed at the end (nonblocking) */
    halo_step_t steps[];
} halo_sched_t;

/* Sequence lanes. Blocking collectives and nonblocking (or persistent)
 * ones are numbered apart: MPI orders each kind among itself on a
 * communicator, and programs do mix the two in different orders on
 * different ranks (a rank in MPI_Barrier while another has an
 * MPI_Iallreduce pending first), which MPICH and Open MPI allow. Blocking
 * calls get even sequence numbers, nonblocking ones odd: their tags differ
 * and so do their shared-memory channels (coll/shm.h). HALO_LANE_NONE
 * takes no number (a persistent collective numbers itself at each start). */
enum { HALO_LANE_BLOCKING = 0, HALO_LANE_NONBLOCKING = 1, HALO_LANE_NONE = 2 };

/* A new empty schedule for a collective on comm (takes the next collective
 * sequence number of the lane). */
halo_sched_t *halo_sched_new(halo_comm_t *comm, int lane);
/* Takes the communicator's next collective sequence number of a lane. */
uint64_t halo_sched_next_seq(halo_comm_t *comm, int lane);
static inline int32_t halo_seq_tag(uint64_t seq)
{
    return (int32_t)(seq & 0x7fffffff);
}
/* A persistent collective takes a new nonblocking sequence number at every
 * start (MPI has every rank start them in the same order). */
void halo_sched_renumber(halo_sched_t *s);
/* Reserves scratch bytes; returns their offset (64-byte aligned). */
int64_t halo_sched_scratch(halo_sched_t **s_p, uint64_t bytes);
/* A send whose data goes by rendezvous even below the eager limit
 * (HALO_MODE_RDV): for a root that sends blocks to many ranks sharing the
 * CPUs, each receiver then copies its own block, where an eager send has
 * the root copy them all into the transport first. */
void halo_sched_send_rdv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                         MPI_Datatype type, int peer);
void halo_sched_send(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer);
void halo_sched_recv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer);
void halo_sched_copy(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count scount,
                     MPI_Datatype stype, halo_bref_t dst, MPI_Count dcount, MPI_Datatype dtype);
void halo_sched_reduce(halo_sched_t **s_p, int round, halo_bref_t in, halo_bref_t inout,
                       MPI_Count count, MPI_Datatype type, MPI_Op op);
/* Packs bytes [pos, pos + len) of (buf, count, type) to dst, or unpacks
 * them from src: pipelines cut a message anywhere. */
void halo_sched_pack(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, MPI_Count pos, MPI_Count len, halo_bref_t dst);
void halo_sched_unpack(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count pos, MPI_Count len,
                       halo_bref_t buf, MPI_Count count, MPI_Datatype type);
/* A single-copy read (write = false) or write of len bytes between the
 * local buffer `local` and byte pos of the buffer whose address the
 * communicator's rank `peer` published at `published` (HALO_STEP_CMA_*). */
void halo_sched_cma(halo_sched_t **s_p, int round, bool write, halo_bref_t published, int peer,
                    MPI_Count pos, halo_bref_t local, MPI_Count len);
/* A buffer of `count` elements of type owned by the schedule: the address
 * where the buffer's element 0 would be (the data starts at its true lower
 * bound), valid until the schedule is freed. */
void *halo_sched_tmp(halo_sched_t **s_p, MPI_Count count, MPI_Datatype type);
/* Adds a step of any kind (for the shared-memory builders); zeroed but for
 * kind and round. */
halo_step_t *halo_sched_add(halo_sched_t **s_p, int kind, int round);
/* Advances a schedule whose round was waiting on shared-memory flags that
 * now hold (coll/shm.c's progress hook), or stops it when the member of
 * rank failed_rank (>= 0) gave up on the collective. */
void halo_sched_flags_ready(halo_sched_t *s, int failed_rank);

static inline halo_bref_t halo_addr(const void *p)
{
    return (halo_bref_t){HALO_BREF_ABS, 0, (int64_t)(intptr_t)p};
}
static inline halo_bref_t halo_scr(int64_t off)
{
    return (halo_bref_t){HALO_BREF_SCRATCH, 0, off};
}
static inline halo_bref_t halo_bref_add(halo_bref_t b, int64_t bytes)
{
    b.at += bytes;
    return b;
}
static inline bool halo_bref_same(halo_bref_t x, halo_bref_t y)
{
    return x.scratch == y.scratch && x.owner == y.owner && x.at == y.at;
}

/* Failure of a collective on one rank reaches the others: a schedule that
 * fails here (a message in error, an operation that fails) tells every
 * other rank of the communicator (HALO_PKT_COLL_ERR); a schedule that
 * learns that a peer failed in the same collective (context and tag) stops:
 * receives not yet matched are withdrawn, messages of the collective that
 * arrive unmatched are dropped (rendezvous senders released), messages
 * already under way complete, and the request completes with
 * MPI_ERR_OTHER naming the rank that failed. A failure learned before the
 * collective starts here fails it at its start. */
void halo_sched_init(void);
/* A collective call that failed before its schedule ran (its arguments):
 * tells the other ranks, under the sequence number of its schedule s (NULL:
 * take the one the call would have had in its lane). */
void halo_sched_fail_call(halo_comm_t *c, const halo_sched_t *s, int lane, int code);
/* Forgets the failed collectives of a communicator that goes away. */
void halo_sched_comm_gone(halo_comm_t *c);

/* Runs the schedule to completion (blocking collectives); returns its error. */
int halo_sched_run(halo_sched_t *s);
/* The same, leaving the schedule to the caller, who may rerun it with
 * halo_sched_rerun (a blocking call made again with the same arguments). */
int halo_sched_run_keep(halo_sched_t *s);
int halo_sched_rerun(halo_sched_t *s);
/* A schedule's compiled form, for the runs of a call made again with the
 * same arguments (a kept call, a persistent request): NULL unless it has no
 * messages and uses shared memory. Sorts s's steps first. Private to this
 * process (addresses resolved); free() frees it. halo_sched_rerun_prog
 * reruns s through it, as halo_sched_rerun would. */
typedef struct halo_sched_prog halo_sched_prog_t;
halo_sched_prog_t *halo_sched_compile(halo_sched_t *s);
int halo_sched_rerun_prog(halo_sched_t *s, const halo_sched_prog_t *p);
/* Starts it under a request that completes with it. */
void halo_sched_start(halo_sched_t *s, struct halo_request *owner);
/* The same through its compiled form p (s reset and numbered): the rounds
 * whose waits hold at once run here, and the engine takes the rest on. */
void halo_sched_start_prog(halo_sched_t *s, struct halo_request *owner, const halo_sched_prog_t *p);
/* Starts through a compiled form so far, and how many of them ran to the
 * end before returning (the others the engine finished). */
void halo_sched_prog_counts(long long *starts, long long *finished);
/* Makes a finished schedule ready to run again (persistent collectives). */
void halo_sched_reset(halo_sched_t *s);
void halo_sched_free(halo_sched_t *s);
/* Frees the schedules kept for reuse (finalize). */
void halo_sched_cache_drain(void);

#endif
