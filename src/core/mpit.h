/* The tools information interface: what its files share (core/mpit.c:
 * setup and control variables; core/mpit_pvars.c: performance variables,
 * their sessions, categories; core/mpit_events.c: events and their
 * source), and the events the library raises. */
#ifndef HALO_CORE_MPIT_H
#define HALO_CORE_MPIT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mpi.h"

extern _Atomic int halo_t_refs;        /* MPI_T_init_thread calls not yet matched by MPI_T_finalize */
extern pthread_mutex_t halo_t_lock;    /* guards the lists of live handles of the interface */

/* The standard's way of returning a string into (out, *len) (core/mpit.c). */
void halo_t_string(const char *str, char *out, int *len);
/* The last MPI_T_finalize: every event registration, performance-variable
 * session and handle goes (caller holds halo_t_lock). */
void halo_t_events_drop(void);
void halo_t_pvars_drop(void);
/* The number of control variables (core/mpit.c). */
int halo_t_cvar_num(void);

#define NEED_INIT()                                                                                      \
    do {                                                                                                 \
        if (halo_t_refs == 0)                                                                            \
            return MPI_T_ERR_NOT_INITIALIZED;                                                            \
    } while (0)
#define NEED_PTR(p)                                                                                      \
    do {                                                                                                 \
        if (!(p))                                                                                        \
            return MPI_T_ERR_INVALID;                                                                    \
    } while (0)

/* The events, in the order of their indices. */
enum {
    HALO_T_EV_MESSAGE_ARRIVED,      /* a message reached this process (matched or queued) */
    HALO_T_EV_UNEXPECTED_RECEIVED,  /* a receive took a message from the unexpected queue */
    HALO_T_EV_COUNT
};

/* The data of both events, laid out as their displacements say. */
typedef struct halo_t_msg_event {
    int32_t source;     /* the sender's rank in the communicator */
    int32_t tag;
    MPI_Count bytes;    /* the message's size */
    uint32_t context;   /* the context it travels on (a communicator has one for its messages) */
    int32_t matched;    /* arrived: 1 when a posted receive took it, 0 when queued */
} halo_t_msg_event_t;

/* Registrations of each event: a raising site tests this first, so an
 * event nobody registered for costs a load and a branch. */
extern _Atomic int halo_t_ev_live[HALO_T_EV_COUNT];

static inline bool halo_t_event_live(int ev)
{
    return __builtin_expect(atomic_load_explicit(&halo_t_ev_live[ev], memory_order_relaxed) != 0, 0);
}

/* Calls the callbacks registered for ev (from inside the library: those
 * registered for MPI_T_CB_REQUIRE_MPI_RESTRICTED or a stricter level). */
void halo_t_event_emit(int ev, const void *data);

#endif
