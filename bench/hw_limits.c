/* halo-hw-limits: what this machine allows two processes on one node, with
 * no MPI in between, so that the library's figures can be read as multiples
 * of a hardware limit.
 *
 *   line   one cache line handed back and forth between two processes pinned
 *          to two CPUs: each waits for the other's value and writes its own.
 *          Reports the one-way time (half a round trip), the floor under any
 *          shared-memory message latency.
 *   cma    process_vm_readv from one process into another's buffer (the
 *          single copy of a rendezvous): MB/s for each size, one direction
 *          (one process reads while the other waits) and both directions at
 *          once (each reads from the other; the sum of the two, as
 *          bidirectional bandwidth is counted).
 *   switch N pairs of processes, both processes of a pair pinned to one CPU
 *          (pairs alternate between the two CPUs), each waiting for its
 *          turn with sched_yield: the one-way time when every message needs
 *          a context switch, the floor under multi-pair latency with more
 *          ranks than cores (N = 1, 2 and 4 unless --pairs says). Not part
 *          of "all" (line and cma).
 *   alltoall   the copy floor of an Alltoall of N ranks (4 and 8 unless
 *          --ranks says; blocks of 8 KiB to 1 MiB unless --sizes says):
 *          every rank's send and receive buffers in one shared mapping,
 *          each of the two pinned processes copying the blocks of half the
 *          ranks with memcpy, nothing in between. Every block has to be
 *          copied once by some core, so no library on the node exchanges
 *          them faster. Reports microseconds an exchange (median, fastest)
 *          and GB/s of blocks. Not part of "all".
 *   ring   a stream of records through a byte ring in shared memory, as
 *          small messages travel: one pinned process copies each record
 *          (--sizes bytes, default 512 and 2048, after a line of header)
 *          into the ring and publishes it, the other waits for it, copies
 *          it out, checks its first and last bytes and hands the space
 *          back. MB/s of records for rings of 16 KiB to 1 MiB. Not part of
 *          "all".
 *
 *   pingpong  a ping-pong of one-line records through two rings, one each
 *          way, as 0-byte messages travel between two ranks: each process
 *          writes a record's header and then its number, the other polls
 *          the line where the next record goes, and answers after --work N
 *          steps of register arithmetic (N = 0, 16, 32, 64 and 128 unless
 *          --work says; the time of the steps alone is given beside them),
 *          standing for what a library does between taking a message and
 *          sending the next: matching, completing, returning and the next
 *          call. Unlike `line`, where the two processes write one line in
 *          turn, the sender's line here is one the receiver holds (it
 *          polled it), so a record costs the line's trip to the sender and
 *          back. Reports the one-way time. Not part of "all".
 *
 *   halo-hw-limits [line|cma|all|switch|alltoall|ring|pingpong] [--cpus A,B] [-i ITERS] [-r REPEATS]
 *                  [--sizes S1,S2,...] [-W WINDOW] [--pairs N] [--ranks N] [--work N] [--json]
 *
 * -W: the reader cycles through WINDOW destination buffers, as a bandwidth
 * benchmark's window of receives does (halo-bench bw and bibw receive 64
 * messages into 64 buffers); 1 (the default) reads into one buffer that
 * stays in cache.
 *
 * The processes are made with fork and pinned with sched_setaffinity
 * (default CPUs: the first two this process may use). Each figure is the
 * median over the repeats; line also gives the fastest repeat. Exit status
 * 0 when every probe ran, 1 on bad arguments, 2 when a probe could not run
 * (CMA refused by the kernel, fewer than two CPUs): the reason is printed,
 * and --json reports it as status "n/a". */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SIZES 32
#define MAX_A2A_RANKS 64
#define MAX_REPEATS 101

typedef struct {
    int cpu[2];
    long iters;      /* line: round trips per repeat (0: default) */
    int repeats;
    int window;
    long sizes[MAX_SIZES];
    int nsizes;
    int json;
    int pairs;       /* switch: pairs of processes (0: 1, 2 and 4) */
    int ranks;       /* alltoall: ranks (0: 4 and 8) */
    int sizes_given; /* --sizes was given (alltoall has sizes of its own otherwise) */
    int work;        /* pingpong: steps between taking a record and answering (-1: a list) */
} opts_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Both processes write their pipe end once they are pinned and ready, and
 * read the other's: neither starts timing before the other runs. */
static int handshake(int wfd, int rfd)
{
    char c = 1;
    if (write(wfd, &c, 1) != 1 || read(rfd, &c, 1) != 1)
        return -1;
    return 0;
}

/* Makes the two pipes and the partner process. The partner (0 returned)
 * writes up and reads down, the parent the other ends, and each closes the
 * ends it does not use, so that a process that dies ends the other's
 * reads. -1 with the reason in why on failure. */
