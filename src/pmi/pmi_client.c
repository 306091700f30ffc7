/* The PMI-1 client: talks to the launcher over the inherited PMI_FD socket,
 * or serves a singleton from an in-process table.
 *
 * Every exchange is one request line and (except abort) one reply line, so
 * the client is a plain blocking request/response loop. Replies are read
 * into a buffer that may hold the start of the next line; the protocol never
 * sends unsolicited lines, but keeping the remainder costs nothing. */
#include "pmi.h"
#include "pmi_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* A key/value of the singleton's table (values as given, not escaped). */
typedef struct pmi_client_kv {
    struct pmi_client_kv *next;
    char *key;
    char *value;
} pmi_client_kv_t;

typedef struct pmi_client {
    int initialized;
    int singleton;
    int fd;
    int rank, size, appnum, universe_size;
    int keylen_max, vallen_max;
    int server_is_halo;      /* our mpiexec prints abort messages itself */
    size_t chunk_max;        /* most encoded bytes sent as one value */
    char kvsname[HALO_PMI_WIRE_KVSNAME_MAX];
    size_t rlen;             /* bytes in rbuf not yet consumed */
    char rbuf[HALO_PMI_WIRE_LINE_MAX];
    pmi_client_kv_t *table;  /* singleton only */
} pmi_client_t;

/* All client state: reset by init, released by finalize. */
static pmi_client_t pmi_client = {.fd = -1};

/* The descriptor finalize closed: PMI_FD still names it in the environment,
 * and the number may since belong to some other socket, so a later init
 * must not talk on it. The one piece of state that outlives finalize. */
static int pmi_client_closed_fd = -1;

static void pmi_client_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void pmi_client_error(const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (pmi_client.initialized || pmi_client.size > 0) {
        fprintf(stderr, "halo: rank %d: PMI: %s\n", pmi_client.rank, msg);
    } else {
        fprintf(stderr, "halo: PMI: %s\n", msg);
    }
}

