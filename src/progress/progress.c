/* Polling and waiting.
 *
 * Waiting is spin, then yield, then sleep. Sleeping uses the doorbell of
 * this process (a futex word, in the node's shared segment when there is
 * one) and a "sleeping" counter next to it. The lost-wakeup argument:
 *   waiter:  seq = doorbell; sleeping++; fence; poll; if nothing: futex_wait(doorbell, seq)
 *   sender:  publish packet; fence; if sleeping: doorbell++; futex_wake
 * The two fences order each side's write before its read, so at least one
 * side sees the other: either the waiter's poll finds the packet, or the
 * sender sees sleeping > 0 and bumps the doorbell, and then futex_wait
 * returns at once because the word no longer equals seq. Where the kernel
 * allows, the fences are asymmetric (transport.h): the sender's is only a
 * compiler barrier and the waiter's is membarrier(GLOBAL_EXPEDITED), which
 * makes every running rank pass a full barrier, so a store a sender made
 * before it is visible to the waiter's poll, and one made after it comes
 * with a read of sleeping that sees the waiter's increment. A timeout bounds
 * the sleep anyway, as a safety net: 50 ms at first
 * (HALO_WAIT_SLEEP_FIRST_MS), doubling while sleeps
 * end with nothing to do, up to HALO_WAIT_SLEEP_MAX_MS, so a rank blocked
 * for seconds wakes a few times a second at most (each wakeup costs tens of
 * microseconds of CPU on a virtual machine). */
#include "progress/progress.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"
#include "core/lock.h"
#include "transport/transport.h"

HALO_CFG_STR(cfg_wait_policy, "HALO_WAIT_POLICY", "auto",
             "how a blocked rank waits: spin, yield, sleep, or auto (spin briefly, then yield, "
             "then sleep; shorter spins when ranks outnumber cores)");
HALO_CFG_INT(cfg_spin, "HALO_WAIT_SPIN_US", -1,
             "microseconds a waiting rank polls before it starts to yield (-1: chosen by HALO_WAIT_POLICY)");
HALO_CFG_INT(cfg_yield, "HALO_WAIT_YIELD_US", -1,
             "microseconds a waiting rank yields before it sleeps (-1: chosen by HALO_WAIT_POLICY)");
HALO_CFG_INT(cfg_sleep_max, "HALO_WAIT_SLEEP_MAX_MS", 800,
             "longest sleep, in milliseconds, of a rank waiting with nothing to do before it polls "
             "again (a safety net: arrivals wake it at once)");
HALO_CFG_INT(cfg_outside_load, "HALO_WAIT_OUTSIDE_LOAD", 1,
             "1: under the automatic policy, waits stop yielding for a while when processes of no MPI job "
             "keep the CPUs (a yield lasts a time slice); 0: they yield whatever runs beside them");
HALO_CFG_INT(cfg_sleep_first, "HALO_WAIT_SLEEP_FIRST_MS", 50,
             "first sleep, in milliseconds, of a waiting rank (doubling up to HALO_WAIT_SLEEP_MAX_MS "
             "while it wakes to nothing); tests set it high so that a lost wakeup stalls visibly");

#define MAX_HOOKS 8

static halo_progress_hook_fn_t *hooks[MAX_HOOKS];
static int nhooks;
/* Phase ends, in seconds of idle waiting; negative: the phase never ends. */
static double spin_time, yield_time;
static bool node_oversubscribed;
static long sleep_max_ms, sleep_first_ms;

bool halo_progress_oversubscribed(void)
{
    return node_oversubscribed;
}

static long node_cpus;     /* the node's online processors */
static long node_procs;    /* this job's ranks on the node and those of jobs it met there */
static long job_cpus;      /* the processors the job's ranks on the node share */
static bool auto_policy;   /* HALO_WAIT_POLICY=auto and no spin or yield time given */
static bool watch_load;    /* auto_policy and HALO_WAIT_OUTSIDE_LOAD=1 */

/* Outside load (outside_load below). */
static int loadavg_fd = -2;         /* /proc/loadavg; -2 not opened yet, -1 cannot be read */
static double load_checked = -1;    /* when it was last read */
static double loaded_until = -1;    /* waits do not yield until then */
static double load_since = -1;      /* the first of the latest run of signs of load */
static unsigned long yields;        /* yields of the automatic policy */
static int presence_fd = -1;        /* this process's abstract socket "halo-proc-PID" */

/* The processors the node's ranks of the job share: what mpiexec may use
 * (HALO_JOB_CPUS: a rank it binds sees one CPU only), else this process's
 * affinity mask, else, for a rank bound to one CPU by someone else, the
 * node's online processors. */
