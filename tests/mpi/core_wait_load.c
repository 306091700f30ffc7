/* Waiting while other processes want the CPUs (progress.c, "Outside
 * load", HALO_WAIT_OUTSIDE_LOAD=1; with the argument "off", run with it
 * 0: then no wait may count, in 20 rounds): rank 0 starts busy processes, more than the node has CPUs and
 * ranks together, then every rank in turn arrives late (5 ms) to a Bcast
 * and a ring exchange, so that the others wait past their spinning phase,
 * round after round until every rank has counted such a wait (20 s at most).
 * With the load present such a wait sleeps instead of yielding, and the
 * MPI_T counter halo_waits_outside_load says so: it must have grown on
 * every rank that waited. The data of every step is checked. (No timing is
 * asserted: the figures are in docs/performance.md.) Any number of ranks. */
#include "mpitest.h"

#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_HOGS 256

static pid_t hogs[MAX_HOGS];
static int nhogs;

static void start_hogs(int n)
{
    pid_t parent = getpid();
    for (nhogs = 0; nhogs < n && nhogs < MAX_HOGS; nhogs++) {
        pid_t p = fork();
        CHECK(p >= 0, "fork failed");
        if (p == 0) {
            /* Ends with the test whatever happens to it, and after two
             * minutes in any case. */
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent)
                _exit(0);
            alarm(120);
            /* Not on rank 0's CPU only, where mpiexec may have bound it:
             * every CPU gets its share. */
            cpu_set_t all;
            CPU_ZERO(&all);
            for (long c = 0; c < sysconf(_SC_NPROCESSORS_ONLN) && c < CPU_SETSIZE; c++)
                CPU_SET(c, &all);
            sched_setaffinity(0, sizeof all, &all);
            for (volatile unsigned long x = 0;; x++)
                ;
        }
        hogs[nhogs] = p;
    }
}

