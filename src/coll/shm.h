/* Shared-memory collectives: the region that a communicator's ranks on one
 * node share, and the schedule steps that use it (coll/sched.h runs them).
 *
 * Node groups. The ranks of a communicator that sit on one node (as the
 * collectives see nodes: HALO_FAKE_NODES may pretend there are several)
 * form its node group there: L members, numbered in communicator rank
 * order. The first member of each node group is that node's leader.
 * Algorithms name members by their index in the group.
 *
 * Region. Each node group shares one segment,
 * /dev/shm/halo-<job>-c<context>-n<node>-<hash of the members>, which every
 * member opens at its first shared-memory collective on the communicator.
 * Opening needs no message: the name comes from what every member knows.
 * The member that completes the set of openers unlinks the name (mpiexec
 * removes it after a crash); each member unmaps it when the communicator
 * goes away. Layout: a header page, then control lines [channel][member],
 * then data slots [channel][member] of HALO_CSHM_SLOT bytes; pages are only
 * touched when used.
 *
 * Channels and flags. A schedule's shared-memory steps come in phases (one
 * for most algorithms; a two-level allreduce has a reduce phase and a
 * broadcast phase; at most HALO_SHM_MAX_PHASES). Phase k of the collective
 * with sequence number q (coll/sched.h: every rank numbers the calls on a
 * communicator alike, since MPI has them made in the same order) has epoch
 * e = 2 q + 2 + k and works on channel e % HALO_CSHM_CHANNELS, so that
 * several nonblocking collectives can be in flight. Blocking calls have
 * even q, nonblocking ones odd q (their own order), so the first use
 * channels 2, 3 mod 4 and the second 0, 1 mod 4: the two kinds never share
 * a channel, and on each channel epochs only grow. Each member owns one
 * flag word per channel and only ever raises it: it holds (e << 20) | step,
 * so "flag >= (e << 20) | step" means "this member has passed that step of
 * epoch e, or is further on". Every phase starts by waiting until every
 * member, itself included, has finished the channel's previous epoch
 * (each member remembers it: the algorithms are the same everywhere):
 * nobody still reads a slot that is about to be written, and no member
 * raises the flag for e while the previous epoch still needs it. Every
 * member ends a phase by raising its flag to DONE. A call that fails
 * before it runs, or stops early, raises its flags to "gave up" (a step
 * between GAVE_UP and DONE that names the rank that failed; the channel's
 * next user need not wait for it), and a member that waits for it and
 * finds that fails its own call, naming the same rank (the failure's
 * message may come later than the flag).
 *
 * Finished by a later call. Blocking collectives end, on each member,
 * before its next blocking collective on the communicator begins (MPI
 * orders them, and a call that fails raises its flags first). So a member
 * whose flag anywhere shows an epoch of a later blocking call has finished
 * every earlier one, and a wait for the channel's previous epoch needs no
 * look at its line: each rank keeps, per member, the highest blocking
 * epoch it has seen in that member's flags (any channel, any step). In a
 * run of calls where every member waits on every other (Allreduce,
 * Barrier, Allgather), that makes the previous-epoch wait free: loading
 * the line again would fetch it from the core that is about to write it
 * for the new epoch, and then hand it back. Calls of the nonblocking lane
 * and persistent collectives with regions of their own finish in any
 * order and always read the flag.
 *
 * Waking. A waiter that runs out of patience sleeps on its process's
 * doorbell (progress/progress.c); raising a flag rings the doorbells of the
 * group's sleeping members. The lost-wakeup argument is the one of the
 * progress engine: the setter stores its flag, fences, then reads the
 * sleeping counts; the sleeper raises its count, fences, then re-checks the
 * flags before it sleeps. */
#ifndef HALO_COLL_SHM_H
#define HALO_COLL_SHM_H

#include "coll/sched.h"

#define HALO_CSHM_CHANNELS 16   /* a multiple of 4 (8 per lane) */
#define HALO_SHM_MAX_PHASES 2
#define HALO_CSHM_SLOT (64 * 1024)         /* data bytes per member and channel */
#define HALO_CSHM_HALF (HALO_CSHM_SLOT / 2)  /* a pipeline chunk (slots are double-buffered) */
/* Each member's flag on a channel has a cache line of its own; the bytes
 * after the flag word carry small blocks (HALO_BREF_LINE, halo_line), so
 * that a member that sees the flag has the data in the same line. */