static long count_job_cpus(void)
{
    const char *v = getenv("HALO_JOB_CPUS");
    long n = v ? atol(v) : 0;
    if (n > 0)
        return n;
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    n = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
    if (n <= 0 || (n == 1 && halo_world.local_size > 1))
        n = online;
    return n > 0 ? n : 1;
}

/* Every process of every Halo job on the node that watches the load binds
 * an abstract socket named "halo-proc-PID" (gone with the process, nothing
 * to clean up); /proc/net/unix lists them, so the ranks of other jobs are
 * told from processes of no MPI job. -1 when it cannot. */
static int publish_presence(void)
{
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    int len = snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "halo-proc-%ld", (long)getpid());
    if (bind(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len)) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The Halo processes on the node (of every job that watches the load), or
 * -1 when they cannot be counted. */
static long halo_procs_here(void)
{
    if (presence_fd < 0)
        return -1;
    FILE *f = fopen("/proc/net/unix", "re");
    if (!f)
        return -1;
    long n = 0;
    char line[512];
    while (fgets(line, sizeof line, f))
        n += strstr(line, " @halo-proc-") != NULL;
    fclose(f);
    return n;
}

long halo_progress_job_cpus(void)
{
    if (job_cpus == 0)   /* a tool that asks before MPI_Init (halo_info) */
        return count_job_cpus();
    return job_cpus;
}

void halo_progress_note_node_procs(int n)
{
    /* Processes of other jobs came to share the node's cores: once they
     * outnumber them, wait as an oversubscribed job does. */
    if (n > node_procs)
        node_procs = n;
    if (auto_policy && spin_time != 0 && n > node_cpus) {
        spin_time = 0;
        yield_time = 5e-3;
    }
}

void halo_progress_init(void)
{
    const char *policy = halo_cfg_get_str(&cfg_wait_policy);
    node_cpus = sysconf(_SC_NPROCESSORS_ONLN);
    job_cpus = count_job_cpus();
    node_procs = halo_world.local_size;
    int oversubscribed = halo_world.local_size > job_cpus;
    node_oversubscribed = oversubscribed;
    /* Auto: with a core each, spin a while (a reply usually comes within
     * microseconds), yield a little, then sleep. With more ranks than
     * cores, spinning only steals the core from the rank we wait for:
     * yield at once, and sleep after a few milliseconds, so a rank blocked
     * for long costs nothing. */
    if (!strcmp(policy, "spin")) {
        spin_time = -1;
        yield_time = 0;
    } else if (!strcmp(policy, "yield")) {
        spin_time = 0;
        yield_time = -1;
    } else if (!strcmp(policy, "sleep")) {
        spin_time = 0;
        yield_time = 0;
    } else {
        if (strcmp(policy, "auto"))
            halo_warn("HALO_WAIT_POLICY=%s is not one of spin, yield, sleep, auto; using auto", policy);
        spin_time = oversubscribed ? 0 : 200e-6;
        yield_time = oversubscribed ? 5e-3 : 2e-3;
        auto_policy = halo_cfg_get(&cfg_spin) < 0 && halo_cfg_get(&cfg_yield) < 0;
    }
    watch_load = auto_policy && halo_cfg_get(&cfg_outside_load) == 1;
    if (watch_load)
        presence_fd = publish_presence();
    if (halo_cfg_get(&cfg_spin) >= 0)
        spin_time = 1e-6 * (double)halo_cfg_get(&cfg_spin);
    if (halo_cfg_get(&cfg_yield) >= 0)
        yield_time = 1e-6 * (double)halo_cfg_get(&cfg_yield);
    sleep_max_ms = halo_cfg_get(&cfg_sleep_max);
    if (sleep_max_ms < 1) {
        halo_warn("HALO_WAIT_SLEEP_MAX_MS=%ld is below 1; using 1", sleep_max_ms);
        sleep_max_ms = 1;
    }
    sleep_first_ms = halo_cfg_get(&cfg_sleep_first);
    if (sleep_first_ms < 1) {
        halo_warn("HALO_WAIT_SLEEP_FIRST_MS=%ld is below 1; using 1", sleep_first_ms);
        sleep_first_ms = 1;
    }
    if (sleep_first_ms > sleep_max_ms)
        sleep_first_ms = sleep_max_ms;
}

void halo_progress_finalize(void)
{
    if (loadavg_fd >= 0)
        close(loadavg_fd);
    loadavg_fd = -2;
    if (presence_fd >= 0)
        close(presence_fd);
    presence_fd = -1;
    load_checked = -1;
    loaded_until = -1;
    load_since = -1;
    yields = 0;
}

