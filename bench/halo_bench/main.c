/* halo-bench NAME [options]: the registry of benchmarks, the options, and
 * the dispatch. `halo-bench list` names them all; `halo-bench all` runs
 * every one in a single job. */
#include "hb.h"

#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define P(n, t, k, h) {n, t, HB_FAMILY_PT2PT, k, h}
#define C(n, t, k) {n, t " Latency Test", HB_FAMILY_COLL, k, "blocking MPI_" t}
#define S(n, t, k) {n "_persistent", "Persistent " t " Latency Test", HB_FAMILY_PERSIST, k, "MPI_" t "_init, MPI_Start, MPI_Wait"}

/* The collectives in the three families, in one order. */
#define COLLS(X)                                                                                                 \
    X("barrier", "Barrier", HB_C_BARRIER), X("bcast", "Bcast", HB_C_BCAST), X("gather", "Gather", HB_C_GATHER),  \
        X("gatherv", "Gatherv", HB_C_GATHERV), X("scatter", "Scatter", HB_C_SCATTER),                            \
        X("scatterv", "Scatterv", HB_C_SCATTERV), X("allgather", "Allgather", HB_C_ALLGATHER),                   \
        X("allgatherv", "Allgatherv", HB_C_ALLGATHERV), X("alltoall", "Alltoall", HB_C_ALLTOALL),                \
        X("alltoallv", "Alltoallv", HB_C_ALLTOALLV), X("alltoallw", "Alltoallw", HB_C_ALLTOALLW),                \
        X("reduce", "Reduce", HB_C_REDUCE), X("allreduce", "Allreduce", HB_C_ALLREDUCE),                         \
        X("reduce_scatter", "Reduce_scatter", HB_C_REDUCE_SCATTER),                                              \
        X("reduce_scatter_block", "Reduce_scatter_block", HB_C_REDUCE_SCATTER_BLOCK),                            \
        X("scan", "Scan", HB_C_SCAN), X("exscan", "Exscan", HB_C_EXSCAN)
#define NB(n, t, k) {"i" n, "Non-blocking " t " Latency Test", HB_FAMILY_NBC, k, "MPI_I" n ", with overlap"}