static int pmi_client_env_int(const char *name, int *value_p)
{
    const char *s = getenv(name);
    char *endp;
    long v;

    if (s == NULL || *s == '\0') {
        return -1;
    }
    errno = 0;
    v = strtol(s, &endp, 10);
    if (errno != 0 || *endp != '\0' || v < 0 || v > INT_MAX) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

static int pmi_client_send(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = send(pmi_client.fd, buf, len, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            pmi_client_error("cannot write to the launcher (fd %d): %s", pmi_client.fd,
                             strerror(errno));
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads the next reply line and parses it into msg_p. */
static int pmi_client_recv(halo_pmi_wire_msg_t *msg_p)
{
    for (;;) {
        char *nl = memchr(pmi_client.rbuf, '\n', pmi_client.rlen);
        ssize_t n;

        if (nl != NULL) {
            size_t linelen = (size_t)(nl - pmi_client.rbuf) + 1;
            int rc = halo_pmi_wire_parse(pmi_client.rbuf, linelen, msg_p);

            if (rc != 0) {
                pmi_client_error("malformed reply from the launcher: '%.*s'",
                                 (int)(linelen - 1 > 200 ? 200 : linelen - 1), pmi_client.rbuf);
            }
            pmi_client.rlen -= linelen;
            memmove(pmi_client.rbuf, nl + 1, pmi_client.rlen);
            return rc;
        }
        if (pmi_client.rlen == sizeof(pmi_client.rbuf)) {
            pmi_client_error("reply from the launcher longer than %zu bytes",
                             sizeof(pmi_client.rbuf));
            return -1;
        }
        n = read(pmi_client.fd, pmi_client.rbuf + pmi_client.rlen,
                 sizeof(pmi_client.rbuf) - pmi_client.rlen);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            pmi_client_error("lost the connection to the launcher (fd %d): %s", pmi_client.fd,
                             n == 0 ? "closed by the launcher" : strerror(errno));
            return -1;
        }
        pmi_client.rlen += (size_t)n;
    }
}

/* Sends line and reads the reply, which must be cmd=<reply_cmd>. When the
 * reply carries rc, a non-zero rc is returned as 1 (the caller decides
 * whether that is an error: for get it means "not found"). */
static int pmi_client_call(halo_pmi_wire_line_t *line, const char *reply_cmd,
                           halo_pmi_wire_msg_t *msg_p)
{
    int len = halo_pmi_wire_line_end(line);
    int rc;

    if (len < 0) {
        pmi_client_error("request does not fit the PMI wire format: '%.60s'", line->buf);
        return -1;
    }
    if (pmi_client_send(line->buf, (size_t)len) != 0 || pmi_client_recv(msg_p) != 0) {
        return -1;
    }
    if (!halo_pmi_wire_msg_is(msg_p, reply_cmd)) {
        pmi_client_error("expected cmd=%s from the launcher, got cmd=%s", reply_cmd,
                         msg_p->pairs[0].value);
        return -1;
    }
    if (halo_pmi_wire_msg_get(msg_p, "rc") != NULL) {
        if (halo_pmi_wire_msg_get_int(msg_p, "rc", &rc) != 0) {
            pmi_client_error("cmd=%s from the launcher has a bad rc", reply_cmd);
            return -1;
        }
        return rc == 0 ? 0 : 1;
    }
    return 0;
}

static int pmi_client_call_int(const char *cmd, const char *reply_cmd, const char *key,
                               int *value_p)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;

    halo_pmi_wire_line_begin(&line, cmd);
    if (pmi_client_call(&line, reply_cmd, &msg) != 0) {
        return -1;
    }
    if (halo_pmi_wire_msg_get_int(&msg, key, value_p) != 0) {
        pmi_client_error("cmd=%s from the launcher lacks a numeric %s", reply_cmd, key);
        return -1;
    }
    return 0;
}

static int pmi_client_connect(void)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;
    const char *kvsname;
    struct stat st;
    int fd, kvsname_max;

    if (pmi_client_env_int("PMI_FD", &fd) != 0) {
        pmi_client_error("PMI_FD='%s' is not a descriptor number", getenv("PMI_FD"));
        return -1;
    }
    if (fd == pmi_client_closed_fd) {
        pmi_client_error("the launcher connection (PMI_FD=%d) was closed by an earlier "
                         "finalize; a launched process can initialize PMI only once", fd);
        return -1;
    }
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
        pmi_client_error("PMI_FD=%d is not an open socket; was this process started by a "
                         "PMI-1 launcher (mpiexec)?", fd);
        return -1;
    }
    pmi_client.fd = fd;
    /* Programs this rank starts (system(), popen) must not inherit it. */
    (void)fcntl(fd, F_SETFD, FD_CLOEXEC);

    if (pmi_client_env_int("PMI_RANK", &pmi_client.rank) != 0 ||
        pmi_client_env_int("PMI_SIZE", &pmi_client.size) != 0 ||
        pmi_client.size < 1 || pmi_client.rank >= pmi_client.size) {
        pmi_client_error("PMI_RANK='%s' and PMI_SIZE='%s' do not describe a rank in a job",
                         getenv("PMI_RANK") ? getenv("PMI_RANK") : "",
                         getenv("PMI_SIZE") ? getenv("PMI_SIZE") : "");
        return -1;
    }

    halo_pmi_wire_line_begin(&line, "init");
    halo_pmi_wire_line_add_int(&line, "pmi_version", 1);
    halo_pmi_wire_line_add_int(&line, "pmi_subversion", 1);
    if (pmi_client_call(&line, "response_to_init", &msg) != 0) {
        pmi_client_error("the launcher refused PMI version 1.1");
        return -1;
    }

    halo_pmi_wire_line_begin(&line, "get_maxes");
    if (pmi_client_call(&line, "maxes", &msg) != 0) {
        return -1;
    }
    if (halo_pmi_wire_msg_get_int(&msg, "kvsname_max", &kvsname_max) != 0 ||
        halo_pmi_wire_msg_get_int(&msg, "keylen_max", &pmi_client.keylen_max) != 0 ||
        halo_pmi_wire_msg_get_int(&msg, "vallen_max", &pmi_client.vallen_max) != 0 ||
        kvsname_max < 2 || pmi_client.keylen_max < 16 || pmi_client.vallen_max < 16) {
        pmi_client_error("cmd=maxes from the launcher lacks usable limits");
        return -1;
    }

    if (pmi_client_call_int("get_appnum", "appnum", "appnum", &pmi_client.appnum) != 0 ||
        pmi_client_call_int("get_universe_size", "universe_size", "size",
                            &pmi_client.universe_size) != 0) {
        return -1;
    }
    /* A launcher that was not told a universe size answers -1 (Hydra and
     * Halo's mpiexec alike): MPI_UNIVERSE_SIZE is then not set. */
    if (pmi_client.universe_size <= 0) {
        pmi_client.universe_size = -1;
    } else if (pmi_client.universe_size < pmi_client.size) {
        pmi_client.universe_size = pmi_client.size;
    }

    halo_pmi_wire_line_begin(&line, "get_my_kvsname");
    if (pmi_client_call(&line, "my_kvsname", &msg) != 0) {
        return -1;
    }
    kvsname = halo_pmi_wire_msg_get(&msg, "kvsname");
    if (kvsname == NULL || kvsname[0] == '\0' ||
        strlen(kvsname) >= sizeof(pmi_client.kvsname)) {
        pmi_client_error("cmd=my_kvsname from the launcher lacks a usable kvsname");
        return -1;
    }
    strcpy(pmi_client.kvsname, kvsname);

    /* A put line is "cmd=put kvsname=K key=KEY value=V\n": keep V small
     * enough for the line to fit, and one byte under vallen_max, which
     * MPICH-derived servers treat as a buffer size with its NUL. */
    pmi_client.chunk_max = (size_t)pmi_client.vallen_max - 1;
    {
        size_t room = HALO_PMI_WIRE_LINE_MAX - 64 - strlen(pmi_client.kvsname) -
                      (size_t)pmi_client.keylen_max;

        if (pmi_client.chunk_max > room) {
            pmi_client.chunk_max = room;
        }
    }
    pmi_client.server_is_halo = getenv(HALO_PMI_SERVER_ENV) != NULL;
    return 0;
}

