/* Dynamic processes: ports, MPI_Comm_accept/_connect, _join, _spawn(_multiple),
 * _get_parent, and the name service (MPI_Publish_name, _Lookup_name,
 * _Unpublish_name).
 *
 * Processes of two jobs meet through the roots: a port is a listening Unix
 * socket of the process that opened it (abstract namespace, named
 * "halo-port-<uid>-<identity>-<n>"; the port name carries the identity and
 * n). The roots exchange their groups' identities (halo_proc_gpid and pid)
 * and their groups' next free context ids over one connection; each root
 * spreads the other group and the larger id through its communicator; every
 * member then enters the other group's processes in its process table
 * (halo_proc_add) and builds the intercommunicator. Packets between the jobs
 * go through the socket transport (transport/sock.c); collectives over such
 * communicators take message-passing algorithms.
 *
 * MPI_Comm_spawn runs Halo's mpiexec, forked by the root, for the children:
 * a job of its own whose ranks find the parent's port in HALO_PARENT_PORT
 * and connect to it at the end of MPI_Init; MPI_Comm_get_parent gives that
 * intercommunicator. The launcher ends the new job when this process is
 * gone (HALO_SPAWN_PARENT: it watches its parent pid), a failed spawned
 * job ends this one while communicators still reach other jobs, and
 * MPI_Finalize waits for the launchers this process started, so that the
 * parent's launcher sees one job end after the other.
 *
 * Names are published in files under /tmp/halo-names-<uid> (one per
 * service, named by a hash of it, holding the service, the port and the
 * publisher's pid): every job of the same user on this node sees them; a
 * name whose publisher died is replaced by the next MPI_Publish_name. */
#include "binding/api_gen.h"
#include "binding/binding.h"
#include "coll/coll.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/errors.h"
#include "core/info.h"
#include "pmi.h"
#include "progress/progress.h"
#include "transport/sock.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PORT_PREFIX "halo-port:"
#define HS_MAGIC 0x68616c6f64796e31ull   /* "halodyn1" */

typedef struct port {
    char name[64];
    int fd;
} port_t;

static port_t *ports;
static int nports, capports, port_counter;

/* Launchers started by MPI_Comm_spawn, reaped at finalize. */
static pid_t *launchers;
static int *launcher_fds;   /* their pidfds, or -1 */
static int nlaunchers, caplaunchers;

static halo_comm_t *parent_comm;

/* Names this process published and has not unpublished. */
static char **published;
static int npublished, cappublished;

/* ---------------------------------------------------------------- ports */

static port_t *port_find(const char *name)
{
    for (int i = 0; i < nports; i++)
        if (!strcmp(ports[i].name, name))
            return &ports[i];
    return NULL;
}

static bool port_parse(const char *name, uint64_t *id, int *n)
{
    unsigned long long v;
    int k, end = 0;
    if (sscanf(name, PORT_PREFIX "%16llx:%d%n", &v, &k, &end) != 2 || name[end] != '\0' || k <= 0)
        return false;
    *id = v;
    *n = k;
    return true;
}

static int port_open(char *port_name)
{
    int rc = halo_sock_activate();
    if (rc)
        return rc;
    uint64_t me = halo_proc_gpid(halo_world.rank);
    int n = ++port_counter;
    int fd = halo_sock_listen_on("port", me, n);
    if (fd < 0)
        return halo_err(MPI_ERR_NO_SUCH_FILE, ": cannot listen on a new port: %s", strerror(errno));
    if (nports == capports) {
        capports = capports ? 2 * capports : 4;
        ports = halo_realloc(ports, (size_t)capports * sizeof *ports);
    }
    port_t *p = &ports[nports++];
    snprintf(p->name, sizeof p->name, PORT_PREFIX "%016llx:%d", (unsigned long long)me, n);
    p->fd = fd;
    snprintf(port_name, MPI_MAX_PORT_NAME, "%s", p->name);
    return MPI_SUCCESS;
}

static void port_close(port_t *p)
{
    close(p->fd);
    *p = ports[--nports];
}

int halo_api_open_port(MPI_Info info, char *port_name)
{
    if (info != MPI_INFO_NULL && !halo_obj_lookup(HALO_KIND_INFO, info))
        return halo_err(MPI_ERR_INFO, "(info): not a valid info object");
    if (!port_name)
        return halo_err(MPI_ERR_ARG, "(port_name=NULL): a buffer of MPI_MAX_PORT_NAME characters is required");
    return port_open(port_name);
}