const hb_bench_t hb_benches[] = {
    P("latency", "Latency Test", HB_P_LATENCY, "ping-pong between ranks 0 and 1, half round trip"),
    P("bw", "Bandwidth Test", HB_P_BW, "rank 0 streams windows of -W messages to rank 1"),
    P("bibw", "Bi-Directional Bandwidth Test", HB_P_BIBW, "ranks 0 and 1 stream windows to each other"),
    P("mbw_mr", "Multiple Bandwidth / Message Rate Test", HB_P_MBW_MR, "-p pairs stream at once: MB/s and messages/s"),
    P("multi_lat", "Multi-pair Latency Test", HB_P_MULTI_LAT, "-p pairs ping-pong at once"),
    P("spawn_latency", "Spawned Process Latency Test", HB_P_SPAWN_LATENCY,
      "rank 0 ping-pongs with a process the ranks spawned (MPI_Comm_spawn), half round trip"),
    COLLS(C),
    COLLS(NB),
    COLLS(S),
    {"init", "Init Test", HB_FAMILY_STARTUP, HB_S_INIT, "time in MPI_Init (--launcher: whole launches)"},
    {"hello", "Hello World Test", HB_FAMILY_STARTUP, HB_S_HELLO, "init, one barrier, finalize (--launcher: whole launches)"},
    {"pack_vector", "Pack Vector Test", HB_FAMILY_DTYPE, HB_D_PACK_VECTOR,
     "MPI_Pack/Unpack of --block-byte blocks at twice that stride, against memcpy"},
    {"pack_subarray2d", "Pack 2-D Subarray Test", HB_FAMILY_DTYPE, HB_D_PACK_SUBARRAY2D,
     "MPI_Pack/Unpack of half the columns of a matrix, against memcpy"},
    {"pack_subarray3d", "Pack 3-D Subarray Test", HB_FAMILY_DTYPE, HB_D_PACK_SUBARRAY3D,
     "MPI_Pack/Unpack of a 3-D array's interior (one ghost layer), against memcpy"},
    {"wait_cpu", "Blocked Receive CPU Test", HB_FAMILY_RES, HB_R_WAIT_CPU,
     "CPU rank 1 burns in MPI_Recv while rank 0 sleeps 2 s before sending"},
    {"shm_footprint", "Shared Memory Footprint Test", HB_FAMILY_RES, HB_R_SHM_FOOTPRINT,
     "Pss of each rank's shared mappings after every pair has exchanged messages"},
    {"put_latency", "One Sided MPI_Put Latency Test", HB_FAMILY_RMA, HB_R_PUT_LATENCY,
     "rank 0 puts to rank 1, flush after each (passive target, MPI_Win_allocate)"},
    {"get_latency", "One Sided MPI_Get Latency Test", HB_FAMILY_RMA, HB_R_GET_LATENCY,
     "rank 0 gets from rank 1, flush after each"},
    {"put_bw", "One Sided MPI_Put Bandwidth Test", HB_FAMILY_RMA, HB_R_PUT_BW, "-W puts, then one flush"},
    {"get_bw", "One Sided MPI_Get Bandwidth Test", HB_FAMILY_RMA, HB_R_GET_BW, "-W gets, then one flush"},
    {"acc_latency", "One Sided MPI_Accumulate Latency Test", HB_FAMILY_RMA, HB_R_ACC_LATENCY,
     "MPI_SUM of ints at rank 1, flush after each"},
    {"fop_latency", "One Sided MPI_Fetch_and_op Latency Test", HB_FAMILY_RMA, HB_R_FOP_LATENCY,
     "MPI_SUM of one int64 at rank 1, flush after each"},
};
const int hb_nbenches = (int)(sizeof hb_benches / sizeof hb_benches[0]);

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: halo-bench NAME[,NAME...] [options]   (under mpiexec; names from `halo-bench list`, or `all`)\n"
            "  -m, --message-size [MIN:]MAX  message sizes MIN, 2*MIN, ... MAX (K, M, G suffixes allowed)\n"
            "      --sizes A,B,C             exactly these sizes\n"
            "  -i, --iterations N            timed iterations per size (default: per benchmark, fewer above 8 KiB)\n"
            "  -x, --warmup N                untimed iterations first\n"
            "  -f, --full                    also min/max over ranks (or pairs) and iterations\n"
            "  -c, --validation              check the contents of every received message; exit 1 if wrong\n"
            "  -t, --num-test-calls N        nonblocking collectives: MPI_Test calls during the computation\n"
            "  -d, --accelerator host|cuda   buffer kind (host only in this build)\n"
            "  -W, --window-size N           bw, bibw, mbw_mr: messages in flight (default 64)\n"
            "  -p, --pairs N                 mbw_mr, multi_lat: pairs of ranks (default half the ranks)\n"
            "      --block BYTES             pack_vector: bytes per block, a multiple of 8 (default 256)\n"
            "      --csv, --json             machine-readable output (JSON: one object per benchmark and line)\n"
            "      --launcher \"CMD\"          init, hello: time whole launches of `CMD halo-bench NAME` (no MPI here)\n"
            "  -h, --help     -v, --version\n");
}

static int parse_size(const char *s, size_t *v)
{
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': n <<= 10; end++; break;
    case 'M': n <<= 20; end++; break;
    case 'G': n <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *v = (size_t)n;
    return 0;
}

static int parse_int(const char *s, int *v)
{
    char *end;
    long n = strtol(s, &end, 10);
    if (end == s || *end || n < 0 || n > 1000000000)
        return -1;
    *v = (int)n;
    return 0;
}

static int parse_range(const char *s, hb_opts_t *o)
{
    const char *colon = strchr(s, ':');
    if (!colon)
        return parse_size(s, &o->max_size);
    char lo[64];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof lo)
        return -1;
    memcpy(lo, s, n);
    lo[n] = 0;
    if (n && parse_size(lo, &o->min_size))
        return -1;
    if (colon[1] && parse_size(colon + 1, &o->max_size))
        return -1;
    if (o->max_size && o->min_size > o->max_size)
        return -1;
    return 0;
}