#define HALO_CSHM_CTL_BYTES 64
#define HALO_SHM_LINE_BYTES (HALO_CSHM_CTL_BYTES - 8)
#define HALO_SHM_STEP_BITS 20
#define HALO_SHM_DONE ((1 << HALO_SHM_STEP_BITS) - 1)
/* Steps from HALO_SHM_GAVE_UP to DONE - 1: the member gave up on the epoch
 * because the rank (step - GAVE_UP) of the communicator failed in it. */
#define HALO_SHM_GAVE_UP (1 << (HALO_SHM_STEP_BITS - 1))
#define HALO_SHM_MAX_STEP (HALO_SHM_GAVE_UP - 1)

/* Member arguments of the steps besides member indices: every member,
 * or members [0, n) (halo_shm_below(n)); a wait on several members skips
 * the waiting member itself. */
enum { HALO_SHM_ALL = -1 };
static inline int halo_shm_below(int n)
{
    return -2 - n;
}

/* A blocking call's epochs are 2 q + 2 + k with q even and k < 2 (so
 * 2 or 3 mod 4), and the next blocking call's start 4 higher: a member
 * whose flag shows an epoch of at least this value has finished the
 * blocking epoch e ("Finished by a later call"). */
static inline uint64_t halo_shm_finished_by(int64_t e)
{
    return (uint64_t)(e & ~(int64_t)1) + 4;
}

/* The members [*lo, *hi) that a wait step's member argument names among n;
 * true when it names several (the waiting member is then skipped). */
static inline bool halo_shm_wait_members(int member, int n, int *lo, int *hi)
{
    if (member >= 0) {
        *lo = member;
        *hi = member + 1;
        return false;
    }
    *lo = 0;
    *hi = member == HALO_SHM_ALL ? n : -2 - member;
    return true;
}

/* A communicator's view of the machine, computed once (coll/shm.c). */
typedef struct halo_coll_topo {
    bool one_node;       /* every rank on one node */
    int nnodes;
    int max_local;       /* members of the largest node group (ranks per node) */
    bool node_blocks;    /* every node group is a block of consecutive ranks */
    /* My node group: comm ranks of its members, my index in it. */
    int nlocal, me;
    int *local;
    /* Leaders (first member of each node group), by ascending comm rank;
     * my index among them, -1 when I am not a leader. */
    int nleaders, leader_me;
    int *leaders;
    /* For each comm rank: its node group's leader index, its member index. */
    int *leader_of, *member_of;
} halo_coll_topo_t;

/* The communicator's topology (computed at the first call, kept until the
 * communicator goes away). */
const halo_coll_topo_t *halo_coll_topo(halo_comm_t *c);

/* ---- building steps (the schedule must be marked with halo_shm_use) */

/* Marks the phase being built as one that uses the node group's region
 * (it takes an epoch when the schedule starts). */
void halo_shm_use(halo_sched_t **s_p);
/* Steps added from now on belong to the next phase. */
void halo_shm_next_phase(halo_sched_t **s_p);
/* The round waits until `member` (or every other member: HALO_SHM_ALL;
 * or the other members below n: halo_shm_below(n)) has raised its flag to
 * `step` of this phase. */
void halo_shm_wait(halo_sched_t **s_p, int round, int member, int step);
/* The round waits until every member, this one included, has finished the
 * channel's previous epoch: the first round of every phase has it. */
void halo_shm_wait_prev(halo_sched_t **s_p, int round);
/* A local step of the round: raises this member's flag to `step` (or
 * HALO_SHM_DONE) and wakes the members that sleep. */
void halo_shm_set(halo_sched_t **s_p, int round, int step);

/* Byte `off` of member's slot on the collective's channel (off may be
 * negative when a datatype's lower bound is, as long as the data stays
 * inside the slot). */
static inline halo_bref_t halo_slot(int member, int64_t off)
{
    return (halo_bref_t){HALO_BREF_SLOT, member, off};
}

/* Byte `off` of the spare bytes of member's flag line on the channel
 * (HALO_SHM_LINE_BYTES of them): for blocks that small, one cache line moves
 * the flag and the data together. */