int halo_api_close_port(const char *port_name)
{
    if (!port_name)
        return halo_err(MPI_ERR_ARG, "(port_name=NULL): a port name is required");
    port_t *p = port_find(port_name);
    if (!p)
        return halo_err(MPI_ERR_PORT, "(port_name=\"%.64s\"): not a port this process opened", port_name);
    port_close(p);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- waiting on a socket */

typedef struct fd_wait {
    int fd;
    short events;
    pid_t watch;      /* a launcher whose end fails the wait, or 0 */
    int status;       /* its wait status once it ended */
    bool ended;
    double deadline;  /* halo_now() past which the wait fails, or 0 */
    double timeout;   /* the seconds it came from (for the message) */
    bool timed_out;
    bool retry;       /* accept: a connection that breaks off before the handshake
                       * is dropped and the next one on lfd taken */
    int lfd;
} fd_wait_t;

static int accept_on(int lfd, fd_wait_t *w);

HALO_CFG_INT(cfg_connect_timeout, "HALO_CONNECT_TIMEOUT", 60,
             "seconds MPI_Comm_connect waits for an MPI_Comm_accept on an open port before it fails "
             "with MPI_ERR_PORT (the info key \"timeout\" sets it per call); 0 waits for ever");

static bool launcher_ended(fd_wait_t *w)
{
    if (w->watch <= 0 || w->ended)
        return w->ended;
    if (waitpid(w->watch, &w->status, WNOHANG) == w->watch)
        w->ended = true;
    return w->ended;
}

static bool fd_ready(void *arg)
{
    fd_wait_t *w = arg;
    struct pollfd p = {.fd = w->fd, .events = w->events};
    if (poll(&p, 1, 0) > 0)
        return true;
    if (w->deadline > 0 && halo_now() > w->deadline) {
        w->timed_out = true;
        return true;
    }
    return launcher_ended(w);
}

/* Waits, progressing, until fd is ready, the watched launcher ended or
 * the deadline passed: 0, or -1 when it is not ready. */
static int wait_fd(fd_wait_t *w, short events)
{
    w->events = events;
    halo_progress_wait(fd_ready, w);
    struct pollfd p = {.fd = w->fd, .events = events};
    if (poll(&p, 1, 0) > 0)
        return 0;
    return -1;
}

static int xfer(fd_wait_t *w, void *buf, size_t n, bool out)
{
    char *p = buf;
    while (n > 0) {
        ssize_t k = out ? send(w->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(w->fd, p, n, MSG_DONTWAIT);
        if (k > 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (k == 0)
            return -1;   /* the other side closed */
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK)
            return -1;
        if (wait_fd(w, out ? POLLOUT : POLLIN) != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- meeting of two groups */

typedef struct hs_head {
    uint64_t magic;
    uint32_t n;      /* identities that follow */
    uint32_t ctx;    /* the group's next free context id */
} hs_head_t;

/* What the root spreads to its group. */
typedef struct hs_result {
    int32_t status;  /* MPI error class, or MPI_SUCCESS */
    uint32_t ctx;    /* agreed context id */
    int32_t n;       /* remote processes */
    int32_t asked;   /* processes the root asked to spawn (their error codes) */
} hs_result_t;

/* A process of another job ended without finalizing: while groups still
 * name processes of other jobs, this job ends too, as for a rank of its own
 * that died (a receive from it would wait for ever). */
static void far_lost(int world)
{
    if (halo_group_far_live > 0)
        halo_fatal("process %d of another job (pid %d) ended without MPI_Finalize", world,
                   (int)halo_proc_pid_of(world));
}

int halo_dynproc_reach(void)
{
    int rc = halo_sock_activate();
    halo_sock_set_lost(far_lost);
    halo_progress_note_node_procs(halo_world.local_size + halo_world.nprocs - halo_world.size);
    return rc;
}

/* Messages name what was under way when it is not the MPI function that
 * the binding puts in front of them anyway (`what` NULL). */
#define WHAT(what) (what) ? (what) : "", (what) ? ": " : ""

/* The collective part shared by accept, connect and spawn: `w->fd` is the
 * roots' connection (root only; -1 when the root failed before, with
 * root_rc its error class and message already recorded). */
static int meet(halo_comm_t *comm, int root, fd_wait_t *w, int root_rc, const char *what,
                halo_comm_t **out, int *asked)
{
    int rc = halo_sock_activate();
    halo_sock_set_lost(far_lost);
    int p = comm->size;
    halo_proc_ident_t me = {.gpid = halo_proc_gpid(halo_world.rank), .pid = (int32_t)getpid()};
    halo_proc_ident_t *all = halo_malloc((size_t)p * sizeof *all);
    int crc = halo_coll_allgather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, comm);
    uint32_t mine = 0;
    if (crc == MPI_SUCCESS)
        crc = halo_context_alloc(comm, &mine);
    if (crc) {
        free(all);
        return crc;
    }
    hs_result_t res = {.status = rc ? rc : MPI_SUCCESS, .asked = asked ? *asked : 0};
    halo_proc_ident_t *remote = NULL;
    if (comm->rank == root) {
        if (root_rc)
            res.status = root_rc;
        hs_head_t h = {.magic = HS_MAGIC, .n = (uint32_t)p, .ctx = mine}, th;
        while (res.status == MPI_SUCCESS) {
            if (xfer(w, &h, sizeof h, true) || xfer(w, all, (size_t)p * sizeof *all, true) ||
                xfer(w, &th, sizeof th, false) || th.magic != HS_MAGIC || th.n == 0 || th.n > HALO_FAR_MAX) {
                if (w->retry && !w->ended && !w->timed_out) {
                    /* Its other end gave up before we took it (a connect
                     * that timed out): wait for the next one. */
                    close(w->fd);
                    w->fd = -1;
                    if (accept_on(w->lfd, w) == 0)
                        continue;
                }
                if (w->timed_out)
                    res.status = halo_err(MPI_ERR_PORT, ": %s%snobody accepted on the port within %g s "
                                          "(info key \"timeout\", HALO_CONNECT_TIMEOUT)", WHAT(what),
                                          w->timeout);
                else
                    res.status = halo_err(w->watch > 0 ? MPI_ERR_SPAWN : MPI_ERR_PORT,
                                          ": %s%sthe other side %s", WHAT(what),
                                          w->ended ? "ended before it connected" : "broke off the handshake");
            } else {
                remote = halo_malloc(th.n * sizeof *remote);
                if (xfer(w, remote, th.n * sizeof *remote, false))
                    res.status = halo_err(MPI_ERR_PORT, ": %s%sthe other side broke off the handshake",
                                          WHAT(what));
                res.n = (int32_t)th.n;
                res.ctx = mine > th.ctx ? mine : th.ctx;
            }
            break;
        }
    }
    crc = halo_coll_bcast(&res, sizeof res, MPI_BYTE, root, comm);
    if (asked)
        *asked = crc == MPI_SUCCESS ? res.asked : 0;
    if (crc == MPI_SUCCESS && res.status == MPI_SUCCESS) {
        if (!remote)
            remote = halo_malloc((size_t)res.n * sizeof *remote);
        crc = halo_coll_bcast(remote, (MPI_Count)res.n * (MPI_Count)sizeof *remote, MPI_BYTE, root, comm);
    }
    free(all);
    if (crc || res.status) {
        free(remote);
        if (crc)
            return crc;
        if (comm->rank == root)
            return res.status;
        return halo_err(res.status, ": %s%sfailed at the root (rank %d)", WHAT(what), root);
    }
    int *wr = halo_malloc((size_t)res.n * sizeof *wr);
    for (int i = 0; i < res.n; i++)
        wr[i] = halo_proc_add(remote[i].gpid, remote[i].pid);
    free(remote);
    halo_progress_note_node_procs(halo_world.local_size + halo_world.nprocs - halo_world.size);
    for (int i = 0; i < res.n; i++) {
        if (halo_group_rank_of(comm->group, wr[i]) != MPI_UNDEFINED) {
            int w = wr[i];
            free(wr);
            return halo_err(MPI_ERR_PORT, ": %s%sthe other group includes this process's own (world rank %d)",
                            WHAT(what), w);
        }
    }
    halo_group_t *rg = halo_group_new(res.n, wr);
    free(wr);
    if (res.ctx != mine)
        halo_context_claim(res.ctx);
    *out = halo_intercomm_new(comm->group, rg, res.ctx, comm->errh);
    halo_group_release(rg);
    return MPI_SUCCESS;
}

static int root_check(halo_comm_t *c, int root)
{
    if (c->is_inter)
        return halo_err(MPI_ERR_COMM, "(comm): must be an intracommunicator");
    if (root < 0 || root >= c->size)
        return halo_err(MPI_ERR_ROOT, "(root=%d): not a rank of comm (size %d)", root, c->size);
    return MPI_SUCCESS;
}

/* Accepts one connection on a listening socket. */
static int accept_on(int lfd, fd_wait_t *w)
{
    fd_wait_t lw = {.fd = lfd, .watch = w->watch};
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd >= 0) {
            w->fd = fd;
            return 0;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (wait_fd(&lw, POLLIN) != 0) {
            w->ended = lw.ended;
            w->status = lw.status;
            return -1;
        }
    }
}

/* meet, then closes the roots' connection. */
static int meet_close(halo_comm_t *c, int root, fd_wait_t *w, int root_rc, const char *what, halo_comm_t **out,
                      int *asked)
{
    int rc = meet(c, root, w, root_rc, what, out, asked);
    if (w->fd >= 0)
        close(w->fd);
    return rc;
}

/* Accepts (root) on port p, or only takes part when p is NULL (other
 * ranks, or the root after root_rc). */
static int accept_common(port_t *p, int root, halo_comm_t *c, pid_t watch, int root_rc, const char *what,
                         halo_comm_t **out, int *asked)
{
    fd_wait_t w = {.fd = -1, .watch = watch, .retry = watch <= 0 && p, .lfd = p ? p->fd : -1};
    if (c->rank == root && p && accept_on(p->fd, &w) != 0) {
        if (w.ended)
            root_rc = halo_err(MPI_ERR_SPAWN, ": %s%sthe launcher of the new processes ended (%s %d) before "
                               "they connected", WHAT(what), WIFEXITED(w.status) ? "exit status" : "signal",
                               WIFEXITED(w.status) ? WEXITSTATUS(w.status) : WTERMSIG(w.status));
        else
            root_rc = halo_err(MPI_ERR_PORT, ": %s%saccept failed: %s", WHAT(what), strerror(errno));
    }
    return meet_close(c, root, &w, root_rc, what, out, asked);
}

int halo_api_comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    (void)info;
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = root_check(c, root);
    if (rc)
        return rc;
    port_t *p = NULL;
    int root_rc = MPI_SUCCESS;
    if (c->rank == root) {
        if (!port_name)
            root_rc = halo_err(MPI_ERR_ARG, "(port_name=NULL): the root needs a port name");
        else if (!(p = port_find(port_name)))
            root_rc = halo_err(MPI_ERR_PORT, "(port_name=\"%.64s\"): not a port this process opened", port_name);
    }
    halo_comm_t *nc = NULL;
    rc = accept_common(p, root, c, 0, root_rc, NULL, &nc, NULL);
    if (rc == MPI_SUCCESS)
        *newcomm = (MPI_Comm)nc;
    return rc;
}

static int connect_common(const char *port_name, int root, halo_comm_t *c, double timeout, const char *what,
                          halo_comm_t **out)
{
    fd_wait_t w = {.fd = -1, .timeout = timeout, .deadline = timeout > 0 ? halo_now() + timeout : 0};
    int root_rc = MPI_SUCCESS;
    if (c->rank == root) {
        uint64_t id;
        int n;
        if (!port_name)
            root_rc = halo_err(MPI_ERR_ARG, "(port_name=NULL): the root needs a port name");
        else if (!port_parse(port_name, &id, &n))
            root_rc = halo_err(MPI_ERR_PORT, "(port_name=\"%.64s\"): not a Halo port name", port_name);
        else if ((w.fd = halo_sock_connect_to("port", id, n)) < 0)
            root_rc = halo_err(MPI_ERR_PORT, "(port_name=\"%.64s\"): nobody listens on it (%s)", port_name,
                               strerror(errno));
        else
            fcntl(w.fd, F_SETFL, fcntl(w.fd, F_GETFL) | O_NONBLOCK);
    }
    return meet_close(c, root, &w, root_rc, what, out, NULL);
}

static const char *info_get(MPI_Info info, const char *key);

int halo_api_comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm)
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = root_check(c, root);
    if (rc)
        return rc;
    /* How long the root waits for the accept: info "timeout" (seconds, as
     * MPICH takes it), else HALO_CONNECT_TIMEOUT. */
    double timeout = (double)halo_cfg_get(&cfg_connect_timeout);
    const char *t = c->rank == root ? info_get(info, "timeout") : NULL;
    if (t) {
        char *end;
        double v = strtod(t, &end);
        if (end != t && v > 0)
            timeout = v;
    }
    halo_comm_t *nc = NULL;
    rc = connect_common(port_name, root, c, timeout, NULL, &nc);
    if (rc == MPI_SUCCESS)
        *newcomm = (MPI_Comm)nc;
    return rc;
}

