/* Starting the ranks: find each program before anything runs (so a typo
 * fails at once with its name, and no rank is left waiting for a peer that
 * never comes), build the environments, then fork and exec.
 *
 * A child gets exactly four descriptors: 0, 1, 2 and its end of the PMI
 * socketpair as 3 (PMI_FD=3). Everything else is closed, including every
 * other rank's pipes and sockets. */
#include "mpiexec.h"
#include "pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Where PMI_FD lands in every rank. */
#define LAUNCH_PMI_FD 3

extern char **environ;

/* The variables mpiexec sets per rank; inherited values of the same names
 * (from an enclosing job, say) must not leak through. */
static const char *const launch_rank_vars[] = {
    "PMI_FD",          "PMI_RANK",          "PMI_SIZE",        "HALO_LOCAL_RANK",
    "HALO_LOCAL_SIZE", "MPI_LOCALRANKID",   "MPI_LOCALNRANKS", HALO_PMI_SERVER_ENV,
    "PMI_PORT",        "PMI_ID",            "HALO_MPIEXEC",    "HALO_SPAWN_PARENT",
    "HALO_JOB_CPUS",   "HALO_INFO_MAXPROCS", "HALO_INFO_SOFT", "HALO_INFO_HOST",
    "HALO_INFO_ARCH",  "HALO_INFO_FILE",
};

/* "NAME=VALUE" strings of one app, all allocated. */
typedef struct launch_env {
    char **vars;
    int n, cap;
} launch_env_t;

