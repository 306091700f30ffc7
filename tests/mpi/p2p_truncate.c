/* A message longer than the receive buffer (MPI_ERRORS_RETURN on the
 * communicator):
 *  - the receive returns an error of class MPI_ERR_TRUNCATE (Recv, Wait of
 *    an Irecv, Mrecv, Sendrecv, a persistent receive); in Waitall the call
 *    returns MPI_ERR_IN_STATUS and the statuses' MPI_ERROR fields say which
 *    receive was truncated (MPI_ERR_TRUNCATE) and which were fine;
 *  - Get_count reports the part that was received (the buffer's size);
 *  - nothing beyond the receive buffer is written (guard bytes);
 *  - the sender's side completes without error, and the pair keeps
 *    working afterwards (a normal message follows each truncation).
 * Eager sizes (ring and cell) and rendezvous sizes. Pairs 2k -> 2k+1. */
#include "mpitest.h"

#include <stdint.h>

#define GUARD 256

static const struct {
    int msg, cap;
} cases[] = {{10, 0}, {100, 60}, {2048, 2047}, {5000, 4000}, {16384, 100}, {17408, 16384},
             {17408, 0}, {100000, 50000}, {4 << 20, 1 << 20}};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

enum { RECV, IRECV_WAIT, MRECV, SENDRECV, PERSISTENT, WAITALL, NFORMS };
static const char *form_name[NFORMS] = {"Recv", "Irecv+Wait", "Mprobe+Mrecv", "Sendrecv",
                                        "Recv_init+Start+Wait", "Waitall"};

static int rank, size, partner;

static unsigned char pat(int k, size_t i)
{
    uint32_t x = (uint32_t)i * 2654435761u + (uint32_t)k * 97u;
    return (unsigned char)(x >> 24);
}

static void expect_truncate(int rc, const char *what)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_TRUNCATE) {
        char msg[MPI_MAX_ERROR_STRING] = "";
        int len = 0;
        if (rc != MPI_SUCCESS)
            MPI_Error_string(rc, msg, &len);
        MT_FAIL("%s: returned %d (class %d: %s), expected MPI_ERR_TRUNCATE", what, rc, cls, msg);
    }
}

static void check_truncated(const unsigned char *b, const MPI_Status *st, int msg, int cap,
                            const char *what)
{
    for (int i = 0; i < GUARD; i++)
        if (b[cap + i] != 0xA5)
            MT_FAIL("%s: a %d-byte message into %d bytes wrote guard byte %d after the buffer",
                    what, msg, cap, i);
    int count = -1;
    MPI_OK(MPI_Get_count(st, MPI_BYTE, &count));
    CHECK(count == cap, "%s: Get_count %d after truncating %d bytes to %d", what, count, msg, cap);
    CHECK(st->MPI_SOURCE == partner && st->MPI_TAG == 1, "%s: status source %d tag %d", what,
          st->MPI_SOURCE, st->MPI_TAG);
}