/* ---------------------------------------------------------------- join */

int halo_api_comm_join(int fd, MPI_Comm *intercomm)
{
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
        return halo_err(MPI_ERR_ARG, "(fd=%d): not a socket", fd);
    int rc = halo_sock_activate();
    if (rc)
        return rc;
    halo_comm_t *self = halo_comm_ptr(MPI_COMM_SELF);
    uint32_t mine;
    rc = halo_context_alloc(self, &mine);
    if (rc)
        return rc;
    hs_head_t h = {.magic = HS_MAGIC, .n = 1, .ctx = mine}, th;
    halo_proc_ident_t me = {.gpid = halo_proc_gpid(halo_world.rank), .pid = (int32_t)getpid()}, them;
    fd_wait_t w = {.fd = fd};
    if (xfer(&w, &h, sizeof h, true) || xfer(&w, &me, sizeof me, true) || xfer(&w, &th, sizeof th, false) ||
        th.magic != HS_MAGIC || th.n != 1 || xfer(&w, &them, sizeof them, false))
        return halo_err(MPI_ERR_ARG, "(fd=%d): the process at the other end did not answer as MPI_Comm_join",
                        fd);
    int r = halo_proc_add(them.gpid, them.pid);
    if (r == halo_world.rank)
        return halo_err(MPI_ERR_ARG, "(fd=%d): the socket leads back to this process", fd);
    uint32_t agreed = mine > th.ctx ? mine : th.ctx;
    if (agreed != mine)
        halo_context_claim(agreed);
    halo_group_t *rg = halo_group_new(1, &r);
    *intercomm = (MPI_Comm)halo_intercomm_new(self->group, rg, agreed, self->errh);
    halo_group_release(rg);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- spawn */

/* Halo's mpiexec: the one that started this job, else the one installed
 * beside this library (bin/ next to lib/). */
static bool find_mpiexec(char *path, size_t n)
{
    const char *env = getenv("HALO_MPIEXEC");
    if (env && *env && access(env, X_OK) == 0) {
        snprintf(path, n, "%s", env);
        return true;
    }
    Dl_info di;
    if (dladdr((void *)&halo_api_comm_spawn, &di) && di.dli_fname) {
        char lib[PATH_MAX];
        snprintf(lib, sizeof lib, "%s", di.dli_fname);
        snprintf(path, n, "%s/../bin/mpiexec", dirname(lib));
        if (access(path, X_OK) == 0)
            return true;
    }
    return false;
}

typedef struct strv {
    char **v;
    int n, cap;
} strv_t;

static void strv_add(strv_t *s, const char *x)
{
    if (s->n + 2 > s->cap) {
        s->cap = s->cap ? 2 * s->cap : 32;
        s->v = halo_realloc(s->v, (size_t)s->cap * sizeof *s->v);
    }
    s->v[s->n++] = x ? halo_strdup(x) : NULL;
    s->v[s->n] = NULL;
}

static void strv_free(strv_t *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
}

static const char *info_get(MPI_Info info, const char *key)
{
    halo_info_t *in = info == MPI_INFO_NULL ? NULL : halo_obj_lookup(HALO_KIND_INFO, info);
    return in ? halo_info_lookup(in, key) : NULL;
}

/* Builds the launcher's command line and environment and starts it. */
static int launch(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                  const char *port, pid_t *pid_p)
{
    char mpiexec[PATH_MAX];
    if (!find_mpiexec(mpiexec, sizeof mpiexec))
        return halo_err(MPI_ERR_SPAWN, ": cannot find Halo's mpiexec (set HALO_MPIEXEC to its path)");
    strv_t av = {0}, ev = {0};
    strv_add(&av, mpiexec);
    strv_add(&av, "--bind-to");
    strv_add(&av, "none");
    if (halo_world.universe_size > 0) {
        /* The spawned job lives in the same universe. */
        char usize[32];
        snprintf(usize, sizeof usize, "%d", halo_world.universe_size);
        strv_add(&av, "-usize");
        strv_add(&av, usize);
    }
    const char *path_add = NULL;
    for (int i = 0; i < count; i++) {
        char num[32];
        if (i > 0)
            strv_add(&av, ":");
        snprintf(num, sizeof num, "%d", maxprocs[i]);
        strv_add(&av, "-n");
        strv_add(&av, num);
        const char *soft = info_get(infos[i], "soft");
        if (soft) {
            strv_add(&av, "-soft");
            strv_add(&av, soft);
        }
        const char *wdir = info_get(infos[i], "wdir");
        if (wdir) {
            strv_add(&av, "-wdir");
            strv_add(&av, wdir);
        }
        const char *host = info_get(infos[i], "host");
        if (host && i == 0) {
            strv_add(&av, "-hosts");
            strv_add(&av, host);
        }
        const char *p = info_get(infos[i], "path");
        if (p)
            path_add = p;
        strv_add(&av, cmds[i]);
        if (argvs && argvs[i])
            for (char **a = argvs[i]; *a; a++)
                strv_add(&av, *a);
    }
    for (char **e = environ; *e; e++) {
        /* The new job names itself (a name given to this job would make the
         * two one job to the processes and the segments). */
        if (!strncmp(*e, "HALO_PARENT_PORT=", 17) || !strncmp(*e, "PMI_", 4) ||
            !strncmp(*e, "HALO_KVSNAME=", 13) || !strncmp(*e, "HALO_SPAWN_PARENT=", 18) ||
            (path_add && !strncmp(*e, "PATH=", 5)))
            continue;
        strv_add(&ev, *e);
    }
    char *pp = halo_malloc(strlen(port) + 32);
    sprintf(pp, "HALO_PARENT_PORT=%s", port);
    strv_add(&ev, pp);
    free(pp);
    /* The launcher ends the new job if this process goes away. */
    char parent_env[48];
    snprintf(parent_env, sizeof parent_env, "HALO_SPAWN_PARENT=%ld", (long)getpid());
    strv_add(&ev, parent_env);
    if (path_add) {
        const char *old = getenv("PATH");
        char *np = halo_malloc(strlen(path_add) + (old ? strlen(old) : 0) + 8);
        sprintf(np, "PATH=%s%s%s", path_add, old ? ":" : "", old ? old : "");
        strv_add(&ev, np);
        free(np);
    }
    /* The new job may use every core, whatever this rank is bound to. */
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &all);
    pid_t pid = fork();
    if (pid == 0) {
        /* A process group of its own: the signals our launcher sends to this
         * rank's group (SIGKILL among them, when a job ends in haste) would
         * stop the new job's launcher before it removes its segments. It
         * ends its job itself when this process is gone. */
        setpgid(0, 0);
        sched_setaffinity(0, sizeof all, &all);
        syscall(SYS_close_range, 3u, ~0u, 0u);
        execve(av.v[0], av.v, ev.v);
        _exit(127);
    }
    int e = errno;
    strv_free(&av);
    strv_free(&ev);
    if (pid < 0)
        return halo_err(MPI_ERR_SPAWN, ": cannot start the launcher: %s", strerror(e));
    *pid_p = pid;
    return MPI_SUCCESS;
}

