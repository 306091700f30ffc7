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
 * Members bound to the root's CPU (halo_shm_root_moves) publish where
 * their buffer lies instead, and the root writes the bytes into it
 * (process_vm_writev) and raises its flag to 2, which they wait for. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

int halo_bcast_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me, root = a->root;   /* one node: members are ranks */
    MPI_Count n = a->count * halo_type_size(a->type);
    if (nm == 1 || n == 0)
        return MPI_SUCCESS;
    char *buf = a->rbuf;
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    if (me == root) {
        const char *pub = halo_shm_publish_bytes(s_p, 0, me, buf, a->count, a->type, n, false);
        int npushed = 0;
        for (int j = 0; j < nm; j++)
            if (halo_shm_root_moves(c, root, j, n)) {
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
    if (halo_shm_root_moves(c, root, me, n)) {
        MPI_Count off;
        bool one_run = halo_dt_one_run(halo_dtype_ptr(a->type), a->count, &off);
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
