/* The event loop: one poll() over every descriptor, timers from the poll
 * timeout, signals through a signalfd. Nothing spins: each descriptor is
 * polled only while there is something to do with it.
 *
 * How a job ends. Normally: every rank exits, then the output pipes are
 * drained to EOF. Otherwise the first of these events ends it, prints one
 * message and fixes the exit status:
 *   - a rank killed by a signal, or exiting non-zero, while other ranks
 *     still need the job (alive and not past PMI finalize);
 *   - a rank that called PMI init exiting 0 without finalize, or closing its
 *     PMI socket without finalize and not exiting within a second, while
 *     others still need the job (they would wait for it forever);
 *   - PMI abort; --timeout; SIGINT/SIGTERM/SIGHUP to mpiexec.
 * Ending sends SIGTERM (or the signal mpiexec got) to each surviving rank's
 * process group and SIGKILL a second later. A rank that fails after its own
 * finalize cannot block anyone, so it only counts for the exit status. */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Survivors get this long after the first signal before SIGKILL. */
#define LOOP_KILL_DELAY 1.0
#define LOOP_PARENT_CHECK 0.2   /* seconds between looks at a spawned job's parent */
/* A rank whose PMI socket closed without finalize gets this long to exit. */
#define LOOP_LOST_DELAY 1.0
/* After the last rank exits, an output pipe still held open (by something
 * the rank started) is given up once it has been quiet this long. */
#define LOOP_DRAIN_IDLE 1.0

enum {
    LOOP_FD_SIGNAL,
    LOOP_FD_PMI,
    LOOP_FD_OUT,
    LOOP_FD_ERR,
    LOOP_FD_STDIN,
    LOOP_FD_STDIN_PIPE,
};

typedef struct loop_fd {
    int kind;
    int rank;
} loop_fd_t;

static void loop_signal_ranks(mpiexec_job_t *job, int sig)
{
    for (int i = 0; i < job->size; i++) {
        mpiexec_rank_t *r = &job->ranks[i];

        /* The group first (the rank and what it started); the pid alone if
         * the group is gone (the rank left it). */
        if (r->alive && kill(-r->pid, sig) != 0) {
            (void)kill(r->pid, sig);
        }
    }
}

void mpiexec_loop_note_status(mpiexec_job_t *job, int status)
{
    if (!job->status_final && job->exit_status == 0 && status != 0) {
        job->exit_status = status;
    }
}

void mpiexec_loop_end_job(mpiexec_job_t *job, int status, int final, int sig)
{
    if (job->ending) {
        return;
    }
    job->ending = 1;
    if (final) {
        job->exit_status = status;
        job->status_final = 1;
    } else {
        mpiexec_loop_note_status(job, status);
    }
    mpiexec_io_stdin_close(job);
    loop_signal_ranks(job, sig);
    job->kill_deadline = mpiexec_now() + LOOP_KILL_DELAY;
}

/* 1 when a rank other than r is alive and not past finalize: one that
 * could be waiting for r. */
static int loop_others_need_job(const mpiexec_job_t *job, const mpiexec_rank_t *r)
{
    for (int i = 0; i < job->size; i++) {
        const mpiexec_rank_t *o = &job->ranks[i];

        if (o != r && o->alive && o->pmi_state != MPIEXEC_PMI_FINALIZED) {
            return 1;
        }
    }
    return 0;
}

static void loop_rank_exited(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    int others = loop_others_need_job(job, r);
    int st = r->wstatus;

    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);

        if (!job->ending) {
            mpiexec_msg("rank %d (pid %ld) killed by signal %d (%s)%s%s", r->rank, (long)r->pid,
                        sig, strsignal(sig), WCOREDUMP(st) ? ", core dumped" : "",
                        others ? "; ending the job" : "");
        }
        if (others) {
            mpiexec_loop_end_job(job, 128 + sig, 0, SIGTERM);
        } else {
            mpiexec_loop_note_status(job, 128 + sig);
        }
        return;
    }
    if (!WIFEXITED(st)) {
        return;
    }
    if (WEXITSTATUS(st) != 0) {
        if (!job->ending && others && r->pmi_state != MPIEXEC_PMI_FINALIZED) {
            mpiexec_msg("rank %d (pid %ld) exited with code %d; ending the job", r->rank,
                        (long)r->pid, WEXITSTATUS(st));
            mpiexec_loop_end_job(job, WEXITSTATUS(st), 0, SIGTERM);
        } else {
            mpiexec_loop_note_status(job, WEXITSTATUS(st));
        }
        return;
    }
    if (!job->ending && others && r->pmi_state == MPIEXEC_PMI_INIT) {
        mpiexec_msg("rank %d (pid %ld) exited without calling finalize (MPI_Finalize); ending "
                    "the job", r->rank, (long)r->pid);
        mpiexec_loop_end_job(job, 1, 0, SIGTERM);
    }
}