int halo_pmi_init(halo_pmi_info_t *info_p)
{
    int size;

    if (pmi_client.initialized) {
        pmi_client_error("init called twice without finalize");
        return -1;
    }
    memset(&pmi_client, 0, sizeof(pmi_client));
    pmi_client.fd = -1;

    if (getenv("PMI_FD") == NULL) {
        /* A job launched by something that does not give PMI_FD (a PMI-2 or
         * PMIx launcher) would otherwise come up as N singletons that all
         * believe they are rank 0. */
        if (pmi_client_env_int("PMI_SIZE", &size) == 0 && size > 1) {
            pmi_client_error("PMI_SIZE=%d is set but PMI_FD is not: this launcher is not "
                             "supported (use Halo's mpiexec or MPICH's Hydra)", size);
            return -1;
        }
        pmi_client.singleton = 1;
        pmi_client.size = 1;
        pmi_client.universe_size = -1;
        snprintf(pmi_client.kvsname, sizeof(pmi_client.kvsname), "singleton-%ld",
                 (long)getpid());
    } else if (pmi_client_connect() != 0) {
        pmi_client.fd = -1; /* the descriptor is the launcher's: leave it open */
        pmi_client.size = 0;
        return -1;
    }

    pmi_client.initialized = 1;
    memset(info_p, 0, sizeof(*info_p));
    info_p->rank = pmi_client.rank;
    info_p->size = pmi_client.size;
    info_p->appnum = pmi_client.appnum;
    info_p->universe_size = pmi_client.universe_size;
    info_p->singleton = pmi_client.singleton;
    snprintf(info_p->kvsname, sizeof(info_p->kvsname), "%s", pmi_client.kvsname);
    return 0;
}

