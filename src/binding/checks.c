/* Argument checks the generated entry points run before calling the
 * internals (only the checks that hold for every call of a function; the
 * rest is checked where the semantics live). */
#include "binding/binding.h"
#include "core/comm.h"
#include "core/errors.h"
#include "datatype/dtype.h"

const size_t halo_comm_size_offset = offsetof(halo_comm_t, peer_size);
_Atomic(MPI_Comm) halo_comm_checked = MPI_COMM_WORLD;

void halo_chk_comm_forget(MPI_Comm c)
{
    MPI_Comm expected = c;
    atomic_compare_exchange_strong_explicit(&halo_comm_checked, &expected, MPI_COMM_WORLD,
                                            memory_order_relaxed, memory_order_relaxed);
}

int halo_chk_comm_slow(MPI_Comm comm, const char *arg)
{
    if (HALO_LIKELY((uintptr_t)comm == (uintptr_t)MPI_COMM_WORLD))
        return MPI_SUCCESS;
    if (comm == MPI_COMM_NULL)
        return halo_err(MPI_ERR_COMM, "(%s=MPI_COMM_NULL): a communicator is required", arg);
    if (!halo_comm_get(comm))
        return halo_err(MPI_ERR_COMM, "(%s=%p): not a valid communicator", arg, (void *)comm);
    atomic_store_explicit(&halo_comm_checked, comm, memory_order_relaxed);
    return MPI_SUCCESS;
}

int halo_chk_nonneg_slow(MPI_Count value, const char *arg, int errclass)
{
    if (HALO_UNLIKELY(value < 0))
        return halo_err(errclass, "(%s=%lld): %s must be non-negative", arg, (long long)value, arg);
    return MPI_SUCCESS;
}

static int dtype_check(MPI_Datatype type, const char *arg, halo_dtype_t **dt_p)
{
    if (type == MPI_DATATYPE_NULL)
        return halo_err(MPI_ERR_TYPE, "(%s=MPI_DATATYPE_NULL): a datatype is required", arg);
    halo_dtype_t *dt = halo_dtype_get(type);
    if (!dt)
        return halo_err(MPI_ERR_TYPE, "(%s=%p): not a valid datatype", arg, (void *)type);
    *dt_p = dt;
    return MPI_SUCCESS;
}

int halo_chk_dtype(MPI_Datatype type, const char *arg)
{
    halo_dtype_t *dt;
    return dtype_check(type, arg, &dt);
}

int halo_chk_dtype_committed_slow(MPI_Datatype type, const char *arg)
{
    if (HALO_LIKELY((uintptr_t)type < HALO_PREDEF_LIMIT && halo_obj_predef_table[(uintptr_t)type] &&
                    halo_obj_predef_table[(uintptr_t)type]->kind == HALO_KIND_DTYPE))
        return MPI_SUCCESS;
    halo_dtype_t *dt = NULL;
    int rc = dtype_check(type, arg, &dt);
    if (rc)
        return rc;
    if (!(dt->flags & HALO_DT_COMMITTED))
        return halo_err(MPI_ERR_TYPE, "(%s): the datatype is not committed (call MPI_Type_commit)", arg);
    return MPI_SUCCESS;
}

int halo_chk_rank_slow(MPI_Comm comm, int rank, const char *arg, int allow_any)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int size = c->peer_size;
    if (HALO_LIKELY(rank >= 0 && rank < size))
        return MPI_SUCCESS;
    if (rank == MPI_PROC_NULL || (allow_any && rank == MPI_ANY_SOURCE))
        return MPI_SUCCESS;
    return halo_err(MPI_ERR_RANK, "(%s=%d): not a rank of the communicator (size %d)%s", arg, rank, size,
                    allow_any ? "" : "; MPI_ANY_SOURCE is only for receives");
}

int halo_chk_tag_slow(int tag, const char *arg, int allow_any)
{
    if (HALO_LIKELY(tag >= 0))
        return MPI_SUCCESS;
    if (allow_any && tag == MPI_ANY_TAG)
        return MPI_SUCCESS;
    return halo_err(MPI_ERR_TAG, "(%s=%d): tags must be between 0 and MPI_TAG_UB%s", arg, tag,
                    allow_any ? " (or MPI_ANY_TAG)" : "");
}

int halo_chk_outptr_slow(const void *ptr, const char *arg)
{
    if (HALO_UNLIKELY(ptr == NULL))
        return halo_err(MPI_ERR_ARG, "(%s=NULL): an output argument is required", arg);
    if (HALO_UNLIKELY((uintptr_t)ptr < HALO_FIRST_PAGE))
        return halo_err(MPI_ERR_ARG, "(%s=%p): not the address of a variable (a handle constant "
                        "where a pointer to a handle belongs?)", arg, ptr);
    return MPI_SUCCESS;
}
