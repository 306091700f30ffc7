/* Collective benchmarks: blocking, nonblocking (with OSU's overlap) and
 * persistent (MPI 4 *_init, then MPI_Start and MPI_Wait), over one table of
 * seventeen operations.
 *
 * Message size, as OSU defines it: the bytes one rank contributes to or
 * receives from one peer (Bcast: the buffer; Gather, Allgather: each rank's
 * block; Scatter: each rank's block; Alltoall: each block of a rank's send
 * buffer). For reductions the size is the whole vector of 4-byte floats
 * (MPI_FLOAT, MPI_SUM); Reduce_scatter splits it among the ranks as evenly
 * as counts allow; Reduce_scatter_block gives each rank size/ranks bytes.
 * The v and w variants use equal counts, so their figures compare with the
 * plain ones. Root is rank 0.
 *
 * Timing: each rank times each call and sums the timed iterations; a barrier
 * separates iterations (not timed). The figure is the average over ranks of
 * their average per call; -f adds the minimum and maximum over ranks.
 *
 * Overlap (nonblocking): first the pure communication time (start, then
 * wait at once); then start, compute for as long as the pure communication
 * took (with -t N, N calls to MPI_Test spread through the computation), and
 * wait. With the averages over ranks,
 *     overlap = 100 * (1 - (overall - (compute - test)) / pure_comm),
 * floored at 0, where test is the time spent inside the MPI_Test calls.
 *
 * -c: before each iteration every rank fills its send data with a pattern
 * of (rank, index, iteration) and poisons what it will receive; after, it
 * checks every byte (every element, for reductions: the values are small
 * integers, so sums are exact). Barrier: a different rank each iteration
 * enters 100 us late, and no rank may leave before it entered (one clock,
 * CLOCK_MONOTONIC, serves all ranks of a node). */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call that this MPI's mpi.h does not declare. */
#define HB_NOT_DECLARED (-424242)

enum { M_BLOCK, M_NB, M_PINIT };

typedef struct cx {
    hb_run_t *r;
    int kind, family;
    MPI_Comm comm;
    int rank, p, root;
    size_t size;        /* bytes, as reported */
    int n;              /* elements of one block (bytes; floats for reductions) */
    uint8_t *sbuf, *rbuf;
    int *counts, *displs, *bcounts, *bdispls; /* v (elements) and w (bytes) */
    MPI_Datatype *types;
    int my_off, my_cnt; /* reduce_scatter(_block): my part of the vector */
    double entry, exit; /* barrier check */
} cx_t;

static int is_reduction(int k)
{
    return k == HB_C_REDUCE || k == HB_C_ALLREDUCE || k == HB_C_REDUCE_SCATTER ||
           k == HB_C_REDUCE_SCATTER_BLOCK || k == HB_C_SCAN || k == HB_C_EXSCAN;
}

#if HB_HAVE_PERSISTENT_COLL
#define PERSIST(e) (e)
#else
#define PERSIST(e) HB_NOT_DECLARED
#endif

#define PICK(blocking, nonblocking, persistent)                                                                  \
    (mode == M_BLOCK ? (blocking) : mode == M_NB ? (nonblocking) : PERSIST(persistent))

