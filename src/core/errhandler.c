/* Error handlers and the dispatch of errors raised by MPI calls. */
#include "core/errhandler.h"

#include <unistd.h>

#include "binding/api_gen.h"
#include "binding/binding.h"
#include "core/comm.h"
#include "core/errors.h"
#include "core/lock.h"
#include "core/session.h"
#include "io/file.h"
#include "pmi.h"
#include "rma/win.h"

static halo_errhandler_t eh_fatal, eh_abort, eh_return;
/* The handler of objects nobody gave one: MPI_COMM_WORLD and MPI_COMM_SELF
 * at start, windows, and what inherits from them. It acts as
 * MPI_COMM_WORLD's current handler, and as MPI_ERRORS_ARE_FATAL while that
 * is this one too; it reads back as MPI_ERRORS_ARE_FATAL. So a program
 * that sets MPI_ERRORS_RETURN on MPI_COMM_WORLD gets errors returned on
 * communicators it had made before and on its windows (as in MPICH; a
 * handler set explicitly stays what it was set to). */
static halo_errhandler_t eh_default;
static HALO_TLS MPI_Comm redirect_comm;
static HALO_TLS bool redirect_file;

/* Also called before MPI_Init by the calls allowed then (creating a
 * session's error handler); runs once. */
void halo_errhandler_init(void)
{
    static int done;
    if (done)
        return;
    done = 1;
    halo_obj_kind_setup(HALO_KIND_ERRHANDLER, sizeof(halo_errhandler_t), 1u << 16);
    eh_fatal.builtin = HALO_EH_FATAL;
    eh_abort.builtin = HALO_EH_ABORT;
    eh_return.builtin = HALO_EH_RETURN;
    halo_obj_predef(HALO_KIND_ERRHANDLER, (uintptr_t)MPI_ERRORS_ARE_FATAL, &eh_fatal.hdr);
    halo_obj_predef(HALO_KIND_ERRHANDLER, (uintptr_t)MPI_ERRORS_ABORT, &eh_abort.hdr);
    halo_obj_predef(HALO_KIND_ERRHANDLER, (uintptr_t)MPI_ERRORS_RETURN, &eh_return.hdr);
    /* Not in the handle table: its handle is MPI_ERRORS_ARE_FATAL's. */
    eh_default.builtin = HALO_EH_FATAL;
    eh_default.hdr.kind = HALO_KIND_ERRHANDLER;
    eh_default.hdr.flags = HALO_OBJ_LIVE | HALO_OBJ_PREDEFINED;
    eh_default.hdr.id = (int32_t)(uintptr_t)MPI_ERRORS_ARE_FATAL;
    atomic_store_explicit(&eh_default.hdr.ref, 1, memory_order_relaxed);
}

halo_errhandler_t *halo_errhandler_fatal(void)
{
    return &eh_default;
}

void halo_errhandler_release(halo_errhandler_t *e)
{
    if (e && halo_obj_unref(e))
        halo_obj_free(e);
}

void halo_err_redirect_comm(MPI_Comm comm)
{
    redirect_comm = comm;
}

void halo_err_redirect_file(void)
{
    redirect_file = true;
}

_Noreturn static void die(int code, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    halo_err_string(code, msg, &len);
    fprintf(stderr, "halo: rank %d: %s\nhalo: rank %d: error handler %s: ending the job\n",
            halo_world.rank, msg, halo_world.rank, what);
    fflush(stderr);
    halo_pmi_abort(code & 0x7f ? code & 0x7f : 1, msg);
    _exit(1);
}

int halo_errhandler_invoke(halo_errhandler_t *e, int objkind, void *handle, int code)
{
    if (e == &eh_default && halo_comm_world.errh != &eh_default) {
        /* A function made for communicators gets MPI_COMM_WORLD when the
         * error is on another kind of object. */
        halo_errhandler_t *w = halo_comm_world.errh;
        if (w->builtin == HALO_EH_USER && objkind != HALO_EOBJ_COMM)
            return halo_errhandler_invoke(w, HALO_EOBJ_COMM, (void *)MPI_COMM_WORLD, code);
        return halo_errhandler_invoke(w, objkind, handle, code);
    }
    switch (e->builtin) {
    case HALO_EH_RETURN:
        return code;
    case HALO_EH_FATAL:
        die(code, "MPI_ERRORS_ARE_FATAL");
    case HALO_EH_ABORT:
        die(code, "MPI_ERRORS_ABORT");
    default:
        break;
    }
    /* A user handler gets the handle by address and the code "to be
     * returned by the MPI routine that raised the error" (MPI 5.0, 9.3.1):
     * the routine returns it as the handler leaves it (as in MPICH; a
     * handler may turn an error into MPI_SUCCESS). */
    int c = code;
    if (e->fortran) {
        typedef void fortran_fn_t(MPI_Fint *, MPI_Fint *);
        MPI_Fint fh = 0, fc = code;
        switch (objkind) {
        case HALO_EOBJ_COMM: fh = halo_api_comm_c2f((MPI_Comm)handle); break;
        case HALO_EOBJ_WIN: fh = halo_api_win_c2f((MPI_Win)handle); break;
        case HALO_EOBJ_FILE: fh = halo_api_file_c2f((MPI_File)handle); break;
        case HALO_EOBJ_SESSION: fh = halo_api_session_c2f((MPI_Session)handle); break;
        }
        ((fortran_fn_t *)e->fn.any)(&fh, &fc);
        return fc;
    }
    switch (objkind) {
    case HALO_EOBJ_COMM: {
        MPI_Comm h = (MPI_Comm)handle;
        e->fn.comm(&h, &c);
        break;
    }
    case HALO_EOBJ_WIN: {
        MPI_Win h = (MPI_Win)handle;
        e->fn.win(&h, &c);
        break;
    }
    case HALO_EOBJ_FILE: {
        MPI_File h = (MPI_File)handle;
        e->fn.file(&h, &c);
        break;
    }
    case HALO_EOBJ_SESSION: {
        MPI_Session h = (MPI_Session)handle;
        e->fn.session(&h, &c);
        break;
    }
    }
    return c;
}

