/* Helpers shared by the algorithms (declared in algos.h): scratch laid out
 * like a user buffer, staging of non-contiguous buffers as bytes, the
 * bound on in-place scratch, and one view of the blocks of Alltoall,
 * Alltoallv and Alltoallw. */
#include "coll/algos.h"

#include "coll/shm.h"
#include "core/config.h"
#include "progress/progress.h"
#include "transport/transport.h"

HALO_CFG_INT(cfg_scratch_max, "HALO_COLL_SCRATCH_MAX", 64L << 20,
             "scratch in bytes above which an in-place Alltoall swaps its blocks pair by pair in "
             "chunks, and an in-place Allreduce of a commutative operation takes the ring");

MPI_Count halo_coll_scratch_max(void)
{
    return (MPI_Count)halo_cfg_get(&cfg_scratch_max);
}

/* Measured with Scatter by messages forced (HALO_SCATTER_ALGORITHM=linear,
 * the eager limit lowered to 2 KiB as the stand-in, two alternations, us):
 * 8 ranks on 2 cores, 4/8/16 KiB blocks 2.7-2.9/3.1/3.6-3.7 against
 * 3.1-4.6/4.8-5.4/6.1-6.4 eager; 4 ranks 2.1/2.3-2.4/2.8-2.9 against
 * 1.4-1.6/2.1-2.3/3.0-3.5 (then, default build against before, five rounds:
 * 4 ranks 8 KiB 2.43 against 2.17, 16 KiB 2.93 against 3.32): above 24 KiB
 * in all. */
bool halo_coll_fanout_rdv(MPI_Count bytes, int receivers)
{
    /* Without single-copy reads a rendezvous pushes through the same cells
     * after a round trip: eager is better then. */
    return halo_progress_oversubscribed() && bytes >= 4096 && bytes * receivers > 24576 && halo_tr_cma_node();
}

halo_bref_t halo_sched_span(halo_sched_t **s_p, MPI_Count count, MPI_Datatype type)
{
    halo_dtype_t *dt = halo_dtype_ptr(type);
    MPI_Count span = count > 0 ? (count - 1) * dt->extent + (dt->true_ub - dt->true_lb) : 0;
    if (span < 0)
        span = 0;
    int64_t off = halo_sched_scratch(s_p, (uint64_t)span);
    return halo_bref_add(halo_scr(off), -(int64_t)dt->true_lb);
}

halo_bref_t halo_sched_stage(halo_sched_t **s_p, int round, void *buf, MPI_Count count,
                             MPI_Datatype type, bool load)
{
    halo_dtype_t *dt = halo_dtype_ptr(type);
    if (halo_dt_contig(dt))
        return halo_addr(buf);
    MPI_Count bytes = count * dt->size;
    halo_bref_t st = halo_scr(halo_sched_scratch(s_p, (uint64_t)bytes));
    if (load)
        halo_sched_copy(s_p, round, halo_addr(buf), count, type, st, bytes, MPI_BYTE);
    return st;
}

void halo_sched_unstage(halo_sched_t **s_p, int round, halo_bref_t staged, void *buf,
                        MPI_Count count, MPI_Datatype type)
{
    halo_dtype_t *dt = halo_dtype_ptr(type);
    if (halo_dt_contig(dt))
        return;
    halo_sched_copy(s_p, round, staged, count * dt->size, MPI_BYTE, halo_addr(buf), count, type);
}

void halo_a2a_send_block(const halo_coll_args_t *a, int p, int peer, halo_bref_t *buf_p,
                         MPI_Count *count_p, MPI_Datatype *type_p)
{
    (void)p;
    halo_bref_t b = halo_addr(a->sbuf);
    switch (a->kind) {
    case HALO_COLL_ALLTOALL:
        *buf_p = halo_bref_add(b, (int64_t)peer * a->scount * halo_type_extent(a->stype));
        *count_p = a->scount;
        *type_p = a->stype;
        break;
    case HALO_COLL_ALLTOALLV:
        *buf_p = halo_bref_add(b, (int64_t)a->sdispls[peer] * halo_type_extent(a->stype));
        *count_p = a->scounts[peer];
        *type_p = a->stype;
        break;
    default:
        *buf_p = halo_bref_add(b, (int64_t)a->sdispls[peer]);
        *count_p = a->scounts[peer];
        *type_p = a->stypes[peer];
        break;
    }
}