static pid_t fork_partner(int up[2], int down[2], char *why, size_t nwhy)
{
    if (pipe(up) || pipe(down)) {
        snprintf(why, nwhy, "pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, nwhy, "fork: %s", strerror(errno));
        return -1;
    }
    close(pid == 0 ? up[0] : up[1]);
    close(pid == 0 ? down[1] : down[0]);
    return pid;
}

/* In a partner's wait loop, every million spins: whether its parent has
 * gone (the partner then leaves). */
static inline bool parent_gone(long *spins, pid_t parent)
{
    return (++*spins & 0xfffff) == 0 && getppid() != parent;
}

/* In the parent's wait loop, every million spins: whether the partner
 * has stopped (a partner that died answers nothing); *pid becomes -1 and
 * why says so then. */
static inline bool partner_stopped(long *spins, pid_t *pid, char *why, size_t nwhy)
{
    int st;
    if ((++*spins & 0xfffff) != 0 || waitpid(*pid, &st, WNOHANG) != *pid)
        return false;
    snprintf(why, nwhy, "the partner process stopped");
    *pid = -1;
    return true;
}

/* The parent's side of the start: pinned, then the handshake. 0, or 2
 * with the partner killed and a reason in why. */
static int pair_start(const opts_t *o, pid_t pid, int up[2], int down[2], char *why, size_t nwhy)
{
    if (pin(o->cpu[0]) == 0 && handshake(down[1], up[0]) == 0)
        return 0;
    snprintf(why, nwhy, "cannot pin the two processes to CPUs %d and %d", o->cpu[0], o->cpu[1]);
    kill(pid, SIGKILL);
    return 2;
}

/* The parent's side of the end: reaps the partner (pid -1: already gone)
 * and closes the pipes; rc, or 2 when the partner did not exit 0. */
static int pair_end(const opts_t *o, pid_t pid, int rc, int up[2], int down[2], char *why, size_t nwhy)
{
    int st = 0;
    if (pid > 0)
        waitpid(pid, &st, 0);
    if (rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        snprintf(why, nwhy, "the partner process failed (pinned to CPU %d?)", o->cpu[1]);
        rc = 2;
    }
    close(up[0]);
    close(down[1]);
    return rc;
}

/* ---------------------------------------------------------------- line */

typedef struct {
    _Alignas(64) _Atomic uint64_t word;   /* odd: written by the parent; even: by the child */
    char pad[56];
} line_t;

/* Returns 0, or 2 with a reason in why. out: median and fastest one-way ns. */
static int probe_line(const opts_t *o, double *med_ns, double *min_ns, char *why, size_t nwhy)
{
    long iters = o->iters > 0 ? o->iters : 200000, warm = iters / 10 + 1000;
    line_t *l = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (l == MAP_FAILED) {
        snprintf(why, nwhy, "mmap: %s", strerror(errno));
        return 2;
    }
    atomic_store(&l->word, 0);
    int up[2], down[2];
    long total = (long)o->repeats * (warm + iters);
    pid_t parent = getpid();
    pid_t pid = fork_partner(up, down, why, nwhy);
    if (pid < 0)
        return 2;
    if (pid == 0) {
        if (pin(o->cpu[1]) || handshake(up[1], down[0]))
            _exit(3);
        /* Answer every odd value v with v + 1; stop if the parent is gone. */
        long spins = 0;
        for (long i = 0; i < total; i++) {
            uint64_t want = 2 * (uint64_t)i + 1;
            while (atomic_load_explicit(&l->word, memory_order_acquire) != want) {
                relax();
                if (parent_gone(&spins, parent))
                    _exit(4);
            }
            atomic_store_explicit(&l->word, want + 1, memory_order_release);
        }
        _exit(0);
    }
    double t[MAX_REPEATS];
    int rc = pair_start(o, pid, up, down, why, nwhy);
    if (rc == 0) {
        uint64_t v = 0;
        long spins = 0;
        for (int r = 0; r < o->repeats && rc == 0; r++) {
            double t0 = 0;
            for (long i = 0; i < warm + iters && rc == 0; i++) {
                if (i == warm)
                    t0 = now_s();
                atomic_store_explicit(&l->word, v + 1, memory_order_release);
                while (atomic_load_explicit(&l->word, memory_order_acquire) != v + 2) {
                    relax();
                    if (partner_stopped(&spins, &pid, why, nwhy)) {
                        rc = 2;
                        break;
                    }
                }
                v += 2;
            }
            t[r] = (now_s() - t0) / (2.0 * (double)iters) * 1e9;
        }
    }
    rc = pair_end(o, pid, rc, up, down, why, nwhy);
    if (rc == 0) {
        *med_ns = median(t, o->repeats);
        *min_ns = t[0];   /* sorted by median() */
    }
    munmap(l, 4096);
    return rc;
}

/* ---------------------------------------------------------------- ring */

#define RING_MAX_BYTES (1l << 20)
static const long ring_sizes[] = {16384, 65536, 131072, 196608, 262144, 1048576};
#define NRING (int)(sizeof ring_sizes / sizeof ring_sizes[0])

typedef struct {
    _Alignas(64) _Atomic uint64_t head;   /* records published (producer) */
    _Alignas(64) _Atomic uint64_t tail;   /* records consumed (consumer) */
    _Alignas(64) _Atomic int bad;         /* the consumer saw wrong bytes */
} ring_ctl_t;

/* Byte of record i at its first and last positions. */
static char ring_byte(uint64_t i)
{
    return (char)(i * 131 + 7);
}

/* Records of len bytes (a line of header before each, as a message's)
 * through a ring of ring bytes: MB/s of records in *mbs (median of the
 * repeats). Returns 0, or 2 with a reason in why. */
static int probe_ring(const opts_t *o, size_t len, size_t ring, double *mbs, char *why, size_t nwhy)
{
    size_t rec = (len + 64 + 63) & ~(size_t)63, nrec = ring / rec;
    if (nrec < 2) {
        snprintf(why, nwhy, "a record of %zu bytes does not fit twice in a ring of %zu", len, ring);
        return 2;
    }
    long per = (long)((64l << 20) / (long)len) + 1000, warm = per / 10;
    if (o->iters > 0)
        per = o->iters;
    size_t map = 4096 + RING_MAX_BYTES;
    char *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *src = malloc(len), *dst = malloc(len);
    if (m == MAP_FAILED || !src || !dst) {
        snprintf(why, nwhy, "no memory for a ring of %zu bytes", ring);
        if (m != MAP_FAILED)
            munmap(m, map);
        free(src);
        free(dst);
        return 2;
    }
    ring_ctl_t *c = (ring_ctl_t *)m;
    char *data = m + 4096;
    uint64_t total = (uint64_t)o->repeats * (uint64_t)(warm + per);
    int up[2], down[2];
    pid_t parent = getpid();
    pid_t pid = fork_partner(up, down, why, nwhy);
    if (pid < 0) {
        munmap(m, map);
        free(src);
        free(dst);
        return 2;
    }
    if (pid == 0) {
        if (pin(o->cpu[1]) || handshake(up[1], down[0]))
            _exit(3);
        long spins = 0;
        for (uint64_t i = 0; i < total; i++) {
            while (atomic_load_explicit(&c->head, memory_order_acquire) <= i) {
                relax();
                if (parent_gone(&spins, parent))
                    _exit(4);
            }
            const char *r = data + (i % nrec) * rec;
            memcpy(dst, r + 64, len);
            if (dst[0] != ring_byte(i) || dst[len - 1] != ring_byte(i))
                atomic_store(&c->bad, 1);
            atomic_store_explicit(&c->tail, i + 1, memory_order_release);
        }
        _exit(0);
    }
    double t[MAX_REPEATS];
    int rc = pair_start(o, pid, up, down, why, nwhy);
    if (rc == 0) {
        uint64_t i = 0;
        long spins = 0;
        for (int r = 0; r < o->repeats && rc == 0; r++) {
            double t0 = 0;
            for (long k = 0; k < warm + per && rc == 0; k++, i++) {
                if (k == warm)
                    t0 = now_s();
                while (i - atomic_load_explicit(&c->tail, memory_order_acquire) >= nrec) {
                    relax();
                    if (partner_stopped(&spins, &pid, why, nwhy)) {
                        rc = 2;
                        break;
                    }
                }
                src[0] = src[len - 1] = ring_byte(i);
                memcpy(data + (i % nrec) * rec + 64, src, len);
                atomic_store_explicit(&c->head, i + 1, memory_order_release);
            }
            /* The repeat ends when its last record is consumed. */
            while (rc == 0 && atomic_load_explicit(&c->tail, memory_order_acquire) < i)
                relax();
            t[r] = (double)len * (double)per / (now_s() - t0) / 1e6;
        }
    }
    rc = pair_end(o, pid, rc, up, down, why, nwhy);
    if (rc == 0 && atomic_load(&c->bad)) {
        snprintf(why, nwhy, "wrong data: a record read back differs from the one written");
        rc = 2;
    }
    if (rc == 0)
        *mbs = median(t, o->repeats);
    munmap(m, map);
    free(src);
    free(dst);
    return rc;
}

/* ---------------------------------------------------------------- pingpong */

#define PP_RECS 64   /* records of a ring: 4 KiB, the lines a ping-pong keeps to */

typedef struct {
    _Alignas(64) _Atomic uint32_t num;   /* record number, stored last; 0: none */
    uint32_t len, seq, kind;
    uint64_t hdr[5];                     /* a message header's 40 bytes */
} pp_rec_t;

typedef struct {
    pp_rec_t ring[2][PP_RECS];           /* [0]: parent to child, [1]: child to parent */
} pp_t;

/* N dependent steps on a register: time without memory traffic. */
static inline uint64_t pp_work(uint64_t x, int n)
{
    for (int i = 0; i < n; i++) {
        x = x * 2862933555777941757ull + 3037000493ull;
        __asm__ __volatile__("" : "+r"(x));
    }
    return x;
}

/* Writes record i into ring r: header, then the number (as a library's
 * ring does), then clears the line 16 records ahead (the next lap's). */
static inline void pp_put(pp_t *p, int r, uint64_t i, uint64_t x)
{
    pp_rec_t *rec = &p->ring[r][i % PP_RECS];
    rec->len = 0;
    rec->seq = (uint32_t)i;
    rec->kind = 1;
    for (int k = 0; k < 5; k++)
        rec->hdr[k] = x + (uint64_t)k;
    atomic_store_explicit(&rec->num, (uint32_t)(i % 0xfffffffeu) + 1, memory_order_release);
    atomic_store_explicit(&p->ring[r][(i + 16) % PP_RECS].num, 0, memory_order_relaxed);
}

/* Whether record i has arrived in ring r (its number stored). */
static inline bool pp_arrived(const pp_t *p, int r, uint64_t i)
{
    return atomic_load_explicit(&p->ring[r][i % PP_RECS].num, memory_order_acquire) ==
           (uint32_t)(i % 0xfffffffeu) + 1;
}

/* One-way ns of a ping-pong with `work` steps before each answer (median
 * of the repeats in *med_ns). Returns 0, or 2 with a reason in why. */
static int probe_pingpong(const opts_t *o, int work, double *med_ns, char *why, size_t nwhy)
{
    long iters = o->iters > 0 ? o->iters : 100000, warm = iters / 10 + 1000;
    pp_t *p = mmap(NULL, sizeof(pp_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(why, nwhy, "mmap: %s", strerror(errno));
        return 2;
    }
    memset(p, 0, sizeof *p);
    uint64_t total = (uint64_t)o->repeats * (uint64_t)(warm + iters);
    int up[2], down[2];
    pid_t parent = getpid();
    pid_t pid = fork_partner(up, down, why, nwhy);
    if (pid < 0) {
        munmap(p, sizeof *p);
        return 2;
    }
    if (pid == 0) {
        if (pin(o->cpu[1]) || handshake(up[1], down[0]))
            _exit(3);
        long spins = 0;
        uint64_t x = 1;
        for (uint64_t i = 0; i < total; i++) {
            while (!pp_arrived(p, 0, i))
                if (parent_gone(&spins, parent))
                    _exit(4);
            if (p->ring[0][i % PP_RECS].seq != (uint32_t)i)
                _exit(5);
            x = pp_work(x + p->ring[0][i % PP_RECS].hdr[0], work);
            pp_put(p, 1, i, x);
        }
        _exit(0);
    }
    double t[MAX_REPEATS];
    int rc = pair_start(o, pid, up, down, why, nwhy);
    if (rc == 0) {
        uint64_t i = 0, x = 2;
        long spins = 0;
        for (int r = 0; r < o->repeats && rc == 0; r++) {
            double t0 = 0;
            for (long k = 0; k < warm + iters && rc == 0; k++, i++) {
                if (k == warm)
                    t0 = now_s();
                pp_put(p, 0, i, x);
                while (rc == 0 && !pp_arrived(p, 1, i))
                    if (partner_stopped(&spins, &pid, why, nwhy))
                        rc = 2;
                if (rc == 0 && p->ring[1][i % PP_RECS].seq != (uint32_t)i) {
                    snprintf(why, nwhy, "a record came back with the wrong sequence number");
                    kill(pid, SIGKILL);   /* it waits for a record that is not coming */
                    rc = 2;
                }
                if (rc)
                    break;
                x = pp_work(x + p->ring[1][i % PP_RECS].hdr[0], work);
            }
            t[r] = (now_s() - t0) / (2.0 * (double)iters) * 1e9;
        }
    }
    rc = pair_end(o, pid, rc, up, down, why, nwhy);
    if (rc == 0)
        *med_ns = median(t, o->repeats);
    munmap(p, sizeof *p);
    return rc;
}

/* ns of `work` steps alone (median of 9 timings). */
static double pp_work_ns(int work)
{
    double t[9];
    uint64_t x = 5;
    for (int r = 0; r < 9; r++) {
        double t0 = now_s();
        for (int k = 0; k < 20000; k++)
            x = pp_work(x, work);
        t[r] = (now_s() - t0) / 20000 * 1e9;
    }
    __asm__ __volatile__("" : : "r"(x));
    return median(t, 9);
}

/* ---------------------------------------------------------------- switch */

#define MAX_PAIRS 8

typedef struct {
    _Alignas(64) _Atomic uint64_t word;   /* the pair's turn: even for its first process, odd for its second */
    char pad[56];
} turn_t;

typedef struct {
    _Alignas(64) _Atomic int ready;
    turn_t turn[MAX_PAIRS];
} switch_t;

typedef struct {
    pid_t pid[2 * MAX_PAIRS];
    int status[2 * MAX_PAIRS];   /* -1 while running */
    int n;
} kids_t;

/* Reaps the children that have ended; 1 when one of them failed. */
static int reap_failed(kids_t *k)
{
    int bad = 0;
    for (int i = 0; i < k->n; i++) {
        int st;
        if (k->status[i] < 0 && waitpid(k->pid[i], &st, WNOHANG) == k->pid[i])
            k->status[i] = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
        if (k->status[i] > 0)
            bad = 1;
    }
    return bad;
}

/* One process of the switch probe: process `id` of 2 npairs, in pair
 * id % npairs, first of it when id < npairs. Waits for its turn yielding
 * the CPU, then gives the turn back. The parent (id 0, kids set) times its
 * pair into t[] and stops (returning -1) when a child failed; a child
 * stops when the parent is gone. */
static int switch_run(switch_t *sw, int id, int npairs, long warm, long iters, int repeats, double *t,
                      kids_t *kids, pid_t parent)
{
    turn_t *tn = &sw->turn[id % npairs];
    uint64_t mine = id < npairs ? 0 : 1;
    long calls = 0, per = warm + iters;
    atomic_fetch_add(&sw->ready, 1);
    while (atomic_load(&sw->ready) < 2 * npairs) {
        sched_yield();
        if ((++calls & 0xff) == 0 && (kids ? reap_failed(kids) : getppid() != parent))
            return -1;
    }
    uint64_t want = mine;
    for (int r = 0; r < repeats; r++) {
        double t0 = 0;
        for (long i = 0; i < per; i++, want += 2) {
            if (i == warm)
                t0 = now_s();
            while (atomic_load_explicit(&tn->word, memory_order_acquire) != want) {
                sched_yield();
                if ((++calls & 0xffff) == 0 && (kids ? reap_failed(kids) : getppid() != parent))
                    return -1;
            }
            atomic_store_explicit(&tn->word, want + 1, memory_order_release);
        }
        if (t)
            t[r] = (now_s() - t0) / (2.0 * (double)iters) * 1e9;
    }
    return 0;
}

/* npairs pairs of processes; both processes of pair k are pinned to one
 * CPU, cpu[k % 2] (where Open MPI's round-robin binding puts ranks i and
 * i + n/2 when they outnumber two cores, the pairs of OSU multi_lat), and
 * wait for their turn with sched_yield: every one-way step needs the CPU
 * to switch to the other process. Returns 0, or 2 with a reason in why.
 * out: median and fastest one-way ns of pair 0. */
static int probe_switch(const opts_t *o, int npairs, double *med_ns, double *min_ns, char *why, size_t nwhy)
{
    long iters = o->iters > 0 ? o->iters : 20000, warm = iters / 10 + 100;
    switch_t *sw = mmap(NULL, sizeof(switch_t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sw == MAP_FAILED) {
        snprintf(why, nwhy, "mmap: %s", strerror(errno));
        return 2;
    }
    pid_t parent = getpid();
    kids_t kids = {.n = 0};
    int rc = 0;
    for (int id = 1; id < 2 * npairs && rc == 0; id++) {
        pid_t pid = fork();
        if (pid < 0) {
            snprintf(why, nwhy, "fork: %s", strerror(errno));
            rc = 2;
        } else if (pid == 0) {
            if (pin(o->cpu[(id % npairs) % 2]))
                _exit(3);
            _exit(switch_run(sw, id, npairs, warm, iters, o->repeats, NULL, NULL, parent) ? 4 : 0);
        } else {
            kids.pid[kids.n] = pid;
            kids.status[kids.n++] = -1;
        }
    }
    double t[MAX_REPEATS];
    if (rc == 0 && pin(o->cpu[0])) {
        snprintf(why, nwhy, "cannot pin to CPU %d", o->cpu[0]);
        rc = 2;
    }
    if (rc == 0 && switch_run(sw, 0, npairs, warm, iters, o->repeats, t, &kids, parent)) {
        snprintf(why, nwhy, "a process of the probe failed (pinned to CPU %d and %d?)", o->cpu[0], o->cpu[1]);
        rc = 2;
    }
    for (int i = 0; i < kids.n; i++) {
        int st;
        if (kids.status[i] >= 0)
            continue;
        if (rc)
            kill(kids.pid[i], SIGKILL);
        if (waitpid(kids.pid[i], &st, 0) == kids.pid[i] && rc == 0 && !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
            snprintf(why, nwhy, "a process of the probe failed");
            rc = 2;
        }
    }
    if (rc == 0) {
        *med_ns = median(t, o->repeats);
        *min_ns = t[0];   /* sorted by median() */
    }
    munmap(sw, sizeof(switch_t));
    return rc;
}

/* ---------------------------------------------------------------- cma */

/* Reads len bytes of pid's memory at remote n times, into the window
 * buffers of len bytes at local in turn; returns the seconds taken, or a
 * negative value with errno set. */
static double read_loop(pid_t pid, char *local, int window, uintptr_t remote, size_t len, long n)
{
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        char *dst = local + (size_t)(i % window) * len;
        size_t got = 0;
        while (got < len) {
            struct iovec l = {dst + got, len - got}, r = {(void *)(remote + got), len - got};
            ssize_t k = process_vm_readv(pid, &l, 1, &r, 1, 0);
            if (k <= 0)
                return -1.0;
            got += (size_t)k;
        }
    }
    return now_s() - t0;
}

/* Whether the last buffer written by read_loop holds len bytes of c. */
static bool filled(const char *local, int window, size_t len, long n, char c)
{
    const char *b = local + (size_t)((n - 1) % window) * len;
    for (size_t i = 0; i < len; i++)
        if (b[i] != c)
            return false;
    return true;
}

static long cma_iters(size_t len)
{
    long n = (long)((256ul << 20) / len);
    return n < 20 ? 20 : n;
}

/* The partner process of the cma probe: owns a source buffer (and a
 * destination for both directions). Protocol on the pipes, per size and
 * repeat: the parent sends a command word {len, both}; the partner answers
 * once it is ready; with both, it then reads the parent's source while the
 * parent reads its own, and reports its seconds. */
typedef struct {
    uint64_t len;
    uint64_t both;     /* 1: read the parent's buffer at the same time */
    uint64_t quit;
} cmd_t;

typedef struct {
    uint64_t src;      /* address of the partner's source buffer */
    double secs;       /* both directions: the partner's read time */
    int32_t err;       /* errno of a failed read, or 0 */
} reply_t;

static void cma_partner(const opts_t *o, size_t maxlen, int rfd, int wfd, pid_t parent, uintptr_t parent_src)
{
    char *src = malloc(maxlen), *dst = malloc(maxlen * (size_t)o->window);
    reply_t rep = {0};
    if (!src || !dst || pin(o->cpu[1]))
        _exit(3);
    memset(src, 0x5a, maxlen);
    memset(dst, 0, maxlen * (size_t)o->window);
    rep.src = (uint64_t)(uintptr_t)src;
    if (write(wfd, &rep, sizeof rep) != (ssize_t)sizeof rep)
        _exit(3);
    cmd_t c;
    while (read(rfd, &c, sizeof c) == (ssize_t)sizeof c && !c.quit) {
        rep.secs = 0;
        rep.err = 0;
        char go;
        /* Ready: the parent starts when it reads this. */
        if (write(wfd, &rep, sizeof rep) != (ssize_t)sizeof rep || read(rfd, &go, 1) != 1)
            _exit(3);
        if (c.both) {
            long n = cma_iters((size_t)c.len);
            memset(dst, 0, (size_t)c.len * (size_t)o->window);
            double s = read_loop(parent, dst, o->window, parent_src, (size_t)c.len, n);
            rep.secs = s;
            rep.err = s < 0 ? errno : !filled(dst, o->window, (size_t)c.len, n, (char)0xa5) ? EBADMSG : 0;
        }
        if (write(wfd, &rep, sizeof rep) != (ssize_t)sizeof rep)
            _exit(3);
    }
    _exit(0);
}

typedef struct {
    double one, both;   /* MB/s, medians */
} cma_row_t;

static int probe_cma(const opts_t *o, cma_row_t *rows, char *why, size_t nwhy)
{
    size_t maxlen = 0;
    for (int i = 0; i < o->nsizes; i++)
        if ((size_t)o->sizes[i] > maxlen)
            maxlen = (size_t)o->sizes[i];
    char *src = malloc(maxlen), *dst = malloc(maxlen * (size_t)o->window);
    if (!src || !dst) {
        snprintf(why, nwhy, "cannot allocate %zu bytes", maxlen * (size_t)(o->window + 1));
        return 2;
    }
    memset(src, 0xa5, maxlen);
    memset(dst, 0, maxlen * (size_t)o->window);
    int down[2], up[2];
    pid_t parent = getpid();
    pid_t pid = fork_partner(up, down, why, nwhy);
    if (pid < 0)
        return 2;
    if (pid == 0)
        cma_partner(o, maxlen, down[0], up[1], parent, (uintptr_t)src);
    int rc = 0;
    reply_t rep;
    if (pin(o->cpu[0]) || read(up[0], &rep, sizeof rep) != (ssize_t)sizeof rep) {
        snprintf(why, nwhy, "cannot pin the two processes to CPUs %d and %d", o->cpu[0], o->cpu[1]);
        rc = 2;
    }
    uintptr_t remote = (uintptr_t)rep.src;
    for (int i = 0; i < o->nsizes && rc == 0; i++) {
        size_t len = (size_t)o->sizes[i];
        long n = cma_iters(len);
        double one[MAX_REPEATS], both[MAX_REPEATS];
        for (int r = 0; r < o->repeats && rc == 0; r++) {
            for (int b = 0; b < 2 && rc == 0; b++) {
                cmd_t c = {len, (uint64_t)b, 0};
                char go = 1;
                if (write(down[1], &c, sizeof c) != (ssize_t)sizeof c ||
                    read(up[0], &rep, sizeof rep) != (ssize_t)sizeof rep || write(down[1], &go, 1) != 1) {
                    snprintf(why, nwhy, "the partner process stopped");
                    rc = 2;
                    break;
                }
                memset(dst, 0, len * (size_t)o->window);
                double s = read_loop(pid, dst, o->window, remote, len, n);
                int err = s < 0 ? errno : !filled(dst, o->window, len, n, 0x5a) ? EBADMSG : 0;
                if (read(up[0], &rep, sizeof rep) != (ssize_t)sizeof rep) {
                    snprintf(why, nwhy, "the partner process stopped");
                    rc = 2;
                    break;
                }
                if (err == EBADMSG || rep.err == EBADMSG) {
                    snprintf(why, nwhy, "process_vm_readv returned wrong data (%zu bytes)", len);
                    rc = 2;
                    break;
                }
                if (err || rep.err) {
                    snprintf(why, nwhy, "process_vm_readv refused: %s (single-copy transfers need "
                             "ptrace permission between the processes; see kernel.yama.ptrace_scope)",
                             strerror(err ? err : rep.err));
                    rc = 2;
                    break;
                }
                double mb = (double)len * (double)n / 1e6;
                if (b == 0)
                    one[r] = mb / s;
                else   /* both read n * len in their own time: the sum of the two rates */
                    both[r] = mb / s + mb / rep.secs;
            }
        }
        if (rc == 0) {
            rows[i].one = median(one, o->repeats);
            rows[i].both = median(both, o->repeats);
        }
    }
    cmd_t q = {0, 0, 1};
    if (write(down[1], &q, sizeof q) != (ssize_t)sizeof q)
        kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    close(down[1]);
    close(up[0]);
    free(src);
    free(dst);
    return rc;
}

/* ---------------------------------------------------------------- alltoall */

/* Barriers passed by each of the two processes, a line each. */
typedef struct {
    _Alignas(64) _Atomic uint64_t passed;
    char pad[56];
} a2a_flag_t;

/* Rank s's send buffer and rank r's receive buffer in the shared mapping:
 * n blocks of len bytes each, block r of send s bound for rank r. */
static char *a2a_send(char *base, int n, size_t len, int s)
{
    return base + (size_t)s * (size_t)n * len;
}
static char *a2a_recv(char *base, int n, size_t len, int r)
{
    return base + ((size_t)n + (size_t)r) * (size_t)n * len;
}
static char a2a_byte(int s, int r)
{
    return (char)(s * 31 + r * 7 + 1);
}

/* Barrier b of the two processes; false when the other one is gone (kid:
 * the partner for the parent, 0 in the partner). */
static bool a2a_barrier(a2a_flag_t *f, int me, uint64_t b, pid_t kid, pid_t parent)
{
    atomic_store_explicit(&f[me].passed, b, memory_order_release);
    long spins = 0;
    int st;
    while (atomic_load_explicit(&f[!me].passed, memory_order_acquire) < b) {
        relax();
        if ((++spins & 0xfffff) == 0 && (kid > 0 ? waitpid(kid, &st, WNOHANG) == kid : getppid() != parent))
            return false;
    }
    return true;
}

/* One of the two processes: fills the send buffers of its ranks (rank r
 * belongs to process r % 2), then in every repeat copies, for each of its
 * ranks r, block r of every rank's send buffer into r's receive buffer,
 * iters times, between two barriers; checks the blocks it wrote at the
 * end. The parent times the repeats into t[]. 0, or a reason code: 1 a
 * barrier's partner is gone, 2 wrong data. */
static int a2a_run(char *base, a2a_flag_t *f, int me, int n, size_t len, long iters, int repeats, double *t,
                   pid_t kid, pid_t parent)
{
    for (int s = me; s < n; s += 2)
        for (int r = 0; r < n; r++)
            memset(a2a_send(base, n, len, s) + (size_t)r * len, a2a_byte(s, r), len);
    uint64_t b = 0;
    for (int rep = -1; rep < repeats; rep++) {   /* -1: untimed, faults the receive pages in */
        if (!a2a_barrier(f, me, ++b, kid, parent))
            return 1;
        double t0 = now_s();
        for (long i = 0; i < (rep < 0 ? 1 : iters); i++)
            for (int r = me; r < n; r += 2)
                for (int k = 0; k < n; k++) {
                    int s = (r + k) % n;
                    memcpy(a2a_recv(base, n, len, r) + (size_t)s * len, a2a_send(base, n, len, s) + (size_t)r * len,
                           len);
                }
        if (!a2a_barrier(f, me, ++b, kid, parent))
            return 1;
        if (t && rep >= 0)
            t[rep] = (now_s() - t0) / (double)iters;
    }
    for (int r = me; r < n; r += 2)
        for (int s = 0; s < n; s++) {
            const char *blk = a2a_recv(base, n, len, r) + (size_t)s * len;
            for (size_t i = 0; i < len; i++)
                if (blk[i] != a2a_byte(s, r))
                    return 2;
        }
    return 0;
}

/* The copy floor of an Alltoall of n ranks with blocks of len bytes: every
 * rank's send and receive buffers in one shared mapping, the two processes
 * pinned to the two CPUs each copying the blocks of half the ranks with
 * memcpy, no synchronisation per block. Every block of an Alltoall has to
 * be copied once by some core; no library on this node moves them faster.
 * Returns 0, or 2 with a reason in why. out: median and fastest seconds of
 * one exchange. */
static int probe_alltoall(const opts_t *o, int n, size_t len, double *med_s, double *min_s, char *why, size_t nwhy)
{
    size_t bytes = 2 * (size_t)n * (size_t)n * len;
    long iters = o->iters > 0 ? o->iters : (long)((64ul << 20) / ((size_t)n * (size_t)n * len));
    if (iters < 1)
        iters = 1;
    char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    a2a_flag_t *f = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED || f == MAP_FAILED) {
        snprintf(why, nwhy, "mmap of %zu bytes: %s", bytes, strerror(errno));
        if (base != MAP_FAILED)
            munmap(base, bytes);
        if (f != MAP_FAILED)
            munmap(f, 4096);
        return 2;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, nwhy, "fork: %s", strerror(errno));
        munmap(base, bytes);
        munmap(f, 4096);
        return 2;
    }
    if (pid == 0) {
        if (pin(o->cpu[1]))
            _exit(3);
        _exit(10 + a2a_run(base, f, 1, n, len, iters, o->repeats, NULL, 0, parent));
    }
    double t[MAX_REPEATS];
    int rc = 0, code = 0, st = 0;
    if (pin(o->cpu[0])) {
        snprintf(why, nwhy, "cannot pin to CPU %d", o->cpu[0]);
        kill(pid, SIGKILL);
        rc = 2;
    } else {
        code = a2a_run(base, f, 0, n, len, iters, o->repeats, t, pid, parent);
        if (code == 1)
            pid = -1;   /* reaped by the barrier */
    }
    if (pid > 0)
        waitpid(pid, &st, 0);
    if (rc == 0 && (code == 2 || (pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 12))) {
        snprintf(why, nwhy, "wrong data in a receive buffer");
        rc = 2;
    } else if (rc == 0 && (code == 1 || !(WIFEXITED(st) && WEXITSTATUS(st) == 10))) {
        snprintf(why, nwhy, "the partner process failed (pinned to CPU %d?)", o->cpu[1]);
        rc = 2;
    }
    if (rc == 0) {
        *med_s = median(t, o->repeats);
        *min_s = t[0];   /* sorted by median() */
    }
    munmap(base, bytes);
    munmap(f, 4096);
    return rc;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *f)
{
    fprintf(f, "usage: halo-hw-limits [line|cma|all|switch|alltoall|ring|pingpong] [--cpus A,B] [-i ITERS] "
               "[-r REPEATS] [--sizes S1,S2,...] [-W WINDOW] [--pairs N] [--ranks N] [--work N] [--json]\n"
               "  line    one-way time of a cache line handed between two pinned processes\n"
               "  cma     process_vm_readv MB/s between two pinned processes, one way and both at once\n"
               "  all     line and cma (the default)\n"
               "  switch  one-way time of pairs of processes sharing a CPU, yielding it to each other\n"
               "  alltoall  the copy floor of an Alltoall: every block copied once by memcpy on two CPUs\n"
               "  ring    MB/s of records streamed through a shared byte ring, by ring size (16 KiB-1 MiB)\n"
               "  pingpong  one-way time of a ping-pong of one-line records through two rings, answered\n"
               "          after --work N steps of register arithmetic (default 0, 16, 32, 64 and 128 in turn)\n"
               "  -W      the reader cycles through WINDOW destination buffers (default 1)\n"
               "  --pairs switch: this many pairs (1 to %d; default 1, 2 and 4 in turn)\n"
               "  --ranks alltoall: this many ranks (2 to %d; default 4 and 8 in turn)\n", MAX_PAIRS, MAX_A2A_RANKS);
}

