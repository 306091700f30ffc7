/* Collective selection from a tuning file (HALO_TUNING_FILE).
 *
 *   coll_tuning good | syntax | rules | missing | intel
 *
 * writes a tuning file of its own (one per rank), points HALO_TUNING_FILE
 * at it before MPI_Init, and checks what the tables choose:
 * - good: the file's rules replace the built-in ones of the collectives it
 *   names (bounds inclusive, first match wins, a rule whose algorithm's
 *   restrictions fail is skipped, "oversubscribed" matches p ranks on one
 *   node against the processors mpiexec may use), the others keep
 *   theirs; collectives run correctly under the file's choices;
 * - syntax: a file that does not parse is ignored as a whole, with a
 *   warning naming the line and column (the testlist greps it);
 * - rules: unknown collectives, unknown algorithms and malformed rules are
 *   skipped with a warning, the file's good rules still apply (a collective
 *   left with no usable rule keeps its built-in ones);
 * - missing: a file that cannot be opened: a warning, built-in tables;
 * - intel: the built-in rules for Intel processors (HALO_CPU=intel), and a
 *   file's rules with a "cpu" key.
 * The other modes run as if on an AMD processor (HALO_CPU=amd), whose
 * built-in choices are the ones listed for them. Rules with "bound" apply
 * as the node's ranks are bound (the testlist runs "missing" once with
 * mpiexec --bind-to none too). */
#include <sched.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mpitest.h"

const char *halo_tool_coll_choice(const char *coll, int p, long long bytes, int commute);
int halo_tool_node_bound(void);

/* Whether this process may use single-copy reads at all (the library's
 * single-copy collectives need them): a read of its own memory. */
static int cma_here(void)
{
    static const long probe = 0x5a5a1234;
    long got = 0;
    struct iovec l = {&got, sizeof got}, r = {(void *)&probe, sizeof probe};
    return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof got && got == probe;
}

static void expect(const char *coll, int p, long long bytes, int commute, const char *want)
{
    const char *got = halo_tool_coll_choice(coll, p, bytes, commute);
    CHECK(got && !strcmp(got, want), "%s at p=%d, n=%lld%s: chose %s, expected %s", coll, p, bytes,
          commute ? "" : " (non-commutative)", got ? got : "nothing", want);
}

static const char good[] =
    "{\n"
    "  \"_comment\": \"keys starting with _ are comments\",\n"
    "  \"allreduce\": [\n"
    "    {\"comm_size_max\": 4, \"msg_size_max\": 100, \"algorithm\": \"ring\", \"_why\": \"test\"},\n"
    "    {\"msg_size_min\": 101, \"msg_size_max\": 200, \"algorithm\": \"recursive_doubling\"},\n"
    "    {\"comm_size_min\": 5, \"algorithm\": \"ring\"}\n"
    "  ],\n"
    "  \"bcast\": [ {\"algorithm\": \"pipeline\"} ],\n"
    "  \"scan\": [ {\"ppn_min\": 5, \"algorithm\": \"linear\"}, {\"algorithm\": \"recursive_doubling\"} ],\n"
    "  \"barrier\": [ {\"oversubscribed\": true, \"algorithm\": \"dissemination\"},\n"
    "               {\"oversubscribed\": false, \"ppn_min\": 2, \"algorithm\": \"shm_fan\"} ],\n"
    "  \"alltoall\": [],\n"
    "  \"reduce_scatter_block\": [ {\"commutative\": false, \"algorithm\": \"pairwise\"},\n"
    "                            {\"commutative\": true, \"algorithm\": \"recursive_halving\"} ],\n"
    "  \"allgatherv\": [ {\"cpu\": \"intel\", \"algorithm\": \"ring\"}, {\"cpu\": \"amd\", \"algorithm\": \"bruck\"},\n"
    "                  {\"algorithm\": \"linear\"} ]\n"
    "}\n";

static const char intel[] =
    "{\n"
    "  \"allgatherv\": [ {\"cpu\": \"amd\", \"algorithm\": \"bruck\"}, {\"cpu\": \"intel\", \"algorithm\": \"ring\"},\n"
    "                  {\"algorithm\": \"linear\"} ]\n"
    "}\n";