static int pmi_client_check_init(const char *fn)
{
    if (!pmi_client.initialized) {
        pmi_client_error("%s called before init (or after finalize)", fn);
        return -1;
    }
    return 0;
}

static int pmi_client_key_is_reserved(const char *key)
{
    return strncmp(key, "PMI_", 4) == 0;
}

static int pmi_client_check_key(const char *fn, const char *key)
{
    if (key == NULL || key[0] == '\0' || strlen(key) > HALO_PMI_KEY_MAX) {
        pmi_client_error("%s: key must be 1 to %d bytes long", fn, HALO_PMI_KEY_MAX);
        return -1;
    }
    return 0;
}

/* Encodes key for the wire, leaving room for a chunk suffix. */
static int pmi_client_encode_key(const char *fn, const char *key, char *out, size_t n)
{
    long len = halo_pmi_wire_encode(out, n, key);

    /* "%!" and up to 6 digits of a chunk index, and Hydra's rule that a key
     * must be shorter than keylen_max. */
    if (len < 0 || len + 8 >= pmi_client.keylen_max) {
        pmi_client_error("%s: key '%s' is too long once escaped for the launcher "
                         "(keylen_max %d)", fn, key, pmi_client.keylen_max);
        return -1;
    }
    return 0;
}

static int pmi_client_put_wire(const char *enc_key, const char *enc_value)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;
    int rc;

    halo_pmi_wire_line_begin(&line, "put");
    halo_pmi_wire_line_add(&line, "kvsname", pmi_client.kvsname);
    halo_pmi_wire_line_add(&line, "key", enc_key);
    halo_pmi_wire_line_add(&line, "value", enc_value);
    rc = pmi_client_call(&line, "put_result", &msg);
    if (rc == 1) {
        const char *why = halo_pmi_wire_msg_get(&msg, "msg");

        pmi_client_error("the launcher refused to store key %s: %s", enc_key,
                         why != NULL ? why : "no reason given");
    }
    return rc == 0 ? 0 : -1;
}

static int pmi_client_table_put(const char *key, const char *value)
{
    pmi_client_kv_t *kv;
    char *copy = strdup(value);

    if (copy == NULL) {
        goto fail_nomem;
    }
    for (kv = pmi_client.table; kv != NULL; kv = kv->next) {
        if (strcmp(kv->key, key) == 0) {
            free(kv->value);
            kv->value = copy;
            return 0;
        }
    }
    kv = calloc(1, sizeof(*kv));
    if (kv == NULL || (kv->key = strdup(key)) == NULL) {
        free(kv);
        free(copy);
        goto fail_nomem;
    }
    kv->value = copy;
    kv->next = pmi_client.table;
    pmi_client.table = kv;
    return 0;

fail_nomem:
    pmi_client_error("put: out of memory");
    return -1;
}

