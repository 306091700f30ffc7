/* halo-bench: OSU-compatible MPI micro-benchmarks, one program for all.
 *
 * The same sources build against Halo (CMake target halo-bench) and against
 * any other MPI (the Makefile in this folder), so the peers are measured by
 * identical code. Only standard MPI is used; what an MPI does not declare
 * (persistent collectives before MPI 4) is left out at compile time, and what
 * it declares but refuses at run time (MPI_ERR_UNSUPPORTED_OPERATION under
 * MPI_ERRORS_RETURN) is reported as n/a. */
#ifndef HALO_BENCH_HB_H
#define HALO_BENCH_HB_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define HB_VERSION "0.1"

/* Persistent collectives are MPI 4; Open MPI 5 declares them while still
 * announcing MPI 3.1. */
#if MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define HB_HAVE_PERSISTENT_COLL 1
#else
#define HB_HAVE_PERSISTENT_COLL 0
#endif

enum { HB_OUT_TEXT, HB_OUT_CSV, HB_OUT_JSON };
enum { HB_FAMILY_PT2PT, HB_FAMILY_COLL, HB_FAMILY_NBC, HB_FAMILY_PERSIST, HB_FAMILY_STARTUP, HB_FAMILY_DTYPE,
       HB_FAMILY_RES, HB_FAMILY_RMA };

/* Options, as on the command line (OSU's names where OSU has one). */
typedef struct hb_opts {
    size_t min_size, max_size;  /* -m [min:]max; 0 = the benchmark's default */
    size_t *sizes;              /* --sizes a,b,c (overrides -m) */
    int nsizes;
    int iters, warmup;          /* -i, -x; -1 = the benchmark's default */
    int full;                   /* -f */
    int validate;               /* -c */
    int ntest;                  /* -t: MPI_Test calls during the dummy computation */
    int window;                 /* -W */
    int pairs;                  /* -p; 0 = half the ranks */
    int output;                 /* HB_OUT_* */
    int inject_error;           /* --inject-error: corrupt received data (tests the checks) */
    const char *launcher;       /* --launcher "CMD": time whole launches of init/hello */
    char **argv0;               /* for re-executing ourselves in launcher mode */
} hb_opts_t;

/* One column of a result table. */
typedef struct hb_col {
    const char *head;  /* text header, OSU's wording */
    const char *key;   /* CSV/JSON key */
    int full_only;     /* shown in text only with -f */
    int precision;     /* digits after the point; -1 = integer */
} hb_col_t;

#define HB_MAX_COLS 10

/* State shared by one run of one benchmark. */
typedef struct hb_run {
    const char *bench;      /* its name */
    const char *title;      /* "Latency Test" */
    const hb_opts_t *o;
    MPI_Comm comm;          /* a duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN */
    int rank, nranks;
    const hb_col_t *cols;
    int ncols;
    int no_size;            /* barrier-like: text output has no size column */
    int header_done;
    int nrows;
    int failed;             /* a validation failure or error on any rank */
    int na;                 /* the benchmark is not available */
    char note[256];         /* why n/a, or an error */
} hb_run_t;

/* A benchmark's description in the registry. */
typedef struct hb_bench {
    const char *name;
    const char *title;
    int family;
    int kind;               /* pt2pt or collective kind within the family */
    const char *help;
} hb_bench_t;

/* ---- registry, main */
extern const hb_bench_t hb_benches[];
extern const int hb_nbenches;

/* ---- report.c: output in text, CSV or JSON; statistics across ranks */
void hb_report_begin(hb_run_t *r, const hb_col_t *cols, int ncols, int no_size);
void hb_report_row(hb_run_t *r, size_t size, const double *vals, int validated, int ok);
void hb_report_na(hb_run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hb_report_error(hb_run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hb_report_end(hb_run_t *r);
void hb_stats(MPI_Comm comm, double v, int participates, double *min_p, double *max_p, double *avg_p,
              double *sum_p);
int hb_all_ok(MPI_Comm comm, int ok_local);
int hb_max_int(MPI_Comm comm, int v);
const char *hb_library(void);
extern int hb_mpi_initialized;

/* ---- sizes and buffers (util.c) */
int hb_sizes(const hb_opts_t *o, size_t dflt_min, size_t dflt_max, size_t elem, size_t **sizes_p);
int hb_iters(const hb_opts_t *o, size_t size, int small, int large);
int hb_warmup(const hb_opts_t *o, size_t size, int small, int large);
void *hb_alloc(size_t bytes);
static inline uint8_t hb_pat(int origin, size_t idx, int iter)
{
    /* Varies with the sender, the byte and the iteration, so stale or
     * misplaced data is seen. */
    return (uint8_t)(((unsigned)origin * 37u + (unsigned)idx * 11u + (unsigned)(idx >> 8) * 3u +
                      (unsigned)iter * 5u) ^ 0x5au);
}
void hb_fill(void *buf, size_t n, int origin, size_t first, int iter);
size_t hb_check(const void *buf, size_t n, int origin, size_t first, int iter);
#define HB_POISON 0xEE
/* Reduction data: small integers in floats, so every sum is exact. */
static inline float hb_fval(int rank, size_t idx, int iter)
{
    return (float)((rank + 1) + (int)(idx % 13) + iter % 3);
}
double hb_now(void); /* CLOCK_MONOTONIC seconds: one clock for all ranks of a node */
void hb_spin(double seconds);
int hb_err_class(int rc);
const char *hb_err_string(int rc);

/* ---- the families */
int hb_run_pt2pt(hb_run_t *r, int kind);
/* The process spawn_latency starts: answers its parent's ping-pongs. */
int hb_spawned_peer(MPI_Comm parent);
int hb_run_coll(hb_run_t *r, int family, int kind);
int hb_run_startup(hb_run_t *r, int kind, double init_seconds);
int hb_launch_wrapper(const hb_opts_t *o, const hb_bench_t *b);
int hb_run_dtype(hb_run_t *r, int kind);
int hb_run_resources(hb_run_t *r, int kind);
int hb_run_rma(hb_run_t *r, int kind);
extern int hb_dtype_block;  /* pack_vector: bytes per block (--block) */

/* pt2pt kinds */
enum { HB_P_LATENCY, HB_P_BW, HB_P_BIBW, HB_P_MBW_MR, HB_P_MULTI_LAT, HB_P_SPAWN_LATENCY };
/* collective kinds (shared by blocking, nonblocking, persistent) */
enum {
    HB_C_BARRIER, HB_C_BCAST, HB_C_GATHER, HB_C_GATHERV, HB_C_SCATTER, HB_C_SCATTERV,
    HB_C_ALLGATHER, HB_C_ALLGATHERV, HB_C_ALLTOALL, HB_C_ALLTOALLV, HB_C_ALLTOALLW,
    HB_C_REDUCE, HB_C_ALLREDUCE, HB_C_REDUCE_SCATTER, HB_C_REDUCE_SCATTER_BLOCK,
    HB_C_SCAN, HB_C_EXSCAN, HB_C_COUNT
};
/* startup kinds */
enum { HB_S_INIT, HB_S_HELLO };
/* datatype kinds */
enum { HB_D_PACK_VECTOR, HB_D_PACK_SUBARRAY2D, HB_D_PACK_SUBARRAY3D };
/* resource kinds */
enum { HB_R_WAIT_CPU, HB_R_SHM_FOOTPRINT };
/* one-sided kinds */
enum { HB_R_PUT_LATENCY, HB_R_GET_LATENCY, HB_R_PUT_BW, HB_R_GET_BW, HB_R_ACC_LATENCY, HB_R_FOP_LATENCY };

#endif
