/* Context ids.
 *
 * Every process keeps `next_id`, above every id it has used or offered,
 * and a bitmap of the ids it has taken below it. Ids are never reused.
 * A new communicator's id comes from an agreement among its members: each
 * offers a candidate, an allreduce takes the maximum, and each member
 * takes the agreed id if it is still free there.
 *
 *  - A blocking agreement with no other agreement running in another thread
 *    offers next_id itself. The maximum is then at least every member's
 *    next_id, so it is free everywhere: one allreduce suffices.
 *  - Agreements that can overlap others on the same process (nonblocking
 *    ones, and all of them at MPI_THREAD_MULTIPLE) offer a candidate that
 *    they reserve (next_id moves past it), so that overlapping agreements
 *    offer different ids. The agreed id may still be taken or reserved on
 *    some member; a second allreduce (logical and) confirms that every
 *    member could take it, else all retry. A retry offers a candidate a
 *    random distance further up, so that two agreements that keep meeting
 *    in opposite orders on two processes drift apart.
 * There is no lock to deadlock on; the global lock orders the steps. */
#include <string.h>
#include <unistd.h>

#include "coll/coll.h"
#include "core/comm.h"
#include "core/errors.h"

static uint32_t next_id = 8;   /* ids 1 and 2 are MPI_COMM_WORLD and MPI_COMM_SELF */

/* Ids below next_id taken by a communicator of this process. */
static uint8_t *taken;
static uint32_t taken_bits;

/* Candidates offered by agreements still running. */
static uint32_t *reserved;
static int nreserved, capreserved;

static bool is_taken(uint32_t id)
{
    return id < taken_bits && (taken[id >> 3] >> (id & 7)) & 1;
}

static void set_taken(uint32_t id, bool on)
{
    if (id >= taken_bits) {
        if (!on)
            return;
        uint32_t bits = taken_bits ? taken_bits : 1024;
        while (bits <= id)
            bits *= 2;
        taken = halo_realloc(taken, bits / 8);
        memset(taken + taken_bits / 8, 0, (bits - taken_bits) / 8);
        taken_bits = bits;
    }
    if (on)
        taken[id >> 3] |= (uint8_t)(1u << (id & 7));
    else
        taken[id >> 3] &= (uint8_t)~(1u << (id & 7));
}

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

static void take(uint32_t id)
{
    set_taken(id, true);
    if (next_id <= id)
        next_id = id + 1;
}

int halo_context_alloc(halo_comm_t *comm, uint32_t *ctx_p)
{
    for (int attempt = 0;; attempt++) {
        bool confirm = halo_thread_level == MPI_THREAD_MULTIPLE;
        uint32_t mine = confirm ? halo_context_propose(attempt) : next_id, agreed;
        int rc = halo_coll_allreduce(&mine, &agreed, 1, MPI_UINT32_T, MPI_MAX, comm);
        if (rc == MPI_SUCCESS)
            rc = halo_context_check(agreed);
        if (rc != MPI_SUCCESS) {
            if (confirm)
                unreserve(mine);
            return rc;
        }
        if (!confirm) {
            take(agreed);
            *ctx_p = agreed << HALO_CTX_SHIFT;
            return MPI_SUCCESS;
        }
        int ok = halo_context_try(agreed, mine), all_ok;
        rc = halo_coll_allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (all_ok) {
            *ctx_p = agreed << HALO_CTX_SHIFT;
            return MPI_SUCCESS;
        }
        if (ok)
            halo_context_untake(agreed);
    }
}

/* ---------------------------------------------------------------- steps
 * The allocation above, in pieces, for agreements that do not run as one
 * blocking allreduce over a communicator (comm_agree.c). */

uint32_t halo_context_propose(int attempt)
{
    uint32_t id = next_id;
    if (attempt > 0) {
        /* xorshift on a per-process state: processes must not draw alike */
        static uint32_t rng;
        if (!rng)
            rng = 0x9e3779b9u ^ (uint32_t)halo_world.rank * 0x85ebca6bu ^ (uint32_t)getpid();
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        int span = 4 << (attempt < 8 ? attempt : 8);
        id += rng % (uint32_t)span;
    }
    reserve(id);
    next_id = id + 1;
    return id;
}

int halo_context_check(uint32_t id)
{
    if (id >= (1u << (32 - HALO_CTX_SHIFT)) - 1)
        return halo_err(MPI_ERR_INTERN, ": out of communicator context ids");
    return MPI_SUCCESS;
}

bool halo_context_try(uint32_t id, uint32_t mine)
{
    unreserve(mine);
    if (is_taken(id) || is_reserved(id))
        return false;
    take(id);
    return true;
}

void halo_context_untake(uint32_t id)
{
    set_taken(id, false);
}

void halo_context_unreserve(uint32_t id)
{
    unreserve(id);
}

void halo_context_claim(uint32_t ctx)
{
    take(ctx >> HALO_CTX_SHIFT);
}
