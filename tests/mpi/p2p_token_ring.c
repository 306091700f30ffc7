/* A token goes around a ring of all ranks 1000 times (each rank adds one);
 * with more ranks than cores this is only fast if waiting ranks give up
 * the CPU instead of spinning. The whole run must take less than 2 s (the
 * limit is for 8 ranks on 2 cores), and the token must come back as
 * 1000 * size. A second run passes it with MPI_ANY_SOURCE receives. */
#include "mpitest.h"

#include <time.h>

#define LAPS 1000

/* The clock is the system's, not MPI_Wtime, so that a wrong MPI_Wtime
 * cannot make the test pass. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#define LIMIT 2.0

static double ring(int rank, int size, int any)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    int src = any ? MPI_ANY_SOURCE : left;
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    double t0 = now();
    long token = 0;
    for (int lap = 0; lap < LAPS; lap++) {
        MPI_Status st;
        if (rank == 0) {
            token++;
            MPI_OK(MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD));
            MPI_OK(MPI_Recv(&token, 1, MPI_LONG, src, lap, MPI_COMM_WORLD, &st));
            CHECK(token == (long)(lap + 1) * size, "lap %d: token %ld, expected %ld", lap, token,
                  (long)(lap + 1) * size);
        } else {
            MPI_OK(MPI_Recv(&token, 1, MPI_LONG, src, lap, MPI_COMM_WORLD, &st));
            CHECK(token == (long)lap * size + rank, "lap %d: token %ld, expected %ld", lap, token,
                  (long)lap * size + rank);
            token++;
            MPI_OK(MPI_Send(&token, 1, MPI_LONG, right, lap, MPI_COMM_WORLD));
        }
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == lap, "lap %d: token from %d tag %d", lap,
              st.MPI_SOURCE, st.MPI_TAG);
    }
    double dt = now() - t0;
    MPI_OK(MPI_Bcast(&dt, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
    return dt;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    for (int any = 0; any < 2; any++) {
        double dt = ring(rank, size, any);
        if (rank == 0)
            printf("p2p_token_ring: %d laps of %d ranks%s: %.3f s (%.1f us per hop)\n", LAPS, size,
                   any ? " (MPI_ANY_SOURCE)" : "", dt, dt * 1e6 / (LAPS * size));
        CHECK(dt < LIMIT, "%d laps around %d ranks took %.3f s, limit %.1f s", LAPS, size, dt,
              LIMIT);
    }
    MPI_OK(MPI_Finalize());
    return 0;
}
