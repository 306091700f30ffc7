/* The registry of collective algorithms and the choice among them.
 *
 * coll_registry.c lists every algorithm once: its collective, its name
 * (what HALO_<COLL>_ALGORITHM and tuning files call it), its builder and its
 * restrictions. coll_select.c picks one per call: the algorithm forced by
 * HALO_<COLL>_ALGORITHM when its restrictions hold, else the first rule of
 * the collective's tuning table (built in, or from HALO_TUNING_FILE) that
 * matches the communicator size and message size and whose algorithm's
 * restrictions hold, else the first usable algorithm in the registry.
 *
 * Everything the choice depends on is the same on every rank of the
 * communicator (its size, the operation, counts that the standard makes
 * agree), so all ranks build matching schedules. */
#ifndef HALO_COLL_SELECT_H
#define HALO_COLL_SELECT_H

#include "coll/algos.h"

/* Restrictions (each must evaluate the same on every rank). */
enum {
    HALO_ALG_POF2 = 1u << 0,         /* communicator size a power of two */
    HALO_ALG_COMMUTATIVE = 1u << 1,  /* commutative operations only */
    HALO_ALG_ONE_NODE = 1u << 2,     /* all ranks on one node (shared-memory algorithms) */
    HALO_ALG_MULTI_NODE = 1u << 3,   /* ranks on two nodes or more (two-level algorithms) */
    HALO_ALG_SHM_TYPE = 1u << 4,     /* reductions through shared memory: an element of the
                                      * datatype fits a chunk (coll/shm.h) and its extent is
                                      * positive */
    HALO_ALG_NODE_ORDER = 1u << 5,   /* a commutative operation, or every node holds a block
                                      * of consecutive ranks (two-level reductions) */
    HALO_ALG_CMA = 1u << 6,          /* the node's ranks may read and write each other's
                                      * memory (halo_tr_cma_node) */
};

/* What the restrictions are checked against (the same on every rank). */
typedef struct halo_coll_facts {
    int p;            /* communicator size */
    int ppn;          /* ranks per node: the largest node group */
    bool commute;     /* the operation commutes (true when there is none) */
    bool one_node;    /* all ranks on one node */
    bool node_blocks; /* every node holds a block of consecutive ranks */
    bool shm_type;    /* see HALO_ALG_SHM_TYPE (true when there is no reduction) */
    bool flat;        /* among node leaders inside a two-level algorithm: no
                       * node-aware algorithm */
    bool oversub;     /* the node runs more ranks than it has processors online
                       * (false among node leaders, whose nodes may differ) */
    bool cma;         /* see HALO_ALG_CMA */
    bool bound;       /* every rank of the node is bound to one CPU (halo_tr_node_bound) */
} halo_coll_facts_t;

typedef struct halo_coll_algo {
    halo_coll_kind_t coll;
    const char *name;
    halo_coll_build_fn_t *build;
    unsigned restrictions;
    const char *cost;               /* the cost model, in one line */
} halo_coll_algo_t;

extern const halo_coll_algo_t halo_coll_algos[];
extern const int halo_coll_nalgos;

/* "allreduce", "reduce_scatter_block", ... and back (-1 if unknown). */
const char *halo_coll_kind_name(halo_coll_kind_t k);
int halo_coll_kind_from_name(const char *name);

const halo_coll_algo_t *halo_coll_algo_find(halo_coll_kind_t k, const char *name);
/* The facts of a call. */
void halo_coll_facts(const halo_coll_args_t *a, halo_comm_t *c, halo_coll_facts_t *f);
/* NULL when the restrictions hold, else the first one that does not (in words). */
const char *halo_coll_algo_unusable(const halo_coll_algo_t *al, const halo_coll_facts_t *f);
/* Restrictions in words ("power-of-two p, commutative op"), or "none". */
void halo_coll_restrictions_str(unsigned r, char *buf, size_t len);

/* The message size the tuning tables use for a call, in bytes (the same on
 * every rank): see docs/collectives.md. */
MPI_Count halo_coll_msg_bytes(const halo_coll_args_t *a, halo_comm_t *c);

const halo_coll_algo_t *halo_coll_select(const halo_coll_args_t *a, halo_comm_t *c);
/* Whether this node runs more ranks than it has processors online (the
 * "oversubscribed" of tuning rules; the same on every rank of the node). */
bool halo_coll_node_oversubscribed(void);
/* Whether the tuning table of `kind` (Gather, Scatter or Alltoall) on c
 * chooses its shared-memory algorithm for blocks of `bytes`, ignoring
 * HALO_<COLL>_ALGORITHM: the shm_linear Gatherv, Scatterv, Alltoallv and
 * Alltoallw ask it for each block, and both ends of a block get the same
 * answer. */
bool halo_coll_block_by_shm(halo_coll_kind_t kind, halo_comm_t *c, MPI_Count bytes);
/* The algorithm among the node leaders of a two-level algorithm: `view` is
 * the communicator seen as its leaders (size and rank among them). By the
 * tables, skipping node-aware algorithms and HALO_<COLL>_ALGORITHM. */
const halo_coll_algo_t *halo_coll_select_flat(const halo_coll_args_t *a, halo_comm_t *view);
/* Loads the configuration (tuning file) once; safe to call again. */
void halo_coll_select_init(void);

/* The built-in tuning table, as JSON text (tuning_default.c). */
extern const char halo_coll_tuning_default[];

#endif
