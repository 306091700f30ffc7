/* mpiexec: Halo's process manager and PMI-1 server.
 *
 * One process, one thread, one poll() loop (mpiexec_loop.c) over: a
 * signalfd (SIGCHLD, SIGINT, SIGTERM, ...), each rank's PMI socket, each
 * rank's stdout and stderr pipes, mpiexec's stdin and rank 0's stdin pipe.
 * Ranks reach mpiexec only through the socketpair they inherit (PMI_FD);
 * there is no listening socket.
 *
 * The parts:
 *   mpiexec_args.c    command line -> mpiexec_opts_t
 *   mpiexec_launch.c  program lookup, environment, binding, fork/exec
 *   mpiexec_pmi.c     PMI-1 server: one connection per rank, barrier, abort
 *   mpiexec_kvs.c     the job's key-value space
 *   mpiexec_io.c      output forwarding (labels, whole lines), stdin to rank 0
 *   mpiexec_loop.c    the event loop, exits, teardown, timeouts
 *   mpiexec_main.c    setup, /dev/shm cleanup, exit status
 *
 * Multi-node later: ranks already carry a node index and the process
 * mapping is computed from it; a remote node would get a proxy that speaks
 * to this loop over one socket, in place of local fork/exec. */
#ifndef HALO_MPIEXEC_H
#define HALO_MPIEXEC_H

#include <stddef.h>
#include <sys/types.h>

#include "pmi_wire.h"

/* A variable to set (value != NULL) or to forward from mpiexec's own
 * environment (value == NULL, -x NAME). */
typedef struct mpiexec_env_var {
    const char *name;
    const char *value;
} mpiexec_env_var_t;

typedef struct mpiexec_env_list {
    mpiexec_env_var_t *vars;
    int n, cap;
} mpiexec_env_list_t;

/* One segment of the command line ("-n 2 prog args" between ':'). */
typedef struct mpiexec_app {
    int nprocs;
    char **argv;       /* NULL-terminated; points into main's argv */
    const char *wdir;  /* NULL: mpiexec's working directory */
    mpiexec_env_list_t env;  /* -env, applied after the global ones */
    char *path;        /* the program as found, filled by launch_resolve */
    int first_rank;
    /* The standard's keys (MPI 5.0 section 11.5), also handed to the ranks'
     * MPI_INFO_ENV: -n as given (-1: not given), -soft's list, -arch, -path
     * (directories searched for the program before PATH), and the -file the
     * segment came from. */
    int maxprocs;
    const char *soft;
    const char *arch;
    const char *dirs;
    const char *file;
} mpiexec_app_t;

enum {
    MPIEXEC_BIND_AUTO = 0, /* not given: as core */
    MPIEXEC_BIND_CORE,
    MPIEXEC_BIND_NONE,
    /* To the CPUs that share the rank's CPU's package, NUMA node or last
     * level cache, or to all of mpiexec's (board). */
    MPIEXEC_BIND_SOCKET,
    MPIEXEC_BIND_NUMA,
    MPIEXEC_BIND_L3CACHE,
    MPIEXEC_BIND_BOARD,
};

typedef struct mpiexec_opts {
    mpiexec_app_t *apps;
    int napps;
    mpiexec_env_list_t genv;  /* -genv and -x, in command-line order */
    int label;
    int bind;
    int usize;                 /* -usize, or -1 */
    double timeout;            /* seconds; 0: none */
    const char *timeout_text;  /* as the user wrote it, for the message */
    const char **hosts;        /* -hosts: all must be this node for now */
    int nhosts;
    int slots;                 /* ranks the hosts and host files name (host:N, slots=N); 0: none */
    int ppn;                   /* -ppn, --npernode; 0: not given */
    int report_bindings;       /* --report-bindings, -print-rank-map */
    char **owned;              /* what -file read: its text and its argument vectors */
    int nowned;
} mpiexec_opts_t;

/* Growable byte buffer (PMI input/output queues, stdin). */
typedef struct mpiexec_buf {
    char *data;
    size_t len, cap;
} mpiexec_buf_t;

/* A rank's stdout or stderr pipe, forwarded line by line. */
typedef struct mpiexec_stream {
    int fd;            /* read end; -1 once closed */
    int out_fd;        /* 1 or 2 */
    int rank;
    char *buf;         /* allocated on first data */
    size_t len;
    double last_data;  /* when data last arrived: partial lines and drain wait on it */
} mpiexec_stream_t;

enum {
    MPIEXEC_PMI_NONE = 0,  /* never sent init: not a PMI program, or not yet */
    MPIEXEC_PMI_INIT,
    MPIEXEC_PMI_FINALIZED,
};

typedef struct mpiexec_rank {
    int rank, app, node, local_rank, local_size;
    pid_t pid;         /* 0 before launch */
    int alive;         /* launched and not yet reaped */
    int wstatus;       /* from waitpid, once reaped */
    int pmi_fd;        /* our end of the socketpair; -1 once closed */
    int pmi_state;
    int pmi_lost;      /* socket closed without finalize */
    double pmi_lost_time;
    int in_barrier;
    mpiexec_buf_t pmi_in, pmi_out;
    mpiexec_stream_t out, err;
} mpiexec_rank_t;