/* A spawned job that fails (its launcher exits with an error, after a
 * rank crashed or aborted) ends this job too, as a failed rank of its own
 * would: checked when its pidfd fires and every 100 ms of progress (a
 * hook, also run by sleeping waits). Launchers that ended well are reaped
 * here. */
/* Forgets launcher i (reaped). */
static void launcher_drop(int i)
{
    if (launcher_fds[i] >= 0)
        close(launcher_fds[i]);
    launchers[i] = launchers[nlaunchers - 1];
    launcher_fds[i] = launcher_fds[nlaunchers - 1];
    nlaunchers--;
}

static _Atomic int launcher_event;   /* a launcher's pidfd fired (the socket watcher saw it) */

static int launcher_poll(void)
{
    static double next;
    if (nlaunchers == 0)
        return 0;
    double now = halo_now();
    if (!atomic_exchange(&launcher_event, 0) && now < next)
        return 0;
    next = now + 0.1;
    for (int i = 0; i < nlaunchers; i++) {
        int st;
        if (waitpid(launchers[i], &st, WNOHANG) != launchers[i])
            continue;
        /* Only while some group still names processes of other jobs: a
         * job that was disconnected may end as it likes. */
        if ((!WIFEXITED(st) || WEXITSTATUS(st) != 0) && halo_group_far_live > 0)
            halo_fatal("a job spawned by this one failed (its mpiexec, pid %d, ended with %s %d)",
                       (int)launchers[i], WIFEXITED(st) ? "exit status" : "signal",
                       WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
        launcher_drop(i--);
    }
    return 0;
}

static void launcher_add(pid_t pid)
{
    static bool hooked;
    if (!hooked) {
        halo_progress_hook_add(launcher_poll);
        hooked = true;
    }
    if (nlaunchers == caplaunchers) {
        caplaunchers = caplaunchers ? 2 * caplaunchers : 4;
        launchers = halo_realloc(launchers, (size_t)caplaunchers * sizeof *launchers);
        launcher_fds = halo_realloc(launcher_fds, (size_t)caplaunchers * sizeof *launcher_fds);
    }
    /* Its end wakes a rank that sleeps in a wait (where the kernel has
     * pidfds; else the next look at 100 ms of progress finds it). */
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd >= 0 && halo_sock_watch_other(pfd, &launcher_event) != 0) {
        close(pfd);
        pfd = -1;
    }
    launchers[nlaunchers] = pid;
    launcher_fds[nlaunchers++] = pfd;
}