int halo_pmi_put(const char *key, const char *value)
{
    char enc_key[HALO_PMI_WIRE_KEYLEN_MAX * 4];
    char chunk_key[sizeof(enc_key) + 16];
    char header[64];
    char *enc_value = NULL;
    size_t enc_len;
    int nchunks, rc = -1;

    if (pmi_client_check_init("put") != 0 || pmi_client_check_key("put", key) != 0) {
        return -1;
    }
    if (value == NULL) {
        pmi_client_error("put: value of key '%s' is NULL", key);
        return -1;
    }
    if (pmi_client_key_is_reserved(key)) {
        pmi_client_error("put: keys starting with PMI_ belong to the launcher ('%s')", key);
        return -1;
    }
    if (pmi_client.singleton) {
        return pmi_client_table_put(key, value);
    }
    if (pmi_client_encode_key("put", key, enc_key, sizeof(enc_key)) != 0) {
        return -1;
    }

    enc_len = halo_pmi_wire_encoded_len(value);
    enc_value = malloc(enc_len + 1);
    if (enc_value == NULL) {
        pmi_client_error("put: out of memory for a value of %zu bytes", enc_len);
        goto out;
    }
    halo_pmi_wire_encode(enc_value, enc_len + 1, value);

    if (enc_len <= pmi_client.chunk_max) {
        rc = pmi_client_put_wire(enc_key, enc_value);
        goto out;
    }

    nchunks = halo_pmi_wire_chunk_count(enc_len, pmi_client.chunk_max);
    for (int i = 0; i < nchunks; i++) {
        size_t off = (size_t)i * pmi_client.chunk_max;
        size_t n = enc_len - off < pmi_client.chunk_max ? enc_len - off : pmi_client.chunk_max;
        char saved = enc_value[off + n];

        if (halo_pmi_wire_chunk_key(chunk_key, sizeof(chunk_key), enc_key, i) < 0 ||
            strlen(chunk_key) >= (size_t)pmi_client.keylen_max) {
            pmi_client_error("put: value of key '%s' needs too many chunks (%d)", key, nchunks);
            goto out;
        }
        /* Send the chunk in place: cut the string, then restore it. */
        enc_value[off + n] = '\0';
        rc = pmi_client_put_wire(chunk_key, enc_value + off);
        enc_value[off + n] = saved;
        if (rc != 0) {
            goto out;
        }
    }
    rc = -1;
    if (halo_pmi_wire_chunk_header_format(header, sizeof(header), nchunks, enc_len) < 0) {
        goto out;
    }
    rc = pmi_client_put_wire(enc_key, header);

out:
    free(enc_value);
    return rc;
}

int halo_pmi_fence(void)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;

    if (pmi_client_check_init("fence") != 0) {
        return -1;
    }
    if (pmi_client.singleton) {
        return 0;
    }
    halo_pmi_wire_line_begin(&line, "barrier_in");
    return pmi_client_call(&line, "barrier_out", &msg) == 0 ? 0 : -1;
}

/* Gets the stored (wire) value of a wire key into a fresh string in *out_p.
 * Returns 0, 1 when the launcher does not have the key, -1 on error. */
static int pmi_client_get_wire(const char *wire_key, char **out_p)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;
    const char *value;
    int rc;

    halo_pmi_wire_line_begin(&line, "get");
    halo_pmi_wire_line_add(&line, "kvsname", pmi_client.kvsname);
    halo_pmi_wire_line_add(&line, "key", wire_key);
    rc = pmi_client_call(&line, "get_result", &msg);
    if (rc != 0) {
        return rc;
    }
    value = halo_pmi_wire_msg_get(&msg, "value");
    if (value == NULL) {
        pmi_client_error("cmd=get_result for key %s has no value", wire_key);
        return -1;
    }
    *out_p = strdup(value);
    if (*out_p == NULL) {
        pmi_client_error("get: out of memory");
        return -1;
    }
    return 0;
}

/* Fetches the chunks announced by a header into a fresh string. */
static int pmi_client_get_chunks(const char *key, const char *enc_key, int nchunks,
                                 size_t total_len, char **out_p)
{
    char chunk_key[HALO_PMI_WIRE_KEYLEN_MAX * 4 + 16];
    char *all = malloc(total_len + 1), *chunk = NULL;
    size_t len = 0;

    if (all == NULL) {
        pmi_client_error("get: out of memory for the %zu bytes of key '%s'", total_len, key);
        return -1;
    }
    for (int i = 0; i < nchunks; i++) {
        size_t n;

        if (halo_pmi_wire_chunk_key(chunk_key, sizeof(chunk_key), enc_key, i) < 0 ||
            pmi_client_get_wire(chunk_key, &chunk) != 0) {
            pmi_client_error("get: chunk %d of %d of key '%s' is missing", i, nchunks, key);
            goto fail;
        }
        n = strlen(chunk);
        if (n == 0 || n > total_len - len) {
            pmi_client_error("get: chunk %d of key '%s' does not match its header", i, key);
            goto fail;
        }
        memcpy(all + len, chunk, n);
        len += n;
        free(chunk);
        chunk = NULL;
    }
    if (len != total_len) {
        pmi_client_error("get: chunks of key '%s' hold %zu bytes, header says %zu", key, len,
                         total_len);
        goto fail;
    }
    all[len] = '\0';
    *out_p = all;
    return 0;

fail:
    free(chunk);
    free(all);
    return -1;
}

