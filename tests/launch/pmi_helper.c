/* A rank for the launch tests: uses only the PMI client (there is no MPI
 * yet) and does one thing per run, chosen by argv[1]. Ranks that are not
 * the "actor" of a failure test wait in pause() until mpiexec ends them,
 * which is what the teardown tests measure.
 *
 *   info                      print rank/size/appnum/universe/kvsname
 *   kvs [LEN]                 put a LEN-byte value per rank, fence, get all
 *   mapping                   check PMI_process_mapping: all ranks on node 0
 *   exit CODE R               rank R exits CODE without finalize; others wait
 *   exit-finalized CODE R     all finalize; rank R then exits CODE, others 0
 *   no-finalize R             rank R exits 0 without finalize; others wait
 *   close-pmi R               rank R closes PMI_FD and lives on; all wait
 *   noinit-exit CODE          exit CODE without touching PMI
 *   abort CODE R [MSG]        rank R calls halo_pmi_abort; others wait
 *   segv R                    rank R dies of SIGSEGV; others wait
 *   shm-segv R                every rank creates its shm file, then as segv
 *   sleep                     init, then wait forever
 *   stdin                     rank 0 echoes stdin; others check for EOF
 *   print N                   N lines to stdout and stderr per rank
 *   env NAME...               print the named environment variables
 *   affinity                  print Cpus_allowed_list of /proc/self/status
 *   thp BYTES                 malloc BYTES, touch them, print the THPeligible
 *                             flag of the mapping that holds them (smaps)
 *   fds                       list open descriptors above 2 (PMI_FD aside)
 *   reinit                    init/put/finalize, then init again: works for a
 *                             singleton (with an empty table), refused when
 *                             launched (finalize closed the launcher socket)
 */
#include "pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

static halo_pmi_info_t helper_info;

static void helper_init(void)
{
    if (halo_pmi_init(&helper_info) != 0) {
        fprintf(stderr, "pmi_helper: halo_pmi_init failed\n");
        exit(90);
    }
}

static _Noreturn void helper_wait_forever(void)
{
    for (;;) {
        pause();
    }
}

static int helper_arg_int(int argc, char **argv, int i)
{
    if (i >= argc) {
        fprintf(stderr, "pmi_helper: %s needs more arguments\n", argv[1]);
        exit(91);
    }
    return atoi(argv[i]);
}

/* A value that exercises the escaping: spaces, '=', '%', the chunk mark,
 * newlines and bytes above 0x7f, different for every rank and length. */
static char *helper_value(int rank, size_t len)
{
    static const char alphabet[] = "ab =%!\n\t\x7f\xc3\xa9xyz0123456789-_%!%41;#";
    char *v = malloc(len + 1);

    if (v == NULL) {
        exit(92);
    }
    for (size_t i = 0; i < len; i++) {
        v[i] = alphabet[(i * 7 + (size_t)rank * 13) % (sizeof(alphabet) - 1)];
    }
    if (len > 0) {
        v[0] = (char)('A' + rank % 26);
    }
    v[len] = '\0';
    return v;
}

static int helper_kvs(size_t len)
{
    char key[64], *got = malloc(len + 1);
    int failures = 0;
    char *mine = helper_value(helper_info.rank, len);

    snprintf(key, sizeof(key), "key-%d", helper_info.rank);
    if (got == NULL || halo_pmi_put(key, mine) != 0) {
        fprintf(stderr, "rank %d: put failed\n", helper_info.rank);
        return 1;
    }
    if (halo_pmi_fence() != 0) {
        fprintf(stderr, "rank %d: fence failed\n", helper_info.rank);
        return 1;
    }
    for (int r = 0; r < helper_info.size; r++) {
        char *want = helper_value(r, len);

        snprintf(key, sizeof(key), "key-%d", r);
        if (halo_pmi_get(r, key, got, (int)len + 1) != 0 || strcmp(got, want) != 0) {
            fprintf(stderr, "rank %d: value of %s wrong or missing\n", helper_info.rank, key);
            failures++;
        }
        free(want);
    }
    /* One byte short must fail rather than truncate (rank 0 only: the
     * client reports it on stderr, once is enough). */
    if (helper_info.rank == 0 && len > 0 && halo_pmi_get(0, "key-0", got, (int)len) == 0) {
        fprintf(stderr, "rank %d: get into a short buffer succeeded\n", helper_info.rank);
        failures++;
    }
    if (halo_pmi_get(0, "no-such-key", got, (int)len + 1) == 0) {
        fprintf(stderr, "rank %d: get of a missing key succeeded\n", helper_info.rank);
        failures++;
    }
    free(got);
    free(mine);
    if (failures == 0) {
        printf("rank %d: kvs ok (%zu bytes)\n", helper_info.rank, len);
    }
    return failures != 0;
}

