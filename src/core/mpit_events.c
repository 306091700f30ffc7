/* Events of the tools information interface (MPI 5.0 section 15.3.8).
 *
 * One source, "halo_clock": the process's CLOCK_MONOTONIC in nanoseconds,
 * ordered. Two events, both raised where point-to-point messages meet
 * their receives (pt2pt/protocol.c), bound to no object:
 *   0 halo_message_arrived: a message (or the announcement of a large one)
 *     reached this process; elements source, tag, bytes, context, matched
 *     (1: a posted receive took it, 0: it waits in the unexpected queue);
 *   1 halo_unexpected_received: a receive took a message that had waited
 *     in the unexpected queue; elements source, tag, bytes, context.
 * Internal traffic (collectives' messages) raises them too, on its own
 * contexts.
 *
 * Callbacks run synchronously, inside the MPI call that progressed the
 * message, with the library's lock held: a callback registered for
 * MPI_T_CB_REQUIRE_MPI_RESTRICTED or a stricter level is called (the least
 * strict of those registered), with cb_safety MPI_T_CB_REQUIRE_MPI_RESTRICTED;
 * one registered only for MPI_T_CB_REQUIRE_NONE is not. An event that
 * finds no callback it may call on a registration is dropped for it: the
 * registration's dropped-event handler, if set, is called at once with a
 * count of 1 (and the user data of its MPI_T_CB_REQUIRE_NONE callback, if
 * any). The event
 * instance a callback receives is valid during that callback, in its
 * thread. A registration freed while a callback runs (from it, or from
 * another thread) gets no call after the free returns; its free callback
 * runs once no callback of any event is running. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binding/api_gen.h"
#include "core/info.h"
#include "core/mpit.h"

_Atomic int halo_t_ev_live[HALO_T_EV_COUNT];

/* ---------------------------------------------------------------- the definitions */

#define EV_MAX_ELEMS 5

typedef struct ev_def {
    const char *name, *desc;
    int nelem;
    const char *elem[EV_MAX_ELEMS];
} ev_def_t;

static const ev_def_t ev_defs[HALO_T_EV_COUNT] = {
    [HALO_T_EV_MESSAGE_ARRIVED] = {"halo_message_arrived",
                                   "A point-to-point message (or the announcement of a large one) reached "
                                   "this process: the sender's rank in the communicator, the tag, the size "
                                   "in bytes, the context, and 1 if a posted receive took it, 0 if it was "
                                   "queued as unexpected",
                                   5, {"source", "tag", "bytes", "context", "matched"}},
    [HALO_T_EV_UNEXPECTED_RECEIVED] = {"halo_unexpected_received",
                                       "A receive took a message that had waited in the unexpected queue: "
                                       "the sender's rank in the communicator, the tag, the size in bytes, "
                                       "the context",
                                       4, {"source", "tag", "bytes", "context"}},
};

/* Element i of every event: its type and place in halo_t_msg_event_t. */
static MPI_Datatype elem_type(int i)
{
    static const MPI_Datatype t[EV_MAX_ELEMS] = {MPI_INT32_T, MPI_INT32_T, MPI_COUNT, MPI_UINT32_T, MPI_INT32_T};
    return t[i];
}

static const size_t elem_off[EV_MAX_ELEMS] = {
    offsetof(halo_t_msg_event_t, source),  offsetof(halo_t_msg_event_t, tag),
    offsetof(halo_t_msg_event_t, bytes),   offsetof(halo_t_msg_event_t, context),
    offsetof(halo_t_msg_event_t, matched),
};
static const size_t elem_size[EV_MAX_ELEMS] = {4, 4, sizeof(MPI_Count), 4, 4};

static MPI_Count clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (MPI_Count)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A new info object for the tool: a copy of src (NULL: empty). */
static int info_copy(const halo_info_t *src, MPI_Info *out)
{
    halo_info_t *in = halo_info_dup(src);
    if (!in)
        return MPI_T_ERR_MEMORY;
    *out = (MPI_Info)in;
    return MPI_SUCCESS;
}

/* Every key of the tool's info h set in *dst (created when NULL). The
 * handle is checked here: this interface returns its errors, never raises
 * them on a handler. */
