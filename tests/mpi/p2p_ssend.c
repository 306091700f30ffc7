/* A synchronous send completes only once its receive has been posted.
 *
 * Deterministic part: rank 0 starts an Issend (or a persistent Ssend_init)
 * to rank 1, which cannot post the matching receive before it gets a "go"
 * message on another tag. Meanwhile rank 0 tests the send for a while (rank
 * 1 probes the message, so it has arrived and is waiting unexpected) and
 * the flag must stay 0; only after rank 0 sends "go" may the send finish.
 * Run for eager sizes (where the data itself has already left) and
 * rendezvous sizes.
 *
 * Timed part: a blocking MPI_Ssend to a receiver that sleeps before posting
 * must take at least most of that sleep. */
#include "mpitest.h"

#include <stdint.h>

enum { TAG_DATA = 7, TAG_GO = 8 };
static const int sizes[] = {0, 8, 2048, 16384, 17408, 1 << 20};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static unsigned char pat(int k, size_t i)
{
    return (unsigned char)((i * 131u + (i >> 9) * 7u + (unsigned)k * 29u + 3u) & 0xff);
}

/* Sender side of one deterministic round; `persistent` uses Ssend_init. */
static void sync_sender(unsigned char *buf, int n, int k, int persistent)
{
    for (int i = 0; i < n; i++)
        buf[i] = pat(k, (size_t)i);
    MPI_Request r;
    if (persistent) {
        MPI_OK(MPI_Ssend_init(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &r));
        MPI_OK(MPI_Start(&r));
    } else {
        MPI_OK(MPI_Issend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &r));
    }
    /* Rank 1 tells us when the message is visible to its probe. */
    int seen;
    MPI_OK(MPI_Recv(&seen, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(seen == n, "receiver probed a message of %d bytes, sent %d", seen, n);
    double t0 = MPI_Wtime();
    int tests = 0;
    while (MPI_Wtime() - t0 < 0.1 || tests < 200) {
        int flag = -1;
        MPI_Status st;
        MPI_OK(MPI_Test(&r, &flag, &st));
        CHECK(flag == 0,
              "%s of %d bytes completed before the receiver posted its receive (test %d)",
              persistent ? "persistent Ssend" : "Issend", n, tests);
        /* Request_get_status must agree and not free the request. */
        MPI_OK(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "Request_get_status says the Issend of %d bytes is complete", n);
        tests++;
    }
    int go = 1;
    MPI_OK(MPI_Send(&go, 1, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    if (persistent) {
        CHECK(r != MPI_REQUEST_NULL, "Wait freed a persistent request");
        MPI_OK(MPI_Request_free(&r));
    } else {
        CHECK(r == MPI_REQUEST_NULL, "Wait did not free the Issend request");
    }
}

static void sync_receiver(unsigned char *buf, int n, int k)
{
    MPI_Status st;
    MPI_OK(MPI_Probe(0, TAG_DATA, MPI_COMM_WORLD, &st));
    int count = -1;
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    MPI_OK(MPI_Send(&count, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD));
    /* Keep probing while the sender tests: probing is not receiving. */
    int go_arrived = 0;
    while (!go_arrived) {
        int flag = 0;
        MPI_OK(MPI_Iprobe(0, TAG_DATA, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag, "the probed synchronous message disappeared");
        MPI_OK(MPI_Iprobe(0, TAG_GO, MPI_COMM_WORLD, &go_arrived, MPI_STATUS_IGNORE));
    }
    int go;
    MPI_OK(MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    memset(buf, 0, (size_t)n + 1);
    MPI_OK(MPI_Recv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &st));
    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
    CHECK(count == n, "received %d bytes, expected %d", count, n);
    for (int i = 0; i < n; i++)
        if (buf[i] != pat(k, (size_t)i))
            MT_FAIL("synchronous message of %d bytes: byte %d is %d, expected %d", n, i, buf[i],
                    pat(k, (size_t)i));
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    CHECK(size >= 2, "needs 2 ranks");
    unsigned char *buf = malloc((1 << 20) + 1);
    for (int si = 0; si < NSIZES; si++) {
        for (int persistent = 0; persistent < 2; persistent++) {
            int k = si * 2 + persistent;
            if (rank == 0)
                sync_sender(buf, sizes[si], k, persistent);
            else if (rank == 1)
                sync_receiver(buf, sizes[si], k);
        }
    }

    /* Timed: rank 1 sleeps 400 ms after a barrier before receiving. */
    for (int si = 0; si < NSIZES; si += NSIZES - 1) {
        int n = sizes[si];
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        if (rank == 0) {
            double t0 = MPI_Wtime();
            MPI_OK(MPI_Ssend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD));
            double dt = MPI_Wtime() - t0;
            CHECK(dt > 0.2, "MPI_Ssend of %d bytes returned after %.3f s, but the receiver "
                  "slept 0.4 s before posting its receive", n, dt);
        } else if (rank == 1) {
            mt_sleep_ms(400);
            MPI_OK(MPI_Recv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    free(buf);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_ssend: ok\n");
    MPI_OK(MPI_Finalize());
    return 0;
}
