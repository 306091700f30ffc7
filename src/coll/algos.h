/* Collective algorithms: each builds a schedule (coll/sched.h) and lives in
 * a file of its own whose header comment gives its cost model, in the
 * usual alpha (latency), beta (time per byte), gamma (reduction time per
 * byte) terms, with p ranks and n bytes, and its restrictions.
 *
 * Every algorithm has the same signature: the collective's arguments in a
 * halo_coll_args_t, the communicator, and the schedule to append to (made
 * by the caller with the collective's tag). What it may assume: the
 * arguments passed the checks of coll_api.c, and the restrictions that the
 * registry (coll_registry.c) lists for it hold. What it must do: work for
 * MPI_IN_PLACE wherever the standard allows it, for any datatype (holes,
 * nonzero lower bound, and types that differ between ranks but have the
 * same signature), and for non-commutative operations unless the registry
 * says otherwise (then the lower rank's data stays on the left). */
#ifndef HALO_COLL_ALGOS_H
#define HALO_COLL_ALGOS_H

#include "coll/sched.h"

typedef enum halo_coll_kind {
    HALO_COLL_BARRIER = 0,
    HALO_COLL_BCAST,
    HALO_COLL_GATHER,
    HALO_COLL_GATHERV,
    HALO_COLL_SCATTER,
    HALO_COLL_SCATTERV,
    HALO_COLL_ALLGATHER,
    HALO_COLL_ALLGATHERV,
    HALO_COLL_ALLTOALL,
    HALO_COLL_ALLTOALLV,
    HALO_COLL_ALLTOALLW,
    HALO_COLL_REDUCE,
    HALO_COLL_ALLREDUCE,
    HALO_COLL_REDUCE_SCATTER,
    HALO_COLL_REDUCE_SCATTER_BLOCK,
    HALO_COLL_SCAN,
    HALO_COLL_EXSCAN,
    /* Neighborhood collectives: on the process topology of the
     * communicator (neighbor_linear.c). */
    HALO_COLL_NEIGHBOR_ALLGATHER,
    HALO_COLL_NEIGHBOR_ALLGATHERV,
    HALO_COLL_NEIGHBOR_ALLTOALL,
    HALO_COLL_NEIGHBOR_ALLTOALLV,
    HALO_COLL_NEIGHBOR_ALLTOALLW,
    HALO_COLL_NKINDS
} halo_coll_kind_t;

/* A collective's arguments, as the user gave them (only the ones that are
 * significant at this rank are meaningful).
 *   data movement:  sbuf/scount/stype, rbuf/rcount/rtype, root;
 *   v forms:        scounts/sdispls, rcounts/rdispls, by rank, in elements
 *                   of stype/rtype; Reduce_scatter's counts in rcounts;
 *   w form:         counts, byte displacements and types by rank;
 *   bcast and reductions: buffer sbuf (reductions) and rbuf, count, type, op;
 *   neighborhood forms: as allgather(v) and alltoall(v,w), the arrays by
 *                   neighbor index (sends: destinations, receives: sources).
 * The arrays are read while the schedule is built, never after. */
typedef struct halo_coll_args {
    halo_coll_kind_t kind;
    int root;
    const void *sbuf;
    void *rbuf;
    MPI_Count scount, rcount, count;
    MPI_Datatype stype, rtype, type;
    MPI_Op op;
    const MPI_Count *scounts, *rcounts;
    const MPI_Aint *sdispls, *rdispls;
    const MPI_Datatype *stypes, *rtypes;
} halo_coll_args_t;
/* No padding (the kept schedules of coll_api.c compare every field up to
 * the arrays: a new field must join that comparison). */
_Static_assert(sizeof(halo_coll_args_t) == 2 * sizeof(int) + 15 * sizeof(void *), "halo_coll_args_t has padding");

typedef int halo_coll_build_fn_t(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p);

/* ---------------------------------------------------------------- helpers (coll_util.c) */

/* Whether a root sending `receivers` ranks blocks of `bytes` each sends
 * them by rendezvous (halo_sched_send_rdv) rather than eagerly: where
 * ranks outnumber the cores, an eager fan-out has the root copy every
 * block into the transport while its receivers wait their turn for the
 * CPU, and a rendezvous has each receiver copy its own. */
bool halo_coll_fanout_rdv(MPI_Count bytes, int receivers);

static inline int halo_pof2_floor(int p)
{
    int q = 1;
    while (q * 2 <= p)
        q *= 2;
    return q;
}
static inline bool halo_is_pof2(int p)
{
    return p > 0 && (p & (p - 1)) == 0;
}

/* Scratch laid out like a user buffer of `count` elements of dt: the
 * reference points where the buffer's address would, so element i is at
 * i * extent and the type's holes are in the scratch too. */
