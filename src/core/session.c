/* Sessions: MPI_Session_init and _finalize, process sets, session hints
 * and error handlers.
 *
 * Halo knows the two process sets every implementation has: "mpi://WORLD"
 * (every process of the job, as MPI_COMM_WORLD would hold them) and
 * "mpi://SELF". A group from one of them carries its session, and so do the
 * communicators made from it (MPI_Comm_create_from_group), which is all a
 * session lends them: the buffered-send buffer attached to the session. */
#include "core/session.h"

#include <strings.h>

#include "binding/api_gen.h"
#include "binding/binding.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/info.h"
#include "core/lock.h"
#include "pt2pt/pt2pt.h"

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
enum { PSET_WORLD = 0, PSET_SELF = 1, NPSETS = 2 };

void halo_session_init_kind(void)
{
    halo_obj_kind_setup(HALO_KIND_SESSION, sizeof(halo_session_t), 1u << 12);
}

halo_session_t *halo_session_get(MPI_Session s)
{
    return halo_obj_lookup(HALO_KIND_SESSION, s);
}

#define SESSION_CHECK(h, s)                                                                   \
    halo_session_t *s = halo_session_get(h);                                                  \
    if (!s)                                                                                   \
        return halo_err(MPI_ERR_SESSION, "(session=%p): %s", (void *)h,                       \
                        h == MPI_SESSION_NULL ? "MPI_SESSION_NULL is not a session"           \
                                              : "not a valid session")

static const char *level_name(int level)
{
    switch (level) {
    case MPI_THREAD_MULTIPLE:
        return "MPI_THREAD_MULTIPLE";
    case MPI_THREAD_SERIALIZED:
        return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_FUNNELED:
        return "MPI_THREAD_FUNNELED";
    default:
        return "MPI_THREAD_SINGLE";
    }
}

/* The level a "thread_level" hint asks for: a level's name (as the
 * standard spells it, in any case) or its value; -1 if it is neither. */
static int level_of(const char *v)
{
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                 MPI_THREAD_MULTIPLE};
    for (size_t i = 0; i < HALO_ARRAY_LEN(levels); i++) {
        char num[16];
        snprintf(num, sizeof num, "%d", levels[i]);
        if (!strcasecmp(v, level_name(levels[i])) || !strcmp(v, num))
            return levels[i];
    }
    return -1;
}

/* Index of a process set by name (the "mpi://" names are not case
 * sensitive), or -1. */
static int pset_index(const char *name)
{
    for (int i = 0; i < NPSETS; i++)
        if (!strcasecmp(name, pset_names[i]))
            return i;
    return -1;
}

static int pset_arg(const char *name, int *index_p)
{
    if (!name)
        return halo_err(MPI_ERR_ARG, "(pset_name=NULL): a process set name is required");
    int i = pset_index(name);
    if (i < 0)
        return halo_err(MPI_ERR_ARG, "(pset_name=\"%.64s\"): no such process set (Halo has "
                        "\"mpi://WORLD\" and \"mpi://SELF\")", name);
    *index_p = i;
    return MPI_SUCCESS;
}

/* Session_init's arguments, checked under the library lock: other
 * threads with sessions open may be making objects of the same kinds. */
static int session_args(MPI_Info info, MPI_Errhandler errhandler, halo_errhandler_t **e_p,
                        halo_info_t **in_p, int *required)
{
    halo_errhandler_t *e = halo_obj_lookup(HALO_KIND_ERRHANDLER, errhandler);
    if (!e)
        return halo_err(MPI_ERR_ARG, "(errhandler=%p): not a valid error handler", (void *)errhandler);
    if (!e->builtin && e->objkind != HALO_EOBJ_SESSION)
        return halo_err(MPI_ERR_ARG, "(errhandler): this error handler was made for another kind of "
                        "object (sessions take MPI_Session_create_errhandler's)");
    halo_info_t *in = NULL;
    if (info != MPI_INFO_NULL) {
        /* The info kind exists once the user has made an info object. */
        in = halo_obj_lookup(HALO_KIND_INFO, info);
        if (!in)
            return halo_err(MPI_ERR_INFO, "(info=%p): not a valid info object", (void *)info);
    }
    const char *v = in ? halo_info_lookup(in, "thread_level") : NULL;
    if (v && level_of(v) < 0)
        return halo_err(MPI_ERR_INFO_VALUE, "(info): \"thread_level\" is \"%.64s\", not one of "
                        "MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, "
                        "MPI_THREAD_MULTIPLE", v);
    *required = v ? level_of(v) : MPI_THREAD_SINGLE;
    *e_p = e;
    *in_p = in;
    return MPI_SUCCESS;
}