void halo_progress_hook_add(halo_progress_hook_fn_t *fn)
{
    for (int i = 0; i < nhooks; i++)
        if (hooks[i] == fn)
            return;
    if (nhooks == MAX_HOOKS)
        halo_fatal("too many progress hooks");
    hooks[nhooks++] = fn;
}

static inline int poll_hooks(void)
{
    int n = 0;
    for (int i = 0; i < nhooks; i++)
        n += hooks[i]();
    return n;
}

int halo_progress_poll(void)
{
    int n = halo_tr_poll();
    return n + poll_hooks();
}

/* Idle polls at the start of a wait that do not pause the core (about a
 * microsecond of polling). */
#define FAST_POLLS 32

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Outside load (HALO_WAIT_OUTSIDE_LOAD, on by default). A rank that
 * yields while processes of no MPI job are runnable on its CPU hands the
 * CPU to one of them for a whole time slice (2-8 ms measured here, against
 * microseconds when the CPU goes to another waiting rank), and the rank it
 * waits for, queued behind them too, sends a time slice later: a step of a
 * collective took milliseconds. A sleeper that the sender's doorbell wakes
 * runs again at once instead, ahead of the busy processes. But sleeping
 * costs a rank some 25 us a message where yielding to ranks that yield
 * back costs one or two (4 ranks on 2 CPUs), so waits sleep instead of
 * yielding only for a while (LOAD_HOLD_S), once signs of load have lasted
 * LOAD_PERSIST_S (processes starting beside the job, another job's ranks
 * among them, are a passing load). A sign is a yield that lasted
 * SLOW_YIELD_S or more (every 8th yield is timed) while more tasks were
 * runnable than the node has CPUs and at least two of them were not Halo
 * processes: the kernel's count in /proc/loadavg (read at most every
 * LOAD_CHECK_S seconds) less the Halo processes of the node, counted by
 * their abstract sockets in /proc/net/unix, those of this job asleep on
 * their doorbells excepted. Every part is needed: a rank of this job
 * copying a large block keeps the CPU for milliseconds too, and the ranks
 * of another job on the node are runnable tasks as well (counted as busy
 * processes, two 4-rank jobs at once took 5 to 30 times as long). A rank
 * with a core of its own spins as before, then sleeps; an oversubscribed
 * one sleeps at once. A job confined to some of the node's CPUs does not
 * look. */
#define SLOW_YIELD_S 1e-3
#define LOAD_HOLD_S 0.5
#define LOAD_PERSIST_S 0.1
#define LOAD_CHECK_S 10e-3