halo_bref_t halo_sched_span(halo_sched_t **s_p, MPI_Count count, MPI_Datatype type);

/* Element counts of a vector of `count` elements cut in `nblocks` blocks
 * as equal as can be (the first count % nblocks get one more): block i
 * starts at element halo_block_start(count, nblocks, i). */
static inline MPI_Count halo_block_start(MPI_Count count, int nblocks, int i)
{
    MPI_Count base = count / nblocks, rem = count % nblocks;
    return (MPI_Count)i * base + (i < rem ? i : rem);
}

/* The bytes of (buf, count, type) as one contiguous run that messages can
 * cut anywhere: the buffer itself when the type is contiguous, else a
 * scratch copy. With `load` set the scratch copy is filled from the buffer
 * in `round` (its local steps); halo_sched_unstage copies it back. */
halo_bref_t halo_sched_stage(halo_sched_t **s_p, int round, void *buf, MPI_Count count,
                             MPI_Datatype type, bool load);
void halo_sched_unstage(halo_sched_t **s_p, int round, halo_bref_t staged, void *buf,
                        MPI_Count count, MPI_Datatype type);

static inline MPI_Count halo_type_size(MPI_Datatype t)
{
    return halo_dtype_ptr(t)->size;
}
static inline MPI_Aint halo_type_extent(MPI_Datatype t)
{
    return (MPI_Aint)halo_dtype_ptr(t)->extent;
}
static inline bool halo_op_commutes(MPI_Op op)
{
    return halo_op_ptr(op)->commutative != 0;
}

/* Alltoall, -v and -w seen the same way: the block this rank sends to, and
 * receives from, `peer` (address, count, datatype). */
void halo_a2a_send_block(const halo_coll_args_t *a, int p, int peer, halo_bref_t *buf_p,
                         MPI_Count *count_p, MPI_Datatype *type_p);
void halo_a2a_recv_block(const halo_coll_args_t *a, int p, int peer, halo_bref_t *buf_p,
                         MPI_Count *count_p, MPI_Datatype *type_p);
/* In place: copies every block but this rank's own out of the receive
 * buffer into scratch (packed, in `round`), so that the sends can read it
 * while receives overwrite the buffer; the copies' references go to
 * out[peer] (bytes, MPI_BYTE). */
void halo_a2a_stage_in_place(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p,
                             int round, halo_bref_t *out, MPI_Count *bytes);
/* HALO_COLL_SCRATCH_MAX: the scratch an in-place collective may take
 * before it switches to a form with bounded scratch. */
MPI_Count halo_coll_scratch_max(void);
/* For an in-place call: true when it is an Alltoall whose staging would
 * take more than HALO_COLL_SCRATCH_MAX; the linear and pairwise exchanges
 * then hand it to halo_alltoall_inplace_pairs (the same answer on every
 * rank, since the block size is). */
bool halo_a2a_in_place_too_big(const halo_coll_args_t *a, halo_comm_t *c);
int halo_alltoall_inplace_pairs(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p);

/* Gather(v) and allgather(v) seen the same way: count and element
 * displacement of `rank`'s block in the receive buffer. */
static inline MPI_Count halo_ag_count(const halo_coll_args_t *a, int rank)
{
    return a->rcounts ? a->rcounts[rank] : a->rcount;
}
static inline MPI_Aint halo_ag_displ(const halo_coll_args_t *a, int rank)
{
    return a->rdispls ? a->rdispls[rank] : (MPI_Aint)rank * (MPI_Aint)a->rcount;
}
/* For trees of commutative operations on one node where the ranks
 * outnumber the CPUs: the communicator's ranks in an order that keeps the
 * ranks bound to one CPU side by side (the root's CPU first, the root
 * first), so that a binomial tree's first levels pair ranks of one CPU
 * and the CPUs work at once. Fills order[0..size) and returns true; false
 * where that order does not apply (several nodes, fewer than 4 ranks or
 * no more ranks than CPUs, a rank not bound to one CPU, no CPU holding two
 * of the ranks). Every rank gets the same order. */
bool halo_coll_cpu_order(halo_comm_t *c, int root, int *order);
/* Reduce_scatter and reduce_scatter_block: count of rank's block. */
static inline MPI_Count halo_rs_count(const halo_coll_args_t *a, int rank)
{
    return a->rcounts ? a->rcounts[rank] : a->count;
}

/* The reduce-scatter phase that Rabenseifner's Reduce and Allreduce share
 * (allreduce_rabenseifner.c). With pof2 the largest power of two <= p and
 * rem = p - pof2, the first 2 * rem ranks fold pairwise (the even rank's
 * vector goes to the odd one, which stands for both), then the pof2
 * remaining ranks ("new ranks") halve the vector by recursive halving at
 * distances 1, 2, 4, ...: the vector is cut in pof2 blocks of elements, and
 * after step i a new rank holds the reduction over its group of 2^(i+1)
 * ranks of blocks lo[i] .. hi[i]-1. Groups are runs of consecutive ranks
 * and the lower one stays on the left, so the result keeps rank order. */