static int call(cx_t *x, int mode, MPI_Request *rq)
{
    MPI_Comm c = x->comm;
    MPI_Info in = MPI_INFO_NULL;
    void *s = x->sbuf, *r = x->rbuf;
    int n = x->n, root = x->root;
    const MPI_Datatype B = MPI_CHAR, F = MPI_FLOAT;
    const MPI_Op sum = MPI_SUM;
    int *cn = x->counts, *dp = x->displs, *bc = x->bcounts, *bd = x->bdispls;
    MPI_Datatype *ty = x->types;
    (void)in;
    switch (x->kind) {
    case HB_C_BARRIER:
        return PICK(MPI_Barrier(c), MPI_Ibarrier(c, rq), MPI_Barrier_init(c, in, rq));
    case HB_C_BCAST:
        return PICK(MPI_Bcast(s, n, B, root, c), MPI_Ibcast(s, n, B, root, c, rq),
                    MPI_Bcast_init(s, n, B, root, c, in, rq));
    case HB_C_GATHER:
        return PICK(MPI_Gather(s, n, B, r, n, B, root, c), MPI_Igather(s, n, B, r, n, B, root, c, rq),
                    MPI_Gather_init(s, n, B, r, n, B, root, c, in, rq));
    case HB_C_GATHERV:
        return PICK(MPI_Gatherv(s, n, B, r, cn, dp, B, root, c), MPI_Igatherv(s, n, B, r, cn, dp, B, root, c, rq),
                    MPI_Gatherv_init(s, n, B, r, cn, dp, B, root, c, in, rq));
    case HB_C_SCATTER:
        return PICK(MPI_Scatter(s, n, B, r, n, B, root, c), MPI_Iscatter(s, n, B, r, n, B, root, c, rq),
                    MPI_Scatter_init(s, n, B, r, n, B, root, c, in, rq));
    case HB_C_SCATTERV:
        return PICK(MPI_Scatterv(s, cn, dp, B, r, n, B, root, c), MPI_Iscatterv(s, cn, dp, B, r, n, B, root, c, rq),
                    MPI_Scatterv_init(s, cn, dp, B, r, n, B, root, c, in, rq));
    case HB_C_ALLGATHER:
        return PICK(MPI_Allgather(s, n, B, r, n, B, c), MPI_Iallgather(s, n, B, r, n, B, c, rq),
                    MPI_Allgather_init(s, n, B, r, n, B, c, in, rq));
    case HB_C_ALLGATHERV:
        return PICK(MPI_Allgatherv(s, n, B, r, cn, dp, B, c), MPI_Iallgatherv(s, n, B, r, cn, dp, B, c, rq),
                    MPI_Allgatherv_init(s, n, B, r, cn, dp, B, c, in, rq));
    case HB_C_ALLTOALL:
        return PICK(MPI_Alltoall(s, n, B, r, n, B, c), MPI_Ialltoall(s, n, B, r, n, B, c, rq),
                    MPI_Alltoall_init(s, n, B, r, n, B, c, in, rq));
    case HB_C_ALLTOALLV:
        return PICK(MPI_Alltoallv(s, cn, dp, B, r, cn, dp, B, c), MPI_Ialltoallv(s, cn, dp, B, r, cn, dp, B, c, rq),
                    MPI_Alltoallv_init(s, cn, dp, B, r, cn, dp, B, c, in, rq));
    case HB_C_ALLTOALLW:
        return PICK(MPI_Alltoallw(s, bc, bd, ty, r, bc, bd, ty, c),
                    MPI_Ialltoallw(s, bc, bd, ty, r, bc, bd, ty, c, rq),
                    MPI_Alltoallw_init(s, bc, bd, ty, r, bc, bd, ty, c, in, rq));
    case HB_C_REDUCE:
        return PICK(MPI_Reduce(s, r, n, F, sum, root, c), MPI_Ireduce(s, r, n, F, sum, root, c, rq),
                    MPI_Reduce_init(s, r, n, F, sum, root, c, in, rq));
    case HB_C_ALLREDUCE:
        return PICK(MPI_Allreduce(s, r, n, F, sum, c), MPI_Iallreduce(s, r, n, F, sum, c, rq),
                    MPI_Allreduce_init(s, r, n, F, sum, c, in, rq));
    case HB_C_REDUCE_SCATTER:
        return PICK(MPI_Reduce_scatter(s, r, cn, F, sum, c), MPI_Ireduce_scatter(s, r, cn, F, sum, c, rq),
                    MPI_Reduce_scatter_init(s, r, cn, F, sum, c, in, rq));
    case HB_C_REDUCE_SCATTER_BLOCK:
        return PICK(MPI_Reduce_scatter_block(s, r, x->my_cnt, F, sum, c),
                    MPI_Ireduce_scatter_block(s, r, x->my_cnt, F, sum, c, rq),
                    MPI_Reduce_scatter_block_init(s, r, x->my_cnt, F, sum, c, in, rq));
    case HB_C_SCAN:
        return PICK(MPI_Scan(s, r, n, F, sum, c), MPI_Iscan(s, r, n, F, sum, c, rq),
                    MPI_Scan_init(s, r, n, F, sum, c, in, rq));
    case HB_C_EXSCAN:
        return PICK(MPI_Exscan(s, r, n, F, sum, c), MPI_Iexscan(s, r, n, F, sum, c, rq),
                    MPI_Exscan_init(s, r, n, F, sum, c, in, rq));
    }
    return MPI_ERR_OTHER;
}

