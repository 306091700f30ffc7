/* MPI_THREAD_MULTIPLE with 4 threads per rank.
 *
 * Thread t of every rank, at the same time as the others:
 * - sends batches of messages tagged t to every other rank on
 *   MPI_COMM_WORLD and receives them with MPI_ANY_SOURCE on tag t: every
 *   message arrives once, with its data, and messages from one sender
 *   arrive in the order they were sent (only thread t sends on tag t);
 * - between batches, duplicates its own communicator (made from
 *   MPI_COMM_WORLD by the main thread, one per thread, so no two threads
 *   run collectives on one communicator), checks an allreduce and a message
 *   ring on the duplicate, and frees it.
 * Meanwhile the main thread runs allreduces on MPI_COMM_WORLD. */
#include <pthread.h>

#include "mpitest.h"

enum { NTHREADS = 4, ROUNDS = 40, BATCH = 8, PAYLOAD = 3 };

static int rank, size;
static MPI_Comm thread_comm[NTHREADS];

typedef struct {
    int t;
    int received;
    int dups;
} thread_arg_t;

static void *worker(void *p)
{
    thread_arg_t *a = p;
    int t = a->t;
    int npeers = size - 1;
    int (*sbuf)[PAYLOAD] = malloc(sizeof(int[PAYLOAD]) * (npeers * BATCH + 1));
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (npeers * BATCH + 1));
    int *next_seq = calloc((size_t)size, sizeof(int));
    for (int round = 0; round < ROUNDS; round++) {
        /* Post this round's sends: to every other rank, BATCH messages. */
        int n = 0;
        for (int k = 0; k < BATCH; k++) {
            for (int dst = 0; dst < size; dst++) {
                if (dst == rank)
                    continue;
                int seq = round * BATCH + k;
                sbuf[n][0] = rank;
                sbuf[n][1] = t;
                sbuf[n][2] = seq * 1000 + dst;
                MPI_OK(MPI_Isend(sbuf[n], PAYLOAD, MPI_INT, dst, t, MPI_COMM_WORLD, &reqs[n]));
                n++;
            }
        }

        /* A duplicate of this thread's communicator, used and freed. */
        MPI_Comm d;
        MPI_OK(MPI_Comm_dup(thread_comm[t], &d));
        int dsize, drank, sum = 0, mine = rank * NTHREADS + t;
        MPI_OK(MPI_Comm_size(d, &dsize));
        MPI_OK(MPI_Comm_rank(d, &drank));
        CHECK(dsize == size && drank == rank, "thread %d dup: size %d rank %d", t, dsize, drank);
        MPI_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, d));
        int want = 0;
        for (int r = 0; r < size; r++)
            want += r * NTHREADS + t;
        CHECK(sum == want, "thread %d round %d: allreduce on the dup %d, want %d", t, round, sum,
              want);
        int got = -1;
        MPI_OK(MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, round, &got, 1, MPI_INT,
                            (rank - 1 + size) % size, round, d, MPI_STATUS_IGNORE));
        CHECK(got == ((rank - 1 + size) % size) * NTHREADS + t, "thread %d ring on dup got %d",
              t, got);
        MPI_OK(MPI_Comm_free(&d));
        a->dups++;

        /* Receive this round's messages for tag t from anyone. */
        for (int m = 0; m < npeers * BATCH; m++) {
            int rbuf[PAYLOAD] = {-1, -1, -1};
            MPI_Status st;
            MPI_OK(MPI_Recv(rbuf, PAYLOAD, MPI_INT, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st));
            int src = st.MPI_SOURCE;
            CHECK(src >= 0 && src < size && src != rank, "thread %d: source %d", t, src);
            CHECK(st.MPI_TAG == t, "thread %d: message with tag %d", t, st.MPI_TAG);
            CHECK(rbuf[0] == src && rbuf[1] == t, "thread %d: payload (%d,%d) from %d", t,
                  rbuf[0], rbuf[1], src);
            int seq = rbuf[2] / 1000, to = rbuf[2] % 1000;
            CHECK(to == rank, "thread %d: message for rank %d arrived here", t, to);
            CHECK(seq == next_seq[src], "thread %d: from %d got sequence %d, want %d (order)", t,
                  src, seq, next_seq[src]);
            next_seq[src]++;
            a->received++;
        }
        MPI_OK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
    }
    for (int r = 0; r < size; r++)
        CHECK(r == rank || next_seq[r] == ROUNDS * BATCH, "thread %d: %d messages from %d", t,
              next_seq[r], r);
    free(sbuf);
    free(reqs);
    free(next_seq);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    /* Halo supports MPI_THREAD_MULTIPLE; without it this test means nothing. */
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    if (size < 2)
        MT_FAIL("run this test with 2 or more ranks");

    for (int t = 0; t < NTHREADS; t++)
        MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &thread_comm[t]));

    pthread_t th[NTHREADS];
    thread_arg_t args[NTHREADS];
    for (int t = 0; t < NTHREADS; t++) {
        args[t] = (thread_arg_t){.t = t};
        CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0, "pthread_create %d", t);
    }
    /* Meanwhile the main thread runs collectives on MPI_COMM_WORLD, whose
     * point-to-point traffic the workers share. */
    for (int i = 0; i < 200; i++) {
        int v[2] = {rank + i, -rank}, r[2];
        MPI_OK(MPI_Allreduce(v, r, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        CHECK(r[0] == size - 1 + i && r[1] == 0, "main thread allreduce %d: %d %d", i, r[0],
              r[1]);
    }
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < NTHREADS; t++) {
        CHECK(args[t].received == ROUNDS * BATCH * (size - 1), "thread %d received %d", t,
              args[t].received);
        CHECK(args[t].dups == ROUNDS, "thread %d made %d dups", t, args[t].dups);
    }

    /* The library is still consistent: a dup after all that, and traffic. */
    MPI_Comm d;
    MPI_OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    int one = 1, sum = 0;
    MPI_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d));
    CHECK_INT(sum, size);
    MPI_OK(MPI_Comm_free(&d));
    for (int t = 0; t < NTHREADS; t++)
        MPI_OK(MPI_Comm_free(&thread_comm[t]));
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("core_threads: ok\n");
    return 0;
}
