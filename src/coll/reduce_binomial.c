/* Reduce, binomial tree.
 *
 * Rank v (numbered relative to the root for commutative operations, as is
 * for the others) receives the partial results of its children v + 2^j,
 * 2^j below its lowest set bit, in increasing j, reduces each into its
 * own, and sends the result to its parent v - lowbit(v). A child's subtree
 * is the run of ranks just above the parent's, so the parent's data goes
 * on the left and the result keeps rank order. For a non-commutative
 * operation the tree is rooted at rank 0, which forwards the result to the
 * root. Leaves send straight from the send buffer.
 * Cost: ceil(lg p) * (alpha + n * beta + n * gamma) (plus alpha + n * beta
 * for a non-commutative operation and a root other than 0). Any p, any
 * operation; in place at the root. Latency-optimal: the choice for small
 * vectors.
 *
 * A commutative operation on one node where the ranks outnumber the CPUs
 * numbers the ranks by CPU instead (halo_coll_cpu_order: from 4 ranks, at
 * 4 ranks from 256 KiB): the first levels then pair ranks bound to one CPU
 * and every CPU reduces at once, where in rank order from the root every
 * first-level parent sits on one CPU. */
#include "coll/algos.h"

/* The rank at position x of the tree: rank order from `top` on, or the
 * order that keeps each CPU's ranks together. */
static inline int at(const int *order, int x, int top, int p)
{
    return order ? order[x] : (x + top) % p;
}

int halo_reduce_binomial(const halo_coll_args_t *a, halo_comm_t *c, halo_sched_t **s_p)
{
    int p = c->size, me = c->rank, root = a->root;
    MPI_Count count = a->count;
    MPI_Datatype type = a->type;
    MPI_Op op = a->op;
    bool commute = halo_op_commutes(op), is_root = me == root;
    int top = commute ? root : 0;   /* the rank at the tree's top */
    int v = (me - top + p) % p;
    /* A commutative operation where ranks share CPUs: each CPU's ranks
     * side by side, so that the first levels pair ranks of one CPU and
     * every CPU works at once (in rank order from the root, bound round
     * robin, every child of the first level sits on the CPU of even
     * ranks' and the other idles). At 4 ranks below 256 KiB rank order
     * stayed ahead (128 KiB: 22-25 us against 27-28), at 8 it is 0.6 of it
     * there. */
    int *order = NULL;
    if (commute && (p >= 8 || count * halo_type_size(type) >= 256 * 1024)) {
        order = halo_malloc((size_t)p * sizeof *order);
        if (halo_coll_cpu_order(c, root, order)) {
            for (int x = 0; x < p; x++)
                if (order[x] == me)
                    v = x;
        } else {
            free(order);
            order = NULL;
        }
    }
    int low = 1;
    while (low < p && !(v & low))
        low <<= 1;
    bool children = low > 1 && v + 1 < p;
    const void *in = (is_root && a->sbuf == MPI_IN_PLACE) ? a->rbuf : a->sbuf;
    halo_bref_t rb = halo_addr(a->rbuf);
    halo_bref_t acc = halo_addr(in);
    int round = 0;
    if (children) {
        int mask = 1;
        round = 1;
        if (is_root && a->sbuf == MPI_IN_PLACE) {
            acc = rb;
        } else {
            /* The first child's result lands in the accumulator and our
             * own data is reduced into it from the left (inout = in op
             * inout keeps rank order for any operation), which saves
             * copying our data there first. */
            acc = is_root ? rb : halo_sched_span(s_p, count, type);
            halo_sched_recv(s_p, round, acc, count, type, at(order, v + mask, top, p));
            halo_sched_reduce(s_p, round, halo_addr(in), acc, count, type, op);
            mask <<= 1;
            round++;
        }
        halo_bref_t tmp = {0};
        bool have_tmp = false;
        for (; mask < low && v + mask < p; mask <<= 1, round++) {
            if (!have_tmp) {
                tmp = halo_sched_span(s_p, count, type);
                have_tmp = true;
            }
            halo_sched_recv(s_p, round, tmp, count, type, at(order, v + mask, top, p));
            if (commute) {
                halo_sched_reduce(s_p, round, tmp, acc, count, type, op);
            } else {
                /* acc op tmp lands in tmp, which becomes the accumulator. */
                halo_sched_reduce(s_p, round, acc, tmp, count, type, op);
                halo_bref_t t = acc;
                acc = tmp;
                tmp = t;
            }
        }
    }
    if (v != 0)
        halo_sched_send(s_p, round++, acc, count, type, at(order, v - low, top, p));
    free(order);
    if (top != root) {
        if (v == 0)
            halo_sched_send(s_p, round, acc, count, type, root);
        else if (is_root)
            halo_sched_recv(s_p, round, rb, count, type, top);
    } else if (is_root && !halo_bref_same(acc, rb)) {
        halo_sched_copy(s_p, round, acc, count, type, rb, count, type);
    }
    return MPI_SUCCESS;
}
