/* Output forwarding and stdin.
 *
 * Each rank's stdout and stderr arrive on their own pipe and leave on
 * mpiexec's fd 1 and 2 in whole lines, one write() per batch, so lines of
 * two ranks never mix. With -l each line gets "[rank] ". Without -l a line
 * still waits for its newline, but a partial line (a prompt) is let out
 * once its stream has been quiet for a moment, or at once in a one-rank job.
 *
 * stdin goes to rank 0 only, through a pipe; mpiexec reads its own fd 0
 * only while the last chunk has been taken, so a rank that never reads
 * stdin costs one buffer, not the whole input. */
#include "mpiexec.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A line longer than this is forwarded in pieces. */
#define IO_STREAM_BUF (64 * 1024)
/* How long a partial line may wait for its newline (unlabeled output). */
#define IO_PARTIAL_DELAY 0.1
#define IO_STDIN_CHUNK (64 * 1024)

int mpiexec_buf_append(mpiexec_buf_t *buf, const char *data, size_t len)
{
    if (buf->len + len > buf->cap) {
        size_t cap = buf->cap ? buf->cap : 256;
        char *p;

        while (cap < buf->len + len) {
            cap *= 2;
        }
        p = realloc(buf->data, cap);
        if (p == NULL) {
            return -1;
        }
        buf->data = p;
        buf->cap = cap;
    }
    memcpy(buf->data + buf->len, data, len);
    buf->len += len;
    return 0;
}

void mpiexec_buf_consume(mpiexec_buf_t *buf, size_t len)
{
    memmove(buf->data, buf->data + len, buf->len - len);
    buf->len -= len;
}

void mpiexec_buf_free(mpiexec_buf_t *buf)
{
    free(buf->data);
    memset(buf, 0, sizeof(*buf));
}

/* Writes all of data to our fd 1 or 2, waiting if that descriptor was left
 * nonblocking by whoever gave it to us. Once a write fails for good (the
 * reader went away) the output of that descriptor is dropped, and the job
 * goes on: SIGPIPE is ignored in mpiexec. */
static void io_write_all(mpiexec_job_t *job, int fd, const char *data, size_t len)
{
    while (len > 0 && !job->out_broken[fd]) {
        ssize_t n = write(fd, data, len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno == EAGAIN || errno == EWOULDBLOCK) {
                struct pollfd pfd = {.fd = fd, .events = POLLOUT};

                (void)poll(&pfd, 1, -1);
                continue;
            }
            job->out_broken[fd] = 1;
            return;
        }
        data += n;
        len -= (size_t)n;
    }
}

/* Forwards the first len bytes of the stream's buffer. A labeled partial
 * line gets a newline, so that the next label starts a line. */
static void io_stream_emit(mpiexec_job_t *job, mpiexec_stream_t *s, size_t len)
{
    mpiexec_buf_t out = {0};
    size_t pos = 0;

    if (len == 0) {
        return;
    }
    if (!job->opts->label) {
        io_write_all(job, s->out_fd, s->buf, len);
    } else {
        char label[32];
        int label_len = snprintf(label, sizeof(label), "[%d] ", s->rank);
        int failed = 0;

        while (pos < len && !failed) {
            char *nl = memchr(s->buf + pos, '\n', len - pos);
            size_t end = nl != NULL ? (size_t)(nl - s->buf) + 1 : len;

            failed |= mpiexec_buf_append(&out, label, (size_t)label_len);
            failed |= mpiexec_buf_append(&out, s->buf + pos, end - pos);
            if (nl == NULL) {
                failed |= mpiexec_buf_append(&out, "\n", 1);
            }
            pos = end;
        }
        if (!failed) {
            io_write_all(job, s->out_fd, out.data, out.len);
        }
        mpiexec_buf_free(&out);
    }
    memmove(s->buf, s->buf + len, s->len - len);
    s->len -= len;
}

/* Forwards the complete lines, keeps the rest. */
static void io_stream_emit_lines(mpiexec_job_t *job, mpiexec_stream_t *s)
{
    size_t end = s->len;

    while (end > 0 && s->buf[end - 1] != '\n') {
        end--;
    }
    io_stream_emit(job, s, end);
}

void mpiexec_io_stream_close(mpiexec_job_t *job, mpiexec_stream_t *s)
{
    if (s->fd < 0) {
        return;
    }
    io_stream_emit(job, s, s->len);
    close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = 0;
}

void mpiexec_io_stream_read(mpiexec_job_t *job, mpiexec_stream_t *s)
{
    double now = mpiexec_now();
    ssize_t n;

    if (s->buf == NULL) {
        s->buf = malloc(IO_STREAM_BUF);
        if (s->buf == NULL) {
            mpiexec_msg("out of memory for the output of rank %d; dropping it", s->rank);
            close(s->fd);
            s->fd = -1;
            return;
        }
    }
    do {
        n = read(s->fd, s->buf + s->len, IO_STREAM_BUF - s->len);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
    }
    if (n <= 0) {
        mpiexec_io_stream_close(job, s);
        return;
    }
    s->len += (size_t)n;
    s->last_data = now;

    io_stream_emit_lines(job, s);
    if (s->len == IO_STREAM_BUF || (s->len > 0 && !job->opts->label && job->size == 1)) {
        io_stream_emit(job, s, s->len);
    }
}

double mpiexec_io_stream_deadline(const mpiexec_job_t *job, const mpiexec_stream_t *s)
{
    if (s->fd < 0 || s->len == 0 || job->opts->label) {
        return 0;
    }
    return s->last_data + IO_PARTIAL_DELAY;
}

void mpiexec_io_stream_flush_idle(mpiexec_job_t *job, mpiexec_stream_t *s, double now)
{
    double deadline = mpiexec_io_stream_deadline(job, s);

    if (deadline > 0 && now >= deadline) {
        io_stream_emit(job, s, s->len);
    }
}

void mpiexec_io_stdin_close(mpiexec_job_t *job)
{
    job->stdin_open = 0;
    if (job->stdin_pipe >= 0) {
        close(job->stdin_pipe);
        job->stdin_pipe = -1;
    }
    mpiexec_buf_free(&job->stdin_buf);
}

void mpiexec_io_stdin_read(mpiexec_job_t *job)
{
    char chunk[IO_STDIN_CHUNK];
    ssize_t n;

    do {
        n = read(0, chunk, sizeof(chunk));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
    }
    if (n <= 0) {
        /* End of input: rank 0 sees EOF once it has the rest. */
        job->stdin_open = 0;
        if (job->stdin_buf.len == 0) {
            mpiexec_io_stdin_close(job);
        }
        return;
    }
    if (mpiexec_buf_append(&job->stdin_buf, chunk, (size_t)n) != 0) {
        mpiexec_msg("out of memory for stdin; closing rank 0's stdin");
        mpiexec_io_stdin_close(job);
        return;
    }
    mpiexec_io_stdin_write(job);
}

void mpiexec_io_stdin_write(mpiexec_job_t *job)
{
    while (job->stdin_pipe >= 0 && job->stdin_buf.len > 0) {
        ssize_t n = write(job->stdin_pipe, job->stdin_buf.data, job->stdin_buf.len);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                /* Rank 0 closed its stdin: the rest of ours is not wanted. */
                mpiexec_io_stdin_close(job);
            }
            return;
        }
        mpiexec_buf_consume(&job->stdin_buf, (size_t)n);
    }
    if (!job->stdin_open && job->stdin_buf.len == 0) {
        mpiexec_io_stdin_close(job);
    }
}
