/* The library lock.
 *
 * At MPI_THREAD_MULTIPLE every MPI call runs under one lock (the first
 * "virtual communication interface"; finer locks per channel come later).
 * Below MULTIPLE the lock is never taken and costs one predictable branch.
 *
 * The lock is recursive per thread, because callbacks the library calls with
 * the lock held (reduction operations, attribute callbacks, generalized
 * request callbacks) may call MPI again. A thread that blocks (waits for a
 * message, sleeps on the doorbell) releases it fully with halo_lock_yield_begin
 * and takes it back with halo_lock_yield_end, so no lock is held across a wait. */
#ifndef HALO_CORE_LOCK_H
#define HALO_CORE_LOCK_H

#include <pthread.h>

#include "core/halo.h"

extern int halo_lock_enabled;
extern pthread_mutex_t halo_big_lock;
extern HALO_TLS int halo_lock_depth;

static inline void halo_lock(void)
{
    if (halo_lock_enabled && halo_lock_depth++ == 0)
        pthread_mutex_lock(&halo_big_lock);
}

static inline void halo_unlock(void)
{
    if (halo_lock_enabled && --halo_lock_depth == 0)
        pthread_mutex_unlock(&halo_big_lock);
}

/* Releases the lock entirely (whatever the depth); returns the depth to
 * restore. */
static inline int halo_lock_yield_begin(void)
{
    int depth = halo_lock_depth;
    if (halo_lock_enabled && depth > 0) {
        halo_lock_depth = 0;
        pthread_mutex_unlock(&halo_big_lock);
    }
    return depth;
}

static inline void halo_lock_yield_end(int depth)
{
    if (halo_lock_enabled && depth > 0) {
        pthread_mutex_lock(&halo_big_lock);
        halo_lock_depth = depth;
    }
}

#endif