int halo_api_session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    halo_errhandler_init();
    halo_errhandler_t *e = NULL;
    halo_info_t *in = NULL;
    int required = MPI_THREAD_SINGLE;
    halo_lock();
    int arc = session_args(info, errhandler, &e, &in, &required);
    halo_unlock();
    if (arc != MPI_SUCCESS)
        return arc;
    int provided;
    int rc = halo_lib_session_open(required, &provided);
    if (rc)
        return rc;
    halo_lock();
    halo_session_t *s = halo_obj_alloc(HALO_KIND_SESSION);
    if (!s) {
        halo_unlock();
        halo_lib_session_close();
        return halo_err(MPI_ERR_NO_MEM, ": out of session objects");
    }
    halo_obj_ref(e);
    s->errh = e;
    s->thread_level = provided;
    s->info = in ? halo_info_dup(in) : halo_info_new();
    halo_info_set(s->info, "thread_level", level_name(provided));
    *session = (MPI_Session)s;
    halo_unlock();
    return MPI_SUCCESS;
}

int halo_api_session_finalize(MPI_Session *session)
{
    halo_lock();
    halo_session_t *s = halo_session_get(*session);
    if (!s) {
        halo_unlock();
        return halo_err(MPI_ERR_SESSION, "(session=%p): %s", (void *)*session,
                        *session == MPI_SESSION_NULL ? "MPI_SESSION_NULL is not a session"
                                                     : "not a valid session");
    }
    /* The user completed the session's communication (the standard asks
     * it); what may still be under way are the copies of buffered sends. */
    halo_bsend_session_gone(s);
    halo_errhandler_release(s->errh);
    halo_info_release(s->info);
    halo_obj_free(s);
    *session = MPI_SESSION_NULL;
    halo_unlock();
    halo_lib_session_close();
    return MPI_SUCCESS;
}

int halo_api_session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    (void)info;
    SESSION_CHECK(session, s);
    (void)s;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int halo_api_session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                                  char *pset_name)
{
    (void)info;
    SESSION_CHECK(session, s);
    (void)s;
    if (n < 0 || n >= NPSETS)
        return halo_err(MPI_ERR_ARG, "(n=%d): not the index of a process set (there are %d)", n, NPSETS);
    int need = (int)strlen(pset_names[n]) + 1;
    /* A length of 0 asks for the length only. */
    if (*pset_len > 0) {
        if (!pset_name)
            return halo_err(MPI_ERR_ARG, "(pset_name=NULL): a buffer of pset_len=%d bytes is required",
                            *pset_len);
        int len = *pset_len < need ? *pset_len : need;
        memcpy(pset_name, pset_names[n], (size_t)len - 1);
        pset_name[len - 1] = '\0';
    } else if (*pset_len < 0) {
        return halo_err(MPI_ERR_ARG, "(pset_len=%d): must be non-negative", *pset_len);
    }
    *pset_len = need;
    return MPI_SUCCESS;
}

int halo_api_session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    SESSION_CHECK(session, s);
    (void)s;
    int i = 0, rc = pset_arg(pset_name, &i);
    if (rc)
        return rc;
    halo_info_t *in = halo_info_new();
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    char size[16];
    snprintf(size, sizeof size, "%d", i == PSET_WORLD ? halo_world.size : 1);
    halo_info_set(in, "mpi_size", size);
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    SESSION_CHECK(session, s);
    int i = 0, rc = pset_arg(pset_name, &i);
    if (rc)
        return rc;
    halo_group_t *g;
    if (i == PSET_WORLD) {
        int *w = halo_malloc((size_t)halo_world.size * sizeof(int));
        for (int r = 0; r < halo_world.size; r++)
            w[r] = r;
        g = halo_group_new(halo_world.size, w);
        free(w);
    } else {
        g = halo_group_new(1, &halo_world.rank);
    }
    g->session = s;
    *newgroup = (MPI_Group)g;
    return MPI_SUCCESS;
}

int halo_api_session_get_info(MPI_Session session, MPI_Info *info_used)
{
    SESSION_CHECK(session, s);
    halo_info_t *in = halo_info_dup(s->info);
    if (!in)
        return halo_err(MPI_ERR_NO_MEM, ": out of info objects");
    *info_used = (MPI_Info)in;
    return MPI_SUCCESS;
}

int halo_api_session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    SESSION_CHECK(session, s);
    return halo_errhandler_set(&s->errh, errhandler, HALO_EOBJ_SESSION);
}

int halo_api_session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    SESSION_CHECK(session, s);
    halo_obj_ref(s->errh);
    *errhandler = (MPI_Errhandler)halo_obj_handle(s->errh);
    return MPI_SUCCESS;
}

int halo_api_session_call_errhandler(MPI_Session session, int errorcode)
{
    SESSION_CHECK(session, s);
    /* The handler runs; the call itself succeeds (as Comm_call_errhandler). */
    halo_errhandler_invoke(s->errh, HALO_EOBJ_SESSION, session, errorcode);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- buffered sends */

int halo_api_session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    SESSION_CHECK(session, s);
    return halo_bsend_attach_key(s, buffer, size, "this session");
}

int halo_api_session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    SESSION_CHECK(session, s);
    return halo_bsend_detach_key(s, buffer_addr, size, "this session");
}

int halo_api_session_flush_buffer(MPI_Session session)
{
    SESSION_CHECK(session, s);
    return halo_bsend_flush_key(s);
}

int halo_api_session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    SESSION_CHECK(session, s);
    return halo_bsend_iflush_key(s, request);
}
