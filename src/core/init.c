/* Start-up and shut-down of the library, and the environment queries. */
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include "binding/api_gen.h"
#include "coll/coll.h"
#include "coll/sched.h"
#include "core/attr.h"
#include "core/comm.h"
#include "core/config.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/lock.h"
#include "core/session.h"
#include "io/file.h"
#include "pmi.h"
#include "progress/progress.h"
#include "pt2pt/pt2pt.h"
#include "rma/win.h"

_Atomic int halo_state = HALO_STATE_PRE_INIT;
int halo_thread_level = MPI_THREAD_SINGLE;
int halo_error_checking = 1;
int halo_lock_enabled;
pthread_mutex_t halo_big_lock = PTHREAD_MUTEX_INITIALIZER;
HALO_TLS int halo_lock_depth;
halo_world_t halo_world;

static pthread_t main_thread;
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* Read by mpiexec, not here: declared so that halo_info and MPI_T list it. */
HALO_CFG_INT(cfg_hugepages, "HALO_HUGEPAGES", 0,
             "1: mpiexec asks the ranks' glibc to back allocations of 2 MiB or more with "
             "transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1); 0 leaves malloc as "
             "it is");
HALO_CFG_INT(cfg_fake_nodes, "HALO_FAKE_NODES", 0,
             "pretend to the collectives that the ranks sit on this many nodes (blocks of "
             "consecutive ranks), to test node-aware algorithms on one machine");

int halo_cfg_error_checking(void);
void halo_attr_init_predef(void);
void halo_errhandler_init(void);
void halo_dtype_init(void);
void halo_dtype_finalize(void);
void halo_dynproc_world_init(void);
void halo_dynproc_finalize(void);
void halo_datarep_finalize(void);

static void read_node_map(void)
{
    int n = halo_world.size;
    int *node_of = halo_calloc((size_t)n, sizeof(int));
    int nnodes = 1;
    if (n > 1 && halo_pmi_get_process_mapping(node_of, &nnodes) != 0) {
        /* No mapping from the launcher: compare host names. */
        char key[64], *hosts = halo_malloc((size_t)n * MPI_MAX_PROCESSOR_NAME);
        snprintf(key, sizeof key, "halo-host-%d", halo_world.rank);
        halo_pmi_put(key, halo_world.hostname);
        halo_pmi_fence();
        nnodes = 0;
        for (int r = 0; r < n; r++) {
            char *h = hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME;
            snprintf(key, sizeof key, "halo-host-%d", r);
            if (halo_pmi_get(r, key, h, MPI_MAX_PROCESSOR_NAME) != 0)
                halo_fatal("cannot learn the host of rank %d from the launcher", r);
            node_of[r] = -1;
            for (int q = 0; q < r; q++) {
                if (!strcmp(h, hosts + (size_t)q * MPI_MAX_PROCESSOR_NAME)) {
                    node_of[r] = node_of[q];
                    break;
                }
            }
            if (node_of[r] < 0)
                node_of[r] = nnodes++;
        }
        free(hosts);
    }
    halo_world.nnodes = nnodes;
    halo_world.procs = halo_calloc((size_t)n + HALO_FAR_MAX, sizeof(halo_proc_t));
    halo_world.nprocs = n;
    int *count = halo_calloc((size_t)nnodes, sizeof(int));
    for (int r = 0; r < n; r++) {
        halo_world.procs[r].node = node_of[r];
        halo_world.procs[r].cnode = node_of[r];
        halo_world.procs[r].local_rank = count[node_of[r]]++;
    }
    /* Pretended nodes are blocks of consecutive ranks; only the collectives'
     * view of the machine changes (the transport still reaches every rank
     * of the real node through shared memory). */
    long fake = halo_cfg_get(&cfg_fake_nodes);
    if (fake > 1) {
        int k = (int)(fake < n ? fake : n);
        int per = (n + k - 1) / k;
        for (int r = 0; r < n; r++)
            halo_world.procs[r].cnode = r / per;
    }
    halo_world.node = node_of[halo_world.rank];
    halo_world.local_rank = halo_world.procs[halo_world.rank].local_rank;
    halo_world.local_size = count[halo_world.node];
    halo_world.local_ranks = halo_malloc((size_t)halo_world.local_size * sizeof(int));
    for (int r = 0; r < n; r++)
        if (node_of[r] == halo_world.node)
            halo_world.local_ranks[halo_world.procs[r].local_rank] = r;
    free(count);
    free(node_of);
}

/* Who uses the library: the world model (MPI_Init .. MPI_Finalize) and the
 * open sessions. The library (PMI, transports, the internal world and self
 * communicators) starts with the first of MPI_Init and MPI_Session_init and
 * is shut down once nobody uses it and it cannot be needed again: at
 * MPI_Finalize, or at the last MPI_Session_finalize after MPI_Finalize, or
 * at process exit when only sessions used it (MPI_Init may still come until
 * then). It does not start twice: the launcher's PMI connection and the
 * node's shared-memory segment are set up once per process. halo_state, which
 * the bindings check, is RUNNING while someone uses the library. */