static const char syntax[] =
    "{\n"
    "  \"allreduce\": [\n"
    "    {\"algorithm\": \"ring\",}\n"
    "  ]\n"
    "}\n";

static const char rules_ok[] =
    "{\n"
    "  \"no_such_collective\": [ {\"algorithm\": \"ring\"} ],\n"
    "  \"reduce\": [\n"
    "    {\"algorithm\": \"no_such_algorithm\"},\n"
    "    {\"msg_size_max\": -5, \"algorithm\": \"binomial\"},\n"
    "    {\"colour\": \"blue\", \"algorithm\": \"rabenseifner\"}\n"
    "  ],\n"
    "  \"scan\": {\"algorithm\": \"linear\"},\n"
    "  \"bcast\": [ {\"algorithm\": \"nope\"} ],\n"
    "  \"barrier\": [ {\"oversubscribed\": 1, \"algorithm\": \"dissemination\"}, {\"algorithm\": \"shm\"} ],\n"
    "  \"gatherv\": [ {\"commutative\": 1, \"algorithm\": \"shm_linear\"}, {\"bound\": \"yes\", \"algorithm\": \"shm_linear\"},\n"
    "               {\"algorithm\": \"linear\"} ],\n"
    "  \"allgatherv\": [ {\"cpu\": \"arm\", \"algorithm\": \"ring\"}, {\"cpu\": 1, \"algorithm\": \"ring\"},\n"
    "                  {\"algorithm\": \"bruck\"} ]\n"
    "}\n";

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "good";
    char path[128];
    snprintf(path, sizeof path, "/tmp/halo-coll-tuning-%d.json", (int)getpid());
    const char *text = !strcmp(mode, "good") ? good : !strcmp(mode, "syntax") ? syntax
                     : !strcmp(mode, "rules") ? rules_ok : !strcmp(mode, "intel") ? intel : NULL;
    int is_intel = !strcmp(mode, "intel");
    setenv("HALO_CPU", is_intel ? "intel" : "amd", 1);
    if (text) {
        FILE *f = fopen(path, "w");
        if (!f || fputs(text, f) < 0 || fclose(f))
            return 2;
    }
    setenv("HALO_TUNING_FILE", path, 1);
    MPI_OK(MPI_Init(&argc, &argv));
    if (text)
        unlink(path);
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));

    /* Built-in rules, untouched by every file here. */
    /* "oversubscribed": more ranks than the processors mpiexec may use. */
    const char *job_cpus = getenv("HALO_JOB_CPUS");
    long ncpu = job_cpus ? atol(job_cpus) : sysconf(_SC_NPROCESSORS_ONLN);
    CHECK(ncpu >= 1, "processors: %ld", ncpu);
    expect("gather", 8, 8, 1, "shm");
    expect("gather", 4, 8, 1, "shm");
    /* Single-copy writes for blocks above 16 KiB (above 4 KiB at two
     * ranks with a core each on Intel), where the node allows them. */
    int cma = cma_here();
    /* Every rank bound to one CPU (mpiexec's default) or none. */
    int bound = halo_tool_node_bound();
    cpu_set_t mask;
    CHECK(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity");
    CHECK(bound == (CPU_COUNT(&mask) == 1), "node bound: %d, this rank may use %d CPUs", bound, CPU_COUNT(&mask));
    expect("gather", 2, 65536, 1, cma ? "cma" : "linear");
    if (is_intel) {
        /* Two ranks with a core each: from 4 KiB point-to-point (single-copy
         * rendezvous) rather than the shared slots, the slots below. */
        int two = ncpu >= 2;
        expect("bcast", 2, 4096, 1, "shm");
        expect("bcast", 2, 4097, 1, two ? (cma ? "cma" : "binomial") : "shm");
        expect("bcast", 2, 16384, 1, two ? (cma ? "cma" : "binomial") : "shm");
        expect("bcast", 2, 32768, 1, two && cma ? "cma" : "linear");
        expect("bcast", 3, 16384, 1, "shm");
        expect("bcast", 3, 32768, 1, "shm");
        expect("bcast", 3, 32769, 1, ncpu < 3 && cma && bound ? "cma" : "shm");
        /* From 4 ranks on more ranks than processors: single copies above
         * 16 KiB (from 3 ranks above 32 KiB), else the linear one. */
        expect("bcast", 4, 16384, 1, "shm");
        expect("bcast", 4, 16385, 1, ncpu < 4 ? (cma ? "cma" : "linear") : "shm");
        expect("bcast", 8, 65536, 1, ncpu < 8 ? (cma ? "cma" : "linear") : "shm");
        expect("bcast", 8, 65537, 1, ncpu < 8 && cma ? "cma" : "linear");
        expect("bcast", 8, 131072, 1, ncpu < 8 && cma ? "cma" : "linear");
        expect("bcast", 8, 131073, 1, ncpu < 8 && cma && bound ? "cma" : "linear");
        expect("bcast", 4, 1 << 22, 1, ncpu < 4 && cma && bound ? "cma" : "linear");
        expect("reduce", 4, 131071, 1, "shm");
        expect("reduce", 4, 131072, 1, "binomial");
        expect("reduce", 4, 262144, 1, "binomial");
        expect("reduce", 3, 262145, 1, "binomial");
        expect("reduce", 3, 1 << 22, 1, "binomial");
        /* Above those, when the ranks outnumber the processors: for a
         * commutative operation at 4 and from 8 ranks the tree over the
         * ranks ordered by CPU, else through the slots; with a core each
         * the tree up to 8 ranks, then Rabenseifner. */
        expect("reduce", 3, (1 << 22) + 1, 1, ncpu < 3 ? "shm" : "binomial");
        expect("reduce", 4, 262145, 1, ncpu < 4 && !bound ? "shm" : "binomial");
        expect("reduce", 4, 262145, 0, ncpu < 4 ? "shm" : "binomial");
        expect("reduce", 5, 1 << 20, 1, ncpu < 5 ? "shm" : "binomial");
        expect("reduce", 8, 1 << 24, 1, ncpu < 8 && !bound ? "shm" : "binomial");
        expect("reduce", 8, 1 << 24, 0, ncpu < 8 ? "shm" : "binomial");
        expect("reduce", 16, 1 << 20, 1, ncpu < 16 ? (bound ? "binomial" : "shm") : "rabenseifner");
        expect("reduce", 16, 1 << 20, 0, ncpu < 16 ? "shm" : "rabenseifner");
        expect("reduce", 5, 131072, 1, "shm");
        expect("gather", 2, 4096, 1, "shm");
        expect("gather", 2, 8192, 1, two ? (cma ? "cma" : "linear") : "shm");
        expect("scatter", 2, 4096, 1, "shm");
        expect("scatter", 2, 4097, 1, two && cma ? "cma" : "linear");
        expect("allgather", 2, 4096, 1, "shm");
        expect("allgather", 2, 8192, 1, two ? (cma ? "cma" : "linear") : "shm");
        expect("allgather", 2, 1 << 22, 1, two && cma ? "cma" : "linear");
        expect("allgather", 4, 8192, 1, "shm");
        expect("alltoall", 2, 4096, 1, "shm");
        expect("alltoall", 2, 8192, 1, two ? (cma ? "cma" : "linear") : "shm");
        expect("alltoall", 2, 1 << 22, 1, two && cma ? "cma" : "linear");
        /* On more ranks than processors: through the slots in one round
         * up to 16 KiB at 3 and 4 ranks; single-copy reads from 32 KiB to
         * 128 KiB at 4 ranks; else the linear one. */
        expect("alltoall", 3, 16384, 1, ncpu < 3 ? "shm" : "linear");
        expect("alltoall", 4, 16384, 1, ncpu < 4 ? "shm" : "linear");
        expect("alltoall", 4, 16385, 1, "linear");
        expect("alltoall", 8, 16384, 1, "linear");
        expect("alltoall", 4, 32769, 1, ncpu < 4 && cma ? "cma" : "linear");
        expect("alltoall", 4, 65536, 1, ncpu < 4 && cma ? "cma" : "linear");
        expect("alltoall", 4, 131072, 1, ncpu < 4 && cma ? "cma" : "linear");
        expect("alltoall", 4, 131073, 1, "linear");
        expect("alltoall", 3, 65536, 1, "linear");
        expect("alltoall", 8, 65536, 1, "linear");
        expect("reduce", 2, 16384, 1, two ? "binomial" : "shm");
        expect("reduce", 2, 1 << 19, 1, "binomial");
        expect("reduce", 2, (1 << 19) + 1, 1, two ? "rabenseifner" : "binomial");
        expect("reduce", 4, 16384, 1, "shm");
        expect("allreduce", 2, 8192, 1, two ? "recursive_doubling" : "shm_rsag");
        expect("allreduce", 2, 1 << 20, 1, "recursive_doubling");
        expect("allreduce", 2, (1 << 20) + 1, 1, two ? "ring" : "recursive_doubling");
        expect("allreduce", 2, (1 << 20) + 1, 0, "recursive_doubling");   /* the ring commutes */
        expect("allreduce", 2, 1024, 1, "shm");
        expect("reduce_scatter", 2, 65536, 1, two ? "pairwise" : "shm");
        expect("exscan", 2, 32768, 1, two ? "shm" : "linear");
        expect("exscan", 2, 65536, 1, "linear");
        /* The file's: the first rule whose "cpu" holds. */
        expect("allgatherv", 4, 8, 1, "ring");
        goto run;
    }
    expect("bcast", 2, 16384, 1, !strcmp(mode, "good") ? "pipeline" : "shm");
    expect("alltoall", 2, 8192, 1, !strcmp(mode, "good") ? "pairwise" : "shm");
    expect("allreduce", 2, 8192, 1, !strcmp(mode, "good") ? "recursive_doubling" : "shm_rsag");
    expect("exscan", 2, 32768, 1, "linear");
    expect("bcast", 3, 32769, 1, !strcmp(mode, "good") ? "pipeline" : ncpu < 3 && cma && bound ? "cma" : "shm");
    expect("reduce", 4, 131072, 1, !strcmp(mode, "rules") ? "rabenseifner" : "shm");
    expect("scatter", 4, 4096, 1, "shm");
    expect("scatter", 4, 8192, 1, "linear");
    expect("scatter", 4, 65536, 1, cma ? "cma" : "linear");
    expect("scatter", 8, 4096, 1, "linear");
    expect("scatter", 8, 4097, 1, cma ? "cma" : "linear");
    expect("gather", 4, 16384, 1, "shm");
    expect("gather", 4, 65536, 1, cma ? "cma" : "shm");
    expect("gather", 8, 65536, 1, cma ? "cma" : "shm");
    expect("gather", 3, 98304, 1, cma ? "cma" : "linear");
    expect("gather", 16, 131072, 1, cma ? "cma" : "linear");
    expect("gather", 8, 1 << 20, 1, cma ? "cma" : "linear");
    expect("allgather", 4, 64, 1, "shm");
    expect("allgather", 2, 16384, 1, "shm");
    expect("allgather", 2, 65536, 1, "linear");
    expect("allgather", 8, 300000, 1, "shm");
    expect("allgather", 8, 1 << 20, 1, "shm");
    expect("allgather", 8, (1 << 20) + 1, 1, "linear");
    expect("allgather", 5, 300000, 1, "linear");
    expect("allgather", 5, 1 << 20, 1, "linear");
    expect("allgather", 16, 1 << 20, 1, "ring");
    expect("reduce_scatter", 4, 1000, 0, "shm");
    expect("reduce_scatter", 8, 200000, 1, "shm");
    expect("reduce_scatter", 4, 1 << 20, 1, "pairwise");
    /* The node's processors decide "oversubscribed" (the fan barrier up to
     * 4 ranks with more ranks than processors). */
    int tuned_barrier = !strcmp(mode, "good") || !strcmp(mode, "rules");
    if (!tuned_barrier) {
        expect("barrier", (int)ncpu + 1, 0, 1, ncpu + 1 <= 4 ? "shm_fan" : "shm");
        expect("barrier", 2 * (int)ncpu + 5, 0, 1, "shm");
        if (ncpu >= 2)
            expect("barrier", (int)ncpu, 0, 1, "shm");
    }

    if (!strcmp(mode, "good")) {
        expect("allreduce", 4, 100, 1, "ring");
        expect("allreduce", 4, 100, 0, "recursive_doubling");   /* ring skipped: no rule left -> registry */
        expect("allreduce", 3, 150, 0, "recursive_doubling");
        expect("allreduce", 4, 101, 1, "recursive_doubling");
        expect("allreduce", 4, 201, 1, "recursive_doubling");  /* no rule matches: registry's first */
        expect("allreduce", 5, 1 << 20, 1, "ring");
        expect("bcast", 2, 8, 1, "pipeline");
        expect("bcast", 64, 1 << 22, 1, "pipeline");
        expect("alltoall", 8, 8, 1, "pairwise");             /* empty list: registry's first */
        expect("reduce", 8, 8, 1, "shm");                    /* built in */
        expect("scan", 8, 8, 1, "linear");                   /* 8 ranks on the node */
        expect("scan", 4, 8, 1, "recursive_doubling");       /* 4: below ppn_min */
        expect("barrier", (int)ncpu + 1, 0, 1, "dissemination");
        expect("barrier", 4 * (int)ncpu, 0, 1, "dissemination");
        if (ncpu >= 2)
            expect("barrier", (int)ncpu, 0, 1, "shm_fan");
        expect("barrier", 1, 0, 1, "dissemination");   /* below ppn_min: no rule, the registry's first */
        expect("allgatherv", 4, 8, 1, "bruck");             /* the first rule whose "cpu" holds */
        expect("reduce_scatter_block", 4, 64, 1, "recursive_halving");   /* "commutative" */
        expect("reduce_scatter_block", 4, 64, 0, "pairwise");
    } else if (!strcmp(mode, "rules")) {
        expect("gatherv", 4, 8, 1, "linear");                /* "commutative": 1, "bound": "yes" refused */
        expect("reduce", 8, 8, 1, "rabenseifner");           /* the one usable rule */
        expect("reduce", 8, 1 << 20, 1, "rabenseifner");
        expect("scan", 2, 8, 1, "shm");                      /* built in: not a list */
        expect("scan", 8, 8, 1, "shm");                      /* one node, up to 64 KiB */
        expect("scan", 4, 65536, 1, "shm");                  /* 3 and 4 ranks too */
        expect("exscan", 3, 8, 1, "shm");
        expect("scan", 8, 1 << 18, 1, "shm_parts");          /* 5 to 8 ranks above 64 KiB */
        expect("exscan", 5, 1 << 19, 1, "shm_parts");
        expect("exscan", 8, (1 << 19) + 1, 1, "pipeline");   /* 5-8 ranks, (512 KiB, 1 MiB] */
        expect("exscan", 8, 1 << 20, 1, "pipeline");
        expect("exscan", 8, (1 << 20) + 1, 1, "shm_parts");
        expect("scan", 8, 1 << 20, 1, "shm_parts");
        expect("scan", 16, 1 << 19, 1, "shm_parts");         /* more: up to 512 KiB... */
        expect("scan", 16, 1 << 20, 1, "pipeline");          /* ...then the pipelined chain */
        expect("scan", 4, 65537, 1, "linear");               /* 3 and 4 ranks: Scan by the chain */
        expect("scan", 4, 1 << 22, 1, "linear");
        expect("exscan", 4, 1 << 17, 1, "shm_parts");        /* Exscan by parts, but */
        expect("exscan", 4, (1 << 17) + 1, 1, "pipeline");   /* (128 KiB, 512 KiB]: pipelined */
        expect("exscan", 3, 1 << 19, 1, "pipeline");
        expect("exscan", 4, (1 << 19) + 1, 1, "shm_parts");
        expect("exscan", 4, 1 << 22, 1, "shm_parts");
        expect("exscan", 2, 65536, 1, "linear");
        expect("scan", 32, 1 << 20, 1, "pipeline");
        expect("bcast", 8, 8, 1, "shm");                     /* no usable rule: built in */
        expect("bcast", 8, 1 << 22, 1, ncpu < 8 && cma && bound ? "cma" : "linear");   /* one node: single copies */
        expect("barrier", (int)ncpu + 1, 0, 1, "shm");       /* "oversubscribed": 1 is not a boolean */
        expect("allgatherv", 4, 8, 1, "bruck");              /* "cpu": "arm" and 1 are refused */
    } else {
        /* syntax, missing: the built-in tables everywhere. From 3 ranks
         * on more ranks than processors, above 256 KiB: single-copy. */
#define OVER(p) ((p) > ncpu && cma_here())
        expect("allreduce", 4, 100, 1, "shm");
        expect("allreduce", 4, 100000, 0, "shm_rsag");
        expect("allreduce", 2, 16384, 1, "shm_rsag");
        expect("allreduce", 2, 16385, 1, "recursive_doubling");   /* 2 ranks above 16K */
        expect("allreduce", 8, 262144, 1, "shm_rsag");
        expect("allreduce", 8, 262145, 1, OVER(8) ? "cma" : "shm_rsag");
        expect("allreduce", 8, 1 << 22, 1, OVER(8) ? "cma" : "shm_rsag");
        expect("allreduce", 4, 1 << 19, 0, OVER(4) ? "cma" : "shm_rsag");
        expect("allreduce", 4, 1 << 20, 0, OVER(4) ? "cma" : "rabenseifner");   /* 3 and 4 ranks from 512K */
        expect("allreduce", 4, 1 << 21, 1, OVER(4) ? "cma" : "ring");
        expect("allreduce", 5, 1 << 20, 1, OVER(5) ? "cma" : "shm_rsag");
        expect("allreduce", 8, 1 << 23, 1, OVER(8) ? "cma" : "ring");
        expect("allreduce", 8, 1 << 23, 0, OVER(8) ? "cma" : "rabenseifner");
#undef OVER
        expect("bcast", 8, 8, 1, "shm");
        expect("bcast", 8, 1 << 22, 1, ncpu < 8 && cma && bound ? "cma" : "linear");
        expect("bcast", 128, 1 << 22, 1, ncpu < 128 && cma && bound ? "cma" : "pipeline");
        expect("alltoall", 8, 1 << 22, 1, "linear");
        expect("alltoall", 128, 1 << 22, 1, "pairwise");
        /* Above 256 KiB when the ranks outnumber the processors: the tree
         * over the ranks ordered by CPU (commutative operations at 4 and
         * from 8 ranks) or the slots; else the tree up to 8 ranks, then
         * Rabenseifner. */
        expect("reduce", 8, 1 << 20, 1, ncpu < 8 && !bound ? "shm" : "binomial");
        expect("reduce", 8, 1 << 20, 0, ncpu < 8 ? "shm" : "binomial");
        expect("reduce", 16, 1 << 20, 1, ncpu < 16 ? (bound ? "binomial" : "shm") : "rabenseifner");
        expect("reduce", 16, 1 << 20, 0, ncpu < 16 ? "shm" : "rabenseifner");
    }

run:
    /* The collectives run under whatever was chosen. */
    enum { N = 5000 };
    int *in = malloc(N * sizeof(int)), *out = malloc(N * sizeof(int));
    for (int n = 1; n <= N; n *= 7) {
        for (int i = 0; i < n; i++)
            in[i] = rank + i;
        MPI_OK(MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == size * (size - 1) / 2 + size * i, "allreduce n=%d [%d] = %d", n, i, out[i]);
        for (int i = 0; i < n; i++)
            out[i] = rank == size - 1 ? 7 * i : -1;
        MPI_OK(MPI_Bcast(out, n, MPI_INT, size - 1, MPI_COMM_WORLD));
        for (int i = 0; i < n; i++)
            CHECK(out[i] == 7 * i, "bcast n=%d [%d] = %d", n, i, out[i]);
    }
    free(in);
    free(out);
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("coll_tuning %s: ok\n", mode);
    return 0;
}
