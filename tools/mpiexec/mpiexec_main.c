/* mpiexec: set up the job, run the loop, clean up, leave with the job's
 * exit status. See mpiexec.h for the parts and mpiexec_loop.c for how a
 * job ends. */
#include "mpiexec.h"
#include "pmi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

void mpiexec_msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    int len;

    /* One write per message, so it never splits around forwarded output. */
    memcpy(buf, "mpiexec: ", 9);
    va_start(ap, fmt);
    len = vsnprintf(buf + 9, sizeof(buf) - 10, fmt, ap);
    va_end(ap);
    if (len < 0) {
        return;
    }
    len += 9;
    if (len > (int)sizeof(buf) - 2) {
        len = (int)sizeof(buf) - 2;
    }
    buf[len++] = '\n';
    if (write(2, buf, (size_t)len) < 0) {
        /* Nowhere left to report it. */
    }
}

double mpiexec_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Children get dup2 onto 0, 1 and 2, and our own messages go to 2: make
 * sure each is open, or a socket or pipe could take its number. */
static void main_std_fds_open(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) < 0) {
            int nfd = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

            if (nfd >= 0 && nfd != fd) {
                dup2(nfd, fd);
                close(nfd);
            }
        }
    }
}

/* Each rank costs mpiexec three descriptors; raise the soft limit to the
 * hard one (the children get the original back). */
static int main_nofile_raise(mpiexec_job_t *job)
{
    struct rlimit rl;
    rlim_t need = (rlim_t)job->size * 3 + 32;

    job->orig_nofile_soft = -1;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        return 0;
    }
    job->orig_nofile_soft = rl.rlim_cur > (rlim_t)0x7fffffff ? 0x7fffffff : (int)rl.rlim_cur;
    if (rl.rlim_cur < rl.rlim_max) {
        struct rlimit raised = rl;

        raised.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
            rl = raised;
        }
    }
    if (rl.rlim_cur < need) {
        mpiexec_msg("%d ranks need %lu open files in mpiexec, the limit is %lu (ulimit -n)",
                    job->size, (unsigned long)need, (unsigned long)rl.rlim_cur);
        return -1;
    }
    return 0;
}

static int main_cpus_get(mpiexec_job_t *job)
{
    cpu_set_t set;

    job->ncpus = 0;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 0;
    }
    job->cpus = malloc(sizeof(int) * CPU_SETSIZE);
    if (job->cpus == NULL) {
        return -1;
    }
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            job->cpus[job->ncpus++] = c;
        }
    }
    return 0;
}

static int main_signals_setup(mpiexec_job_t *job)
{
    static const int handled[] = {SIGCHLD, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
    struct sigaction old;
    sigset_t set;

    /* Writes to a rank that went away fail with EPIPE instead. */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
        sigaddset(&set, handled[i]);
    }
    /* Under nohup, SIGHUP stays ignored, for mpiexec and the ranks. */
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
        sigaddset(&set, SIGHUP);
    }
    if (sigprocmask(SIG_BLOCK, &set, NULL) != 0) {
        return -1;
    }
    /* An ignored signal is discarded before a signalfd can see it, and a
     * shell starts background jobs with SIGINT ignored; an ignored SIGCHLD
     * would even make the kernel reap the ranks for us. mpiexec handles
     * these itself, so it takes them back to their defaults (blocked, they
     * only ever reach the signalfd); the ranks inherit the defaults. */
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++) {
        signal(handled[i], SIG_DFL);
    }
    job->sig_fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    return job->sig_fd < 0 ? -1 : 0;
}

/* stdin goes to rank 0 unless reading it would stop us: a terminal we do
 * not own (mpiexec in the background) would answer with SIGTTIN. */
static int main_stdin_forwarded(void)
{
    if (fcntl(0, F_GETFD) < 0) {
        return 0;
    }
    return !isatty(0) || tcgetpgrp(0) == getpgrp();
}

