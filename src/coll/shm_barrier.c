/* Barriers through shared memory, no message. One node (HALO_ALG_ONE_NODE).
 *
 * shm: every member raises its flag, then waits for everyone else's.
 * Cost: one flag store and L - 1 flag loads per member, one cache-line
 * transfer of latency; L (L - 1) lines cross in all.
 *
 * shm_fan: the members raise their flags, member 0 waits for all of them,
 * then raises its own, which releases the others (fan-in, fan-out).
 * Cost: two cache-line transfers of latency, 2 (L - 1) lines cross. Member
 * 0 always leaves first, as soon as the last member arrives; with more
 * ranks than cores, the others leave as the scheduler runs them. */
#include "coll/algos.h"
#include "coll/shm.h"

int halo_shm_barrier_steps(halo_sched_t **s_p, int round, int nmembers, int me)
{
    (void)me;
    if (nmembers == 1)
        return round;
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, round);
    halo_shm_set(s_p, round, HALO_SHM_DONE);
    halo_shm_wait(s_p, round + 1, HALO_SHM_ALL, HALO_SHM_DONE);
    return round + 2;
}

int halo_barrier_shm(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    (void)a;
    const halo_coll_topo_t *t = halo_coll_topo(c);
    halo_shm_barrier_steps(s_p, 0, t->nlocal, t->me);
    return MPI_SUCCESS;
}

int halo_barrier_shm_fan(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    (void)a;
    const halo_coll_topo_t *t = halo_coll_topo(c);
    if (t->nlocal == 1)
        return MPI_SUCCESS;
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    if (t->me == 0) {
        halo_shm_wait(s_p, 0, HALO_SHM_ALL, HALO_SHM_DONE);
        halo_shm_set(s_p, 1, HALO_SHM_DONE);
    } else {
        halo_shm_set(s_p, 0, HALO_SHM_DONE);
        halo_shm_wait(s_p, 1, 0, HALO_SHM_DONE);
    }
    return MPI_SUCCESS;
}