static const char *call_name(int kind, int family)
{
    static const char *names[HB_C_COUNT] = {
        "Barrier",   "Bcast",     "Gather",         "Gatherv",              "Scatter", "Scatterv",
        "Allgather", "Allgatherv", "Alltoall",      "Alltoallv",            "Alltoallw", "Reduce",
        "Allreduce", "Reduce_scatter", "Reduce_scatter_block", "Scan",      "Exscan"};
    static char buf[64];
    const char *nm = names[kind];
    if (family == HB_FAMILY_NBC) /* MPI_Ibcast: the name's capital goes to the I */
        snprintf(buf, sizeof buf, "MPI_I%c%s", nm[0] + ('a' - 'A'), nm + 1);
    else
        snprintf(buf, sizeof buf, "MPI_%s%s", nm, family == HB_FAMILY_PERSIST ? "_init" : "");
    return buf;
}

/* ------------------------------------------------------------------ set-up per size */

static void setup(cx_t *x, size_t size)
{
    int p = x->p;
    x->size = size;
    x->n = is_reduction(x->kind) ? (int)(size / sizeof(float)) : (int)size;
    if (x->kind == HB_C_BARRIER)
        x->n = 0;
    for (int i = 0; i < p; i++) {
        x->counts[i] = x->n;
        x->displs[i] = i * x->n;
        x->bcounts[i] = x->n;
        x->bdispls[i] = i * x->n;
        x->types[i] = MPI_CHAR;
    }
    if (x->kind == HB_C_REDUCE_SCATTER) {
        int off = 0;
        for (int i = 0; i < p; i++) {
            x->counts[i] = x->n / p + (i < x->n % p);
            if (i == x->rank) {
                x->my_off = off;
                x->my_cnt = x->counts[i];
            }
            off += x->counts[i];
        }
    } else if (x->kind == HB_C_REDUCE_SCATTER_BLOCK) {
        x->my_cnt = x->n / p;
        x->my_off = x->rank * x->my_cnt;
    }
}

/* ------------------------------------------------------------------ validation */

static void fill_floats(float *f, int n, int rank, int first, int it)
{
    for (int j = 0; j < n; j++)
        f[j] = hb_fval(rank, (size_t)(first + j), it);
}

/* Sum of hb_fval over ranks lo..hi at global index g. */
static size_t check_sum(const float *f, int n, int lo, int hi, int first, int it)
{
    size_t bad = 0;
    if (hi < lo)
        return 0;
    double cnt = hi - lo + 1;
    double ranks = ((double)(hi + 1) * (hi + 2) - (double)lo * (lo + 1)) / 2.0; /* sum of (r+1) */
    for (int j = 0; j < n; j++) {
        size_t g = (size_t)(first + j);
        double want = ranks + cnt * ((double)(g % 13) + it % 3);
        bad += f[j] != (float)want;
    }
    return bad;
}

