/* The tools information interface (MPI 5.0 chapter 15). Every HALO_*
 * setting (core/config.h, `halo_info --all`) is a control variable, named
 * as its environment variable, in the order of the declaration section;
 * its value is the one the process started with, so each is read-only
 * (MPI_T_SCOPE_READONLY: a write is MPI_T_ERR_CVAR_SET_NEVER); integers are
 * MPI_COUNT, strings MPI_CHAR. Performance variables, their sessions and
 * the categories are in core/mpit_pvars.c, events and their source in
 * core/mpit_events.c. Tools can start the interface (before MPI_Init,
 * after MPI_Finalize, nested), read the counts, and finalize; every
 * index, name, handle or session they pass that cannot exist is refused
 * with the MPI_T error code the standard gives for it. Errors of this
 * interface are returned, never raised on a handler. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "binding/api_gen.h"
#include "binding/binding.h"
#include "core/config.h"
#include "core/mpit.h"

_Atomic int halo_t_refs;   /* MPI_T_init_thread calls not yet matched by MPI_T_finalize */
/* The interface may be used from several threads at once (it grants
 * MPI_THREAD_MULTIPLE): the lists of live handles and sessions, and the
 * count above when it opens or closes, change under this lock. */
pthread_mutex_t halo_t_lock = PTHREAD_MUTEX_INITIALIZER;

/* Handles the interface gave out and that are still live, one list per
 * kind (performance-variable sessions, control-variable handles), to tell
 * them from stale or made-up ones. A handle is the address of its node. */
typedef struct t_link {
    struct t_link *next;
} t_link_t;

static void link_add(t_link_t **head, t_link_t *n)
{
    pthread_mutex_lock(&halo_t_lock);
    n->next = *head;
    *head = n;
    pthread_mutex_unlock(&halo_t_lock);
}

/* The node of handle h in the list, or NULL; with take, also unlinked. */
static t_link_t *link_find(t_link_t **head, const void *h, bool take)
{
    t_link_t *found = NULL;
    pthread_mutex_lock(&halo_t_lock);
    for (t_link_t **p = head; *p; p = &(*p)->next)
        if ((const void *)*p == h) {
            found = *p;
            if (take)
                *p = found->next;
            break;
        }
    pthread_mutex_unlock(&halo_t_lock);
    return found;
}

/* Frees every node; the caller holds halo_t_lock. */
static void link_free_all(t_link_t **head)
{
    while (*head) {
        t_link_t *n = *head;
        *head = n->next;
        free(n);
    }
}


typedef struct t_cvh {
    t_link_t link;   /* first: the handle is the node's address */
    halo_cfg_t *var;
    int count;
} t_cvh_t;
static t_link_t *t_cvhs;

int halo_t_cvar_num(void)
{
    return (int)(halo_cfg_end() - halo_cfg_begin());
}

static halo_cfg_t *cvar_at(int index)
{
    return index >= 0 && index < halo_t_cvar_num() ? halo_cfg_begin()[index] : NULL;
}

static t_cvh_t *cvh_live(MPI_T_cvar_handle h)
{
    return (t_cvh_t *)link_find(&t_cvhs, h, false);
}

/* The standard's way of returning a string into (out, *len): with no
 * buffer or a length of 0, only the length it needs (terminator
 * included); else as much as fits, terminated, and the length written. */
void halo_t_string(const char *str, char *out, int *len)
{
    if (!len)
        return;
    int need = (int)strlen(str) + 1;
    if (!out || *len <= 0) {
        *len = need;
        return;
    }
    int n = need < *len ? need : *len;
    memcpy(out, str, (size_t)n - 1);
    out[n - 1] = '\0';
    *len = n;
}

/* ---------------------------------------------------------------- setup */

int halo_api_t_init_thread(int required, int *provided)
{
    NEED_PTR(provided);
    *provided = required >= MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                : required <= MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE
                                                : required;
    pthread_mutex_lock(&halo_t_lock);
    halo_t_refs++;
    pthread_mutex_unlock(&halo_t_lock);
    return MPI_SUCCESS;
}

