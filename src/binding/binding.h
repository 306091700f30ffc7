/* What the generated entry layer (binding_gen.c) needs: initialization and
 * lock macros, argument checks, error-handler dispatch, and the table of
 * entry points that halo_info reads. */
#ifndef HALO_BINDING_BINDING_H
#define HALO_BINDING_BINDING_H

#include "core/halo.h"
#include "core/lock.h"
#include "core/obj.h"

/* Where the size lives in a communicator object (the binding layer does
 * not see the communicator's definition). */
extern const size_t halo_comm_size_offset;
/* The last communicator handle the checks found valid (checks.c): calls
 * on one communicator in a row skip the lookup. Core forgets it when a
 * communicator is freed (halo_chk_comm_forget). Relaxed atomic: the checks
 * run under the library lock but for MPI_Abort's. */
extern _Atomic(MPI_Comm) halo_comm_checked;

/* Called when an MPI function that needs an initialized library runs before
 * MPI_Init or after MPI_Finalize. */
int halo_err_not_running(const char *fname);

#define HALO_CHECK_INIT(fname)                                                              \
    do {                                                                                    \
        if (HALO_UNLIKELY(atomic_load_explicit(&halo_state, memory_order_relaxed) !=        \
                          HALO_STATE_RUNNING))                                              \
            return halo_err_not_running(fname);                                             \
    } while (0)

#define HALO_LOCK() halo_lock()
#define HALO_UNLOCK() halo_unlock()

#define HALO_CHECK(expr)                                                                    \
    do {                                                                                    \
        if (HALO_UNLIKELY((rc = (expr)) != MPI_SUCCESS))                                    \
            goto done;                                                                      \
    } while (0)

/* Objects an error can be raised on. */
enum {
    HALO_EOBJ_NONE = 0,
    HALO_EOBJ_COMM,
    HALO_EOBJ_WIN,
    HALO_EOBJ_FILE,
    HALO_EOBJ_SESSION,
    HALO_EOBJ_SESSION_INIT,   /* the handle is MPI_Session_init's errhandler argument */
    HALO_EOBJ_COMM_INIT,      /* the handle is the errhandler argument of a call that
                                 makes a communicator from a group */
    HALO_EOBJ_RETURN,         /* the code is returned, no handler runs (MPI_T_*) */
};

/* Routes an error code to the error handler of the object (MPI_COMM_SELF's
 * when there is none, or MPI_COMM_WORLD's while MPI_COMM_SELF's was never
 * set); returns the code to give back to the caller. A
 * layer may name a different object for the current call with
 * halo_err_redirect_comm (MPI_Wait raises on the request's communicator),
 * or halo_err_redirect_file for the default file error handler
 * (MPI_File_open and MPI_File_delete raise on MPI_FILE_NULL's). */
int halo_err_dispatch(int objkind, void *handle, int code, const char *fname);
void halo_err_redirect_comm(MPI_Comm comm);
void halo_err_redirect_file(void);

/* Answer of every MPI function that Halo does not implement yet. */
int halo_unsupported(const char *fname);

/* Checks: an inline fast path for the common valid case, the full check
 * (and the error message) out of line. */
int halo_chk_comm_slow(MPI_Comm comm, const char *arg);
int halo_chk_nonneg_slow(MPI_Count value, const char *arg, int errclass);
int halo_chk_dtype(MPI_Datatype type, const char *arg);
int halo_chk_dtype_committed_slow(MPI_Datatype type, const char *arg);
int halo_chk_rank_slow(MPI_Comm comm, int rank, const char *arg, int allow_any);
int halo_chk_tag_slow(int tag, const char *arg, int allow_any);
int halo_chk_outptr_slow(const void *ptr, const char *arg);

static HALO_ALWAYS_INLINE int halo_chk_comm(MPI_Comm comm, const char *arg)
{
    if (HALO_LIKELY(comm == MPI_COMM_WORLD ||
                    comm == atomic_load_explicit(&halo_comm_checked, memory_order_relaxed)))
        return MPI_SUCCESS;
    return halo_chk_comm_slow(comm, arg);
}

static HALO_ALWAYS_INLINE int halo_chk_nonneg(MPI_Count value, const char *arg, int errclass)
{
    return HALO_LIKELY(value >= 0) ? MPI_SUCCESS : halo_chk_nonneg_slow(value, arg, errclass);
}

/* Predefined datatypes are always committed. */
static HALO_ALWAYS_INLINE int halo_chk_dtype_committed(MPI_Datatype type, const char *arg)
{
    uintptr_t v = (uintptr_t)type;
    if (HALO_LIKELY(v < 0x1000 && v > (uintptr_t)MPI_DATATYPE_NULL && halo_obj_predef_table[v]))
        return MPI_SUCCESS;
    return halo_chk_dtype_committed_slow(type, arg);
}

/* The rank is in range for a communicator the binding already validated. */
static HALO_ALWAYS_INLINE int halo_chk_rank(MPI_Comm comm, int rank, const char *arg, int allow_any)
{
    const int *size = (const int *)((const char *)halo_obj_fast(comm) + halo_comm_size_offset);
    if (HALO_LIKELY((unsigned)rank < (unsigned)*size))
        return MPI_SUCCESS;
    return halo_chk_rank_slow(comm, rank, arg, allow_any);
}

static HALO_ALWAYS_INLINE int halo_chk_tag(int tag, const char *arg, int allow_any)
{
    return HALO_LIKELY(tag >= 0) ? MPI_SUCCESS : halo_chk_tag_slow(tag, arg, allow_any);
}

/* Output arguments: no address in the first page is one (NULL, or a
 * handle constant such as MPI_GROUP_NULL passed instead of a pointer to a
 * handle: the standard ABI's constants are small integers). */
#define HALO_FIRST_PAGE 4096
static HALO_ALWAYS_INLINE int halo_chk_outptr(const void *ptr, const char *arg)
{
    return HALO_LIKELY((uintptr_t)ptr >= HALO_FIRST_PAGE) ? MPI_SUCCESS : halo_chk_outptr_slow(ptr, arg);
}

typedef struct halo_api_entry {
    const char *name;
    void (*impl)(void);   /* halo_api_X as linked */
    void (*dflt)(void);   /* the weak default: impl == dflt means "not implemented here" */
    int twin;             /* index of the _c twin the default forwards to, or -1 */
} halo_api_entry_t;

extern const halo_api_entry_t halo_api_table[];
extern const int halo_api_table_len;

#endif