static void stop_hogs(void)
{
    for (int i = 0; i < nhogs; i++)
        kill(hogs[i], SIGKILL);
    for (int i = 0; i < nhogs; i++)
        waitpid(hogs[i], NULL, 0);
    nhogs = 0;
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size, prov;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_OK(MPI_Comm_rank(comm, &rank));
    MPI_OK(MPI_Comm_size(comm, &size));
    MPI_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &prov));

    MPI_T_pvar_session ps;
    MPI_T_pvar_handle ph;
    int idx = -1, cnt = 0, cls = -1, ro = -1, cont = -1;
    MPI_Datatype dt;
    MPI_OK(MPI_T_pvar_get_index("halo_waits_outside_load", MPI_T_PVAR_CLASS_COUNTER, &idx));
    MPI_OK(MPI_T_pvar_get_info(idx, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, NULL, &ro, &cont, NULL));
    CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && ro == 1 && cont == 1,
          "halo_waits_outside_load: class %d, read-only %d, continuous %d", cls, ro, cont);
    MPI_OK(MPI_T_pvar_session_create(&ps));
    MPI_OK(MPI_T_pvar_handle_alloc(ps, idx, NULL, &ph, &cnt));
    CHECK_INT(cnt, 1);
    unsigned long long before = 0, after = 0;
    MPI_OK(MPI_T_pvar_read(ps, ph, &before));
    CHECK(before == 0, "a counter's new handle reads %llu", before);

    /* A job confined to some of the node's CPUs does not look at the load
     * (the node's count says nothing of its CPUs): mpiexec says how many it
     * may use. */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *jc = getenv("HALO_JOB_CPUS");
    int looks = !jc || atol(jc) >= cpus;
    if (!looks && rank == 0)
        printf("the job may use %s of the %ld CPUs: the counter is not checked\n", jc, cpus);
    /* "off": run with HALO_WAIT_OUTSIDE_LOAD=0, and no wait may count.
     * "pair": no busy processes; the late rank computes instead of
     * sleeping, and another job does the same beside this one
     * (wait_two_jobs.sh): the other job's ranks are Halo processes, not
     * outside load, so no wait may count either. */
    int off = argc > 1 && !strcmp(argv[1], "off");
    int pair = argc > 1 && !strcmp(argv[1], "pair");
    off |= pair;

    /* Busy processes: twice the CPUs, plus the ranks, plus a margin, so that
     * more tasks are runnable than the node has ranks however the kernel
     * places them. */
    if (rank == 0 && !pair) {
        start_hogs((int)(2 * (cpus > 0 ? cpus : 1)) + size + 2);
        mt_sleep_ms(20);
    }
    MPI_OK(MPI_Barrier(comm));

    /* Rounds until every rank has counted a wait, for 20 seconds at most (a
     * rank looks at the load every 16th time it is about to yield, and
     * under this load a yield lasts milliseconds). */
    long buf[64];
    double t0 = MPI_Wtime();
    int all[2] = {0, 1}, rounds = 0;   /* every rank counted; no rank's time is up */
    for (int round = 0; !all[0] && all[1]; round++, rounds++) {
        for (int late = 0; late < size; late++) {
            if (rank == late && pair)
                for (double t = MPI_Wtime(); MPI_Wtime() - t < 5e-3;)
                    ;
            else if (rank == late)
                mt_sleep_ms(5);
            for (int i = 0; i < 64; i++)
                buf[i] = rank == late ? (long)round * 1000 + late * 100 + i : -1;
            MPI_OK(MPI_Bcast(buf, 64, MPI_LONG, late, comm));
            for (int i = 0; i < 64; i++)
                CHECK(buf[i] == (long)round * 1000 + late * 100 + i, "round %d root %d: buf[%d] = %ld", round,
                      late, i, buf[i]);
            if (size > 1) {
                /* A ring exchange that starts at the late rank. */
                long out = rank * 10 + round, in = -1;
                int next = (rank + 1) % size, prev = (rank + size - 1) % size;
                if (rank == late) {
                    MPI_OK(MPI_Send(&out, 1, MPI_LONG, next, round, comm));
                    MPI_OK(MPI_Recv(&in, 1, MPI_LONG, prev, round, comm, MPI_STATUS_IGNORE));
                } else {
                    MPI_OK(MPI_Recv(&in, 1, MPI_LONG, prev, round, comm, MPI_STATUS_IGNORE));
                    MPI_OK(MPI_Send(&out, 1, MPI_LONG, next, round, comm));
                }
                CHECK(in == prev * 10 + round, "round %d: ring got %ld from %d", round, in, prev);
            }
        }
        MPI_OK(MPI_T_pvar_read(ps, ph, &after));
        int mine[2] = {after > before || size == 1 || !looks || (off && round >= 20), MPI_Wtime() - t0 < 20};
        MPI_OK(MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MIN, comm));
    }
    MPI_OK(MPI_T_pvar_read(ps, ph, &after));
    MPI_OK(MPI_Barrier(comm));
    if (rank == 0)
        stop_hogs();

    /* Every rank waits 5 ms for each other rank in every round; with the
     * busy processes running, those waits must come to sleep for the load.
     * A single rank has nobody to wait for. */
    if (off)
        CHECK(after == before, "%s, %llu waits counted the load", pair ? "beside another Halo job" : "with the rule off",
              after - before);
    else if (size > 1 && looks)
        CHECK(after > before, "no wait counted the outside load (%llu, then %llu)", before, after);
    unsigned long long total = 0, mine = after - before;
    MPI_OK(MPI_Reduce(&mine, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, comm));
    if (rank == 0)
        printf("waits counted under load: %llu over %d ranks, %d rounds\n", total, size, rounds);

    MPI_OK(MPI_T_pvar_handle_free(ps, &ph));
    MPI_OK(MPI_T_pvar_session_free(&ps));
    MPI_OK(MPI_T_finalize());
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_wait_load: ok\n");
    return 0;
}