int halo_api_t_finalize(void)
{
    pthread_mutex_lock(&halo_t_lock);
    if (halo_t_refs == 0) {
        pthread_mutex_unlock(&halo_t_lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (--halo_t_refs == 0) {
        link_free_all(&t_cvhs);
        halo_t_pvars_drop();
        halo_t_events_drop();
    }
    pthread_mutex_unlock(&halo_t_lock);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- counts */

int halo_api_t_cvar_get_num(int *num_cvar)
{
    NEED_INIT();
    NEED_PTR(num_cvar);
    *num_cvar = halo_t_cvar_num();
    return MPI_SUCCESS;
}


int halo_api_t_category_changed(int *update_number)
{
    NEED_INIT();
    NEED_PTR(update_number);
    *update_number = 0;   /* the set of variables never changes */
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- control variables */

int halo_api_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
                             MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope)
{
    NEED_INIT();
    halo_cfg_t *v = cvar_at(cvar_index);
    if (!v)
        return MPI_T_ERR_INVALID_INDEX;
    halo_t_string(v->name, name, name_len);
    halo_t_string(v->help, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype)
        *datatype = v->type == HALO_CFG_T_INT ? MPI_COUNT : MPI_CHAR;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_READONLY;
    return MPI_SUCCESS;
}

int halo_api_t_cvar_get_index(const char *name, int *cvar_index)
{
    NEED_INIT();
    NEED_PTR(name);
    NEED_PTR(cvar_index);
    for (int i = 0; i < halo_t_cvar_num(); i++)
        if (!strcmp(halo_cfg_begin()[i]->name, name)) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    return MPI_T_ERR_INVALID_NAME;
}

int halo_api_t_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle;   /* bound to no object */
    NEED_INIT();
    halo_cfg_t *v = cvar_at(cvar_index);
    if (!v)
        return MPI_T_ERR_INVALID_INDEX;
    NEED_PTR(handle);
    NEED_PTR(count);
    t_cvh_t *t = malloc(sizeof *t);
    if (!t)
        return MPI_T_ERR_MEMORY;
    t->var = v;
    /* A string's count is the room its (fixed) value takes. */
    t->count = v->type == HALO_CFG_T_INT ? 1 : (int)strlen(halo_cfg_get_str(v)) + 1;
    link_add(&t_cvhs, &t->link);
    *handle = (MPI_T_cvar_handle)t;
    *count = t->count;
    return MPI_SUCCESS;
}

int halo_api_t_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    NEED_INIT();
    NEED_PTR(handle);
    t_link_t *gone = link_find(&t_cvhs, *handle, true);
    if (!gone)
        return MPI_T_ERR_INVALID_HANDLE;
    free(gone);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int halo_api_t_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    NEED_INIT();
    t_cvh_t *t = cvh_live(handle);
    if (!t)
        return MPI_T_ERR_INVALID_HANDLE;
    NEED_PTR(buf);
    if (t->var->type == HALO_CFG_T_INT) {
        MPI_Count v = (MPI_Count)halo_cfg_get(t->var);
        memcpy(buf, &v, sizeof v);
    } else {
        int len = t->count;
        halo_t_string(halo_cfg_get_str(t->var), buf, &len);
    }
    return MPI_SUCCESS;
}

int halo_api_t_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)buf;
    NEED_INIT();
    if (!cvh_live(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_CVAR_SET_NEVER;   /* every variable is read-only */
}

/* ---------------------------------------------------------------- enumerations: none */

int halo_api_t_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    NEED_INIT();
    return MPI_T_ERR_INVALID_HANDLE;   /* no variable has an enumeration to ask about */
}

int halo_api_t_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    NEED_INIT();
    return MPI_T_ERR_INVALID_HANDLE;
}
