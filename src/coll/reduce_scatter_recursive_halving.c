/* Reduce_scatter and Reduce_scatter_block, recursive halving.
 *
 * Non-power-of-two p: the first 2r ranks (r = p - p') fold pairwise, the
 * even rank's vector going to the odd one, which then stands for both; the
 * even rank gets its block back at the end. The p' others halve: at
 * distance p'/2, p'/4, ..., 1 each keeps the half of its range of ranks
 * that holds its own block, sends the other half to its partner and
 * reduces the partner's copy of its half into its own. Blocks keep their
 * counts (any counts, zeros too).
 * Cost: lg p' * alpha + n (p'-1)/p' * (beta + gamma), plus the folding
 * (2 alpha + n beta + n gamma) when p is not a power of two. Any p;
 * commutative operations only (partners at distance p'/2 come first, so
 * the groups that meet are not runs of consecutive ranks). In place or
 * not. The choice for small and medium vectors. */
#include "coll/algos.h"

int halo_reduce_scatter_recursive_halving(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    MPI_Aint ext = halo_type_extent(type);
    const void *in = a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
    MPI_Count *disp = halo_malloc((size_t)(p + 1) * sizeof(MPI_Count));
    disp[0] = 0;
    for (int i = 0; i < p; i++)
        disp[i + 1] = disp[i] + halo_rs_count(a, i);
    MPI_Count total = disp[p], mine = halo_rs_count(a, me);
    halo_bref_t rb = halo_addr(a->rbuf);
    if (p == 1 || total == 0) {
        if (a->sbuf != MPI_IN_PLACE)
            halo_sched_copy(s_p, 0, halo_addr(in), mine, type, rb, mine, type);
        free(disp);
        return MPI_SUCCESS;
    }
#define AT(b, e) halo_bref_add((b), (int64_t)((e) * ext))
    halo_bref_t acc = halo_sched_span(s_p, total, type);
    halo_bref_t tmp = halo_sched_span(s_p, total, type);
    halo_sched_copy(s_p, 0, halo_addr(in), total, type, acc, total, type);
    int round = 1;
    int pof2 = halo_pof2_floor(p), rem = p - pof2, newrank;
    if (me < 2 * rem) {
        if (me % 2 == 0) {
            halo_sched_send(s_p, round++, acc, total, type, me + 1);
            halo_sched_recv(s_p, round, rb, mine, type, me + 1);
            free(disp);
            return MPI_SUCCESS;
        }
        halo_sched_recv(s_p, round, tmp, total, type, me - 1);
        halo_sched_reduce(s_p, round++, tmp, acc, total, type, op);
        newrank = me / 2;
    } else {
        newrank = me - rem;
    }
    /* New rank n stands for ranks first(n) .. end(n)-1. */
#define FIRST(n) ((n) < rem ? 2 * (n) : (n) + rem)
    int lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask > 0; mask >>= 1, round++) {
        int partner = newrank ^ mask;
        int klo, khi, slo, shi;
        if (!(newrank & mask)) {
            klo = lo, khi = lo + mask, slo = lo + mask, shi = hi;
        } else {
            klo = lo + mask, khi = hi, slo = lo, shi = lo + mask;
        }
        MPI_Count ks = disp[FIRST(klo)], kn = disp[FIRST(khi - 1) + (khi - 1 < rem ? 2 : 1)] - ks;
        MPI_Count ss = disp[FIRST(slo)], sn = disp[FIRST(shi - 1) + (shi - 1 < rem ? 2 : 1)] - ss;
        int peer = FIRST(partner) + (partner < rem ? 1 : 0);
        halo_sched_send(s_p, round, AT(acc, ss), sn, type, peer);
        halo_sched_recv(s_p, round, AT(tmp, ks), kn, type, peer);
        halo_sched_reduce(s_p, round, AT(tmp, ks), AT(acc, ks), kn, type, op);
        lo = klo;
        hi = khi;
    }
    if (newrank < rem)
        halo_sched_send(s_p, round, AT(acc, disp[me - 1]), halo_rs_count(a, me - 1), type, me - 1);
    halo_sched_copy(s_p, round, AT(acc, disp[me]), mine, type, rb, mine, type);
#undef FIRST
#undef AT
    free(disp);
    return MPI_SUCCESS;
}
