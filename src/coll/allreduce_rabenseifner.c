/* Allreduce, Rabenseifner's algorithm: reduce-scatter by recursive
 * halving, then allgather by recursive doubling.
 *
 * Non-power-of-two p: the first 2r ranks (r = p - p') fold pairwise before
 * and unfold after, as in allreduce_recursive_doubling.c. The p' others
 * halve the vector at distances 1, 2, 4, ... (each keeps half of what it
 * holds and reduces the partner's copy of that half into it), then retrace
 * the steps exchanging the reduced blocks until everyone has the vector.
 * Cost: 2 lg p' * alpha + 2 n (p'-1)/p' * beta + n (p'-1)/p' * gamma, plus
 * 2 * (alpha + n * beta) + n * gamma for the folding when p is not a power
 * of two. Any p, any operation: the groups that meet are runs of
 * consecutive ranks and the lower run stays on the left, so non-commutative
 * operations reduce in rank order (at the price of one local copy per
 * step). In place or not. Bandwidth-optimal: the choice for medium and
 * large vectors. */
#include "coll/algos.h"

static halo_bref_t at_elem(halo_bref_t b, MPI_Count e, MPI_Aint ext)
{
    return halo_bref_add(b, (int64_t)(e * ext));
}

void halo_rab_reduce_scatter(halo_sched_t **s_p, halo_comm_t *c, halo_bref_t own, halo_bref_t acc,
                             halo_bref_t tmp, MPI_Count count, MPI_Datatype type, MPI_Op op, int round,
                             halo_rab_t *r)
{
    int p = c->size, me = c->rank;
    MPI_Aint ext = halo_type_extent(type);
    bool commute = halo_op_commutes(op);
    /* acc holds our data (or a partial result over it) */
    bool ready = halo_bref_same(own, acc);
    r->pof2 = halo_pof2_floor(p);
    r->rem = p - r->pof2;
    r->nsteps = 0;
    while ((1 << r->nsteps) < r->pof2)
        r->nsteps++;
    if (me < 2 * r->rem) {
        if (me % 2 == 0) {
            halo_sched_send(s_p, round++, own, count, type, me + 1);
            r->newrank = -1;
            r->round = round;
            return;
        }
        if (!ready && commute) {
            halo_sched_recv(s_p, round, acc, count, type, me - 1);
            halo_sched_reduce(s_p, round++, own, acc, count, type, op);
        } else {
            /* the lower partner goes on the left: tmp op ours */
            halo_sched_recv(s_p, round, tmp, count, type, me - 1);
            if (!ready)
                halo_sched_copy(s_p, round, own, count, type, acc, count, type);
            halo_sched_reduce(s_p, round++, tmp, acc, count, type, op);
        }
        ready = true;
        r->newrank = me / 2;
    } else {
        r->newrank = me - r->rem;
    }
    int lo = 0, hi = r->pof2;
    for (int i = 0; i < r->nsteps; i++, round++) {
        int mask = 1 << i, mid = (lo + hi) / 2;
        int partner = r->newrank ^ mask;
        int klo, khi, slo, shi;
        if (!(r->newrank & mask)) {
            klo = lo, khi = mid, slo = mid, shi = hi;
        } else {
            klo = mid, khi = hi, slo = lo, shi = mid;
        }
        MPI_Count ks = halo_rab_elem(r, count, klo), kn = halo_rab_elem(r, count, khi) - ks;
        MPI_Count ss = halo_rab_elem(r, count, slo), sn = halo_rab_elem(r, count, shi) - ss;
        int peer = halo_rab_real(r, partner);
        halo_bref_t kacc = at_elem(acc, ks, ext), ktmp = at_elem(tmp, ks, ext);
        halo_sched_send(s_p, round, at_elem(ready ? acc : own, ss, ext), sn, type, peer);
        if (!ready && (commute || partner > r->newrank)) {
            /* ours on the left: the partner's half lands in acc */
            halo_sched_recv(s_p, round, kacc, kn, type, peer);
            halo_sched_reduce(s_p, round, at_elem(own, ks, ext), kacc, kn, type, op);
        } else if (partner < r->newrank || commute) {
            halo_sched_recv(s_p, round, ktmp, kn, type, peer);
            if (!ready)
                halo_sched_copy(s_p, round, at_elem(own, ks, ext), kn, type, kacc, kn, type);
            halo_sched_reduce(s_p, round, ktmp, kacc, kn, type, op);
        } else {
            halo_sched_recv(s_p, round, ktmp, kn, type, peer);
            halo_sched_reduce(s_p, round, kacc, ktmp, kn, type, op);
            halo_sched_copy(s_p, round, ktmp, kn, type, kacc, kn, type);
        }
        ready = true;
        r->lo[i] = lo = klo;
        r->hi[i] = hi = khi;
    }
    r->round = round;
}

int halo_allreduce_rabenseifner(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int me = c->rank;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Aint ext = halo_type_extent(type);
    halo_bref_t acc = halo_addr(a->rbuf);
    halo_bref_t own = a->sbuf == MPI_IN_PLACE ? acc : halo_addr(a->sbuf);
    if (c->size == 1 || count == 0) {
        if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, own, count, type, acc, count, type);
        return MPI_SUCCESS;
    }
    halo_bref_t tmp = halo_sched_span(s_p, count, type);
    halo_rab_t r;
    halo_rab_reduce_scatter(s_p, c, own, acc, tmp, count, type, a->op, 1, &r);
    int round = r.round;
    if (r.newrank >= 0) {
        for (int i = r.nsteps - 1; i >= 0; i--, round++) {
            int plo = i > 0 ? r.lo[i - 1] : 0, phi = i > 0 ? r.hi[i - 1] : r.pof2;
            int olo = r.lo[i] == plo ? r.hi[i] : plo, ohi = r.lo[i] == plo ? phi : r.lo[i];
            MPI_Count ms = halo_rab_elem(&r, count, r.lo[i]), mn = halo_rab_elem(&r, count, r.hi[i]) - ms;
            MPI_Count os = halo_rab_elem(&r, count, olo), on = halo_rab_elem(&r, count, ohi) - os;
            int peer = halo_rab_real(&r, r.newrank ^ (1 << i));
            halo_sched_send(s_p, round, at_elem(acc, ms, ext), mn, type, peer);
            halo_sched_recv(s_p, round, at_elem(acc, os, ext), on, type, peer);
        }
    }
    if (me < 2 * r.rem) {
        if (me % 2 == 1)
            halo_sched_send(s_p, round, acc, count, type, me - 1);
        else
            halo_sched_recv(s_p, round, acc, count, type, me + 1);
    }
    return MPI_SUCCESS;
}