static int launch_env_name_is(const char *entry, const char *name)
{
    size_t len = strlen(name);

    return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static int launch_env_set(launch_env_t *env, const char *name, const char *value)
{
    size_t len = strlen(name) + strlen(value) + 2;
    char *entry = malloc(len);

    if (entry == NULL) {
        return -1;
    }
    snprintf(entry, len, "%s=%s", name, value);
    for (int i = 0; i < env->n; i++) {
        if (launch_env_name_is(env->vars[i], name)) {
            free(env->vars[i]);
            env->vars[i] = entry;
            return 0;
        }
    }
    if (env->n + 1 >= env->cap) {
        int cap = env->cap ? env->cap * 2 : 64;
        char **vars = realloc(env->vars, sizeof(*vars) * (size_t)cap);

        if (vars == NULL) {
            free(entry);
            return -1;
        }
        env->vars = vars;
        env->cap = cap;
    }
    env->vars[env->n++] = entry;
    env->vars[env->n] = NULL;
    return 0;
}

static void launch_env_free(launch_env_t *env)
{
    for (int i = 0; i < env->n; i++) {
        free(env->vars[i]);
    }
    free(env->vars);
    memset(env, 0, sizeof(*env));
}

static int launch_env_apply(launch_env_t *env, const mpiexec_env_list_t *list)
{
    for (int i = 0; i < list->n; i++) {
        const char *value = list->vars[i].value;

        /* -x NAME forwards mpiexec's value: inherited already, unless unset. */
        if (value == NULL) {
            value = getenv(list->vars[i].name);
            if (value == NULL) {
                continue;
            }
        }
        if (launch_env_set(env, list->vars[i].name, value) != 0) {
            return -1;
        }
    }
    return 0;
}

/* The value of name in env, or NULL. */
static const char *launch_env_get(const launch_env_t *env, const char *name)
{
    for (int i = 0; i < env->n; i++) {
        if (launch_env_name_is(env->vars[i], name)) {
            return env->vars[i] + strlen(name) + 1;
        }
    }
    return NULL;
}

/* Large allocations on transparent huge pages, when the job asks with
 * HALO_HUGEPAGES=1 (and does not name glibc.malloc.hugetlb in
 * GLIBC_TUNABLES itself): the ranks' glibc (2.35 and later) then marks
 * every region of 2 MiB or more that malloc maps for huge pages; where the
 * kernel's THP mode is "never", or "always" (which already gives them),
 * glibc leaves it alone. One TLB entry then covers what 512 did: packing a
 * face out of a large array, or reading a large buffer with
 * process_vm_readv, stops walking the page tables every 4 KiB. Not by
 * default: a program that allocates and frees a lot (miniAMR) pays for
 * the huge pages' faults and compaction, 40% of its run time here
 * (docs/performance.md, "Huge pages"). */
static int launch_env_hugepages(launch_env_t *env)
{
    static const char tunable[] = "glibc.malloc.hugetlb";
    const char *want = launch_env_get(env, "HALO_HUGEPAGES");
    const char *old = launch_env_get(env, "GLIBC_TUNABLES");

    if (want == NULL || strcmp(want, "1") != 0 || (old != NULL && strstr(old, tunable) != NULL)) {
        return 0;
    }
    if (old == NULL || old[0] == '\0') {
        return launch_env_set(env, "GLIBC_TUNABLES", "glibc.malloc.hugetlb=1");
    }
    size_t len = strlen(old) + sizeof(tunable) + 3;
    char *value = malloc(len);

    if (value == NULL) {
        return -1;
    }
    snprintf(value, len, "%s:%s=1", old, tunable);
    int rc = launch_env_set(env, "GLIBC_TUNABLES", value);

    free(value);
    return rc;
}

/* What the standard's keys said of this segment, for the ranks'
 * MPI_INFO_ENV (src/core/info.c reads them). */
static int launch_env_info(const mpiexec_opts_t *opts, const mpiexec_app_t *app, launch_env_t *env)
{
    char num[16];
    int rc;

    snprintf(num, sizeof(num), "%d", app->maxprocs > 0 ? app->maxprocs : app->nprocs);
    rc = launch_env_set(env, "HALO_INFO_MAXPROCS", num);
    if (rc == 0 && app->soft != NULL) {
        rc = launch_env_set(env, "HALO_INFO_SOFT", app->soft);
    }
    if (rc == 0 && app->arch != NULL) {
        rc = launch_env_set(env, "HALO_INFO_ARCH", app->arch);
    }
    if (rc == 0 && app->file != NULL) {
        rc = launch_env_set(env, "HALO_INFO_FILE", app->file);
    }
    if (rc == 0 && opts->nhosts > 0) {
        rc = launch_env_set(env, "HALO_INFO_HOST", opts->hosts[opts->nhosts - 1]);
    }
    return rc;
}

/* mpiexec's environment, then -genv/-x, then the app's -env; without the
 * per-rank names, which the rank's own entries supply; then the huge-page
 * tunable. */
static int launch_env_build(const mpiexec_opts_t *opts, const mpiexec_app_t *app,
                            launch_env_t *env_p)
{
    launch_env_t env = {0};

    for (char **e = environ; *e != NULL; e++) {
        char *eq = strchr(*e, '=');
        char name[256];

        if (eq == NULL || (size_t)(eq - *e) >= sizeof(name)) {
            continue;
        }
        memcpy(name, *e, (size_t)(eq - *e));
        name[eq - *e] = '\0';
        if (launch_env_set(&env, name, eq + 1) != 0) {
            goto fail;
        }
    }
    if (launch_env_apply(&env, &opts->genv) != 0 || launch_env_apply(&env, &app->env) != 0 ||
        launch_env_hugepages(&env) != 0) {
        goto fail;
    }
    for (int i = 0; i < env.n; i++) {
        for (size_t k = 0; k < sizeof(launch_rank_vars) / sizeof(launch_rank_vars[0]); k++) {
            if (launch_env_name_is(env.vars[i], launch_rank_vars[k])) {
                free(env.vars[i]);
                env.vars[i--] = env.vars[--env.n];
                env.vars[env.n] = NULL;
                break;
            }
        }
    }
    if (launch_env_info(opts, app, &env) != 0) {
        goto fail;
    }
    *env_p = env;
    return 0;

fail:
    launch_env_free(&env);
    return -1;
}

/* The value of PATH the ranks of app will see. */
static const char *launch_app_path_var(const mpiexec_opts_t *opts, const mpiexec_app_t *app)
{
    const char *path = getenv("PATH");

    for (int i = 0; i < opts->genv.n; i++) {
        if (strcmp(opts->genv.vars[i].name, "PATH") == 0 && opts->genv.vars[i].value != NULL) {
            path = opts->genv.vars[i].value;
        }
    }
    for (int i = 0; i < app->env.n; i++) {
        if (strcmp(app->env.vars[i].name, "PATH") == 0) {
            path = app->env.vars[i].value;
        }
    }
    return path != NULL ? path : "/usr/local/bin:/usr/bin:/bin";
}

/* Checks that candidate (relative to wdir when relative) is an executable
 * regular file. Returns 0 or an errno value. */
static int launch_check_exec(const char *wdir, const char *candidate)
{
    char full[PATH_MAX];
    struct stat st;

    if (candidate[0] != '/' && wdir != NULL) {
        if (snprintf(full, sizeof(full), "%s/%s", wdir, candidate) >= (int)sizeof(full)) {
            return ENAMETOOLONG;
        }
        candidate = full;
    }
    if (stat(candidate, &st) != 0) {
        return errno;
    }
    if (S_ISDIR(st.st_mode)) {
        return EISDIR;
    }
    if (!S_ISREG(st.st_mode) || access(candidate, X_OK) != 0) {
        return EACCES;
    }
    return 0;
}

/* The first executable dir/prog of a ':'-separated list of directories
 * (an empty one is the working directory), allocated; NULL when none is
 * (*first_err_p becomes EACCES if one was there but not executable). */
static char *launch_search(const char *dirs, const char *wdir, const char *prog, int *first_err_p)
{
    const char *p = dirs;

    while (1) {
        size_t dirlen = strcspn(p, ":");
        char candidate[PATH_MAX];

        if (snprintf(candidate, sizeof(candidate), "%.*s%s%s", (int)dirlen, p,
                     dirlen > 0 ? "/" : "", prog) < (int)sizeof(candidate)) {
            int err = launch_check_exec(wdir, candidate);

            if (err == 0) {
                return strdup(candidate);
            }
            if (err == EACCES) {
                *first_err_p = EACCES;
            }
        }
        if (p[dirlen] == '\0') {
            return NULL;
        }
        p += dirlen + 1;
    }
}

int mpiexec_launch_resolve(mpiexec_opts_t *opts)
{
    for (int a = 0; a < opts->napps; a++) {
        mpiexec_app_t *app = &opts->apps[a];
        const char *prog = app->argv[0];
        struct stat st;
        int err;

        if (app->wdir != NULL && stat(app->wdir, &st) != 0) {
            mpiexec_msg("working directory '%s': %s", app->wdir, strerror(errno));
            return 127;
        }
        if (app->wdir != NULL && !S_ISDIR(st.st_mode)) {
            mpiexec_msg("working directory '%s': not a directory", app->wdir);
            return 127;
        }
        if (strchr(prog, '/') != NULL) {
            err = launch_check_exec(app->wdir, prog);
            if (err != 0) {
                mpiexec_msg("cannot run program '%s': %s", prog, strerror(err));
                return 127;
            }
            app->path = strdup(prog);
        } else {
            int first_err = ENOENT;

            /* -path's directories, then PATH as execvp would search it, but
             * the ranks' PATH. */
            if (app->dirs != NULL) {
                app->path = launch_search(app->dirs, app->wdir, prog, &first_err);
            }
            if (app->path == NULL) {
                app->path = launch_search(launch_app_path_var(opts, app), app->wdir, prog,
                                          &first_err);
            }
            if (app->path == NULL) {
                mpiexec_msg("cannot run program '%s': %s%s%s", prog,
                            first_err == ENOENT ? "not found in " : strerror(first_err),
                            first_err != ENOENT ? "" : app->dirs != NULL ? "-path or " : "",
                            first_err == ENOENT ? "PATH" : "");
                return 127;
            }
        }
        if (app->path == NULL) {
            mpiexec_msg("out of memory");
            return 1;
        }
    }
    return 0;
}

typedef struct launch_child {
    const char *path;
    char **argv;
    char **envp;
    const char *wdir;
    int stdin_fd, stdout_fd, stderr_fd, pmi_fd;
    int bound;  /* 0: no binding */
    cpu_set_t cpus;
    int nofile_soft;
    pid_t parent;
} launch_child_t;

/* In the child, between fork and exec: only async-signal-safe calls
 * matter in principle; mpiexec has one thread, so dprintf is safe too. */
static _Noreturn void launch_child_exec(const launch_child_t *c)
{
    struct rlimit rl;
    sigset_t none;

    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGPIPE, SIG_DFL);

    /* Own process group: mpiexec signals the rank together with whatever
     * it started, and the terminal's ^C reaches the rank only once (through
     * mpiexec's forwarding). Dies with mpiexec, even by SIGKILL. */
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != c->parent) {
        _exit(127);
    }

    if (dup2(c->stdin_fd, 0) < 0 || dup2(c->stdout_fd, 1) < 0 || dup2(c->stderr_fd, 2) < 0 ||
        dup2(c->pmi_fd, LAUNCH_PMI_FD) < 0 || fcntl(LAUNCH_PMI_FD, F_SETFD, 0) < 0) {
        _exit(127);
    }
    if (syscall(SYS_close_range, LAUNCH_PMI_FD + 1, ~0u, 0) != 0) {
        for (int fd = LAUNCH_PMI_FD + 1; fd < 65536; fd++) {
            close(fd);
        }
    }
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && c->nofile_soft >= 0) {
        rl.rlim_cur = (rlim_t)c->nofile_soft;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    if (c->wdir != NULL && chdir(c->wdir) != 0) {
        dprintf(2, "mpiexec: cannot enter working directory '%s': %s\n", c->wdir,
                strerror(errno));
        _exit(127);
    }
    if (c->bound) {
        (void)sched_setaffinity(0, sizeof(c->cpus), &c->cpus);
    }
    execve(c->path, c->argv, c->envp);
    if (errno == ENOEXEC) {
        /* An executable text without "#!": run it with the shell, as
         * execvp and the shells themselves do. */
        int argc = 0;
        char **sh_argv;

        while (c->argv[argc] != NULL) {
            argc++;
        }
        sh_argv = malloc(sizeof(char *) * (size_t)(argc + 2));
        if (sh_argv != NULL) {
            sh_argv[0] = (char *)"sh";
            sh_argv[1] = (char *)c->path;
            for (int i = 1; i <= argc; i++) {
                sh_argv[i + 1] = c->argv[i];
            }
            execve("/bin/sh", sh_argv, c->envp);
        }
    }
    dprintf(2, "mpiexec: cannot execute '%s': %s\n", c->path, strerror(errno));
    _exit(127);
}

