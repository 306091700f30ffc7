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
};

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
/* NULL when the restrictions hold, else the first one that does not (in words). */
const char *halo_coll_algo_unusable(const halo_coll_algo_t *al, const halo_coll_args_t *a,
                                    halo_comm_t *c);
/* The same from the facts themselves: communicator size, whether the
 * operation commutes (true when there is none), whether all ranks share
 * a node. */
const char *halo_coll_algo_unusable_at(const halo_coll_algo_t *al, int p, bool commute, bool one_node);
bool halo_coll_comm_one_node(halo_comm_t *c);
/* Restrictions in words ("power-of-two p, commutative op"), or "none". */
void halo_coll_restrictions_str(unsigned r, char *buf, size_t len);

/* The message size the tuning tables use for a call, in bytes (the same on
 * every rank): see docs/collectives.md. */
MPI_Count halo_coll_msg_bytes(const halo_coll_args_t *a, halo_comm_t *c);

const halo_coll_algo_t *halo_coll_select(const halo_coll_args_t *a, halo_comm_t *c);
/* Loads the configuration (tuning file) once; safe to call again. */
void halo_coll_select_init(void);

/* The built-in tuning table, as JSON text (tuning_default.c). */
extern const char halo_coll_tuning_default[];

#endif
