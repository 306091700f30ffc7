/* One-sided benchmarks, as OSU's with their default synchronization
 * (a passive-target epoch at rank 1, opened once with MPI_Win_lock, and
 * MPI_Win_flush after each operation or window of operations) on a window
 * of MPI_Win_allocate memory. Rank 0 is the origin, rank 1 the target;
 * other ranks wait.
 *
 *   put_latency, get_latency   one MPI_Put (MPI_Get) and a flush: time per pair
 *   put_bw, get_bw             -W operations (to and from the same bytes, as
 *                              OSU's) and one flush; bytes over time
 *   acc_latency                MPI_Accumulate (MPI_SUM of ints) and a flush
 *   fop_latency                MPI_Fetch_and_op (MPI_SUM of one int64) and a flush
 *
 * -c: puts and accumulates are checked in the target's memory after the
 * loop (the last put's bytes; every int counted once per accumulate), gets
 * and fetch-and-ops in the origin's buffer at every operation. An MPI that
 * refuses windows (MPI_ERR_UNSUPPORTED_OPERATION) reports n/a. */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void must(hb_run_t *r, int rc, const char *what)
{
    if (rc == MPI_SUCCESS)
        return;
    fprintf(stderr, "halo-bench %s: rank %d: %s failed: %s\n", r->bench, r->rank, what, hb_err_string(rc));
    MPI_Abort(MPI_COMM_WORLD, 3);
}

/* A window of `bytes` on every rank; false (reported n/a) when refused. */
static int make_window(hb_run_t *r, size_t bytes, void *base_p, MPI_Win *win)
{
    int rc = MPI_Win_allocate((MPI_Aint)(bytes ? bytes : 1), 1, MPI_INFO_NULL, r->comm, base_p, win);
    int cls = rc == MPI_SUCCESS ? 0 : hb_err_class(rc) + 1;
    int worst = hb_max_int(r->comm, cls);
    if (worst == 0) {
        MPI_Win_set_errhandler(*win, MPI_ERRORS_RETURN);
        return 1;
    }
    if (rc == MPI_SUCCESS)
        MPI_Win_free(win);
    if (worst == MPI_ERR_UNSUPPORTED_OPERATION + 1)
        hb_report_na(r, "MPI_Win_allocate: MPI_ERR_UNSUPPORTED_OPERATION");
    else
        hb_report_error(r, "MPI_Win_allocate failed: %s", rc == MPI_SUCCESS ? "on another rank" : hb_err_string(rc));
    return 0;
}