typedef struct halo_rab {
    int pof2, rem;
    int newrank;          /* -1: folded away (an even rank below 2 * rem) */
    int nsteps;           /* lg pof2 */
    int lo[31], hi[31];
    int round;            /* first round after the phase */
} halo_rab_t;

static inline int halo_rab_real(const halo_rab_t *r, int newrank)
{
    return newrank < r->rem ? 2 * newrank + 1 : newrank + r->rem;
}
/* First element of block j of the pof2 blocks. */
static inline MPI_Count halo_rab_elem(const halo_rab_t *r, MPI_Count count, int j)
{
    return halo_block_start(count, r->pof2, j);
}
/* The reduce-scatter phase into acc (count elements; tmp: scratch of the
 * same size). Our contribution is read from own; when own is not acc,
 * acc need not hold anything yet: each half we keep is received there and
 * ours reduced into it, so the caller does not copy its vector first. */
void halo_rab_reduce_scatter(halo_sched_t **s_p, halo_comm_t *c, halo_bref_t own, halo_bref_t acc,
                             halo_bref_t tmp, MPI_Count count, MPI_Datatype type, MPI_Op op, int round,
                             halo_rab_t *r);

/* ---------------------------------------------------------------- algorithms */

halo_coll_build_fn_t halo_barrier_dissemination;

halo_coll_build_fn_t halo_bcast_binomial;
halo_coll_build_fn_t halo_bcast_scatter_allgather;
halo_coll_build_fn_t halo_bcast_pipeline;
halo_coll_build_fn_t halo_bcast_linear;

halo_coll_build_fn_t halo_gather_linear;      /* gather and gatherv */
halo_coll_build_fn_t halo_gather_binomial;
halo_coll_build_fn_t halo_scatter_linear;     /* scatter and scatterv */
halo_coll_build_fn_t halo_scatter_binomial;

halo_coll_build_fn_t halo_allgather_ring;
halo_coll_build_fn_t halo_allgather_linear;   /* and allgatherv */
halo_coll_build_fn_t halo_allgatherv_ring;
halo_coll_build_fn_t halo_allgather_recursive_doubling;
halo_coll_build_fn_t halo_allgatherv_recursive_doubling;
halo_coll_build_fn_t halo_allgather_bruck;    /* allgather and allgatherv */

halo_coll_build_fn_t halo_alltoall_bruck;
halo_coll_build_fn_t halo_alltoall_pairwise;  /* alltoall, -v, -w */
halo_coll_build_fn_t halo_alltoall_linear;    /* alltoall, -v, -w */

halo_coll_build_fn_t halo_reduce_binomial;
halo_coll_build_fn_t halo_reduce_rabenseifner;
halo_coll_build_fn_t halo_allreduce_recursive_doubling;
halo_coll_build_fn_t halo_allreduce_rabenseifner;
halo_coll_build_fn_t halo_allreduce_ring;
halo_coll_build_fn_t halo_reduce_scatter_recursive_halving;   /* and _block */
halo_coll_build_fn_t halo_reduce_scatter_pairwise;            /* and _block */

halo_coll_build_fn_t halo_scan_linear;
halo_coll_build_fn_t halo_scan_recursive_doubling;
halo_coll_build_fn_t halo_exscan_linear;
halo_coll_build_fn_t halo_exscan_recursive_doubling;
halo_coll_build_fn_t halo_scan_pipeline;
halo_coll_build_fn_t halo_exscan_pipeline;

/* Neighborhood collectives (neighbor_linear.c): every receive and send at
 * once. */
halo_coll_build_fn_t halo_neighbor_linear;
static inline bool halo_coll_is_neighbor(halo_coll_kind_t k)
{
    return k >= HALO_COLL_NEIGHBOR_ALLGATHER && k <= HALO_COLL_NEIGHBOR_ALLTOALLW;
}

