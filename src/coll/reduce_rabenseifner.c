/* Reduce, Rabenseifner's algorithm: reduce-scatter by recursive halving,
 * then a binomial gather of the reduced blocks to the root.
 *
 * The reduce-scatter phase is the one of allreduce_rabenseifner.c
 * (halo_rab_reduce_scatter). The gather retraces its steps toward the
 * root's new rank t: in the step at distance d, of two partners the one
 * whose (new rank ^ t) has bit d set hands over the blocks it holds and
 * drops out. A root that was folded away (an even rank below 2r) gets the
 * result from its odd partner at the end.
 * Cost: 2 lg p' * alpha + 2 n (p'-1)/p' * beta + n (p'-1)/p' * gamma, plus
 * the folding when p is not a power of two (and one more n * beta for a
 * folded root). Any p, any operation (rank order is kept, as in the
 * Allreduce); in place at the root. Bandwidth-optimal: the choice for
 * medium and large vectors. */
#include "coll/algos.h"

int halo_reduce_rabenseifner(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Aint ext = halo_type_extent(type);
    bool is_root = me == root;
    halo_bref_t acc = halo_addr(a->rbuf);
    halo_bref_t own = is_root && a->sbuf == MPI_IN_PLACE ? acc : halo_addr(a->sbuf);
    if (p == 1 || count == 0) {
        if (is_root && a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, own, count, type, acc, count, type);
        return MPI_SUCCESS;
    }
    if (!is_root)
        acc = halo_sched_span(s_p, count, type);
    halo_bref_t tmp = halo_sched_span(s_p, count, type);
    halo_rab_t r;
    halo_rab_reduce_scatter(s_p, c, own, acc, tmp, count, type, a->op, 1, &r);
    int round = r.round;
    /* The gather's target: the root's new rank, or its odd partner's. */
    bool folded_root = root < 2 * r.rem && root % 2 == 0;
    int t = root < 2 * r.rem ? root / 2 : root - r.rem;
    if (r.newrank >= 0) {
        for (int i = r.nsteps - 1; i >= 0; i--, round++) {
            int mask = 1 << i, rel = r.newrank ^ t;
            int peer = halo_rab_real(&r, r.newrank ^ mask);
            if (rel & mask) {
                MPI_Count ms = halo_rab_elem(&r, count, r.lo[i]);
                MPI_Count mn = halo_rab_elem(&r, count, r.hi[i]) - ms;
                halo_sched_send(s_p, round, halo_bref_add(acc, (int64_t)(ms * ext)), mn, type, peer);
                break;
            }
            int plo = i > 0 ? r.lo[i - 1] : 0, phi = i > 0 ? r.hi[i - 1] : r.pof2;
            int olo = r.lo[i] == plo ? r.hi[i] : plo, ohi = r.lo[i] == plo ? phi : r.lo[i];
            MPI_Count os = halo_rab_elem(&r, count, olo), on = halo_rab_elem(&r, count, ohi) - os;
            halo_sched_recv(s_p, round, halo_bref_add(acc, (int64_t)(os * ext)), on, type, peer);
        }
        if (folded_root && r.newrank == t)
            halo_sched_send(s_p, round, acc, count, type, root);
    } else if (is_root) {
        halo_sched_recv(s_p, round, acc, count, type, me + 1);
    }
    return MPI_SUCCESS;
}
