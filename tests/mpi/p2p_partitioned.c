/* Partitioned point-to-point.
 *
 *   p2p_partitioned data|errors
 *
 * data:   every rank sends to the next and receives from the previous (to
 *         itself on one rank), with several partition counts on each side
 *         (equal and different, eager and rendezvous sizes), restarted four
 *         times with the partitions made ready in different ways: one by
 *         one ascending and descending, Pready_range in blocks, Pready_list
 *         in a shuffled order. The receiver polls MPI_Parrived until every
 *         partition is there; no partition arrives before the send starts,
 *         and the last one not before it is ready. Data checked every epoch.
 *         A partitioned message and a plain one with the same tag do not
 *         match each other. Requests on one (peer, tag) pair up in the
 *         order of their init calls, not of their starts: 20 pairs on tag
 *         5 and on tag 0, 16 on tag 2^20 (part.c: 16 wire tags there),
 *         started in reverse on the sender and in a shuffled order on the
 *         receiver, then again with pair 0 alone restarted; the status
 *         carries the user's tag. Zero partitions (the send leaves at its
 *         start; a receive with room for data gets MPI_ERR_COUNT).
 * errors: wrong calls get their classes (MPI_ERRORS_RETURN): Pready on an
 *         inactive, receiving or plain request, a partition out of range or
 *         ready twice, a bad range or list, Parrived on a send, a wildcard
 *         source, a negative number of partitions, and total sizes that
 *         differ; Cancel and Request_free of an active request; Parrived
 *         on MPI_REQUEST_NULL sets the flag, as on an inactive request. */
#include "mpitest.h"

static int rank, size;

static int value(int epoch, int src, long i)
{
    return (int)(epoch * 1000003L + src * 65537L + i);
}

static int all_arrived(MPI_Request r, int parts)
{
    for (int p = 0; p < parts; p++) {
        int flag = 0;
        MPI_OK(MPI_Parrived(r, p, &flag));
        if (!flag)
            return 0;
    }
    return 1;
}

/* Ready every partition of s (of sparts) in the way the epoch asks for;
 * all but the last one first, then (after a barrier at which the receiver
 * checks that its last partition has not arrived) the last. */
static void ready_all(MPI_Request s, int sparts, int epoch, MPI_Request r, int rparts)
{
    int *order = malloc((size_t)sparts * sizeof(int));
    for (int i = 0; i < sparts; i++)
        order[i] = epoch == 1 ? sparts - 1 - i : i;
    if (epoch == 3) {
        /* A fixed shuffle: stride through the partitions by a step prime
         * to their number. */
        int step = 3;
        for (;;) {
            int a = step, b = sparts;
            while (b) {
                int t = a % b;
                a = b;
                b = t;
            }
            if (a == 1)
                break;
            step++;
        }
        for (int i = 0; i < sparts; i++)
            order[i] = (int)(((long)(i + 1) * step) % sparts);
    }
    int last = order[sparts - 1];
    switch (epoch) {
    case 0:
    case 1:
        for (int i = 0; i < sparts - 1; i++)
            MPI_OK(MPI_Pready(order[i], s));
        break;
    case 2: {
        /* Blocks of up to 3, all but the last partition. */
        for (int lo = 0; lo < sparts - 1; lo += 3) {
            int hi = lo + 2 < sparts - 2 ? lo + 2 : sparts - 2;
            MPI_OK(MPI_Pready_range(lo, hi, s));
        }
        break;
    }
    case 3:
        MPI_OK(MPI_Pready_list(sparts - 1, order, s));
        break;
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    int flag = 1;
    MPI_OK(MPI_Parrived(r, rparts - 1, &flag));
    CHECK(!flag, "epoch %d: last partition arrived before it was ready", epoch);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (epoch == 2)
        MPI_OK(MPI_Pready_range(last, last, s));
    else if (epoch == 3)
        MPI_OK(MPI_Pready_list(1, &last, s));
    else
        MPI_OK(MPI_Pready(last, s));
    free(order);
}

static void run_case(int sparts, int rparts, long total)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *sbuf = calloc((size_t)total, sizeof(int));
    int *rbuf = calloc((size_t)total, sizeof(int));
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(sbuf, sparts, total / sparts, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rbuf, rparts, total / rparts, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int epoch = 0; epoch < 4; epoch++) {
        for (long i = 0; i < total; i++) {
            sbuf[i] = value(epoch, rank, i);
            rbuf[i] = -1;
        }
        MPI_OK(MPI_Start(&r));
        for (int p = 0; p < rparts; p++) {
            int flag = 1;
            MPI_OK(MPI_Parrived(r, p, &flag));
            CHECK(!flag, "epoch %d: partition %d arrived before the send started", epoch, p);
        }
        MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
        MPI_OK(MPI_Start(&s));
        ready_all(s, sparts, epoch, r, rparts);
        while (!all_arrived(r, rparts))
            ;
        MPI_Request both[2] = {s, r};
        MPI_OK(MPI_Waitall(2, both, MPI_STATUSES_IGNORE));
        CHECK(both[0] == s && both[1] == r, "persistent handles changed");
        for (long i = 0; i < total; i++)
            CHECK(rbuf[i] == value(epoch, left, i), "sparts %d rparts %d epoch %d: rbuf[%ld]=%d, expected %d",
                  sparts, rparts, epoch, i, rbuf[i], value(epoch, left, i));
        /* Inactive again: every partition counts as arrived. */
        CHECK(all_arrived(r, rparts), "inactive request");
    }
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
    CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL, "handles not reset");
    free(sbuf);
    free(rbuf);
}