static int helper_mapping(void)
{
    int *nodes = malloc(sizeof(int) * (size_t)helper_info.size), nnodes = -1;

    if (nodes == NULL || halo_pmi_get_process_mapping(nodes, &nnodes) != 0) {
        fprintf(stderr, "rank %d: no process mapping\n", helper_info.rank);
        return 1;
    }
    for (int r = 0; r < helper_info.size; r++) {
        if (nodes[r] != 0) {
            fprintf(stderr, "rank %d: rank %d on node %d\n", helper_info.rank, r, nodes[r]);
            return 1;
        }
    }
    printf("rank %d: mapping nnodes=%d\n", helper_info.rank, nnodes);
    free(nodes);
    return nnodes != 1;
}

static _Noreturn void helper_segv(void)
{
    struct rlimit no_core = {0, 0};

    /* No core file (it would slow the teardown measured by the tests), and
     * the default action even when a sanitizer installed its own handler. */
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL);
    kill(getpid(), SIGSEGV);
    helper_wait_forever();
}

static void helper_shm_create(void)
{
    char name[256], suffix[32];
    int fd;

    snprintf(suffix, sizeof(suffix), "test%d", helper_info.rank);
    halo_shm_name(name, sizeof(name), helper_info.kvsname, suffix);
    fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) {
        fprintf(stderr, "rank %d: shm_open(%s): %s\n", helper_info.rank, name, strerror(errno));
        exit(93);
    }
    close(fd);
    printf("rank %d: created %s\n", helper_info.rank, name);
    fflush(stdout);
}

static int helper_stdin(void)
{
    char buf[4096];
    size_t total = 0;
    ssize_t n;

    if (helper_info.rank != 0) {
        n = read(0, buf, sizeof(buf));
        printf("rank %d: stdin %s\n", helper_info.rank, n == 0 ? "eof" : "NOT EOF");
        return n != 0;
    }
    while ((n = read(0, buf, sizeof(buf))) > 0) {
        fwrite(buf, 1, (size_t)n, stdout);
        total += (size_t)n;
    }
    printf("rank 0: stdin %zu bytes\n", total);
    return n < 0;
}

static void helper_print(int n)
{
    for (int i = 0; i < n; i++) {
        printf("out %d of rank %d\n", i, helper_info.rank);
        fprintf(stderr, "err %d of rank %d\n", i, helper_info.rank);
    }
    /* A last line without newline: mpiexec must still forward it. */
    printf("tail of rank %d", helper_info.rank);
}

/* malloc(bytes) and touch every page; prints "thp: eligible N" from the
 * smaps entry of the mapping that holds them, "thp: unreported" where the
 * kernel has no such line, "thp: sanitizer" where malloc is not glibc's. */
static int helper_thp(long bytes)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    (void)bytes;
    printf("rank %d: thp: sanitizer\n", helper_info.rank);
    return 0;
#else
    char *p = malloc((size_t)bytes);
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    int inside = 0, eligible = -1;

    if (p == NULL || f == NULL) {
        fprintf(stderr, "rank %d: thp: malloc or smaps failed\n", helper_info.rank);
        free(p);
        if (f != NULL) {
            fclose(f);
        }
        return 1;
    }
    for (long i = 0; i < bytes; i += 4096) {
        p[i] = (char)i;
    }
    while (fgets(line, sizeof(line), f) != NULL && eligible < 0) {
        unsigned long lo, hi;
        char c;

        /* a mapping's first line: "lo-hi perms ..."; no field line parses so */
        if (sscanf(line, "%lx-%lx %c", &lo, &hi, &c) == 3) {
            inside = (unsigned long)p >= lo && (unsigned long)p < hi;
        } else if (inside) {
            sscanf(line, "THPeligible: %d", &eligible);
        }
    }
    fclose(f);
    free(p);
    if (eligible < 0) {
        printf("rank %d: thp: unreported\n", helper_info.rank);
    } else {
        printf("rank %d: thp: eligible %d\n", helper_info.rank, eligible);
    }
    return 0;
#endif
}

static int helper_affinity(void)
{
    char line[512];
    FILE *f = fopen("/proc/self/status", "r");

    if (f == NULL) {
        return 1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            char *v = line + 18;

            v += strspn(v, " \t");
            printf("rank %d: cpus %s", helper_info.rank, v);
        }
    }
    fclose(f);
    return 0;
}

static int helper_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    const char *pmi_fd = getenv("PMI_FD");
    struct dirent *e;
    int extra = 0;

    if (d == NULL) {
        return 1;
    }
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);

        if (e->d_name[0] == '.' || fd <= 2 || fd == dirfd(d) ||
            (pmi_fd != NULL && fd == atoi(pmi_fd))) {
            continue;
        }
        printf("rank %d: extra fd %d\n", helper_info.rank, fd);
        extra++;
    }
    closedir(d);
    printf("rank %d: %d extra fds\n", helper_info.rank, extra);
    return 0;
}

