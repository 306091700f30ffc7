/* The first message between two ranks arrives although the receiver is
 * polling at the very moment the sender sets up the channel to it (the
 * shared-memory transport creates a pair's ring lazily, on the first small
 * message, and the receiver must start watching it).
 *
 * First, right after MPI_Init, pairs of ranks exchange their very first
 * messages while the receiver polls. Then, for every ordered pair (i, j) in
 * turn, j spins in MPI_Test on a receive
 * from i while i sends a few tiny messages to j (tiny messages only, so
 * nothing else would carry them along). If j does not see them within 5 s
 * the message was lost in the channel set-up. A final all-to-all of tiny
 * messages, everyone polling, repeats the check for every pair that the
 * barriers had not yet connected. */
#include "mpitest.h"

#include <time.h>

#define DEADLINE 5.0
#define MSGS 4

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Waits for all n requests by polling; fails after DEADLINE seconds. */
static void poll_all(int n, MPI_Request *r, const char *what, int peer)
{
    double t0 = now();
    int flag = 0;
    while (!flag) {
        MPI_OK(MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE));
        if (!flag && now() - t0 > DEADLINE)
            MT_FAIL("%s: tiny messages from rank %d did not arrive within %.0f s; they were sent "
                    "(lost while the channel from %d was being set up?)", what, peer, DEADLINE,
                    peer);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* Right after MPI_Init, before any other traffic: within pairs (2k,
     * 2k+1) the odd rank polls while the even one sends its first
     * messages, then the other way round. */
    int partner = rank ^ 1;
    if (partner < size) {
        for (int dir = 0; dir < 2; dir++) {
            int v[MSGS];
            MPI_Request r[MSGS];
            if (rank % 2 != dir) {
                for (int k = 0; k < MSGS; k++)
                    MPI_OK(MPI_Irecv(&v[k], 1, MPI_INT, partner, 1000 + dir, MPI_COMM_WORLD, &r[k]));
                poll_all(MSGS, r, "first messages after MPI_Init", partner);
                for (int k = 0; k < MSGS; k++)
                    CHECK(v[k] == 77 + k, "message %d from %d holds %d", k, partner, v[k]);
            } else {
                for (int k = 0; k < MSGS; k++) {
                    int x = 77 + k;
                    MPI_OK(MPI_Send(&x, 1, MPI_INT, partner, 1000 + dir, MPI_COMM_WORLD));
                }
            }
        }
    }
    for (int i = 0; i < size; i++) {
        for (int j = 0; j < size; j++) {
            if (i == j)
                continue;
            int tag = i * size + j;
            int v[MSGS];
            MPI_Request r[MSGS];
            if (rank == j)
                for (int k = 0; k < MSGS; k++)
                    MPI_OK(MPI_Irecv(&v[k], 1, MPI_INT, i, tag, MPI_COMM_WORLD, &r[k]));
            MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
            if (rank == j) {
                poll_all(MSGS, r, "pairwise first contact", i);
                for (int k = 0; k < MSGS; k++)
                    CHECK(v[k] == tag * 10 + k, "message %d from %d holds %d", k, i, v[k]);
            } else if (rank == i) {
                /* Let j get into its polling loop first. */
                double t0 = now();
                while (now() - t0 < 0.0005)
                    ;
                for (int k = 0; k < MSGS; k++) {
                    int x = tag * 10 + k;
                    MPI_OK(MPI_Send(&x, 1, MPI_INT, j, tag, MPI_COMM_WORLD));
                }
            }
        }
    }
    /* Everyone to everyone at once on a fresh communicator. */
    MPI_Comm c;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int *in = malloc(sizeof(int) * (size_t)size), *out = malloc(sizeof(int) * (size_t)size);
    MPI_Request *r = malloc(sizeof(MPI_Request) * 2 * (size_t)size);
    int nr = 0;
    for (int p = 0; p < size; p++) {
        in[p] = -1;
        out[p] = rank * 1000 + p;
        MPI_OK(MPI_Irecv(&in[p], 1, MPI_INT, p, 0, c, &r[nr++]));
    }
    for (int p = 0; p < size; p++)
        MPI_OK(MPI_Isend(&out[p], 1, MPI_INT, p, 0, c, &r[nr++]));
    poll_all(nr, r, "all-to-all", -1);
    for (int p = 0; p < size; p++)
        CHECK(in[p] == p * 1000 + rank, "from %d got %d", p, in[p]);
    free(in);
    free(out);
    free(r);
    MPI_OK(MPI_Comm_free(&c));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_first_contact: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