/* A plain message and a partitioned one with the same source and tag. */
static void same_tag(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int pout[8], pin[8], out = 1000 + rank, in = -1;
    for (int i = 0; i < 8; i++)
        pout[i] = 2000 + rank * 10 + i;
    MPI_Request s, r, pr;
    MPI_OK(MPI_Precv_init(pin, 2, 4, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    MPI_OK(MPI_Psend_init(pout, 4, 2, MPI_INT, right, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Irecv(&in, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &pr));
    MPI_OK(MPI_Start(&s));
    MPI_OK(MPI_Pready_range(0, 3, s));
    MPI_OK(MPI_Send(&out, 1, MPI_INT, right, 3, MPI_COMM_WORLD));
    MPI_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_INT(in, 1000 + left);
    for (int i = 0; i < 8; i++)
        CHECK_INT(pin[i], 2000 + left * 10 + i);
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));
}

/* NP pairs on one (peer, tag), matched by init order whatever the start
 * order: pair k's receive must hold the data of the sender's pair k. */
static void init_order(int tag, int NP)
{
    enum { MAXP = 20, N = 16 };
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static int sb[MAXP][N], rb[MAXP][N];
    MPI_Request s[MAXP], r[MAXP];
    for (int k = 0; k < NP; k++) {
        MPI_OK(MPI_Psend_init(sb[k], 2, N / 2, MPI_INT, right, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &s[k]));
        MPI_OK(MPI_Precv_init(rb[k], 4, N / 4, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &r[k]));
    }
    for (int epoch = 0; epoch < 2; epoch++) {
        int npairs = epoch == 0 ? NP : 1;
        for (int k = 0; k < npairs; k++)
            for (int i = 0; i < N; i++) {
                sb[k][i] = value(epoch, rank, 100 * k + i);
                rb[k][i] = -1;
            }
        /* Receives started in a shuffled order, sends in reverse. */
        for (int j = 0; j < npairs; j++)
            MPI_OK(MPI_Start(&r[(7 * j + 3) % npairs]));
        for (int k = npairs - 1; k >= 0; k--) {
            MPI_OK(MPI_Start(&s[k]));
            MPI_OK(MPI_Pready_range(0, 1, s[k]));
        }
        MPI_Status st[MAXP];
        MPI_OK(MPI_Waitall(npairs, r, st));
        MPI_OK(MPI_Waitall(npairs, s, MPI_STATUSES_IGNORE));
        for (int k = 0; k < npairs; k++) {
            CHECK(st[k].MPI_TAG == tag, "pair %d: status tag %d, want %d", k, st[k].MPI_TAG, tag);
            CHECK(st[k].MPI_SOURCE == left, "pair %d: status source %d", k, st[k].MPI_SOURCE);
            for (int i = 0; i < N; i++)
                CHECK(rb[k][i] == value(epoch, left, 100 * k + i), "tag %d epoch %d pair %d [%d] = %d, want %d",
                      tag, epoch, k, i, rb[k][i], value(epoch, left, 100 * k + i));
        }
    }
    for (int k = 0; k < NP; k++) {
        MPI_OK(MPI_Request_free(&s[k]));
        MPI_OK(MPI_Request_free(&r[k]));
    }
}

/* No partitions (the standard allows zero): the send's empty message
 * leaves at MPI_Start, with no Pready; a receive of no partitions, or of
 * partitions of no elements, completes with an empty status, and a
 * receive with room for data gets MPI_ERR_COUNT. Three epochs each; to
 * MPI_PROC_NULL too. */
static void zero_partitions(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size, sbuf[4] = {1, 2, 3, 4}, rbuf[4];
    for (int k = 0; k < 3; k++) {
        int rparts = k == 0 ? 0 : k == 1 ? 2 : 1, rcount = k == 2 ? 1 : 0;
        MPI_Request s, r, n;
        MPI_OK(MPI_Psend_init(sbuf, 0, 4, MPI_INT, right, 30 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        MPI_OK(MPI_Precv_init(rbuf, rparts, rcount, MPI_INT, left, 30 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        MPI_OK(MPI_Psend_init(sbuf, 0, 4, MPI_INT, MPI_PROC_NULL, 30 + k, MPI_COMM_WORLD, MPI_INFO_NULL, &n));
        if (k == 2)
            MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
        for (int epoch = 0; epoch < 3; epoch++) {
            rbuf[0] = -5;
            MPI_Request all[3] = {r, s, n};
            MPI_OK(MPI_Startall(3, all));
            MPI_Status st[3];
            int rc = MPI_Waitall(3, all, st);
            if (k < 2) {
                CHECK(rc == MPI_SUCCESS, "case %d epoch %d: Waitall gave %d", k, epoch, rc);
                int n0 = -1;
                MPI_OK(MPI_Get_count(&st[0], MPI_INT, &n0));
                CHECK(n0 == 0 && st[0].MPI_SOURCE == left && st[0].MPI_TAG == 30 + k,
                      "case %d epoch %d: receive status count %d source %d tag %d", k, epoch, n0,
                      st[0].MPI_SOURCE, st[0].MPI_TAG);
            } else {
                int cls = -1;
                MPI_Error_class(st[0].MPI_ERROR, &cls);
                CHECK(rc == MPI_ERR_IN_STATUS && cls == MPI_ERR_COUNT,
                      "case 2 epoch %d: a receive of 1 int from no partitions gave %d (class %d)", epoch, rc,
                      cls);
            }
            CHECK(rbuf[0] == -5, "case %d epoch %d: an empty message wrote the buffer (%d)", k, epoch, rbuf[0]);
        }
        if (k == 2)
            MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
        MPI_OK(MPI_Request_free(&s));
        MPI_OK(MPI_Request_free(&r));
        MPI_OK(MPI_Request_free(&n));
    }
}

static void part_data(void)
{
    static const struct { int s, r; long total; } cases[] = {
        {1, 1, 64}, {8, 8, 64}, {4, 16, 256}, {16, 4, 256}, {3, 5, 105},
        {64, 64, 64 * 1024},    /* 256 KiB: rendezvous */
        {7, 2, 14 * 4096},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        run_case(cases[c].s, cases[c].r, cases[c].total);
    same_tag();
    zero_partitions();
    init_order(5, 20);
    init_order(0, 20);
    init_order(1 << 20, 16);
    if (rank == 0)
        printf("p2p_partitioned.data: ok\n");
}

static void expect_class(int rc, int cls, const char *what)
{
    int got = -1;
    if (rc == MPI_SUCCESS)
        MT_FAIL("%s succeeded, expected class %d", what, cls);
    MPI_Error_class(rc, &got);
    CHECK(got == cls, "%s: class %d, expected %d", what, got, cls);
}

static void part_errors(void)
{
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int sbuf[10], rbuf[10];
    for (int i = 0; i < 10; i++)
        sbuf[i] = rank * 100 + i;
    MPI_Request s, r;
    MPI_OK(MPI_Psend_init(sbuf, 4, 2, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    MPI_OK(MPI_Precv_init(rbuf, 2, 4, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    expect_class(MPI_Pready(0, s), MPI_ERR_REQUEST, "Pready before Start");
    MPI_OK(MPI_Start(&r));
    MPI_OK(MPI_Start(&s));
    expect_class(MPI_Pready(4, s), MPI_ERR_ARG, "Pready(4) of 4 partitions");
    expect_class(MPI_Pready(-1, s), MPI_ERR_ARG, "Pready(-1)");
    expect_class(MPI_Pready(0, r), MPI_ERR_REQUEST, "Pready on a receive");
    /* Active and not complete: neither cancelled nor freed. */
    MPI_Request keep_s = s, keep_r = r;
    expect_class(MPI_Cancel(&s), MPI_ERR_REQUEST, "Cancel of an active partitioned send");
    expect_class(MPI_Cancel(&r), MPI_ERR_REQUEST, "Cancel of an active partitioned receive");
    expect_class(MPI_Request_free(&s), MPI_ERR_REQUEST, "Request_free of an active partitioned send");
    expect_class(MPI_Request_free(&r), MPI_ERR_REQUEST, "Request_free of an active partitioned receive");
    CHECK(s == keep_s && r == keep_r, "a refused free changed the handles");
    int flag = 0;
    MPI_OK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag));
    CHECK(flag, "MPI_Parrived(MPI_REQUEST_NULL) gave flag 0");
    expect_class(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "Parrived on a send");
    expect_class(MPI_Parrived(r, 2, &flag), MPI_ERR_ARG, "Parrived(2) of 2 partitions");
    MPI_OK(MPI_Pready(1, s));
    expect_class(MPI_Pready(1, s), MPI_ERR_ARG, "Pready twice");
    expect_class(MPI_Pready_range(2, 1, s), MPI_ERR_ARG, "Pready_range(2, 1)");
    expect_class(MPI_Pready_range(0, 3, s), MPI_ERR_ARG, "Pready_range over a ready partition");
    int dup[2] = {2, 2};
    int rc = MPI_Pready_list(2, dup, s);
    expect_class(rc, MPI_ERR_ARG, "Pready_list with a partition twice");
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, "array_of_partitions[1]=2): listed twice") != NULL,
          "Pready_list's message does not name the second entry: %s", msg);
    int beyond[3] = {0, 2, 9};
    rc = MPI_Pready_list(3, beyond, s);
    expect_class(rc, MPI_ERR_ARG, "Pready_list with partition 9 of 4");
    MPI_OK(MPI_Error_string(rc, msg, &len));
    CHECK(strstr(msg, "array_of_partitions[2]=9") != NULL, "Pready_list's message does not name entry 2: %s",
          msg);
    /* The failed calls changed nothing: three partitions are still to go. */
    int rest[3] = {3, 0, 2};
    MPI_OK(MPI_Pready_list(3, rest, s));
    MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++)
        CHECK_INT(rbuf[i], left * 100 + i);
    MPI_OK(MPI_Request_free(&s));
    MPI_OK(MPI_Request_free(&r));

    MPI_Request plain;
    MPI_OK(MPI_Send_init(sbuf, 1, MPI_INT, right, 2, MPI_COMM_WORLD, &plain));
    expect_class(MPI_Pready(0, plain), MPI_ERR_REQUEST, "Pready on a plain request");
    MPI_OK(MPI_Request_free(&plain));
    MPI_Request bad = MPI_REQUEST_NULL;
    expect_class(MPI_Precv_init(rbuf, 1, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                 MPI_ERR_RANK, "Precv_init from MPI_ANY_SOURCE");
    expect_class(MPI_Precv_init(rbuf, 1, 1, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                 MPI_ERR_TAG, "Precv_init with MPI_ANY_TAG");
    expect_class(MPI_Psend_init(sbuf, -1, 1, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                 MPI_ERR_ARG, "Psend_init with -1 partitions");
    expect_class(MPI_Precv_init(rbuf, -2, 1, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                 MPI_ERR_ARG, "Precv_init with -2 partitions");
    expect_class(MPI_Psend_init(sbuf, 1, -1, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                 MPI_ERR_COUNT, "Psend_init with count -1");
    CHECK(bad == MPI_REQUEST_NULL, "a failed init made a request");

    /* Total sizes that differ: more (10 ints into 8) and less (6 into 8). */
    for (int k = 0; k < 2; k++) {
        int n = k == 0 ? 10 : 6;
        MPI_OK(MPI_Psend_init(sbuf, 2, n / 2, MPI_INT, right, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
        MPI_OK(MPI_Precv_init(rbuf, 2, 4, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
        MPI_OK(MPI_Start(&r));
        MPI_OK(MPI_Start(&s));
        MPI_OK(MPI_Pready_range(0, 1, s));
        MPI_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        expect_class(MPI_Wait(&r, MPI_STATUS_IGNORE), k == 0 ? MPI_ERR_TRUNCATE : MPI_ERR_COUNT,
                     k == 0 ? "a larger partitioned send" : "a smaller partitioned send");
        MPI_OK(MPI_Request_free(&s));
        MPI_OK(MPI_Request_free(&r));
    }
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_partitioned.errors: ok\n");
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    const char *part = argc > 1 ? argv[1] : "data";
    if (!strcmp(part, "data"))
        part_data();
    else if (!strcmp(part, "errors"))
        part_errors();
    else
        MT_FAIL("unknown part %s", part);
    MPI_OK(MPI_Finalize());
    return 0;
}
