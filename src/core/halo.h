/* Common definitions for every internal Halo source file.
 *
 * Internal code includes this header (never calls a public MPI_ function);
 * layers depend one way: binding -> core -> pt2pt/coll -> transport. */
#ifndef HALO_CORE_HALO_H
#define HALO_CORE_HALO_H

#include <mpi.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HALO_LIKELY(x) __builtin_expect(!!(x), 1)
#define HALO_UNLIKELY(x) __builtin_expect(!!(x), 0)
/* For the argument checks every call makes: the compiler otherwise keeps
 * some of them out of line in the large generated bindings file. */
#define HALO_ALWAYS_INLINE inline __attribute__((always_inline))
#define HALO_CACHELINE 64
#define HALO_ALIGNED(n) __attribute__((aligned(n)))
#define HALO_EXPORT __attribute__((visibility("default")))
#define HALO_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define HALO_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Thread-local storage in the library: initial-exec keeps an access one
 * instruction (the library is small enough for the static TLS surplus). */
#define HALO_TLS __thread __attribute__((tls_model("initial-exec")))

/* Life cycle of the library in this process: RUNNING while the world model
 * (MPI_Init .. MPI_Finalize) or a session uses it (core/init.c). */
enum {
    HALO_STATE_PRE_INIT = 0,
    HALO_STATE_RUNNING = 1,
    HALO_STATE_FINALIZED = 2,
};
extern _Atomic int halo_state;
extern int halo_thread_level;     /* level the library provides: the highest that
                                   * MPI_Init_thread or a session asked for */
extern int halo_error_checking;   /* HALO_ERROR_CHECKING: argument checks in bindings */

/* The process's place in the job (filled by core/init.c from PMI). */
typedef struct halo_proc {
    int node;        /* node index, 0..nnodes-1; HALO_NODE_FAR: a process of another job */
    int local_rank;  /* index among the ranks of its node */
    int cnode;       /* node as the collectives see it: node, unless HALO_FAKE_NODES
                      * splits the job into pretended nodes (the transports keep
                      * using the real one) */
} halo_proc_t;

/* Processes of other jobs (reached through MPI_Comm_connect/accept,
 * _spawn, _join) get indices from `size` up in the same table as the
 * job's own ranks, so groups and communicators name them like any rank;
 * the socket transport reaches them (transport/sock.c). */
#define HALO_NODE_FAR (-1)
#define HALO_FAR_MAX 4096   /* processes of other jobs one process may know */

typedef struct halo_world {
    int rank, size;
    int nprocs;          /* size plus the processes of other jobs known so far */
    uint64_t job_key;    /* this job's part of every process identity (halo_proc_gpid) */
    int nnodes;
    int node;            /* my node */
    int local_rank, local_size;
    int *local_ranks;    /* world ranks of my node, by local rank */
    halo_proc_t *procs;  /* by world rank */
    int appnum, universe_size;
    char kvsname[256];
    char hostname[MPI_MAX_PROCESSOR_NAME];
} halo_world_t;
extern halo_world_t halo_world;

/* A process's identity, the same in every job that knows it: the job's key
 * (a hash of its key-value space's name) above the rank in its job. Both
 * sides of an intercommunicator between jobs order groups by it. */
uint64_t halo_proc_gpid(int world);

/* Allocation that ends the job with a clear message instead of returning NULL
 * for internal bookkeeping; user-visible allocations (Alloc_mem) return
 * MPI_ERR_NO_MEM instead. */
void *halo_malloc(size_t n);
void *halo_calloc(size_t n, size_t m);
void *halo_realloc(void *p, size_t n);
char *halo_strdup(const char *s);

/* What a process removes before it aborts (names it published), if set. */
extern void (*halo_abort_cleanup)(void);

/* Fatal internal error: prints "halo: rank R: ..." and aborts the job. */
_Noreturn void halo_fatal(const char *fmt, ...) HALO_PRINTF(1, 2);
/* Debug/diagnostic message to stderr with the rank prefix. */
void halo_warn(const char *fmt, ...) HALO_PRINTF(1, 2);

/* Clamp an MPI_Count to an int result, MPI_UNDEFINED when it does not fit
 * (the rule of Get_count, Type_size and their siblings). */
static inline int halo_count_to_int(MPI_Count c)
{
    return (c > INT32_MAX || c < INT32_MIN) ? MPI_UNDEFINED : (int)c;
}

/* Copies n < 64 bytes with a few overlapping fixed-size moves: no call
 * (a message's payload), and no loop of single bytes, which is what a
 * memcpy whose size the compiler knows to be small can become. */
static inline void halo_copy_lt64(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (n >= 32) {
        memcpy(d, s, 32);
        memcpy(d + n - 32, s + n - 32, 32);
    } else if (n >= 16) {
        memcpy(d, s, 16);
        memcpy(d + n - 16, s + n - 16, 16);
    } else if (n >= 8) {
        memcpy(d, s, 8);
        memcpy(d + n - 8, s + n - 8, 8);
    } else if (n >= 4) {
        memcpy(d, s, 4);
        memcpy(d + n - 4, s + n - 4, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            d[i] = s[i];
    }
}

/* Copies n bytes: short ones inline (halo_copy_lt64), the rest by memcpy. */
static inline void halo_copy(void *dst, const void *src, size_t n)
{
    if (n < 64)
        halo_copy_lt64(dst, src, n);
    else
        memcpy(dst, src, n);
}

/* FNV-1a (64-bit) over n bytes, continuing from h (HALO_FNV_BASIS to
 * start): names and tags that the ranks of a job derive alike from what
 * they all know. */
#define HALO_FNV_BASIS 14695981039346656037ull
static inline uint64_t halo_fnv1a(uint64_t h, const void *p, size_t n)
{
    for (const unsigned char *b = p; n--; b++) {
        h ^= *b;
        h *= 1099511628211ull;
    }
    return h;
}

/* Adds d to a counter that tools read (MPI_T performance variables): an
 * atomic load and store, relaxed (plain moves, no locked instruction; the
 * library's lock orders the writers). The MPI_T calls take that lock too;
 * the atomics keep a read that does not (a debugger's, a future lock-free
 * path) from being a data race. */
#define HALO_COUNT_ADD(var, d) \
    __atomic_store_n(&(var), __atomic_load_n(&(var), __ATOMIC_RELAXED) + (d), __ATOMIC_RELAXED)

static inline double halo_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