static int info_merge(halo_info_t **dst, MPI_Info h)
{
    if (h == MPI_INFO_NULL)
        return MPI_SUCCESS;
    const halo_info_t *src = halo_obj_lookup(HALO_KIND_INFO, h);
    if (!src)
        return MPI_T_ERR_INVALID;
    if (!*dst && !(*dst = halo_info_new()))
        return MPI_T_ERR_MEMORY;
    for (const halo_info_entry_t *e = src->head; e; e = e->next)
        halo_info_set(*dst, e->key, e->value);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- the source */

int halo_api_t_source_get_num(int *num_sources)
{
    NEED_INIT();
    NEED_PTR(num_sources);
    *num_sources = 1;
    return MPI_SUCCESS;
}

int halo_api_t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                               MPI_T_source_order *ordering, MPI_Count *ticks_per_second, MPI_Count *max_ticks,
                               MPI_Info *info)
{
    NEED_INIT();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    halo_t_string("halo_clock", name, name_len);
    halo_t_string("The process's CLOCK_MONOTONIC in nanoseconds; every event of Halo takes its time "
                  "stamp from it",
                  desc, desc_len);
    if (ordering)
        *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second)
        *ticks_per_second = 1000000000;
    if (max_ticks)
        *max_ticks = INT64_MAX;
    if (info)
        return info_copy(NULL, info);
    return MPI_SUCCESS;
}

int halo_api_t_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    NEED_INIT();
    if (source_index != 0)
        return MPI_T_ERR_INVALID_INDEX;
    NEED_PTR(timestamp);
    *timestamp = clock_ns();
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- describing events */

int halo_api_t_event_get_num(int *num_events)
{
    NEED_INIT();
    NEED_PTR(num_events);
    *num_events = HALO_T_EV_COUNT;
    return MPI_SUCCESS;
}

/* num_elements: on entry the length of the two arrays (either may be
 * NULL), on return the event's number of elements; no more entries than
 * the arrays hold are written. */