static mpiexec_rank_t *loop_rank_of_pid(mpiexec_job_t *job, pid_t pid)
{
    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].pid == pid && job->ranks[i].alive) {
            return &job->ranks[i];
        }
    }
    return NULL;
}

static void loop_reap(mpiexec_job_t *job, int *reaped)
{
    int nreaped = 0, st;
    pid_t pid;

    /* Collect every exit first: ranks that exit together must not be judged
     * as "others still running" for each other. */
    while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
        mpiexec_rank_t *r = loop_rank_of_pid(job, pid);

        if (r == NULL) {
            continue;
        }
        r->alive = 0;
        r->wstatus = st;
        job->nalive--;
        reaped[nreaped++] = r->rank;
        if (job->nalive == 0) {
            job->all_exited_time = mpiexec_now();
        }
    }
    /* What a rank wrote to its PMI socket before dying is already there: an
     * abort must be read before its exit status is judged. */
    for (int i = 0; i < nreaped; i++) {
        mpiexec_rank_t *r = &job->ranks[reaped[i]];

        mpiexec_pmi_read(job, r);
        mpiexec_pmi_close(r);
        if (r->rank == 0) {
            mpiexec_io_stdin_close(job);
        }
    }
    for (int i = 0; i < nreaped; i++) {
        loop_rank_exited(job, &job->ranks[reaped[i]]);
    }
}

