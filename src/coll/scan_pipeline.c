/* Scan and Exscan, pipelined chain.
 *
 * The chain of the linear algorithms (rank i combines rank i-1's partial
 * result with its input and passes it on), cut into segments of
 * HALO_SCAN_SEGMENT bytes of whole elements: in round k a rank receives
 * segment k from rank i-1 and forwards segment k-1 to rank i+1, so rank i
 * reduces segment k while rank i+1 reduces segment k-1. The plain chain
 * keeps one rank busy at a time; here every rank of the chain works at
 * once after the first p-1 rounds (on a node with fewer cores than ranks,
 * as many as there are cores).
 * Cost: (p - 2 + s) * (a + (n/s) (b + g)) with s segments; for large n
 * about n (b + g) + (p + s) a, against (p - 1) n (b + g) for the chain.
 * Any p, any operation (the partial result always stays on the left), any
 * datatype (segments are runs of whole elements); in place or not.
 * Exscan leaves rank 0's receive buffer alone. The choice for large
 * vectors; poor for small ones, whose segments are few. */
#include "coll/algos.h"

#include "core/config.h"

HALO_CFG_INT(cfg_scan_segment, "HALO_SCAN_SEGMENT", 262144,
             "segment size in bytes of the pipelined-chain Scan and Exscan (same on every rank)");

/* Elements per segment: at least one, and at most 4096 segments. */
static MPI_Count seg_elems(MPI_Count count, MPI_Datatype type)
{
    MPI_Count size = halo_type_size(type);
    MPI_Count seg = halo_cfg_get(&cfg_scan_segment);
    if (seg < 1024)
        seg = 1024;
    MPI_Count m = size > 0 ? seg / size : count;
    if (m < 1)
        m = 1;
    if (m < (count + 4095) / 4096)
        m = (count + 4095) / 4096;
    return m;
}

static int scan_pipeline(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p, bool exclusive)
{
    int p = c->size, me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    if (count == 0 || p == 1) {
        if (!exclusive && count > 0 && a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, halo_addr(a->sbuf), count, type, halo_addr(a->rbuf), count, type);
        return MPI_SUCCESS;
    }
    MPI_Count m = seg_elems(count, type);
    MPI_Count nseg = (count + m - 1) / m;
    int64_t stride = (int64_t)(m * halo_type_extent(type));
    bool in_place = a->sbuf == MPI_IN_PLACE;
    halo_bref_t rb = halo_addr(a->rbuf);
    halo_bref_t in = halo_addr(in_place ? a->rbuf : a->sbuf);
#define SEG_LEN(k) ((k) == nseg - 1 ? count - (k) * m : m)
#define SEG(b, k) halo_bref_add((b), (int64_t)(k) * stride)
    if (me == 0) {
        /* Scan: rank 0's result is its input; Exscan: its input goes on. */
        halo_bref_t out = exclusive ? in : rb;
        int round = 0;
        if (!exclusive && !in_place)
            halo_sched_copy(s_p, round++, in, count, type, rb, count, type);
        for (MPI_Count k = 0; k < nseg; k++)
            halo_sched_send(s_p, round, SEG(out, k), SEG_LEN(k), type, 1);
        return MPI_SUCCESS;
    }
    if (exclusive && me == p - 1) {
        for (MPI_Count k = 0; k < nseg; k++)
            halo_sched_recv(s_p, 0, SEG(rb, k), SEG_LEN(k), type, me - 1);
        return MPI_SUCCESS;
    }
    /* Round k receives segment k and combines it; round k + 1 sends what
     * round k made. Scan receives into tmp and puts the result in its
     * receive buffer (tmp op input). Exscan's receive buffer gets the
     * partial result as it is, so it receives straight there (unless that
     * is also its input) and builds what it forwards (partial result op
     * input) in a segment buffer of its own. One of each buffer is enough:
     * a round's local steps run once its messages (the send of the segment
     * before) have completed. */
    bool direct = exclusive && !in_place;
    halo_bref_t tmp = direct ? rb : halo_sched_span(s_p, m, type);
    halo_bref_t fwd = exclusive ? halo_sched_span(s_p, m, type) : tmp;
    for (MPI_Count k = 0; k < nseg; k++) {
        int r = (int)k;
        MPI_Count len = SEG_LEN(k);
        halo_bref_t got = direct ? SEG(rb, k) : tmp;
        halo_sched_recv(s_p, r, got, len, type, me - 1);
        if (exclusive) {
            halo_sched_copy(s_p, r, SEG(in, k), len, type, fwd, len, type);
            halo_sched_reduce(s_p, r, got, fwd, len, type, a->op);
            if (!direct)
                halo_sched_copy(s_p, r, tmp, len, type, SEG(rb, k), len, type);
            halo_sched_send(s_p, r + 1, fwd, len, type, me + 1);
        } else {
            if (!in_place)
                halo_sched_copy(s_p, r, SEG(in, k), len, type, SEG(rb, k), len, type);
            halo_sched_reduce(s_p, r, tmp, SEG(rb, k), len, type, a->op);
            if (me < p - 1)
                halo_sched_send(s_p, r + 1, SEG(rb, k), len, type, me + 1);
        }
    }
#undef SEG
#undef SEG_LEN
    return MPI_SUCCESS;
}

int halo_scan_pipeline(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_pipeline(a, c, s_p, false);
}

int halo_exscan_pipeline(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    return scan_pipeline(a, c, s_p, true);
}
