/* Context ids.
 *
 * Every process keeps a counter of ids it has never used. A new
 * communicator's id is the maximum of the members' counters, agreed with an
 * allreduce over the parent; all members then move their counters past it.
 * Ids are never reused, so the only way two live communicators of one
 * process could get the same id is two allocations running at once in two
 * threads: under MPI_THREAD_MULTIPLE each allocation therefore reserves its
 * id and a second allreduce (logical and) confirms that no member had it
 * reserved already; otherwise all retry above it. Each retry raises every
 * member's counter, so the loop ends; there is no lock to deadlock on. */
#include "coll/coll.h"
#include "core/comm.h"
#include "core/errors.h"

static uint32_t next_id = 8;   /* ids 1 and 2 are MPI_COMM_WORLD and MPI_COMM_SELF */

/* Ids reserved or in use by allocations still running (THREAD_MULTIPLE). */
static uint32_t *reserved;
static int nreserved, capreserved;

static bool is_reserved(uint32_t id)
{
    for (int i = 0; i < nreserved; i++)
        if (reserved[i] == id)
            return true;
    return false;
}

static void reserve(uint32_t id)
{
    if (nreserved == capreserved) {
        capreserved = capreserved ? 2 * capreserved : 16;
        reserved = halo_realloc(reserved, (size_t)capreserved * sizeof *reserved);
    }
    reserved[nreserved++] = id;
}

static void unreserve(uint32_t id)
{
    for (int i = 0; i < nreserved; i++) {
        if (reserved[i] == id) {
            reserved[i] = reserved[--nreserved];
            return;
        }
    }
}

int halo_context_alloc(halo_comm_t *comm, uint32_t *ctx_p)
{
    for (;;) {
        uint32_t mine = next_id, agreed;
        int rc = halo_coll_allreduce(&mine, &agreed, 1, MPI_UINT32_T, MPI_MAX, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (agreed >= (1u << (32 - HALO_CTX_SHIFT)) - 1)
            return halo_err(MPI_ERR_INTERN, ": out of communicator context ids");
        if (halo_thread_level < MPI_THREAD_MULTIPLE) {
            next_id = agreed + 1;
            *ctx_p = agreed << HALO_CTX_SHIFT;
            return MPI_SUCCESS;
        }
        int ok = !is_reserved(agreed), all_ok;
        if (ok)
            reserve(agreed);
        if (next_id <= agreed)
            next_id = agreed + 1;
        rc = halo_coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (all_ok) {
            *ctx_p = agreed << HALO_CTX_SHIFT;
            return MPI_SUCCESS;
        }
        if (ok)
            unreserve(agreed);
    }
}

void halo_context_free(uint32_t ctx)
{
    unreserve(ctx >> HALO_CTX_SHIFT);
}

/* ---------------------------------------------------------------- steps
 * The allocation above, in pieces, for agreements that do not run as one
 * blocking allreduce over a communicator (comm_agree.c). */

uint32_t halo_context_propose(void)
{
    return next_id;
}

int halo_context_check(uint32_t id)
{
    if (id >= (1u << (32 - HALO_CTX_SHIFT)) - 1)
        return halo_err(MPI_ERR_INTERN, ": out of communicator context ids");
    return MPI_SUCCESS;
}

/* After the first exchange: may this process use id? (Reserves it if so,
 * at MPI_THREAD_MULTIPLE.) Moves the counter past it either way. */
bool halo_context_try(uint32_t id)
{
    if (next_id <= id)
        next_id = id + 1;
    if (halo_thread_level < MPI_THREAD_MULTIPLE)
        return true;
    if (is_reserved(id))
        return false;
    reserve(id);
    return true;
}

void halo_context_claim(uint32_t ctx)
{
    uint32_t id = ctx >> HALO_CTX_SHIFT;
    if (next_id <= id)
        next_id = id + 1;
    if (halo_thread_level == MPI_THREAD_MULTIPLE && !is_reserved(id))
        reserve(id);
}
