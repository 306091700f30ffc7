/* Allreduce by single-copy reads and writes (cma): every member publishes,
 * in its flag line, where its input and its result lie; member i then
 * reads part i of every other member's input straight from that member's
 * memory (process_vm_readv), folds the parts in member order, and writes
 * the reduced part into every other member's result (process_vm_writev).
 * Flag 1: the addresses are out; DONE: this member's part is written
 * everywhere (and it reads no other input any more); a member's result is
 * complete once every member is done.
 *
 * Cost: two flag transfers whatever the size; every member reads and
 * reduces (L - 1) n / L bytes and writes as many, one system call per
 * other member and chunk of its part. shm_rsag moves the same bytes twice
 * (into the slots, then out) with three flag transfers per 64 KiB chunk;
 * where members outnumber the cores each transfer waits for a context
 * switch, and this form saves all but two.
 *
 * Buffers are read and written as spans: the bytes from an element's true
 * lower bound to the last one's true upper bound, holes included (parts of
 * a span that are copied keep the elements' layout, as in the slots). A
 * buffer with holes (a datatype whose elements do not abut) is not
 * published itself: the member publishes a copy of its input and a
 * staging result, so nothing writes into the holes of a user's buffer.
 * Any operation, commutative or not (x_0 op (x_1 op ... x_{L-1}), folded
 * from the last member down). One node, where the node's ranks may
 * access each other's memory (HALO_ALG_CMA). Elements whose true extent
 * exceeds their extent interleave, and a span written for one part would
 * cover bytes of the next: those datatypes go to shm_rsag. */
#include "coll/algos.h"
#include "coll/shm.h"
#include "datatype/dtype.h"

/* Bytes of a member's part reduced at a time: a chunk of every other
 * member's input and the accumulated result stay in the core's cache. */
#define CMA_CHUNK (128 * 1024)

/* Where the addresses go in the flag line's spare bytes. */
enum { AT_IN = 0, AT_OUT = 8 };

int halo_allreduce_cma(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    const halo_coll_topo_t *t = halo_coll_topo(c);
    int nm = t->nlocal, me = t->me;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    bool in_place = a->sbuf == MPI_IN_PLACE;
    const char *in = in_place ? (const char *)a->rbuf : (const char *)a->sbuf;
    char *out = a->rbuf;
    if (count == 0)
        return MPI_SUCCESS;
    if (nm == 1) {
        if (!in_place)
            halo_sched_copy(s_p, 0, halo_addr(in), count, type, halo_addr(out), count, type);
        return MPI_SUCCESS;
    }
    const halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Aint ext = dt->extent, lb = dt->true_lb, tx = dt->true_ub - dt->true_lb;
    if (tx > ext)
        return halo_allreduce_shm_rsag(a, c, s_p);
    MPI_Count off;
    bool holes = !halo_dt_one_run(dt, count, &off);   /* else the buffer is its own span */
    /* The published buffers (element 0's origin, as typed buffers have it). */
    const char *pin = in;
    char *pout = out;
    halo_shm_use(s_p);
    halo_shm_wait_prev(s_p, 0);
    if (holes) {
        char *tin = halo_sched_tmp(s_p, count, type);
        halo_sched_copy(s_p, 0, halo_addr(in), count, type, halo_addr(tin), count, type);
        pin = tin;
        pout = halo_sched_tmp(s_p, count, type);
    }
    uint64_t *addrs = halo_sched_tmp(s_p, 2, MPI_UINT64_T);
    addrs[0] = (uint64_t)(uintptr_t)(pin + lb);
    addrs[1] = (uint64_t)(uintptr_t)(pout + lb);
    halo_sched_copy(s_p, 0, halo_addr(addrs), 2, MPI_UINT64_T, halo_line(me, AT_IN), 2, MPI_UINT64_T);
    halo_shm_set(s_p, 0, 1);

    /* My part, chunk by chunk: the last member's chunk into the
     * accumulator, then x_i op acc for i from L - 2 down to 0. The result
     * buffer accumulates directly unless it is the input too. */
    halo_shm_wait(s_p, 1, HALO_SHM_ALL, 1);
    MPI_Count lo = halo_block_start(count, nm, me), hi = halo_block_start(count, nm, me + 1);
    MPI_Count per = CMA_CHUNK / ext > 0 ? CMA_CHUNK / ext : 1;
    MPI_Count span_max = (per - 1) * ext + tx;
    int64_t tmp = halo_sched_scratch(s_p, (uint64_t)span_max);
    bool direct = pout != pin;
    int64_t acc = direct ? 0 : halo_sched_scratch(s_p, (uint64_t)span_max);
    for (MPI_Count c0 = lo; c0 < hi; c0 += per) {
        MPI_Count n = hi - c0 < per ? hi - c0 : per;
        MPI_Count span = (n - 1) * ext + tx;
        halo_bref_t mine = halo_addr(pin + c0 * ext);
        halo_bref_t at = direct ? halo_addr(pout + c0 * ext) : halo_scr(acc - lb);
        for (int i = nm - 1; i >= 0; i--) {
            if (i == me && i == nm - 1)
                halo_sched_copy(s_p, 1, mine, n, type, at, n, type);
            else if (i == me)
                halo_sched_reduce(s_p, 1, mine, at, n, type, a->op);
            else if (i == nm - 1)
                halo_sched_cma(s_p, 1, false, halo_line(i, AT_IN), t->local[i], c0 * ext,
                               halo_bref_add(at, lb), span);
            else {
                halo_sched_cma(s_p, 1, false, halo_line(i, AT_IN), t->local[i], c0 * ext, halo_scr(tmp), span);
                halo_sched_reduce(s_p, 1, halo_scr(tmp - lb), at, n, type, a->op);
            }
        }
        if (!direct)
            halo_sched_copy(s_p, 1, at, n, type, halo_addr(pout + c0 * ext), n, type);
    }
    if (hi > lo) {
        MPI_Count span = (hi - lo - 1) * ext + tx;
        for (int k = 1; k < nm; k++) {
            int j = (me + k) % nm;
            halo_sched_cma(s_p, 1, true, halo_line(j, AT_OUT), t->local[j], lo * ext,
                           halo_addr(pout + lb + lo * ext), span);
        }
    }
    halo_shm_set(s_p, 1, HALO_SHM_DONE);

    /* Every part is in. */
    halo_shm_wait(s_p, 2, HALO_SHM_ALL, HALO_SHM_DONE);
    if (holes)
        halo_sched_copy(s_p, 2, halo_addr(pout), count, type, halo_addr(out), count, type);
    return MPI_SUCCESS;
}