static int pmi_client_copy_out(const char *key, const char *value, char *value_p, int maxlen)
{
    size_t len = strlen(value);

    if (len >= (size_t)maxlen) {
        pmi_client_error("get: value of key '%s' has %zu bytes, more than the buffer of %d",
                         key, len, maxlen);
        return -1;
    }
    memcpy(value_p, value, len + 1);
    return 0;
}

int halo_pmi_get(int rank_hint, const char *key, char *value_p, int maxlen)
{
    char enc_key[HALO_PMI_WIRE_KEYLEN_MAX * 4];
    char *stored = NULL, *assembled = NULL, *decoded = NULL;
    const char *enc_value;
    size_t total_len;
    int nchunks, rc = -1;

    (void)rank_hint;
    if (pmi_client_check_init("get") != 0 || pmi_client_check_key("get", key) != 0) {
        return -1;
    }
    if (value_p == NULL || maxlen < 1) {
        pmi_client_error("get: no room for the value of key '%s'", key);
        return -1;
    }
    if (pmi_client.singleton) {
        for (pmi_client_kv_t *kv = pmi_client.table; kv != NULL; kv = kv->next) {
            if (strcmp(kv->key, key) == 0) {
                return pmi_client_copy_out(key, kv->value, value_p, maxlen);
            }
        }
        return -1;
    }

    if (pmi_client_key_is_reserved(key)) {
        if (!halo_pmi_wire_value_is_valid(key) ||
            strlen(key) >= (size_t)pmi_client.keylen_max) {
            pmi_client_error("get: launcher key '%s' cannot be sent as it is", key);
            return -1;
        }
        rc = pmi_client_get_wire(key, &stored);
        if (rc == 0) {
            rc = pmi_client_copy_out(key, stored, value_p, maxlen);
        }
        free(stored);
        return rc == 0 ? 0 : -1;
    }

    if (pmi_client_encode_key("get", key, enc_key, sizeof(enc_key)) != 0) {
        return -1;
    }
    if (pmi_client_get_wire(enc_key, &stored) != 0) {
        goto out;
    }
    enc_value = stored;
    switch (halo_pmi_wire_chunk_header_parse(stored, &nchunks, &total_len)) {
    case 0:
        break;
    case 1:
        if (pmi_client_get_chunks(key, enc_key, nchunks, total_len, &assembled) != 0) {
            goto out;
        }
        enc_value = assembled;
        break;
    default:
        pmi_client_error("get: key '%s' holds a broken chunk header '%.40s'", key, stored);
        goto out;
    }

    /* Decoding never lengthens, so the encoded length bounds the buffer. */
    decoded = malloc(strlen(enc_value) + 1);
    if (decoded == NULL) {
        pmi_client_error("get: out of memory");
        goto out;
    }
    if (halo_pmi_wire_decode(decoded, strlen(enc_value) + 1, enc_value) < 0) {
        pmi_client_error("get: value of key '%s' is not in Halo's escaped form", key);
        goto out;
    }
    rc = pmi_client_copy_out(key, decoded, value_p, maxlen);

out:
    free(decoded);
    free(assembled);
    free(stored);
    return rc;
}