static void loop_signal_read(mpiexec_job_t *job, int *reaped)
{
    struct signalfd_siginfo si;
    int child_exited = 0;

    while (read(job->sig_fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        int sig = (int)si.ssi_signo;

        switch (sig) {
        case SIGCHLD:
            /* Several exits may come as one SIGCHLD: reap reaps them all. */
            child_exited = 1;
            break;
        case SIGUSR1:
        case SIGUSR2:
            loop_signal_ranks(job, sig);
            break;
        default:
            /* SIGINT, SIGTERM, SIGHUP: forward and end; a second one while
             * ending means "now". */
            if (!job->ending) {
                mpiexec_msg("received signal %d (%s); ending the job", sig, strsignal(sig));
                mpiexec_loop_end_job(job, 128 + sig, 1, sig);
            } else if (!job->killed) {
                loop_signal_ranks(job, SIGKILL);
                job->killed = 1;
            }
            break;
        }
    }
    if (child_exited) {
        loop_reap(job, reaped);
    }
}

static double loop_min_deadline(double a, double b)
{
    return a == 0 || (b != 0 && b < a) ? b : a;
}

/* Runs the timers due at now; returns the next deadline (0: none). */
static double loop_timers(mpiexec_job_t *job, double now)
{
    double next = 0;

    /* The process that spawned this job is gone (this one was handed to
     * another parent): end the job rather than leave it running alone. */
    if (job->spawn_parent > 0 && !job->ending) {
        if (getppid() != job->spawn_parent) {
            mpiexec_msg("the process that spawned this job (pid %ld) has ended; ending the job",
                        (long)job->spawn_parent);
            mpiexec_loop_end_job(job, 143, 1, SIGTERM);
        } else {
            next = now + LOOP_PARENT_CHECK;
        }
    }
    if (job->deadline > 0 && !job->ending) {
        if (now >= job->deadline) {
            mpiexec_msg("job timed out after %s seconds; ending the job",
                        job->opts->timeout_text);
            mpiexec_loop_end_job(job, 124, 1, SIGTERM);
        } else {
            next = job->deadline;
        }
    }
    for (int i = 0; i < job->size; i++) {
        mpiexec_rank_t *r = &job->ranks[i];

        if (r->alive && r->pmi_lost && !job->ending) {
            if (now >= r->pmi_lost_time + LOOP_LOST_DELAY) {
                if (loop_others_need_job(job, r)) {
                    mpiexec_msg("rank %d (pid %ld) closed its PMI connection without "
                                "finalize and is still running; ending the job",
                                r->rank, (long)r->pid);
                    mpiexec_loop_end_job(job, 1, 0, SIGTERM);
                }
                r->pmi_lost = 0;
            } else {
                next = loop_min_deadline(next, r->pmi_lost_time + LOOP_LOST_DELAY);
            }
        }
        for (int k = 0; k < 2; k++) {
            mpiexec_stream_t *s = k == 0 ? &r->out : &r->err;

            mpiexec_io_stream_flush_idle(job, s, now);
            next = loop_min_deadline(next, mpiexec_io_stream_deadline(job, s));
            if (s->fd >= 0 && job->nalive == 0) {
                double quiet = (s->last_data > job->all_exited_time ? s->last_data
                                                                    : job->all_exited_time) +
                               LOOP_DRAIN_IDLE;

                if (now >= quiet) {
                    mpiexec_io_stream_close(job, s);
                } else {
                    next = loop_min_deadline(next, quiet);
                }
            }
        }
    }
    if (job->ending && !job->killed && job->nalive > 0) {
        if (now >= job->kill_deadline) {
            loop_signal_ranks(job, SIGKILL);
            job->killed = 1;
        } else {
            next = loop_min_deadline(next, job->kill_deadline);
        }
    }
    return next;
}

static int loop_streams_open(const mpiexec_job_t *job)
{
    for (int i = 0; i < job->size; i++) {
        if (job->ranks[i].out.fd >= 0 || job->ranks[i].err.fd >= 0) {
            return 1;
        }
    }
    return 0;
}

int mpiexec_loop_run(mpiexec_job_t *job)
{
    /* Per rank: PMI, stdout, stderr; plus signalfd, stdin, stdin pipe. */
    size_t maxfds = (size_t)job->size * 3 + 3;
    struct pollfd *pfds = calloc(maxfds, sizeof(*pfds));
    loop_fd_t *what = calloc(maxfds, sizeof(*what));
    int *reaped = calloc((size_t)job->size, sizeof(*reaped));
    int rc = -1;

    if (pfds == NULL || what == NULL || reaped == NULL) {
        mpiexec_msg("out of memory for the event loop");
        goto out;
    }

    for (;;) {
        double now = mpiexec_now(), next = loop_timers(job, now);
        int nfds = 0, timeout_ms = -1, n;

        if (job->nalive == 0 && !loop_streams_open(job)) {
            break;
        }

#define LOOP_ADD(fd_, events_, kind_, rank_)                                                   \
    do {                                                                                       \
        pfds[nfds].fd = (fd_);                                                                 \
        pfds[nfds].events = (short)(events_);                                                  \
        pfds[nfds].revents = 0;                                                                \
        what[nfds].kind = (kind_);                                                             \
        what[nfds].rank = (rank_);                                                             \
        nfds++;                                                                                \
    } while (0)

        LOOP_ADD(job->sig_fd, POLLIN, LOOP_FD_SIGNAL, -1);
        for (int i = 0; i < job->size; i++) {
            mpiexec_rank_t *r = &job->ranks[i];

            if (r->pmi_fd >= 0) {
                LOOP_ADD(r->pmi_fd, POLLIN | (r->pmi_out.len > 0 ? POLLOUT : 0), LOOP_FD_PMI, i);
            }
            if (r->out.fd >= 0) {
                LOOP_ADD(r->out.fd, POLLIN, LOOP_FD_OUT, i);
            }
            if (r->err.fd >= 0) {
                LOOP_ADD(r->err.fd, POLLIN, LOOP_FD_ERR, i);
            }
        }
        if (job->stdin_open && job->stdin_pipe >= 0 && job->stdin_buf.len == 0) {
            LOOP_ADD(0, POLLIN, LOOP_FD_STDIN, -1);
        }
        if (job->stdin_pipe >= 0 && job->stdin_buf.len > 0) {
            LOOP_ADD(job->stdin_pipe, POLLOUT, LOOP_FD_STDIN_PIPE, -1);
        }
#undef LOOP_ADD

        if (next > 0) {
            double ms = (next - now) * 1000.0 + 1.0;

            timeout_ms = ms < 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
        }
        n = poll(pfds, (nfds_t)nfds, timeout_ms);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            mpiexec_msg("poll failed: %s", strerror(errno));
            goto out;
        }

        for (int k = 0; k < nfds && n > 0; k++) {
            mpiexec_rank_t *r = what[k].rank >= 0 ? &job->ranks[what[k].rank] : NULL;
            short ev = pfds[k].revents;

            if (ev == 0) {
                continue;
            }
            /* An earlier entry of this round (a reap, an error) may have
             * closed the descriptor: act only if it is still the same one. */
            switch (what[k].kind) {
            case LOOP_FD_SIGNAL:
                loop_signal_read(job, reaped);
                break;
            case LOOP_FD_PMI:
                if (r->pmi_fd == pfds[k].fd && (ev & POLLOUT)) {
                    mpiexec_pmi_write(job, r);
                }
                if (r->pmi_fd == pfds[k].fd && (ev & (POLLIN | POLLHUP | POLLERR))) {
                    mpiexec_pmi_read(job, r);
                }
                break;
            case LOOP_FD_OUT:
                if (r->out.fd == pfds[k].fd) {
                    mpiexec_io_stream_read(job, &r->out);
                }
                break;
            case LOOP_FD_ERR:
                if (r->err.fd == pfds[k].fd) {
                    mpiexec_io_stream_read(job, &r->err);
                }
                break;
            case LOOP_FD_STDIN:
                if (ev & POLLNVAL) {
                    job->stdin_open = 0;
                    mpiexec_io_stdin_write(job);
                } else if (job->stdin_open && job->stdin_pipe >= 0) {
                    mpiexec_io_stdin_read(job);
                }
                break;
            case LOOP_FD_STDIN_PIPE:
                if (job->stdin_pipe == pfds[k].fd) {
                    mpiexec_io_stdin_write(job);
                }
                break;
            default:
                break;
            }
        }
    }
    rc = 0;

out:
    free(pfds);
    free(what);
    free(reaped);
    return rc;
}