static int launch_set_nonblock(int fd)
{
    int flags = fcntl(fd, F_GETFL);

    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* The per-rank variables, followed by the app's environment. */
static char **launch_rank_envp(const mpiexec_job_t *job, const mpiexec_rank_t *r,
                               const launch_env_t *env, char storage[][64])
{
    char **envp = malloc(sizeof(char *) * (size_t)(env->n + 11));
    int n = 0;
    /* Where this mpiexec lives: MPI_Comm_spawn runs it for the new jobs. */
    static char self[PATH_MAX + 16];
    if (!self[0]) {
        char exe[PATH_MAX];
        ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
        exe[k > 0 ? k : 0] = '\0';
        snprintf(self, sizeof self, "HALO_MPIEXEC=%s", exe);
    }

    if (envp == NULL) {
        return NULL;
    }
    snprintf(storage[0], 64, "PMI_FD=%d", LAUNCH_PMI_FD);
    snprintf(storage[1], 64, "PMI_RANK=%d", r->rank);
    snprintf(storage[2], 64, "PMI_SIZE=%d", job->size);
    snprintf(storage[3], 64, "HALO_LOCAL_RANK=%d", r->local_rank);
    snprintf(storage[4], 64, "HALO_LOCAL_SIZE=%d", r->local_size);
    snprintf(storage[5], 64, "MPI_LOCALRANKID=%d", r->local_rank);
    snprintf(storage[6], 64, "MPI_LOCALNRANKS=%d", r->local_size);
    snprintf(storage[7], 64, "%s=halo", HALO_PMI_SERVER_ENV);
    for (int i = 0; i < 8; i++) {
        envp[n++] = storage[i];
    }
    /* The CPUs the node's ranks share (a rank bound to one of them sees
     * only its own): the library compares its node's ranks with them. */
    if (job->ncpus > 0) {
        snprintf(storage[8], 64, "HALO_JOB_CPUS=%d", job->ncpus);
        envp[n++] = storage[8];
    }
    if (self[13] != '\0') {
        envp[n++] = self;
    }
    for (int i = 0; i < env->n; i++) {
        envp[n++] = env->vars[i];
    }
    envp[n] = NULL;
    return envp;
}

/* The CPUs listed in a sysfs file ("0-3,8,10-11"), added to set. Returns
 * the number added, 0 when the file is missing or unreadable. */
static int launch_sysfs_cpus(const char *file, cpu_set_t *set)
{
    char text[4096];
    FILE *f = fopen(file, "r");
    int n = 0;

    if (f == NULL) {
        return 0;
    }
    if (fgets(text, sizeof(text), f) != NULL) {
        for (char *p = text; *p >= '0' && *p <= '9';) {
            long lo = strtol(p, &p, 10), hi = lo;

            if (*p == '-') {
                hi = strtol(p + 1, &p, 10);
            }
            for (long c = lo; c <= hi && c < CPU_SETSIZE; c++) {
                CPU_SET((int)c, set);
                n++;
            }
            if (*p == ',') {
                p++;
            }
        }
    }
    fclose(f);
    return n;
}

/* Where rank r runs: 0 to leave it to the kernel, else 1 with *set_p
 * filled. Rank i of the node goes to the (i mod n)-th of the n CPUs
 * mpiexec may use, several ranks to a CPU when they outnumber them (as the
 * other MPIs place ranks told to overload cores): ranks that talk in pairs
 * or wait on each other then hand their CPU to each other instead of
 * pulling cache lines across, and no two ranks share a CPU while another
 * has none (docs/performance.md, "Binding by default, kept"). A wider
 * --bind-to gives the rank every CPU of mpiexec's that shares that CPU's
 * package, NUMA node or L3 cache (all of them when the kernel does not
 * say); --bind-to none leaves placement to the kernel. */
static int launch_bind_set(const mpiexec_job_t *job, const mpiexec_rank_t *r, cpu_set_t *set_p)
{
    int bind = job->opts->bind, cpu;
    char file[128];
    cpu_set_t wide, mine;

    CPU_ZERO(set_p);
    if (job->ncpus == 0 || bind == MPIEXEC_BIND_NONE) {
        return 0;
    }
    cpu = job->cpus[r->local_rank % job->ncpus];
    if (bind == MPIEXEC_BIND_AUTO || bind == MPIEXEC_BIND_CORE) {
        CPU_SET(cpu, set_p);
        return 1;
    }
    CPU_ZERO(&wide);
    CPU_ZERO(&mine);
    for (int i = 0; i < job->ncpus; i++) {
        CPU_SET(job->cpus[i], &mine);
    }
    if (bind == MPIEXEC_BIND_SOCKET) {
        snprintf(file, sizeof(file), "/sys/devices/system/cpu/cpu%d/topology/package_cpus_list",
                 cpu);
        if (launch_sysfs_cpus(file, &wide) == 0) {
            snprintf(file, sizeof(file),
                     "/sys/devices/system/cpu/cpu%d/topology/core_siblings_list", cpu);
            (void)launch_sysfs_cpus(file, &wide);
        }
    } else if (bind == MPIEXEC_BIND_L3CACHE) {
        snprintf(file, sizeof(file), "/sys/devices/system/cpu/cpu%d/cache/index3/shared_cpu_list",
                 cpu);
        (void)launch_sysfs_cpus(file, &wide);
    } else if (bind == MPIEXEC_BIND_NUMA) {
        for (int node = 0; node < 1024; node++) {
            snprintf(file, sizeof(file), "/sys/devices/system/node/node%d/cpulist", node);
            CPU_ZERO(&wide);
            if (access(file, R_OK) != 0) {
                break;
            }
            if (launch_sysfs_cpus(file, &wide) > 0 && CPU_ISSET(cpu, &wide)) {
                break;
            }
        }
    }
    CPU_AND(set_p, &wide, &mine);
    if (!CPU_ISSET(cpu, set_p)) {
        *set_p = mine;
    }
    return 1;
}

/* "0-3,8" for --report-bindings. */
static void launch_cpus_text(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;

    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE && len + 24 < size; c++) {
        int hi = c;

        if (!CPU_ISSET(c, set)) {
            continue;
        }
        while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set)) {
            hi++;
        }
        len += (size_t)snprintf(buf + len, size - len, len > 0 ? ",%d" : "%d", c);
        if (hi > c) {
            len += (size_t)snprintf(buf + len, size - len, "-%d", hi);
        }
        c = hi;
    }
}