enum { LIB_DOWN = 0, LIB_UP, LIB_SHUT };
static int lib_stage = LIB_DOWN;
static _Atomic int world_stage = HALO_STATE_PRE_INIT;   /* the world model alone */
static int world_level = MPI_THREAD_SINGLE;     /* what MPI_Init_thread granted */
static int nsessions;

static int clamp_level(int required)
{
    if (required == MPI_THREAD_SINGLE || required == MPI_THREAD_FUNNELED ||
        required == MPI_THREAD_SERIALIZED || required == MPI_THREAD_MULTIPLE)
        return required;
    return required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
}

/* Raises the level the library provides. Below MPI_THREAD_MULTIPLE the
 * library lock is off; turning it on is safe here because the caller holds
 * init_lock and no other thread may be inside the library at a lower level.
 * The level is never lowered. Context-id agreement depends on it, so the
 * processes of a job must raise it alike (the same requests in the same
 * order), as they must pass the same level to MPI_Init_thread. */
static void raise_level(int level)
{
    if (level <= halo_thread_level)
        return;
    halo_thread_level = level;
    halo_lock_enabled = level == MPI_THREAD_MULTIPLE;
}

static void set_state(void)
{
    int st = HALO_STATE_PRE_INIT;
    if (world_stage == HALO_STATE_RUNNING || nsessions > 0)
        st = HALO_STATE_RUNNING;
    else if (lib_stage == LIB_SHUT)
        st = HALO_STATE_FINALIZED;
    atomic_store(&halo_state, st);
}

static void lib_shutdown(void);

static void lib_atexit(void)
{
    pthread_mutex_lock(&init_lock);
    /* Only sessions used the library and all are finalized: tell the
     * launcher this process is done. A process that exits inside the world
     * model or with a session open is reported by the launcher instead. */
    if (lib_stage == LIB_UP && world_stage == HALO_STATE_PRE_INIT && nsessions == 0)
        lib_shutdown();
    pthread_mutex_unlock(&init_lock);
}

static void lib_start(int argc, char **argv, int level)
{
    halo_pmi_info_t pi;
    if (halo_pmi_init(&pi) != 0) {
        fprintf(stderr, "halo: cannot reach the process manager (PMI); was this started by a "
                        "launcher that Halo understands?\n");
        _exit(1);
    }
    halo_world.rank = pi.rank;
    halo_world.size = pi.size;
    halo_world.appnum = pi.appnum;
    halo_world.universe_size = pi.universe_size;
    snprintf(halo_world.kvsname, sizeof halo_world.kvsname, "%s", pi.kvsname);
    halo_world.job_key = halo_fnv1a(HALO_FNV_BASIS, halo_world.kvsname, strlen(halo_world.kvsname)) &
                         ((1ull << 40) - 1);
    if (gethostname(halo_world.hostname, sizeof halo_world.hostname) != 0)
        snprintf(halo_world.hostname, sizeof halo_world.hostname, "localhost");
    read_node_map();

    halo_error_checking = halo_cfg_error_checking();
    halo_thread_level = MPI_THREAD_SINGLE;
    main_thread = pthread_self();

    halo_errhandler_init();
    halo_group_init();
    halo_dtype_init();
    halo_op_init();
    halo_progress_init();
    halo_pt2pt_init();
    halo_comm_init();
    halo_coll_init();
    halo_attr_init_predef();
    halo_session_init_kind();
    halo_win_init();
    halo_file_init();
    halo_info_env_fill(argc, argv, level);
    raise_level(level);
    lib_stage = LIB_UP;
    atexit(lib_atexit);
}

/* Called with init_lock held and the library lock taken. */
static void lib_shutdown(void)
{
    halo_lock();
    halo_dynproc_finalize();
    halo_datarep_finalize();
    halo_bsend_finalize();
    halo_comm_finalize();
    halo_sched_cache_drain();
    halo_pt2pt_finalize();
    halo_progress_finalize();
    halo_dtype_finalize();
    halo_attr_finalize();
    halo_pmi_finalize();
    lib_stage = LIB_SHUT;
    set_state();
    halo_unlock();
    free(halo_world.procs);
    free(halo_world.local_ranks);
    halo_world.procs = NULL;
    halo_world.local_ranks = NULL;
}

static int do_init(int *argc, char ***argv, int required, int *provided)
{
    pthread_mutex_lock(&init_lock);
    if (world_stage != HALO_STATE_PRE_INIT) {
        int st = world_stage;
        pthread_mutex_unlock(&init_lock);
        return halo_err(MPI_ERR_OTHER, ": MPI is already %s", st == HALO_STATE_RUNNING
                        ? "initialized" : "finalized (it cannot be initialized again)");
    }
    if (lib_stage == LIB_SHUT) {
        pthread_mutex_unlock(&init_lock);
        return halo_err(MPI_ERR_OTHER, ": Halo was shut down in this process and cannot start again");
    }
    int level = clamp_level(required);
    if (lib_stage == LIB_DOWN) {
        lib_start(argc ? *argc : 0, argv ? *argv : NULL, level);
    } else {
        /* Sessions started the library: MPI_INFO_ENV gets the arguments now. */
        halo_info_env_fill(argc ? *argc : 0, argv ? *argv : NULL, level);
        raise_level(level);
        main_thread = pthread_self();
    }
    world_level = level;
    world_stage = HALO_STATE_RUNNING;
    set_state();
    pthread_mutex_unlock(&init_lock);
    /* A spawned job meets its parent before MPI_Init returns. */
    halo_lock();
    halo_dynproc_world_init();
    halo_unlock();
    if (provided)
        *provided = level;
    return MPI_SUCCESS;
}

