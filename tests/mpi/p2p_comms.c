/* Point-to-point on other communicators:
 *  - messages on a duplicate of MPI_COMM_WORLD never match receives on
 *    MPI_COMM_WORLD (same source, same tag) and the other way round, even
 *    with wildcards and probes;
 *  - on a communicator split with the ranks reversed (and on the halves of
 *    an even/odd split), destinations and sources are ranks of that
 *    communicator, and the status reports the sender's rank there;
 *  - MPI_COMM_SELF carries messages from a rank to itself. */
#include "mpitest.h"

static int rank, size;

static void isolation(void)
{
    MPI_Comm dup;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* Post wildcard receives on WORLD first, then send on dup and on WORLD
     * with the same tag; each receive must get the message of its own
     * communicator (and sizes differ, so a mix-up shows in the count). */
    int w[4] = {-1, -1, -1, -1}, d[4] = {-1, -1, -1, -1};
    MPI_Request r[4];
    MPI_OK(MPI_Irecv(w, 4, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r[0]));
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int sd[2] = {rank, 222}, sw[3] = {rank, 111, 7};
    MPI_OK(MPI_Isend(sd, 2, MPI_INT, right, 5, dup, &r[1]));
    /* Once the dup message has arrived (the probe on dup sees it), the
     * receive posted on WORLD must still be waiting. */
    int flag = 1;
    MPI_Status st;
    MPI_OK(MPI_Probe(left, 5, dup, &st));
    MPI_OK(MPI_Test(&r[0], &flag, &st));
    CHECK(flag == 0, "a receive on MPI_COMM_WORLD took a message sent on a duplicate (from %d)",
          st.MPI_SOURCE);
    /* Nobody sends on WORLD before every rank has tested. */
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Isend(sw, 3, MPI_INT, right, 5, MPI_COMM_WORLD, &r[2]));
    MPI_OK(MPI_Irecv(d, 4, MPI_INT, left, 5, dup, &r[3]));
    MPI_Status sts[4];
    MPI_OK(MPI_Waitall(4, r, sts));
    int cw = -1, cd = -1;
    MPI_OK(MPI_Get_count(&sts[0], MPI_INT, &cw));
    MPI_OK(MPI_Get_count(&sts[3], MPI_INT, &cd));
    CHECK(cw == 3 && w[1] == 111 && w[0] == left && sts[0].MPI_SOURCE == left,
          "MPI_COMM_WORLD receive got %d ints (%d, %d) from %d", cw, w[0], w[1],
          sts[0].MPI_SOURCE);
    CHECK(cd == 2 && d[1] == 222 && d[0] == left && sts[3].MPI_SOURCE == left,
          "duplicate's receive got %d ints (%d, %d) from %d", cd, d[0], d[1], sts[3].MPI_SOURCE);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &flag, &st));
    CHECK(flag == 0, "message left on the duplicate");
    MPI_OK(MPI_Comm_free(&dup));
}

static void reversed(void)
{
    MPI_Comm rev;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rev));
    int rr = -1;
    MPI_OK(MPI_Comm_rank(rev, &rr));
    CHECK(rr == size - 1 - rank, "rank %d in the reversed communicator", rr);
    /* Send to rev-rank rr+1, i.e. world rank rank-1. */
    int to = (rr + 1) % size, from = (rr - 1 + size) % size;
    int msg[2] = {rank, rr}, got[2] = {-1, -1};
    MPI_Status st;
    MPI_OK(MPI_Sendrecv(msg, 2, MPI_INT, to, 9, got, 2, MPI_INT, MPI_ANY_SOURCE, 9, rev, &st));
    int from_world = size - 1 - from;
    CHECK(st.MPI_SOURCE == from && got[1] == from && got[0] == from_world,
          "reversed communicator: status source %d, message from world %d (rev %d), expected "
          "rev %d", st.MPI_SOURCE, got[0], got[1], from);
    MPI_OK(MPI_Comm_free(&rev));

    /* Even/odd halves: a ring inside each half, large messages. */
    MPI_Comm half;
    MPI_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
    int hr, hs;
    MPI_OK(MPI_Comm_rank(half, &hr));
    MPI_OK(MPI_Comm_size(half, &hs));
    const int n = 50000;
    int *a = malloc(sizeof(int) * n), *b = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        a[i] = rank * 1000003 + i;
    int hto = (hr + 1) % hs, hfrom = (hr - 1 + hs) % hs;
    MPI_OK(MPI_Sendrecv(a, n, MPI_INT, hto, 3, b, n, MPI_INT, hfrom, MPI_ANY_TAG, half, &st));
    int wfrom = 2 * hfrom + rank % 2;
    CHECK(st.MPI_SOURCE == hfrom && st.MPI_TAG == 3, "half communicator: status source %d tag %d, "
          "expected %d", st.MPI_SOURCE, st.MPI_TAG, hfrom);
    for (int i = 0; i < n; i++)
        if (b[i] != wfrom * 1000003 + i)
            MT_FAIL("half communicator: int %d is %d, expected data of world rank %d", i, b[i],
                    wfrom);
    free(a);
    free(b);
    MPI_OK(MPI_Comm_free(&half));
}

static void self(void)
{
    int x = rank + 500, y = -1;
    MPI_Request r;
    MPI_Status st;
    MPI_OK(MPI_Isend(&x, 1, MPI_INT, 0, 4, MPI_COMM_SELF, &r));
    MPI_OK(MPI_Recv(&y, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &st));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK(y == rank + 500 && st.MPI_SOURCE == 0 && st.MPI_TAG == 4,
          "MPI_COMM_SELF: got %d from %d tag %d", y, st.MPI_SOURCE, st.MPI_TAG);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    isolation();
    reversed();
    self();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_comms: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
