/* The PMI-1 server: one nonblocking connection per rank, answering in
 * Hydra's reply formats (checked against mpiexec.hydra 4.0), so that both
 * Halo's client and MPICH's simple PMI client work with it.
 *
 * Replies are queued per rank and written when the socket takes them: a
 * rank that stops reading its socket must not stall the loop that serves
 * everyone else. */
#include "mpiexec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

/* A job may store this much in its KVS (keys and values); a rank that
 * goes beyond gets rc=-1 instead of running mpiexec out of memory. */
#define PMI_KVS_BYTES_MAX (512u << 20)

int mpiexec_pmi_setup(mpiexec_job_t *job)
{
    char mapping[HALO_PMI_WIRE_VALLEN_MAX + 1];
    unsigned int rnd = 0;
    int *node_of_rank;

    /* Job-unique: the pid tells jobs of one node apart while they run, the
     * random part across time and nodes (pids are reused). */
    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != sizeof(rnd)) {
        rnd = (unsigned int)(mpiexec_now() * 1e6) ^ (unsigned int)getpid() << 16;
    }
    /* HALO_KVSNAME names the job instead (tests use it to find exactly
     * their own shared-memory segments). */
    const char *given = getenv("HALO_KVSNAME");
    if (given && *given)
        snprintf(job->kvsname, sizeof(job->kvsname), "%s", given);
    else
        snprintf(job->kvsname, sizeof(job->kvsname), "kvs_%ld_%08x", (long)getpid(), rnd);

    node_of_rank = malloc(sizeof(int) * (size_t)job->size);
    if (node_of_rank == NULL) {
        return -1;
    }
    for (int i = 0; i < job->size; i++) {
        node_of_rank[i] = job->ranks[i].node;
    }
    /* A mapping too irregular to fit a value is left out; clients then
     * learn the node layout some other way, as under a launcher without it. */
    if (halo_pmi_wire_mapping_format(mapping, sizeof(mapping), node_of_rank, job->size) > 0 &&
        mpiexec_kvs_put(&job->kvs, "PMI_process_mapping", mapping) != 0) {
        free(node_of_rank);
        return -1;
    }
    free(node_of_rank);
    return 0;
}

void mpiexec_pmi_close(mpiexec_rank_t *r)
{
    if (r->pmi_fd >= 0) {
        close(r->pmi_fd);
        r->pmi_fd = -1;
    }
    mpiexec_buf_free(&r->pmi_in);
    mpiexec_buf_free(&r->pmi_out);
}

void mpiexec_pmi_write(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    (void)job;
    while (r->pmi_fd >= 0 && r->pmi_out.len > 0) {
        ssize_t n = send(r->pmi_fd, r->pmi_out.data, r->pmi_out.len, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                /* The rank is gone; its exit (or EOF) is reported elsewhere. */
                r->pmi_out.len = 0;
            }
            return;
        }
        mpiexec_buf_consume(&r->pmi_out, (size_t)n);
    }
}

static void pmi_send(mpiexec_job_t *job, mpiexec_rank_t *r, halo_pmi_wire_line_t *line)
{
    int len = halo_pmi_wire_line_end(line);

    if (r->pmi_fd < 0) {
        return;
    }
    if (len < 0 || mpiexec_buf_append(&r->pmi_out, line->buf, (size_t)len) != 0) {
        mpiexec_msg("cannot queue a PMI reply to rank %d; ending the job", r->rank);
        mpiexec_loop_end_job(job, 1, 0, SIGTERM);
        return;
    }
    mpiexec_pmi_write(job, r);
}

static void pmi_protocol_error(mpiexec_job_t *job, mpiexec_rank_t *r, const char *what,
                               const char *line, size_t len)
{
    /* PMI-2 frames start with a 6-character length: say so, it is the
     * likely cause of a line we cannot read. */
    int pmi2 = len > 0 && (line[0] == ' ' || (line[0] >= '0' && line[0] <= '9'));

    if (!job->ending) {
        mpiexec_msg("rank %d (pid %ld) %s: '%.*s'%s; ending the job", r->rank, (long)r->pid, what,
                    (int)(len > 100 ? 100 : len), line,
                    pmi2 ? " (PMI-2 is not supported; use PMI-1)" : "");
    }
    mpiexec_loop_end_job(job, 1, 0, SIGTERM);
    mpiexec_pmi_close(r);
}

static void pmi_reply_rc(mpiexec_job_t *job, mpiexec_rank_t *r, const char *cmd, int rc,
                         const char *msg)
{
    halo_pmi_wire_line_t line;

    halo_pmi_wire_line_begin(&line, cmd);
    halo_pmi_wire_line_add_int(&line, "rc", rc);
    halo_pmi_wire_line_add(&line, "msg", msg);
    pmi_send(job, r, &line);
}