static int parse_list(const char *s, hb_opts_t *o)
{
    char *copy = strdup(s);
    int cap = 8;
    o->sizes = malloc((size_t)cap * sizeof *o->sizes);
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
        if (o->nsizes == cap)
            o->sizes = realloc(o->sizes, (size_t)(cap *= 2) * sizeof *o->sizes);
        if (parse_size(tok, &o->sizes[o->nsizes++])) {
            free(copy);
            return -1;
        }
    }
    free(copy);
    return o->nsizes > 0 ? 0 : -1;
}

static const hb_bench_t *find(const char *name)
{
    for (int i = 0; i < hb_nbenches; i++)
        if (!strcmp(hb_benches[i].name, name))
            return &hb_benches[i];
    /* OSU's program names work too: osu_latency, osu_iallreduce. */
    if (!strncmp(name, "osu_", 4))
        return find(name + 4);
    return NULL;
}

static void list(void)
{
    static const char *family[] = {"point-to-point", "blocking collectives", "nonblocking collectives",
                                   "persistent collectives", "start-up", "datatypes (rank 0 packs)",
                                   "resources", "one-sided"};
    int last = -1;
    for (int i = 0; i < hb_nbenches; i++) {
        const hb_bench_t *b = &hb_benches[i];
        if (b->family != last)
            printf("%s# %s\n", last < 0 ? "" : "\n", family[b->family]);
        last = b->family;
        printf("%-28s %s\n", b->name, b->help);
    }
}

static int run_one(const hb_bench_t *b, const hb_opts_t *o, MPI_Comm comm, double init_s)
{
    hb_run_t r = {.bench = b->name, .title = b->title, .o = o, .comm = comm};
    MPI_Comm_rank(comm, &r.rank);
    MPI_Comm_size(comm, &r.nranks);
    switch (b->family) {
    case HB_FAMILY_PT2PT: hb_run_pt2pt(&r, b->kind); break;
    case HB_FAMILY_STARTUP: hb_run_startup(&r, b->kind, init_s); break;
    case HB_FAMILY_DTYPE: hb_run_dtype(&r, b->kind); break;
    case HB_FAMILY_RES: hb_run_resources(&r, b->kind); break;
    case HB_FAMILY_RMA: hb_run_rma(&r, b->kind); break;
    default: hb_run_coll(&r, b->family, b->kind); break;
    }
    hb_report_end(&r);
    int failed = hb_max_int(comm, r.failed);
    if (r.rank == 0 && o->output == HB_OUT_TEXT && failed && !r.failed)
        printf("# FAILED on another rank\n");
    return failed;
}