static void prep(cx_t *x, int it)
{
    int n = x->n, p = x->p, me = x->rank;
    size_t un = (size_t)n;
    switch (x->kind) {
    case HB_C_BARRIER: break;
    case HB_C_BCAST:
        if (me == x->root)
            hb_fill(x->sbuf, un, me, 0, it);
        else
            memset(x->sbuf, HB_POISON, un);
        break;
    case HB_C_GATHER: case HB_C_GATHERV: case HB_C_ALLGATHER: case HB_C_ALLGATHERV:
        hb_fill(x->sbuf, un, me, 0, it);
        memset(x->rbuf, HB_POISON, un * (size_t)p);
        break;
    case HB_C_SCATTER: case HB_C_SCATTERV:
        if (me == x->root)
            hb_fill(x->sbuf, un * (size_t)p, me, 0, it);
        memset(x->rbuf, HB_POISON, un);
        break;
    case HB_C_ALLTOALL: case HB_C_ALLTOALLV: case HB_C_ALLTOALLW:
        hb_fill(x->sbuf, un * (size_t)p, me, 0, it);
        memset(x->rbuf, HB_POISON, un * (size_t)p);
        break;
    case HB_C_REDUCE_SCATTER_BLOCK:
        fill_floats((float *)x->sbuf, x->my_cnt * p, me, 0, it);
        memset(x->rbuf, HB_POISON, (size_t)x->my_cnt * sizeof(float));
        break;
    default: /* the other reductions */
        fill_floats((float *)x->sbuf, n, me, 0, it);
        memset(x->rbuf, HB_POISON, un * sizeof(float));
        break;
    }
}

/* --inject-error: spoil what this rank received, before the check. */
static void spoil(cx_t *x)
{
    uint8_t *at = x->rbuf;
    switch (x->kind) {
    case HB_C_BARRIER: x->entry += 1.0; return; /* "left before the late rank entered" */
    case HB_C_BCAST: at = x->sbuf; break;
    case HB_C_EXSCAN: if (x->rank == 0) return; break;
    case HB_C_REDUCE_SCATTER: case HB_C_REDUCE_SCATTER_BLOCK: if (x->my_cnt == 0) return; break;
    default: break;
    }
    if (x->n > 0)
        at[0] ^= 0x40;
}

static size_t check(cx_t *x, int it)
{
    int n = x->n, p = x->p, me = x->rank, root = x->root;
    size_t un = (size_t)n, bad = 0;
    switch (x->kind) {
    case HB_C_BARRIER: {
        /* The late rank's entry, known to all; nobody may have left before it. */
        double late = 0;
        MPI_Allreduce(&x->entry, &late, 1, MPI_DOUBLE, MPI_MAX, x->comm);
        return x->exit < late;
    }
    case HB_C_BCAST:
        return hb_check(x->sbuf, un, root, 0, it);
    case HB_C_GATHER: case HB_C_GATHERV:
        if (me != root)
            return 0;
        /* fall through */
    case HB_C_ALLGATHER: case HB_C_ALLGATHERV:
        for (int i = 0; i < p; i++)
            bad += hb_check(x->rbuf + (size_t)i * un, un, i, 0, it);
        return bad;
    case HB_C_SCATTER: case HB_C_SCATTERV:
        return hb_check(x->rbuf, un, root, (size_t)me * un, it);
    case HB_C_ALLTOALL: case HB_C_ALLTOALLV: case HB_C_ALLTOALLW:
        for (int i = 0; i < p; i++)
            bad += hb_check(x->rbuf + (size_t)i * un, un, i, (size_t)me * un, it);
        return bad;
    case HB_C_REDUCE:
        return me == root ? check_sum((float *)x->rbuf, n, 0, p - 1, 0, it) : 0;
    case HB_C_ALLREDUCE:
        return check_sum((float *)x->rbuf, n, 0, p - 1, 0, it);
    case HB_C_REDUCE_SCATTER: case HB_C_REDUCE_SCATTER_BLOCK:
        return check_sum((float *)x->rbuf, x->my_cnt, 0, p - 1, x->my_off, it);
    case HB_C_SCAN:
        return check_sum((float *)x->rbuf, n, 0, me, 0, it);
    case HB_C_EXSCAN:
        return me == 0 ? 0 : check_sum((float *)x->rbuf, n, 0, me - 1, 0, it);
    }
    return 0;
}

/* ------------------------------------------------------------------ timing loops */