int halo_pmi_get_process_mapping(int *node_of_rank_p, int *nnodes_p)
{
    char *mapping = NULL;
    int rc;

    if (pmi_client_check_init("get_process_mapping") != 0) {
        return -1;
    }
    if (pmi_client.singleton) {
        node_of_rank_p[0] = 0;
        *nnodes_p = 1;
        return 0;
    }
    rc = pmi_client_get_wire("PMI_process_mapping", &mapping);
    if (rc != 0) {
        return -1;
    }
    rc = halo_pmi_wire_mapping_parse(mapping, pmi_client.size, node_of_rank_p, nnodes_p);
    if (rc != 0) {
        pmi_client_error("cannot parse PMI_process_mapping '%.100s'", mapping);
    }
    free(mapping);
    return rc;
}

void halo_pmi_abort(int exitcode, const char *msg)
{
    halo_pmi_wire_line_t line;
    char raw[512], enc[sizeof(raw) * 3];
    int len;

    if (msg == NULL) {
        msg = "";
    }
    if (!pmi_client.initialized || pmi_client.singleton || !pmi_client.server_is_halo) {
        fprintf(stderr, "halo: rank %d: aborting the job with code %d%s%s\n", pmi_client.rank,
                exitcode, msg[0] != '\0' ? ": " : "", msg);
        /* Hydra ends the job as soon as it reads the abort, without draining
         * our stderr pipe: give it a moment to forward the line first (half
         * of these messages were lost without this pause). */
        if (pmi_client.initialized && !pmi_client.singleton) {
            struct timespec pause = {0, 100 * 1000 * 1000};

            nanosleep(&pause, NULL);
        }
    }
    if (pmi_client.initialized && !pmi_client.singleton) {
        snprintf(raw, sizeof(raw), "%s", msg);
        halo_pmi_wire_encode(enc, sizeof(enc), raw);
        halo_pmi_wire_line_begin(&line, "abort");
        halo_pmi_wire_line_add_int(&line, "exitcode", exitcode);
        if (enc[0] != '\0') {
            halo_pmi_wire_line_add(&line, "error_msg", enc);
        }
        len = halo_pmi_wire_line_end(&line);
        if (len > 0 && pmi_client_send(line.buf, (size_t)len) == 0) {
            struct pollfd pfd = {.fd = pmi_client.fd, .events = POLLIN};

            /* The launcher answers an abort by ending the job, not with a
             * line: give it a moment to do so, so that it sees the abort
             * before it sees this process exit. */
            (void)shutdown(pmi_client.fd, SHUT_WR);
            (void)poll(&pfd, 1, 1000);
        }
    }
    _exit(exitcode);
}

int halo_pmi_finalize(void)
{
    halo_pmi_wire_line_t line;
    halo_pmi_wire_msg_t msg;
    int rc = 0;

    if (pmi_client_check_init("finalize") != 0) {
        return -1;
    }
    if (!pmi_client.singleton) {
        halo_pmi_wire_line_begin(&line, "finalize");
        rc = pmi_client_call(&line, "finalize_ack", &msg) == 0 ? 0 : -1;
        (void)shutdown(pmi_client.fd, SHUT_RDWR);
        close(pmi_client.fd);
        pmi_client_closed_fd = pmi_client.fd;
    }
    while (pmi_client.table != NULL) {
        pmi_client_kv_t *kv = pmi_client.table;

        pmi_client.table = kv->next;
        free(kv->key);
        free(kv->value);
        free(kv);
    }
    memset(&pmi_client, 0, sizeof(pmi_client));
    pmi_client.fd = -1;
    return rc;
}

void halo_shm_name(char *out, size_t n, const char *kvsname, const char *suffix)
{
    int len = snprintf(out, n, "/" HALO_SHM_PREFIX "%s-%s", kvsname, suffix);

    if (len < 0 || n == 0) {
        return;
    }
    /* Past the leading '/', a slash would put the name in a subdirectory. */
    for (char *p = out + 1; *p != '\0'; p++) {
        if (*p == '/') {
            *p = '_';
        }
    }
}