static int pmi_kvsname_is_ours(const mpiexec_job_t *job, const halo_pmi_wire_msg_t *msg)
{
    const char *kvsname = halo_pmi_wire_msg_get(msg, "kvsname");

    return kvsname == NULL || strcmp(kvsname, job->kvsname) == 0;
}

static void pmi_handle_put(mpiexec_job_t *job, mpiexec_rank_t *r, const halo_pmi_wire_msg_t *msg)
{
    const char *key = halo_pmi_wire_msg_get(msg, "key");
    const char *value = halo_pmi_wire_msg_get(msg, "value");

    if (key == NULL || value == NULL || key[0] == '\0') {
        pmi_reply_rc(job, r, "put_result", -1, "missing_key_or_value");
    } else if (!pmi_kvsname_is_ours(job, msg)) {
        pmi_reply_rc(job, r, "put_result", -1, "unknown_kvsname");
    } else if (strlen(key) >= HALO_PMI_WIRE_KEYLEN_MAX) {
        pmi_reply_rc(job, r, "put_result", -1, "key_too_long");
    } else if (strlen(value) > HALO_PMI_WIRE_VALLEN_MAX) {
        pmi_reply_rc(job, r, "put_result", -1, "value_too_long");
    } else if (job->kvs.bytes > PMI_KVS_BYTES_MAX) {
        pmi_reply_rc(job, r, "put_result", -1, "kvs_full");
    } else if (mpiexec_kvs_put(&job->kvs, key, value) != 0) {
        pmi_reply_rc(job, r, "put_result", -1, "out_of_memory");
    } else {
        pmi_reply_rc(job, r, "put_result", 0, "success");
    }
}

static void pmi_handle_get(mpiexec_job_t *job, mpiexec_rank_t *r, const halo_pmi_wire_msg_t *msg)
{
    const char *key = halo_pmi_wire_msg_get(msg, "key");
    const char *value = NULL;
    halo_pmi_wire_line_t line;

    if (key != NULL && pmi_kvsname_is_ours(job, msg)) {
        value = mpiexec_kvs_get(&job->kvs, key);
    }
    /* Like Hydra: a key not (yet) put is an immediate rc=-1, not a wait. */
    halo_pmi_wire_line_begin(&line, "get_result");
    halo_pmi_wire_line_add_int(&line, "rc", value != NULL ? 0 : -1);
    halo_pmi_wire_line_add(&line, "msg", value != NULL ? "success" : "key_not_found");
    halo_pmi_wire_line_add(&line, "value", value != NULL ? value : "unknown");
    pmi_send(job, r, &line);
}

static void pmi_handle_barrier(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    halo_pmi_wire_line_t line;

    if (r->in_barrier) {
        pmi_protocol_error(job, r, "entered the PMI barrier twice", "cmd=barrier_in", 14);
        return;
    }
    r->in_barrier = 1;
    if (++job->barrier_count < job->size) {
        return;
    }
    job->barrier_count = 0;
    for (int i = 0; i < job->size; i++) {
        job->ranks[i].in_barrier = 0;
        halo_pmi_wire_line_begin(&line, "barrier_out");
        pmi_send(job, &job->ranks[i], &line);
    }
}

static void pmi_handle_abort(mpiexec_job_t *job, mpiexec_rank_t *r, const halo_pmi_wire_msg_t *msg)
{
    const char *enc = halo_pmi_wire_msg_get(msg, "error_msg");
    char text[HALO_PMI_WIRE_LINE_MAX];
    int code = 1, status;

    if (halo_pmi_wire_msg_get_int(msg, "exitcode", &code) != 0) {
        code = 1;
    }
    /* Halo's client escapes the message; another client's plain text that
     * does not decode is shown as it came. */
    if (enc == NULL || halo_pmi_wire_decode(text, sizeof(text), enc) < 0) {
        snprintf(text, sizeof(text), "%s", enc != NULL ? enc : "");
    }
    /* An exit status keeps 8 bits: a code that is a multiple of 256 must
     * still read as a failure. */
    status = code & 0xff;
    if (status == 0 && code != 0) {
        status = 1;
    }
    if (!job->ending) {
        mpiexec_msg("rank %d called MPI_Abort with code %d%s%s; ending the job", r->rank, code,
                    text[0] != '\0' ? ": " : "", text);
    }
    mpiexec_loop_end_job(job, status, 1, SIGTERM);
}