static int parse_sizes(const char *s, opts_t *o)
{
    o->nsizes = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0 || o->nsizes == MAX_SIZES)
            return -1;
        if (*end == 'K' || *end == 'k')
            v <<= 10, end++;
        else if (*end == 'M' || *end == 'm')
            v <<= 20, end++;
        o->sizes[o->nsizes++] = v;
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        s = end;
    }
    return o->nsizes > 0 ? 0 : -1;
}

/* An integer option's value, lo to hi; -1 with a message naming the
 * option otherwise (unit: after the range in the message, or ""). */
static int int_arg(const char *opt, const char *val, int lo, int hi, const char *unit, int *out)
{
    int v = atoi(val);
    if (v < lo || v > hi) {
        fprintf(stderr, "halo-hw-limits: %s wants %d to %d%s (got %s)\n", opt, lo, hi, unit, val);
        return -1;
    }
    *out = v;
    return 0;
}

static int default_cpus(opts_t *o)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return -1;
    int k = 0;
    for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
        if (CPU_ISSET(c, &set))
            o->cpu[k++] = c;
    return k == 2 ? 0 : -1;
}

int main(int argc, char **argv)
{
    opts_t o = {.cpu = {-1, -1}, .repeats = 9, .window = 1, .work = -1, .sizes = {65536, 262144, 1048576, 4194304}, .nsizes = 4};
    const char *what = "all";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "line") || !strcmp(a, "cma") || !strcmp(a, "all") || !strcmp(a, "switch") ||
            !strcmp(a, "alltoall") || !strcmp(a, "ring") || !strcmp(a, "pingpong")) {
            what = a;
        } else if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (i + 1 < argc && !strcmp(a, "--cpus")) {
            if (sscanf(argv[++i], "%d,%d", &o.cpu[0], &o.cpu[1]) != 2 || o.cpu[0] < 0 || o.cpu[1] < 0 ||
                o.cpu[0] == o.cpu[1]) {
                fprintf(stderr, "halo-hw-limits: --cpus wants two different CPU numbers A,B (got %s)\n", argv[i]);
                return 1;
            }
        } else if (i + 1 < argc && !strcmp(a, "-i")) {
            o.iters = atol(argv[++i]);
            if (o.iters <= 0) {
                fprintf(stderr, "halo-hw-limits: -i wants a positive count (got %s)\n", argv[i]);
                return 1;
            }
        } else if (i + 1 < argc && !strcmp(a, "-r")) {
            if (int_arg(a, argv[++i], 1, MAX_REPEATS, "", &o.repeats))
                return 1;
        } else if (i + 1 < argc && !strcmp(a, "-W")) {
            if (int_arg(a, argv[++i], 1, 1024, " buffers", &o.window))
                return 1;
        } else if (i + 1 < argc && !strcmp(a, "--pairs")) {
            if (int_arg(a, argv[++i], 1, MAX_PAIRS, "", &o.pairs))
                return 1;
        } else if (i + 1 < argc && !strcmp(a, "--work")) {
            if (int_arg(a, argv[++i], 0, 100000, " steps", &o.work))
                return 1;
        } else if (i + 1 < argc && !strcmp(a, "--ranks")) {
            if (int_arg(a, argv[++i], 2, MAX_A2A_RANKS, "", &o.ranks))
                return 1;
        } else if (i + 1 < argc && !strcmp(a, "--sizes")) {
            o.sizes_given = 1;
            if (parse_sizes(argv[++i], &o)) {
                fprintf(stderr, "halo-hw-limits: --sizes wants positive sizes like 64K,1M (got %s)\n", argv[i]);
                return 1;
            }
        } else {
            fprintf(stderr, "halo-hw-limits: unknown argument %s\n", a);
            usage(stderr);
            return 1;
        }
    }
    char why[256] = "";
    int status = 0;
    signal(SIGPIPE, SIG_IGN);   /* a partner that died: writes fail instead */
    bool no_cpus = o.cpu[0] < 0 && default_cpus(&o) != 0;
    if (no_cpus)
        snprintf(why, sizeof why, "this process may run on fewer than two CPUs");
    bool do_line = !strcmp(what, "line") || !strcmp(what, "all");
    bool do_cma = !strcmp(what, "cma") || !strcmp(what, "all");
    if (!strcmp(what, "switch")) {
        int list[] = {1, 2, 4}, n = 3;
        if (o.pairs > 0) {
            list[0] = o.pairs;
            n = 1;
        }
        for (int k = 0; k < n; k++) {
            double med = 0, min = 0;
            int rc = no_cpus ? 2 : probe_switch(&o, list[k], &med, &min, why, sizeof why);
            if (o.json) {
                if (rc)
                    printf("{\"benchmark\":\"hw_switch\",\"status\":\"n/a\",\"pairs\":%d,\"note\":\"%s\"}\n",
                           list[k], why);
                else
                    printf("{\"benchmark\":\"hw_switch\",\"status\":\"ok\",\"cpus\":[%d,%d],\"pairs\":%d,"
                           "\"rows\":[{\"size\":0,\"avg_us\":%.4f,\"min_us\":%.4f,\"repeats\":%d}]}\n",
                           o.cpu[0], o.cpu[1], list[k], med / 1e3, min / 1e3, o.repeats);
            } else if (rc) {
                printf("# switch: not measured: %s\n", why);
            } else {
                printf("# %d pair%s, each on one CPU (%d or %d), yielding it to each other: one-way time, median "
                       "and fastest of %d\nswitch_ns %d %.1f %.1f\n", list[k], list[k] > 1 ? "s" : "", o.cpu[0],
                       o.cpu[1], o.repeats, list[k], med, min);
            }
            status = rc > status ? rc : status;
        }
    }
    if (!strcmp(what, "pingpong")) {
        int list[] = {0, 16, 32, 64, 128}, n = 5;
        if (o.work >= 0) {
            list[0] = o.work;
            n = 1;
        }
        if (!o.json && !no_cpus)
            printf("# ping-pong of one-line records through two rings between CPUs %d and %d, answered after N "
                   "steps of arithmetic: steps, their time alone, one-way time (median of %d)\n",
                   o.cpu[0], o.cpu[1], o.repeats);
        for (int k = 0; k < n; k++) {
            double med = 0;
            int rc = no_cpus ? 2 : probe_pingpong(&o, list[k], &med, why, sizeof why);
            double wns = pp_work_ns(list[k]);
            if (o.json) {
                if (rc)
                    printf("{\"benchmark\":\"hw_pingpong\",\"status\":\"n/a\",\"work\":%d,\"note\":\"%s\"}\n",
                           list[k], why);
                else
                    printf("{\"benchmark\":\"hw_pingpong\",\"status\":\"ok\",\"cpus\":[%d,%d],\"work\":%d,"
                           "\"work_ns\":%.1f,\"rows\":[{\"size\":0,\"avg_us\":%.4f,\"repeats\":%d}]}\n",
                           o.cpu[0], o.cpu[1], list[k], wns, med / 1e3, o.repeats);
            } else if (rc) {
                printf("# pingpong: not measured: %s\n", why);
            } else {
                printf("pingpong_ns %d %.1f %.1f\n", list[k], wns, med);
            }
            status = rc > status ? rc : status;
        }
    }
    if (!strcmp(what, "alltoall")) {
        int list[] = {4, 8}, n = 2;
        if (o.ranks > 0) {
            list[0] = o.ranks;
            n = 1;
        }
        if (!o.sizes_given) {
            static const long dflt[] = {8192, 65536, 262144, 1048576};
            o.nsizes = 4;
            memcpy(o.sizes, dflt, sizeof dflt);
        }
        for (int k = 0; k < n; k++) {
            double med[MAX_SIZES], min[MAX_SIZES], gbs[MAX_SIZES];
            int rc = no_cpus ? 2 : 0;
            for (int i = 0; i < o.nsizes && rc == 0; i++) {
                rc = probe_alltoall(&o, list[k], (size_t)o.sizes[i], &med[i], &min[i], why, sizeof why);
                gbs[i] = rc ? 0 : (double)list[k] * list[k] * (double)o.sizes[i] / med[i] / 1e9;
            }
            if (o.json) {
                if (rc) {
                    printf("{\"benchmark\":\"hw_alltoall\",\"status\":\"n/a\",\"ranks\":%d,\"note\":\"%s\"}\n",
                           list[k], why);
                } else {
                    printf("{\"benchmark\":\"hw_alltoall\",\"status\":\"ok\",\"cpus\":[%d,%d],\"ranks\":%d,\"rows\":[",
                           o.cpu[0], o.cpu[1], list[k]);
                    for (int i = 0; i < o.nsizes; i++)
                        printf("%s{\"size\":%ld,\"avg_us\":%.3f,\"min_us\":%.3f,\"gb_s\":%.2f,\"repeats\":%d}",
                               i ? "," : "", o.sizes[i], med[i] * 1e6, min[i] * 1e6, gbs[i], o.repeats);
                    printf("]}\n");
                }
            } else if (rc) {
                printf("# alltoall: not measured: %s\n", why);
            } else {
                printf("# Alltoall of %d ranks, every block copied once by memcpy on CPUs %d and %d: block bytes, "
                       "us an exchange (median and fastest of %d), GB/s of blocks\n", list[k], o.cpu[0], o.cpu[1],
                       o.repeats);
                for (int i = 0; i < o.nsizes; i++)
                    printf("alltoall %d %ld %.2f %.2f %.2f\n", list[k], o.sizes[i], med[i] * 1e6, min[i] * 1e6, gbs[i]);
            }
            status = rc > status ? rc : status;
        }
    }
    if (!strcmp(what, "ring")) {
        if (!o.sizes_given) {
            o.nsizes = 2;
            o.sizes[0] = 512;
            o.sizes[1] = 2048;
        }
        for (int i = 0; i < o.nsizes && status == 0; i++) {
            double mbs[NRING];
            int rc = no_cpus ? 2 : 0;
            if (rc == 0 && (o.sizes[i] < 1 || o.sizes[i] > 65536)) {
                snprintf(why, sizeof why, "ring: record sizes go from 1 to 65536 bytes (got %ld)", o.sizes[i]);
                rc = 2;
            }
            for (int k = 0; k < NRING && rc == 0; k++) {
                mbs[k] = 0;
                if ((long)(o.sizes[i] + 128) * 2 <= ring_sizes[k])
                    rc = probe_ring(&o, (size_t)o.sizes[i], (size_t)ring_sizes[k], &mbs[k], why, sizeof why);
            }
            if (o.json) {
                if (rc) {
                    printf("{\"benchmark\":\"hw_ring\",\"status\":\"n/a\",\"size\":%ld,\"note\":\"%s\"}\n",
                           o.sizes[i], why);
                } else {
                    printf("{\"benchmark\":\"hw_ring\",\"status\":\"ok\",\"cpus\":[%d,%d],\"size\":%ld,\"rows\":[",
                           o.cpu[0], o.cpu[1], o.sizes[i]);
                    for (int k = 0, first = 1; k < NRING; k++)
                        if (mbs[k] > 0) {
                            printf("%s{\"ring\":%ld,\"mb_s\":%.1f,\"repeats\":%d}", first ? "" : ",", ring_sizes[k],
                                   mbs[k], o.repeats);
                            first = 0;
                        }
                    printf("]}\n");
                }
            } else if (rc) {
                printf("# ring: not measured: %s\n", why);
            } else {
                printf("# records of %ld bytes streamed through a shared ring from CPU %d to CPU %d, MB/s (medians of "
                       "%d): ring bytes, MB/s\n", o.sizes[i], o.cpu[0], o.cpu[1], o.repeats);
                for (int k = 0; k < NRING; k++)
                    if (mbs[k] > 0)
                        printf("ring %ld %ld %.1f\n", o.sizes[i], ring_sizes[k], mbs[k]);
            }
            status = rc > status ? rc : status;
        }
    }
    if (do_line) {
        double med = 0, min = 0;
        int rc = no_cpus ? 2 : probe_line(&o, &med, &min, why, sizeof why);
        if (o.json) {
            if (rc)
                printf("{\"benchmark\":\"hw_line\",\"status\":\"n/a\",\"note\":\"%s\"}\n", why);
            else
                printf("{\"benchmark\":\"hw_line\",\"status\":\"ok\",\"cpus\":[%d,%d],\"rows\":[{\"size\":64,"
                       "\"avg_us\":%.4f,\"min_us\":%.4f,\"repeats\":%d}]}\n",
                       o.cpu[0], o.cpu[1], med / 1e3, min / 1e3, o.repeats);
        } else if (rc) {
            printf("# line: not measured: %s\n", why);
        } else {
            printf("# cache line handed between CPUs %d and %d: one-way time, median and fastest of %d\n"
                   "line_ns %.1f %.1f\n", o.cpu[0], o.cpu[1], o.repeats, med, min);
        }
        status = rc > status ? rc : status;
    }
    if (do_cma) {
        cma_row_t rows[MAX_SIZES];
        int rc = no_cpus ? 2 : probe_cma(&o, rows, why, sizeof why);
        if (o.json) {
            if (rc) {
                printf("{\"benchmark\":\"hw_cma\",\"status\":\"n/a\",\"note\":\"%s\"}\n", why);
            } else {
                printf("{\"benchmark\":\"hw_cma\",\"status\":\"ok\",\"cpus\":[%d,%d],\"window\":%d,\"rows\":[",
                       o.cpu[0], o.cpu[1], o.window);
                for (int i = 0; i < o.nsizes; i++)
                    printf("%s{\"size\":%ld,\"mb_s\":%.1f,\"both_mb_s\":%.1f,\"repeats\":%d}", i ? "," : "",
                           o.sizes[i], rows[i].one, rows[i].both, o.repeats);
                printf("]}\n");
            }
        } else if (rc) {
            printf("# cma: not measured: %s\n", why);
        } else {
            printf("# process_vm_readv between CPUs %d and %d into %d buffer%s, MB/s (medians of %d): bytes, "
                   "one way, both ways at once (sum)\n", o.cpu[0], o.cpu[1], o.window, o.window > 1 ? "s" : "",
                   o.repeats);
            for (int i = 0; i < o.nsizes; i++)
                printf("cma %ld %.1f %.1f\n", o.sizes[i], rows[i].one, rows[i].both);
        }
        status = rc > status ? rc : status;
    }
    return status;
}