static int spawn_common(int count, char *cmds[], char **argvs[], const int maxprocs[], const MPI_Info infos[],
                        int root, MPI_Comm comm, MPI_Comm *intercomm, int errcodes[])
{
    halo_comm_t *c = halo_comm_ptr(comm);
    int rc = root_check(c, root);
    if (rc)
        return rc;
    int root_rc = MPI_SUCCESS, total = 0;
    pid_t pid = 0;
    port_t *p = NULL;
    char port[MPI_MAX_PORT_NAME];
    /* The root's: how many of each command's processes start (the info
     * key "soft" may allow fewer than maxprocs). */
    int *picks = NULL;
    if (c->rank == root) {
        picks = halo_malloc((size_t)(count > 0 ? count : 1) * sizeof *picks);
        for (int i = 0; i < count && !root_rc; i++) {
            const char *soft = NULL;
            long pick = 0;
            if (!cmds[i] || !*cmds[i])
                root_rc = halo_err(MPI_ERR_SPAWN, "(command[%d]): a program name is required", i);
            else if (maxprocs[i] <= 0)
                root_rc = halo_err(MPI_ERR_SPAWN, "(maxprocs[%d]=%d): must be positive", i, maxprocs[i]);
            else if (infos[i] != MPI_INFO_NULL && !halo_obj_lookup(HALO_KIND_INFO, infos[i]))
                root_rc = halo_err(MPI_ERR_INFO, "(info[%d]): not a valid info object", i);
            else if ((soft = info_get(infos[i], "soft")) && (pick = halo_soft_pick(soft, maxprocs[i])) < 0)
                root_rc = halo_err(MPI_ERR_INFO, "(info[%d]): soft=\"%.64s\" is not a list of a, a:b or a:b:c",
                                   i, soft);
            else if (soft && pick == 0)
                root_rc = halo_err(MPI_ERR_SPAWN, "(info[%d]): soft=\"%.64s\" allows no number of processes "
                                   "from 1 to maxprocs=%d", i, soft, maxprocs[i]);
            else {
                picks[i] = soft ? (int)pick : maxprocs[i];
                total += maxprocs[i];
            }
        }
        if (!root_rc && total > HALO_FAR_MAX)
            root_rc = halo_err(MPI_ERR_SPAWN, ": %d processes asked, at most %d", total, HALO_FAR_MAX);
        if (!root_rc)
            root_rc = port_open(port);
        if (!root_rc) {
            p = port_find(port);
            root_rc = launch(count, cmds, argvs, maxprocs, infos, port, &pid);
        }
    }
    halo_comm_t *nc = NULL;
    rc = accept_common(root_rc ? NULL : p, root, c, pid, root_rc, NULL, &nc, &total);
    if (p)
        port_close(p);
    if (pid > 0) {
        if (rc == MPI_SUCCESS)
            launcher_add(pid);
        else {
            /* It ended, or broke off the handshake: end and reap it. */
            kill(pid, SIGTERM);
            waitpid(pid, NULL, 0);
        }
    }
    /* One code per process asked for, on every rank (the root told the
     * others how many): command i's maxprocs[i] in turn, the first picks[i]
     * of them started. Only the root knows the counts, so it sends the
     * codes when "soft" left some out (a flag every rank gets first). */
    int *codes = halo_malloc((size_t)(total > 0 ? total : 1) * sizeof *codes);
    int short_of = 0;
    for (int i = 0; i < total; i++)
        codes[i] = rc == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_SPAWN;
    if (rc == MPI_SUCCESS && c->rank == root) {
        for (int i = 0, k = 0; i < count; k += maxprocs[i], i++)
            for (int j = picks[i]; j < maxprocs[i]; j++, short_of = 1)
                codes[k + j] = MPI_ERR_SPAWN;
    }
    if (rc == MPI_SUCCESS && c->size > 1) {
        int crc = halo_coll_bcast(&short_of, 1, MPI_INT, root, c);
        if (!crc && short_of)
            crc = halo_coll_bcast(codes, total, MPI_INT, root, c);
        if (crc)
            rc = crc;
    }
    if (errcodes)
        for (int i = 0; i < total; i++)
            errcodes[i] = codes[i];
    free(codes);
    free(picks);
    if (rc == MPI_SUCCESS)
        *intercomm = (MPI_Comm)nc;
    return rc;
}