static inline halo_bref_t halo_line(int member, int64_t off)
{
    return (halo_bref_t){HALO_BREF_LINE, member, off};
}

/* Where member's block of `bytes` packed bytes travels: its flag line when
 * it fits there, else byte `off` of its slot (the algorithms pass the half
 * of the pipeline chunk; a block that fits a line is a single chunk). */
static inline halo_bref_t halo_shm_block(int member, MPI_Count bytes, int64_t off)
{
    return bytes <= HALO_SHM_LINE_BYTES ? halo_line(member, 0) : halo_slot(member, off);
}

/* Whether count elements of type fit in the spare bytes of a flag line
 * (elements laid out as in memory, from the true lower bound). */
bool halo_shm_fits_line(MPI_Count count, MPI_Datatype type);

/* ---- helpers of the shared-memory algorithms */

/* Single-copy algorithms (cma): this member publishes address p in its
 * flag line's spare bytes (offset 0) in `round` and raises its flag to 1. */
void halo_shm_publish(halo_sched_t **s_p, int round, int me, const void *p);
/* The same for the `bytes` packed bytes of (buf, count, type): their own
 * address when they are one run of bytes (and `copy` is false), else a
 * packed copy made in `round` first (no bytes: buf as it is). Returns the
 * address published. */
const char *halo_shm_publish_bytes(halo_sched_t **s_p, int round, int me, const void *buf, MPI_Count count,
                                   MPI_Datatype type, MPI_Count bytes, bool copy);
/* The cma Bcast: whether the root itself writes member j's `bytes` bytes
 * into j's buffer (process_vm_writev) instead of j reading the root's
 * memory: j is bound to the root's CPU (more ranks than cores,
 * bound round robin), alone there beside the root, or the bytes pass
 * 128 KiB. The kernel pins the pages of the process a single copy reads
 * or writes under that process's page-table lock; members on two CPUs
 * all copying from or into the root fought over the root's lock (4 ranks,
 * 128 KiB Bcast: a fifth of the time spinning), while the members of one
 * CPU run one at a time anyway, so the root copying for its own CPU's
 * members costs that CPU nothing more. With several of them the root
 * waits for each to publish its buffer first, a round of context switches
 * that pays only for long copies (8 ranks on 2 CPUs, Bcast: 128 KiB 16.0
 * us moved by the root against 14.5 read, 256 KiB 28.4 against 40.3).
 * Evaluated on the root and on j alike, with the same answer; false for
 * everyone else. (The same for Scatter and Gather, where each member
 * copies a block of its own, lost at 4 ranks up to 64 KiB and at 8 ranks
 * from 256 KiB: 8 ranks, 1 MiB Scatter 290 us against 173.) */
bool halo_shm_root_moves(halo_comm_t *c, int root, int j, MPI_Count bytes);
/* Moves `bytes` packed bytes of (buf, count, type) into (write) or out of
 * the memory member `owner` (communicator rank `peer`) published, from
 * offset pos there, in `round`: straight from or into buf when it is one
 * run of bytes, else through the scratch area (packed in the round before
 * a write, unpacked after a read). */
void halo_shm_cma_block(halo_sched_t **s_p, int round, bool write, int owner, int peer, MPI_Count pos,
                        void *buf, MPI_Count count, MPI_Datatype type, MPI_Count bytes);

/* Reductions through the slots keep each element's layout (holes and all),
 * so any datatype and operation, user functions included, reduce straight
 * from the slots: a chunk of elements starts at the slot's first byte with
 * the true lower bound of its first element. `per` elements fit `cap`
 * bytes; chunk k holds elements [k * per, k * per + halo_shm_chunk_len(k)).
 * Needs an extent > 0 and a true extent <= cap (HALO_ALG_SHM_TYPE). */
typedef struct halo_shm_chunks {
    MPI_Count count, per, n;
    MPI_Aint extent, true_lb;
    int32_t where;   /* HALO_BREF_SLOT, or HALO_BREF_LINE when it all fits a flag line */
} halo_shm_chunks_t;
/* Chunks of at most cap bytes in the slots; when the whole of count
 * elements fits a flag line (halo_shm_fits_line), one chunk there instead
 * (then pass at = 0). */
