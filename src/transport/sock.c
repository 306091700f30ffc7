/* The socket transport: packets to and from processes of other jobs on this
 * node (intercommunicators of MPI_Comm_connect/accept, _spawn and _join).
 *
 * Each process that meets another job listens on a Unix socket in the
 * abstract namespace named after its identity (halo_proc_gpid), so nothing
 * is left in the file system. A process sends to another only over the
 * connection it opened to that one's listener, and reads whatever arrives on
 * the connections others opened to it: each direction of a pair is one byte
 * stream, in order, whoever connects first. A connection begins with a
 * hello (the opener's identity and pid), then carries frames: a length,
 * the packet header, the payload.
 *
 * Sends never block: what the socket does not take at once waits in the
 * connection's output buffer, flushed at every poll; past
 * SOCK_OUT_LIMIT bytes waiting, sends answer HALO_TR_AGAIN.
 *
 * A watcher thread blocks in epoll_wait (edge-triggered) on the listener
 * and the incoming connections: when bytes or a connection arrive it
 * raises a flag and rings this process's doorbell, so a rank asleep on it
 * wakes as it would for a packet of its own job, and polls look at the
 * sockets only when the flag is up (one atomic load otherwise).
 * Large messages are read from the sender's memory with process_vm_readv,
 * as between the ranks of a job, where the kernel lets one job read the
 * other's; otherwise the sender pushes them in packets. */
#include "transport/sock.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#define SOCK_HELLO_MAGIC 0x68616c6fu   /* "halo" */
#define SOCK_FRAME_MAGIC 0x66726d31u   /* "frm1" */
#define SOCK_BYE_MAGIC 0x62796531u     /* "bye1": the sender finalized; nothing follows */
#define SOCK_OUT_LIMIT ((size_t)4 << 20)

typedef struct sock_hello {
    uint32_t magic;
    int32_t pid;
    uint64_t gpid;
} sock_hello_t;

typedef struct sock_frame {
    uint32_t magic;
    uint32_t len;            /* payload bytes after the header */
    halo_pkt_hdr_t hdr;
} sock_frame_t;

typedef struct sock_buf {
    char *data;
    size_t off, len, cap;    /* bytes [off, len) are pending */
} sock_buf_t;

/* A process of another job. */
typedef struct far_proc {
    uint64_t gpid;
    int32_t pid;
    int out_fd;              /* our connection to its listener; -1 before the first send */
    bool no_cma;             /* a single-copy read of its memory failed: never again */
    sock_buf_t out;
} far_proc_t;

/* A connection another process opened to us. */
typedef struct in_conn {
    int fd;
    int world;               /* the sender's index; -1 until its hello arrived */
    bool bye;                /* it said goodbye (finalized) before closing */
    sock_buf_t in;
} in_conn_t;

static struct {
    int listen_fd;
    far_proc_t far[HALO_FAR_MAX];
    int nfar;
    in_conn_t *conns;
    int nconns, capconns;
    halo_pkt_handler_fn_t *handler;
    void (*lost)(int world);  /* a process closed without saying goodbye */
    int epfd, stop_fd;       /* the watcher's epoll set, and the eventfd that stops it */
    pthread_t watcher;
    _Atomic int arrived;     /* the watcher saw bytes or a connection arrive */
    int nout;                /* processes with output waiting */
} sk = {.listen_fd = -1, .epfd = -1, .stop_fd = -1};

bool halo_sock_on;

void halo_sock_set_handler(halo_pkt_handler_fn_t *handler)
{
    sk.handler = handler;
}

void halo_sock_set_lost(void (*lost)(int world))
{
    sk.lost = lost;
}

uint64_t halo_proc_gpid(int world)
{
    if (world < halo_world.size)
        return (halo_world.job_key << 24) | (uint64_t)world;
    return sk.far[world - halo_world.size].gpid;
}

int halo_sock_readv(int src_world, const struct iovec *local, int nlocal, const struct iovec *remote,
                    int nremote)
{
    far_proc_t *f = &sk.far[src_world - halo_world.size];
    if (f->no_cma || !halo_tr_cma_node())
        return -1;
    size_t want = 0;
    for (int i = 0; i < nremote; i++)
        want += remote[i].iov_len;
    ssize_t got = process_vm_readv(f->pid, local, (unsigned long)nlocal, remote, (unsigned long)nremote, 0);
    if (got == (ssize_t)want)
        return 0;
    /* Refused (another user's rules, a security module) or partial: the
     * sender pushes the data instead, now and from now on. */
    f->no_cma = true;
    return -1;
}

int32_t halo_proc_pid_of(int world)
{
    return world >= halo_world.size ? sk.far[world - halo_world.size].pid : 0;
}

