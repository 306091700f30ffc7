/* Sendrecv, Sendrecv_replace, Isendrecv and Isendrecv_replace shift data
 * around a ring of all ranks (each rank sends right and receives from the
 * left, which deadlocks unless the send and the receive progress together),
 * at eager and rendezvous sizes, with a non-contiguous datatype for the
 * replace forms; and with MPI_PROC_NULL as source and/or destination, where
 * the receive completes at once with source MPI_PROC_NULL, tag MPI_ANY_TAG,
 * count 0 and leaves the buffer alone. */
#include "mpitest.h"

#include <stdint.h>

static const int counts[] = {0, 1, 10, 512, 4096, 4352, 65536, 1 << 20}; /* ints */
#define NCOUNTS ((int)(sizeof counts / sizeof counts[0]))
#define MAXCOUNT (1 << 20)
#define GUARD 16

enum { SENDRECV, SENDRECV_REPLACE, ISENDRECV, ISENDRECV_REPLACE, NFORMS };
static const char *form_name[NFORMS] = {"Sendrecv", "Sendrecv_replace", "Isendrecv",
                                        "Isendrecv_replace"};

static int rank, size;

static int val(int src, int form, int ci, int i)
{
    return src * 100000007 + form * 1000003 + ci * 10007 + i * 3 + 1;
}

static void check_status(const MPI_Status *st, int src, int tag, int count, MPI_Datatype t,
                         const char *what)
{
    CHECK(st->MPI_SOURCE == src, "%s: status source %d, expected %d", what, st->MPI_SOURCE, src);
    CHECK(st->MPI_TAG == tag, "%s: status tag %d, expected %d", what, st->MPI_TAG, tag);
    int got = -1;
    MPI_OK(MPI_Get_count(st, t, &got));
    CHECK(got == count, "%s: Get_count %d, expected %d", what, got, count);
}

/* Ring shift with contiguous ints; the replace forms also with a vector
 * type (every other int) so that the library has to pack and unpack. */
static void ring(int *a, int *b)
{
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    MPI_Datatype every_other;
    MPI_OK(MPI_Type_vector(MAXCOUNT / 2, 1, 2, MPI_INT, &every_other));
    MPI_OK(MPI_Type_commit(&every_other));
    char what[128];
    for (int form = 0; form < NFORMS; form++) {
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int n = counts[ci];
            int tag = form * 100 + ci;
            int stag = tag, rtag = tag;
            MPI_Status st;
            snprintf(what, sizeof what, "%s of %d ints around the ring", form_name[form], n);
            for (int i = 0; i < n; i++)
                a[i] = val(rank, form, ci, i);
            for (int i = 0; i < n + GUARD; i++)
                b[i] = -7;
            switch (form) {
            case SENDRECV:
                MPI_OK(MPI_Sendrecv(a, n, MPI_INT, right, stag, b, n + GUARD, MPI_INT, left, rtag,
                                    MPI_COMM_WORLD, &st));
                break;
            case ISENDRECV: {
                MPI_Request r;
                MPI_OK(MPI_Isendrecv(a, n, MPI_INT, right, stag, b, n + GUARD, MPI_INT, left, rtag,
                                     MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, &st));
                CHECK(r == MPI_REQUEST_NULL, "%s: Wait did not free the request", what);
                break;
            }
            case SENDRECV_REPLACE:
                MPI_OK(MPI_Sendrecv_replace(a, n, MPI_INT, right, stag, left, rtag, MPI_COMM_WORLD,
                                            &st));
                memcpy(b, a, (size_t)n * sizeof(int));
                break;
            default: {
                MPI_Request r;
                MPI_OK(MPI_Isendrecv_replace(a, n, MPI_INT, right, stag, left, rtag, MPI_COMM_WORLD,
                                             &r));
                /* Poll with Test: the replace must not show before completion. */
                int flag = 0;
                while (!flag)
                    MPI_OK(MPI_Test(&r, &flag, &st));
                memcpy(b, a, (size_t)n * sizeof(int));
                break;
            }
            }
            check_status(&st, left, rtag, n, MPI_INT, what);
            for (int i = 0; i < n; i++)
                if (b[i] != val(left, form, ci, i))
                    MT_FAIL("%s: element %d is %d, expected %d", what, i, b[i],
                            val(left, form, ci, i));
            if (form == SENDRECV || form == ISENDRECV)
                for (int i = n; i < n + GUARD; i++)
                    CHECK(b[i] == -7, "%s: element %d beyond the message was written", what, i);
        }
    }
    /* Replace with a vector: odd elements must stay as they were. */
    for (int form = SENDRECV_REPLACE; form <= ISENDRECV_REPLACE; form += 2) {
        for (int nv = 1; nv <= 2; nv++) {
            int half = nv == 1 ? 8 : MAXCOUNT / 2; /* elements per vector */
            MPI_Datatype t = every_other;
            MPI_Datatype small = MPI_DATATYPE_NULL;
            if (nv == 1) {
                MPI_OK(MPI_Type_vector(half, 1, 2, MPI_INT, &small));
                MPI_OK(MPI_Type_commit(&small));
                t = small;
            }
            snprintf(what, sizeof what, "%s of a vector of %d ints", form_name[form], half);
            for (int i = 0; i < 2 * half; i++)
                a[i] = (i % 2) ? -i : val(rank, form, 50 + nv, i);
            MPI_Status st;
            if (form == SENDRECV_REPLACE) {
                MPI_OK(MPI_Sendrecv_replace(a, 1, t, right, 500 + nv, left, 500 + nv,
                                            MPI_COMM_WORLD, &st));
            } else {
                MPI_Request r;
                MPI_OK(MPI_Isendrecv_replace(a, 1, t, right, 500 + nv, left, 500 + nv,
                                             MPI_COMM_WORLD, &r));
                MPI_OK(MPI_Wait(&r, &st));
            }
            check_status(&st, left, 500 + nv, 1, t, what);
            int elems = -1;
            MPI_OK(MPI_Get_elements(&st, t, &elems));
            CHECK(elems == half, "%s: Get_elements %d, expected %d", what, elems, half);
            for (int i = 0; i < 2 * half; i++) {
                int want = (i % 2) ? -i : val(left, form, 50 + nv, i);
                if (a[i] != want)
                    MT_FAIL("%s: element %d is %d, expected %d", what, i, a[i], want);
            }
            if (small != MPI_DATATYPE_NULL)
                MPI_OK(MPI_Type_free(&small));
        }
    }
    MPI_OK(MPI_Type_free(&every_other));
}