void halo_a2a_recv_block(const halo_coll_args_t *a, int p, int peer, halo_bref_t *buf_p,
                         MPI_Count *count_p, MPI_Datatype *type_p)
{
    (void)p;
    halo_bref_t b = halo_addr(a->rbuf);
    switch (a->kind) {
    case HALO_COLL_ALLTOALL:
        *buf_p = halo_bref_add(b, (int64_t)peer * a->rcount * halo_type_extent(a->rtype));
        *count_p = a->rcount;
        *type_p = a->rtype;
        break;
    case HALO_COLL_ALLTOALLV:
        *buf_p = halo_bref_add(b, (int64_t)a->rdispls[peer] * halo_type_extent(a->rtype));
        *count_p = a->rcounts[peer];
        *type_p = a->rtype;
        break;
    default:
        *buf_p = halo_bref_add(b, (int64_t)a->rdispls[peer]);
        *count_p = a->rcounts[peer];
        *type_p = a->rtypes[peer];
        break;
    }
}

void halo_a2a_stage_in_place(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p,
                             int round, halo_bref_t *out, MPI_Count *bytes)
{
    int p = c->size;
    MPI_Count total = 0;
    for (int j = 0; j < p; j++) {
        halo_bref_t b;
        MPI_Count n;
        MPI_Datatype t;
        halo_a2a_recv_block(a, p, j, &b, &n, &t);
        bytes[j] = j == c->rank ? 0 : n * halo_type_size(t);
        total += bytes[j];
    }
    int64_t base = halo_sched_scratch(s_p, (uint64_t)total);
    MPI_Count off = 0;
    for (int j = 0; j < p; j++) {
        halo_bref_t b;
        MPI_Count n;
        MPI_Datatype t;
        halo_a2a_recv_block(a, p, j, &b, &n, &t);
        out[j] = halo_scr(base + off);
        if (j != c->rank)
            halo_sched_copy(s_p, round, b, n, t, out[j], bytes[j], MPI_BYTE);
        off += bytes[j];
    }
}

bool halo_a2a_in_place_too_big(const halo_coll_args_t *a, halo_comm_t *c)
{
    return a->kind == HALO_COLL_ALLTOALL &&
           (MPI_Count)(c->size - 1) * a->rcount * halo_type_size(a->rtype) > halo_coll_scratch_max();
}

/* (cpu, rank) pairs, by CPU then rank. */
static int by_cpu(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : (a[1] > b[1]) - (a[1] < b[1]);
}

bool halo_coll_cpu_order(halo_comm_t *c, int root, int *order)
{
    int p = c->size;
    if (p < 4 || !halo_progress_oversubscribed() || !halo_coll_topo(c)->one_node)
        return false;
    int (*key)[2] = halo_malloc((size_t)p * sizeof *key);
    bool ok = true;
    for (int r = 0; r < p && ok; r++) {
        key[r][0] = halo_tr_bound_cpu(c->world[r]);
        key[r][1] = r;
        ok = key[r][0] >= 0;
    }
    bool shared = false;
    if (ok) {
        /* The root's CPU first (a CPU number below every other), the root
         * first in it; then each CPU's ranks in rank order, the CPUs by
         * number. */
        int root_cpu = key[root][0];
        for (int r = 0; r < p; r++)
            if (key[r][0] == root_cpu)
                key[r][0] = r == root ? -2 : -1;
        qsort(key, (size_t)p, sizeof *key, by_cpu);
        for (int x = 0; x < p; x++) {
            order[x] = key[x][1];
            shared |= x > 0 && (key[x][0] == key[x - 1][0] || (key[x][0] == -1 && key[x - 1][0] == -2));
        }
    }
    free(key);
    return ok && shared;
}