typedef struct times {
    double comm;     /* seconds in the operation, summed over timed iterations */
    double overall;  /* nonblocking: start to completion, with the computation */
    double compute;  /* nonblocking: the computation, MPI_Test calls included */
    double test;     /* nonblocking: inside MPI_Test */
    double init;     /* persistent: the *_init call */
    size_t bad;      /* bytes or elements that failed the check */
    int rc;          /* first error, agreed among ranks (MPI_SUCCESS, or an error code) */
} times_t;

/* The error of any rank, so all ranks stop together. Error codes of
 * different MPIs are not comparable, so the class is what travels: a rank
 * with no error offers 0, the others their class + 1. */
static int agree(cx_t *x, int rc)
{
    int mine = rc == MPI_SUCCESS ? 0 : (rc == HB_NOT_DECLARED ? 100000 : hb_err_class(rc) + 1);
    int worst = hb_max_int(x->comm, mine);
    if (worst == 0)
        return MPI_SUCCESS;
    if (worst == 100000)
        return HB_NOT_DECLARED;
    return rc != MPI_SUCCESS ? rc : worst - 1;
}

/* The barrier check: this iteration's late rank waits 100 us, then stamps
 * its entry. */
static void late_entry(cx_t *x, int it)
{
    if (x->kind == HB_C_BARRIER && x->r->o->validate) {
        if (x->rank == it % x->p) {
            double until = hb_now() + 100e-6;
            while (hb_now() < until)
                ;
            x->entry = hb_now();
        } else {
            x->entry = 0;
        }
    }
}

static int one(cx_t *x, int mode, MPI_Request *rq, int it)
{
    late_entry(x, it);
    return call(x, mode, rq);
}

static void stamp_exit(cx_t *x)
{
    if (x->kind == HB_C_BARRIER && x->r->o->validate)
        x->exit = hb_now();
}

/* Blocking, or nonblocking started and waited for at once (pure communication). */
static void loop_plain(cx_t *x, int mode, int warmup, int iters, times_t *t)
{
    const hb_opts_t *o = x->r->o;
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int it = 0; it < warmup + iters; it++) {
        if (o->validate) {
            prep(x, it);
            MPI_Barrier(x->comm);
        }
        double t0 = MPI_Wtime();
        int rc = one(x, mode, &rq, it);
        if (rc == MPI_SUCCESS && mode == M_NB)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        stamp_exit(x);
        if (it == 0 || rc != MPI_SUCCESS) {
            t->rc = agree(x, rc);
            if (t->rc != MPI_SUCCESS)
                return;
        }
        if (it >= warmup)
            t->comm += t1 - t0;
        if (o->validate) {
            if (o->inject_error && it == warmup)
                spoil(x);
            t->bad += check(x, it);
        }
        if (x->kind != HB_C_BARRIER)
            MPI_Barrier(x->comm);
    }
}

/* The dummy computation, with -t N calls to MPI_Test spread through it.
 * Returns the time spent inside MPI_Test. */
static double compute(double seconds, int ntest, MPI_Request *rq, int *rc)
{
    if (ntest <= 0) {
        hb_spin(seconds);
        return 0.0;
    }
    double in_test = 0.0;
    for (int i = 0; i < ntest; i++) {
        hb_spin(seconds / ntest);
        int flag = 0;
        double t0 = MPI_Wtime();
        int e = MPI_Test(rq, &flag, MPI_STATUS_IGNORE);
        in_test += MPI_Wtime() - t0;
        if (e != MPI_SUCCESS && *rc == MPI_SUCCESS)
            *rc = e;
    }
    return in_test;
}