typedef struct mpiexec_kvs_entry {
    char *key;
    char *value;
} mpiexec_kvs_entry_t;

/* Open addressing, linear probing; never shrinks (a job's keys only grow). */
typedef struct mpiexec_kvs {
    mpiexec_kvs_entry_t *slots;
    size_t nslots, nused, bytes;
} mpiexec_kvs_t;

typedef struct mpiexec_job {
    const mpiexec_opts_t *opts;
    int size;
    int nnodes;
    mpiexec_rank_t *ranks;
    char kvsname[64];
    mpiexec_kvs_t kvs;
    int barrier_count;
    int nalive;

    /* Ending: the first event that ends the job sets these once. */
    int ending;
    int exit_status;
    int status_final;      /* set by abort/timeout/signal: ranks' exits no longer count */
    double kill_deadline;  /* SIGKILL to the survivors at this time; 0: not armed */
    int killed;
    double start_time;
    double deadline;       /* --timeout; 0: none */
    double all_exited_time;  /* when the last rank was reaped */
    /* A job started by MPI_Comm_spawn: the spawning process (its pid in
     * HALO_SPAWN_PARENT); when it is gone (this process's parent changes),
     * the job ends. 0: none. */
    pid_t spawn_parent;

    /* stdin, forwarded to rank 0 only. */
    int stdin_open;        /* still reading mpiexec's fd 0 */
    int stdin_pipe;        /* write end of rank 0's stdin; -1 when closed */
    mpiexec_buf_t stdin_buf;

    int sig_fd;
    int out_broken[3];     /* writes to our fd 1 or 2 failed: drop output */
    int null_fd;           /* /dev/null, the stdin of ranks other than 0 */
    int orig_nofile_soft;  /* restored in the children */
    int ncpus;             /* CPUs mpiexec may run on, in cpus[] */
    int *cpus;
} mpiexec_job_t;

/* mpiexec_main.c */
void mpiexec_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double mpiexec_now(void);

/* mpiexec_args.c: returns 0, or the exit status to leave with (help and
 * version: 0 through *done_p; errors: 2). */
int mpiexec_args_parse(int argc, char **argv, mpiexec_opts_t *opts_p, int *done_p);
void mpiexec_args_free(mpiexec_opts_t *opts);
int mpiexec_env_list_add(mpiexec_env_list_t *list, const char *name, const char *value);

/* mpiexec_buf: in mpiexec_io.c */
int mpiexec_buf_append(mpiexec_buf_t *buf, const char *data, size_t len);
void mpiexec_buf_consume(mpiexec_buf_t *buf, size_t len);
void mpiexec_buf_free(mpiexec_buf_t *buf);

/* mpiexec_launch.c */
int mpiexec_launch_resolve(mpiexec_opts_t *opts);
int mpiexec_launch_job(mpiexec_job_t *job);

/* mpiexec_kvs.c */
int mpiexec_kvs_put(mpiexec_kvs_t *kvs, const char *key, const char *value);
const char *mpiexec_kvs_get(const mpiexec_kvs_t *kvs, const char *key);
void mpiexec_kvs_free(mpiexec_kvs_t *kvs);

/* mpiexec_pmi.c */
int mpiexec_pmi_setup(mpiexec_job_t *job);
void mpiexec_pmi_read(mpiexec_job_t *job, mpiexec_rank_t *r);
void mpiexec_pmi_write(mpiexec_job_t *job, mpiexec_rank_t *r);
void mpiexec_pmi_close(mpiexec_rank_t *r);

/* mpiexec_io.c */
void mpiexec_io_stream_read(mpiexec_job_t *job, mpiexec_stream_t *s);
void mpiexec_io_stream_flush_idle(mpiexec_job_t *job, mpiexec_stream_t *s, double now);
double mpiexec_io_stream_deadline(const mpiexec_job_t *job, const mpiexec_stream_t *s);
void mpiexec_io_stream_close(mpiexec_job_t *job, mpiexec_stream_t *s);
void mpiexec_io_stdin_read(mpiexec_job_t *job);
void mpiexec_io_stdin_write(mpiexec_job_t *job);
void mpiexec_io_stdin_close(mpiexec_job_t *job);

/* mpiexec_loop.c */
int mpiexec_loop_run(mpiexec_job_t *job);
/* Ends the job: signals the ranks still alive with sig (SIGTERM normally,
 * the forwarded signal when mpiexec received one) and SIGKILL a second
 * later. status: the exit status; final: it wins over later rank exits. */
void mpiexec_loop_end_job(mpiexec_job_t *job, int status, int final, int sig);
/* Records a rank's non-zero exit status if none was recorded yet. */
void mpiexec_loop_note_status(mpiexec_job_t *job, int status);

#endif /* HALO_MPIEXEC_H */
