/* Performance variables of the tools interface, their sessions and
 * handles, and the categories (MPI 5.0 sections 15.3.7 and 15.3.9).
 *
 * Five variables, MPI_UNSIGNED_LONG_LONG, read-only, continuous (always
 * counting: start and stop of one handle are MPI_T_ERR_PVAR_NO_STARTSTOP),
 * bound to no object; four of point-to-point matching:
 *   0 halo_unexpected_queue_length (level): messages waiting for a receive;
 *   1 halo_posted_queue_length (level): receives waiting for a message;
 *   2 halo_unexpected_messages (counter): messages that waited for a receive;
 *   3 halo_messages_arrived (counter): messages (and announcements of large
 *     ones) that reached the process;
 * and one of waiting:
 *   4 halo_waits_outside_load (counter): waits that slept where they would
 *     have yielded, because other processes wanted the node's CPUs
 *     (progress.c, "Outside load").
 * A counter's handle reads what happened since the handle was allocated
 * (its starting value is 0); a level's reads the level. Being read-only,
 * none can be written or reset through one handle (MPI_T_ERR_PVAR_NO_WRITE);
 * start, stop and reset of MPI_T_PVAR_ALL_HANDLES concern the handles that
 * allow them, which is none, and succeed.
 *
 * Three categories: halo_settings (every control variable),
 * halo_point_to_point (the four matching variables and both events) and
 * halo_waiting (the fifth variable). */
#include <stdlib.h>
#include <string.h>

#include "binding/api_gen.h"
#include "core/mpit.h"
#include "progress/progress.h"
#include "pt2pt/match.h"

/* ---------------------------------------------------------------- the variables */

enum { W_INT, W_LONG, W_U64 };   /* the width of the library's variable */

enum { CAT_SETTINGS, CAT_P2P, CAT_WAIT, NCAT };

typedef struct pv_def {
    const char *name, *desc;
    int var_class;
    const void *value;   /* the library's variable */
    int width;
    int cat;
} pv_def_t;

static const pv_def_t pv_defs[] = {
    {"halo_unexpected_queue_length", "Point-to-point messages that arrived and wait for a matching receive",
     MPI_T_PVAR_CLASS_LEVEL, &halo_match_nunexp, W_LONG, CAT_P2P},
    {"halo_posted_queue_length", "Receives posted and waiting for a matching message (the blocking ones too)",
     MPI_T_PVAR_CLASS_LEVEL, &halo_match_nposted, W_INT, CAT_P2P},
    {"halo_unexpected_messages", "Point-to-point messages that arrived before their receive was posted",
     MPI_T_PVAR_CLASS_COUNTER, &halo_match_unexp_total, W_U64, CAT_P2P},
    {"halo_messages_arrived",
     "Point-to-point messages (and announcements of large ones) that reached this process, collectives' "
     "included",
     MPI_T_PVAR_CLASS_COUNTER, &halo_pt2pt_arrived, W_U64, CAT_P2P},
    {"halo_waits_outside_load",
     "Blocking waits that slept where they would have yielded the CPU, because processes of no MPI job kept "
     "the node's CPUs busy (a yield lasted a time slice)",
     MPI_T_PVAR_CLASS_COUNTER, &halo_progress_loaded_waits, W_U64, CAT_WAIT},
};
#define NPV ((int)(sizeof pv_defs / sizeof pv_defs[0]))

/* The current value. The library changes these under its lock, which the
 * MPI_T calls hold too; the load is atomic (relaxed) all the same. */
static unsigned long long pv_value(int i)
{
    const pv_def_t *d = &pv_defs[i];
    switch (d->width) {
    case W_INT:
        return (unsigned long long)__atomic_load_n((const int *)d->value, __ATOMIC_RELAXED);
    case W_LONG:
        return (unsigned long long)__atomic_load_n((const long *)d->value, __ATOMIC_RELAXED);
    default:
        return (unsigned long long)__atomic_load_n((const uint64_t *)d->value, __ATOMIC_RELAXED);
    }
}

int halo_api_t_pvar_get_num(int *num_pvar)
{
    NEED_INIT();
    NEED_PTR(num_pvar);
    *num_pvar = NPV;
    return MPI_SUCCESS;
}

int halo_api_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                             MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
                             int *readonly, int *continuous, int *atomic)
{
    NEED_INIT();
    if (pvar_index < 0 || pvar_index >= NPV)
        return MPI_T_ERR_INVALID_INDEX;
    const pv_def_t *d = &pv_defs[pvar_index];
    halo_t_string(d->name, name, name_len);
    halo_t_string(d->desc, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class)
        *var_class = d->var_class;
    if (datatype)
        *datatype = MPI_UNSIGNED_LONG_LONG;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (readonly)
        *readonly = 1;
    if (continuous)
        *continuous = 1;
    if (atomic)
        *atomic = 0;
    return MPI_SUCCESS;
}