/* After every truncation a normal message must still get through. */
static void follow_up(int k)
{
    int v[2] = {k, -k};
    if (rank % 2 == 0) {
        MPI_OK(MPI_Send(v, 2, MPI_INT, partner, 2, MPI_COMM_WORLD));
    } else {
        int w[2] = {0, 0};
        MPI_OK(MPI_Recv(w, 2, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(w[0] == k && w[1] == -k, "message after a truncation: %d %d", w[0], w[1]);
    }
}

static void run(unsigned char *sb, unsigned char *rb)
{
    for (int form = 0; form < NFORMS; form++) {
        for (int c = 0; c < NCASES; c++) {
            int msg = cases[c].msg, cap = cases[c].cap;
            int k = form * 100 + c;
            char what[128];
            snprintf(what, sizeof what, "%s of %d bytes into %d", form_name[form], msg, cap);
            if (rank % 2 == 0) {
                for (int i = 0; i < msg; i++)
                    sb[i] = pat(k, (size_t)i);
                if (form == SENDRECV) {
                    int dummy = 0;
                    MPI_OK(MPI_Sendrecv(sb, msg, MPI_BYTE, partner, 1, &dummy, 1, MPI_INT, partner,
                                        3, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                } else if (form == WAITALL) {
                    /* A second message that fits, sent first. */
                    MPI_OK(MPI_Send(sb, 4, MPI_BYTE, partner, 4, MPI_COMM_WORLD));
                    MPI_OK(MPI_Send(sb, msg, MPI_BYTE, partner, 1, MPI_COMM_WORLD));
                } else {
                    /* The send itself must succeed: truncation is the
                     * receiver's error. */
                    MPI_OK(MPI_Send(sb, msg, MPI_BYTE, partner, 1, MPI_COMM_WORLD));
                }
            } else {
                memset(rb, 0x11, (size_t)cap);
                memset(rb + cap, 0xA5, GUARD);
                MPI_Status st;
                MPI_Request r;
                switch (form) {
                case RECV:
                    expect_truncate(MPI_Recv(rb, cap, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &st),
                                    what);
                    break;
                case IRECV_WAIT:
                    MPI_OK(MPI_Irecv(rb, cap, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &r));
                    expect_truncate(MPI_Wait(&r, &st), what);
                    CHECK(r == MPI_REQUEST_NULL, "%s: Wait did not free the request", what);
                    break;
                case MRECV: {
                    MPI_Message m;
                    MPI_OK(MPI_Mprobe(partner, 1, MPI_COMM_WORLD, &m, &st));
                    int count = -1;
                    MPI_OK(MPI_Get_count(&st, MPI_BYTE, &count));
                    CHECK(count == msg, "%s: Mprobe says %d bytes", what, count);
                    expect_truncate(MPI_Mrecv(rb, cap, MPI_BYTE, &m, &st), what);
                    break;
                }
                case SENDRECV: {
                    int one = 1;
                    expect_truncate(MPI_Sendrecv(&one, 1, MPI_INT, partner, 3, rb, cap, MPI_BYTE,
                                                 partner, 1, MPI_COMM_WORLD, &st),
                                    what);
                    break;
                }
                case PERSISTENT:
                    MPI_OK(MPI_Recv_init(rb, cap, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &r));
                    MPI_OK(MPI_Start(&r));
                    expect_truncate(MPI_Wait(&r, &st), what);
                    MPI_OK(MPI_Request_free(&r));
                    break;
                default: {
                    int small = 0;
                    MPI_Request rr[2];
                    MPI_Status sts[2];
                    MPI_OK(MPI_Irecv(rb, cap, MPI_BYTE, partner, 1, MPI_COMM_WORLD, &rr[0]));
                    MPI_OK(MPI_Irecv(&small, 4, MPI_BYTE, partner, 4, MPI_COMM_WORLD, &rr[1]));
                    int rc = MPI_Waitall(2, rr, sts);
                    int cls = -1;
                    MPI_Error_class(rc, &cls);
                    CHECK(cls == MPI_ERR_IN_STATUS, "%s: Waitall returned class %d, expected "
                          "MPI_ERR_IN_STATUS", what, cls);
                    MPI_Error_class(sts[0].MPI_ERROR, &cls);
                    CHECK(cls == MPI_ERR_TRUNCATE, "%s: MPI_ERROR of the truncated receive has "
                          "class %d", what, cls);
                    CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "%s: MPI_ERROR of the receive that "
                          "fit is %d", what, sts[1].MPI_ERROR);
                    CHECK(rr[0] == MPI_REQUEST_NULL && rr[1] == MPI_REQUEST_NULL,
                          "%s: Waitall left requests set", what);
                    st = sts[0];
                    break;
                }
                }
                check_truncated(rb, &st, msg, cap, what);
            }
            follow_up(k);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    if (argc > 1 && !strcmp(argv[1], "fatal")) {
        /* Under the default MPI_ERRORS_ARE_FATAL the truncation ends the
         * job, with the message (the testlist checks it and the exit). */
        int v[10] = {0}, w[5];
        if (rank == 0)
            MPI_Send(v, 10, MPI_INT, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(w, 5, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        printf("p2p_truncate fatal: rank %d survived the truncation\n", rank);
        MPI_Finalize();
        return 0;
    }
    MPI_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    partner = rank ^ 1;
    unsigned char *sb = malloc(4 << 20), *rb = malloc((4 << 20) + GUARD);
    if (partner < size)
        run(sb, rb);
    free(sb);
    free(rb);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_truncate: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
