/* Nonblocking collectives made again with the same arguments start the
 * schedule kept from the last such call once its request has been freed
 * (coll/coll_api.c, "kept schedules"). The reuse must never change a
 * result, and must happen:
 * - Ibcast (root alternating between 0 and the last rank), Iallreduce, Ireduce, Igather, Iscatter,
 *   Iallgather and Ialltoall, 30 times each with new data every time,
 *   checked element by element; the count of kept starts
 *   (halo_tool_coll_kept_starts) must grow by at least the calls made
 *   again;
 * - a blocking call and a nonblocking call with the same arguments,
 *   alternated (each lane its own entry);
 * - three Ibarriers outstanding at once and completed in reverse order
 *   (the second and third cannot take the schedule the first holds: each
 *   builds one, and the next three calls find all three kept);
 * - ten Iallreduces outstanding at once on distinct buffers, more than
 *   the communicator keeps, so entries are replaced while their schedules
 *   are out (the requests free those), completed in a shuffled order;
 * - a duplicated communicator freed while a kept nonblocking call on it
 *   is pending, then waited for (no leak, no use after free under the
 *   sanitizers);
 * - an in-place Ialltoall of 4 MiB, whose schedule stages the blocks in a
 *   scratch area of megabytes: never kept (a communicator would hold its
 *   memory), right every time.
 * - kept and persistent shared-memory schedules start through their
 *   compiled form (halo_tool_coll_prog_starts): an Ibcast and a persistent
 *   Bcast whose root comes 20 ms late, so the others' starts stop at the
 *   wait for its data and the engine finishes them; an Igather started
 *   after a barrier, which a member runs to its end inside the call; a
 *   persistent Allreduce started 20 times. Each checked element by
 *   element, and the compiled starts counted.
 * Every rank checks every element against a value computed locally. */
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

long long halo_tool_coll_kept_starts(void);
long long halo_tool_coll_prog_starts(long long *finished);

static int rank, size;

static int val(int r, int it, int i)
{
    return 1000 * (it + 1) + 10 * r + i;
}

static int sum_over_ranks(int it, int i)
{
    int want = 0;
    for (int q = 0; q < size; q++)
        want += val(q, it, i);
    return want;
}

static void wait1(MPI_Request *q)
{
    MPI_OK(MPI_Wait(q, MPI_STATUS_IGNORE));
    CHECK(*q == MPI_REQUEST_NULL, "MPI_Wait left the request set");
}

/* 7 kinds x 30 rounds on comm; returns how many calls were made. */
static int repeat_rounds(MPI_Comm comm)
{
    enum { IT = 30 };
    int b[4], s[64], r[64], g[64 * 2], one, red;
    int calls = 0;
    MPI_Request q;
    for (int it = 0; it < IT; it++) {
        int root = it % 2 ? 0 : size - 1;
        for (int i = 0; i < 4; i++)
            b[i] = rank == root ? val(root, it, i) : -1;
        MPI_OK(MPI_Ibcast(b, 4, MPI_INT, root, comm, &q));
        wait1(&q);
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == val(root, it, i), "it %d ibcast from %d [%d] = %d", it, root, i, b[i]);

        for (int i = 0; i < 8; i++) {
            s[i] = val(rank, it, i);
            r[i] = -1;
        }
        MPI_OK(MPI_Iallreduce(s, r, 8, MPI_INT, MPI_SUM, comm, &q));
        wait1(&q);
        for (int i = 0; i < 8; i++)
            CHECK(r[i] == sum_over_ranks(it, i), "it %d iallreduce [%d] = %d, want %d", it, i, r[i],
                  sum_over_ranks(it, i));

        one = val(rank, it, 3);
        red = -1;
        MPI_OK(MPI_Ireduce(&one, &red, 1, MPI_INT, MPI_MAX, 0, comm, &q));
        wait1(&q);
        if (rank == 0)
            CHECK(red == val(size - 1, it, 3), "it %d ireduce max = %d", it, red);

        int s2[2] = {val(rank, it, 0), val(rank, it, 1)}, r2[2] = {-1, -1};
        memset(g, 0xff, sizeof g);
        MPI_OK(MPI_Igather(s2, 2, MPI_INT, g, 2, MPI_INT, 0, comm, &q));
        wait1(&q);
        if (rank == 0)
            for (int p = 0; p < size; p++)
                for (int i = 0; i < 2; i++)
                    CHECK(g[2 * p + i] == val(p, it, i), "it %d igather [%d][%d] = %d", it, p, i, g[2 * p + i]);
        if (rank == 0)
            for (int p = 0; p < size; p++)
                for (int i = 0; i < 2; i++)
                    g[2 * p + i] = val(p, it + 50, i);
        MPI_OK(MPI_Iscatter(g, 2, MPI_INT, r2, 2, MPI_INT, 0, comm, &q));
        wait1(&q);
        for (int i = 0; i < 2; i++)
            CHECK(r2[i] == val(rank, it + 50, i), "it %d iscatter [%d] = %d", it, i, r2[i]);

        int mine = val(rank, it, 5);
        for (int p = 0; p < size; p++)
            r[p] = -1;
        MPI_OK(MPI_Iallgather(&mine, 1, MPI_INT, r, 1, MPI_INT, comm, &q));
        wait1(&q);
        for (int p = 0; p < size; p++)
            CHECK(r[p] == val(p, it, 5), "it %d iallgather [%d] = %d", it, p, r[p]);

        for (int p = 0; p < size; p++) {
            s[p] = val(rank, it, p);
            r[p] = -1;
        }
        MPI_OK(MPI_Ialltoall(s, 1, MPI_INT, r, 1, MPI_INT, comm, &q));
        wait1(&q);
        for (int p = 0; p < size; p++)
            CHECK(r[p] == val(p, it, rank), "it %d ialltoall from %d = %d", it, p, r[p]);
        calls += 7;
    }
    return calls;
}