int halo_api_t_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    NEED_INIT();
    NEED_PTR(name);
    NEED_PTR(pvar_index);
    for (int i = 0; i < NPV; i++)
        if (pv_defs[i].var_class == var_class && !strcmp(pv_defs[i].name, name)) {
            *pvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* ---------------------------------------------------------------- sessions and handles */

typedef struct t_pvh {
    struct t_pvh *next;
    int var;
    unsigned long long base;   /* a counter's value at allocation */
} t_pvh_t;

typedef struct t_sess {
    struct t_sess *next;
    t_pvh_t *handles;
} t_sess_t;

static t_sess_t *sessions;   /* live sessions (halo_t_lock) */

/* The live session s, or NULL; the caller holds halo_t_lock. */
static t_sess_t *sess_live(MPI_T_pvar_session s)
{
    for (t_sess_t *x = sessions; x; x = x->next)
        if ((MPI_T_pvar_session)x == s)
            return x;
    return NULL;
}

static t_pvh_t *handle_in(t_sess_t *s, MPI_T_pvar_handle h)
{
    for (t_pvh_t *x = s->handles; x; x = x->next)
        if ((MPI_T_pvar_handle)x == h)
            return x;
    return NULL;
}

static void sess_release(t_sess_t *s)
{
    while (s->handles) {
        t_pvh_t *h = s->handles;
        s->handles = h->next;
        free(h);
    }
    free(s);
}

void halo_t_pvars_drop(void)
{
    while (sessions) {
        t_sess_t *s = sessions;
        sessions = s->next;
        sess_release(s);
    }
}

int halo_api_t_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    NEED_INIT();
    NEED_PTR(pe_session);
    t_sess_t *s = calloc(1, sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    pthread_mutex_lock(&halo_t_lock);
    s->next = sessions;
    sessions = s;
    pthread_mutex_unlock(&halo_t_lock);
    *pe_session = (MPI_T_pvar_session)s;
    return MPI_SUCCESS;
}

int halo_api_t_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    NEED_INIT();
    NEED_PTR(pe_session);
    pthread_mutex_lock(&halo_t_lock);
    t_sess_t **p = &sessions;
    while (*p && (MPI_T_pvar_session)*p != *pe_session)
        p = &(*p)->next;
    t_sess_t *s = *p;
    if (s)
        *p = s->next;
    pthread_mutex_unlock(&halo_t_lock);
    if (!s)
        return MPI_T_ERR_INVALID_SESSION;
    sess_release(s);
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

/* Takes the lock and finds the session; on success the lock stays held. */
#define SESSION_OR_FAIL(sh, s)                                                                           \
    NEED_INIT();                                                                                         \
    pthread_mutex_lock(&halo_t_lock);                                                                    \
    t_sess_t *s = sess_live(sh);                                                                         \
    if (!s) {                                                                                            \
        pthread_mutex_unlock(&halo_t_lock);                                                              \
        return MPI_T_ERR_INVALID_SESSION;                                                                \
    }

int halo_api_t_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                                 MPI_T_pvar_handle *handle, int *count)
{
    (void)obj_handle;   /* every variable is bound to no object */
    SESSION_OR_FAIL(pe_session, s);
    int rc = MPI_SUCCESS;
    t_pvh_t *h = NULL;
    if (pvar_index < 0 || pvar_index >= NPV)
        rc = MPI_T_ERR_INVALID_INDEX;
    else if (!handle || !count)
        rc = MPI_T_ERR_INVALID;
    else if (!(h = calloc(1, sizeof *h)))
        rc = MPI_T_ERR_MEMORY;
    if (rc == MPI_SUCCESS) {
        h->var = pvar_index;
        h->base = pv_defs[pvar_index].var_class == MPI_T_PVAR_CLASS_COUNTER ? pv_value(pvar_index) : 0;
        h->next = s->handles;
        s->handles = h;
        *handle = (MPI_T_pvar_handle)h;
        *count = 1;
    }
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    if (!handle)
        return MPI_T_ERR_INVALID;
    SESSION_OR_FAIL(pe_session, s);
    t_pvh_t **p = &s->handles;
    while (*p && (MPI_T_pvar_handle)*p != *handle)
        p = &(*p)->next;
    t_pvh_t *h = *p;
    if (h)
        *p = h->next;
    pthread_mutex_unlock(&halo_t_lock);
    if (!h)
        return MPI_T_ERR_INVALID_HANDLE;
    free(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

/* Start, stop, reset: MPI_T_PVAR_ALL_HANDLES concerns the session's handles
 * that allow the action (none: every variable is continuous and
 * read-only); one handle answers why it cannot. */
static int one_action(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, int refusal)
{
    SESSION_OR_FAIL(pe_session, s);
    int rc = handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS
             : handle_in(s, handle)           ? refusal
                                              : MPI_T_ERR_INVALID_HANDLE;
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return one_action(pe_session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int halo_api_t_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return one_action(pe_session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int halo_api_t_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return one_action(pe_session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

int halo_api_t_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    SESSION_OR_FAIL(pe_session, s);
    t_pvh_t *h = handle_in(s, handle);   /* MPI_T_PVAR_ALL_HANDLES is not one */
    int rc = !h ? MPI_T_ERR_INVALID_HANDLE : !buf ? MPI_T_ERR_INVALID : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        *(unsigned long long *)buf = pv_value(h->var) - h->base;
    pthread_mutex_unlock(&halo_t_lock);
    return rc;
}

int halo_api_t_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    (void)buf;
    return one_action(pe_session, handle == MPI_T_PVAR_ALL_HANDLES ? MPI_T_PVAR_HANDLE_NULL : handle,
                      MPI_T_ERR_PVAR_NO_WRITE);
}

int halo_api_t_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)buf;
    return one_action(pe_session, handle == MPI_T_PVAR_ALL_HANDLES ? MPI_T_PVAR_HANDLE_NULL : handle,
                      MPI_T_ERR_PVAR_NO_WRITE);
}

/* ---------------------------------------------------------------- categories */

static const struct {
    const char *name, *desc;
} cat_defs[NCAT] = {
    [CAT_SETTINGS] = {"halo_settings", "Halo's HALO_* settings, each a read-only control variable"},
    [CAT_P2P] = {"halo_point_to_point", "Matching of point-to-point messages: queue lengths, counts, and the "
                                        "events of arrival and of taking a queued message"},
    [CAT_WAIT] = {"halo_waiting", "How blocked processes wait for the CPU and for messages"},
};

/* Whether member i of the kind `what` (0 cvars, 1 pvars, 2 events) belongs
 * to category cat: every control variable to the settings, every event to
 * point-to-point, each performance variable to its own. */
static bool cat_has(int cat, int what, int i)
{
    if (what == 1)
        return pv_defs[i].cat == cat;
    return cat == (what == 0 ? CAT_SETTINGS : CAT_P2P);
}

static int kind_count(int what)
{
    return what == 0 ? halo_t_cvar_num() : what == 1 ? NPV : HALO_T_EV_COUNT;
}

static int cat_count(int cat, int what)
{
    int n = 0;
    for (int i = 0; i < kind_count(what); i++)
        n += cat_has(cat, what, i);
    return n;
}

int halo_api_t_category_get_num(int *num_cat)
{
    NEED_INIT();
    NEED_PTR(num_cat);
    *num_cat = NCAT;
    return MPI_SUCCESS;
}

int halo_api_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                                 int *num_cvars, int *num_pvars, int *num_categories)
{
    NEED_INIT();
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    halo_t_string(cat_defs[cat_index].name, name, name_len);
    halo_t_string(cat_defs[cat_index].desc, desc, desc_len);
    if (num_cvars)
        *num_cvars = cat_count(cat_index, 0);
    if (num_pvars)
        *num_pvars = cat_count(cat_index, 1);
    if (num_categories)
        *num_categories = 0;
    return MPI_SUCCESS;
}

int halo_api_t_category_get_index(const char *name, int *cat_index)
{
    NEED_INIT();
    NEED_PTR(name);
    NEED_PTR(cat_index);
    for (int i = 0; i < NCAT; i++)
        if (!strcmp(cat_defs[i].name, name)) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

/* The first len indices of a category's members of one kind, in order. */
static int cat_list(int cat, int what, int len, int indices[])
{
    NEED_INIT();
    if (cat < 0 || cat >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    if (len > 0 && cat_count(cat, what) > 0)
        NEED_PTR(indices);
    for (int i = 0, k = 0; i < kind_count(what) && k < len; i++)
        if (cat_has(cat, what, i))
            indices[k++] = i;
    return MPI_SUCCESS;
}

int halo_api_t_category_get_cvars(int cat_index, int len, int indices[])
{
    return cat_list(cat_index, 0, len, indices);
}

int halo_api_t_category_get_pvars(int cat_index, int len, int indices[])
{
    return cat_list(cat_index, 1, len, indices);
}

int halo_api_t_category_get_events(int cat_index, int len, int indices[])
{
    return cat_list(cat_index, 2, len, indices);
}

int halo_api_t_category_get_categories(int cat_index, int len, int indices[])
{
    (void)len, (void)indices;
    NEED_INIT();
    return cat_index < 0 || cat_index >= NCAT ? MPI_T_ERR_INVALID_INDEX : MPI_SUCCESS;   /* none below */
}

int halo_api_t_category_get_num_events(int cat_index, int *num_events)
{
    NEED_INIT();
    if (cat_index < 0 || cat_index >= NCAT)
        return MPI_T_ERR_INVALID_INDEX;
    NEED_PTR(num_events);
    *num_events = cat_count(cat_index, 2);
    return MPI_SUCCESS;
}