int main(int argc, char **argv)
{
    hb_opts_t o = {.iters = -1, .warmup = -1, .argv0 = argv};
    const char *device = "host";
    enum { OPT_CSV = 1000, OPT_JSON, OPT_SIZES, OPT_LAUNCHER, OPT_INJECT, OPT_BLOCK };
    static const struct option longopts[] = {
        {"message-size", required_argument, NULL, 'm'},
        {"iterations", required_argument, NULL, 'i'},
        {"warmup", required_argument, NULL, 'x'},
        {"full", no_argument, NULL, 'f'},
        {"validation", no_argument, NULL, 'c'},
        {"num-test-calls", required_argument, NULL, 't'},
        {"accelerator", required_argument, NULL, 'd'},
        {"window-size", required_argument, NULL, 'W'},
        {"pairs", required_argument, NULL, 'p'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'v'},
        {"csv", no_argument, NULL, OPT_CSV},
        {"json", no_argument, NULL, OPT_JSON},
        {"sizes", required_argument, NULL, OPT_SIZES},
        {"launcher", required_argument, NULL, OPT_LAUNCHER},
        {"inject-error", no_argument, NULL, OPT_INJECT},
        {"block", required_argument, NULL, OPT_BLOCK},
        {NULL, 0, NULL, 0},
    };
    int c, bad = 0;
    while ((c = getopt_long(argc, argv, "m:i:x:fct:d:W:p:hv", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': bad |= parse_range(optarg, &o) != 0; break;
        case 'i': bad |= parse_int(optarg, &o.iters) != 0; break;
        case 'x': bad |= parse_int(optarg, &o.warmup) != 0; break;
        case 'f': o.full = 1; break;
        case 'c': o.validate = 1; break;
        case 't': bad |= parse_int(optarg, &o.ntest) != 0; break;
        case 'd': device = optarg; break;
        case 'W': bad |= parse_int(optarg, &o.window) != 0 || o.window == 0; break;
        case 'p': bad |= parse_int(optarg, &o.pairs) != 0 || o.pairs == 0; break;
        case 'h': usage(stdout); return 0;
        case 'v': printf("halo-bench %s\n", HB_VERSION); return 0;
        case OPT_CSV: o.output = HB_OUT_CSV; break;
        case OPT_JSON: o.output = HB_OUT_JSON; break;
        case OPT_SIZES: bad |= parse_list(optarg, &o) != 0; break;
        case OPT_LAUNCHER: o.launcher = optarg; break;
        case OPT_INJECT: o.inject_error = 1; break;
        case OPT_BLOCK:
            bad |= parse_int(optarg, &hb_dtype_block) != 0 || hb_dtype_block == 0 || hb_dtype_block % 8 != 0;
            break;
        default: bad = 1; break;
        }
    }
    if (bad || optind != argc - 1) {
        if (!bad)
            fprintf(stderr, "halo-bench: %s\n", optind >= argc ? "name a benchmark (halo-bench list)"
                                                                : "one benchmark name, please");
        else
            fprintf(stderr, "halo-bench: bad option value\n");
        usage(stderr);
        return 2;
    }
    const char *name = argv[optind];
    if (!strcmp(name, "list")) {
        list();
        return 0;
    }
    /* NAME, NAME,NAME,... or all */
    const hb_bench_t **run = malloc((size_t)hb_nbenches * strlen(name) * sizeof *run + sizeof *run);
    int nrun = 0;
    if (!strcmp(name, "all")) {
        for (int i = 0; i < hb_nbenches; i++)
            run[nrun++] = &hb_benches[i];
    } else {
        char *copy = strdup(name);
        for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ",")) {
            run[nrun] = find(tok);
            if (!run[nrun]) {
                fprintf(stderr, "halo-bench: no benchmark named \"%s\" (halo-bench list)\n", tok);
                free(copy);
                free(run);
                return 2;
            }
            nrun++;
        }
        free(copy);
    }
    if (o.launcher) {
        if (nrun != 1 || run[0]->family != HB_FAMILY_STARTUP) {
            fprintf(stderr, "halo-bench: --launcher is for init and hello\n");
            free(run);
            return 2;
        }
        int lrc = hb_launch_wrapper(&o, run[0]);
        free(o.sizes);
        free(run);
        return lrc;
    }

    double t0 = hb_now();
    MPI_Init(&argc, &argv);
    double init_s = hb_now() - t0;
    hb_mpi_initialized = 1;
    /* Started by spawn_latency: answer the parent, nothing else. */
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        int prc = hb_spawned_peer(parent);
        MPI_Finalize();
        free(o.sizes);
        free(run);
        return prc;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    if (strcmp(device, "host") != 0) {
        if (rank == 0) {
            if (!strcmp(device, "cuda") || !strcmp(device, "rocm") || !strcmp(device, "openacc"))
                fprintf(stderr,
                        "halo-bench: -d %s: no GPU support in this build and no GPU on this host; "
                        "device buffers need a GPU (CUDA would be loaded at run time with dlopen)\n",
                        device);
            else
                fprintf(stderr, "halo-bench: -d %s: unknown buffer kind (host or cuda)\n", device);
        }
        MPI_Finalize();
        free(o.sizes);
        free(run);
        return 2;
    }

    /* Our own communicator, returning errors: a call the MPI refuses
     * (MPI_ERR_UNSUPPORTED_OPERATION) becomes n/a instead of an abort. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int failed = 0;
    for (int i = 0; i < nrun; i++) {
        failed |= run_one(run[i], &o, comm, init_s);
        if (rank == 0 && o.output == HB_OUT_TEXT && i + 1 < nrun)
            printf("\n");
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    free(o.sizes);
    free(run);
    return failed ? 1 : 0;
}