static int run_rma(hb_run_t *r, int kind)
{
    static const hb_col_t lat_cols[] = {
        {"Avg Latency(us)", "avg_us", 0, 2},
        {"Iterations", "iterations", 1, -1},
    };
    static const hb_col_t bw_cols[] = {
        {"Bandwidth (MB/s)", "mb_s", 0, 2},
        {"Iterations", "iterations", 1, -1},
    };
    int bw = kind == HB_R_PUT_BW || kind == HB_R_GET_BW;
    int put = kind == HB_R_PUT_LATENCY || kind == HB_R_PUT_BW;
    int get = kind == HB_R_GET_LATENCY || kind == HB_R_GET_BW;
    int fop = kind == HB_R_FOP_LATENCY;
    hb_report_begin(r, bw ? bw_cols : lat_cols, 2, fop);
    const hb_opts_t *o = r->o;
    if (r->nranks < 2) {
        hb_report_na(r, "needs 2 ranks, has %d", r->nranks);
        return 0;
    }
    size_t elem = kind == HB_R_ACC_LATENCY ? sizeof(int) : 1;
    size_t *sizes;
    int nsizes = fop ? 1 : hb_sizes(o, elem, bw ? (size_t)1 << 22 : (size_t)1 << 20, elem, &sizes);
    if (fop) {
        sizes = malloc(sizeof *sizes);
        sizes[0] = sizeof(int64_t);
    }
    int window = bw ? (o->window > 0 ? o->window : 64) : 1;
    size_t maxs = nsizes ? sizes[nsizes - 1] : 1;
    size_t span = maxs;
    uint8_t *mem;
    MPI_Win win;
    if (!make_window(r, span, &mem, &win)) {
        free(sizes);
        return 0;
    }
    uint8_t *buf = hb_alloc(span ? span : 1);
    int origin = r->rank == 0, target = r->rank == 1;
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int iters = hb_iters(o, size, bw ? 100 : 10000, bw ? 20 : 1000);
        int warmup = hb_warmup(o, size, bw ? 10 : 100, bw ? 2 : 10);
        size_t bad = 0;
        double t0 = 0, t = 0;
        /* The target's memory before the loop: what gets read (the
         * pattern of rank 1), zeros that accumulates count up. */
        must(r, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r->rank, 0, win), "MPI_Win_lock");
        if (get)
            hb_fill(mem, size, 1, 0, 0);
        else
            memset(mem, 0, span ? span : 1);
        must(r, MPI_Win_unlock(r->rank, win), "MPI_Win_unlock");
        MPI_Barrier(r->comm);
        if (origin) {
            must(r, MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win), "MPI_Win_lock");
            int one = 1;
            int64_t inc = 1, old = -1;
            int *ones = NULL;
            if (kind == HB_R_ACC_LATENCY) {
                ones = malloc(size ? size : 1);
                for (size_t k = 0; k < size / sizeof(int); k++)
                    ones[k] = one;
            }
            for (int it = 0; it < warmup + iters; it++) {
                if (it == warmup)
                    t0 = MPI_Wtime();
                if (put && o->validate)
                    hb_fill(buf, size, 0, 0, it);
                if (get && o->validate)
                    memset(buf, HB_POISON, size);
                for (int j = 0; j < window; j++) {
                    switch (kind) {
                    case HB_R_PUT_LATENCY:
                    case HB_R_PUT_BW:
                        must(r, MPI_Put(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win), "MPI_Put");
                        break;
                    case HB_R_GET_LATENCY:
                    case HB_R_GET_BW:
                        must(r, MPI_Get(buf, (int)size, MPI_BYTE, 1, 0, (int)size, MPI_BYTE, win), "MPI_Get");
                        break;
                    case HB_R_ACC_LATENCY:
                        must(r, MPI_Accumulate(ones, (int)(size / sizeof(int)), MPI_INT, 1, 0,
                                               (int)(size / sizeof(int)), MPI_INT, MPI_SUM, win),
                             "MPI_Accumulate");
                        break;
                    default:
                        must(r, MPI_Fetch_and_op(&inc, &old, MPI_INT64_T, 1, 0, MPI_SUM, win), "MPI_Fetch_and_op");
                        break;
                    }
                }
                must(r, MPI_Win_flush(1, win), "MPI_Win_flush");
                if (o->validate && get) {
                    if (r->o->inject_error && it == warmup && size > 0)
                        buf[0] ^= 0xff;
                    bad += hb_check(buf, size, 1, 0, 0);
                }
                if (o->validate && fop) {
                    if (r->o->inject_error && it == warmup)
                        old ^= 0xff;
                    bad += old != (int64_t)it;
                }
            }
            t = MPI_Wtime() - t0;
            must(r, MPI_Win_unlock(1, win), "MPI_Win_unlock");
            free(ones);
        }
        MPI_Barrier(r->comm);
        if (o->validate && target && (put || kind == HB_R_ACC_LATENCY)) {
            must(r, MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win), "MPI_Win_lock");
            if (r->o->inject_error && size > 0)
                mem[0] ^= 0xff;
            if (put) {
                bad += hb_check(mem, size, 0, 0, warmup + iters - 1);
            } else {
                for (size_t k = 0; k < size / sizeof(int); k++) {
                    int v;
                    memcpy(&v, mem + k * sizeof(int), sizeof v);
                    bad += v != warmup + iters;
                }
            }
            must(r, MPI_Win_unlock(1, win), "MPI_Win_unlock");
        }
        double v[2];
        if (bw) {
            double mbs = t > 0 ? (double)size * window * iters / t / 1e6 : 0.0;
            hb_stats(r->comm, mbs, origin, NULL, NULL, &v[0], NULL);
        } else {
            double lat = iters > 0 ? t * 1e6 / iters : 0.0;
            hb_stats(r->comm, lat, origin, NULL, NULL, &v[0], NULL);
        }
        v[1] = iters;
        int ok = hb_all_ok(r->comm, bad == 0);
        hb_report_row(r, size, v, o->validate, ok);
    }
    MPI_Win_free(&win);
    free(buf);
    free(sizes);
    return 0;
}

int hb_run_rma(hb_run_t *r, int kind)
{
    return run_rma(r, kind);
}
