/* The large-count (_c) forms of the point-to-point calls, each moving data
 * that is checked element by element: Ssend_c, Issend_c, Bsend_c (with
 * Buffer_attach_c / Buffer_detach_c), Ibsend_c, Rsend_c, Irsend_c,
 * Sendrecv_c, Sendrecv_replace_c, Isendrecv_c, Isendrecv_replace_c,
 * Mrecv_c, Imrecv_c, Get_count_c, the persistent *_init_c forms, and
 * Comm_idup_with_info. Ranks pair up (2k, 2k + 1); an odd last rank only
 * takes part in the duplication. Counts are small: the point is the entry
 * points and their arguments (p2p_large moves more than 2 GiB). */
#include <stdbool.h>

#include "mpitest.h"

enum { N = 3000 };   /* above the eager limit in bytes as ints: rendezvous too */

static void fill(int *v, MPI_Count n, int seed)
{
    for (MPI_Count i = 0; i < n; i++)
        v[i] = seed * 100003 + (int)i;
}

static void expect(const int *v, MPI_Count n, int seed, const char *what)
{
    for (MPI_Count i = 0; i < n; i++)
        CHECK(v[i] == seed * 100003 + (int)i, "%s: element %lld is %d", what, (long long)i, v[i]);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    int rank, size;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int peer = rank ^ 1;
    bool active = peer < size, low = rank < peer;
    int *s = malloc(sizeof(int) * N), *r = malloc(sizeof(int) * N);
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Status st;
    MPI_Count cnt;
    MPI_Request q[2];

    if (active) {
        /* Ssend_c / Issend_c */
        fill(s, N, rank + 1);
        if (low) {
            MPI_OK(MPI_Ssend_c(s, N, MPI_INT, peer, 1, comm));
            MPI_OK(MPI_Issend_c(s, N, MPI_INT, peer, 2, comm, &q[0]));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv_c(r, N, MPI_INT, peer, 1, comm, &st));
            MPI_OK(MPI_Get_count_c(&st, MPI_INT, &cnt));
            CHECK(cnt == N, "Ssend_c: count %lld", (long long)cnt);
            expect(r, N, peer + 1, "Ssend_c");
            MPI_OK(MPI_Recv_c(r, N, MPI_INT, peer, 2, comm, MPI_STATUS_IGNORE));
            expect(r, N, peer + 1, "Issend_c");
        }

        /* Bsend_c, Ibsend_c with a buffer attached by Buffer_attach_c */
        MPI_Count bsize = 2 * ((MPI_Count)N * sizeof(int) + MPI_BSEND_OVERHEAD);
        char *bbuf = malloc((size_t)bsize);
        MPI_OK(MPI_Buffer_attach_c(bbuf, bsize));
        fill(s, N, rank + 7);
        if (low) {
            MPI_OK(MPI_Bsend_c(s, N, MPI_INT, peer, 3, comm));
            MPI_OK(MPI_Ibsend_c(s, N, MPI_INT, peer, 4, comm, &q[0]));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Recv_c(r, N, MPI_INT, peer, 3, comm, MPI_STATUS_IGNORE));
            expect(r, N, peer + 7, "Bsend_c");
            MPI_OK(MPI_Recv_c(r, N, MPI_INT, peer, 4, comm, MPI_STATUS_IGNORE));
            expect(r, N, peer + 7, "Ibsend_c");
        }
        void *back;
        MPI_Count back_size;
        MPI_OK(MPI_Buffer_detach_c(&back, &back_size));
        CHECK(back == bbuf && back_size == bsize, "Buffer_detach_c gave %p, %lld", back, (long long)back_size);
        free(bbuf);

        /* Rsend_c / Irsend_c: the receive is posted before a handshake. */
        fill(s, N, rank + 11);
        if (low) {
            MPI_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 5, comm, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Rsend_c(s, N, MPI_INT, peer, 6, comm));
            MPI_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 5, comm, MPI_STATUS_IGNORE));
            MPI_OK(MPI_Irsend_c(s, N, MPI_INT, peer, 7, comm, &q[0]));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        } else {
            MPI_OK(MPI_Irecv_c(r, N, MPI_INT, peer, 6, comm, &q[0]));
            MPI_OK(MPI_Send(NULL, 0, MPI_INT, peer, 5, comm));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            expect(r, N, peer + 11, "Rsend_c");
            MPI_OK(MPI_Irecv_c(r, N, MPI_INT, peer, 7, comm, &q[0]));
            MPI_OK(MPI_Send(NULL, 0, MPI_INT, peer, 5, comm));
            MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
            expect(r, N, peer + 11, "Irsend_c");
        }

        /* Sendrecv_c, Sendrecv_replace_c, Isendrecv_c, Isendrecv_replace_c */
        fill(s, N, rank + 20);
        MPI_OK(MPI_Sendrecv_c(s, N, MPI_INT, peer, 8, r, N, MPI_INT, peer, 8, comm, &st));
        expect(r, N, peer + 20, "Sendrecv_c");
        MPI_OK(MPI_Get_count_c(&st, MPI_INT, &cnt));
        CHECK(cnt == N, "Sendrecv_c: count %lld", (long long)cnt);
        fill(r, N, rank + 21);
        MPI_OK(MPI_Sendrecv_replace_c(r, N, MPI_INT, peer, 9, peer, 9, comm, MPI_STATUS_IGNORE));
        expect(r, N, peer + 21, "Sendrecv_replace_c");
        fill(s, N, rank + 22);
        MPI_OK(MPI_Isendrecv_c(s, N, MPI_INT, peer, 10, r, N, MPI_INT, peer, 10, comm, &q[0]));
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        expect(r, N, peer + 22, "Isendrecv_c");
        fill(r, N, rank + 23);
        MPI_OK(MPI_Isendrecv_replace_c(r, N, MPI_INT, peer, 11, peer, 11, comm, &q[0]));
        MPI_OK(MPI_Wait(&q[0], MPI_STATUS_IGNORE));
        expect(r, N, peer + 23, "Isendrecv_replace_c");

        /* Mprobe + Mrecv_c, Improbe + Imrecv_c */
        fill(s, N, rank + 30);
        MPI_OK(MPI_Isend_c(s, N, MPI_INT, peer, 12, comm, &q[0]));
        MPI_OK(MPI_Isend_c(s, N / 2, MPI_INT, peer, 13, comm, &q[1]));
        MPI_Message msg;
        MPI_OK(MPI_Mprobe(peer, 12, comm, &msg, &st));
        MPI_OK(MPI_Mrecv_c(r, N, MPI_INT, &msg, &st));
        expect(r, N, peer + 30, "Mrecv_c");
        int flag = 0;
        while (!flag)
            MPI_OK(MPI_Improbe(peer, 13, comm, &flag, &msg, &st));
        MPI_Request mq;
        MPI_OK(MPI_Imrecv_c(r, N, MPI_INT, &msg, &mq));
        MPI_OK(MPI_Wait(&mq, &st));
        MPI_OK(MPI_Get_count_c(&st, MPI_INT, &cnt));
        CHECK(cnt == N / 2, "Imrecv_c: count %lld", (long long)cnt);
        expect(r, N / 2, peer + 30, "Imrecv_c");
        MPI_OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));

        /* Persistent: Send_init_c, Ssend_init_c, Rsend_init_c, Bsend_init_c,
         * Recv_init_c, each started twice with new data. */
        char *pb = malloc((size_t)bsize);
        MPI_OK(MPI_Buffer_attach_c(pb, bsize));
        for (int kind = 0; kind < 4; kind++) {
            MPI_Request ps, pr;
            if (low) {
                switch (kind) {
                case 0: MPI_OK(MPI_Send_init_c(s, N, MPI_INT, peer, 20, comm, &ps)); break;
                case 1: MPI_OK(MPI_Ssend_init_c(s, N, MPI_INT, peer, 20, comm, &ps)); break;
                case 2: MPI_OK(MPI_Rsend_init_c(s, N, MPI_INT, peer, 20, comm, &ps)); break;
                default: MPI_OK(MPI_Bsend_init_c(s, N, MPI_INT, peer, 20, comm, &ps)); break;
                }
                for (int k = 0; k < 2; k++) {
                    fill(s, N, 40 + 10 * kind + k);
                    MPI_OK(MPI_Recv(NULL, 0, MPI_INT, peer, 21, comm, MPI_STATUS_IGNORE));
                    MPI_OK(MPI_Start(&ps));
                    MPI_OK(MPI_Wait(&ps, MPI_STATUS_IGNORE));
                }
                MPI_OK(MPI_Request_free(&ps));
            } else {
                MPI_OK(MPI_Recv_init_c(r, N, MPI_INT, peer, 20, comm, &pr));
                for (int k = 0; k < 2; k++) {
                    MPI_OK(MPI_Start(&pr));
                    MPI_OK(MPI_Send(NULL, 0, MPI_INT, peer, 21, comm));
                    MPI_OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
                    expect(r, N, 40 + 10 * kind + k, "persistent _c");
                }
                MPI_OK(MPI_Request_free(&pr));
            }
        }
        MPI_OK(MPI_Buffer_detach_c(&back, &back_size));
        free(pb);
    }

    /* Comm_idup_with_info: a working communicator carrying the hint. */
    MPI_Info info;
    MPI_OK(MPI_Info_create(&info));
    MPI_OK(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"));
    MPI_Comm dup;
    MPI_Request dq;
    MPI_OK(MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &dup, &dq));
    MPI_OK(MPI_Wait(&dq, MPI_STATUS_IGNORE));
    MPI_OK(MPI_Info_free(&info));
    int sum = 0;
    MPI_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup));
    CHECK_INT(sum, size * (size - 1) / 2);
    MPI_Info got;
    MPI_OK(MPI_Comm_get_info(dup, &got));
    char val[16];
    int vlen = (int)sizeof val, found = 0;
    MPI_OK(MPI_Info_get_string(got, "mpi_assert_no_any_tag", &vlen, val, &found));
    CHECK(found && !strcmp(val, "true"), "Comm_idup_with_info: the hint is %s", found ? val : "missing");
    MPI_OK(MPI_Info_free(&got));
    MPI_OK(MPI_Comm_free(&dup));

    free(s);
    free(r);
    MPI_OK(MPI_Finalize());
    if (rank == 0)
        printf("p2p_large_count: ok\n");
    return 0;
}