static void loop_overlap(cx_t *x, int warmup, int iters, double target, times_t *t)
{
    const hb_opts_t *o = x->r->o;
    MPI_Request rq = MPI_REQUEST_NULL;
    for (int it = 0; it < warmup + iters; it++) {
        if (o->validate) {
            prep(x, it);
            MPI_Barrier(x->comm);
        }
        double t0 = MPI_Wtime();
        int rc = one(x, M_NB, &rq, it);
        double c0 = MPI_Wtime(), in_test = 0.0;
        if (rc == MPI_SUCCESS)
            in_test = compute(target, o->ntest, &rq, &rc);
        double c1 = MPI_Wtime();
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        stamp_exit(x);
        if (rc != MPI_SUCCESS) {
            t->rc = agree(x, rc);
            if (t->rc != MPI_SUCCESS)
                return;
        }
        if (it >= warmup) {
            t->overall += t1 - t0;
            t->compute += c1 - c0;
            t->test += in_test;
        }
        if (o->validate) {
            if (o->inject_error && it == warmup)
                spoil(x);
            t->bad += check(x, it);
        }
        if (x->kind != HB_C_BARRIER)
            MPI_Barrier(x->comm);
    }
    /* Errors after the first iteration are agreed on here at the latest. */
    t->rc = agree(x, MPI_SUCCESS);
}

static void loop_persistent(cx_t *x, int warmup, int iters, times_t *t)
{
    const hb_opts_t *o = x->r->o;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Barrier(x->comm);
    double i0 = MPI_Wtime();
    int rc = call(x, M_PINIT, &rq);
    t->init = MPI_Wtime() - i0;
    t->rc = agree(x, rc);
    if (t->rc != MPI_SUCCESS)
        return;
    for (int it = 0; it < warmup + iters; it++) {
        if (o->validate) {
            prep(x, it);
            MPI_Barrier(x->comm);
        }
        late_entry(x, it);
        double t0 = MPI_Wtime();
        rc = MPI_Start(&rq);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&rq, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        stamp_exit(x);
        if (it == 0 || rc != MPI_SUCCESS) {
            t->rc = agree(x, rc);
            if (t->rc != MPI_SUCCESS)
                break;
        }
        if (it >= warmup)
            t->comm += t1 - t0;
        if (o->validate) {
            if (o->inject_error && it == warmup)
                spoil(x);
            t->bad += check(x, it);
        }
        if (x->kind != HB_C_BARRIER)
            MPI_Barrier(x->comm);
    }
    MPI_Request_free(&rq);
}

/* ------------------------------------------------------------------ the runner */

static const hb_col_t coll_cols[] = {
    {"Avg Latency(us)", "avg_us", 0, 2},
    {"Min Latency(us)", "min_us", 1, 2},
    {"Max Latency(us)", "max_us", 1, 2},
    {"Iterations", "iterations", 1, -1},
};
static const hb_col_t persist_cols[] = {
    {"Avg Latency(us)", "avg_us", 0, 2},
    {"Min Latency(us)", "min_us", 1, 2},
    {"Max Latency(us)", "max_us", 1, 2},
    {"Iterations", "iterations", 1, -1},
    {"Init(us)", "init_us", 1, 2},
};
static const hb_col_t nbc_cols[] = {
    {"Overall(us)", "overall_us", 0, 2},
    {"Compute(us)", "compute_us", 0, 2},
    {"Pure Comm.(us)", "comm_us", 0, 2},
    {"Overlap(%)", "overlap_pct", 0, 2},
    {"Min Comm.(us)", "min_comm_us", 1, 2},
    {"Max Comm.(us)", "max_comm_us", 1, 2},
    {"Test(us)", "test_us", 1, 2},
    {"Iterations", "iterations", 1, -1},
};