int halo_api_init(int *argc, char ***argv)
{
    return do_init(argc, argv, MPI_THREAD_SINGLE, NULL);
}

int halo_api_init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return halo_err(MPI_ERR_ARG, "(provided=NULL): an output argument is required");
    return do_init(argc, argv, required, provided);
}

int halo_api_finalize(void)
{
    pthread_mutex_lock(&init_lock);
    halo_lock();
    /* The standard asks for MPI_COMM_SELF's attributes to be deleted first,
     * as if the communicator were freed, so tools can flush from callbacks. */
    halo_attr_delete_all(HALO_KIND_COMM, &halo_comm_self, &halo_comm_self.attrs);
    halo_bsend_flush_process();
    int rc = halo_coll_barrier(&halo_comm_world);
    world_stage = HALO_STATE_FINALIZED;
    halo_unlock();
    if (nsessions == 0)
        lib_shutdown();
    set_state();
    pthread_mutex_unlock(&init_lock);
    return rc;
}

/* ---------------------------------------------------------------- sessions */

int halo_lib_session_open(int required, int *provided_p)
{
    pthread_mutex_lock(&init_lock);
    if (lib_stage == LIB_SHUT) {
        pthread_mutex_unlock(&init_lock);
        return halo_err(MPI_ERR_OTHER, ": MPI_Finalize has shut Halo down in this process; it cannot "
                        "start again for a session");
    }
    int level = clamp_level(required);
    if (lib_stage == LIB_DOWN)
        lib_start(0, NULL, level);
    else
        raise_level(level);
    nsessions++;
    set_state();
    /* A session gets what the library provides, which is at least what it
     * asked for. */
    *provided_p = halo_thread_level;
    pthread_mutex_unlock(&init_lock);
    return MPI_SUCCESS;
}

void halo_lib_session_close(void)
{
    pthread_mutex_lock(&init_lock);
    nsessions--;
    if (nsessions == 0 && world_stage == HALO_STATE_FINALIZED && lib_stage == LIB_UP)
        lib_shutdown();
    set_state();
    pthread_mutex_unlock(&init_lock);
}

/* Both refer to the world model only (sessions do not count). */
int halo_api_initialized(int *flag)
{
    *flag = world_stage != HALO_STATE_PRE_INIT;
    return MPI_SUCCESS;
}

int halo_api_finalized(int *flag)
{
    *flag = world_stage == HALO_STATE_FINALIZED;
    return MPI_SUCCESS;
}

int halo_api_query_thread(int *provided)
{
    *provided = world_level;
    return MPI_SUCCESS;
}

int halo_api_is_thread_main(int *flag)
{
    *flag = pthread_equal(pthread_self(), main_thread);
    return MPI_SUCCESS;
}

int halo_api_abort(MPI_Comm comm, int errorcode)
{
    (void)comm;
    char msg[128];
    snprintf(msg, sizeof msg, "MPI_Abort(errorcode=%d) called by rank %d", errorcode, halo_world.rank);
    fflush(stdout);
    fflush(stderr);
    if (halo_abort_cleanup)
        halo_abort_cleanup();
    halo_pmi_abort(errorcode, msg);
    _exit(errorcode);
}

double halo_api_wtime(void)
{
    return halo_now();
}

double halo_api_wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int halo_api_get_processor_name(char *name, int *resultlen)
{
    char host[MPI_MAX_PROCESSOR_NAME];
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", host);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

int halo_api_get_version(int *version, int *subversion)
{
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int halo_api_get_library_version(char *version, int *resultlen)
{
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
             "Halo MPI %d.%d (MPI %d.%d, standard ABI %d.%d; shared-memory transport with CMA)",
             HALO_VERSION_MAJOR, HALO_VERSION_MINOR, MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION,
             MPI_ABI_SUBVERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}

int halo_api_alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    (void)info;
    if (size < 0)
        return halo_err(MPI_ERR_SIZE, "(size=%ld): must be non-negative", (long)size);
    void *p = NULL;
    if (posix_memalign(&p, 64, size ? (size_t)size : 1) != 0)
        return halo_err(MPI_ERR_NO_MEM, "(size=%ld): out of memory", (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}

int halo_api_free_mem(void *base)
{
    free(base);
    return MPI_SUCCESS;
}

int halo_api_pcontrol(const int level)
{
    (void)level;
    return MPI_SUCCESS;
}