/* Runnable tasks on the node, or -1. */
static long runnable_tasks(void)
{
    /* The count is the node's: it says nothing of the CPUs a job confined to
     * some of them runs on (a cpuset, a container's share). */
    if (loadavg_fd == -2)
        loadavg_fd = job_cpus < node_cpus ? -1 : open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (loadavg_fd < 0)
        return -1;
    char buf[128];
    ssize_t n = pread(loadavg_fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    /* "0.50 2.63 3.75 3/234 12345": the fourth field, runnable/total. */
    const char *p = buf;
    for (int field = 0; field < 3 && p; field++) {
        p = strchr(p, ' ');
        p = p ? p + 1 : NULL;
    }
    return p ? strtol(p, NULL, 10) : -1;
}

uint64_t halo_progress_loaded_waits;

/* Whether waits skip yielding for the load (a load and a branch while not). */
static inline bool outside_load(void)
{
    if (loaded_until < 0)
        return false;
    if (halo_now() < loaded_until)
        return true;
    loaded_until = -1;
    return false;
}

/* Yields the CPU; every 8th yield is timed, and one that lasted long looks
 * at the node's load. */
static void yield_cpu(void)
{
    bool timed = watch_load && (++yields & 7) == 0;
    double t0 = timed ? halo_now() : 0;
    int depth = halo_lock_yield_begin();
    sched_yield();
    halo_lock_yield_end(depth);
    if (!timed)
        return;
    double now = halo_now();
    if (now - t0 < SLOW_YIELD_S || (load_checked >= 0 && now - load_checked < LOAD_CHECK_S))
        return;
    load_checked = now;
    long n = runnable_tasks();
    if (n < 0)   /* a confined job, or no count to read */
        return;
    /* More runnable tasks than CPUs, and of them at least two that are not
     * Halo processes (those are at most the ones not asleep on their
     * doorbells; the other jobs' are all taken as awake). */
    long procs = halo_procs_here();
    if (procs < node_procs)
        procs = node_procs;
    bool sign = n > node_cpus && n - (procs - halo_tr_node_sleepers()) > 1;
    /* A run of signs: broken by a check without one, or by none for
     * LOAD_HOLD_S; it counts once it has lasted LOAD_PERSIST_S. */
    if (!sign || (load_since >= 0 && now - load_since > LOAD_HOLD_S))
        load_since = sign ? now : -1;
    else if (load_since < 0)
        load_since = now;
    else if (now - load_since >= LOAD_PERSIST_S) {
        loaded_until = now + LOAD_HOLD_S;
        load_since = -1;
    }
}

/* Sleeps at most ms milliseconds; returns true when the sleep ran out with
 * no ring of the doorbell. */
static bool sleep_on_doorbell(halo_progress_done_fn_t *done, void *arg, long ms)
{
    _Atomic uint32_t *bell = halo_tr_doorbell();
    _Atomic uint32_t *sleeping = halo_tr_sleeping();
    uint32_t seq = atomic_load(bell);
    atomic_store_explicit(halo_tr_slept_on(), seq, memory_order_relaxed);
    atomic_fetch_add(sleeping, 1);
    if (halo_tr_sleep_fence() != 0 || halo_progress_poll() > 0 || done(arg)) {
        atomic_fetch_sub(sleeping, 1);
        return false;
    }
    int depth = halo_lock_yield_begin();
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000 * 1000};
    long rc = syscall(SYS_futex, (uint32_t *)bell,
                      halo_tr_doorbell_shared() ? FUTEX_WAIT : FUTEX_WAIT_PRIVATE, seq, &ts, NULL, 0);
    bool timed_out = rc < 0 && errno == ETIMEDOUT;
    halo_lock_yield_end(depth);
    atomic_fetch_sub(sleeping, 1);
    return timed_out;
}

static inline void progress_wait(halo_progress_done_fn_t *done, void *arg, long fast_polls)
{
    const long first_nap = sleep_first_ms;
    long idle = 0, nap = first_nap;
    double since = -1, waited = 0;
    bool counted = false;
    while (!done(arg)) {
        /* A packet that ends the wait returns at once: the hooks (one-sided
         * queues, pending sends, collective flags) wait for the next poll,
         * and the reply to it goes out that much sooner. */
        int n = halo_tr_poll();
        if (n > 0 && done(arg))
            return;
        if (n + poll_hooks() > 0) {
            idle = 0;
            since = -1;
            waited = 0;
            nap = first_nap;
            continue;
        }
        if (done(arg))
            return;
        /* The clock is read every 32 idle polls, from the 32nd on: a wait
         * that ends sooner (most do) never reads it. */
        if ((++idle & 31) == 0) {
            double t = halo_now();
            if (since < 0)
                since = t;
            waited = t - since;
        }
        bool spinning = spin_time < 0 || waited < spin_time;
        bool yielding = !spinning && (yield_time < 0 || waited < spin_time + yield_time);
        if (spinning) {
            /* The first idle polls of a wait go without the pause
             * instruction: a reply to a short message is usually a cache
             * line away, and a pause (tens of cycles here) between seeing
             * it and acting on it cost 6-8 ns of a 100 ns one-way latency.
             * Only the first: a wait through a stream of arrivals (Waitall
             * on a window of messages) would otherwise keep pulling the
             * lines the sender is filling (8-byte to 4 KiB windows lost
             * 3-10%). */
            bool relax = fast_polls <= 0;
            fast_polls -= !relax;
            if (halo_lock_enabled) {
                int depth = halo_lock_yield_begin();
                if (relax)
                    cpu_relax();
                halo_lock_yield_end(depth);
            } else if (relax) {
                cpu_relax();
            }
        } else if (yielding && !outside_load()) {
            yield_cpu();
        } else {
            if (yielding && !counted) {   /* it would have yielded, but for the load */
                counted = true;
                HALO_COUNT_ADD(halo_progress_loaded_waits, 1);
            }
            if (sleep_on_doorbell(done, arg, nap))
                nap = 2 * nap < sleep_max_ms ? 2 * nap : sleep_max_ms;
        }
    }
}

void halo_progress_wait(halo_progress_done_fn_t *done, void *arg)
{
    progress_wait(done, arg, FAST_POLLS);
}

void halo_progress_wait_paced(halo_progress_done_fn_t *done, void *arg)
{
    progress_wait(done, arg, 0);
}

void halo_progress_signal(void)
{
    halo_tr_ring_self();
}