/* The same Allreduce blocking and nonblocking, alternated. */
static void mixed_rounds(MPI_Comm comm)
{
    int s[3], r[3];
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 3; i++) {
            s[i] = val(rank, it, i);
            r[i] = -1;
        }
        if (it % 2) {
            MPI_Request q;
            MPI_OK(MPI_Iallreduce(s, r, 3, MPI_INT, MPI_SUM, comm, &q));
            wait1(&q);
        } else {
            MPI_OK(MPI_Allreduce(s, r, 3, MPI_INT, MPI_SUM, comm));
        }
        for (int i = 0; i < 3; i++)
            CHECK(r[i] == sum_over_ranks(it, i), "it %d mixed allreduce [%d] = %d, want %d", it, i, r[i],
                  sum_over_ranks(it, i));
    }
}

/* Identical calls outstanding together. */
static void outstanding_barriers(MPI_Comm comm)
{
    for (int it = 0; it < 20; it++) {
        MPI_Request q[3];
        for (int k = 0; k < 3; k++)
            MPI_OK(MPI_Ibarrier(comm, &q[k]));
        for (int k = 2; k >= 0; k--)
            wait1(&q[k]);
    }
}

/* More distinct calls outstanding than are kept. */
static void many_outstanding(MPI_Comm comm)
{
    enum { N = 10 };
    int s[N], r[N];
    MPI_Request q[N];
    static const int order[N] = {7, 2, 9, 0, 5, 3, 8, 1, 6, 4};
    for (int it = 0; it < 15; it++) {
        for (int k = 0; k < N; k++) {
            s[k] = val(rank, it, k);
            r[k] = -1;
            MPI_OK(MPI_Iallreduce(&s[k], &r[k], 1, MPI_INT, MPI_SUM, comm, &q[k]));
        }
        for (int k = 0; k < N; k++)
            wait1(&q[order[(k + it) % N]]);
        for (int k = 0; k < N; k++)
            CHECK(r[k] == sum_over_ranks(it, k), "it %d outstanding %d: %d, want %d", it, k, r[k],
                  sum_over_ranks(it, k));
    }
}

/* A call with a large scratch area is built every time. */
static void large_not_kept(void)
{
    enum { TOTAL = 1 << 20 };   /* ints: 4 MiB */
    int blk = TOTAL / size;
    int *b = malloc((size_t)TOTAL * sizeof *b);
    long long before = halo_tool_coll_kept_starts();
    for (int it = 0; it < 3; it++) {
        for (int p = 0; p < size; p++)
            for (int i = 0; i < blk; i += 4099)
                b[p * blk + i] = val(rank, it, p) + i;
        MPI_Request q;
        MPI_OK(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_INT, b, blk, MPI_INT, MPI_COMM_WORLD, &q));
        wait1(&q);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < blk; i += 4099)
                CHECK(b[p * blk + i] == val(p, it, rank) + i, "it %d in-place ialltoall from %d [%d] = %d", it, p,
                      i, b[p * blk + i]);
    }
    long long kept = halo_tool_coll_kept_starts() - before;
    if (size > 1)
        CHECK(kept == 0, "an in-place Ialltoall of 4 MiB started a kept schedule %lld times", kept);
    free(b);
}

/* A communicator freed while a kept call on it is pending. */
static void freed_while_pending(void)
{
    for (int k = 0; k < 3; k++) {
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
        int b = -1;
        MPI_Request q;
        for (int it = 0; it < 3; it++) {
            b = rank == 0 ? val(0, it + k, 9) : -1;
            MPI_OK(MPI_Ibcast(&b, 1, MPI_INT, 0, d, &q));
            if (it == 2)
                MPI_OK(MPI_Comm_free(&d));
            wait1(&q);
            CHECK(b == val(0, it + k, 9), "dup %d it %d: ibcast gave %d", k, it, b);
        }
    }
}

/* Compiled starts: handed to the engine at a wait that does not hold, run
 * to the end inside the call, persistent. */