int32_t halo_proc_pid_any(int world)
{
    if (world >= halo_world.size)
        return sk.far[world - halo_world.size].pid;
    if (world == halo_world.rank)
        return (int32_t)getpid();
    if (halo_world.procs[world].node != halo_world.node)
        return 0;
    return halo_shm_pid(halo_world.procs[world].local_rank);
}

/* Makes room for n more bytes at the end of b. */
static void buf_reserve(sock_buf_t *b, size_t n)
{
    if (b->off == b->len)
        b->off = b->len = 0;
    if (b->len + n <= b->cap)
        return;
    if (b->off > 0) {
        memmove(b->data, b->data + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
    }
    if (b->len + n <= b->cap)
        return;
    size_t cap = b->cap ? b->cap : 64 * 1024;
    while (cap < b->len + n)
        cap *= 2;
    b->data = halo_realloc(b->data, cap);
    b->cap = cap;
}

static void buf_append(sock_buf_t *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

static void sock_name(struct sockaddr_un *a, socklen_t *len, const char *what, uint64_t id, int n)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    /* Abstract namespace: the name starts with a NUL byte. */
    int k = snprintf(a->sun_path + 1, sizeof a->sun_path - 1, "halo-%s-%u-%016llx-%d", what,
                     (unsigned)getuid(), (unsigned long long)id, n);
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)k);
}

