/* Broadcast by single-copy reads (cma): the root publishes in its flag
 * line where its data lie, raises its flag to 1, and waits until every
 * member is done; each member reads the bytes straight from the root's
 * memory (process_vm_readv) and raises its flag to DONE.
 *
 * The bytes published are packed ones: the root's buffer itself when it is
 * one run, else a packed copy the root makes first; a member whose buffer
 * is not one run reads into its scratch area and unpacks from there. So
 * any datatypes of the same signature meet.
 *
 * Cost: two flag transfers, one system call per member, n bytes read by
 * each member at once (where members outnumber the cores, in turn on each
 * core); no copy through the slots. Beside the rendezvous message that the
 * binomial and linear forms send at two ranks (a request-to-send packet,
 * its matching, the same read, a closing packet and its matching) it keeps
 * the read and drops the packets. One node, where the node's ranks may
 * read each other's memory (HALO_ALG_CMA).
 *
 * Members bound to the root's CPU (the ranks outnumber the cores and
 * mpiexec binds them round robin) publish where their buffer lies instead
 * and the root writes the bytes into it (process_vm_writev), then raises
 * its flag to 2 (see pushed() for when): the kernel pins the pages of the process it reads or
 * writes under a lock of that process's page tables, and readers on two
 * CPUs taking the root's lock for every page at once spent more time
 * waiting for it than copying (4 ranks, 128 KiB: a fifth of the time). A
 * CPU's members run one at a time anyway, so the root copying for its own
 * CPU's members costs that CPU nothing more, and only one process at a
 * time then pins the root's pages. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"
#include "transport/transport.h"

/* Pushing pays where the copies are long enough for the readers' fight
 * over the lock to cost more than the extra round of context switches
 * that the root's writes wait for (a member publishes its address first):
 * always with one member beside the root on its CPU, and above this size
 * with more (8 ranks on 2 CPUs, medians of 7 runs, us: 128 KiB 16.0
 * pushed against 14.5 read, 256 KiB 28.4 against 40.3, 1 MiB 204 against
 * 214). */
#define PUSH_MANY_MIN (128 * 1024 + 1)

static bool shares(halo_comm_t *c, const halo_coll_topo_t *t, int k)
{
    return k != t->me && halo_tr_shares_cpu(c->world[t->local[k]]);
}

/* Whether the root writes member j's n bytes: j is bound to the root's
 * CPU, alone there beside it or the bytes are many. The root and j see the
 * same answer (the same set of ranks shares that CPU). */
static bool pushed(halo_comm_t *c, const halo_coll_topo_t *t, int root, int j, MPI_Count n)
{
    int me = t->me;
    if (j == root || (me != root && me != j) || !shares(c, t, me == root ? j : root))
        return false;
    if (n >= PUSH_MANY_MIN)
        return true;
    int mates = me == root ? 0 : 1;   /* the root's other members on its CPU */
    for (int k = 0; k < t->nlocal && mates < 2; k++)
        if (k != root && shares(c, t, k))
            mates++;
    return mates == 1;
}

int halo_bcast_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;   /* one node: members are ranks */
    MPI_Count n = a->count * halo_type_size(a->type);
    if (nm == 1 || n == 0)
        return MPI_SUCCESS;
    char *buf = a->rbuf;
    MPI_Count off;
    bool one_run = halo_dt_one_run(halo_dtype_ptr(a->type), a->count, &off);
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    if (me == root) {
        const char *pub;
        if (one_run) {
            pub = buf + off;
        } else {
            char *packed = halo_sched_tmp(s_p, n, MPI_BYTE);
            halo_sched_pack(s_p, 0, halo_addr(buf), a->count, a->type, 0, n, halo_addr(packed));
            pub = packed;
        }
        halo_shm_publish(s_p, 0, me, pub);
        int npushed = 0;
        for (int j = 0; j < nm; j++)
            if (pushed(c, t, root, j, n)) {
                halo_shm_wait(s_p, 1, j, 1);   /* its buffer's address */
                halo_sched_cma(s_p, 1, true, halo_line(j, 0), t->local[j], 0, halo_addr(pub), n);
                npushed++;
            }
        if (npushed)
            halo_shm_set(s_p, 1, 2);
        halo_shm_wait(s_p, 2, HALO_SHM_ALL, HALO_SHM_DONE);   /* every member has its bytes */
        halo_shm_set(s_p, 2, HALO_SHM_DONE);
        return MPI_SUCCESS;
    }
    if (pushed(c, t, root, me, n)) {
        char *into = one_run ? buf + off : halo_sched_tmp(s_p, n, MPI_BYTE);
        halo_shm_publish(s_p, 0, me, into);
        halo_shm_wait(s_p, 1, root, 2);
        if (!one_run)
            halo_sched_unpack(s_p, 1, halo_addr(into), 0, n, halo_addr(buf), a->count, a->type);
        halo_shm_set(s_p, 1, HALO_SHM_DONE);
        return MPI_SUCCESS;
    }
    halo_shm_wait(s_p, 1, root, 1);
    halo_shm_cma_block(s_p, 1, false, root, t->local[root], 0, buf, a->count, a->type, n);
    halo_shm_set(s_p, 1, HALO_SHM_DONE);
    return MPI_SUCCESS;
}