static void compiled_starts(void)
{
    enum { IT = 8 };
    long long fin0, fin1, st0 = halo_tool_coll_prog_starts(&fin0), st1;
    int b[4], root = size - 1;
    MPI_Request q;
    /* A late root: the others' starts wait for its flag (the first call
     * builds the schedule, so IT + 1 calls). */
    for (int it = 0; it <= IT; it++) {
        for (int i = 0; i < 4; i++)
            b[i] = rank == root ? val(root, it + 70, i) : -1;
        if (rank == root)
            usleep(20000);
        MPI_OK(MPI_Ibcast(b, 4, MPI_INT, root, MPI_COMM_WORLD, &q));
        wait1(&q);
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == val(root, it + 70, i), "late root it %d: ibcast [%d] = %d", it, i, b[i]);
    }
    st1 = halo_tool_coll_prog_starts(&fin1);
    if (size > 1 && rank != root)
        CHECK(st1 - st0 >= IT && (st1 - st0) - (fin1 - fin0) >= IT / 2,
              "late root: %lld compiled starts, %lld finished in the call; want %d, at least %d handed on",
              st1 - st0, fin1 - fin0, IT, IT / 2);
    /* After a barrier every member is done with the channel's previous
     * use: a member's Igather runs to its end inside the call. */
    st0 = st1;
    fin0 = fin1;
    for (int it = 0; it <= IT; it++) {
        int mine = val(rank, it + 80, 0), g[64];
        for (int p = 0; p < size; p++)
            g[p] = -1;
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Igather(&mine, 1, MPI_INT, g, 1, MPI_INT, 0, MPI_COMM_WORLD, &q));
        wait1(&q);
        if (rank == 0)
            for (int p = 0; p < size; p++)
                CHECK(g[p] == val(p, it + 80, 0), "after barrier it %d: igather [%d] = %d", it, p, g[p]);
    }
    st1 = halo_tool_coll_prog_starts(&fin1);
    if (size > 1 && rank != 0)
        CHECK(st1 - st0 >= IT && fin1 - fin0 >= IT / 2,
              "igather after a barrier: %lld compiled starts, %lld finished in the call; want %d, at least %d",
              st1 - st0, fin1 - fin0, IT, IT / 2);
    /* Persistent: a late root, then plain starts of an Allreduce. */
    st0 = st1;
    MPI_Request pb, pa;
    int s3[3], r3[3];
    MPI_OK(MPI_Bcast_init(b, 4, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &pb));
    MPI_OK(MPI_Allreduce_init(s3, r3, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pa));
    for (int it = 0; it < IT; it++) {
        for (int i = 0; i < 4; i++)
            b[i] = rank == root ? val(root, it + 90, i) : -1;
        if (rank == root && it % 2)
            usleep(20000);
        MPI_OK(MPI_Start(&pb));
        MPI_OK(MPI_Wait(&pb, MPI_STATUS_IGNORE));
        for (int i = 0; i < 4; i++)
            CHECK(b[i] == val(root, it + 90, i), "persistent bcast it %d [%d] = %d", it, i, b[i]);
    }
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 3; i++) {
            s3[i] = val(rank, it + 100, i);
            r3[i] = -1;
        }
        MPI_OK(MPI_Start(&pa));
        MPI_OK(MPI_Wait(&pa, MPI_STATUS_IGNORE));
        for (int i = 0; i < 3; i++)
            CHECK(r3[i] == sum_over_ranks(it + 100, i), "persistent allreduce it %d [%d] = %d, want %d", it, i,
                  r3[i], sum_over_ranks(it + 100, i));
    }
    MPI_OK(MPI_Request_free(&pb));
    MPI_OK(MPI_Request_free(&pa));
    st1 = halo_tool_coll_prog_starts(&fin1);
    if (size > 1)
        CHECK(st1 - st0 == IT + 20, "persistent: %lld compiled starts, want %d", st1 - st0, IT + 20);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size <= 64, "at most 64 ranks (got %d)", size);
    long long before = halo_tool_coll_kept_starts();
    int calls = repeat_rounds(MPI_COMM_WORLD);
    long long kept = halo_tool_coll_kept_starts() - before;
    /* Every call but the first of each kind (Ibcast: from each of its two
     * roots) finds its schedule kept: 8 distinct calls, as many as kept. */
    long long want = calls - 8;
    CHECK(kept >= want, "%lld of %d nonblocking calls started a kept schedule, want at least %lld", kept,
          calls, want);
    mixed_rounds(MPI_COMM_WORLD);
    before = halo_tool_coll_kept_starts();
    outstanding_barriers(MPI_COMM_WORLD);
    kept = halo_tool_coll_kept_starts() - before;
    /* The first three build a schedule each, kept for the next three. */
    CHECK(kept == 3 * 19, "Ibarrier, 3 outstanding x 20: %lld kept starts, want %d", kept, 3 * 19);
    many_outstanding(MPI_COMM_WORLD);
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    repeat_rounds(d);
    MPI_OK(MPI_Comm_free(&d));
    freed_while_pending();
    large_not_kept();
    compiled_starts();
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("coll_keep_nb: ok\n");
    MPI_Finalize();
    return 0;
}