int halo_api_comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
                        MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *cmd = (char *)command;
    char **argvs[1] = {argv};
    return spawn_common(1, &cmd, argvs, &maxprocs, &info, root, comm, intercomm, array_of_errcodes);
}

int halo_api_comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                                 const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
                                 MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    halo_comm_t *c = halo_comm_ptr(comm);
    if (c->rank == root && !c->is_inter) {
        if (count <= 0)
            return halo_err(MPI_ERR_ARG, "(count=%d): must be positive at the root", count);
        if (!array_of_commands || !array_of_maxprocs || !array_of_info)
            return halo_err(MPI_ERR_ARG, "(%s=NULL): required at the root",
                            !array_of_commands ? "array_of_commands"
                            : !array_of_maxprocs ? "array_of_maxprocs" : "array_of_info");
    }
    return spawn_common(count, array_of_commands, array_of_argv, array_of_maxprocs, array_of_info, root, comm,
                        intercomm, array_of_errcodes);
}

int halo_api_comm_get_parent(MPI_Comm *parent)
{
    if (parent_comm && (parent_comm->hdr.flags & HALO_OBJ_USER_FREED))
        *parent = MPI_COMM_NULL;
    else
        *parent = parent_comm ? (MPI_Comm)parent_comm : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

void halo_dynproc_world_init(void)
{
    const char *port = getenv("HALO_PARENT_PORT");
    if (!port || !*port)
        return;
    char *copy = halo_strdup(port);
    unsetenv("HALO_PARENT_PORT");
    halo_comm_t *nc = NULL;
    int rc = connect_common(copy, 0, halo_comm_ptr(MPI_COMM_WORLD), 0, "connecting to the parent job", &nc);
    if (rc)
        halo_fatal("cannot connect to the job that spawned this one (port %s)", copy);
    free(copy);
    /* The library's reference keeps the object valid for the handle check
     * after the user frees or disconnects it. */
    halo_obj_ref(nc);
    /* Its default name (MPI 5.0, 11.8.2). */
    snprintf(nc->name, sizeof nc->name, "MPI_COMM_PARENT");
    parent_comm = nc;
}

/* ---------------------------------------------------------------- names */

static void name_dir(char *dir, size_t n)
{
    const char *env = getenv("HALO_NAME_DIR");
    if (env && *env)
        snprintf(dir, n, "%s", env);
    else
        snprintf(dir, n, "/tmp/halo-names-%u", (unsigned)getuid());
}

static void name_path(const char *service, char *path, size_t n)
{
    char dir[PATH_MAX - 64];
    name_dir(dir, sizeof dir);
    uint64_t h = halo_fnv1a(HALO_FNV_BASIS, service, strlen(service));
    snprintf(path, n, "%s/%016llx", dir, (unsigned long long)h);
}

/* Reads a published record: 0 with the port when the file names service. */
static int name_read(const char *path, const char *service, char *port, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0;
    int rc = -1;
    ssize_t k = getline(&line, &cap, f);
    if (k > 0 && line[k - 1] == '\n')
        line[--k] = '\0';
    if (k >= 0 && !strcmp(line, service)) {
        k = getline(&line, &cap, f);
        if (k > 0 && line[k - 1] == '\n')
            line[--k] = '\0';
        if (k >= 0) {
            snprintf(port, n, "%s", line);
            rc = 0;
        }
    }
    free(line);
    fclose(f);
    return rc;
}

static int name_args(const char *service, const char *port, const char *call)
{
    if (!service || !*service)
        return halo_err(MPI_ERR_ARG, "(service_name): %s needs a non-empty service name", call);
    if (strchr(service, '\n') || (port && strchr(port, '\n')))
        return halo_err(MPI_ERR_ARG, "(service_name): may not contain a newline");
    if (port && !*port)
        return halo_err(MPI_ERR_ARG, "(port_name): %s needs a port name", call);
    return MPI_SUCCESS;
}

/* Whether a published record's process (its third line) is gone. */
static bool name_stale(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    char line[MPI_MAX_PORT_NAME + 8];
    long pid = 0;
    for (int i = 0; i < 3 && fgets(line, sizeof line, f); i++)
        if (i == 2)
            pid = atol(line);
    fclose(f);
    return pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes the names this process published (at finalize, and before an
 * abort: a dead process's names would send others to a port nobody
 * listens on). */
static void names_remove(void)
{
    for (int i = 0; i < npublished; i++)
        unlink(published[i]);
}

int halo_api_publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    if (!port_name)
        return halo_err(MPI_ERR_ARG, "(port_name=NULL): a port name is required");
    int rc = name_args(service_name, port_name, "MPI_Publish_name");
    if (rc)
        return rc;
    char dir[PATH_MAX - 64], path[PATH_MAX];
    name_dir(dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        return halo_err(MPI_ERR_SERVICE, ": cannot create the name directory %s: %s", dir, strerror(errno));
    name_path(service_name, path, sizeof path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST && name_stale(path)) {
        /* Left by a process that died without unpublishing: replace it. */
        unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    }
    if (fd < 0) {
        if (errno == EEXIST)
            return halo_err(MPI_ERR_SERVICE, "(service_name=\"%.64s\"): already published", service_name);
        return halo_err(MPI_ERR_SERVICE, ": cannot publish in %s: %s", dir, strerror(errno));
    }
    FILE *f = fdopen(fd, "w");
    int bad = !f || fprintf(f, "%s\n%s\n%ld\n", service_name, port_name, (long)getpid()) < 0;
    if ((f ? fclose(f) : close(fd)) != 0)
        bad = 1;
    if (bad) {
        unlink(path);
        return halo_err(MPI_ERR_SERVICE, ": cannot write %s", path);
    }
    if (npublished == cappublished) {
        cappublished = cappublished ? 2 * cappublished : 4;
        published = halo_realloc(published, (size_t)cappublished * sizeof *published);
    }
    published[npublished++] = halo_strdup(path);
    halo_abort_cleanup = names_remove;
    return MPI_SUCCESS;
}

int halo_api_unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    (void)info;
    int rc = name_args(service_name, NULL, "MPI_Unpublish_name");
    if (rc)
        return rc;
    char path[PATH_MAX], port[MPI_MAX_PORT_NAME];
    name_path(service_name, path, sizeof path);
    if (name_read(path, service_name, port, sizeof port) != 0)
        return halo_err(MPI_ERR_SERVICE, "(service_name=\"%.64s\"): not published", service_name);
    if (port_name && strcmp(port, port_name) != 0)
        return halo_err(MPI_ERR_SERVICE, "(service_name=\"%.64s\"): published with another port", service_name);
    unlink(path);
    for (int i = 0; i < npublished; i++) {
        if (!strcmp(published[i], path)) {
            free(published[i]);
            published[i] = published[--npublished];
            break;
        }
    }
    return MPI_SUCCESS;
}

int halo_api_lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    (void)info;
    if (!port_name)
        return halo_err(MPI_ERR_ARG, "(port_name=NULL): a buffer of MPI_MAX_PORT_NAME characters is required");
    int rc = name_args(service_name, NULL, "MPI_Lookup_name");
    if (rc)
        return rc;
    char path[PATH_MAX];
    name_path(service_name, path, sizeof path);
    if (name_read(path, service_name, port_name, MPI_MAX_PORT_NAME) != 0)
        return halo_err(MPI_ERR_NAME, "(service_name=\"%.64s\"): not published", service_name);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- finalize */

void halo_dynproc_finalize(void)
{
    while (nports > 0)
        port_close(&ports[nports - 1]);
    free(ports);
    ports = NULL;
    capports = 0;
    names_remove();
    halo_abort_cleanup = NULL;
    for (int i = 0; i < npublished; i++)
        free(published[i]);
    free(published);
    published = NULL;
    npublished = cappublished = 0;
    /* Wait for the spawned jobs, handling what they still send (each poll
     * also flushes output to them; what is left goes out, for 10 s at
     * most, when the socket transport closes). */
    while (nlaunchers > 0) {
        pid_t pid = launchers[0];
        int st;
        if (waitpid(pid, &st, WNOHANG) == 0) {
            /* The progress hook may reap it meanwhile, and drop it. */
            halo_progress_poll();
            struct timespec ts = {0, 1000 * 1000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (nlaunchers > 0 && launchers[0] == pid)
            launcher_drop(0);
    }
    free(launchers);
    free(launcher_fds);
    launchers = NULL;
    launcher_fds = NULL;
    caplaunchers = 0;
    if (parent_comm) {
        /* The library's reference: the last one when the user disconnected
         * it, and then the communicator goes with it. */
        halo_comm_release(parent_comm);
        parent_comm = NULL;
    }
}
