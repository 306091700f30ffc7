/* Start-up benchmarks.
 *
 *   init   the time each rank spends in MPI_Init (min, max, average)
 *   hello  MPI_Init, one barrier, MPI_Finalize: what a job costs before it
 *          does any work
 *
 * Inside a job they report what a rank can see of itself. What a user
 * waits for is the whole launch, from typing mpiexec to its exit, which no
 * rank can time: with --launcher "CMD", halo-bench starts no MPI itself and
 * runs `CMD halo-bench NAME` repeatedly, timing each launch from outside
 * (wall clock, fork to exit of the launcher). */
#include "hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

/* -c for start-up: every rank took part (the ranks add up). */
static int ranks_ok(hb_run_t *r)
{
    long mine = r->rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, r->comm);
    long want = (long)r->nranks * (r->nranks - 1) / 2;
    if (r->o->inject_error)
        sum++;
    return sum == want;
}

int hb_run_startup(hb_run_t *r, int kind, double init_seconds)
{
    static const hb_col_t init_cols[] = {
        {"Avg Init(ms)", "avg_ms", 0, 2},
        {"Min Init(ms)", "min_ms", 0, 2},
        {"Max Init(ms)", "max_ms", 0, 2},
    };
    static const hb_col_t hello_cols[] = {
        {"Avg Init(ms)", "init_ms", 0, 2},
        {"Barrier(us)", "barrier_us", 0, 2},
    };
    double v[3];
    if (kind == HB_S_INIT) {
        hb_report_begin(r, init_cols, 3, 1);
        hb_stats(r->comm, init_seconds * 1e3, 1, &v[1], &v[2], &v[0], NULL);
    } else {
        hb_report_begin(r, hello_cols, 2, 1);
        double t0 = MPI_Wtime();
        MPI_Barrier(r->comm);
        double b = (MPI_Wtime() - t0) * 1e6;
        hb_stats(r->comm, init_seconds * 1e3, 1, NULL, NULL, &v[0], NULL);
        hb_stats(r->comm, b, 1, NULL, NULL, &v[1], NULL);
    }
    int ok = r->o->validate ? ranks_ok(r) : 1;
    hb_report_row(r, 0, v, r->o->validate, ok);
    if (kind == HB_S_HELLO && r->rank == 0 && r->o->output == HB_OUT_TEXT)
        printf("# This is a test with %d processes\n", r->nranks);
    return 0;
}

/* "-n N" or "-np N" in the launcher's words, for the report. */
static int launcher_ranks(char **w, int n)
{
    for (int i = 0; i + 1 < n; i++)
        if (!strcmp(w[i], "-n") || !strcmp(w[i], "-np") || !strcmp(w[i], "--np"))
            return atoi(w[i + 1]);
    return 0;
}

int hb_launch_wrapper(const hb_opts_t *o, const hb_bench_t *b)
{
    static const hb_col_t cols[] = {
        {"Avg Launch(ms)", "avg_ms", 0, 2},
        {"Min Launch(ms)", "min_ms", 0, 2},
        {"Max Launch(ms)", "max_ms", 0, 2},
        {"Iterations", "iterations", 0, -1},
    };
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        fprintf(stderr, "halo-bench: cannot find my own executable (/proc/self/exe)\n");
        return 2;
    }
    self[len] = 0;
    char *copy = strdup(o->launcher);
    char *words[256];
    int nw = 0;
    for (char *tok = strtok(copy, " \t"); tok && nw < 250; tok = strtok(NULL, " \t"))
        words[nw++] = tok;
    if (nw == 0) {
        fprintf(stderr, "halo-bench: --launcher needs a command, such as \"mpiexec -n 2\"\n");
        free(copy);
        return 2;
    }
    int nargs = nw;
    words[nargs++] = self;
    words[nargs++] = (char *)b->name;
    if (o->validate)
        words[nargs++] = "-c";
    words[nargs] = NULL;

    int iters = o->iters >= 0 ? o->iters : 5, warmup = o->warmup >= 0 ? o->warmup : 1;
    hb_run_t r = {.bench = b->name, .title = b->title, .o = o, .rank = 0, .nranks = launcher_ranks(words, nw),
                  .comm = MPI_COMM_NULL};
    if (o->output == HB_OUT_TEXT)
        printf("# Launcher: %s\n# Timing whole launches: %s ... %s %s\n", o->launcher, words[0], self, b->name);
    hb_report_begin(&r, cols, 4, 1);
    double sum = 0, mn = 1e300, mx = 0;
    int ok = 1;
    for (int it = 0; it < warmup + iters; it++) {
        fflush(stdout);
        double t0 = hb_now();
        pid_t pid = fork();
        if (pid == 0) {
            int devnull = open("/dev/null", O_WRONLY);
            if (devnull >= 0)
                dup2(devnull, 1);
            execvp(words[0], words);
            fprintf(stderr, "halo-bench: cannot run %s\n", words[0]);
            _exit(127);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "halo-bench: launch %d of \"%s\" failed (status %d)\n", it + 1, o->launcher, status);
            ok = 0;
            break;
        }
        double t = (hb_now() - t0) * 1e3;
        if (it < warmup)
            continue;
        sum += t;
        mn = t < mn ? t : mn;
        mx = t > mx ? t : mx;
    }
    if (ok && iters > 0) {
        double v[4] = {sum / iters, mn, mx, iters};
        hb_report_row(&r, 0, v, o->validate, 1);
    } else if (!ok) {
        hb_report_error(&r, "the launcher failed");
    }
    hb_report_end(&r);
    free(copy);
    return ok ? 0 : 1;
}