void halo_shm_chunks(halo_shm_chunks_t *ch, MPI_Count count, MPI_Datatype type, MPI_Count cap);
static inline MPI_Count halo_shm_chunk_len(const halo_shm_chunks_t *ch, MPI_Count k)
{
    MPI_Count left = ch->count - k * ch->per;
    return left < ch->per ? left : ch->per;
}
/* Slot reference of element `elem` of a chunk stored at byte `at` of
 * member's slot. */
static inline halo_bref_t halo_shm_elem(const halo_shm_chunks_t *ch, int member, int64_t at,
                                        MPI_Count elem)
{
    return (halo_bref_t){ch->where, member, at - ch->true_lb + elem * ch->extent};
}
/* Local steps that leave in dst (n elements) the reduction of the n
 * elements at byte `at` of every member's slot, in member order
 * (x_0 op x_1 op ... op x_{L-1}: right for operations that do not commute). */
void halo_shm_fold(halo_sched_t **s_p, int round, int nmembers, int64_t at, MPI_Count first,
                   MPI_Count n, const halo_shm_chunks_t *ch, halo_bref_t dst, MPI_Datatype type, MPI_Op op);

/* Packed-byte chunks of csz bytes (the _of forms) or of HALO_CSHM_HALF
 * bytes (the pipelines of the data-moving algorithms): how many a block of
 * `bytes` takes (at least one: an empty block still takes part in the
 * flags), and the bytes of chunk k (0 past the end). */
static inline MPI_Count halo_shm_nchunks_of(MPI_Count bytes, MPI_Count csz)
{
    MPI_Count nk = (bytes + csz - 1) / csz;
    return nk > 0 ? nk : 1;
}
static inline MPI_Count halo_shm_chunk_bytes_of(MPI_Count bytes, MPI_Count k, MPI_Count csz)
{
    MPI_Count left = bytes - k * csz;
    return left < 0 ? 0 : left < csz ? left : csz;
}
static inline MPI_Count halo_shm_nchunks(MPI_Count bytes)
{
    return halo_shm_nchunks_of(bytes, HALO_CSHM_HALF);
}
static inline MPI_Count halo_shm_chunk_bytes(MPI_Count bytes, MPI_Count k)
{
    return halo_shm_chunk_bytes_of(bytes, k, HALO_CSHM_HALF);
}

/* Step builders of the algorithms, also used by the two-level ones: they
 * add their steps from `round` on, over a node group of `nmembers` in which
 * this process is member `me`, and return the next free round. Buffers are
 * references: `in` is this member's contribution, `out` the result
 * (significant at the root only for Reduce); in == out is allowed. */
int halo_shm_barrier_steps(halo_sched_t **s_p, int round, int nmembers, int me);
int halo_shm_bcast_steps(halo_sched_t **s_p, int round, int nmembers, int me, int root, halo_bref_t buf,
                         MPI_Count count, MPI_Datatype type);
int halo_shm_reduce_steps(halo_sched_t **s_p, int round, int nmembers, int me, int root, halo_bref_t in,
                          halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op);
int halo_shm_allreduce_steps(halo_sched_t **s_p, int round, int nmembers, int me, halo_bref_t in,
                             halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op);
/* The exchange that Allreduce, Reduce_scatter and Scan through the slots
 * share: every member copies its count elements from `in` into its slot,
 * chunk by chunk, and this member leaves in out[x - d0], for the elements
 * x in [d0, d1), the reduction of the slots of members 0 .. nfold - 1 in
 * member order. Two flag steps a chunk; returns the next round. The
 * caller handles a single member and checks the flag steps fit
 * (2 * chunks <= HALO_SHM_MAX_STEP). */
int halo_shm_fold_steps(halo_sched_t **s_p, int round, int me, int nfold, halo_bref_t in, MPI_Count count,
                        MPI_Count d0, MPI_Count d1, halo_bref_t out, MPI_Datatype type, MPI_Op op);
/* Scan and Exscan through the slots (shm, shm_parts): true when the call
 * needs no flag step (count 0, or a single member: then a Scan's input is
 * copied to its result here). */
struct halo_coll_args;
bool halo_shm_scan_trivial(const struct halo_coll_args *a, int nmembers, bool exclusive, halo_sched_t **s_p);
int halo_shm_allreduce_rsag_steps(halo_sched_t **s_p, int round, int nmembers, int me, halo_bref_t in,
                                  halo_bref_t out, MPI_Count count, MPI_Datatype type, MPI_Op op);

