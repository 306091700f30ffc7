/* Point-to-point benchmarks.
 *
 *   latency    ping-pong between ranks 0 and 1; half the round trip
 *   multi_lat  the same between P pairs at once (rank i with i+P)
 *   bw         rank 0 sends a window of W messages to rank 1, which answers
 *              with a short acknowledgement once all arrived; bytes over time
 *   bibw       ranks 0 and 1 both send and receive a window at once
 *   mbw_mr     P pairs run bw at once; aggregate bandwidth and message rate
 *   spawn_latency  the ranks spawn one process (this program again), and
 *              rank 0 ping-pongs with it over the intercommunicator: the
 *              path between two jobs
 *
 * Every receive of a window has its own buffer (OSU posts the whole window
 * into one buffer, which MPI calls erroneous), so -c can check each message.
 * Ranks outside the pairs wait. MB/s is 10^6 bytes per second, as OSU's. */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TAG_DATA 100
#define TAG_ACK 101

static void must(hb_run_t *r, int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    fprintf(stderr, "halo-bench %s: rank %d: %s failed: %s\n", r->bench, r->rank, what, hb_err_string(rc));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

static void corrupt(hb_run_t *r, void *buf, size_t size, int it, int warmup)
{
    /* --inject-error: every rank spoils the first timed message it gets
     * (an empty one has nothing to spoil). */
    if (r->o->inject_error && it == warmup && size > 0)
        ((uint8_t *)buf)[0] ^= 0xff;
}

/* ------------------------------------------------------------------ latency */

static int run_latency(hb_run_t *r, int multi)
{
    static const hb_col_t cols[] = {
        {"Avg Latency(us)", "avg_us", 0, 2},
        {"Min Latency(us)", "min_us", 1, 2},
        {"Max Latency(us)", "max_us", 1, 2},
        {"Iterations", "iterations", 1, -1},
    };
    hb_report_begin(r, cols, 4, 0);
    const hb_opts_t *o = r->o;
    int npairs = multi ? (o->pairs > 0 ? o->pairs : r->nranks / 2) : 1;
    if (r->nranks < 2 || 2 * npairs > r->nranks) {
        hb_report_na(r, "needs %d ranks, has %d", 2 * (npairs > 0 ? npairs : 1), r->nranks);
        return 0;
    }
    size_t *sizes;
    int nsizes = hb_sizes(o, 0, (size_t)1 << 22, 1, &sizes);   /* from 0 bytes, as OSU's */
    size_t maxs = nsizes && sizes[nsizes - 1] ? sizes[nsizes - 1] : 1;
    uint8_t *sbuf = hb_alloc(maxs), *rbuf = hb_alloc(maxs);
    int in_pair = r->rank < 2 * npairs;
    int first = r->rank < npairs;
    int peer = first ? r->rank + npairs : r->rank - npairs;
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int iters = hb_iters(o, size, 10000, 1000), warmup = hb_warmup(o, size, 100, 10);
        size_t bad = 0;
        double t0 = 0, t = 0;
        MPI_Barrier(r->comm);
        if (in_pair) {
            for (int it = 0; it < warmup + iters; it++) {
                if (it == warmup)
                    t0 = MPI_Wtime();
                if (first) {
                    if (o->validate) {
                        hb_fill(sbuf, size, r->rank, 0, it);
                        memset(rbuf, HB_POISON, size);
                    }
                    must(r, MPI_Send(sbuf, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm), "MPI_Send");
                    must(r, MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm, MPI_STATUS_IGNORE),
                         "MPI_Recv");
                } else {
                    if (o->validate)
                        memset(rbuf, HB_POISON, size);
                    must(r, MPI_Recv(rbuf, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm, MPI_STATUS_IGNORE),
                         "MPI_Recv");
                    if (o->validate)
                        hb_fill(sbuf, size, r->rank, 0, it);
                    must(r, MPI_Send(sbuf, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm), "MPI_Send");
                }
                if (o->validate) {
                    corrupt(r, rbuf, size, it, warmup);
                    bad += hb_check(rbuf, size, peer, 0, it);
                }
            }
            t = MPI_Wtime() - t0;
        }
        double lat = iters > 0 ? t * 1e6 / (2.0 * iters) : 0.0;
        double v[4];
        hb_stats(r->comm, lat, in_pair, &v[1], &v[2], &v[0], NULL);
        v[3] = iters;
        int ok = hb_all_ok(r->comm, bad == 0);
        hb_report_row(r, size, v, o->validate, ok);
    }
    free(sbuf);
    free(rbuf);
    free(sizes);
    return 0;
}

/* ------------------------------------------------------------------ bandwidth */

