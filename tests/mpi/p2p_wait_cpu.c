/* A rank blocked in MPI_Recv for a message that comes only seconds later
 * must not burn its core: rank 0 sleeps (outside MPI) before it sends;
 * rank 1's thread CPU time while it waits must stay under 1% of the wall
 * time after the first second (a helper thread samples the waiting
 * thread's CPU clock at 1 s), and under 5% over the whole wait. The same
 * for a wait in MPI_Wait on an MPI_Irecv and in MPI_Barrier. The message
 * must arrive intact. Pairs 2k -> 2k+1; ranks beyond wait in the final
 * barrier. Argument: seconds to wait (default 2). */
#include "mpitest.h"

#include <pthread.h>
#include <time.h>

typedef struct {
    clockid_t clock;
    double cpu;
} sampler_t;

static double clock_s(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *sample(void *arg)
{
    sampler_t *s = arg;
    struct timespec ts = {1, 0};
    nanosleep(&ts, NULL);
    s->cpu = clock_s(s->clock);
    return NULL;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

enum { VIA_RECV, VIA_WAIT, VIA_BARRIER };

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    double delay = argc > 1 ? atof(argv[1]) : 2.0;
    CHECK(delay >= 1.5, "wait at least 1.5 s (asked %.2f)", delay);
    MPI_Comm pair;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair));
    int prank, psize;
    MPI_Comm_rank(pair, &prank);
    MPI_Comm_size(pair, &psize);
    static const char *how[] = {"MPI_Recv", "MPI_Wait(MPI_Irecv)", "MPI_Barrier"};
    for (int via = VIA_RECV; via <= VIA_BARRIER && psize == 2; via++) {
        MPI_OK(MPI_Barrier(pair));
        if (prank == 0) {
            sleep_s(delay);
            int msg = 1000 + via;
            if (via == VIA_BARRIER)
                MPI_OK(MPI_Barrier(pair));
            else
                MPI_OK(MPI_Send(&msg, 1, MPI_INT, 1, via, pair));
            continue;
        }
        sampler_t s;
        pthread_getcpuclockid(pthread_self(), &s.clock);
        pthread_t th;
        CHECK(pthread_create(&th, NULL, sample, &s) == 0, "cannot start the sampling thread");
        double w0 = MPI_Wtime(), c0 = clock_s(s.clock);
        int msg = -1;
        if (via == VIA_RECV) {
            MPI_OK(MPI_Recv(&msg, 1, MPI_INT, 0, via, pair, MPI_STATUS_IGNORE));
        } else if (via == VIA_WAIT) {
            MPI_Request q;
            MPI_OK(MPI_Irecv(&msg, 1, MPI_INT, 0, via, pair, &q));
            MPI_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Barrier(pair));
            msg = 1000 + via;
        }
        double w1 = MPI_Wtime(), c1 = clock_s(s.clock);
        pthread_join(th, NULL);
        double whole = 100.0 * (c1 - c0) / (w1 - w0), after = 100.0 * (c1 - s.cpu) / (w1 - w0 - 1.0);
        printf("p2p_wait_cpu: %s waited %.2f s, CPU %.3f%% in all, %.3f%% after the first second\n",
               how[via], w1 - w0, whole, after);
        CHECK(msg == 1000 + via, "%s: got %d, expected %d", how[via], msg, 1000 + via);
        CHECK(w1 - w0 > delay - 0.5, "%s returned after %.2f s, before the message was sent", how[via],
              w1 - w0);
        CHECK(after < 1.0, "%s burned %.2f%% of a core after the first second (limit 1%%)", how[via], after);
        CHECK(whole < 5.0, "%s burned %.2f%% of a core over the wait (limit 5%%)", how[via], whole);
    }
    MPI_OK(MPI_Comm_free(&pair));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    return 0;
}