static void pmi_handle(mpiexec_job_t *job, mpiexec_rank_t *r, const halo_pmi_wire_msg_t *msg)
{
    halo_pmi_wire_line_t line;
    const char *cmd = msg->pairs[0].value;
    int version = 0, subversion = 0;

    if (strcmp(cmd, "init") == 0) {
        int ok = halo_pmi_wire_msg_get_int(msg, "pmi_version", &version) == 0 && version == 1;

        (void)halo_pmi_wire_msg_get_int(msg, "pmi_subversion", &subversion);
        if (ok && r->pmi_state == MPIEXEC_PMI_NONE) {
            r->pmi_state = MPIEXEC_PMI_INIT;
        }
        halo_pmi_wire_line_begin(&line, "response_to_init");
        halo_pmi_wire_line_add_int(&line, "pmi_version", 1);
        halo_pmi_wire_line_add_int(&line, "pmi_subversion", 1);
        halo_pmi_wire_line_add_int(&line, "rc", ok ? 0 : -1);
    } else if (strcmp(cmd, "get_maxes") == 0) {
        halo_pmi_wire_line_begin(&line, "maxes");
        halo_pmi_wire_line_add_int(&line, "kvsname_max", HALO_PMI_WIRE_KVSNAME_MAX);
        halo_pmi_wire_line_add_int(&line, "keylen_max", HALO_PMI_WIRE_KEYLEN_MAX);
        halo_pmi_wire_line_add_int(&line, "vallen_max", HALO_PMI_WIRE_VALLEN_MAX);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        halo_pmi_wire_line_begin(&line, "appnum");
        halo_pmi_wire_line_add_int(&line, "appnum", r->app);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        halo_pmi_wire_line_begin(&line, "my_kvsname");
        halo_pmi_wire_line_add(&line, "kvsname", job->kvsname);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        halo_pmi_wire_line_begin(&line, "universe_size");
        halo_pmi_wire_line_add_int(&line, "size",
                                   job->opts->usize > 0 ? job->opts->usize : -1);
    } else if (strcmp(cmd, "put") == 0) {
        pmi_handle_put(job, r, msg);
        return;
    } else if (strcmp(cmd, "get") == 0) {
        pmi_handle_get(job, r, msg);
        return;
    } else if (strcmp(cmd, "barrier_in") == 0) {
        pmi_handle_barrier(job, r);
        return;
    } else if (strcmp(cmd, "finalize") == 0) {
        r->pmi_state = MPIEXEC_PMI_FINALIZED;
        halo_pmi_wire_line_begin(&line, "finalize_ack");
    } else if (strcmp(cmd, "abort") == 0) {
        pmi_handle_abort(job, r, msg);
        return;
    } else {
        /* Spawn, publish/lookup and the like: a clear refusal the client
         * can report, rather than a hang waiting for a reply. */
        char reply[128];

        snprintf(reply, sizeof(reply), "%.100s_result", cmd);
        pmi_reply_rc(job, r, reply, -1, "unsupported_command");
        return;
    }
    pmi_send(job, r, &line);
}

static void pmi_eof(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    /* Closing without finalize means the rank is dying (or has died): the
     * loop waits briefly for its exit status to name the cause. */
    if (r->pmi_state == MPIEXEC_PMI_INIT && !r->pmi_lost) {
        r->pmi_lost = 1;
        r->pmi_lost_time = mpiexec_now();
    }
    /* A barrier it had entered no longer counts on it. */
    if (r->in_barrier) {
        r->in_barrier = 0;
        job->barrier_count--;
    }
    mpiexec_pmi_close(r);
}

void mpiexec_pmi_read(mpiexec_job_t *job, mpiexec_rank_t *r)
{
    char chunk[HALO_PMI_WIRE_LINE_MAX];

    while (r->pmi_fd >= 0) {
        ssize_t n = read(r->pmi_fd, chunk, sizeof(chunk));
        size_t start = 0;

        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n <= 0) {
            pmi_eof(job, r);
            return;
        }
        if (mpiexec_buf_append(&r->pmi_in, chunk, (size_t)n) != 0) {
            pmi_protocol_error(job, r, "sent PMI data mpiexec has no memory for", "", 0);
            return;
        }
        /* Every complete line is one request. */
        for (;;) {
            char *nl = memchr(r->pmi_in.data + start, '\n', r->pmi_in.len - start);
            halo_pmi_wire_msg_t msg;
            size_t len;

            if (nl == NULL) {
                break;
            }
            len = (size_t)(nl - (r->pmi_in.data + start)) + 1;
            if (halo_pmi_wire_parse(r->pmi_in.data + start, len, &msg) != 0) {
                pmi_protocol_error(job, r, "sent a malformed PMI line", r->pmi_in.data + start,
                                   len - 1);
                return;
            }
            start += len;
            pmi_handle(job, r, &msg);
            if (r->pmi_fd < 0) {
                return;
            }
        }
        mpiexec_buf_consume(&r->pmi_in, start);
        if (r->pmi_in.len >= HALO_PMI_WIRE_LINE_MAX) {
            pmi_protocol_error(job, r, "sent a PMI line that is too long", r->pmi_in.data,
                               r->pmi_in.len);
            return;
        }
    }
}