/* Shared memory, one node (shm_*.c; building blocks in coll/shm.h). */
halo_coll_build_fn_t halo_barrier_shm;
halo_coll_build_fn_t halo_barrier_shm_fan;
halo_coll_build_fn_t halo_bcast_shm;
halo_coll_build_fn_t halo_bcast_cma;
halo_coll_build_fn_t halo_gather_cma;
halo_coll_build_fn_t halo_scatter_cma;
halo_coll_build_fn_t halo_reduce_shm;
halo_coll_build_fn_t halo_allreduce_shm;
halo_coll_build_fn_t halo_allreduce_shm_rsag;
halo_coll_build_fn_t halo_reduce_scatter_shm;   /* and _block */
halo_coll_build_fn_t halo_scan_shm;
halo_coll_build_fn_t halo_exscan_shm;
halo_coll_build_fn_t halo_scan_shm_parts;
halo_coll_build_fn_t halo_exscan_shm_parts;
halo_coll_build_fn_t halo_gather_shm;      /* gather and gatherv */
halo_coll_build_fn_t halo_scatter_shm;     /* scatter and scatterv */
halo_coll_build_fn_t halo_gatherv_shm_linear;
halo_coll_build_fn_t halo_scatterv_shm_linear;
halo_coll_build_fn_t halo_allgather_shm;   /* allgather and allgatherv */
halo_coll_build_fn_t halo_alltoall_shm;
halo_coll_build_fn_t halo_alltoallv_shm_linear;   /* alltoallv and alltoallw */
/* Single-copy reads and writes of the other members' buffers. */
halo_coll_build_fn_t halo_allreduce_cma;
halo_coll_build_fn_t halo_allgather_cma;   /* allgather and allgatherv */
halo_coll_build_fn_t halo_alltoall_cma;

/* Two levels, several nodes (two_level_*.c). */
halo_coll_build_fn_t halo_barrier_two_level;
halo_coll_build_fn_t halo_bcast_two_level;
halo_coll_build_fn_t halo_reduce_two_level;
halo_coll_build_fn_t halo_allreduce_two_level;

/* ---------------------------------------------------------------- intercommunicators (inter_*.c) */

/* A collective on an intercommunicator runs as one schedule on its bridge:
 * a hidden intracommunicator over both groups (core/intercomm.c), so that
 * one schedule, with one tag, names local and remote processes alike. The
 * builders below see the intercommunicator through halo_inter_t and name
 * peers by bridge rank (halo_inter_lr, halo_inter_rr). Arguments follow
 * the intercommunicator rules: root is MPI_ROOT, MPI_PROC_NULL or a remote
 * rank; v and w arrays are by remote rank (Reduce_scatter's by local rank);
 * results come from the remote group. */
halo_comm_t *halo_intercomm_bridge(halo_comm_t *inter);

typedef struct halo_inter {
    halo_comm_t *local;   /* the intracommunicator over the local group */
    int p, q;             /* local and remote group sizes */
    int me;               /* rank in the local group */
    int loff, roff;       /* bridge ranks of local rank 0 and of remote rank 0 */
} halo_inter_t;

static inline int halo_inter_lr(const halo_inter_t *x, int local_rank)
{
    return x->loff + local_rank;
}
static inline int halo_inter_rr(const halo_inter_t *x, int remote_rank)
{
    return x->roff + remote_rank;
}

typedef int halo_inter_build_fn_t(const halo_coll_args_t *a, const halo_inter_t *x, halo_sched_t **s_p);

/* Builds the schedule of a collective on intercommunicator c (made by the
 * caller on c's bridge). Scan and Exscan: MPI_ERR_COMM. */
int halo_inter_build(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p);

/* Appends an intracommunicator algorithm run over the local group, its
 * rounds shifted to start at `base` and its peers renamed to bridge
 * ranks; *next_p is the first round after its steps (base if none). The
 * algorithm's buffers must be user buffers (it names them by address). */
void halo_inter_local_phase(halo_coll_build_fn_t *build, const halo_coll_args_t *a, const halo_inter_t *x,
                            halo_sched_t **s_p, int base, int *next_p);
/* Broadcast of a user buffer from local rank 0 over the local group, by
 * the algorithm that the tables choose for it. */
int halo_inter_local_bcast(const halo_inter_t *x, halo_sched_t **s_p, int base, void *buf,
                           MPI_Count count, MPI_Datatype type, int *next_p);
/* The local group's vectors (sbuf) reduced to local rank 0 in rank order,
 * by a binomial tree, from round 0: *res_p is where the result is at local
 * rank 0 (sbuf itself when the group has one process), *next_p the first
 * round after this rank's part. */
void halo_inter_local_reduce(const halo_inter_t *x, halo_sched_t **s_p, const void *sbuf, MPI_Count count,
                             MPI_Datatype type, MPI_Op op, halo_bref_t *res_p, int *next_p);

halo_inter_build_fn_t halo_inter_barrier;
halo_inter_build_fn_t halo_inter_bcast;
halo_inter_build_fn_t halo_inter_gather;           /* gather and gatherv */
halo_inter_build_fn_t halo_inter_scatter;          /* scatter and scatterv */
halo_inter_build_fn_t halo_inter_allgather;
halo_inter_build_fn_t halo_inter_allgatherv;
halo_inter_build_fn_t halo_inter_alltoall;         /* alltoall, -v, -w */
halo_inter_build_fn_t halo_inter_reduce;
halo_inter_build_fn_t halo_inter_allreduce;
halo_inter_build_fn_t halo_inter_reduce_scatter;   /* and _block */

#endif