static int run_bw(hb_run_t *r, int kind)
{
    static const hb_col_t bw_cols[] = {
        {"Bandwidth (MB/s)", "mb_s", 0, 2},
        {"Iterations", "iterations", 1, -1},
    };
    static const hb_col_t mr_cols[] = {
        {"MB/s", "mb_s", 0, 2},
        {"Messages/s", "msg_s", 0, 2},
        {"Min Pair MB/s", "min_pair_mb_s", 1, 2},
        {"Max Pair MB/s", "max_pair_mb_s", 1, 2},
        {"Iterations", "iterations", 1, -1},
    };
    int mr = kind == HB_P_MBW_MR, bidir = kind == HB_P_BIBW;
    if (mr)
        hb_report_begin(r, mr_cols, 5, 0);
    else
        hb_report_begin(r, bw_cols, 2, 0);
    const hb_opts_t *o = r->o;
    int npairs = mr ? (o->pairs > 0 ? o->pairs : r->nranks / 2) : 1;
    if (r->nranks < 2 || 2 * npairs > r->nranks) {
        hb_report_na(r, "needs %d ranks, has %d", 2 * (npairs > 0 ? npairs : 1), r->nranks);
        return 0;
    }
    int window = o->window > 0 ? o->window : 64;
    size_t *sizes;
    int nsizes = hb_sizes(o, 1, (size_t)1 << 22, 1, &sizes);
    size_t maxs = nsizes ? sizes[nsizes - 1] : 1;
    int in_pair = r->rank < 2 * npairs;
    int sender = r->rank < npairs;
    int peer = sender ? r->rank + npairs : r->rank - npairs;
    int sends = in_pair && (sender || bidir), recvs = in_pair && (!sender || bidir);
    uint8_t *sbuf = hb_alloc(sends ? maxs : 1);
    uint8_t *rbuf = hb_alloc(recvs ? maxs * (size_t)window : 1);
    MPI_Request *req = malloc(2 * (size_t)window * sizeof *req);
    /* Real statuses: GCC misreads MPICH's MPI_STATUSES_IGNORE as an empty array. */
    MPI_Status *st = malloc(2 * (size_t)window * sizeof *st);
    char ack = 0;
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int iters = hb_iters(o, size, 100, 20), warmup = hb_warmup(o, size, 10, 2);
        size_t bad = 0;
        double t0 = 0, t = 0;
        MPI_Barrier(r->comm);
        if (in_pair) {
            for (int it = 0; it < warmup + iters; it++) {
                if (it == warmup)
                    t0 = MPI_Wtime();
                int n = 0;
                if (o->validate) {
                    if (sends)
                        hb_fill(sbuf, size, r->rank, 0, it);
                    if (recvs)
                        memset(rbuf, HB_POISON, size * (size_t)window);
                }
                if (recvs)
                    for (int j = 0; j < window; j++)
                        must(r, MPI_Irecv(rbuf + (size_t)j * size, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm,
                                          &req[n++]),
                             "MPI_Irecv");
                if (sends)
                    for (int j = 0; j < window; j++)
                        must(r, MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, TAG_DATA, r->comm, &req[n++]),
                             "MPI_Isend");
                must(r, MPI_Waitall(n, req, st), "MPI_Waitall");
                if (!bidir) {
                    if (sender)
                        must(r, MPI_Recv(&ack, 1, MPI_CHAR, peer, TAG_ACK, r->comm, MPI_STATUS_IGNORE), "MPI_Recv");
                    else
                        must(r, MPI_Send(&ack, 1, MPI_CHAR, peer, TAG_ACK, r->comm), "MPI_Send");
                }
                if (o->validate && recvs) {
                    corrupt(r, rbuf, size, it, warmup);
                    for (int j = 0; j < window; j++)
                        bad += hb_check(rbuf + (size_t)j * size, size, peer, 0, it);
                }
            }
            t = MPI_Wtime() - t0;
        }
        /* Who measures: the senders (both sides of bibw). */
        int measures = in_pair && sends;
        double bytes = (double)size * window * iters * (bidir ? 2.0 : 1.0);
        double mbs = t > 0 ? bytes / t / 1e6 : 0.0;
        double rate = t > 0 ? (double)window * iters / t : 0.0;
        double v[5], mn, mx, avg, sum;
        int ok;
        if (mr) {
            hb_stats(r->comm, mbs, measures, &mn, &mx, &avg, &sum);
            v[0] = sum;
            hb_stats(r->comm, rate, measures, NULL, NULL, NULL, &v[1]);
            v[2] = mn;
            v[3] = mx;
            v[4] = iters;
        } else {
            /* One pair: what rank 0 measured (for bibw both agree closely). */
            hb_stats(r->comm, mbs, r->rank == 0, NULL, NULL, &avg, NULL);
            v[0] = avg;
            v[1] = iters;
        }
        ok = hb_all_ok(r->comm, bad == 0);
        hb_report_row(r, size, v, o->validate, ok);
    }
    free(req);
    free(st);
    free(sbuf);
    free(rbuf);
    free(sizes);
    return 0;
}

/* ------------------------------------------------------------------ spawn_latency */

#define TAG_CTRL 102

/* What the parent tells the spawned process before each size: the size,
 * warm-up plus timed iterations, and whether to fill for validation; a
 * negative size ends it. */