/* Whether the user has set MPI_COMM_SELF's error handler (halo_err_dispatch,
 * which runs after the bindings release the lock). */
static _Atomic bool self_errh_set;

int halo_err_dispatch(int objkind, void *handle, int code, const char *fname)
{
    halo_err_set_fname(code, fname);
    if (redirect_comm != NULL) {
        handle = redirect_comm;
        objkind = HALO_EOBJ_COMM;
        redirect_comm = NULL;
    }
    if (redirect_file) {
        handle = MPI_FILE_NULL;
        objkind = HALO_EOBJ_FILE;
        redirect_file = false;
    }
    halo_errhandler_t *e = NULL;
    if (objkind == HALO_EOBJ_RETURN)
        return code;
    if (atomic_load(&halo_state) != HALO_STATE_RUNNING) {
        /* Outside MPI_Init .. MPI_Finalize and with no session open there is
         * no object to ask: the initial handler is MPI_ERRORS_RETURN for the
         * calls that are allowed then (info objects, error strings, the
         * tools interface, creating a session). */
        return code;
    }
    if (objkind == HALO_EOBJ_SESSION_INIT || objkind == HALO_EOBJ_COMM_INIT) {
        /* MPI_Session_init, MPI_Comm_create_from_group and
         * MPI_Intercomm_create_from_groups raise on the handler given for
         * the object they make, when it is one that kind of object takes;
         * else as if the call had no object. */
        int made = objkind == HALO_EOBJ_SESSION_INIT ? HALO_EOBJ_SESSION : HALO_EOBJ_COMM;
        halo_errhandler_t *eh = halo_obj_lookup(HALO_KIND_ERRHANDLER, handle);
        if (eh && (eh->builtin || eh->objkind == made))
            return halo_errhandler_invoke(eh, made,
                                          made == HALO_EOBJ_SESSION ? (void *)MPI_SESSION_NULL
                                                                    : (void *)MPI_COMM_NULL,
                                          code);
        objkind = HALO_EOBJ_NONE;
        handle = NULL;
    }
    if (objkind == HALO_EOBJ_SESSION) {
        halo_session_t *s = halo_session_get((MPI_Session)handle);
        if (s)
            return halo_errhandler_invoke(s->errh, objkind, handle, code);
        objkind = HALO_EOBJ_COMM;
        handle = MPI_COMM_SELF;
    }
    if (objkind == HALO_EOBJ_COMM) {
        halo_comm_t *c = halo_comm_get((MPI_Comm)handle);
        if (c) {
            e = c->errh;
        } else {
            objkind = HALO_EOBJ_COMM;
            handle = MPI_COMM_SELF;
        }
    }
    if (objkind == HALO_EOBJ_WIN) {
        e = halo_win_errhandler((MPI_Win)handle);
        if (!e) {   /* not a window: as if the call had no object */
            objkind = HALO_EOBJ_NONE;
            handle = NULL;
        }
    }
    if (objkind == HALO_EOBJ_FILE) {
        /* A file that is not valid (or MPI_FILE_NULL) raises on the
         * default file error handler, MPI_FILE_NULL's. */
        e = halo_file_errhandler((MPI_File)handle);
        if (!e)
            return code;
    }
    if (!e) {
        objkind = HALO_EOBJ_COMM;
        /* No object (or an invalid handle): MPI_COMM_SELF's handler, as
         * MPI 4.0 says. Before 4.0 it was MPI_COMM_WORLD's, and programs of
         * that time set only that one to MPI_ERRORS_RETURN before testing
         * bad handles: while nobody has set MPI_COMM_SELF's handler, the
         * one of MPI_COMM_WORLD applies (both start as
         * MPI_ERRORS_ARE_FATAL; MPICH does the same). */
        if (self_errh_set) {
            e = halo_comm_self.errh;
            handle = MPI_COMM_SELF;
        } else {
            e = halo_comm_world.errh;
            handle = MPI_COMM_WORLD;
        }
    }
    return halo_errhandler_invoke(e, objkind, handle, code);
}