/* ---- running (coll/sched.c) */

/* Assigns the schedule's epochs (at each start), opening the region at the
 * first use. A persistent collective matched by its init call (seq_fixed)
 * gets a region of its own (HALO_SHM_MAX_PHASES channels, named after its
 * number) and epochs from its own count of starts: its starts may come in
 * any order relative to other collectives. */
void halo_shm_begin(halo_sched_t *s);
/* Unmaps a schedule's own region (with the schedule). */
void halo_shm_release(halo_sched_t *s);
/* The collective with sequence number seq failed on this rank before it
 * ran: raises this member's flags past its epochs. */
void halo_shm_skip(halo_comm_t *c, uint64_t seq);
/* One flag wait of a running schedule, for the engine (coll/shm.c) and
 * the compiled reruns (coll/sched.c) alike: whether members [lo, hi) of
 * `phase`, but `skip` (-1: none), have raised their flags to `step` of the
 * run's epoch (prev: instead, finished the channel's previous epoch, or
 * given up on it). Reads through this rank's cache of the flags. 1 yes,
 * 0 not yet; -1 when a member gave up on this epoch (*origin_p: the rank
 * of the communicator that failed in it). */
static inline int halo_shm_wait_holds(const halo_sched_t *s, int phase, bool prev, int step, int lo, int hi,
                                      int skip, int *origin_p)
{
    uint64_t *seen = s->shm_seen[phase], *later = s->shm_later;
    const char *ctl = s->shm_ctl[phase];
    uint64_t target, gave_up, done, finished_by = UINT64_MAX;
    if (prev) {
        if (s->shm_prev[phase] == 0)
            return 1;   /* first use of the channel */
        /* done, or gave up */
        target = ((uint64_t)s->shm_prev[phase] << HALO_SHM_STEP_BITS) | HALO_SHM_GAVE_UP;
        gave_up = done = 0;   /* either way, the previous epoch is over */
        if (later)
            finished_by = halo_shm_finished_by(s->shm_prev[phase]);
    } else {
        uint64_t e = (uint64_t)(s->shm_epoch + phase) << HALO_SHM_STEP_BITS;
        target = e | (uint64_t)step;
        gave_up = e | HALO_SHM_GAVE_UP;
        done = e | HALO_SHM_DONE;
    }
    for (int m = lo; m < hi; m++) {
        if (m == skip)
            continue;
        uint64_t v = seen[m];
        if (v < target) {
            if (later && later[m] >= finished_by)
                continue;   /* it has begun a later blocking call */
            v = atomic_load_explicit((_Atomic uint64_t *)(ctl + (size_t)m * HALO_CSHM_CTL_BYTES),
                                     memory_order_acquire);
            seen[m] = v;
            if (later && (v >> HALO_SHM_STEP_BITS) > later[m])
                later[m] = v >> HALO_SHM_STEP_BITS;
        }
        if (v >= gave_up && v < done) {
            *origin_p = (int)(v - gave_up);   /* the rank that failed */
            return -1;
        }
        if (v < target)
            return 0;
    }
    return 1;
}
/* Whether the running round's flag waits (the first steps of the round:
 * the engine sorts them so) hold now: 1 yes, 0 not yet;
 * -1 when a member it waits for gave up on the collective (*rank_p: the
 * rank of the communicator that failed in it). */
int halo_shm_round_ready(halo_sched_t *s, int *rank_p);
/* Runs a set step. */
void halo_shm_set_run(halo_sched_t *s, const halo_step_t *st);
/* After a blocking collective on the communicator's region: starts
 * loading the flag lines that the next blocking call will wait on (those of
 * other members not yet seen done) and this member's own, for writing, so
 * that the next call does not wait for them. */
void halo_shm_prefetch_next(halo_sched_t *s);
/* A schedule that stops early because rank `origin` failed in it: raises
 * its flags to "gave up" for each of its epochs. */
void halo_shm_abort(halo_sched_t *s, int origin);
/* The progress hook that re-checks the waits of schedules whose round
 * waits on flags (registered by the engine when such a round starts). */
void halo_shm_watch(halo_sched_t *s);
void halo_shm_unwatch(halo_sched_t *s);

#endif
