/* Resource benchmarks: what an MPI costs besides time.
 *
 *   wait_cpu       rank 1 blocks in MPI_Recv for a message rank 0 sends
 *                  only after sleeping 2 s outside MPI; the CPU time rank 1
 *                  burns meanwhile, as a percentage of the wall time, over
 *                  the whole wait and after its first second (a helper
 *                  thread reads the waiting thread's CPU clock then)
 *   shm_footprint  every pair of ranks exchanges a small and a 256 KiB
 *                  message both ways; then each rank sums the proportional
 *                  set size (Pss) of its shared mappings in /proc/self/smaps
 *                  (segments, files in /dev/shm, shared anonymous memory):
 *                  average and largest per rank, and the sum over ranks
 *
 * Neither has a message size. Linux only (smaps, thread CPU clocks). */
#include "hb.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- wait_cpu */

typedef struct {
    clockid_t clock;       /* the waiting thread's CPU clock */
    double at;             /* seconds after the start to sample */
    double cpu;            /* its CPU seconds then */
} sampler_t;

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *sample(void *arg)
{
    sampler_t *s = arg;
    struct timespec ts = {(time_t)s->at, (long)((s->at - (double)(time_t)s->at) * 1e9)};
    nanosleep(&ts, NULL);
    s->cpu = clock_s(s->clock);
    return NULL;
}

static int run_wait_cpu(hb_run_t *r)
{
    static const hb_col_t cols[] = {
        {"Wait(s)", "wait_s", 0, 2},
        {"CPU whole wait(%)", "cpu_pct", 0, 2},
        {"CPU after 1 s(%)", "cpu_after_1s_pct", 0, 2},
    };
    hb_report_begin(r, cols, 3, 1);
    if (r->nranks < 2) {
        hb_report_na(r, "needs 2 ranks, has %d", r->nranks);
        return 0;
    }
    const double delay = 2.0;
    double v[3] = {0, 0, 0};
    int ok = 1, msg = 0;
    MPI_Barrier(r->comm);
    if (r->rank == 0) {
        struct timespec ts = {(time_t)delay, 0};
        nanosleep(&ts, NULL);
        msg = 4242;
        MPI_Send(&msg, 1, MPI_INT, 1, 7, r->comm);
    } else if (r->rank == 1) {
        sampler_t s = {.at = 1.0};
        pthread_getcpuclockid(pthread_self(), &s.clock);
        pthread_t th;
        int have = pthread_create(&th, NULL, sample, &s) == 0;
        double w0 = hb_now(), c0 = clock_s(s.clock);
        MPI_Recv(&msg, 1, MPI_INT, 0, 7, r->comm, MPI_STATUS_IGNORE);
        double w1 = hb_now(), c1 = clock_s(s.clock);
        if (have)
            pthread_join(th, NULL);
        v[0] = w1 - w0;
        v[1] = 100.0 * (c1 - c0) / (w1 - w0);
        v[2] = have && w1 - w0 > s.at ? 100.0 * (c1 - s.cpu) / (w1 - w0 - s.at) : 0;
        ok = msg == 4242 && !r->o->inject_error;
    }
    /* rank 0 reports rank 1's figures */
    if (r->rank == 1)
        MPI_Send(v, 3, MPI_DOUBLE, 0, 8, r->comm);
    else if (r->rank == 0)
        MPI_Recv(v, 3, MPI_DOUBLE, 1, 8, r->comm, MPI_STATUS_IGNORE);
    ok = hb_all_ok(r->comm, ok);
    hb_report_row(r, 0, v, r->o->validate, ok);
    return 0;
}

/* ---------------------------------------------------------------- shm_footprint */

/* Pss in KiB of the shared mappings of this process. */
static long shared_pss_kib(void)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f)
        return -1;
    char line[512];
    int shared = 0;
    long total = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && strlen(perms) == 4) {
            shared = perms[3] == 's';
            continue;
        }
        long kib;
        if (shared && sscanf(line, "Pss: %ld kB", &kib) == 1)
            total += kib;
    }
    fclose(f);
    return total;
}

static int run_shm_footprint(hb_run_t *r)
{
    static const hb_col_t cols[] = {
        {"Avg shared Pss(KiB)", "avg_kib", 0, 0},
        {"Max shared Pss(KiB)", "max_kib", 0, 0},
        {"Sum over ranks(KiB)", "sum_kib", 0, 0},
    };
    hb_report_begin(r, cols, 3, 1);
    const size_t big = 256 << 10;
    uint8_t *sbuf = hb_alloc(big), *rbuf = hb_alloc(big);
    int ok = 1;
    /* every pair, both ways, a small message (eager) and a large one
     * (rendezvous), in rounds: in round k rank i talks with i + k and i - k */
    for (int k = 1; k < r->nranks; k++) {
        int to = (r->rank + k) % r->nranks, from = (r->rank - k + r->nranks) % r->nranks;
        for (int m = 0; m < 2; m++) {
            size_t n = m ? big : 64;
            hb_fill(sbuf, n, r->rank, 0, k);
            memset(rbuf, HB_POISON, n);
            MPI_Sendrecv(sbuf, (int)n, MPI_BYTE, to, m, rbuf, (int)n, MPI_BYTE, from, m, r->comm,
                         MPI_STATUS_IGNORE);
            if (r->o->validate && (hb_check(rbuf, n, from, 0, k) != 0 || r->o->inject_error))
                ok = 0;
        }
    }
    MPI_Barrier(r->comm);
    long kib = shared_pss_kib();
    double v[3];
    hb_stats(r->comm, (double)kib, 1, NULL, &v[1], &v[0], &v[2]);
    ok = hb_all_ok(r->comm, ok && kib >= 0);
    hb_report_row(r, 0, v, r->o->validate, ok);
    free(sbuf);
    free(rbuf);
    return 0;
}

int hb_run_resources(hb_run_t *r, int kind)
{
    return kind == HB_R_WAIT_CPU ? run_wait_cpu(r) : run_shm_footprint(r);
}