int halo_sock_listen_on(const char *what, uint64_t id, int n)
{
    struct sockaddr_un a;
    socklen_t len;
    sock_name(&a, &len, what, id, n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&a, len) != 0 || listen(fd, 128) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int halo_sock_connect_to(const char *what, uint64_t id, int n)
{
    struct sockaddr_un a;
    socklen_t len;
    sock_name(&a, &len, what, id, n);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int rc;
    do
        rc = connect(fd, (struct sockaddr *)&a, len);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Events of descriptors watched for others (halo_sock_watch_other) carry
 * the flag's address under this tag; the sockets' carry their descriptor. */
#define WATCH_OTHER (1ull << 63)

static void *watch(void *arg)
{
    (void)arg;
    struct epoll_event ev[16];
    for (;;) {
        int n = epoll_wait(sk.epfd, ev, 16, -1);
        if (n < 0 && errno != EINTR)
            return NULL;
        for (int i = 0; i < n; i++) {
            if (ev[i].data.u64 == (uint64_t)sk.stop_fd)
                return NULL;
            if (ev[i].data.u64 & WATCH_OTHER)
                atomic_store((_Atomic int *)(uintptr_t)(ev[i].data.u64 & ~WATCH_OTHER), 1);
        }
        if (n > 0) {
            atomic_store(&sk.arrived, 1);
            halo_tr_ring_self();
        }
    }
}

int halo_sock_watch_other(int fd, _Atomic int *flag)
{
    if (sk.epfd < 0)
        return -1;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLET, .data.u64 = WATCH_OTHER | (uint64_t)(uintptr_t)flag};
    return epoll_ctl(sk.epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void watch_fd(int fd)
{
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data.u64 = (uint64_t)fd};
    if (epoll_ctl(sk.epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
        halo_fatal("cannot watch a socket of another job: %s", strerror(errno));
}

int halo_sock_activate(void)
{
    if (sk.listen_fd >= 0)
        return 0;
    uint64_t me = halo_proc_gpid(halo_world.rank);
    sk.listen_fd = halo_sock_listen_on("p", me, 0);
    if (sk.listen_fd < 0)
        return halo_err(MPI_ERR_INTERN, ": cannot listen for processes of other jobs: %s", strerror(errno));
    sk.epfd = epoll_create1(EPOLL_CLOEXEC);
    sk.stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (sk.epfd < 0 || sk.stop_fd < 0)
        halo_fatal("cannot set up the watch of other jobs' sockets: %s", strerror(errno));
    watch_fd(sk.listen_fd);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)sk.stop_fd};
    epoll_ctl(sk.epfd, EPOLL_CTL_ADD, sk.stop_fd, &ev);
    /* Whatever arrived before the watcher started is looked at once. */
    atomic_store(&sk.arrived, 1);
    int e = pthread_create(&sk.watcher, NULL, watch, NULL);
    if (e != 0)
        halo_fatal("cannot start the thread that watches other jobs' sockets: %s", strerror(e));
    halo_sock_on = true;
    if (halo_tr_eager_other == 0)
        halo_tr_eager_other = HALO_SOCK_EAGER_MAX;
    return 0;
}

int halo_proc_add(uint64_t gpid, int32_t pid)
{
    if ((gpid >> 24) == halo_world.job_key) {
        int r = (int)(gpid & 0xffffff);
        if (r < halo_world.size)
            return r;
    }
    for (int i = 0; i < sk.nfar; i++)
        if (sk.far[i].gpid == gpid)
            return halo_world.size + i;
    if (sk.nfar == HALO_FAR_MAX)
        halo_fatal("more than %d processes of other jobs", HALO_FAR_MAX);
    far_proc_t *f = &sk.far[sk.nfar];
    memset(f, 0, sizeof *f);
    f->gpid = gpid;
    f->pid = pid;
    f->out_fd = -1;
    int w = halo_world.size + sk.nfar++;
    halo_world.procs[w] = (halo_proc_t){.node = HALO_NODE_FAR, .local_rank = -1, .cnode = HALO_NODE_FAR};
    halo_world.nprocs = w + 1;
    return w;
}

/* Writes what the socket takes of the pending output; -1 when the peer is
 * gone. */
static int flush_out(far_proc_t *f)
{
    while (f->out.off < f->out.len) {
        ssize_t n = send(f->out_fd, f->out.data + f->out.off, f->out.len - f->out.off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            f->out.off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
    f->out.off = f->out.len = 0;
    return 0;
}

static void far_lost(int world, const char *why)
{
    far_proc_t *f = &sk.far[world - halo_world.size];
    halo_fatal("lost the connection to process %d (pid %d) of another job: %s", world, (int)f->pid, why);
}

int halo_sock_send(int dst_world, const halo_pkt_hdr_t *hdr, const void *payload, size_t len,
                   halo_pkt_fill_fn_t *fill, void *fill_arg)
{
    far_proc_t *f = &sk.far[dst_world - halo_world.size];
    if (f->out_fd < 0) {
        if (halo_sock_activate() != 0)
            halo_fatal("cannot listen for processes of other jobs");
        int fd = halo_sock_connect_to("p", f->gpid, 0);
        if (fd < 0)
            halo_fatal("cannot reach process %d (pid %d) of another job: %s", dst_world, (int)f->pid,
                       strerror(errno));
        f->out_fd = fd;
        sock_hello_t h = {.magic = SOCK_HELLO_MAGIC, .pid = (int32_t)getpid(),
                          .gpid = halo_proc_gpid(halo_world.rank)};
        buf_append(&f->out, &h, sizeof h);
    }
    if (f->out.len - f->out.off > SOCK_OUT_LIMIT) {
        if (flush_out(f) != 0)
            far_lost(dst_world, strerror(errno));
        if (f->out.len - f->out.off > SOCK_OUT_LIMIT)
            return HALO_TR_AGAIN;
    }
    sock_frame_t fr = {.magic = SOCK_FRAME_MAGIC, .len = (uint32_t)len, .hdr = *hdr};
    buf_reserve(&f->out, sizeof fr + len);
    memcpy(f->out.data + f->out.len, &fr, sizeof fr);
    f->out.len += sizeof fr;
    if (len) {
        if (fill)
            fill(fill_arg, f->out.data + f->out.len, len);
        else
            memcpy(f->out.data + f->out.len, payload, len);
        f->out.len += len;
    }
    if (flush_out(f) != 0)
        far_lost(dst_world, strerror(errno));
    if (f->out.off < f->out.len)
        sk.nout++;   /* counted again by the next poll's flush pass */
    return HALO_TR_OK;
}

/* Hands every whole frame of a connection to the packet handler. */
static int dispatch(in_conn_t *c)
{
    int n = 0;
    sock_buf_t *b = &c->in;
    for (;;) {
        size_t avail = b->len - b->off;
        const char *p = b->data + b->off;
        if (c->world < 0) {
            if (avail < sizeof(sock_hello_t))
                break;
            sock_hello_t h;
            memcpy(&h, p, sizeof h);
            if (h.magic != SOCK_HELLO_MAGIC)
                halo_fatal("a process of another job sent a malformed greeting");
            c->world = halo_proc_add(h.gpid, h.pid);
            b->off += sizeof h;
            continue;
        }
        if (avail < sizeof(sock_frame_t))
            break;
        sock_frame_t fr;
        memcpy(&fr, p, sizeof fr);
        if (fr.magic == SOCK_BYE_MAGIC) {
            c->bye = true;
            b->off += sizeof fr;
            continue;
        }
        if (fr.magic != SOCK_FRAME_MAGIC)
            halo_fatal("malformed packet from process %d of another job", c->world);
        if (avail < sizeof fr + fr.len)
            break;
        b->off += sizeof fr + fr.len;
        /* The payload stays in place during the call: the buffer only grows
         * when this connection is read, which the handler does not do. */
        sk.handler(c->world, &fr.hdr, p + sizeof fr, fr.len);
        n++;
    }
    if (b->off == b->len)
        b->off = b->len = 0;
    return n;
}

static void accept_all(void)
{
    for (;;) {
        int fd = accept4(sk.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return;
        if (sk.nconns == sk.capconns) {
            sk.capconns = sk.capconns ? 2 * sk.capconns : 8;
            sk.conns = halo_realloc(sk.conns, (size_t)sk.capconns * sizeof *sk.conns);
        }
        sk.conns[sk.nconns++] = (in_conn_t){.fd = fd, .world = -1};
        watch_fd(fd);
    }
}

int halo_sock_poll(void)
{
    /* The sockets are read when the watcher saw something arrive (the
     * flag drops before the reads, so bytes that come after them raise it
     * again), and otherwise every 5 us at most, or at every poll while
     * packets came in the last 200 us: a rank that polls in a loop finds a
     * reply without waiting for the watcher to be scheduled, which takes a
     * core from someone. Output is flushed while some waits.
     * Not from within a handler, whose payload lies in a connection's
     * buffer. */
    static bool polling;
    static double last, last_data;
    if (!halo_sock_on || polling)
        return 0;
    bool look = atomic_load_explicit(&sk.arrived, memory_order_relaxed) != 0;
    double now = 0;
    if (!look) {
        /* Within 200 us of the last packet (a conversation under way),
         * every poll looks. */
        now = halo_now();
        if (now - last >= 5e-6 || now - last_data < 200e-6) {
            look = true;
            last = now;
        }
    }
    if (!look && sk.nout == 0)
        return 0;
    polling = true;
    int n = 0;
    /* New connections always pass through the watcher (the listener is
     * in its set): accept only after it saw something. */
    if (look && atomic_exchange(&sk.arrived, 0))
        accept_all();
    for (int i = 0; look && i < sk.nconns; i++) {
        in_conn_t *c = &sk.conns[i];
        bool closed = false;
        for (;;) {
            sock_buf_t *b = &c->in;
            buf_reserve(b, 16 * 1024);
            size_t room = b->cap - b->len;
            ssize_t k = recv(c->fd, b->data + b->len, room, MSG_DONTWAIT);
            if (k > 0) {
                b->len += (size_t)k;
                if ((size_t)k < room)
                    break;
                continue;
            }
            if (k < 0 && errno == EINTR)
                continue;
            if (k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                closed = true;
            break;
        }
        n += dispatch(c);
        c = &sk.conns[i];
        if (closed) {
            /* The other process closed its side: whatever it sent has been
             * handled. Without a goodbye it ended without finalizing. */
            int world = c->world;
            bool bye = c->bye;
            close(c->fd);
            free(c->in.data);
            sk.conns[i] = sk.conns[--sk.nconns];
            i--;
            if (!bye && world >= 0 && sk.lost)
                sk.lost(world);
        }
    }
    if (n > 0)
        last_data = now > 0 ? now : halo_now();
    if (sk.nout > 0) {
        sk.nout = 0;
        for (int i = 0; i < sk.nfar; i++) {
            far_proc_t *f = &sk.far[i];
            if (f->out_fd >= 0 && f->out.off < f->out.len && flush_out(f) != 0)
                far_lost(halo_world.size + i, strerror(errno));
            sk.nout += f->out.off < f->out.len;
        }
    }
    polling = false;
    return n;
}

void halo_sock_finalize(void)
{
    /* What is still buffered goes out before the connections close (for
     * at most 10 s: a peer that stopped reading is not waited for). */
    double give_up = halo_now() + 10;
    for (int i = 0; i < sk.nfar; i++) {
        far_proc_t *f = &sk.far[i];
        if (f->out_fd < 0)
            continue;
        while (f->out.off < f->out.len && halo_now() < give_up) {
            if (flush_out(f) != 0)
                break;
            if (f->out.off < f->out.len) {
                struct pollfd p = {.fd = f->out_fd, .events = POLLOUT};
                poll(&p, 1, 100);
                halo_sock_poll();
            }
        }
        sock_frame_t bye = {.magic = SOCK_BYE_MAGIC};
        if (f->out.off == f->out.len)
            (void)!send(f->out_fd, &bye, sizeof bye, MSG_NOSIGNAL | MSG_DONTWAIT);
        close(f->out_fd);
        f->out_fd = -1;
        free(f->out.data);
        f->out = (sock_buf_t){0};
    }
    if (sk.epfd >= 0) {
        uint64_t one = 1;
        if (write(sk.stop_fd, &one, sizeof one) == (ssize_t)sizeof one)
            pthread_join(sk.watcher, NULL);
        close(sk.epfd);
        close(sk.stop_fd);
        sk.epfd = sk.stop_fd = -1;
    }
    for (int i = 0; i < sk.nconns; i++) {
        close(sk.conns[i].fd);
        free(sk.conns[i].in.data);
    }
    free(sk.conns);
    sk.conns = NULL;
    sk.nconns = sk.capconns = 0;
    if (sk.listen_fd >= 0)
        close(sk.listen_fd);
    sk.listen_fd = -1;
    halo_sock_on = false;
}