static int main_job_setup(mpiexec_job_t *job, const mpiexec_opts_t *opts)
{
    int rank = 0;

    memset(job, 0, sizeof(*job));
    job->opts = opts;
    job->sig_fd = -1;
    job->null_fd = -1;
    job->stdin_pipe = -1;
    for (int a = 0; a < opts->napps; a++) {
        if (opts->apps[a].nprocs > (1 << 20) - job->size) {
            mpiexec_msg("too many ranks");
            return -1;
        }
        job->size += opts->apps[a].nprocs;
    }
    job->nnodes = 1;
    job->ranks = calloc((size_t)job->size, sizeof(*job->ranks));
    if (job->ranks == NULL) {
        mpiexec_msg("out of memory for %d ranks", job->size);
        return -1;
    }
    for (int a = 0; a < opts->napps; a++) {
        opts->apps[a].first_rank = rank;
        for (int i = 0; i < opts->apps[a].nprocs; i++, rank++) {
            mpiexec_rank_t *r = &job->ranks[rank];

            r->rank = rank;
            r->app = a;
            /* One node for now: every rank is local. */
            r->node = 0;
            r->local_rank = rank;
            r->local_size = job->size;
            r->pmi_fd = -1;
            r->out.fd = -1;
            r->out.out_fd = 1;
            r->out.rank = rank;
            r->err.fd = -1;
            r->err.out_fd = 2;
            r->err.rank = rank;
        }
    }
    if (main_nofile_raise(job) != 0) {
        return -1;
    }
    if (main_cpus_get(job) != 0 || mpiexec_pmi_setup(job) != 0) {
        mpiexec_msg("out of memory");
        return -1;
    }
    if (main_signals_setup(job) != 0) {
        mpiexec_msg("cannot set up signal handling: %s", strerror(errno));
        return -1;
    }
    job->null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job->null_fd < 0) {
        mpiexec_msg("cannot open /dev/null: %s", strerror(errno));
        return -1;
    }
    job->stdin_open = main_stdin_forwarded();
    const char *parent = getenv("HALO_SPAWN_PARENT");
    if (parent != NULL && *parent != '\0') {
        job->spawn_parent = (pid_t)atol(parent);
        unsetenv("HALO_SPAWN_PARENT");
    }
    job->start_time = mpiexec_now();
    if (opts->timeout > 0) {
        job->deadline = job->start_time + opts->timeout;
    }
    return 0;
}

/* Removes /dev/shm/halo-<kvsname>-*: whatever the ranks left, however the
 * job ended. */
static void main_shm_cleanup(const mpiexec_job_t *job)
{
    char name[512];
    const char *prefix;
    struct dirent *e;
    size_t len;
    DIR *d;

    halo_shm_name(name, sizeof(name), job->kvsname, "");
    prefix = name + 1; /* past the leading '/' of a shm_open name */
    len = strlen(prefix);
    d = opendir(HALO_SHM_DIR);
    if (d == NULL) {
        return;
    }
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, len) == 0 &&
            unlinkat(dirfd(d), e->d_name, 0) != 0 && errno != ENOENT) {
            mpiexec_msg("cannot remove %s/%s: %s", HALO_SHM_DIR, e->d_name, strerror(errno));
        }
    }
    closedir(d);
}

static void main_job_free(mpiexec_job_t *job)
{
    for (int i = 0; job->ranks != NULL && i < job->size; i++) {
        mpiexec_rank_t *r = &job->ranks[i];

        mpiexec_pmi_close(r);
        mpiexec_io_stream_close(job, &r->out);
        mpiexec_io_stream_close(job, &r->err);
    }
    mpiexec_io_stdin_close(job);
    mpiexec_kvs_free(&job->kvs);
    if (job->sig_fd >= 0) {
        close(job->sig_fd);
    }
    if (job->null_fd >= 0) {
        close(job->null_fd);
    }
    free(job->ranks);
    free(job->cpus);
}

int main(int argc, char **argv)
{
    mpiexec_opts_t opts;
    mpiexec_job_t job;
    int done, rc;

    main_std_fds_open();
    rc = mpiexec_args_parse(argc, argv, &opts, &done);
    if (rc != 0 || done) {
        goto out_opts;
    }
    rc = mpiexec_launch_resolve(&opts);
    if (rc != 0) {
        goto out_opts;
    }
    if (main_job_setup(&job, &opts) != 0) {
        rc = 1;
        goto out_job;
    }

    /* A launch failure has already ended the job: the loop then only
     * collects the ranks that did start. */
    (void)mpiexec_launch_job(&job);
    if (mpiexec_loop_run(&job) != 0) {
        for (int i = 0; i < job.size; i++) {
            if (job.ranks[i].alive) {
                kill(-job.ranks[i].pid, SIGKILL);
            }
        }
        job.exit_status = 1;
    }
    main_shm_cleanup(&job);
    rc = job.exit_status;

out_job:
    main_job_free(&job);
out_opts:
    mpiexec_args_free(&opts);
    return rc;
}