static int helper_reinit(void)
{
    char value[16];
    int singleton = helper_info.singleton, again;

    if (halo_pmi_put("before", "1") != 0 || halo_pmi_finalize() != 0) {
        return 1;
    }
    if (halo_pmi_init(&helper_info) == 0) {
        halo_pmi_finalize();
        again = 1;
    } else {
        again = 0;
    }
    if (!singleton) {
        printf("rank %d: second init %s\n", helper_info.rank, again ? "accepted" : "refused");
        return again;
    }
    helper_init();
    if (halo_pmi_get(0, "before", value, sizeof(value)) == 0 || halo_pmi_put("after", "2") != 0 ||
        halo_pmi_get(0, "after", value, sizeof(value)) != 0 || strcmp(value, "2") != 0) {
        fprintf(stderr, "singleton state after re-init is wrong\n");
        halo_pmi_finalize();
        return 1;
    }
    printf("rank 0: singleton re-init ok\n");
    halo_pmi_finalize();
    return 0;
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "info";
    int rc = 0;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(cmd, "noinit-exit") == 0) {
        return helper_arg_int(argc, argv, 2);
    }
    helper_init();

    if (strcmp(cmd, "info") == 0) {
        printf("rank=%d size=%d appnum=%d universe=%d singleton=%d kvsname=%s\n",
               helper_info.rank, helper_info.size, helper_info.appnum,
               helper_info.universe_size, helper_info.singleton, helper_info.kvsname);
    } else if (strcmp(cmd, "kvs") == 0) {
        rc = helper_kvs(argc > 2 ? (size_t)atol(argv[2]) : 100);
    } else if (strcmp(cmd, "mapping") == 0) {
        rc = helper_mapping();
    } else if (strcmp(cmd, "exit") == 0) {
        if (helper_info.rank == helper_arg_int(argc, argv, 3)) {
            exit(helper_arg_int(argc, argv, 2));
        }
        helper_wait_forever();
    } else if (strcmp(cmd, "exit-finalized") == 0) {
        halo_pmi_fence();
        halo_pmi_finalize();
        return helper_info.rank == helper_arg_int(argc, argv, 3) ? helper_arg_int(argc, argv, 2)
                                                                 : 0;
    } else if (strcmp(cmd, "no-finalize") == 0) {
        if (helper_info.rank == helper_arg_int(argc, argv, 2)) {
            exit(0);
        }
        helper_wait_forever();
    } else if (strcmp(cmd, "close-pmi") == 0) {
        if (helper_info.rank == helper_arg_int(argc, argv, 2)) {
            close(atoi(getenv("PMI_FD")));
        }
        helper_wait_forever();
    } else if (strcmp(cmd, "abort") == 0) {
        if (helper_info.rank == helper_arg_int(argc, argv, 3)) {
            halo_pmi_abort(helper_arg_int(argc, argv, 2), argc > 4 ? argv[4] : NULL);
        }
        helper_wait_forever();
    } else if (strcmp(cmd, "segv") == 0 || strcmp(cmd, "shm-segv") == 0) {
        if (strcmp(cmd, "shm-segv") == 0) {
            helper_shm_create();
            halo_pmi_fence();
        }
        if (helper_info.rank == helper_arg_int(argc, argv, 2)) {
            helper_segv();
        }
        helper_wait_forever();
    } else if (strcmp(cmd, "sleep") == 0) {
        printf("rank %d: sleeping pid %ld\n", helper_info.rank, (long)getpid());
        helper_wait_forever();
    } else if (strcmp(cmd, "stdin") == 0) {
        rc = helper_stdin();
    } else if (strcmp(cmd, "print") == 0) {
        helper_print(helper_arg_int(argc, argv, 2));
    } else if (strcmp(cmd, "env") == 0) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);

            printf("rank %d: %s=%s\n", helper_info.rank, argv[i], v != NULL ? v : "(unset)");
        }
    } else if (strcmp(cmd, "thp") == 0) {
        rc = helper_thp(helper_arg_int(argc, argv, 2));
    } else if (strcmp(cmd, "affinity") == 0) {
        rc = helper_affinity();
    } else if (strcmp(cmd, "fds") == 0) {
        rc = helper_fds();
    } else if (strcmp(cmd, "reinit") == 0) {
        return helper_reinit();
    } else {
        fprintf(stderr, "pmi_helper: unknown action '%s'\n", cmd);
        rc = 94;
    }

    if (halo_pmi_finalize() != 0) {
        fprintf(stderr, "rank %d: finalize failed\n", helper_info.rank);
        rc = rc != 0 ? rc : 95;
    }
    return rc;
}