int hb_run_coll(hb_run_t *r, int family, int kind)
{
    const hb_opts_t *o = r->o;
    int barrier = kind == HB_C_BARRIER;
    if (family == HB_FAMILY_NBC)
        hb_report_begin(r, nbc_cols, 8, barrier);
    else if (family == HB_FAMILY_PERSIST)
        hb_report_begin(r, persist_cols, 5, barrier);
    else
        hb_report_begin(r, coll_cols, 4, barrier);
    if (family == HB_FAMILY_PERSIST && !HB_HAVE_PERSISTENT_COLL) {
        hb_report_na(r, "%s: not declared by this MPI's mpi.h (MPI %d.%d)", call_name(kind, family), MPI_VERSION,
                     MPI_SUBVERSION);
        return 0;
    }

    cx_t x = {.r = r, .kind = kind, .family = family, .comm = r->comm, .rank = r->rank, .p = r->nranks};
    size_t *sizes = NULL;
    int nsizes;
    if (barrier) {
        sizes = malloc(sizeof *sizes);
        sizes[0] = 0;
        nsizes = 1;
    } else {
        size_t elem = is_reduction(kind) ? sizeof(float) : 1;
        if (kind == HB_C_REDUCE_SCATTER_BLOCK)
            elem *= (size_t)x.p; /* every rank gets at least one float */
        nsizes = hb_sizes(o, 1, (size_t)1 << 20, elem, &sizes);
    }
    size_t maxs = nsizes ? sizes[nsizes - 1] : 1;
    x.sbuf = hb_alloc(maxs * (size_t)x.p);
    x.rbuf = hb_alloc(maxs * (size_t)x.p);
    x.counts = malloc((size_t)x.p * sizeof(int));
    x.displs = malloc((size_t)x.p * sizeof(int));
    x.bcounts = malloc((size_t)x.p * sizeof(int));
    x.bdispls = malloc((size_t)x.p * sizeof(int));
    x.types = malloc((size_t)x.p * sizeof(MPI_Datatype));

    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        setup(&x, size);
        int iters = hb_iters(o, size, 1000, 100), warmup = hb_warmup(o, size, 100, 10);
        times_t t = {0};
        MPI_Barrier(r->comm);
        if (family == HB_FAMILY_COLL)
            loop_plain(&x, M_BLOCK, warmup, iters, &t);
        else if (family == HB_FAMILY_PERSIST)
            loop_persistent(&x, warmup, iters, &t);
        else {
            loop_plain(&x, M_NB, warmup, iters, &t);
            if (t.rc == MPI_SUCCESS) {
                double pure = iters > 0 ? t.comm / iters : 0.0;
                loop_overlap(&x, warmup, iters, pure, &t);
            }
        }
        if (t.rc == HB_NOT_DECLARED) {
            hb_report_na(r, "%s: not declared by this MPI's mpi.h", call_name(kind, family));
            break;
        }
        if (t.rc != MPI_SUCCESS) {
            int cls = hb_err_class(t.rc);
            if (cls == MPI_ERR_UNSUPPORTED_OPERATION)
                hb_report_na(r, "%s: MPI_ERR_UNSUPPORTED_OPERATION: %s", call_name(kind, family), hb_err_string(t.rc));
            else
                hb_report_error(r, "%s (size %zu): %s", call_name(kind, family), size, hb_err_string(t.rc));
            break;
        }
        double div = iters > 0 ? 1e6 / iters : 0.0;
        double v[8];
        int ok = hb_all_ok(r->comm, t.bad == 0);
        if (family == HB_FAMILY_NBC) {
            double overall, comp, test, pure, mn, mx;
            hb_stats(r->comm, t.overall * div, 1, NULL, NULL, &overall, NULL);
            hb_stats(r->comm, t.compute * div, 1, NULL, NULL, &comp, NULL);
            hb_stats(r->comm, t.test * div, 1, NULL, NULL, &test, NULL);
            hb_stats(r->comm, t.comm * div, 1, &mn, &mx, &pure, NULL);
            double overlap = pure > 0 ? 100.0 * (1.0 - (overall - (comp - test)) / pure) : 0.0;
            if (overlap < 0)
                overlap = 0;
            v[0] = overall;
            v[1] = comp;
            v[2] = pure;
            v[3] = overlap;
            v[4] = mn;
            v[5] = mx;
            v[6] = test;
            v[7] = iters;
        } else {
            hb_stats(r->comm, t.comm * div, 1, &v[1], &v[2], &v[0], NULL);
            v[3] = iters;
            hb_stats(r->comm, t.init * 1e6, 1, NULL, NULL, &v[4], NULL);
        }
        hb_report_row(r, size, v, o->validate, ok);
    }
    free(x.sbuf);
    free(x.rbuf);
    free(x.counts);
    free(x.displs);
    free(x.bcounts);
    free(x.bdispls);
    free(x.types);
    free(sizes);
    return 0;
}