static void check_proc_null_status(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: status source %d, expected MPI_PROC_NULL", what,
          st->MPI_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: status tag %d, expected MPI_ANY_TAG", what, st->MPI_TAG);
    int c = -1;
    MPI_OK(MPI_Get_count(st, MPI_INT, &c));
    CHECK(c == 0, "%s: Get_count %d, expected 0", what, c);
}

/* Half-open rings (the ends talk to MPI_PROC_NULL) and fully null peers. */
static void proc_null(int *a, int *b)
{
    int right = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int left = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    const int n = 100;
    char what[128];
    for (int form = 0; form < NFORMS; form++) {
        snprintf(what, sizeof what, "%s in a chain ending in MPI_PROC_NULL", form_name[form]);
        for (int i = 0; i < n; i++) {
            a[i] = val(rank, form, 60, i);
            b[i] = -3;
        }
        MPI_Status st;
        MPI_Request r;
        switch (form) {
        case SENDRECV:
            MPI_OK(MPI_Sendrecv(a, n, MPI_INT, right, 9, b, n, MPI_INT, left, 9, MPI_COMM_WORLD, &st));
            break;
        case ISENDRECV:
            MPI_OK(MPI_Isendrecv(a, n, MPI_INT, right, 9, b, n, MPI_INT, left, 9, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, &st));
            break;
        case SENDRECV_REPLACE:
            MPI_OK(MPI_Sendrecv_replace(a, n, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, &st));
            memcpy(b, a, sizeof(int) * n);
            break;
        default:
            MPI_OK(MPI_Isendrecv_replace(a, n, MPI_INT, right, 9, left, 9, MPI_COMM_WORLD, &r));
            MPI_OK(MPI_Wait(&r, &st));
            memcpy(b, a, sizeof(int) * n);
            break;
        }
        if (left == MPI_PROC_NULL) {
            check_proc_null_status(&st, what);
            /* Nothing arrived: the buffer keeps what it had. */
            for (int i = 0; i < n; i++) {
                int want = (form == SENDRECV || form == ISENDRECV) ? -3 : val(rank, form, 60, i);
                CHECK(b[i] == want, "%s: element %d changed to %d by a receive from MPI_PROC_NULL",
                      what, i, b[i]);
            }
        } else {
            check_status(&st, left, 9, n, MPI_INT, what);
            for (int i = 0; i < n; i++)
                CHECK(b[i] == val(left, form, 60, i), "%s: element %d is %d", what, i, b[i]);
        }
    }
    /* Both peers null: completes at once. */
    MPI_Status st;
    b[0] = 42;
    MPI_OK(MPI_Sendrecv(a, 5, MPI_INT, MPI_PROC_NULL, 1, b, 5, MPI_INT, MPI_PROC_NULL, 1,
                        MPI_COMM_WORLD, &st));
    check_proc_null_status(&st, "Sendrecv with both peers MPI_PROC_NULL");
    CHECK(b[0] == 42, "Sendrecv from MPI_PROC_NULL wrote the buffer");
    MPI_Request r;
    MPI_OK(MPI_Isendrecv_replace(b, 5, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD,
                                 &r));
    MPI_OK(MPI_Wait(&r, &st));
    check_proc_null_status(&st, "Isendrecv_replace with both peers MPI_PROC_NULL");
    CHECK(b[0] == 42, "Isendrecv_replace from MPI_PROC_NULL changed the buffer to %d", b[0]);
}

int main(int argc, char **argv)
{
    MPI_OK(MPI_Init(&argc, &argv));
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    MPI_OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    int *a = malloc(sizeof(int) * (MAXCOUNT + GUARD));
    int *b = malloc(sizeof(int) * (MAXCOUNT + GUARD));
    ring(a, b);
    proc_null(a, b);
    free(a);
    free(b);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("p2p_sendrecv: %d ranks ok\n", size);
    MPI_OK(MPI_Finalize());
    return 0;
}
