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
} halo_step_kind_t;

typedef struct halo_bref {
    int32_t scratch;    /* 1: offset into the scratch area; 0: absolute address */
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
} halo_step_t;

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
    MPI_Comm comm;
    uint64_t scratch_off;    /* from the schedule's start */
    uint64_t scratch_bytes;
    struct halo_request *owner;   /* request completed at the end (nonblocking) */
    halo_step_t steps[];
} halo_sched_t;

/* A new empty schedule for a collective on comm (takes the next collective
 * sequence number). */
halo_sched_t *halo_sched_new(halo_comm_t *comm);
/* The same with a tag taken earlier (persistent collectives take one at
 * initialization and use it for every start). */
halo_sched_t *halo_sched_new_tagged(halo_comm_t *comm, int32_t tag);
/* Takes the communicator's next collective sequence number as a tag. */
int32_t halo_sched_next_tag(halo_comm_t *comm);
/* Reserves scratch bytes; returns their offset (64-byte aligned). */
int64_t halo_sched_scratch(halo_sched_t **s_p, uint64_t bytes);
void halo_sched_send(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer);
void halo_sched_recv(halo_sched_t **s_p, int round, halo_bref_t buf, MPI_Count count,
                     MPI_Datatype type, int peer);
void halo_sched_copy(halo_sched_t **s_p, int round, halo_bref_t src, MPI_Count scount,
                     MPI_Datatype stype, halo_bref_t dst, MPI_Count dcount, MPI_Datatype dtype);
void halo_sched_reduce(halo_sched_t **s_p, int round, halo_bref_t in, halo_bref_t inout,
                       MPI_Count count, MPI_Datatype type, MPI_Op op);

static inline halo_bref_t halo_addr(const void *p)
{
    return (halo_bref_t){0, (int64_t)(intptr_t)p};
}
static inline halo_bref_t halo_scr(int64_t off)
{
    return (halo_bref_t){1, off};
}
static inline halo_bref_t halo_bref_add(halo_bref_t b, int64_t bytes)
{
    b.at += bytes;
    return b;
}

/* Runs the schedule to completion (blocking collectives); returns its error. */
int halo_sched_run(halo_sched_t *s);
/* Starts it under a request that completes with it. */
void halo_sched_start(halo_sched_t *s, struct halo_request *owner);
/* Makes a finished schedule ready to run again (persistent collectives). */
void halo_sched_reset(halo_sched_t *s);
void halo_sched_free(halo_sched_t *s);

#endif