int halo_api_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                              MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                              int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                              int *desc_len, int *bind)
{
    NEED_INIT();
    if (event_index < 0 || event_index >= HALO_T_EV_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    const ev_def_t *d = &ev_defs[event_index];
    halo_t_string(d->name, name, name_len);
    halo_t_string(d->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_DETAIL;
    if (num_elements) {
        int room = *num_elements < d->nelem ? *num_elements : d->nelem;
        for (int i = 0; i < room; i++) {
            if (array_of_datatypes)
                array_of_datatypes[i] = elem_type(i);
            if (array_of_displacements)
                array_of_displacements[i] = (MPI_Aint)elem_off[i];
        }
        *num_elements = d->nelem;
    }
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (info)
        return info_copy(NULL, info);
    return MPI_SUCCESS;
}

int halo_api_t_event_get_index(const char *name, int *event_index)
{
    NEED_INIT();
    NEED_PTR(name);
    NEED_PTR(event_index);
    for (int i = 0; i < HALO_T_EV_COUNT; i++)
        if (!strcmp(ev_defs[i].name, name)) {
            *event_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* ---------------------------------------------------------------- registrations */

/* The four safety levels, least strict first. */
#define NLEVELS 4
static const MPI_T_cb_safety levels[NLEVELS] = {MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                                                MPI_T_CB_REQUIRE_THREAD_SAFE,
                                                MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};

static int level_of(MPI_T_cb_safety s)
{
    for (int i = 0; i < NLEVELS; i++)
        if (levels[i] == s)
            return i;
    return -1;
}

typedef struct t_reg {
    struct t_reg *next;        /* live list, then the list of those waiting to be freed */
    int ev;
    bool dead;                 /* freed by the tool: no more calls */
    halo_info_t *info;         /* hints of the registration, or NULL */
    struct {
        MPI_T_event_cb_function *fn;
        void *user_data;
        halo_info_t *info;
    } cb[NLEVELS];
    MPI_T_event_dropped_cb_function *dropped;
    MPI_T_event_free_cb_function *free_fn;
    void *free_user_data;
} t_reg_t;

static t_reg_t *regs;          /* live registrations (halo_t_lock) */
static t_reg_t *regs_gone;     /* freed while callbacks ran: released when none runs (halo_t_lock) */
static int emitting;           /* callbacks of events running now, in any thread (halo_t_lock) */

static t_reg_t *reg_live(MPI_T_event_registration h)
{
    for (t_reg_t *r = regs; r; r = r->next)
        if ((MPI_T_event_registration)r == h)
            return r;
    return NULL;
}

static void reg_release(t_reg_t *r)
{
    halo_info_release(r->info);
    for (int l = 0; l < NLEVELS; l++)
        halo_info_release(r->cb[l].info);
    free(r);
}

int halo_api_t_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                  MPI_T_event_registration *event_registration)
{
    (void)obj_handle;   /* every event is bound to no object */
    NEED_INIT();
    if (event_index < 0 || event_index >= HALO_T_EV_COUNT)
        return MPI_T_ERR_INVALID_INDEX;
    NEED_PTR(event_registration);
    t_reg_t *r = calloc(1, sizeof *r);
    if (!r)
        return MPI_T_ERR_MEMORY;
    r->ev = event_index;
    int rc = info_merge(&r->info, info);
    if (rc != MPI_SUCCESS) {
        reg_release(r);
        return rc;
    }
    pthread_mutex_lock(&halo_t_lock);
    r->next = regs;
    regs = r;
    atomic_fetch_add_explicit(&halo_t_ev_live[event_index], 1, memory_order_relaxed);
    pthread_mutex_unlock(&halo_t_lock);
    *event_registration = (MPI_T_event_registration)r;
    return MPI_SUCCESS;
}

/* The free callbacks of registrations freed while callbacks ran, once none
 * runs; called without halo_t_lock. */
static void release_gone(MPI_T_cb_safety ctx)
{
    pthread_mutex_lock(&halo_t_lock);
    t_reg_t *list = NULL;
    if (emitting == 0) {
        list = regs_gone;
        regs_gone = NULL;
    }
    pthread_mutex_unlock(&halo_t_lock);
    while (list) {
        t_reg_t *r = list;
        list = r->next;
        if (r->free_fn)
            r->free_fn((MPI_T_event_registration)r, ctx, r->free_user_data);
        reg_release(r);
    }
}

int halo_api_t_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                 MPI_T_event_free_cb_function free_cb_function)
{
    NEED_INIT();
    pthread_mutex_lock(&halo_t_lock);
    t_reg_t **p = &regs;
    while (*p && (MPI_T_event_registration)*p != event_registration)
        p = &(*p)->next;
    t_reg_t *r = *p;
    if (!r) {
        pthread_mutex_unlock(&halo_t_lock);
        return MPI_T_ERR_INVALID_HANDLE;
    }
    *p = r->next;
    __atomic_store_n(&r->dead, true, __ATOMIC_RELEASE);
    r->free_fn = free_cb_function;
    r->free_user_data = user_data;
    atomic_fetch_sub_explicit(&halo_t_ev_live[r->ev], 1, memory_order_relaxed);
    r->next = regs_gone;
    regs_gone = r;
    pthread_mutex_unlock(&halo_t_lock);
    release_gone(MPI_T_CB_REQUIRE_NONE);
    return MPI_SUCCESS;
}

void halo_t_events_drop(void)
{
    while (regs) {
        t_reg_t *r = regs;
        regs = r->next;
        atomic_fetch_sub_explicit(&halo_t_ev_live[r->ev], 1, memory_order_relaxed);
        __atomic_store_n(&r->dead, true, __ATOMIC_RELEASE);
        if (emitting) {
            r->next = regs_gone;
            regs_gone = r;
        } else {
            reg_release(r);
        }
    }
}

/* Looks up a live registration under the lock; on success the lock stays
 * held (the caller unlocks). */
#define REG_OR_FAIL(h, r)                                                                                \
    NEED_INIT();                                                                                         \
    pthread_mutex_lock(&halo_t_lock);                                                                    \
    t_reg_t *r = reg_live(h);                                                                            \
    if (!r) {                                                                                            \
        pthread_mutex_unlock(&halo_t_lock);                                                              \
        return MPI_T_ERR_INVALID_HANDLE;                                                                 \
    }

int halo_api_t_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    if (!info_used)
        return MPI_T_ERR_INVALID;
    REG_OR_FAIL(event_registration, r);
    int rc = info_copy(r->info, info_used);
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    REG_OR_FAIL(event_registration, r);
    int rc = info_merge(&r->info, info);
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

/* A null function takes the callback of that level away. */
int halo_api_t_event_register_callback(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                       MPI_Info info, void *user_data, MPI_T_event_cb_function event_cb_function)
{
    int l = level_of(cb_safety);
    REG_OR_FAIL(event_registration, r);
    if (l < 0) {
        pthread_mutex_unlock(&halo_t_lock);
        return MPI_T_ERR_INVALID;
    }
    r->cb[l].fn = event_cb_function;
    r->cb[l].user_data = user_data;
    halo_info_release(r->cb[l].info);
    r->cb[l].info = NULL;
    int rc = info_merge(&r->cb[l].info, info);
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_event_callback_get_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                       MPI_Info *info_used)
{
    int l = level_of(cb_safety);
    if (!info_used)
        return MPI_T_ERR_INVALID;
    REG_OR_FAIL(event_registration, r);
    int rc = l < 0 ? MPI_T_ERR_INVALID : info_copy(r->cb[l].info, info_used);
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_event_callback_set_info(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety,
                                       MPI_Info info)
{
    int l = level_of(cb_safety);
    REG_OR_FAIL(event_registration, r);
    int rc = l < 0 ? MPI_T_ERR_INVALID : info_merge(&r->cb[l].info, info);
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                         MPI_T_event_dropped_cb_function dropped_cb_function)
{
    REG_OR_FAIL(event_registration, r);
    r->dropped = dropped_cb_function;
    pthread_mutex_unlock(&halo_t_lock);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- raising, and instances */

typedef struct t_instance {
    int ev;
    const void *data;
    MPI_Count stamp;
} t_instance_t;

/* The instance of the callback running in this thread. */
static _Thread_local const t_instance_t *t_current;

/* A callback to make: taken under the lock, so a registration changed
 * meanwhile by another thread is called as it was when the event came. */
typedef struct t_call {
    t_reg_t *reg;
    MPI_T_event_cb_function *fn;              /* or NULL: the event is dropped for it */
    MPI_T_event_dropped_cb_function *dropped;
    void *user_data;
} t_call_t;

void halo_t_event_emit(int ev, const void *data)
{
    t_instance_t inst = {ev, data, clock_ns()};
    enum { ON_STACK = 8 };
    t_call_t stack[ON_STACK], *calls = stack;
    int n = 0, cap = ON_STACK;
    pthread_mutex_lock(&halo_t_lock);
    for (t_reg_t *r = regs; r; r = r->next) {
        if (r->ev != ev)
            continue;
        int l = 1;   /* the least strict level at or above MPI_RESTRICTED with a callback */
        while (l < NLEVELS && !r->cb[l].fn)
            l++;
        /* No callback it may call here: the event is dropped for this
         * registration, which its dropped-event handler hears at once. */
        if (l == NLEVELS && !r->dropped)
            continue;
        if (n == cap) {
            t_call_t *more = malloc(2 * (size_t)cap * sizeof *more);
            if (!more)
                break;
            memcpy(more, calls, (size_t)n * sizeof *more);
            if (calls != stack)
                free(calls);
            calls = more;
            cap *= 2;
        }
        if (l < NLEVELS)
            calls[n++] = (t_call_t){r, r->cb[l].fn, NULL, r->cb[l].user_data};
        else
            calls[n++] = (t_call_t){r, NULL, r->dropped, r->cb[0].user_data};
    }
    emitting++;
    pthread_mutex_unlock(&halo_t_lock);
    const t_instance_t *outer = t_current;
    t_current = &inst;
    for (int i = 0; i < n; i++) {
        t_call_t *c = &calls[i];
        /* A freed registration stays allocated while emitting > 0. */
        if (__atomic_load_n(&c->reg->dead, __ATOMIC_ACQUIRE))
            continue;
        if (c->fn)
            c->fn((MPI_T_event_instance)&inst, (MPI_T_event_registration)c->reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED,
                  c->user_data);
        else
            c->dropped(1, (MPI_T_event_registration)c->reg, 0, MPI_T_CB_REQUIRE_MPI_RESTRICTED, c->user_data);
    }
    t_current = outer;
    if (calls != stack)
        free(calls);
    pthread_mutex_lock(&halo_t_lock);
    emitting--;
    bool gone = emitting == 0 && regs_gone;
    pthread_mutex_unlock(&halo_t_lock);
    if (gone)
        release_gone(MPI_T_CB_REQUIRE_MPI_RESTRICTED);
}

static const t_instance_t *instance_of(MPI_T_event_instance h)
{
    return h && (const t_instance_t *)h == t_current ? t_current : NULL;
}

int halo_api_t_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    NEED_INIT();
    const t_instance_t *in = instance_of(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    if (element_index < 0 || element_index >= ev_defs[in->ev].nelem)
        return MPI_T_ERR_INVALID_INDEX;
    NEED_PTR(buffer);
    memcpy(buffer, (const char *)in->data + elem_off[element_index], elem_size[element_index]);
    return MPI_SUCCESS;
}

/* The elements at their displacements: the buffer holds the layout that
 * MPI_T_event_get_info describes. */
int halo_api_t_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    NEED_INIT();
    const t_instance_t *in = instance_of(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    NEED_PTR(buffer);
    for (int i = 0; i < ev_defs[in->ev].nelem; i++)
        memcpy((char *)buffer + elem_off[i], (const char *)in->data + elem_off[i], elem_size[i]);
    return MPI_SUCCESS;
}

int halo_api_t_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    NEED_INIT();
    const t_instance_t *in = instance_of(event_instance);
    if (!in)
        return MPI_T_ERR_INVALID_HANDLE;
    NEED_PTR(event_timestamp);
    *event_timestamp = in->stamp;
    return MPI_SUCCESS;
}

int halo_api_t_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    NEED_INIT();
    if (!instance_of(event_instance))
        return MPI_T_ERR_INVALID_HANDLE;
    NEED_PTR(source_index);
    *source_index = 0;
    return MPI_SUCCESS;
}
