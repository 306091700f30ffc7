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
    uint64_t coll_seq;           /* per-communicator collective sequence number (tags:
                                  * its low 31 bits; shared-memory epochs: all of it) */
    uint32_t coll_sub;           /* sub-context of its collective traffic */
    int coll_tag_fixed;          /* every collective uses coll_seq as its tag */
    halo_topo_t *topo;
    struct halo_coll_state *coll_state;  /* collectives' private state (coll/shm.c), lazily */
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
halo_comm_t *halo_comm_get(MPI_Comm c);   /* validated, or NULL */

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

/* Agrees on a new context id among the members of comm (collective). */
int halo_context_alloc(halo_comm_t *comm, uint32_t *ctx_p);
void halo_context_free(uint32_t ctx);
/* Marks an id agreed elsewhere (with another group) as used here. */
void halo_context_claim(uint32_t ctx);
/* Pieces of an agreement (ids unshifted): this process's candidate; a
 * range check; whether this process may take the agreed id (reserving it
 * at MPI_THREAD_MULTIPLE, where a second exchange must confirm that every
 * member may: otherwise retry). */
uint32_t halo_context_propose(void);
int halo_context_check(uint32_t id);
bool halo_context_try(uint32_t id);

/* Agrees on an id among the members of group only, which are all in
 * parent (Comm_create_group): point-to-point on the parent's group
 * sub-context, in the parent's rank numbering, tagged with tag. */
int halo_context_alloc_group(halo_comm_t *parent, halo_group_t *group, int tag, uint32_t *ctx_p);
/* MPI_Comm_idup's agreement, without blocking: *newcomm_p is usable once
 * the request completes. */
int halo_comm_idup_start(halo_comm_t *old, struct halo_info *info, halo_comm_t **newcomm_p,
                         MPI_Request *request);

int halo_intercomm_dup(halo_comm_t *old, halo_comm_t **new_p);
void halo_intercomm_destroy(halo_comm_t *c);
int halo_intercomm_barrier(halo_comm_t *c);

#endif