static int launch_rank(mpiexec_job_t *job, mpiexec_rank_t *r, const launch_env_t *env)
{
    const mpiexec_app_t *app = &job->opts->apps[r->app];
    int sp[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1}, inp[2] = {-1, -1};
    char storage[9][64];
    char **envp = NULL;
    launch_child_t child;
    const char *what;
    pid_t pid;

    what = "socketpair";
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) != 0) {
        goto fail;
    }
    what = "pipe";
    if (pipe2(outp, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0 ||
        (r->rank == 0 && job->stdin_open && pipe2(inp, O_CLOEXEC) != 0)) {
        goto fail;
    }
    what = "memory";
    envp = launch_rank_envp(job, r, env, storage);
    if (envp == NULL) {
        goto fail;
    }

    child.path = app->path;
    child.argv = app->argv;
    child.envp = envp;
    child.wdir = app->wdir;
    child.stdin_fd = inp[0] >= 0 ? inp[0] : job->null_fd;
    child.stdout_fd = outp[1];
    child.stderr_fd = errp[1];
    child.pmi_fd = sp[1];
    child.nofile_soft = job->orig_nofile_soft;
    child.parent = getpid();
    child.bound = launch_bind_set(job, r, &child.cpus);

    what = "fork";
    pid = fork();
    if (pid < 0) {
        goto fail;
    }
    if (pid == 0) {
        launch_child_exec(&child);
    }
    free(envp);
    close(sp[1]);
    close(outp[1]);
    close(errp[1]);
    if (inp[0] >= 0) {
        close(inp[0]);
        job->stdin_pipe = inp[1];
        (void)launch_set_nonblock(inp[1]);
    }
    /* Also here, so a signal sent before the child ran setpgid finds the
     * group (whichever of the two calls comes second fails harmlessly). */
    (void)setpgid(pid, pid);
    if (job->opts->report_bindings) {
        char text[256];

        launch_cpus_text(&child.cpus, text, sizeof(text));
        mpiexec_msg("rank %d (pid %ld, %s): %s%s", r->rank, (long)pid, app->argv[0],
                    child.bound ? "bound to CPUs " : "not bound", text);
    }
    r->pid = pid;
    r->alive = 1;
    job->nalive++;
    r->pmi_fd = sp[0];
    r->out.fd = outp[0];
    r->err.fd = errp[0];
    (void)launch_set_nonblock(sp[0]);
    (void)launch_set_nonblock(outp[0]);
    (void)launch_set_nonblock(errp[0]);
    return 0;

fail:
    mpiexec_msg("cannot start rank %d: %s failed: %s; ending the job", r->rank, what,
                strerror(errno));
    free(envp);
    for (int i = 0; i < 2; i++) {
        int fds[4] = {sp[i], outp[i], errp[i], inp[i]};

        for (int k = 0; k < 4; k++) {
            if (fds[k] >= 0) {
                close(fds[k]);
            }
        }
    }
    return -1;
}

int mpiexec_launch_job(mpiexec_job_t *job)
{
    const mpiexec_opts_t *opts = job->opts;
    int rc = 0;

    /* Nothing buffered in stdio may be duplicated into the children. */
    fflush(stdout);
    fflush(stderr);
    for (int a = 0; a < opts->napps && rc == 0; a++) {
        const mpiexec_app_t *app = &opts->apps[a];
        launch_env_t env;

        if (launch_env_build(opts, app, &env) != 0) {
            mpiexec_msg("out of memory building the environment; ending the job");
            rc = -1;
            break;
        }
        for (int i = 0; i < app->nprocs && rc == 0; i++) {
            rc = launch_rank(job, &job->ranks[app->first_rank + i], &env);
        }
        launch_env_free(&env);
    }
    if (rc != 0) {
        mpiexec_loop_end_job(job, 1, 1, SIGTERM);
    }
    return rc;
}