int halo_err_not_running(const char *fname)
{
    int st = atomic_load(&halo_state);
    fprintf(stderr, "halo: %s called %s\n", fname,
            st == HALO_STATE_PRE_INIT ? "before MPI_Init (and with no session open)"
                                      : "after MPI_Finalize (and with no session open)");
    fflush(stderr);
    if (st == HALO_STATE_PRE_INIT)
        _exit(1);
    return halo_err(MPI_ERR_OTHER, ": called after MPI_Finalize");
}

/* The message leaves the name to the entry point, which prefixes the one
 * the program called: MPI_Win_create reaches the default of its
 * large-count twin, whose own name would only confuse. */
int halo_unsupported(const char *fname)
{
    (void)fname;
    return halo_err(MPI_ERR_UNSUPPORTED_OPERATION, ": not supported by Halo yet "
                    "(`halo_info --unsupported` lists what is missing)");
}

/* ---------------------------------------------------------------- MPI API */

static int create(int kind, void (*fn)(void), MPI_Errhandler *errhandler)
{
    halo_errhandler_init();
    if (!fn)
        return halo_err(MPI_ERR_ARG, "(function=NULL): a function is required");
    halo_errhandler_t *e = halo_obj_alloc(HALO_KIND_ERRHANDLER);
    if (!e)
        return halo_err(MPI_ERR_NO_MEM, ": out of error handler objects");
    e->objkind = kind;
    e->fn.any = fn;
    *errhandler = (MPI_Errhandler)e;
    return MPI_SUCCESS;
}

int halo_api_comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(HALO_EOBJ_COMM, (void (*)(void))fn, errhandler);
}
int halo_api_win_create_errhandler(MPI_Win_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(HALO_EOBJ_WIN, (void (*)(void))fn, errhandler);
}
int halo_api_file_create_errhandler(MPI_File_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(HALO_EOBJ_FILE, (void (*)(void))fn, errhandler);
}
int halo_api_session_create_errhandler(MPI_Session_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    return create(HALO_EOBJ_SESSION, (void (*)(void))fn, errhandler);
}

int halo_api_errhandler_free(MPI_Errhandler *errhandler)
{
    halo_errhandler_t *e = halo_obj_lookup(HALO_KIND_ERRHANDLER, *errhandler);
    if (!e)
        return halo_err(MPI_ERR_ARG, "(errhandler=%p): not a valid error handler", (void *)*errhandler);
    /* Every handle the user holds (from create or get_errhandler) is one
     * reference; the object lives while any is held. */
    if (!(e->hdr.flags & HALO_OBJ_PREDEFINED) && halo_obj_unref(e))
        halo_obj_free(e);
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

int halo_errhandler_for(MPI_Errhandler errhandler, int objkind, halo_errhandler_t **e_p)
{
    halo_errhandler_t *e = halo_obj_lookup(HALO_KIND_ERRHANDLER, errhandler);
    if (!e)
        return halo_err(MPI_ERR_ARG, "(errhandler=%p): not a valid error handler", (void *)errhandler);
    if (!e->builtin && e->objkind != objkind)
        return halo_err(MPI_ERR_ARG, "(errhandler): this error handler was made for another kind of object");
    *e_p = e;
    return MPI_SUCCESS;
}

int halo_errhandler_set(halo_errhandler_t **slot, MPI_Errhandler errhandler, int objkind)
{
    halo_errhandler_t *e = NULL;
    int rc = halo_errhandler_for(errhandler, objkind, &e);
    if (rc)
        return rc;
    halo_obj_ref(e);
    halo_errhandler_release(*slot);
    *slot = e;
    return MPI_SUCCESS;
}

int halo_api_comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = halo_errhandler_set(&c->errh, errhandler, HALO_EOBJ_COMM);
    if (rc == MPI_SUCCESS && c == &halo_comm_self)
        self_errh_set = true;
    return rc;
}

int halo_api_comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    halo_obj_ref(c->errh);
    *errhandler = (MPI_Errhandler)halo_obj_handle(c->errh);
    return MPI_SUCCESS;
}

int halo_api_comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    /* The handler runs; the call returns MPI_SUCCESS once it has (MPI 5.0
     * section 9.3.6), whatever code the handler saw. */
    int rc = halo_errhandler_invoke(c->errh, HALO_EOBJ_COMM, comm, errorcode);
    (void)rc;
    return MPI_SUCCESS;
}