typedef struct {
    long long size;
    int iters, validate;
} spawn_ctrl_t;

int hb_spawned_peer(MPI_Comm parent)
{
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    uint8_t *buf = NULL, *sbuf = NULL;
    size_t cap = 0;
    for (;;) {
        spawn_ctrl_t c;
        if (MPI_Recv(&c, (int)sizeof c, MPI_BYTE, 0, TAG_CTRL, parent, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return 3;
        if (c.size < 0)
            break;
        size_t size = (size_t)c.size;
        if (size > cap) {
            free(buf);
            free(sbuf);
            buf = hb_alloc(size);
            sbuf = hb_alloc(size);
            cap = size;
        }
        for (int it = 0; it < c.iters; it++) {
            if (MPI_Recv(buf, (int)size, MPI_CHAR, 0, TAG_DATA, parent, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                return 3;
            uint8_t *out = buf;
            if (c.validate) {
                hb_fill(sbuf, size, 1, 0, it);
                out = sbuf;
            }
            if (MPI_Send(out, (int)size, MPI_CHAR, 0, TAG_DATA, parent) != MPI_SUCCESS)
                return 3;
        }
    }
    free(buf);
    free(sbuf);
    MPI_Comm_disconnect(&parent);
    return 0;
}

static int run_spawn_latency(hb_run_t *r)
{
    static const hb_col_t cols[] = {
        {"Avg Latency(us)", "avg_us", 0, 2},
        {"Iterations", "iterations", 1, -1},
    };
    hb_report_begin(r, cols, 2, 0);
    const hb_opts_t *o = r->o;
    char exe[4096];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) {
        hb_report_na(r, "cannot find this program (/proc/self/exe)");
        return 0;
    }
    exe[k] = '\0';
    char *args[] = {(char *)r->bench, NULL};
    MPI_Comm ic;
    int rc = MPI_Comm_spawn(exe, args, 1, MPI_INFO_NULL, 0, r->comm, &ic, MPI_ERRCODES_IGNORE);
    if (!hb_all_ok(r->comm, rc == MPI_SUCCESS)) {
        hb_report_na(r, "MPI_Comm_spawn failed: %s", rc == MPI_SUCCESS ? "on another rank" : hb_err_string(rc));
        return 0;
    }
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    size_t *sizes;
    int nsizes = hb_sizes(o, 0, (size_t)1 << 22, 1, &sizes);
    size_t maxs = nsizes && sizes[nsizes - 1] ? sizes[nsizes - 1] : 1;
    uint8_t *sbuf = hb_alloc(maxs), *rbuf = hb_alloc(maxs);
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int iters = hb_iters(o, size, 10000, 1000), warmup = hb_warmup(o, size, 100, 10);
        size_t bad = 0;
        double t = 0;
        if (r->rank == 0) {
            spawn_ctrl_t c = {(long long)size, warmup + iters, o->validate};
            must(r, MPI_Send(&c, (int)sizeof c, MPI_BYTE, 0, TAG_CTRL, ic), "MPI_Send");
            double t0 = 0;
            for (int it = 0; it < warmup + iters; it++) {
                if (it == warmup)
                    t0 = MPI_Wtime();
                if (o->validate) {
                    hb_fill(sbuf, size, 0, 0, it);
                    memset(rbuf, HB_POISON, size);
                }
                must(r, MPI_Send(sbuf, (int)size, MPI_CHAR, 0, TAG_DATA, ic), "MPI_Send");
                must(r, MPI_Recv(rbuf, (int)size, MPI_CHAR, 0, TAG_DATA, ic, MPI_STATUS_IGNORE), "MPI_Recv");
                if (o->validate) {
                    corrupt(r, rbuf, size, it, warmup);
                    bad += hb_check(rbuf, size, 1, 0, it);
                }
            }
            t = MPI_Wtime() - t0;
        }
        double v[2] = {iters > 0 ? t * 1e6 / (2.0 * iters) : 0.0, iters};
        MPI_Bcast(v, 1, MPI_DOUBLE, 0, r->comm);
        int ok = hb_all_ok(r->comm, bad == 0);
        hb_report_row(r, size, v, o->validate, ok);
    }
    if (r->rank == 0) {
        spawn_ctrl_t c = {-1, 0, 0};
        must(r, MPI_Send(&c, (int)sizeof c, MPI_BYTE, 0, TAG_CTRL, ic), "MPI_Send");
    }
    MPI_Comm_disconnect(&ic);
    free(sbuf);
    free(rbuf);
    free(sizes);
    return 0;
}

int hb_run_pt2pt(hb_run_t *r, int kind)
{
    switch (kind) {
    case HB_P_SPAWN_LATENCY: return run_spawn_latency(r);
    case HB_P_LATENCY: return run_latency(r, 0);
    case HB_P_MULTI_LAT: return run_latency(r, 1);
    default: return run_bw(r, kind);
    }
}
