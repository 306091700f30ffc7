/* Communicators.
 *
 * A communicator owns a context id; its point-to-point traffic travels on
 * ctx | HALO_CTX_P2P and its collective traffic on ctx | HALO_CTX_COLL, so
 * the two never match each other. New ids are agreed with an allreduce
 * (core/context.c). */
#ifndef HALO_CORE_COMM_H
#define HALO_CORE_COMM_H

#include "core/attr.h"
#include "core/group.h"

struct halo_match;
struct halo_errhandler;
struct halo_info;

enum {
    HALO_CTX_P2P = 0,
    HALO_CTX_COLL = 1,
    HALO_CTX_GROUP = 2,  /* collectives among a group only (Comm_create_group) */
    HALO_CTX_PART = 3,   /* partitioned point-to-point (pt2pt/part.c), set up at first use */
    HALO_CTX_SHIFT = 2,
};

typedef struct halo_topo halo_topo_t;

typedef struct halo_comm {
    halo_obj_t hdr;
    uint32_t ctx;                /* context id << HALO_CTX_SHIFT */
    int rank, size;
    int peer_size;               /* ranks a message may name: size, or the remote size */
    int is_inter;
    halo_group_t *group;
    halo_group_t *remote_group;  /* intercommunicators */
    const int *world;            /* world rank of each rank (group->world) */
    struct halo_errhandler *errh;
    halo_attr_t *attrs;
    struct halo_info *info;
    struct halo_match *match[4]; /* by HALO_CTX_P2P / _COLL / _GROUP / _PART */
    uint64_t coll_seq;           /* blocking collectives so far (sequence numbers, coll/sched.h:
                                  * 2 n; tags: their low 31 bits; shared-memory epochs: all
                                  * of it); with coll_tag_fixed, the sequence number itself */
    uint64_t coll_nbseq;         /* nonblocking and persistent ones started (numbers 2 n + 1) */
    uint32_t coll_sub;           /* sub-context of its collective traffic */
    int coll_tag_fixed;          /* every collective uses coll_seq as its tag */
    halo_topo_t *topo;
    struct halo_coll_state *coll_state;  /* collectives' private state (coll/shm.c), lazily */
    struct halo_coll_keep *coll_keep;    /* blocking schedules kept for reuse (coll/coll_api.c) */
    struct halo_part_ords *part_ords;    /* partitioned inits counted per peer and tag (pt2pt/part.c) */
    struct halo_comm *local;     /* intercommunicators: an intracommunicator over the local group */
    const void *session;         /* the session it derives from (a key for its buffered-send
                                  * buffer, never dereferenced), or NULL */
    char name[MPI_MAX_OBJECT_NAME];
} halo_comm_t;

extern halo_comm_t halo_comm_world, halo_comm_self;

void halo_comm_init(void);      /* world and self, after the transports are up */
void halo_comm_finalize(void);

static inline halo_comm_t *halo_comm_ptr(MPI_Comm c)
{
    return (halo_comm_t *)halo_obj_fast(c);
}
/* Tells the argument checks (binding/checks.c) that a communicator
 * handle is no longer valid. */
void halo_chk_comm_forget(MPI_Comm c);

/* validated, or NULL */
static inline halo_comm_t *halo_comm_get(MPI_Comm c)
{
    return halo_obj_lookup(HALO_KIND_COMM, c);
}

static inline MPI_Comm halo_comm_handle(halo_comm_t *c)
{
    return (MPI_Comm)halo_obj_handle(c);
}

/* A communicator over `group` (which it takes a reference on) with context
 * id ctx; rank and sizes derived from the group. Does not agree on anything. */
halo_comm_t *halo_comm_create_local(halo_group_t *group, uint32_t ctx, halo_comm_t *parent);
/* Fills in a communicator's group, sizes and matching state for ctx. */
void halo_comm_setup(halo_comm_t *c, halo_group_t *group, uint32_t ctx);
void halo_comm_release(halo_comm_t *c);
struct halo_info *halo_comm_hints(const struct halo_info *in);

/* Agrees on a new context id among the members of comm (collective). */
int halo_context_alloc(halo_comm_t *comm, uint32_t *ctx_p);
/* Marks an id agreed elsewhere (with another group) as used here. */
void halo_context_claim(uint32_t ctx);
/* Pieces of an agreement (ids unshifted; context.c tells the protocol):
 * a reserved candidate (attempt: how many tries failed before); a range
 * check; whether this process takes the agreed id (releasing its own
 * candidate `mine`); giving back an id taken when the confirmation failed;
 * releasing a candidate of an agreement that stopped. */
uint32_t halo_context_propose(int attempt);
int halo_context_check(uint32_t id);
bool halo_context_try(uint32_t id, uint32_t mine);
void halo_context_untake(uint32_t id);
void halo_context_unreserve(uint32_t id);

/* Agrees on an id among the members of group only, which are all in
 * parent (Comm_create_group): point-to-point on the parent's group
 * sub-context, in the parent's rank numbering, tagged with tag. */
int halo_context_alloc_group(halo_comm_t *parent, halo_group_t *group, int tag, uint32_t *ctx_p);
/* MPI_Comm_idup's agreement, without blocking: *newcomm_p is usable once
 * the request completes. */
int halo_comm_idup_start(halo_comm_t *old, struct halo_info *info, halo_comm_t **newcomm_p,
                         MPI_Request *request);

/* This process's neighbors in c's process topology, as the neighborhood
 * collectives see them (core/topo.c): receive block i comes from
 * sources[i], send block j goes to destinations[j]. Cartesian: for each
 * dimension its -1 then its +1 neighbor, in both lists, MPI_PROC_NULL
 * where a non-periodic dimension ends; graph: MPI_Graph_neighbors, in both
 * lists; distributed graph: MPI_Dist_graph_neighbors. The arrays belong to
 * the caller (halo_neighbors_free). MPI_ERR_TOPOLOGY when c has none. */
typedef struct halo_neighbors {
    int kind;                  /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    int indegree, outdegree;
    int *sources, *destinations;
} halo_neighbors_t;
int halo_topo_neighbors(halo_comm_t *c, halo_neighbors_t *nb);
/* Just the degrees (either pointer may be NULL); the same errors. */
int halo_topo_degrees(halo_comm_t *c, int *indegree, int *outdegree);
void halo_neighbors_free(halo_neighbors_t *nb);

int halo_intercomm_dup(halo_comm_t *old, halo_comm_t **new_p);
/* Makes `c`, whose local group and error handler are set, the
 * intercommunicator to `remote` on context `ctx`. */
void halo_intercomm_adopt(halo_comm_t *c, halo_group_t *remote, uint32_t ctx);
/* A new intercommunicator over two groups on an agreed context id. */
halo_comm_t *halo_intercomm_new(halo_group_t *local, halo_group_t *remote, uint32_t ctx,
                               struct halo_errhandler *errh);
void halo_intercomm_destroy(halo_comm_t *c);
/* Readies this process to talk with processes of other jobs (dynproc.c):
 * it listens for them and watches their connections; MPI error class. */
int halo_dynproc_reach(void);
int halo_intercomm_barrier(halo_comm_t *c);

#endif
